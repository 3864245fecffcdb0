/* CPU backend of the search (paper Algorithm 1 with the CPU as the
 * "device"): the driver keeps the current solution and its helper
 * structures; each iteration evaluates the WHOLE neighbourhood with
 * incremental evaluations on OpenMP threads and picks the best admissible
 * move; the move is applied and the helper structures updated.
 *
 * Neighbours are numbered k = 0 .. size-1: for swap, 2-opt and 2-flip k is
 * the paper's index of the pair (i, j), i < j (gpk_swap_index_to_pair); for
 * 1-flip k is the bit. Each thread scans a contiguous range of k, converting
 * only its first index and stepping (i, j) in the same row-major order.
 *
 * Determinism: deltas are exact integers and the chosen move is the minimum
 * of (delta, k) over the admissible moves, a total order, so the choice does
 * not depend on how the range is split among threads: the same seed gives
 * the same result with any thread count.
 *
 * Helper structures ("additional solution structures" of Algorithm 1):
 *  - QAP: Taillard's n x n delta table, built in O(n^3) and kept up to
 *    date by Taillard's O(n^2) update per move (gpk_qap_delta_update, or
 *    its row-parallel twin qap_table_update for large n); a neighbour's
 *    evaluation is then a table read. With opts.qap_delta = FORMULA, and
 *    always when the GPU evaluates, there is no table: a neighbour costs
 *    the O(n) gpk_qap_swap_delta (the GPU's formula, the paper's);
 *  - PPP: y = A v, kept up to date by gpk_ppp_apply_flip (O(m) per bit);
 *  - TSP: none (2-opt and swap deltas are O(1) from the tour).
 *
 * Tabu attributes (tenure defaults: src/search/search.c):
 *  - QAP swap and TSP swap: (element, position). Moving p[r] away from r
 *    makes "p[r] at r" tabu for `tenure` iterations (QAP by default drawn
 *    per move, see search.c), likewise for s; a swap is tabu when it would
 *    put both elements back to tabu positions (Taillard's robust tabu
 *    search rule);
 *  - TSP 2-opt: the (i, j) pair: reversing the same segment again is
 *    exactly the move that undoes it;
 *  - PPP: the bit; a 2-flip is tabu when either bit is.
 * Aspiration: a tabu move is admissible when it gives a solution better
 * than the best so far. When no move is admissible (every move tabu and
 * none aspirated) the best move is taken regardless, so the search never
 * stalls.
 *
 * Iterated tabu search: `global_iters` rounds of `iters` tabu iterations;
 * each round after the first starts from the best solution so far perturbed
 * by `perturb` (max(5, n/6)) uniformly random moves of the neighbourhood,
 * with an empty tabu list.
 *
 * Multistart: `starts` ITS runs, run s seeded by splitmix64(seed + s)
 * (run 0 from opts.start when given, the others from random starts), spread
 * over the context's threads with each run evaluating its neighbourhood
 * sequentially (the paper's algorithm-level model); the best result is kept,
 * ties to the lowest run, so the result does not depend on the thread
 * count either. */
#include "problem.h"
#include "search_run.h"

#include "gpk/gen.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Below this much work per iteration (neighbours x cost of one delta) a
 * parallel region costs more than it saves. */
#define PAR_MIN_WORK 8192u
/* Neighbours evaluated between two looks at the clock inside one scan: a
 * full 2-opt scan of a large TSP takes seconds, far longer than 10% of a
 * short time limit, while 2^16 deltas take well under a millisecond. */
#define STOP_EVERY 65536u

typedef struct {
    const gpk__search_cfg *cfg;
    uint32_t n;
    uint64_t size;  /* neighbours */
    uint64_t work;  /* size x the cost of one evaluation (for PAR_MIN_WORK) */
    uint32_t *perm; /* QAP p, TSP tour */
    int8_t *v;      /* PPP v (+-1) */
    int32_t *y;     /* PPP y = A v */
    int64_t *dt;    /* QAP delta table (when `table`) */
    int table;      /* QAP: Taillard's table kept (else the O(n) formula per neighbour) */
    uint64_t *tabu; /* iteration until which an attribute is tabu (0: never) */
    size_t tabu_len;
    void *block; /* perm, v, y, dt and tabu: one allocation (state_init) */
    int64_t cost;
    gpk_rng rng;
    uint64_t iteration, evaluated; /* totals over the run (ITS: all rounds) */
    uint64_t gpu_evaluated;        /* of evaluated, on the GPU */
    int stopped;                   /* the deadline or the cancel flag ended the run */
    /* The thread governor (gov_threads): how many threads the iterations
     * use now, and the trial that chooses it. */
    int gov_max, gov_use, gov_step;
    uint64_t gov_left, gov_period;
    double gov_t0, gov_time[2];
    /* CUDA neighbourhood evaluation (src/search/search_cuda.cu): set only
     * for a CUDA context's single-trajectory runs; NULL: the CPU scan. */
    gpk__search_cuda *gpu;
    const gpk__search_backend *gpu_scans; /* gpu's entry points */
    gpk__search_cuda_mode gpu_mode;
} state;

typedef struct {
    int64_t d;
    uint64_t k;
    uint32_t i, j;
} move;

static int move_less(const move *a, const move *b) { return a->d < b->d || (a->d == b->d && a->k < b->k); }

/* Looks at the deadline and the cancel flag; once either says stop, the
 * run stays stopped. */
static int stop_now(state *s)
{
    if (!s->stopped && gpk__search_should_stop(s->cfg)) s->stopped = 1;
    return s->stopped;
}

/* Uniform in [0, bound), bound >= 1 (rejection, no modulo bias). */
static uint64_t rng_below(gpk_rng *r, uint64_t bound)
{
    uint64_t lim = UINT64_MAX - UINT64_MAX % bound, x;
    do x = gpk_rng_next(r);
    while (x >= lim);
    return x % bound;
}

static int state_init(state *s, const gpk__search_cfg *cfg, uint64_t seed)
{
    memset(s, 0, sizeof *s);
    s->cfg = cfg;
    s->n = cfg->n;
    const size_t n = cfg->n;
    s->size = cfg->nb == GPK_NB_FLIP1 ? n : (uint64_t)n * (n - 1) / 2;
    gpk_rng_seed(&s->rng, seed);
    const int ppp = cfg->kind == GPK_PROBLEM_PPP;
    if (ppp) {
        s->tabu_len = n;
        s->work = s->size * ((uint64_t)cfg->ppp->m + n);
    } else {
        s->tabu_len = gpk__tabu_by_city(cfg) ? n : cfg->nb == GPK_NB_TWO_OPT ? s->size : n * n;
        s->work = s->size;
        if (cfg->kind == GPK_PROBLEM_QAP) {
            s->table = cfg->qap_delta == GPK_QAP_DELTA_TABLE;
            if (!s->table) s->work = s->size * n;
        } else {
            s->work = s->size * 4;
        }
    }
    /* Hill climbing never reads the tabu list: a 2-opt list of a large TSP
     * (8 bytes per move, 29.5 GB at 85 900 cities) would be all it spends. */
    if (cfg->algo == GPK_SEARCH_HC_BEST || cfg->algo == GPK_SEARCH_HC_FIRST) s->tabu_len = 0;
    /* Zeroed: the tabu list, 0 "never"; calloc leaves the pages of a large
     * one untouched until a move is made tabu. */
    gpk__part p[] = {GPK__PART(s->v, ppp ? n : 0), GPK__PART(s->y, ppp ? cfg->ppp->m : 0),
                     GPK__PART(s->perm, ppp ? 0 : n), GPK__PART(s->dt, s->table ? n * n : 0),
                     GPK__PART(s->tabu, s->tabu_len)};
    s->block = gpk__alloc_parts(p, sizeof p / sizeof *p, 1);
    if (!s->block) return -1;
    s->v = p[0].at, s->y = p[1].at, s->perm = p[2].at, s->dt = p[3].at, s->tabu = p[4].at;
    return 0;
}

/* Sets the solution (result format: permutation, or 0/1 bits) and
 * recomputes the cost and helper structures from scratch. */
static void state_load(state *s, const uint32_t *sol, int threads)
{
    const gpk__search_cfg *c = s->cfg;
    const uint32_t n = s->n;
    if (c->kind == GPK_PROBLEM_PPP) {
        for (uint32_t i = 0; i < n; i++) s->v[i] = sol[i] ? 1 : -1;
        gpk_ppp_product(c->ppp, s->v, s->y);
        s->cost = gpk_ppp_fitness(c->ppp, s->y);
        return;
    }
    memcpy(s->perm, sol, n * sizeof *sol);
    if (c->kind == GPK_PROBLEM_TSP) {
        s->cost = gpk_tsp_tour_length(c->tsp, s->perm);
        return;
    }
    s->cost = gpk_qap_cost(c->qap, s->perm);
    if (!s->table) return;
    /* O(n^3) once per load: rows are independent. */
    const int64_t nn = n;
    int64_t *dt = s->dt;
    const uint32_t *p = s->perm;
    const gpk_qap *q = c->qap;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 4) if (threads > 1 && n >= 64)
    for (int64_t u = 0; u < nn; u++)
        for (int64_t v = u + 1; v < nn; v++)
            dt[u * nn + v] = gpk_qap_swap_delta(q, p, (uint32_t)u, (uint32_t)v);
}

static void state_save(const state *s, uint32_t *out)
{
    if (s->v)
        for (uint32_t i = 0; i < s->n; i++) out[i] = s->v[i] > 0;
    else memcpy(out, s->perm, s->n * sizeof *out);
}

static void random_solution(state *s, uint32_t *out)
{
    const uint32_t n = s->n;
    if (s->cfg->ops->binary) {
        for (uint32_t i = 0; i < n; i++) out[i] = (uint32_t)(gpk_rng_next(&s->rng) >> 63);
        return;
    }
    for (uint32_t i = 0; i < n; i++) out[i] = i;
    for (uint32_t i = n - 1; i > 0; i--) { /* Fisher-Yates */
        uint32_t r = (uint32_t)rng_below(&s->rng, (uint64_t)i + 1), t = out[i];
        out[i] = out[r];
        out[r] = t;
    }
}

static int64_t nb_delta(const state *s, uint32_t i, uint32_t j)
{
    const gpk__search_cfg *c = s->cfg;
    switch (c->nb) {
    case GPK_NB_SWAP:
        if (c->kind != GPK_PROBLEM_QAP) return gpk_tsp_swap_delta(c->tsp, s->perm, i, j);
        return s->table ? s->dt[(size_t)i * s->n + j] : gpk_qap_swap_delta(c->qap, s->perm, i, j);
    case GPK_NB_TWO_OPT: return gpk_tsp_two_opt_delta(c->tsp, s->perm, i, j);
    case GPK_NB_FLIP1: return gpk_ppp_flip_delta(c->ppp, s->y, s->v, i);
    default: return gpk_ppp_flip2_delta(c->ppp, s->y, s->v, i, j);
    }
}

static int is_tabu(const state *s, uint64_t k, uint32_t i, uint32_t j)
{
    const uint64_t it = s->iteration;
    switch (s->cfg->nb) {
    case GPK_NB_SWAP:
        if (gpk__tabu_by_city(s->cfg)) return s->tabu[s->perm[i]] > it && s->tabu[s->perm[j]] > it;
        return s->tabu[(size_t)i * s->n + s->perm[j]] > it && s->tabu[(size_t)j * s->n + s->perm[i]] > it;
    case GPK_NB_TWO_OPT:
        if (gpk__tabu_by_city(s->cfg))
            return s->tabu[s->perm[i]] > it && s->tabu[s->perm[j + 1 == s->n ? 0 : j + 1]] > it;
        return s->tabu[k] > it;
    case GPK_NB_FLIP1: return s->tabu[i] > it;
    default: return s->tabu[i] > it || s->tabu[j] > it;
    }
}

/* Records the tabu attributes of move (k, i, j); before applying it. */
static void make_tabu(state *s, uint64_t k, uint32_t i, uint32_t j, uint32_t tenure)
{
    const uint64_t until = s->iteration + 1 + tenure;
    switch (s->cfg->nb) {
    case GPK_NB_SWAP:
        if (gpk__tabu_by_city(s->cfg)) {
            s->tabu[s->perm[i]] = s->tabu[s->perm[j]] = until;
            break;
        }
        s->tabu[(size_t)i * s->n + s->perm[i]] = until;
        s->tabu[(size_t)j * s->n + s->perm[j]] = until;
        break;
    case GPK_NB_TWO_OPT:
        if (gpk__tabu_by_city(s->cfg))
            s->tabu[s->perm[i]] = s->tabu[s->perm[j + 1 == s->n ? 0 : j + 1]] = until;
        else s->tabu[k] = until;
        break;
    case GPK_NB_FLIP1: s->tabu[i] = until; break;
    default: s->tabu[i] = s->tabu[j] = until; break;
    }
    /* CUDA: mirror the writes into the device's tabu list. */
    if (s->gpu) {
        uint64_t at[2];
        int cnt = 1;
        switch (s->cfg->nb) {
        case GPK_NB_SWAP:
            at[0] = gpk__tabu_by_city(s->cfg) ? s->perm[i] : (uint64_t)i * s->n + s->perm[i];
            at[1] = gpk__tabu_by_city(s->cfg) ? s->perm[j] : (uint64_t)j * s->n + s->perm[j];
            cnt = 2;
            break;
        case GPK_NB_TWO_OPT:
            if (gpk__tabu_by_city(s->cfg)) {
                at[0] = s->perm[i];
                at[1] = s->perm[j + 1 == s->n ? 0 : j + 1];
                cnt = 2;
            } else {
                at[0] = k;
            }
            break;
        case GPK_NB_FLIP1: at[0] = i; break;
        default: at[0] = i, at[1] = j, cnt = 2; break;
        }
        for (int q = 0; q < cnt; q++)
            if (s->gpu_scans->tabu_set(s->gpu, at[q], until) != GPK_OK) {
                s->gpu_scans->close(s->gpu); /* the host state is authoritative: go on on the CPU */
                s->gpu = NULL;
                break;
            }
    }
}

/* Taillard's table update after swapping positions r, s (already applied
 * to perm). Once the table is kept, a QAP neighbour's evaluation is a read
 * and this O(n^2) update is the iteration's real work, so for large n it
 * runs in parallel over the table's rows, each row by the same function
 * as gpk_qap_delta_update (gpk__qap_delta_update_row, src/search/qap.c),
 * which serves small n and one thread. Both give identical integers, so
 * the result does not depend on the path (the tests compare 1 and 3
 * threads at n = 150). */
static void qap_table_update(state *st, uint32_t r, uint32_t s, int threads)
{
    const gpk_qap *q = st->cfg->qap;
    const int64_t n = st->n;
    if (threads <= 1 || n < 64) {
        gpk_qap_delta_update(q, st->perm, st->dt, r, s);
        return;
    }
#pragma omp parallel for num_threads(threads) schedule(dynamic, 8)
    for (int64_t u = 0; u < n - 1; u++) gpk__qap_delta_update_row(q, st->perm, st->dt, r, s, (size_t)u);
}

static void apply_move(state *s, uint32_t i, uint32_t j, int64_t d, int threads)
{
    const gpk__search_cfg *c = s->cfg;
    switch (c->nb) {
    case GPK_NB_SWAP: {
        uint32_t t = s->perm[i];
        s->perm[i] = s->perm[j];
        s->perm[j] = t;
        if (c->kind == GPK_PROBLEM_QAP && s->table) qap_table_update(s, i, j, threads);
        break;
    }
    case GPK_NB_TWO_OPT:
        for (uint32_t a = i + 1, b = j; a < b; a++, b--) {
            uint32_t t = s->perm[a];
            s->perm[a] = s->perm[b];
            s->perm[b] = t;
        }
        break;
    case GPK_NB_FLIP1: gpk_ppp_apply_flip(c->ppp, s->y, s->v, i); break;
    default:
        gpk_ppp_apply_flip(c->ppp, s->y, s->v, i);
        gpk_ppp_apply_flip(c->ppp, s->y, s->v, j);
        break;
    }
    s->cost += d;
}

static void index_pair(const state *s, uint64_t k, uint32_t *i, uint32_t *j)
{
    if (s->cfg->nb == GPK_NB_FLIP1) {
        *i = (uint32_t)k;
        *j = 0;
    } else {
        gpk_swap_index_to_pair(s->n, k, i, j);
    }
}

/* The next pair in index order (k + 1). */
static void next_pair(const state *s, uint32_t *i, uint32_t *j)
{
    if (s->cfg->nb == GPK_NB_FLIP1) {
        ++*i;
    } else if (++*j == s->n) {
        ++*i;
        *j = *i + 1;
    }
}

/* Evaluates the whole neighbourhood (Algorithm 1, lines 12-15) and returns
 * the best move in *any, and in *adm the best admissible one under the tabu
 * rule with aspiration (use_tabu), d = INT64_MAX when none. Each thread
 * keeps its own minima; they are merged by the same total order. */
static void scan(state *s, int threads, int use_tabu, int64_t best_cost, move *any, move *adm)
{
    const move none = {INT64_MAX, UINT64_MAX, 0, 0};
    *any = *adm = none;
    /* CUDA: the same two minima of (delta, k), evaluated on the GPU. On a
     * CUDA failure the session is dropped and the CPU scan takes over (the
     * error stays recorded on the context). */
    if (s->gpu) {
        const gpk__search_cuda_in in = {s->perm,      s->v,    s->y,      s->tabu,
                                        s->iteration, s->cost, best_cost, use_tabu};
        gpk__search_cuda_move ga, gb;
        if (s->gpu_scans->best_move(s->gpu, &in, s->gpu_mode, &ga, &gb) == GPK_OK) {
            s->gpu_evaluated += s->size;
            any->d = ga.d;
            any->k = ga.k;
            if (ga.d != INT64_MAX) index_pair(s, ga.k, &any->i, &any->j);
            adm->d = gb.d;
            adm->k = gb.k;
            if (gb.d != INT64_MAX) index_pair(s, gb.k, &adm->i, &adm->j);
            return;
        }
        s->gpu_scans->close(s->gpu);
        s->gpu = NULL;
    }
    const uint64_t size = s->size;
    if (s->work < PAR_MIN_WORK) threads = 1;
    if ((uint64_t)threads > size) threads = (int)size;
    const int timed = s->cfg->deadline > 0 || s->cfg->cancel;
    volatile int halt = 0;
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
        const uint64_t nt = (uint64_t)omp_get_num_threads(), t = (uint64_t)omp_get_thread_num();
        const uint64_t lo = size * t / nt, hi = size * (t + 1) / nt;
        move a = none, b = none;
        uint32_t i = 0, j = 0;
        if (lo < hi) index_pair(s, lo, &i, &j);
        for (uint64_t k = lo; k < hi; k++, next_pair(s, &i, &j)) {
            if (timed && (k - lo) % STOP_EVERY == STOP_EVERY - 1) {
                if (halt) break;
                if (gpk__search_should_stop(s->cfg)) {
                    halt = 1;
                    break;
                }
            }
            const move m = {nb_delta(s, i, j), k, i, j};
            if (move_less(&m, &a)) a = m;
            if (move_less(&m, &b) && (!use_tabu || s->cost + m.d < best_cost || !is_tabu(s, k, i, j))) b = m;
        }
#pragma omp critical(gpk_search_scan)
        {
            if (move_less(&a, any)) *any = a;
            if (move_less(&b, adm)) *adm = b;
        }
    }
    /* A scan cut short chose from part of the neighbourhood: no move. */
    if (halt) {
        s->stopped = 1;
        *any = *adm = none;
    }
}

typedef struct {
    const gpk__search_cfg *cfg;
    int report; /* this thread calls the progress callback */
    double t0;
    int64_t best;      /* for the report */
    gpk__tally *tally; /* multistart: every run's counts (NULL: one run) */
    uint32_t run;
} reporter;

static void report(reporter *rp, const state *s, int64_t best)
{
    if (!rp->cfg->progress) return;
    gpk__tally_put(rp->tally, rp->run, s->iteration, s->evaluated, best);
    if (!rp->report || s->iteration % rp->cfg->progress_every) return;
    gpk_search_progress p = {s->iteration, s->cost, best, s->evaluated, (omp_get_wtime() - rp->t0) * 1e3};
    gpk__tally_sum(rp->tally, &p);
    rp->cfg->progress(&p, rp->cfg->user);
}

/* Oversubscribed cores: an iteration is one or two short
 * parallel regions, and when other processes hold the cores a team member
 * that is descheduled holds up the region's barrier for a time slice, so
 * an iteration with 2 threads took 40 times as long as with 1 on a loaded
 * 2-core machine. The iterations therefore time themselves: every
 * GOV_PERIOD iterations a trial of GOV_TRIAL iterations alternates all the
 * threads and one, and the faster count serves until the next trial; the
 * period doubles (to GOV_PERIOD_MAX) while the choice stays, since a trial
 * costs its slow iterations. The result does not depend on the count
 * (scans merge by a total order).
 * gov_threads gives the count for the coming iteration, gov_done ends it. */
#define GOV_PERIOD 256u
#define GOV_PERIOD_MAX 8192u
#define GOV_TRIAL 4
static int gov_threads(state *s, int threads)
{
    if (threads <= 1) return 1;
    if (s->gov_max != threads) { /* first use: a trial first */
        s->gov_max = threads;
        s->gov_use = threads;
        s->gov_step = 0;
        s->gov_left = 0;
        s->gov_period = GOV_PERIOD;
        s->gov_time[0] = s->gov_time[1] = 0.0;
    }
    s->gov_t0 = omp_get_wtime();
    if (s->gov_left > 0) return s->gov_use;
    return s->gov_step % 2 ? 1 : threads; /* in the trial: all, one, all, one */
}

static void gov_done(state *s)
{
    if (s->gov_max <= 1) return;
    if (s->gov_left > 0) {
        s->gov_left--;
        return;
    }
    s->gov_time[s->gov_step % 2] += omp_get_wtime() - s->gov_t0;
    if (++s->gov_step < GOV_TRIAL) return;
    const int use = s->gov_time[0] <= s->gov_time[1] ? s->gov_max : 1;
    if (use == s->gov_use && s->gov_period < GOV_PERIOD_MAX) s->gov_period *= 2;
    else if (use != s->gov_use) s->gov_period = GOV_PERIOD;
    s->gov_use = use;
    s->gov_step = 0;
    s->gov_time[0] = s->gov_time[1] = 0.0;
    s->gov_left = s->gov_period;
}

/* Best-improvement hill climbing; returns 1 at a local optimum. */
static int hill_climb_best(state *s, int threads, reporter *rp)
{
    const uint64_t limit = s->cfg->iters;
    for (;;) {
        if (limit && s->iteration >= limit) return 0;
        if (stop_now(s)) return 0;
        move any, adm;
        const int use = gov_threads(s, threads);
        scan(s, use, 0, 0, &any, &adm);
        s->evaluated += s->size;
        if (s->stopped) return 0;
        if (any.d >= 0) return 1;
        apply_move(s, any.i, any.j, any.d, use);
        gov_done(s);
        s->iteration++;
        report(rp, s, s->cost);
    }
}

/* First-improvement hill climbing: each step scans from a random index,
 * wrapping around, and takes the first improving neighbour; sequential by
 * nature (the first in scan order). */
static int hill_climb_first(state *s, reporter *rp)
{
    const uint64_t limit = s->cfg->iters;
    const int timed = s->cfg->deadline > 0 || s->cfg->cancel;
    for (;;) {
        if (limit && s->iteration >= limit) return 0;
        if (stop_now(s)) return 0;
        uint64_t k = rng_below(&s->rng, s->size), c;
        uint32_t i, j;
        index_pair(s, k, &i, &j);
        int64_t d = 0;
        for (c = 0; c < s->size; c++) {
            if (timed && c % STOP_EVERY == STOP_EVERY - 1 && stop_now(s)) return 0;
            d = nb_delta(s, i, j);
            s->evaluated++;
            if (d < 0) break;
            if (++k == s->size) {
                k = 0;
                index_pair(s, 0, &i, &j);
            } else {
                next_pair(s, &i, &j);
            }
        }
        if (c == s->size) return 1;
        apply_move(s, i, j, d, 1);
        s->iteration++;
        report(rp, s, s->cost);
    }
}

/* `iters` tabu iterations from the current solution; *best / best_sol hold
 * the best solution so far and are updated. */
static void tabu_search(state *s, int threads, uint64_t iters, int64_t *best, uint32_t *best_sol,
                        reporter *rp)
{
    const uint32_t tenure = s->cfg->tenure;
    memset(s->tabu, 0, s->tabu_len * sizeof *s->tabu);
    if (s->gpu && s->gpu_scans->tabu_upload(s->gpu, NULL) != GPK_OK) {
        s->gpu_scans->close(s->gpu);
        s->gpu = NULL;
    }
    /* Tabu "until" values are absolute iterations; clearing the list makes
     * every attribute free again for the new round. */
    for (uint64_t t = 0; t < iters; t++) {
        if (stop_now(s)) return;
        move any, adm;
        const int use = gov_threads(s, threads);
        scan(s, use, 1, *best, &any, &adm);
        s->evaluated += s->size;
        if (s->stopped) return;
        const move m = adm.d != INT64_MAX ? adm : any;
        const uint32_t sp = s->cfg->tenure_spread;
        uint32_t ten = sp ? tenure - sp + (uint32_t)rng_below(&s->rng, 2 * (uint64_t)sp + 1) : tenure;
        if (s->cfg
                ->tenure_cube) { /* u = r / 1024 uniform in [0, 1): the tenure plus tenure_cube u^3, in integers */
            const uint64_t r = rng_below(&s->rng, 1024);
            ten += (uint32_t)((r * r * r * s->cfg->tenure_cube) >> 30);
        }
        make_tabu(s, m.k, m.i, m.j, ten);
        apply_move(s, m.i, m.j, m.d, use);
        gov_done(s);
        s->iteration++;
        if (s->cost < *best) {
            *best = s->cost;
            state_save(s, best_sol);
        }
        report(rp, s, *best);
        if (*best == 0 && s->cfg->ops->zero_solves) return; /* solved: the cost is >= 0 */
    }
}

static void perturb(state *s, uint32_t moves, int threads)
{
    for (uint32_t t = 0; t < moves; t++) {
        uint32_t i, j;
        index_pair(s, rng_below(&s->rng, s->size), &i, &j);
        const int64_t d = nb_delta(s, i, j);
        apply_move(s, i, j, d, threads);
    }
}

/* Iterated tabu search from the loaded solution. */
static void iterated_tabu(state *s, int threads, int64_t *best, uint32_t *best_sol, reporter *rp)
{
    const gpk__search_cfg *c = s->cfg;
    for (uint32_t g = 0; g < c->global_iters; g++) {
        if (g > 0) {
            /* As many threads as the governor last chose (its trials are
             * in the tabu iterations). */
            const int use = s->gov_max == threads ? s->gov_use : threads;
            state_load(s, best_sol, use);
            perturb(s, c->perturb, use);
        }
        tabu_search(s, threads, c->iters, best, best_sol, rp);
        if (s->stopped || (*best == 0 && c->ops->zero_solves)) return;
    }
}

typedef struct {
    int64_t best;
    uint32_t *sol;
    uint64_t iterations, evaluated;
    int ok, stopped;
} run_out;

/* One multistart run (sequential evaluation). */
static void multistart_run(const gpk__search_cfg *c, uint32_t run, reporter *rp, run_out *o)
{
    state s;
    o->ok = 0;
    if (state_init(&s, c, gpk__splitmix64(c->seed + run)) != 0) {
        free(s.block);
        return;
    }
    if (run == 0 && c->start) memcpy(o->sol, c->start, c->n * sizeof *o->sol);
    else random_solution(&s, o->sol);
    state_load(&s, o->sol, 1);
    o->best = s.cost;
    iterated_tabu(&s, 1, &o->best, o->sol, rp);
    o->iterations = s.iteration;
    o->evaluated = s.evaluated;
    o->stopped = s.stopped;
    o->ok = 1;
    free(s.block);
}

static gpk_status multistart(gpk_ctx *ctx, const gpk__search_cfg *c, reporter *rp, gpk_search_result *r)
{
    const uint32_t starts = c->starts, n = c->n;
    run_out *o = calloc(starts, sizeof *o);
    uint32_t *sols = malloc((size_t)starts * n * sizeof *sols);
    if (!o || !sols) {
        free(o);
        free(sols);
        return gpk__fail(ctx, GPK_ENOMEM, "gpk_search_run: out of memory for %u starts", starts);
    }
    for (uint32_t k = 0; k < starts; k++) o[k].sol = sols + (size_t)k * n;
    int threads = c->threads < (int)starts ? c->threads : (int)starts;
    const int64_t nstarts = starts;
    gpk__tally tally;
    memset(&tally, 0, sizeof tally);
    const int tallied = c->progress && gpk__tally_init(&tally, starts) == 0;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1)
    for (int64_t k = 0; k < nstarts; k++) {
        /* Only the calling thread (the team's master) reports, with the
         * totals of every run. */
        reporter mine = *rp;
        mine.report = omp_get_thread_num() == 0;
        mine.tally = tallied ? &tally : NULL;
        mine.run = (uint32_t)k;
        multistart_run(c, (uint32_t)k, &mine, &o[k]);
    }
    gpk__tally_free(&tally);
    gpk_status st = GPK_OK;
    uint32_t best = 0;
    for (uint32_t k = 0; k < starts; k++) {
        if (!o[k].ok) {
            st = gpk__fail(ctx, GPK_ENOMEM, "gpk_search_run: out of memory in multistart run %u", k);
            break;
        }
        r->iterations += o[k].iterations;
        r->evaluated += o[k].evaluated;
        if (o[k].stopped) r->stopped = GPK_SEARCH_TIME_LIMIT; /* the reason is set by the caller */
        if (o[k].best < o[best].best) best = k;               /* ties: the lowest run */
    }
    if (st == GPK_OK) {
        r->best = o[best].best;
        memcpy(r->solution, o[best].sol, n * sizeof *r->solution);
    }
    free(o);
    free(sols);
    return st;
}

/* The full evaluation of a result solution (the final check). */
static int64_t full_cost(const gpk__search_cfg *c, const uint32_t *sol, int *ok)
{
    const gpk_search_problem pb = {c->kind, c->qap, c->tsp, c->ppp};
    int64_t f = 0;
    *ok = c->ops->cost(&pb, sol, &f) == GPK_OK;
    return f;
}

gpk_status gpk__search_cpu(gpk_ctx *ctx, const gpk__search_cfg *c, gpk_search_result *r)
{
    reporter rp = {c, 1, omp_get_wtime(), 0, NULL, 0};
    memset(r, 0, sizeof *r);
    r->n = c->n;
    r->solution = malloc((size_t)c->n * sizeof *r->solution);
    if (!r->solution) return gpk__fail(ctx, GPK_ENOMEM, "gpk_search_run: out of memory (n = %u)", c->n);
    gpk_status st = GPK_OK;
    if (c->nb == GPK_NB_OR_OPT) {
        st = gpk__tsp_ls(ctx, c, r); /* on the CPU for every backend */
    } else if (c->algo == GPK_SEARCH_MULTISTART) {
        st = multistart(ctx, c, &rp, r);
    } else {
        state s;
        if (state_init(&s, c, c->seed) != 0) {
            free(s.block);
            gpk_search_result_free(r);
            return gpk__fail(ctx, GPK_ENOMEM, "gpk_search_run: out of memory (n = %u)", c->n);
        }
        if (c->start) memcpy(r->solution, c->start, c->n * sizeof *r->solution);
        else random_solution(&s, r->solution);
        /* CUDA context: the best-move scans on the GPU (opts.eval: PAPER, every
         * delta to the host; OURS, one move back). The GPU evaluates QAP with
         * the O(n) formula, so the host keeps no Taillard table (its O(n^2)
         * update per move would cost more than the GPU's scan). When the
         * device cannot take this configuration the CPU scan runs (the
         * message stays on the context; result.gpu_evaluated tells). */
        s.gpu_scans = gpk__search_backend_of(ctx->backend);
        if (s.gpu_scans &&
            (c->algo == GPK_SEARCH_HC_BEST || c->algo == GPK_SEARCH_TABU || c->algo == GPK_SEARCH_ITS)) {
            s.gpu_mode = c->eval == GPK_SEARCH_EVAL_PAPER ? GPK__SEARCH_CUDA_PAPER : GPK__SEARCH_CUDA_OURS;
            if (s.gpu_scans->open(ctx, c, &s.gpu) != GPK_OK) s.gpu = NULL;
            if (s.gpu && s.table) {
                s.table = 0;
                s.work = s.size * s.n;
            }
        }
        state_load(&s, r->solution, c->threads);
        int64_t best = s.cost;
        switch (c->algo) {
        case GPK_SEARCH_HC_BEST: r->local_optimum = hill_climb_best(&s, c->threads, &rp); break;
        case GPK_SEARCH_HC_FIRST: r->local_optimum = hill_climb_first(&s, &rp); break;
        case GPK_SEARCH_TABU: tabu_search(&s, c->threads, c->iters, &best, r->solution, &rp); break;
        default: iterated_tabu(&s, c->threads, &best, r->solution, &rp); break;
        }
        if (c->algo == GPK_SEARCH_HC_BEST || c->algo == GPK_SEARCH_HC_FIRST) {
            best = s.cost; /* hill climbing only improves: the current solution is the best */
            state_save(&s, r->solution);
        }
        r->best = best;
        r->iterations = s.iteration;
        r->evaluated = s.evaluated;
        r->gpu_evaluated = s.gpu_evaluated;
        if (s.stopped) r->stopped = GPK_SEARCH_TIME_LIMIT;
        if (s.gpu) s.gpu_scans->close(s.gpu);
        free(s.block);
    }
    r->ms = (omp_get_wtime() - rp.t0) * 1e3;
    if (r->stopped && c->cancel && *c->cancel) r->stopped = GPK_SEARCH_CANCELLED;
    if (st != GPK_OK) {
        gpk_search_result_free(r);
        return st;
    }
    /* The incremental bookkeeping must agree with a full evaluation. */
    int ok;
    const int64_t full = full_cost(c, r->solution, &ok);
    if (!ok) {
        gpk_search_result_free(r);
        return gpk__fail(ctx, GPK_ENOMEM, "gpk_search_run: out of memory for the final evaluation");
    }
    if (full != r->best) {
        const int64_t b = r->best;
        gpk_search_result_free(r);
        return gpk__fail(
            ctx, GPK_EINVAL,
            "gpk_search_run: internal error: incremental best %lld differs from the full evaluation "
            "%lld of the returned solution",
            (long long)b, (long long)full);
    }
    return GPK_OK;
}
