/* The CUDA neighbourhood evaluation (src/search/search_cuda.cu) against the
 * CPU scan's rule: on the same states (solution, tabu list, iteration,
 * cost, best), both modes (PAPER: deltas to the host; OURS: reduction on
 * the device) must pick the same best move and the same best admissible
 * move as a reference scan built from the public delta functions, for
 * random QAP / TSP / PPP instances of several sizes, with the default
 * chunk and with forced small chunks. Every configuration runs twice: with
 * the fast paths (QAP int32 with the device-side permuted matrix; TSP 2-opt
 * float distances with the exactness guard, the tiled kernel in OURS) and
 * with the generic kernels. The TSP cases include half-integer grids (many
 * distances exactly on a rounding boundary: the guard must catch them all),
 * coordinates far from the origin (the hi + lo split) and sizes around the
 * tile width. Then whole searches on a CUDA context (both evaluation modes,
 * opts.eval) must return what the CPU context returns (with Taillard's
 * table and with the O(n) formula), with every neighbour evaluated on the
 * GPU, and gpk_search_run_multi must give the same result on 1 and 2 CUDA
 * contexts (both on device 0 when there is one GPU) as on CPU contexts.
 *
 * Exit 77 (skipped) without a CUDA device, unless GPK_REQUIRE_CUDA=1. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpk/gen.h"
#include "gpk/search.h"
#include "search/search_run.h"
#include "testutil.h"

static gpk_rng rng;

static uint64_t below(uint64_t b) { return gpk_rng_next(&rng) % b; }

typedef struct {
    const gpk__search_cfg *c;
    uint32_t n;
    uint64_t size, tabu_len;
    uint32_t *perm;
    int8_t *v;
    int32_t *y;
    uint64_t *tabu;
} ref_state;

static int64_t ref_delta(const ref_state *s, uint32_t i, uint32_t j)
{
    const gpk__search_cfg *c = s->c;
    switch (c->nb) {
    case GPK_NB_SWAP:
        return c->kind == GPK_PROBLEM_QAP ? gpk_qap_swap_delta(c->qap, s->perm, i, j)
                                          : gpk_tsp_swap_delta(c->tsp, s->perm, i, j);
    case GPK_NB_TWO_OPT: return gpk_tsp_two_opt_delta(c->tsp, s->perm, i, j);
    case GPK_NB_FLIP1: return gpk_ppp_flip_delta(c->ppp, s->y, s->v, i);
    default: return gpk_ppp_flip2_delta(c->ppp, s->y, s->v, i, j);
    }
}

static int ref_tabu(const ref_state *s, uint64_t it, uint64_t k, uint32_t i, uint32_t j)
{
    switch (s->c->nb) {
    case GPK_NB_SWAP:
        return s->tabu[(size_t)i * s->n + s->perm[j]] > it && s->tabu[(size_t)j * s->n + s->perm[i]] > it;
    case GPK_NB_TWO_OPT: return s->tabu[k] > it;
    case GPK_NB_FLIP1: return s->tabu[i] > it;
    default: return s->tabu[i] > it || s->tabu[j] > it;
    }
}

static int mless(int64_t d, uint64_t k, const gpk__search_cuda_move *m)
{
    return d < m->d || (d == m->d && k < m->k);
}

static void ref_scan(const ref_state *s, const gpk__search_cuda_in *in, gpk__search_cuda_move *any,
                     gpk__search_cuda_move *adm)
{
    any->d = adm->d = INT64_MAX;
    any->k = adm->k = UINT64_MAX;
    for (uint64_t k = 0; k < s->size; k++) {
        uint32_t i, j = 0;
        if (s->c->nb == GPK_NB_FLIP1) i = (uint32_t)k;
        else gpk_swap_index_to_pair(s->n, k, &i, &j);
        const int64_t d = ref_delta(s, i, j);
        if (mless(d, k, any)) any->d = d, any->k = k;
        if (mless(d, k, adm) &&
            (!in->use_tabu || in->cost + d < in->best || !ref_tabu(s, in->iteration, k, i, j)))
            adm->d = d, adm->k = k;
    }
}

/* Random states of one configuration; every choice compared. want_fast:
 * the path the session must take (-1: not checked). */
static void check_config_ex(gpk_ctx *ctx, const gpk__search_cfg *c, const char *label0, int flags,
                            int want_fast)
{
    gpk__search_cuda *g = NULL;
    char label[160];
    snprintf(label, sizeof label, "%s [%s]", label0, flags & GPK__SEARCH_CUDA_NO_FAST ? "generic" : "fast");
    gpk_status st = gpk__search_cuda_open_ex(ctx, c, flags, &g);
    TU_CHECK(st == GPK_OK, "%s: open: %s", label, gpk_last_error(ctx));
    if (st != GPK_OK) return;
    if (want_fast >= 0)
        TU_CHECK(gpk__search_cuda_fast(g) == want_fast, "%s: path %d, expected %d", label,
                 gpk__search_cuda_fast(g), want_fast);
    ref_state s = {c, c->n, 0, 0, NULL, NULL, NULL, NULL};
    const uint32_t n = c->n;
    s.size = c->nb == GPK_NB_FLIP1 ? n : (uint64_t)n * (n - 1) / 2;
    if (c->kind == GPK_PROBLEM_PPP) s.tabu_len = n;
    else s.tabu_len = c->nb == GPK_NB_TWO_OPT ? s.size : (uint64_t)n * n;
    s.tabu = calloc(s.tabu_len, sizeof *s.tabu);
    s.perm = malloc(n * sizeof *s.perm);
    s.v = malloc(n);
    s.y = malloc((c->ppp ? c->ppp->m : 1) * sizeof *s.y);
    /* default, small (many launches; bounded for the large instances), 1000 */
    const uint64_t chunks[3] = {0, s.size <= 20000 ? 1 + below(97) : s.size / 5 + below(1000), 1000};
    for (int rep = 0; rep < 4; rep++) {
        if (c->kind == GPK_PROBLEM_PPP) {
            for (uint32_t i = 0; i < n; i++) s.v[i] = (gpk_rng_next(&rng) >> 63) ? 1 : -1;
            gpk_ppp_product(c->ppp, s.v, s.y);
        } else {
            for (uint32_t i = 0; i < n; i++) s.perm[i] = i;
            for (uint32_t i = n - 1; i > 0; i--) {
                uint32_t r = (uint32_t)below(i + 1), t = s.perm[i];
                s.perm[i] = s.perm[r];
                s.perm[r] = t;
            }
        }
        const uint64_t it = 10 + below(100);
        for (uint64_t q = 0; q < s.tabu_len; q++) s.tabu[q] = below(3) ? 0 : it - 3 + below(8);
        TU_CHECK(gpk__search_cuda_tabu_upload(g, s.tabu) == GPK_OK, "%s: tabu upload", label);
        /* A few single writes, as the search makes them. */
        for (int w = 0; w < 3; w++) {
            const uint64_t at = below(s.tabu_len), until = it + 1 + below(4);
            s.tabu[at] = until;
            TU_CHECK(gpk__search_cuda_tabu_set(g, at, until) == GPK_OK, "%s: tabu set", label);
        }
        gpk__search_cuda_in in = {s.perm, s.v, s.y, s.tabu, it, 1000, 0, 0};
        gpk__search_cuda_move ra, rb;
        ref_scan(&s, &in, &ra, &rb); /* use_tabu = 0: rb == ra */
        for (int variant = 0; variant < 4; variant++) {
            in.use_tabu = variant > 0;
            /* best: none aspirated / some aspirated / every improving one */
            in.best = variant == 1 ? INT64_MIN / 4
                : variant == 2     ? in.cost + ra.d + 1 + (int64_t)below(3)
                                   : in.cost;
            ref_scan(&s, &in, &ra, &rb);
            for (int ch = 0; ch < 3; ch++) {
                gpk__search_cuda_set_chunk(g, chunks[ch]);
                /* the 2-opt tiled kernel's two widths (a no-op elsewhere) */
                const unsigned tile = (rep + ch) & 1 ? 256u : 128u;
                gpk__search_cuda_set_tile(g, tile);
                for (int mode = 0; mode < 2; mode++) {
                    gpk__search_cuda_move ga, gb;
                    st = gpk__search_cuda_best_move(
                        g, &in, mode ? GPK__SEARCH_CUDA_OURS : GPK__SEARCH_CUDA_PAPER, &ga, &gb);
                    TU_CHECK(st == GPK_OK, "%s: best_move: %s", label, gpk_last_error(ctx));
                    if (st != GPK_OK) continue;
                    TU_CHECK(ga.d == ra.d && ga.k == ra.k,
                             "%s rep %d variant %d chunk %" PRIu64 " tile %u %s: best (%" PRId64 ", %" PRIu64
                             "), CPU (%" PRId64 ", %" PRIu64 ")",
                             label, rep, variant, chunks[ch], tile, mode ? "ours" : "paper", ga.d, ga.k, ra.d,
                             ra.k);
                    TU_CHECK(gb.d == rb.d && gb.k == rb.k,
                             "%s rep %d variant %d chunk %" PRIu64 " tile %u %s: admissible (%" PRId64
                             ", %" PRIu64 "), CPU (%" PRId64 ", %" PRIu64 ")",
                             label, rep, variant, chunks[ch], tile, mode ? "ours" : "paper", gb.d, gb.k, rb.d,
                             rb.k);
                }
            }
        }
    }
    gpk__search_cuda_close(g);
    free(s.tabu);
    free(s.perm);
    free(s.v);
    free(s.y);
}

/* Both paths: the fast one (want_fast: which) and the generic one. */
static void check_config(gpk_ctx *ctx, const gpk__search_cfg *c, const char *label, int want_fast)
{
    check_config_ex(ctx, c, label, 0, want_fast);
    check_config_ex(ctx, c, label, GPK__SEARCH_CUDA_NO_FAST, 0);
}

/* A sequence of states as a search makes them: one move at a time (a swap
 * or a reversal), a few tabu writes per move, so that the device gets
 * patches rather than whole uploads; checked after every move. */
static void check_walk(gpk_ctx *ctx, const gpk__search_cfg *c, const char *label0, int flags)
{
    gpk__search_cuda *g = NULL;
    char label[160];
    snprintf(label, sizeof label, "%s walk [%s]", label0,
             flags & GPK__SEARCH_CUDA_NO_FAST ? "generic" : "fast");
    gpk_status st = gpk__search_cuda_open_ex(ctx, c, flags, &g);
    TU_CHECK(st == GPK_OK, "%s: open: %s", label, gpk_last_error(ctx));
    if (st != GPK_OK) return;
    const uint32_t n = c->n;
    ref_state s = {c, n, 0, 0, NULL, NULL, NULL, NULL};
    s.size = (uint64_t)n * (n - 1) / 2;
    s.tabu_len = c->nb == GPK_NB_TWO_OPT ? s.size : (uint64_t)n * n;
    s.tabu = calloc(s.tabu_len, sizeof *s.tabu);
    s.perm = malloc(n * sizeof *s.perm);
    for (uint32_t i = 0; i < n; i++) s.perm[i] = i;
    TU_CHECK(gpk__search_cuda_tabu_upload(g, NULL) == GPK_OK, "%s: tabu clear", label);
    int64_t cost = 0;
    for (uint64_t it = 1; it <= 40; it++) {
        gpk__search_cuda_set_tile(g, it & 1 ? 256u : 128u);
        gpk__search_cuda_in in = {s.perm, NULL, NULL, s.tabu, it, cost, cost - 5 + (int64_t)below(3), 1};
        gpk__search_cuda_move ra, rb;
        ref_scan(&s, &in, &ra, &rb);
        for (int mode = 0; mode < 2; mode++) {
            gpk__search_cuda_move ga, gb;
            st = gpk__search_cuda_best_move(g, &in, mode ? GPK__SEARCH_CUDA_OURS : GPK__SEARCH_CUDA_PAPER,
                                            &ga, &gb);
            TU_CHECK(st == GPK_OK && ga.d == ra.d && ga.k == ra.k && gb.d == rb.d && gb.k == rb.k,
                     "%s it %" PRIu64 " %s: (%" PRId64 ", %" PRIu64 ") / (%" PRId64 ", %" PRIu64
                     "), CPU (%" PRId64 ", %" PRIu64 ") / (%" PRId64 ", %" PRIu64 ")",
                     label, it, mode ? "ours" : "paper", ga.d, ga.k, gb.d, gb.k, ra.d, ra.k, rb.d, rb.k);
        }
        /* the move: the admissible one, or a random one every third step */
        uint32_t i, j;
        gpk_swap_index_to_pair(n, it % 3 == 0 ? below(s.size) : rb.k, &i, &j);
        const uint64_t k = gpk_swap_pair_to_index(n, i, j), until = it + 1 + below(6);
        int writes = 1 + (int)below(3);
        for (int w = 0; w < writes; w++) {
            const uint64_t at =
                w == 0 ? (c->nb == GPK_NB_TWO_OPT ? k : (uint64_t)i * n + s.perm[i]) : below(s.tabu_len);
            s.tabu[at] = until;
            TU_CHECK(gpk__search_cuda_tabu_set(g, at, until) == GPK_OK, "%s: tabu set", label);
        }
        cost += ref_delta(&s, i, j);
        if (c->nb == GPK_NB_TWO_OPT) {
            for (uint32_t a = i + 1, b = j; a < b; a++, b--) {
                uint32_t t = s.perm[a];
                s.perm[a] = s.perm[b];
                s.perm[b] = t;
            }
        } else {
            uint32_t t = s.perm[i];
            s.perm[i] = s.perm[j];
            s.perm[j] = t;
        }
    }
    gpk__search_cuda_close(g);
    free(s.tabu);
    free(s.perm);
}

static gpk__search_cfg base_cfg(gpk_problem_kind kind, gpk_neighbourhood nb, uint32_t n)
{
    gpk__search_cfg c;
    memset(&c, 0, sizeof c);
    c.kind = kind;
    c.nb = nb;
    c.n = n;
    c.threads = 1;
    c.algo = GPK_SEARCH_TABU; /* the checks use the tabu list: hill climbing's session keeps none */
    return c;
}

static void test_qap(gpk_ctx *ctx, uint32_t n, int big)
{
    gpk_qap q;
    memset(&q, 0, sizeof q);
    q.n = n;
    q.a = malloc((size_t)n * n * sizeof *q.a);
    q.b = malloc((size_t)n * n * sizeof *q.b);
    for (size_t t = 0; t < (size_t)n * n; t++) {
        q.a[t] = (int64_t)below(10);
        q.b[t] = (int64_t)below(100) - 20; /* asymmetric, some negative */
        if (big) q.b[t] *= 20000000;       /* beyond 2^30: the int64 kernel */
    }
    if (!big && n > 3) { /* the int32 path's limits: |entries| = 2^30 - 1 */
        q.a[1] = (1 << 30) - 1;
        q.b[n] = -((1 << 30) - 1);
        q.a[2] = 0, q.b[2] = 0;
    }
    gpk__search_cfg c = base_cfg(GPK_PROBLEM_QAP, GPK_NB_SWAP, n);
    c.qap = &q;
    char label[64];
    snprintf(label, sizeof label, "qap n=%u%s", n, big ? " big" : "");
    check_config(ctx, &c, label, big ? 0 : 1);
    if (n >= 4 && n <= 60) {
        check_walk(ctx, &c, label, 0);
        check_walk(ctx, &c, label, GPK__SEARCH_CUDA_NO_FAST);
    }
    free(q.a);
    free(q.b);
}

/* grid: 1 small integers (many equal deltas: the tie-break); 2 a
 * half-integer grid (many distances exactly on a rounding boundary: 3-4-5
 * triangles scaled by 1/2 give 2.5); 3 the same grid 1e6 away from the
 * origin (float hi + lo); 0 fractional values where the rounding matters. */
static void test_tsp(gpk_ctx *ctx, uint32_t n, gpk_tsp_weight w, int with_matrix, int grid)
{
    gpk_tsp t;
    memset(&t, 0, sizeof t);
    t.n = n;
    t.weight = w;
    t.x = malloc(n * sizeof *t.x);
    t.y = malloc(n * sizeof *t.y);
    for (uint32_t i = 0; i < n; i++) {
        /* grid: small integers, many equal deltas (the tie-break); else
         * fractional values where the rounding matters */
        switch (grid) {
        case 1: t.x[i] = (double)below(6), t.y[i] = (double)below(6); break;
        case 2: t.x[i] = (double)below(40) / 2.0, t.y[i] = (double)below(40) / 2.0; break;
        case 3: t.x[i] = 1e6 + (double)below(200) / 2.0, t.y[i] = -3e6 + (double)below(200) / 2.0; break;
        default: t.x[i] = (double)below(2000000) / 7.0, t.y[i] = (double)below(2000000) / 13.0; break;
        }
    }
    if (with_matrix) {
        int32_t *m = malloc((size_t)n * n * sizeof *m);
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = 0; j < n; j++)
                m[(size_t)i * n + j] = gpk_tsp_dist(&t, i, j); /* the coordinates' path */
        t.matrix = m;
    }
    static const char *wn[] = {"euc2d", "ceil2d", "att", "geo", "explicit"};
    for (int nb = 0; nb < 2; nb++) {
        gpk__search_cfg c = base_cfg(GPK_PROBLEM_TSP, nb ? GPK_NB_SWAP : GPK_NB_TWO_OPT, n);
        c.tsp = &t;
        char label[96];
        snprintf(label, sizeof label, "tsp n=%u %s %s grid%d %s", n, wn[w], with_matrix ? "matrix" : "coords",
                 grid, nb ? "swap" : "2opt");
        const int fast = !nb && n >= 8 && (w == GPK_TSP_EUC_2D || w == GPK_TSP_CEIL_2D) ? 2 : 0;
        check_config(ctx, &c, label, fast);
        if (n >= 8 && n <= 300 && (grid >= 2 || n % 2)) {
            check_walk(ctx, &c, label, 0);
            check_walk(ctx, &c, label, GPK__SEARCH_CUDA_NO_FAST);
        }
    }
    free(t.x);
    free(t.y);
    free(t.matrix);
}

static void test_ppp(gpk_ctx *ctx, uint32_t m, uint32_t n)
{
    gpk_ppp p;
    gpk_status st = gpk_ppp_generate(m, n, gpk_rng_next(&rng), &p);
    TU_CHECK(st == GPK_OK, "ppp %u-%u: generate", m, n);
    if (st != GPK_OK) return;
    for (int nb = 0; nb < 2; nb++) {
        gpk__search_cfg c = base_cfg(GPK_PROBLEM_PPP, nb ? GPK_NB_FLIP2 : GPK_NB_FLIP1, n);
        c.ppp = &p;
        char label[64];
        snprintf(label, sizeof label, "ppp %u-%u %s", m, n, nb ? "flip2" : "flip1");
        check_config(ctx, &c, label, 0);
    }
    gpk_ppp_free(&p);
}

/* A whole search on the CUDA context against the CPU context: both
 * evaluation modes on the GPU, both QAP delta formulas on the CPU. */
static void test_run(gpk_ctx *cuda, gpk_ctx *cpu, const gpk_search_problem *pr, gpk_search_algo algo,
                     gpk_neighbourhood nb, const char *label)
{
    gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
    o.algo = algo;
    o.nb = nb;
    o.iters = algo == GPK_SEARCH_HC_BEST ? 0 : 150;
    o.global_iters = 3;
    o.seed = 12345;
    gpk_search_result b;
    gpk_status sb = gpk_search_run(cpu, pr, &o, &b);
    TU_CHECK(sb == GPK_OK, "%s: CPU run: %s", label, gpk_last_error(cpu));
    if (sb != GPK_OK) return;
    TU_CHECK(b.gpu_evaluated == 0 && b.runs == 1, "%s: CPU run: gpu_evaluated %" PRIu64, label,
             b.gpu_evaluated);
    for (int v = 0; v < 3; v++) {
        /* v = 0, 1: CUDA paper / ours; v = 2: the CPU with the O(n) QAP formula */
        gpk_search_opts oa = o;
        oa.eval = v == 0 ? GPK_SEARCH_EVAL_PAPER : GPK_SEARCH_EVAL_OURS;
        if (v == 2) oa.qap_delta = GPK_QAP_DELTA_FORMULA;
        gpk_ctx *cx = v == 2 ? cpu : cuda;
        gpk_search_result a;
        gpk_status sa = gpk_search_run(cx, pr, &oa, &a);
        const char *what = v == 0 ? "cuda paper" : v == 1 ? "cuda ours" : "cpu formula";
        TU_CHECK(sa == GPK_OK, "%s (%s): run: %s", label, what, gpk_last_error(cx));
        if (sa != GPK_OK) continue;
        TU_CHECK(a.best == b.best && a.iterations == b.iterations && a.evaluated == b.evaluated &&
                     a.n == b.n && memcmp(a.solution, b.solution, a.n * sizeof *a.solution) == 0,
                 "%s (%s): best %" PRId64 " after %" PRIu64 ", CPU %" PRId64 " after %" PRIu64, label, what,
                 a.best, a.iterations, b.best, b.iterations);
        if (v < 2)
            TU_CHECK(a.gpu_evaluated == a.evaluated, "%s (%s): %" PRIu64 " of %" PRIu64 " on the GPU (%s)",
                     label, what, a.gpu_evaluated, a.evaluated, gpk_last_error(cuda));
        gpk_search_result_free(&a);
    }
    gpk_search_result_free(&b);
}

/* gpk_search_run_multi: 3 runs on 1 and 2 CUDA contexts and on 1 and 2 CPU
 * contexts: the same best, solution and totals. */
static void test_multi(gpk_ctx *const *cudas, int ncuda, gpk_ctx *const *cpus, const gpk_search_problem *pr,
                       const char *label)
{
    gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
    o.algo = GPK_SEARCH_ITS;
    o.iters = 60;
    o.global_iters = 2;
    o.seed = 777;
    o.starts = 3;
    gpk_search_result ref;
    gpk_status st = gpk_search_run_multi(cpus, 1, pr, &o, &ref);
    TU_CHECK(st == GPK_OK && ref.runs == 3, "%s: multi on 1 CPU context: %s", label, gpk_last_error(cpus[0]));
    if (st != GPK_OK) return;
    for (int v = 0; v < 1 + ncuda; v++) {
        gpk_ctx *const *cx = v == 0 ? cpus : cudas;
        const int count = v == 0 ? 2 : v;
        gpk_search_result r;
        st = gpk_search_run_multi(cx, count, pr, &o, &r);
        TU_CHECK(st == GPK_OK, "%s: multi on %d %s contexts: %s", label, count, v ? "CUDA" : "CPU",
                 gpk_last_error(cx[0]));
        if (st != GPK_OK) continue;
        TU_CHECK(r.best == ref.best && r.best_run == ref.best_run && r.iterations == ref.iterations &&
                     r.evaluated == ref.evaluated &&
                     memcmp(r.solution, ref.solution, r.n * sizeof *r.solution) == 0,
                 "%s: multi on %d %s contexts: best %" PRId64 " (run %u), 1 CPU context %" PRId64 " (run %u)",
                 label, count, v ? "CUDA" : "CPU", r.best, r.best_run, ref.best, ref.best_run);
        if (v)
            TU_CHECK(r.gpu_evaluated == r.evaluated, "%s: multi on %d CUDA contexts: not all on the GPU",
                     label, count);
        gpk_search_result_free(&r);
    }
    /* the same context twice is refused */
    gpk_ctx *twice[2] = {cpus[0], cpus[0]};
    gpk_search_result r;
    TU_CHECK(gpk_search_run_multi(twice, 2, pr, &o, &r) == GPK_EINVAL,
             "%s: multi with a repeated context accepted", label);
    gpk_search_result_free(&ref);
}

/* ---- or2opt: the batch evaluation of the neighbour-list moves ---- */

typedef struct {
    double key;
    uint32_t c;
} strip_key;

static int strip_cmp(const void *x, const void *y)
{
    const strip_key *a = x, *b = y;
    return a->key < b->key ? -1 : a->key > b->key ? 1 : (a->c > b->c) - (a->c < b->c);
}

/* The GPU's answer for each city must be gpk__tsp_ls_best_move's on the
 * host (delta, code, moves looked at), on random tours, tours in strips
 * (few improving moves), a hill-climbed tour (almost none), and each of
 * those after random 2-opt moves (the tour re-sent); for every city or a
 * random subset (repeats allowed). coords: 0 fractional, 1 a half-integer
 * grid (ties, rounding boundaries), 2 far from the origin; EXPLICIT: the
 * matrix only. */
static void test_ls_batch(gpk_ctx *ctx, gpk_ctx *cpu, uint32_t n, gpk_tsp_weight w, int coords,
                          uint32_t subset)
{
    gpk_tsp t;
    memset(&t, 0, sizeof t);
    t.n = n;
    t.weight = w;
    t.x = malloc(n * sizeof *t.x);
    t.y = malloc(n * sizeof *t.y);
    const double side = coords == 1 ? 2 * sqrt((double)n) + 4 : 1e6;
    for (uint32_t i = 0; i < n; i++) {
        t.x[i] = coords == 1 ? (double)below((uint64_t)side) / 2.0 : (double)below(7000000) / 7.0;
        t.y[i] = coords == 1 ? (double)below((uint64_t)side) / 2.0 : (double)below(13000000) / 13.0;
        if (coords == 2) t.x[i] += 3e6, t.y[i] -= 5e6;
    }
    if (w == GPK_TSP_EXPLICIT) {
        t.weight = GPK_TSP_EUC_2D;
        int32_t *m = malloc((size_t)n * n * sizeof *m);
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = 0; j < n; j++) m[(size_t)i * n + j] = gpk_tsp_dist(&t, i, j);
        free(t.x);
        free(t.y);
        t.x = t.y = NULL;
        t.matrix = m;
        t.weight = GPK_TSP_EXPLICIT;
    }
    static const char *wn[] = {"euc2d", "ceil2d", "att", "geo", "explicit"};
    char label[96];
    snprintf(label, sizeof label, "or2opt batch n=%u %s coords%d", n, wn[w], coords);
    const uint32_t k = n - 1 < GPK__TSP_LS_K ? n - 1 : GPK__TSP_LS_K;
    uint32_t *nb = malloc((size_t)n * k * sizeof *nb), *tour = malloc(n * sizeof *tour),
             *pos = malloc(n * sizeof *pos);
    int32_t *nd = malloc((size_t)n * k * sizeof *nd);
    uint32_t *cities = malloc(n * sizeof *cities);
    gpk__ls_move *got = malloc(n * sizeof *got);
    gpk__tsp_ls_cuda *g = NULL;
    TU_CHECK(gpk__tsp_neighbours(&t, k, 4, NULL, nb, nd) == GPK_OK, "%s: lists", label);
    const gpk_status st = gpk__tsp_ls_cuda_open(ctx, &t, nb, nd, k, &g);
    TU_CHECK(st == GPK_OK && g, "%s: open: %s", label, gpk_last_error(ctx));
    int bad = 0, improving = 0, evaluated = 0;
    for (int form = 0; g && form < 6; form++) {
        if (form % 3 == 0) {
            for (uint32_t i = 0; i < n; i++) tour[i] = i;
            for (uint32_t i = n - 1; i > 0; i--) {
                const uint32_t r = (uint32_t)below(i + 1), x = tour[i];
                tour[i] = tour[r];
                tour[r] = x;
            }
        } else if (form % 3 == 1) {
            if (t.x) { /* strips of the x range, alternately up and down */
                const double strip = 8e6 / (sqrt((double)n) / 2 + 1);
                strip_key *sk = malloc(n * sizeof *sk);
                for (uint32_t i = 0; i < n; i++) {
                    const double st = floor((t.x[i] + 1e7) / strip);
                    sk[i].key = st * 1e8 + (fmod(st, 2) ? -t.y[i] : t.y[i]);
                    sk[i].c = i;
                }
                qsort(sk, n, sizeof *sk, strip_cmp);
                for (uint32_t i = 0; i < n; i++) tour[i] = sk[i].c;
                free(sk);
            }
        } else {
            gpk_search_problem pb = {GPK_PROBLEM_TSP, NULL, &t, NULL};
            gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
            o.nb = GPK_NB_OR_OPT;
            o.algo = GPK_SEARCH_HC_FIRST;
            o.iters = n > 20000 ? 20000 : 0;
            gpk_search_result r;
            if (gpk_search_run(cpu, &pb, &o, &r) == GPK_OK) {
                memcpy(tour, r.solution, n * sizeof *tour);
                gpk_search_result_free(&r);
            } else {
                TU_CHECK(0, "%s: cpu hc: %s", label, gpk_last_error(cpu));
            }
        }
        if (form >= 3 && n >= 8) { /* random 2-opt moves on the same tour */
            gpk__tour T = {n, tour, pos, NULL, 0, 0, 0, 0};
            for (uint32_t i = 0; i < n; i++) pos[tour[i]] = i;
            for (int m = 0; m < 20; m++) {
                const uint32_t a = (uint32_t)below(n), c = (uint32_t)below(n);
                const uint32_t b = gpk__tour_next(&T, a), d = gpk__tour_next(&T, c);
                if (c != a && c != b && d != a) gpk__tour_move2(&T, a, b, c, d);
            }
        }
        for (uint32_t i = 0; i < n; i++) pos[tour[i]] = i;
        const uint32_t count = subset >= n ? n : subset;
        for (uint32_t i = 0; i < count; i++) cities[i] = subset >= n ? i : (uint32_t)below(n);
        TU_CHECK(gpk__tsp_ls_cuda_eval(g, tour, cities, count, got) == GPK_OK, "%s form %d: eval: %s", label,
                 form, gpk_last_error(ctx));
        for (uint32_t i = 0; i < count; i++) {
            const gpk__ls_move want = gpk__tsp_ls_best_move(&t, nb, nd, k, tour, pos, cities[i]);
            if (want.d != got[i].d || want.code != got[i].code || want.evaluated != got[i].evaluated) {
                if (++bad <= 3)
                    fprintf(stderr, "  %s form %d city %u: GPU (%lld, %u, %u), host (%lld, %u, %u)\n", label,
                            form, cities[i], (long long)got[i].d, got[i].code, got[i].evaluated,
                            (long long)want.d, want.code, want.evaluated);
            }
            improving += want.d < 0;
            evaluated += want.evaluated > 0;
        }
    }
    TU_CHECK(bad == 0, "%s: %d GPU answers differ from the host's", label, bad);
    TU_CHECK(n < 100 || (improving > 0 && evaluated > 0), "%s: nothing to compare (%d improving)", label,
             improving);
    gpk__tsp_ls_cuda_close(g);
    free(nb);
    free(nd);
    free(tour);
    free(pos);
    free(cities);
    free(got);
    free(t.x);
    free(t.y);
    free(t.matrix);
}

/* Whole or2opt searches: the CUDA context (the batched descent on the GPU)
 * returns exactly what a CPU context returns with the batched descent on
 * the host, every batch evaluated on the GPU, and the tour is a valid one
 * of the reported length. by_default: no GPK_TSP_LS_BATCH on the CUDA side
 * (the size alone turns the GPU on). */
static void test_ls_run(gpk_ctx *ctx, gpk_ctx *cpu, uint32_t n, gpk_search_algo algo, int by_default)
{
    gpk_tsp t;
    memset(&t, 0, sizeof t);
    t.n = n;
    t.weight = GPK_TSP_EUC_2D;
    t.x = malloc(n * sizeof *t.x);
    t.y = malloc(n * sizeof *t.y);
    for (uint32_t i = 0; i < n; i++) t.x[i] = (double)below(1000000), t.y[i] = (double)below(1000000);
    gpk_search_problem pb = {GPK_PROBLEM_TSP, NULL, &t, NULL};
    gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
    o.nb = GPK_NB_OR_OPT;
    o.algo = algo;
    o.seed = below(1000);
    if (algo == GPK_SEARCH_ITS) {
        o.iters = 500;
        o.global_iters = 1;
    }
    gpk_search_result rg, rh;
    memset(&rg, 0, sizeof rg);
    memset(&rh, 0, sizeof rh);
    if (by_default) unsetenv("GPK_TSP_LS_BATCH");
    else setenv("GPK_TSP_LS_BATCH", "gpu", 1);
    const gpk_status sg = gpk_search_run(ctx, &pb, &o, &rg);
    setenv("GPK_TSP_LS_BATCH", "host", 1);
    const gpk_status sh = gpk_search_run(cpu, &pb, &o, &rh);
    unsetenv("GPK_TSP_LS_BATCH");
    TU_CHECK(sg == GPK_OK && sh == GPK_OK, "or2opt run n=%u algo %d: %s / %s", n, (int)algo,
             gpk_last_error(ctx), gpk_last_error(cpu));
    if (sg == GPK_OK && sh == GPK_OK) {
        int perm = 1;
        unsigned char *seen = calloc(n, 1);
        for (uint32_t i = 0; i < n && perm; i++) {
            if (rg.solution[i] >= n || seen[rg.solution[i]]) perm = 0;
            else seen[rg.solution[i]] = 1;
        }
        free(seen);
        TU_CHECK(perm && gpk_tsp_tour_length(&t, rg.solution) == rg.best,
                 "or2opt run n=%u: invalid GPU result", n);
        TU_CHECK(rg.best == rh.best && memcmp(rg.solution, rh.solution, n * sizeof *rg.solution) == 0,
                 "or2opt run n=%u algo %d: GPU %lld, host batches %lld", n, (int)algo, (long long)rg.best,
                 (long long)rh.best);
        TU_CHECK(rg.gpu_evaluated > 0 && rh.gpu_evaluated == 0, "or2opt run n=%u: gpu_evaluated %llu / %llu",
                 n, (unsigned long long)rg.gpu_evaluated, (unsigned long long)rh.gpu_evaluated);
        printf("  or2opt %s n=%u: %lld, %llu moves evaluated on the GPU\n",
               algo == GPK_SEARCH_ITS ? "its" : "hc", n, (long long)rg.best,
               (unsigned long long)rg.gpu_evaluated);
    }
    gpk_search_result_free(&rg);
    gpk_search_result_free(&rh);
    free(t.x);
    free(t.y);
}

int main(void)
{
    gpk_ctx *ctx = NULL, *cpu = NULL;
    gpk_backend be;
    char prog[] = "test_search_cuda", arg[] = "cuda";
    char *argv[] = {prog, arg, NULL};
    int rc = tu_open_backend(prog, 2, argv, &ctx, &be);
    if (rc != -1) return rc;
    if (gpk_ctx_create(&cpu, GPK_BACKEND_CPU) != GPK_OK) {
        printf("no CPU context: %s\n", gpk_last_error(NULL));
        gpk_ctx_destroy(ctx);
        return 1;
    }
    gpk_rng_seed(&rng, tu_seed());

    /* GPK_TEST_ONLY=or2opt: the neighbour-list batches alone (for
     * compute-sanitizer, which makes the whole test too slow) */
    const char *only = getenv("GPK_TEST_ONLY");
    const int all = !only || strcmp(only, "or2opt") != 0;
    if (all) {
        const uint32_t qn[] = {2, 3, 5, 12, 40, 130, 257};
        for (size_t q = 0; q < sizeof qn / sizeof *qn; q++) test_qap(ctx, qn[q], 0);
        test_qap(ctx, 12, 1);
        test_qap(ctx, 45, 1);
        const uint32_t tn[] = {3, 4, 5, 8, 11, 57, 300};
        for (size_t q = 0; q < sizeof tn / sizeof *tn; q++)
            for (int w = 0; w < 3; w++)
                for (int mat = 0; mat < 2; mat++)
                    test_tsp(ctx, tn[q], (gpk_tsp_weight)w, mat, tn[q] < 100 && w == 0);
        test_tsp(ctx, 800, GPK_TSP_EUC_2D, 0, 0);
        /* the float path's guard and the tiles: sizes around the tile width (128) */
        const uint32_t gn[] = {9, 31, 127, 128, 129, 255, 257, 390};
        for (size_t q = 0; q < sizeof gn / sizeof *gn; q++)
            for (int w = 0; w < 2; w++)
                for (int grid = 2; grid <= 3; grid++)
                    test_tsp(ctx, gn[q], (gpk_tsp_weight)w, gn[q] % 2, grid);
        test_tsp(ctx, 1100, GPK_TSP_CEIL_2D, 0, 2);
        const uint32_t pm[][2] = {{9, 9}, {31, 31}, {73, 73}, {101, 117}};
        for (size_t q = 0; q < sizeof pm / sizeof *pm; q++) test_ppp(ctx, pm[q][0], pm[q][1]);
    }

    /* or2opt: the neighbour-list batch on the GPU against the host */
    {
        const uint32_t ln[] = {5, 8, 11, 12, 64, 300, 2003};
        for (size_t q = 0; q < sizeof ln / sizeof *ln; q++)
            for (int w = 0; w < 3; w++)
                for (int coords = 0; coords < 3; coords++)
                    test_ls_batch(ctx, cpu, ln[q], (gpk_tsp_weight)w, coords, ln[q] % 2 ? ln[q] : 2 * ln[q]);
        test_ls_batch(ctx, cpu, 300, GPK_TSP_EXPLICIT, 0, 300);
        test_ls_batch(ctx, cpu, 20011, GPK_TSP_EUC_2D, 0, 20011);
        test_ls_batch(ctx, cpu, 110000, GPK_TSP_EUC_2D, 0, 8000); /* the reversal bound */
        test_ls_run(ctx, cpu, 3000, GPK_SEARCH_HC_FIRST, 0);
        test_ls_run(ctx, cpu, 3000, GPK_SEARCH_ITS, 0);
        test_ls_run(ctx, cpu, 30000, GPK_SEARCH_HC_FIRST, 1);
        test_ls_run(ctx, cpu, 120000, GPK_SEARCH_ITS, 1);
        printf("or2opt batches: %d checks\n", tu_checks);
    }

    /* GEO without a matrix is refused (the CPU scan keeps it). */
    if (all) {
        gpk_tsp t;
        memset(&t, 0, sizeof t);
        double x[4] = {10.1, 20.2, 30.3, 40.4}, y[4] = {1.5, 2.5, 3.5, 4.5};
        t.n = 4;
        t.weight = GPK_TSP_GEO;
        t.x = x;
        t.y = y;
        gpk__search_cfg c = base_cfg(GPK_PROBLEM_TSP, GPK_NB_TWO_OPT, 4);
        c.tsp = &t;
        gpk__search_cuda *g = NULL;
        TU_CHECK(gpk__search_cuda_open(ctx, &c, &g) == GPK_EUNSUPPORTED && g == NULL,
                 "geo without a matrix refused");
    }
    /* A hill-climbing session keeps no tabu list: a tabu scan is refused,
     * not run against a one-entry array. */
    if (all) {
        gpk_tsp t;
        memset(&t, 0, sizeof t);
        double x[6] = {0, 10, 20, 30, 40, 55}, y[6] = {0, 7, 3, 9, 1, 4};
        t.n = 6;
        t.weight = GPK_TSP_EUC_2D;
        t.x = x;
        t.y = y;
        gpk__search_cfg c = base_cfg(GPK_PROBLEM_TSP, GPK_NB_TWO_OPT, 6);
        c.tsp = &t;
        c.algo = GPK_SEARCH_HC_BEST;
        gpk__search_cuda *g = NULL;
        uint32_t perm[6] = {0, 1, 2, 3, 4, 5};
        uint64_t tabu[15] = {0};
        gpk__search_cuda_in in = {perm, NULL, NULL, tabu, 1, 100, 100, 1};
        gpk__search_cuda_move any, adm;
        TU_CHECK(gpk__search_cuda_open(ctx, &c, &g) == GPK_OK, "hc session: %s", gpk_last_error(ctx));
        TU_CHECK(g && gpk__search_cuda_best_move(g, &in, GPK__SEARCH_CUDA_OURS, &any, &adm) == GPK_EINVAL,
                 "hc session: a tabu scan must be refused");
        in.use_tabu = 0;
        TU_CHECK(g && gpk__search_cuda_best_move(g, &in, GPK__SEARCH_CUDA_OURS, &any, &adm) == GPK_OK &&
                     any.d != INT64_MAX,
                 "hc session: the plain scan: %s", gpk_last_error(ctx));
        gpk__search_cuda_close(g);
    }

    /* Whole searches: the CUDA context's result equals the CPU's. */
    if (all) {
        gpk_qap q;
        memset(&q, 0, sizeof q);
        q.n = 30;
        q.a = malloc(900 * sizeof *q.a);
        q.b = malloc(900 * sizeof *q.b);
        for (int t = 0; t < 900; t++) q.a[t] = (int64_t)below(10), q.b[t] = (int64_t)below(50);
        gpk_search_problem pr = {GPK_PROBLEM_QAP, &q, NULL, NULL};
        test_run(ctx, cpu, &pr, GPK_SEARCH_TABU, GPK_NB_SWAP, "run qap tabu");
        test_run(ctx, cpu, &pr, GPK_SEARCH_ITS, GPK_NB_SWAP, "run qap its");
        test_run(ctx, cpu, &pr, GPK_SEARCH_HC_BEST, GPK_NB_SWAP, "run qap hc");
        gpk_ctx *cudas[2] = {ctx, NULL}, *cpus[2] = {cpu, NULL};
        if (gpk_ctx_create(&cpus[1], GPK_BACKEND_CPU) == GPK_OK) {
            gpk_ctx_opts co = GPK_CTX_OPTS_INIT;
            co.backend = GPK_BACKEND_CUDA;
            co.device = 0; /* a second context on device 0: two host threads on one GPU */
            const int ncuda = gpk_ctx_create_ex(&cudas[1], &co) == GPK_OK ? 2 : 1;
            test_multi(cudas, ncuda, cpus, &pr, "multi qap");
            if (cudas[1]) gpk_ctx_destroy(cudas[1]);
            gpk_ctx_destroy(cpus[1]);
        }
        free(q.a);
        free(q.b);

        gpk_tsp t;
        memset(&t, 0, sizeof t);
        t.n = 60;
        t.weight = GPK_TSP_EUC_2D;
        t.x = malloc(60 * sizeof *t.x);
        t.y = malloc(60 * sizeof *t.y);
        for (int i = 0; i < 60; i++)
            t.x[i] = (double)below(100000) / 3.0, t.y[i] = (double)below(100000) / 7.0;
        gpk_search_problem pt = {GPK_PROBLEM_TSP, NULL, &t, NULL};
        test_run(ctx, cpu, &pt, GPK_SEARCH_TABU, GPK_NB_TWO_OPT, "run tsp 2opt tabu");
        test_run(ctx, cpu, &pt, GPK_SEARCH_TABU, GPK_NB_SWAP, "run tsp swap tabu");
        test_run(ctx, cpu, &pt, GPK_SEARCH_HC_BEST, GPK_NB_TWO_OPT, "run tsp 2opt hc");
        free(t.x);
        free(t.y);
        /* the tiled float path in a whole search: 300 cities on a half-integer grid */
        t.n = 300;
        t.x = malloc(300 * sizeof *t.x);
        t.y = malloc(300 * sizeof *t.y);
        for (int i = 0; i < 300; i++) t.x[i] = (double)below(120) / 2.0, t.y[i] = (double)below(120) / 2.0;
        test_run(ctx, cpu, &pt, GPK_SEARCH_TABU, GPK_NB_TWO_OPT, "run tsp 300 grid 2opt tabu");
        test_run(ctx, cpu, &pt, GPK_SEARCH_ITS, GPK_NB_TWO_OPT, "run tsp 300 grid 2opt its");
        free(t.x);
        free(t.y);

        gpk_ppp p;
        if (gpk_ppp_generate(73, 73, 7, &p) == GPK_OK) {
            gpk_search_problem pp = {GPK_PROBLEM_PPP, NULL, NULL, &p};
            test_run(ctx, cpu, &pp, GPK_SEARCH_TABU, GPK_NB_FLIP1, "run ppp flip1 tabu");
            test_run(ctx, cpu, &pp, GPK_SEARCH_TABU, GPK_NB_FLIP2, "run ppp flip2 tabu");
            gpk_ppp_free(&p);
        }
    }
    gpk_ctx_destroy(cpu);
    gpk_ctx_destroy(ctx);
    return tu_finish("test_search_cuda");
}
