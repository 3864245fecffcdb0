/* Tests of the TSP search at scale (neighbourhood or2opt, src/search/tsp_ls.c)
 * and of the time limit and cancel flag of every search.
 * Usage: test_search_ls [DATA_DIR] (the TSPLIB part runs when given).
 *
 * The move primitives are held to full re-evaluation: after every random
 * 2-opt and Or-opt move the tour must still be a permutation with a
 * consistent inverse, and the predicted change must equal the change of
 * the full tour length. Neighbour lists are held to brute force. */
#define _POSIX_C_SOURCE 200809L
#include "gpk/gen.h"
#include "gpk/search.h"
#include "search/search_run.h"
#include "testutil.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static gpk_rng rng;

static uint64_t below(uint64_t n) { return gpk_rng_next(&rng) % n; }

/* n cities, uniform in [0, side)^2 (integers, so clusters of equal
 * distances and even equal points occur at small sides), no matrix. */
static void random_tsp(gpk_tsp *t, uint32_t n, double side, gpk_tsp_weight w)
{
    memset(t, 0, sizeof *t);
    t->n = n;
    t->weight = w;
    t->x = malloc(n * sizeof *t->x);
    t->y = malloc(n * sizeof *t->y);
    for (uint32_t i = 0; i < n; i++) {
        t->x[i] = (double)below((uint64_t)side);
        t->y[i] = (double)below((uint64_t)side);
    }
    snprintf(t->name, sizeof t->name, "rand%u", n);
}

static int tour_ok(const gpk__tour *T)
{
    for (uint32_t i = 0; i < T->n; i++)
        if (T->t[i] >= T->n || T->pos[T->t[i]] != i) return 0;
    return 1;
}

typedef struct {
    double d2;
    uint32_t c;
} cd;

static int cd_cmp(const void *x, const void *y)
{
    const cd *a = x, *b = y;
    return a->d2 < b->d2 ? -1 : a->d2 > b->d2 ? 1 : (a->c > b->c) - (a->c < b->c);
}

static int u32_cmp(const void *x, const void *y)
{
    const uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}

/* The lists against brute force: for the planar kinds the 2 nearest in
 * each quadrant (half-open, as tsp_ls.c's quadrant()) when k = 10, then the
 * nearest others up to k, all by (squared Euclidean distance, city); for
 * the other kinds the k nearest by (instance distance, city). Each list
 * sorted by the instance's distance, nd holding those distances. */
static void test_neighbours(uint32_t n, gpk_tsp_weight w, double side)
{
    gpk_tsp t;
    random_tsp(&t, n, side, w);
    const uint32_t k = n - 1 < 10 ? n - 1 : 10;
    uint32_t *nb = malloc((size_t)n * k * sizeof *nb);
    int32_t *nd = malloc((size_t)n * k * sizeof *nd);
    TU_CHECK(gpk__tsp_neighbours(&t, k, 2, NULL, nb, nd) == GPK_OK, "neighbours n=%u", n);
    int bad = 0;
    cd *all = malloc(n * sizeof *all);
    uint32_t want[16], got[16];
    const int planar = w != GPK_TSP_GEO && w != GPK_TSP_EXPLICIT;
    for (uint32_t a = 0; a < n && !bad; a++) {
        uint32_t m = 0;
        for (uint32_t c = 0; c < n; c++) {
            if (c == a) continue;
            const double dx = t.x[c] - t.x[a], dy = t.y[c] - t.y[a];
            all[m].d2 = planar ? dx * dx + dy * dy : (double)gpk_tsp_dist(&t, a, c);
            all[m++].c = c;
        }
        qsort(all, m, sizeof *all, cd_cmp);
        uint32_t nw = 0;
        if (planar && k == 10)
            for (int q = 0; q < 4; q++) {
                uint32_t inq = 0;
                for (uint32_t i = 0; i < m && inq < 2; i++) {
                    const double dx = t.x[all[i].c] - t.x[a], dy = t.y[all[i].c] - t.y[a];
                    const int qd = dx > 0 && dy >= 0 ? 0
                        : dx <= 0 && dy > 0          ? 1
                        : dx < 0 && dy <= 0          ? 2
                        : dx >= 0 && dy < 0          ? 3
                                                     : 0;
                    if (qd == q) {
                        want[nw++] = all[i].c;
                        inq++;
                    }
                }
            }
        for (uint32_t i = 0; i < m && nw < k; i++) {
            uint32_t j = 0;
            while (j < nw && want[j] != all[i].c) j++;
            if (j == nw) want[nw++] = all[i].c;
        }
        const uint32_t *l = nb + (size_t)a * k;
        const int32_t *ld = nd + (size_t)a * k;
        for (uint32_t i = 0; i < k; i++) {
            got[i] = l[i];
            if (l[i] >= n || ld[i] != gpk_tsp_dist(&t, a, l[i]) || (i && ld[i] < ld[i - 1])) bad = 1;
        }
        qsort(want, k, sizeof *want, u32_cmp);
        qsort(got, k, sizeof *got, u32_cmp);
        if (nw != k || memcmp(want, got, k * sizeof *got) != 0) bad = 1;
        if (bad) fprintf(stderr, "  city %u of %u: the list differs from brute force\n", a, n);
    }
    TU_CHECK(!bad, "neighbour lists n=%u weight %d differ from brute force", n, (int)w);
    free(all);
    free(nb);
    free(nd);
    gpk_tsp_free(&t);
}

/* Random 2-opt (both reading directions) and Or-opt moves on a random tour
 * of a random instance; every delta against the full length. */
static void test_moves(uint32_t n, int moves)
{
    gpk_tsp t;
    random_tsp(&t, n, 1000, GPK_TSP_EUC_2D);
    gpk__tour T = {n, malloc(n * sizeof(uint32_t)), malloc(n * sizeof(uint32_t)), NULL, 0, 0, 0, 0};
    for (uint32_t i = 0; i < n; i++) T.t[i] = i;
    for (uint32_t i = n - 1; i > 0; i--) {
        uint32_t r = (uint32_t)below(i + 1), x = T.t[i];
        T.t[i] = T.t[r];
        T.t[r] = x;
    }
    for (uint32_t i = 0; i < n; i++) T.pos[T.t[i]] = i;
    int64_t len = gpk_tsp_tour_length(&t, T.t);
    int bad_delta = 0, bad_tour = 0, bad_edges = 0, done2 = 0, doneor = 0;
    for (int m = 0; m < moves; m++) {
        if (below(2) == 0) {
            const uint32_t a = (uint32_t)below(n), c = (uint32_t)below(n);
            const int back = (int)below(2);
            const uint32_t b = back ? gpk__tour_prev(&T, a) : gpk__tour_next(&T, a);
            const uint32_t d = back ? gpk__tour_prev(&T, c) : gpk__tour_next(&T, c);
            if (c == a || c == b || d == a) continue;
            const int64_t delta = (int64_t)gpk_tsp_dist(&t, a, c) + gpk_tsp_dist(&t, b, d) -
                gpk_tsp_dist(&t, a, b) - gpk_tsp_dist(&t, c, d);
            if (back) gpk__tour_move2(&T, b, a, d, c);
            else gpk__tour_move2(&T, a, b, c, d);
            const int adj = (gpk__tour_next(&T, a) == c || gpk__tour_prev(&T, a) == c) &&
                (gpk__tour_next(&T, b) == d || gpk__tour_prev(&T, b) == d);
            if (!adj) bad_edges++;
            const int64_t now = gpk_tsp_tour_length(&t, T.t);
            if (now - len != delta) bad_delta++;
            len = now;
            done2++;
        } else {
            const uint32_t l = 1 + (uint32_t)below(3);
            if (n < l + 3) continue;
            const uint32_t s1 = (uint32_t)below(n);
            uint32_t s2 = s1, mid = s1;
            for (uint32_t q = 1; q < l; q++) {
                s2 = gpk__tour_next(&T, s2);
                if (q == 1) mid = s2;
            }
            const uint32_t p = gpk__tour_prev(&T, s1), x = (uint32_t)below(n), y = gpk__tour_next(&T, x);
            if (x == s1 || x == s2 || x == mid || y == s1 || y == s2 || y == mid || y == p) continue;
            const int rev = (int)below(2);
            const int64_t delta = gpk__tour_or_delta(&t, &T, s1, s2, x, y, rev);
            gpk__tour_or_move(&T, s1, s2, x, y, rev);
            /* x, then the segment (turned when rev), then y, in one direction. */
            const uint32_t first = rev ? s2 : s1, last = rev ? s1 : s2;
            const int fwd = gpk__tour_next(&T, x) == first && gpk__tour_prev(&T, y) == last;
            const int bwd = gpk__tour_prev(&T, x) == first && gpk__tour_next(&T, y) == last;
            if (!fwd && !bwd) bad_edges++;
            const int64_t now = gpk_tsp_tour_length(&t, T.t);
            if (now - len != delta) bad_delta++;
            len = now;
            doneor++;
        }
        if (!tour_ok(&T)) {
            bad_tour++;
            break;
        }
    }
    TU_CHECK(bad_delta == 0, "n=%u: %d of %d 2-opt + %d Or-opt deltas differ from the full evaluation", n,
             bad_delta, done2, doneor);
    TU_CHECK(bad_edges == 0, "n=%u: %d moves did not make the edges they promise", n, bad_edges);
    TU_CHECK(bad_tour == 0, "n=%u: the tour is no longer a permutation with its inverse", n);
    TU_CHECK(n < 8 || (done2 > moves / 4 && doneor > moves / 8), "n=%u: too few moves tried (%d, %d)", n,
             done2, doneor);
    free(T.t);
    free(T.pos);
    gpk_tsp_free(&t);
}

static gpk_ctx *make_ctx(int threads)
{
    gpk_ctx_opts co = GPK_CTX_OPTS_INIT;
    co.backend = GPK_BACKEND_CPU;
    co.threads = threads;
    gpk_ctx *c = NULL;
    if (gpk_ctx_create_ex(&c, &co) != GPK_OK) return NULL;
    return c;
}

static int is_perm(const uint32_t *p, uint32_t n)
{
    unsigned char *seen = calloc(n, 1);
    int ok = 1;
    for (uint32_t i = 0; i < n && ok; i++) {
        if (p[i] >= n || seen[p[i]]) ok = 0;
        else seen[p[i]] = 1;
    }
    free(seen);
    return ok;
}

/* Makes the move `code` from city a on T, decoded by the format that
 * search_run.h documents (gpk__ls_move). */
static void apply_code(gpk__tour *T, const uint32_t *nb, uint32_t k, uint32_t a, uint32_t code)
{
    if (code < 2 * k) {
        const uint32_t dir = code / k, c = nb[(size_t)a * k + code % k];
        const uint32_t b = dir ? gpk__tour_prev(T, a) : gpk__tour_next(T, a);
        const uint32_t d = dir ? gpk__tour_prev(T, c) : gpk__tour_next(T, c);
        if (dir) gpk__tour_move2(T, b, a, d, c);
        else gpk__tour_move2(T, a, b, c, d);
        return;
    }
    const uint32_t r = code - 2 * k, rev = r % 2, side = r / 2 % 2, i = r / 4 % k, seg = r / 4 / k;
    const uint32_t len = seg == 0 ? 1 : seg <= 2 ? 2 : 3, end = seg == 2 || seg == 4;
    uint32_t s1 = a, s2 = a;
    for (uint32_t j = 1; j < len; j++) {
        if (end) s1 = gpk__tour_prev(T, s1);
        else s2 = gpk__tour_next(T, s2);
    }
    const uint32_t c = nb[(size_t)a * k + i];
    const uint32_t x = side ? gpk__tour_prev(T, c) : c, y = side ? c : gpk__tour_next(T, c);
    gpk__tour_or_move(T, s1, s2, x, y, (int)rev);
}

typedef struct {
    double key;
    uint32_t c;
} keyed_city;

static int keyed_cmp(const void *x, const void *y)
{
    const keyed_city *a = x, *b = y;
    return a->key < b->key ? -1 : a->key > b->key ? 1 : (a->c > b->c) - (a->c < b->c);
}

/* The batch evaluation's reference (gpk__tsp_ls_best_move, which the GPU
 * must match): for every city (at most `cities` of them, at random) of a
 * random tour and of a tour in strips (few improving moves, so the pruning
 * and the "none" answer both occur), the move it names, decoded from its
 * code and made on a copy of the tour, changes the full length by its
 * delta; the tour stays a permutation. */
static void test_best_moves(uint32_t n, gpk_tsp_weight w, double side, uint32_t cities)
{
    gpk_tsp t;
    random_tsp(&t, n, side, w);
    const uint32_t k = n - 1 < GPK__TSP_LS_K ? n - 1 : GPK__TSP_LS_K;
    uint32_t *nb = malloc((size_t)n * k * sizeof *nb);
    int32_t *nd = malloc((size_t)n * k * sizeof *nd);
    TU_CHECK(gpk__tsp_neighbours(&t, k, 2, NULL, nb, nd) == GPK_OK, "best moves n=%u: neighbour lists", n);
    gpk__tour T = {n, malloc(n * sizeof(uint32_t)), malloc(n * sizeof(uint32_t)), NULL, 0, 0, 0, 0};
    uint32_t *t0 = malloc(n * sizeof *t0), *p0 = malloc(n * sizeof *p0);
    keyed_city *kc = malloc(n * sizeof *kc);
    int bad = 0, improving = 0, none = 0, tried = 0;
    for (int form = 0; form < 2; form++) {
        if (form == 0) {
            for (uint32_t i = 0; i < n; i++) t0[i] = i;
            for (uint32_t i = n - 1; i > 0; i--) {
                const uint32_t r = (uint32_t)below(i + 1), x = t0[i];
                t0[i] = t0[r];
                t0[r] = x;
            }
        } else {
            const double strip = side / (sqrt((double)n) / 2 + 1);
            for (uint32_t i = 0; i < n; i++) {
                const double st = floor(t.x[i] / strip);
                kc[i].key = st * 4 * side + (fmod(st, 2) ? side - t.y[i] : t.y[i]);
                kc[i].c = i;
            }
            qsort(kc, n, sizeof *kc, keyed_cmp);
            for (uint32_t i = 0; i < n; i++) t0[i] = kc[i].c;
        }
        for (uint32_t i = 0; i < n; i++) p0[t0[i]] = i;
        const int64_t len0 = gpk_tsp_tour_length(&t, t0);
        for (uint32_t q = 0; q < n && q < cities; q++) {
            const uint32_t a = cities >= n ? q : (uint32_t)below(n);
            const gpk__ls_move m = gpk__tsp_ls_best_move(&t, nb, nd, k, t0, p0, a);
            tried++;
            if (m.code == GPK__LS_NONE) {
                none++;
                if (m.d != 0) bad++;
                continue;
            }
            improving++;
            memcpy(T.t, t0, n * sizeof *t0);
            memcpy(T.pos, p0, n * sizeof *p0);
            apply_code(&T, nb, k, a, m.code);
            if (m.d >= 0 || !tour_ok(&T) || gpk_tsp_tour_length(&t, T.t) - len0 != m.d) {
                if (++bad <= 3)
                    fprintf(stderr,
                            "  n=%u form %d city %u code %u: delta %lld, the move changes the length by "
                            "%lld\n",
                            n, form, a, m.code, (long long)m.d,
                            (long long)(gpk_tsp_tour_length(&t, T.t) - len0));
            }
        }
    }
    TU_CHECK(bad == 0, "best moves n=%u: %d of %d wrong", n, bad, tried);
    TU_CHECK(n < 100 || (improving > 0 && none > 0), "best moves n=%u: %d improving, %d none: not both seen",
             n, improving, none);
    free(kc);
    free(t0);
    free(p0);
    free(T.t);
    free(T.pos);
    free(nb);
    free(nd);
    gpk_tsp_free(&t);
}

/* The batched descent (what a CUDA context runs for large n; here with the
 * host evaluating, GPK_TSP_LS_BATCH=host): hill climbing ends at a tour
 * that is a permutation of the reported length where no city has an
 * improving move; 1 and 2 threads return the same tour; the ILS on top
 * ends no worse than the descent. Above 2 x 50 000 cities the reversal
 * bound applies. */
static void test_batched(gpk_ctx *c1, gpk_ctx *c2, uint32_t n)
{
    gpk_tsp t;
    random_tsp(&t, n, 1000000, GPK_TSP_EUC_2D);
    gpk_search_problem pb = {GPK_PROBLEM_TSP, NULL, &t, NULL};
    gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
    o.nb = GPK_NB_OR_OPT;
    o.algo = GPK_SEARCH_HC_FIRST;
    gpk_search_result r1, r2, plain, its;
    setenv("GPK_TSP_LS_BATCH", "host", 1);
    TU_CHECK(gpk_search_run(c1, &pb, &o, &r1) == GPK_OK && gpk_search_run(c2, &pb, &o, &r2) == GPK_OK,
             "batched hc n=%u: %s", n, gpk_last_error(c1));
    o.algo = GPK_SEARCH_ITS;
    o.iters = 300;
    o.global_iters = 1;
    TU_CHECK(gpk_search_run(c2, &pb, &o, &its) == GPK_OK, "batched its n=%u", n);
    setenv("GPK_TSP_LS_BATCH", "off", 1);
    o.algo = GPK_SEARCH_HC_FIRST;
    o.iters = 0;
    TU_CHECK(gpk_search_run(c2, &pb, &o, &plain) == GPK_OK, "plain hc n=%u", n);
    unsetenv("GPK_TSP_LS_BATCH");
    TU_CHECK(is_perm(r1.solution, n) && gpk_tsp_tour_length(&t, r1.solution) == r1.best && r1.local_optimum,
             "batched hc n=%u: not a checked local optimum", n);
    TU_CHECK(r1.best == r2.best && memcmp(r1.solution, r2.solution, n * sizeof *r1.solution) == 0,
             "batched hc n=%u: 1 thread %lld, 2 threads %lld", n, (long long)r1.best, (long long)r2.best);
    TU_CHECK(is_perm(its.solution, n) && gpk_tsp_tour_length(&t, its.solution) == its.best &&
                 its.best <= r1.best,
             "batched its n=%u: %lld, its descent %lld", n, (long long)its.best, (long long)r1.best);
    const uint32_t k = GPK__TSP_LS_K;
    uint32_t *nb = malloc((size_t)n * k * sizeof *nb), *pos = malloc(n * sizeof *pos);
    int32_t *nd = malloc((size_t)n * k * sizeof *nd);
    TU_CHECK(gpk__tsp_neighbours(&t, k, 2, NULL, nb, nd) == GPK_OK, "batched n=%u: lists", n);
    for (uint32_t i = 0; i < n; i++) pos[r1.solution[i]] = i;
    uint32_t left = 0, left_plain = 0; /* the sequential descent: for the record */
    for (uint32_t a = 0; a < n; a++)
        if (gpk__tsp_ls_best_move(&t, nb, nd, k, r1.solution, pos, a).d < 0) left++;
    for (uint32_t i = 0; i < n; i++) pos[plain.solution[i]] = i;
    for (uint32_t a = 0; a < n; a++)
        if (gpk__tsp_ls_best_move(&t, nb, nd, k, plain.solution, pos, a).d < 0) left_plain++;
    printf("  n=%u: cities left with an improving move: batched %u, sequential %u\n", n, left, left_plain);
    TU_CHECK(left == 0, "batched hc n=%u: %u cities still have an improving move", n, left);
    const double est = 0.7124 * sqrt((double)n * 1e12);
    printf("  batched hc n=%u: %.2f%% above the estimate (sequential descent %.2f%%), its 300 kicks %.2f%%\n",
           n, 100.0 * ((double)r1.best / est - 1.0), 100.0 * ((double)plain.best / est - 1.0),
           100.0 * ((double)its.best / est - 1.0));
    free(nb);
    free(nd);
    free(pos);
    gpk_search_result_free(&r1);
    gpk_search_result_free(&r2);
    gpk_search_result_free(&its);
    gpk_search_result_free(&plain);
    gpk_tsp_free(&t);
}

/* The or2opt searches on a random instance: a valid tour whose full length
 * is the reported one; the descent ends at a local optimum that no 2-opt
 * move of any pair (brute force) improves by much more than the neighbour
 * lists allow; the ILS never ends above its descent; multistart gives the
 * same result on 1 and 2 threads. */
static void test_search(gpk_ctx *c1, gpk_ctx *c2, uint32_t n, uint64_t seed)
{
    gpk_tsp t;
    random_tsp(&t, n, 10000, GPK_TSP_EUC_2D);
    gpk_search_problem pb = {GPK_PROBLEM_TSP, NULL, &t, NULL};
    gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
    o.nb = GPK_NB_OR_OPT;
    o.seed = seed;
    o.algo = GPK_SEARCH_HC_FIRST;
    gpk_search_result hc, its, m1, m2;
    TU_CHECK(gpk_search_run(c1, &pb, &o, &hc) == GPK_OK, "hc n=%u: %s", n, gpk_last_error(c1));
    TU_CHECK(hc.local_optimum == 1 && is_perm(hc.solution, n) &&
                 gpk_tsp_tour_length(&t, hc.solution) == hc.best,
             "hc n=%u: not a checked local optimum", n);
    o.algo = GPK_SEARCH_ITS;
    o.iters = 200;
    o.global_iters = 1;
    TU_CHECK(gpk_search_run(c1, &pb, &o, &its) == GPK_OK, "its n=%u", n);
    TU_CHECK(is_perm(its.solution, n) && gpk_tsp_tour_length(&t, its.solution) == its.best &&
                 its.best <= hc.best && its.iterations == 200,
             "its n=%u: best %lld (hc %lld), %llu kicks", n, (long long)its.best, (long long)hc.best,
             (unsigned long long)its.iterations);
    o.algo = GPK_SEARCH_MULTISTART;
    o.starts = 3;
    o.iters = 50;
    TU_CHECK(gpk_search_run(c1, &pb, &o, &m1) == GPK_OK && gpk_search_run(c2, &pb, &o, &m2) == GPK_OK,
             "multistart n=%u", n);
    TU_CHECK(m1.best == m2.best && memcmp(m1.solution, m2.solution, n * sizeof *m1.solution) == 0 &&
                 gpk_tsp_tour_length(&t, m1.solution) == m1.best,
             "multistart n=%u: 1 thread %lld, 2 threads %lld", n, (long long)m1.best, (long long)m2.best);
    gpk_search_result_free(&hc);
    gpk_search_result_free(&its);
    gpk_search_result_free(&m1);
    gpk_search_result_free(&m2);
    gpk_tsp_free(&t);
}

/* A search with a time limit must stop within 10% of it (plus a few
 * milliseconds of set-up on this shared machine), and return a valid
 * solution whose cost is its reported best. A loaded machine can hold the
 * searching threads off the cores past the limit, which says nothing of
 * the search: an overshoot is run again, up to three runs in all, and the
 * check fails when every run overshoots (a search that ignores its limit
 * does so every time). */
static void test_time_limit(gpk_ctx *c, const char *what, const gpk_search_problem *pb, gpk_search_opts o,
                            double limit)
{
    o.time_limit = limit;
    /* Under a sanitizer (make asan-check sets GPK_TEST_SANITIZER) the clock
     * measures the instrumentation: only the lower bound holds there. */
    const int sanitized = getenv("GPK_TEST_SANITIZER") != NULL;
    gpk_search_result r;
    double el = 0;
    gpk_status s = GPK_OK;
    for (int attempt = 1; attempt <= 3; attempt++) {
        const double t0 = omp_get_wtime();
        s = gpk_search_run(c, pb, &o, &r);
        el = omp_get_wtime() - t0;
        if (s != GPK_OK) break;
        printf("  %s: limit %.2f s, returned after %.3f s, stopped %d (run %d)\n", what, limit, el,
               (int)r.stopped, attempt);
        if (sanitized || el <= limit * 1.10 + 0.01 || attempt == 3) break;
        gpk_search_result_free(&r);
    }
    TU_CHECK(s == GPK_OK, "%s: %s", what, gpk_last_error(c));
    if (s != GPK_OK) return;
    TU_CHECK(r.stopped == GPK_SEARCH_TIME_LIMIT, "%s: stopped = %d", what, (int)r.stopped);
    TU_CHECK(el >= limit * 0.999 && (sanitized || el <= limit * 1.10 + 0.01),
             "%s: returned after %.3f s for a %.2f s limit, three runs in a row", what, el, limit);
    const uint32_t n = pb->kind == GPK_PROBLEM_TSP ? pb->tsp->n : pb->qap->n;
    TU_CHECK(is_perm(r.solution, n), "%s: not a permutation", what);
    const int64_t full = pb->kind == GPK_PROBLEM_TSP ? gpk_tsp_tour_length(pb->tsp, r.solution)
                                                     : gpk_qap_cost(pb->qap, r.solution);
    TU_CHECK(full == r.best, "%s: best %lld, evaluates to %lld", what, (long long)r.best, (long long)full);
    gpk_search_result_free(&r);
}

typedef struct {
    volatile sig_atomic_t *flag;
    uint64_t at;
} cancel_at;

/* Plays the signal handler: sets the flag at an iteration. */
static void cancel_progress(const gpk_search_progress *p, void *user)
{
    cancel_at *c = user;
    if (p->iteration >= c->at) *c->flag = 1;
}

static void test_cancel(gpk_ctx *c)
{
    gpk_tsp t;
    random_tsp(&t, 300, 10000, GPK_TSP_EUC_2D);
    gpk_search_problem pb = {GPK_PROBLEM_TSP, NULL, &t, NULL};
    for (int nbk = 0; nbk < 2; nbk++) {
        volatile sig_atomic_t flag = 0;
        cancel_at ca = {&flag, 7};
        gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
        o.algo = GPK_SEARCH_ITS;
        o.nb = nbk ? GPK_NB_OR_OPT : GPK_NB_TWO_OPT;
        o.iters = 100000;
        o.cancel = &flag;
        o.progress = cancel_progress;
        o.user = &ca;
        o.progress_every = 1;
        gpk_search_result r;
        TU_CHECK(gpk_search_run(c, &pb, &o, &r) == GPK_OK, "cancel %s", gpk_neighbourhood_name(o.nb));
        TU_CHECK(r.stopped == GPK_SEARCH_CANCELLED && r.iterations >= 7 && r.iterations <= 9 &&
                     is_perm(r.solution, t.n) && gpk_tsp_tour_length(&t, r.solution) == r.best,
                 "cancel %s: stopped %d after %llu iterations", gpk_neighbourhood_name(o.nb), (int)r.stopped,
                 (unsigned long long)r.iterations);
        gpk_search_result_free(&r);
        /* Set before the call: a valid result, no move. */
        flag = 1;
        o.progress = NULL;
        TU_CHECK(gpk_search_run(c, &pb, &o, &r) == GPK_OK && r.stopped == GPK_SEARCH_CANCELLED &&
                     gpk_tsp_tour_length(&t, r.solution) == r.best,
                 "cancel before the start %s", gpk_neighbourhood_name(o.nb));
        gpk_search_result_free(&r);
    }
    gpk_tsp_free(&t);
}

static long peak_rss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024; /* Linux: kilobytes */
}

/* The memory bound: hill climbing on a generated 100 000-city
 * instance within 2 GB, both with neighbour lists (bounded moves) and with
 * the paper's full 2-opt neighbourhood (bounded by a time limit: one full
 * scan takes minutes here); before, the latter asked for an 80 GB tabu
 * list that hill climbing never reads, and tabu search for the same. */
static void test_memory(gpk_ctx *c)
{
    const uint32_t n = 100000;
    gpk_tsp t;
    random_tsp(&t, n, 1000000, GPK_TSP_EUC_2D);
    gpk_search_problem pb = {GPK_PROBLEM_TSP, NULL, &t, NULL};
    gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
    o.algo = GPK_SEARCH_HC_FIRST;
    o.nb = GPK_NB_OR_OPT;
    o.iters = 300000;
    gpk_search_result r;
    const double t0 = omp_get_wtime();
    TU_CHECK(gpk_search_run(c, &pb, &o, &r) == GPK_OK, "100k or2opt hc: %s", gpk_last_error(c));
    const double el = omp_get_wtime() - t0;
    const double est = 0.7124 * sqrt((double)n * 1e12);
    printf("  100k or2opt hc: %llu moves in %.2f s, length %lld (%.1f%% above 0.7124 sqrt(n A)), peak RSS "
           "%ld MB\n",
           (unsigned long long)r.iterations, el, (long long)r.best, 100.0 * ((double)r.best / est - 1.0),
           peak_rss_mb());
    TU_CHECK(is_perm(r.solution, n) && gpk_tsp_tour_length(&t, r.solution) == r.best,
             "100k or2opt: bad result");
    TU_CHECK((double)r.best < 1.25 * est, "100k or2opt: length %lld, more than 25%% above the estimate %.0f",
             (long long)r.best, est);
    gpk_search_result_free(&r);
    o.nb = GPK_NB_TWO_OPT;
    o.algo = GPK_SEARCH_HC_BEST;
    o.iters = 0;
    test_time_limit(c, "100k full 2-opt hc", &pb, o, 0.5);
    /* Tabu above the matrix threshold keeps its list by city: n entries. */
    o.algo = GPK_SEARCH_TABU;
    o.iters = 1000;
    test_time_limit(c, "100k full 2-opt tabu", &pb, o, 0.5);
    o.nb = GPK_NB_SWAP;
    test_time_limit(c, "100k swap tabu", &pb, o, 0.4);
    const long mb = peak_rss_mb();
    printf("  peak RSS after both: %ld MB\n", mb);
    TU_CHECK(mb < 2048, "peak RSS %ld MB, the bound is 2 GB", mb);
    gpk_tsp_free(&t);
}

static void test_tsplib(gpk_ctx *c, const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tsplib/kroA100.tsp", dir);
    gpk_tsp t;
    if (gpk_tsp_load(path, &t) != GPK_OK) {
        snprintf(path, sizeof path, "%s/tsplib/a280.tsp", dir);
        if (gpk_tsp_load(path, &t) != GPK_OK) {
            printf("  no TSPLIB instance in %s: skipped\n", dir);
            return;
        }
    }
    /* An optimal tour as the start: the descent finds nothing better. */
    char tp[1040];
    snprintf(tp, sizeof tp, "%.*s.opt.tour", (int)(strlen(path) - 4), path);
    uint32_t m, *opt;
    if (gpk_tsp_load_tour(tp, &m, &opt) == GPK_OK && m == t.n) {
        gpk_search_problem pb = {GPK_PROBLEM_TSP, NULL, &t, NULL};
        gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
        o.nb = GPK_NB_OR_OPT;
        o.algo = GPK_SEARCH_ITS;
        o.iters = 500;
        o.global_iters = 1;
        o.start = opt;
        gpk_search_result r;
        TU_CHECK(gpk_search_run(c, &pb, &o, &r) == GPK_OK && r.best == gpk_tsp_tour_length(&t, opt),
                 "%s from its optimal tour: %lld", t.name, (long long)r.best);
        gpk_search_result_free(&r);
        free(opt);
    }
    gpk_tsp_free(&t);
}

int main(int argc, char **argv)
{
    const uint64_t seed = tu_seed();
    gpk_rng_seed(&rng, seed);
    static const uint32_t sizes[] = {4,  5,  6,  7,   8,   11,  16,  17,   31,  32,
                                     33, 64, 97, 127, 128, 129, 500, 1024, 2003};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        const uint32_t n = sizes[i];
        test_neighbours(n, GPK_TSP_EUC_2D, n < 100 ? 20 : 100000);
        if (n <= 1024) test_neighbours(n, GPK_TSP_ATT, 5000);
        test_moves(n, n < 100 ? 2000 : 600);
    }
    test_neighbours(3000, GPK_TSP_CEIL_2D, 30); /* many equal points and ties */
    test_neighbours(200, GPK_TSP_GEO, 80);      /* every pair, by the GEO distance */
    printf("neighbour lists and move deltas: %d checks\n", tu_checks);

    gpk_ctx *c1 = make_ctx(1), *c2 = make_ctx(2);
    if (!c1 || !c2) {
        fprintf(stderr, "no CPU context\n");
        return 1;
    }
    static const uint32_t ssizes[] = {5, 8, 13, 64, 101, 256, 1000};
    for (size_t i = 0; i < sizeof ssizes / sizeof *ssizes; i++) test_search(c1, c2, ssizes[i], seed + i);
    printf("or2opt searches: %d checks\n", tu_checks);
    static const uint32_t bsizes[] = {4, 5, 7, 8, 11, 16, 31, 64, 100, 257, 1000, 2003};
    for (size_t i = 0; i < sizeof bsizes / sizeof *bsizes; i++) {
        test_best_moves(bsizes[i], GPK_TSP_EUC_2D, bsizes[i] < 100 ? 30 : 100000, 4000);
        test_best_moves(bsizes[i], GPK_TSP_ATT, 3000, 4000);
    }
    test_best_moves(1500, GPK_TSP_CEIL_2D, 40, 1500);     /* ties and equal points */
    test_best_moves(110000, GPK_TSP_EUC_2D, 1000000, 60); /* the reversal bound */
    test_batched(c1, c2, 3000);
    test_batched(c1, c2, 20011);
    test_batched(c1, c2, 110000);
    printf("batch moves and the batched descent: %d checks\n", tu_checks);

    test_cancel(c2);
    {
        gpk_tsp t;
        random_tsp(&t, 2000, 100000, GPK_TSP_EUC_2D);
        gpk_search_problem pb = {GPK_PROBLEM_TSP, NULL, &t, NULL};
        gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
        o.nb = GPK_NB_OR_OPT;
        o.algo = GPK_SEARCH_ITS;
        test_time_limit(c2, "or2opt its n=2000", &pb, o, 0.6);
        o.algo = GPK_SEARCH_MULTISTART;
        test_time_limit(c2, "or2opt multistart n=2000", &pb, o, 0.4);
        o.nb = GPK_NB_TWO_OPT;
        o.algo = GPK_SEARCH_TABU;
        test_time_limit(c2, "2opt tabu n=2000", &pb, o, 0.4);
        o.algo = GPK_SEARCH_MULTISTART;
        test_time_limit(c2, "2opt multistart n=2000", &pb, o, 0.4);
        o.algo = GPK_SEARCH_HC_FIRST;
        o.nb = GPK_NB_SWAP;
        o.iters = 0;
        test_time_limit(c2, "swap hc-first n=2000", &pb, o, 0.3);
        gpk_tsp_free(&t);
        gpk_qap q;
        memset(&q, 0, sizeof q);
        q.n = 120;
        q.a = malloc(sizeof(int64_t) * 120 * 120);
        q.b = malloc(sizeof(int64_t) * 120 * 120);
        for (uint32_t i = 0; i < 120 * 120; i++) {
            q.a[i] = (int64_t)below(100);
            q.b[i] = (int64_t)below(100);
        }
        gpk_search_problem pq = {GPK_PROBLEM_QAP, &q, NULL, NULL};
        gpk_search_opts oq = GPK_SEARCH_OPTS_INIT;
        oq.algo = GPK_SEARCH_ITS;
        oq.iters = 100000;
        test_time_limit(c2, "qap its n=120", &pq, oq, 0.4);
        gpk_qap_free(&q);
    }
    {
        /* The batched descent (host batches) stops in time too: 200 000
         * cities descend for seconds here. */
        gpk_tsp t;
        random_tsp(&t, 200000, 1000000, GPK_TSP_EUC_2D);
        gpk_search_problem pb = {GPK_PROBLEM_TSP, NULL, &t, NULL};
        gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
        o.nb = GPK_NB_OR_OPT;
        o.algo = GPK_SEARCH_ITS;
        setenv("GPK_TSP_LS_BATCH", "host", 1);
        test_time_limit(c2, "or2opt its n=200000, batched descent", &pb, o, 1.0);
        unsetenv("GPK_TSP_LS_BATCH");
        gpk_tsp_free(&t);
    }
    printf("time limits and cancel: %d checks\n", tu_checks);
    if (argc > 1) test_tsplib(c1, argv[1]);
    test_memory(c2);
    gpk_ctx_destroy(c1);
    gpk_ctx_destroy(c2);
    printf("%d checks, %d failures\n", tu_checks, tu_failures);
    return tu_failures ? 1 : 0;
}
