/* Task pools: every scheme (and both victim policies of STEAL) with several
 * worker counts, held to exactly-once execution. Tasks spawn children
 * recursively (n0 roots, k children each, down to depth D); every consumed
 * task is counted, hashed (sum and xor over its contents) and, when its id
 * fits in the task, marked in a bitmap. The expected count and hashes are
 * computed by walking the tree directly, without a pool. Small capacities
 * force wrap-around; an overflow must fail with GPK_EFULL and stop; a
 * failing work function must stop the run with its status; bad arguments
 * give GPK_EINVAL.
 * Usage: test_pool BACKEND. GPK_TEST_SMALL=1 runs a quick version (CI's
 * ThreadSanitizer build uses it). */
#include "gpk/pool.h"
#include "testutil.h"

#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <string.h>

#define MAX_WORKERS 64
#define MAX_DEPTH 4000 /* levels of a tree; 1-byte tasks hold depths up to 15, 8-byte up to 255 */

static gpk_ctx *ctx;
static uint64_t seed_base;
static int small_mode;
static uint64_t tasks_checked; /* tasks consumed in exactly-once checks, for the summary */

/* ---- the task tree ---------------------------------------------------------------- */

typedef struct tree {
    size_t n0;                           /* roots */
    unsigned k;                          /* children per task above the last level */
    unsigned depth;                      /* deepest level */
    size_t task_size;                    /* 1, 8, 24, 256, ... */
    uint64_t level_start[MAX_DEPTH + 2]; /* id of a level's first task; [depth+1] = total */
} tree;

static void tree_init(tree *t, size_t n0, unsigned k, unsigned depth, size_t task_size)
{
    t->n0 = n0;
    t->k = k;
    t->depth = depth;
    t->task_size = task_size;
    uint64_t width = n0, start = 0;
    for (unsigned d = 0; d <= depth + 1 && d <= MAX_DEPTH + 1; d++) {
        t->level_start[d] = start;
        start += width;
        width *= k;
    }
}

static uint64_t tree_total(const tree *t) { return t->level_start[t->depth + 1]; }

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Filler byte j of a task with this id: a torn or mixed-up copy shows. */
static unsigned char fill_byte(uint64_t id, size_t j)
{
    return (unsigned char)(mix64(id * 131 + j / 8) >> (8 * (j % 8)));
}

/* The contents of task (d, i). 1-byte tasks hold the depth and i mod 16;
 * 8-byte tasks the depth and i; larger ones i, the depth and filler. */
static void task_encode(const tree *t, unsigned d, uint64_t i, unsigned char *out)
{
    if (t->task_size == 1) {
        out[0] = (unsigned char)((d << 4) | (i & 15));
    } else if (t->task_size < 24) {
        uint64_t v = ((uint64_t)d << 56) | i;
        memcpy(out, &v, 8);
        for (size_t j = 8; j < t->task_size; j++) out[j] = fill_byte(i, j);
    } else {
        uint32_t d32 = d;
        memcpy(out, &i, 8);
        memcpy(out + 8, &d32, 4);
        uint64_t id = t->level_start[d] + i;
        for (size_t j = 12; j < t->task_size; j++) out[j] = fill_byte(id, j);
    }
}

/* Decodes (d, i) (i mod 16 for 1-byte tasks); 0 when the contents are not a
 * task this tree can produce. */
static int task_decode(const tree *t, const unsigned char *in, unsigned *d, uint64_t *i)
{
    if (t->task_size == 1) {
        *d = in[0] >> 4;
        *i = in[0] & 15;
        return *d <= t->depth;
    }
    if (t->task_size < 24) {
        uint64_t v;
        memcpy(&v, in, 8);
        *d = (unsigned)(v >> 56);
        *i = v & ((1ull << 56) - 1);
        if (*d > t->depth) return 0;
        for (size_t j = 8; j < t->task_size; j++)
            if (in[j] != fill_byte(*i, j)) return 0;
    } else {
        uint32_t d32;
        memcpy(i, in, 8);
        memcpy(&d32, in + 8, 4);
        *d = d32;
        if (*d > t->depth) return 0;
        uint64_t id = t->level_start[*d] + *i;
        for (size_t j = 12; j < t->task_size; j++)
            if (in[j] != fill_byte(id, j)) return 0;
    }
    return *i < t->level_start[*d + 1] - t->level_start[*d];
}

static uint64_t task_hash(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t j = 0; j < n; j++) h = (h ^ p[j]) * 0x100000001b3ull;
    return mix64(h);
}

/* ---- what the work function records ------------------------------------------------ */

typedef struct worker_acc {
    alignas(64) uint64_t count, sum, xr, bad;
} worker_acc;

typedef struct check {
    tree t;
    worker_acc acc[MAX_WORKERS];
    _Atomic uint64_t *bitmap; /* NULL when ids do not fit (1-byte tasks) */
    atomic_ullong duplicates;
    /* fault injection: the task with this id returns fail_status */
    uint64_t fail_id;
    gpk_status fail_status;
    /* EFULL test: children wait for this before returning */
    atomic_int release_children;
} check;

static gpk_status tree_work(gpk_pool_worker *w, const void *task, void *user)
{
    check *c = user;
    const tree *t = &c->t;
    unsigned wid = gpk_pool_worker_id(w);
    worker_acc *a = &c->acc[wid < MAX_WORKERS ? wid : 0];
    unsigned d;
    uint64_t i;
    if (!task_decode(t, task, &d, &i)) {
        a->bad++;
        return GPK_OK;
    }
    uint64_t h = task_hash(task, t->task_size);
    a->count++;
    a->sum += h;
    a->xr ^= h;
    uint64_t id = t->level_start[d] + i;
    if (c->bitmap) {
        uint64_t bit = 1ull << (id % 64);
        if (atomic_fetch_or_explicit(&c->bitmap[id / 64], bit, memory_order_relaxed) & bit)
            atomic_fetch_add_explicit(&c->duplicates, 1, memory_order_relaxed);
    }
    if (c->fail_status != GPK_OK && t->task_size > 1 && id == c->fail_id) return c->fail_status;
    if (d < t->depth) {
        alignas(8) unsigned char child[GPK_POOL_MAX_TASK];
        for (unsigned j = 0; j < t->k; j++) {
            task_encode(t, d + 1, i * t->k + j, child);
            gpk_status s = gpk_pool_push(w, child);
            if (s != GPK_OK) return s;
        }
    }
    return GPK_OK;
}

/* The expected sum and xor, walking the tree without a pool. */
static void tree_expected(const tree *t, uint64_t *sum, uint64_t *xr)
{
    unsigned char buf[GPK_POOL_MAX_TASK];
    *sum = 0;
    *xr = 0;
    for (unsigned d = 0; d <= t->depth; d++) {
        uint64_t width = t->level_start[d + 1] - t->level_start[d];
        for (uint64_t i = 0; i < width; i++) {
            task_encode(t, d, i, buf);
            uint64_t h = task_hash(buf, t->task_size);
            *sum += h;
            *xr ^= h;
        }
    }
}

static check *check_new(const tree *t)
{
    check *c = aligned_alloc(64, (sizeof(check) + 63) / 64 * 64);
    if (!c) return NULL;
    memset(c, 0, sizeof *c);
    c->t = *t;
    if (t->task_size >= 8) {
        size_t words = (size_t)(tree_total(t) + 63) / 64;
        c->bitmap = calloc(words, sizeof *c->bitmap);
        if (!c->bitmap) {
            free(c);
            return NULL;
        }
    }
    return c;
}

static void check_free(check *c)
{
    if (!c) return;
    free((void *)c->bitmap);
    free(c);
}

static unsigned char *tree_roots(const tree *t)
{
    unsigned char *roots = malloc(t->n0 * t->task_size);
    if (!roots) return NULL;
    for (size_t i = 0; i < t->n0; i++) task_encode(t, 0, i, roots + i * t->task_size);
    return roots;
}

static const char *variant_name(gpk_pool_scheme s, gpk_pool_victim v)
{
    if (s != GPK_POOL_STEAL) return gpk_pool_scheme_name(s);
    return v == GPK_POOL_VICTIM_RANDOM ? "steal/random" : "steal/round-robin";
}

/* Runs the whole tree and checks exactly-once execution. */
static void run_tree(gpk_pool_scheme scheme, gpk_pool_victim victim, unsigned workers, const tree *t,
                     size_t capacity, const char *what)
{
    const char *name = variant_name(scheme, victim);
    check *c = check_new(t);
    unsigned char *roots = tree_roots(t);
    TU_CHECK(c && roots, "out of memory");
    if (!c || !roots) {
        check_free(c);
        free(roots);
        return;
    }
    gpk_pool_opts o = GPK_POOL_OPTS_INIT;
    o.workers = workers;
    o.capacity = capacity;
    o.victim = victim;
    o.seed = seed_base ^ mix64(workers * 7 + t->task_size);
    gpk_pool_stats st;
    gpk_status s = gpk_pool_run(ctx, scheme, roots, t->n0, t->task_size, tree_work, c, &o, &st);
    uint64_t total = tree_total(t), count = 0, sum = 0, xr = 0, bad = 0, exp_sum, exp_xr;
    for (unsigned w = 0; w < MAX_WORKERS; w++) {
        count += c->acc[w].count;
        sum += c->acc[w].sum;
        xr ^= c->acc[w].xr;
        bad += c->acc[w].bad;
    }
    tree_expected(t, &exp_sum, &exp_xr);
    tasks_checked += count;
    TU_CHECK(s == GPK_OK, "%s %s w=%u size=%zu cap=%zu: status %s: %s", name, what, workers, t->task_size,
             capacity, gpk_status_string(s), gpk_last_error(ctx));
    TU_CHECK(bad == 0, "%s %s w=%u size=%zu: %llu corrupt tasks", name, what, workers, t->task_size,
             (unsigned long long)bad);
    TU_CHECK(count == total, "%s %s w=%u size=%zu: %llu tasks consumed, expected %llu", name, what, workers,
             t->task_size, (unsigned long long)count, (unsigned long long)total);
    TU_CHECK(sum == exp_sum && xr == exp_xr, "%s %s w=%u size=%zu: checksum mismatch", name, what, workers,
             t->task_size);
    TU_CHECK(st.tasks == total && st.pushed == total - t->n0, "%s %s w=%u: stats tasks %llu pushed %llu",
             name, what, workers, (unsigned long long)st.tasks, (unsigned long long)st.pushed);
    TU_CHECK(workers ? st.workers == workers : st.workers >= 1, "%s: stats.workers %u, expected %u", name,
             st.workers, workers);
    if (scheme == GPK_POOL_STATIC)
        TU_CHECK(st.rounds == t->depth + 1, "%s %s: %llu rounds, expected %u", name, what,
                 (unsigned long long)st.rounds, t->depth + 1);
    else TU_CHECK(st.rounds == 0, "%s: rounds %llu", name, (unsigned long long)st.rounds);
    if (scheme == GPK_POOL_STEAL)
        TU_CHECK(st.steals <= st.steal_attempts && (workers != 1 || st.steal_attempts == 0),
                 "%s: steals %llu of %llu attempts", name, (unsigned long long)st.steals,
                 (unsigned long long)st.steal_attempts);
    else TU_CHECK(st.steals == 0 && st.steal_attempts == 0, "%s: steal stats not 0", name);
    if (c->bitmap) {
        uint64_t set = 0;
        for (uint64_t wd = 0; wd < (total + 63) / 64; wd++)
            set += (uint64_t)__builtin_popcountll(atomic_load(&c->bitmap[wd]));
        TU_CHECK(set == total && atomic_load(&c->duplicates) == 0,
                 "%s %s w=%u size=%zu: %llu of %llu ids seen, %llu duplicates", name, what, workers,
                 t->task_size, (unsigned long long)set, (unsigned long long)total,
                 (unsigned long long)atomic_load(&c->duplicates));
    }
    check_free(c);
    free(roots);
}

static const gpk_pool_scheme schemes[] = {GPK_POOL_STATIC, GPK_POOL_BLOCKING, GPK_POOL_LOCKFREE,
                                          GPK_POOL_STEAL, GPK_POOL_STEAL};
static const gpk_pool_victim victims[] = {GPK_POOL_VICTIM_ROUND_ROBIN, GPK_POOL_VICTIM_ROUND_ROBIN,
                                          GPK_POOL_VICTIM_ROUND_ROBIN, GPK_POOL_VICTIM_ROUND_ROBIN,
                                          GPK_POOL_VICTIM_RANDOM};
#define VARIANTS 5
static const unsigned worker_counts[] = {1, 2, 3, 8};
static const size_t task_sizes[] = {1, 8, 24, 256};

/* Recursive spawning: the stress part. */
static void test_trees(void)
{
    /* 3 roots, 4 children each: 262143 tasks at depth 8 (small: 1365 at depth 5) */
    unsigned depth = small_mode ? 5 : 8;
    for (size_t si = 0; si < sizeof task_sizes / sizeof task_sizes[0]; si++) {
        tree t;
        tree_init(&t, 3, 4, task_sizes[si] == 256 && !small_mode ? depth - 1 : depth, task_sizes[si]);
        for (int v = 0; v < VARIANTS; v++)
            for (size_t wi = 0; wi < sizeof worker_counts / sizeof worker_counts[0]; wi++) {
                /* queues hold a whole level in the worst case; a deque
                 * holds one depth-first path's siblings plus a share */
                size_t cap = schemes[v] == GPK_POOL_STEAL ? 256 : (size_t)tree_total(&t);
                run_tree(schemes[v], victims[v], worker_counts[wi], &t, cap, "tree");
            }
    }
    /* default capacity and the context's thread count */
    tree t;
    tree_init(&t, 1, 3, small_mode ? 5 : 9, 8);
    for (int v = 0; v < VARIANTS; v++) run_tree(schemes[v], victims[v], 0, &t, 0, "defaults");
}

/* Chains (one child per task) in tiny queues: the live tasks never exceed
 * the capacity, but positions wrap around it many times. */
static void test_wraparound(void)
{
    static const size_t caps[] = {4, 7, 16};
    for (size_t ci = 0; ci < 3; ci++)
        for (int v = 0; v < VARIANTS; v++)
            for (size_t wi = 0; wi < sizeof worker_counts / sizeof worker_counts[0]; wi++) {
                /* STATIC pays two barriers per level, so its chains are shorter */
                unsigned len =
                    schemes[v] == GPK_POOL_STATIC ? (small_mode ? 40 : 300) : (small_mode ? 200 : 3000);
                tree t;
                tree_init(&t, caps[ci], 1, len - 1, 24);
                run_tree(schemes[v], victims[v], worker_counts[wi], &t, caps[ci], "wrap-around");
            }
}

/* Fan-out that overflows: the root pushes until the pool is full; children
 * wait for the root's verdict, so consumers cannot drain the pool. */
typedef struct fanout {
    atomic_int release;
    atomic_ullong ran;
    gpk_status root_saw;
} fanout;

static gpk_status fanout_work(gpk_pool_worker *w, const void *task, void *user)
{
    fanout *f = user;
    unsigned char kind;
    memcpy(&kind, task, 1);
    atomic_fetch_add(&f->ran, 1);
    if (kind == 0) {
        gpk_status s = GPK_OK;
        unsigned char child[GPK_POOL_MAX_TASK];
        memset(child, 1, sizeof child);
        for (int i = 0; i < 100000 && s == GPK_OK; i++) s = gpk_pool_push(w, child);
        f->root_saw = s;
        atomic_store_explicit(&f->release, 1, memory_order_release);
        return s;
    }
    while (!atomic_load_explicit(&f->release, memory_order_acquire)) sched_yield();
    return GPK_OK;
}

static void test_full(void)
{
    for (int v = 0; v < VARIANTS; v++)
        for (size_t wi = 0; wi < sizeof worker_counts / sizeof worker_counts[0]; wi++) {
            unsigned workers = worker_counts[wi];
            const char *name = variant_name(schemes[v], victims[v]);
            fanout f;
            atomic_init(&f.release, 0);
            atomic_init(&f.ran, 0);
            f.root_saw = GPK_OK;
            unsigned char root[24] = {0};
            gpk_pool_opts o = GPK_POOL_OPTS_INIT;
            o.workers = workers;
            o.capacity = 16;
            o.victim = victims[v];
            gpk_pool_stats st;
            gpk_status s = gpk_pool_run(ctx, schemes[v], root, 1, sizeof root, fanout_work, &f, &o, &st);
            const char *msg = gpk_last_error(ctx);
            TU_CHECK(s == GPK_EFULL && f.root_saw == GPK_EFULL, "%s w=%u: overflow gave %s (push saw %s)",
                     name, workers, gpk_status_string(s), gpk_status_string(f.root_saw));
            TU_CHECK(msg && strstr(msg, "full") && strstr(msg, "16"), "%s: EFULL message \"%s\"", name,
                     msg ? msg : "(null)");
            /* the run stopped: every worker ran at most one child */
            TU_CHECK(st.tasks == atomic_load(&f.ran) && st.tasks <= workers,
                     "%s w=%u: %llu tasks ran after the overflow", name, workers,
                     (unsigned long long)st.tasks);
        }
}

/* A work function's error stops the run with that status. */
static void test_work_error(void)
{
    for (int v = 0; v < VARIANTS; v++)
        for (size_t wi = 0; wi < sizeof worker_counts / sizeof worker_counts[0]; wi++) {
            unsigned workers = worker_counts[wi];
            tree t;
            tree_init(&t, 2, 4, 6, 8);
            check *c = check_new(&t);
            unsigned char *roots = tree_roots(&t);
            TU_CHECK(c && roots, "out of memory");
            if (!c || !roots) {
                check_free(c);
                free(roots);
                return;
            }
            c->fail_id = t.level_start[2] + 5;
            c->fail_status = GPK_EIO;
            gpk_pool_opts o = GPK_POOL_OPTS_INIT;
            o.workers = workers;
            o.victim = victims[v];
            gpk_pool_stats st;
            gpk_status s = gpk_pool_run(ctx, schemes[v], roots, t.n0, t.task_size, tree_work, c, &o, &st);
            const char *name = variant_name(schemes[v], victims[v]);
            TU_CHECK(s == GPK_EIO, "%s w=%u: failing work gave %s", name, workers, gpk_status_string(s));
            TU_CHECK(strstr(gpk_last_error(ctx), "work function") != NULL, "%s: message \"%s\"", name,
                     gpk_last_error(ctx));
            /* the failing task's subtree was never pushed */
            TU_CHECK(st.tasks < tree_total(&t), "%s: %llu tasks ran", name, (unsigned long long)st.tasks);
            check_free(c);
            free(roots);
        }
}

static gpk_status noop_work(gpk_pool_worker *w, const void *task, void *user) { return GPK_OK; }

static void test_arguments(void)
{
    unsigned char tasks[4 * 8] = {0};
    gpk_pool_opts o = GPK_POOL_OPTS_INIT;
    gpk_pool_stats st;
    TU_CHECK(gpk_pool_run(NULL, GPK_POOL_STATIC, tasks, 1, 8, noop_work, NULL, NULL, NULL) == GPK_EINVAL,
             "NULL ctx");
    TU_CHECK(gpk_pool_run(ctx, (gpk_pool_scheme)7, tasks, 1, 8, noop_work, NULL, NULL, NULL) == GPK_EINVAL,
             "bad scheme");
    TU_CHECK(gpk_last_error(ctx)[0] != '\0', "no message for a bad scheme");
    TU_CHECK(gpk_pool_run(ctx, GPK_POOL_STATIC, tasks, 1, 0, noop_work, NULL, NULL, NULL) == GPK_EINVAL,
             "task_size 0");
    TU_CHECK(gpk_pool_run(ctx, GPK_POOL_STATIC, tasks, 1, GPK_POOL_MAX_TASK + 1, noop_work, NULL, NULL,
                          NULL) == GPK_EINVAL,
             "task_size too large");
    TU_CHECK(gpk_pool_run(ctx, GPK_POOL_BLOCKING, tasks, 1, 8, NULL, NULL, NULL, NULL) == GPK_EINVAL,
             "NULL work");
    TU_CHECK(gpk_pool_run(ctx, GPK_POOL_LOCKFREE, NULL, 1, 8, noop_work, NULL, NULL, NULL) == GPK_EINVAL,
             "NULL initial tasks");
    o.capacity = 3;
    TU_CHECK(gpk_pool_run(ctx, GPK_POOL_STEAL, tasks, 4, 8, noop_work, NULL, &o, NULL) == GPK_EINVAL,
             "capacity below n_initial");
    TU_CHECK(strstr(gpk_last_error(ctx), "capacity") != NULL, "capacity message \"%s\"", gpk_last_error(ctx));
    o = (gpk_pool_opts)GPK_POOL_OPTS_INIT;
    o.victim = (gpk_pool_victim)9;
    TU_CHECK(gpk_pool_run(ctx, GPK_POOL_STEAL, tasks, 4, 8, noop_work, NULL, &o, NULL) == GPK_EINVAL,
             "bad victim policy");
    for (int s = 0; s < GPK_POOL_SCHEMES; s++) {
        st.tasks = 99;
        TU_CHECK(gpk_pool_run(ctx, (gpk_pool_scheme)s, NULL, 0, 8, noop_work, NULL, NULL, &st) == GPK_OK &&
                     st.tasks == 0,
                 "%s: n_initial = 0 must return at once", gpk_pool_scheme_name((gpk_pool_scheme)s));
    }
    /* names */
    static const struct {
        const char *name;
        gpk_pool_scheme s;
    } names[] = {{"static", GPK_POOL_STATIC},      {"blocking", GPK_POOL_BLOCKING},
                 {"queue", GPK_POOL_BLOCKING},     {"lockfree", GPK_POOL_LOCKFREE},
                 {"lock-free", GPK_POOL_LOCKFREE}, {"steal", GPK_POOL_STEAL},
                 {"stealing", GPK_POOL_STEAL}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        gpk_pool_scheme s = (gpk_pool_scheme)99;
        TU_CHECK(gpk_pool_scheme_parse(names[i].name, &s) == GPK_OK && s == names[i].s, "parse %s",
                 names[i].name);
    }
    for (int s = 0; s < GPK_POOL_SCHEMES; s++) {
        gpk_pool_scheme back;
        TU_CHECK(gpk_pool_scheme_parse(gpk_pool_scheme_name((gpk_pool_scheme)s), &back) == GPK_OK &&
                     (int)back == s,
                 "name round trip %d", s);
    }
    gpk_pool_scheme s;
    TU_CHECK(gpk_pool_scheme_parse("Lock-Free", &s) == GPK_OK && s == GPK_POOL_LOCKFREE, "case-blind parse");
    TU_CHECK(strcmp(gpk_pool_scheme_name((gpk_pool_scheme)GPK_POOL_SCHEMES), "unknown") == 0,
             "unknown scheme's name");
    TU_CHECK(gpk_pool_scheme_parse("fifo", &s) == GPK_EINVAL, "unknown name accepted");
    TU_CHECK(gpk_pool_scheme_parse(NULL, &s) == GPK_EINVAL, "NULL name accepted");
}

int main(int argc, char **argv)
{
    gpk_backend backend = GPK_BACKEND_CPU;
    if (argc > 1 && gpk_backend_parse(argv[1], &backend) != GPK_OK) {
        fprintf(stderr, "usage: test_pool cpu|cuda|opencl\n");
        return 2;
    }
    if (gpk_ctx_create(&ctx, backend) != GPK_OK) {
        printf("test_pool: backend %s not available here, skipped\n", argc > 1 ? argv[1] : "cpu");
        return TU_SKIP;
    }
    const char *sm = getenv("GPK_TEST_SMALL");
    small_mode = sm && *sm && strcmp(sm, "0") != 0;
    seed_base = tu_seed();
    test_arguments();
    test_trees();
    test_wraparound();
    test_full();
    test_work_error();
    printf("test_pool: %llu tasks consumed in the exactly-once checks\n", (unsigned long long)tasks_checked);
    gpk_ctx_destroy(ctx);
    return tu_finish("test_pool");
}
