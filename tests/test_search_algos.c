/* Tests of the search algorithms (include/gpk/search.h, "the search").
 * Usage: test_search_algos cpu|cuda|opencl DATA_DIR (DATA_DIR holding
 * qaplib/ and tsplib/; without it the instance-file parts are skipped).
 * Checks are independent of the library's incremental evaluations where it
 * matters: local optima and reported costs are verified by full
 * evaluation of every neighbour. */
#include "gpk/search.h"
#include "gpk/gen.h"
#include "testutil.h"
#include "search_testutil.h"

#include <string.h>
#include <sys/stat.h>

static gpk_ctx *ctx;
static gpk_rng rng;
static const char *data_dir;
static int ctx_threads;

/* ------------------------------------------------------------ full evaluation */

static uint32_t sol_len(const gpk_search_problem *pb)
{
    return pb->kind == GPK_PROBLEM_QAP ? pb->qap->n : pb->kind == GPK_PROBLEM_TSP ? pb->tsp->n : pb->ppp->n;
}

/* Brute force: the number of neighbours of sol (under nb) strictly better
 * than `cost`, every neighbour built and evaluated from scratch. */
static uint64_t improving_neighbours(const gpk_search_problem *pb, gpk_neighbourhood nb, const uint32_t *sol,
                                     int64_t cost)
{
    const uint32_t n = sol_len(pb);
    uint32_t *w = malloc(n * sizeof *w);
    uint64_t better = 0;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = (nb == GPK_NB_FLIP1 ? i : i + 1); j < (nb == GPK_NB_FLIP1 ? i + 1 : n); j++) {
            memcpy(w, sol, n * sizeof *w);
            if (nb == GPK_NB_SWAP) {
                uint32_t t = w[i];
                w[i] = w[j];
                w[j] = t;
            } else if (nb == GPK_NB_TWO_OPT) {
                for (uint32_t a = i + 1, b = j; a < b; a++, b--) {
                    uint32_t t = w[a];
                    w[a] = w[b];
                    w[b] = t;
                }
            } else {
                w[i] ^= 1u;
                if (nb == GPK_NB_FLIP2) w[j] ^= 1u;
            }
            if (full_cost(pb, w) < cost) better++;
        }
    free(w);
    return better;
}

static int is_solution(const gpk_search_problem *pb, const gpk_search_result *r)
{
    const uint32_t n = sol_len(pb);
    if (r->n != n || !r->solution) return 0;
    if (pb->kind == GPK_PROBLEM_PPP) {
        for (uint32_t i = 0; i < n; i++)
            if (r->solution[i] > 1) return 0;
        return 1;
    }
    unsigned char *seen = calloc(n, 1);
    int ok = 1;
    for (uint32_t i = 0; i < n && ok; i++) {
        if (r->solution[i] >= n || seen[r->solution[i]]) ok = 0;
        else seen[r->solution[i]] = 1;
    }
    free(seen);
    return ok;
}

static gpk_status run(const gpk_search_problem *pb, gpk_search_opts o, int threads, gpk_search_result *r)
{
    gpk_ctx_set_threads(ctx, threads);
    gpk_status st = gpk_search_run(ctx, pb, &o, r);
    gpk_ctx_set_threads(ctx, ctx_threads);
    return st;
}

static int same_result(const gpk_search_result *a, const gpk_search_result *b)
{
    return a->best == b->best && a->n == b->n && a->iterations == b->iterations &&
        memcmp(a->solution, b->solution, a->n * sizeof *a->solution) == 0;
}

/* ------------------------------------------------------------ instances */

static void random_qap(uint32_t n, gpk_qap *q)
{
    size_t cap = 64 + (size_t)2 * n * n * 8;
    char *t = malloc(cap), *p = t;
    p += sprintf(p, "%u\n", n);
    for (uint32_t m = 0; m < 2; m++)
        for (uint32_t i = 0; i < n * n; i++) p += sprintf(p, "%d ", (int)(gpk_rng_next(&rng) % 10));
    gpk_status st = gpk_qap_parse(t, (size_t)(p - t), "random", q);
    TU_CHECK(st == GPK_OK, "random QAP: %s", gpk_last_error(NULL));
    free(t);
}

static void random_tsp(uint32_t n, gpk_tsp *tsp)
{
    size_t cap = 256 + (size_t)n * 40;
    char *t = malloc(cap), *p = t;
    p += sprintf(p, "NAME: random\nTYPE: TSP\nDIMENSION: %u\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n",
                 n);
    for (uint32_t i = 0; i < n; i++)
        p += sprintf(p, "%u %u %u\n", i + 1, (unsigned)(gpk_rng_next(&rng) % 1000),
                     (unsigned)(gpk_rng_next(&rng) % 1000));
    p += sprintf(p, "EOF\n");
    gpk_status st = gpk_tsp_parse(t, (size_t)(p - t), "random", tsp);
    TU_CHECK(st == GPK_OK, "random TSP: %s", gpk_last_error(NULL));
    free(t);
}

static int load_qap(const char *name, gpk_qap *q)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/qaplib/%s.dat", data_dir, name);
    struct stat st;
    if (stat(path, &st) != 0) {
        printf("  %s not present: skipped\n", path);
        return 0;
    }
    gpk_status s = gpk_qap_load(path, q);
    TU_CHECK(s == GPK_OK, "load %s: %s", path, gpk_last_error(NULL));
    return s == GPK_OK;
}

static int load_tsp(const char *name, gpk_tsp *t)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tsplib/%s.tsp", data_dir, name);
    struct stat st;
    if (stat(path, &st) != 0) {
        printf("  %s not present: skipped\n", path);
        return 0;
    }
    gpk_status s = gpk_tsp_load(path, t);
    TU_CHECK(s == GPK_OK, "load %s: %s", path, gpk_last_error(NULL));
    return s == GPK_OK;
}

/* best-known.csv: instance,best_known,kind; -1 when absent. */
static int64_t best_known(const char *name)
{
    char path[1024], line[256];
    snprintf(path, sizeof path, "%s/qaplib/best-known.csv", data_dir);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int64_t v = -1;
    size_t len = strlen(name);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, name, len) == 0 && line[len] == ',') {
            v = strtoll(line + len + 1, NULL, 10);
            break;
        }
    fclose(f);
    return v;
}

/* ------------------------------------------------------------ hill climbing */

static void hc_checks(const char *label, const gpk_search_problem *pb, gpk_neighbourhood nb, uint64_t seed)
{
    for (int algo = GPK_SEARCH_HC_BEST; algo <= GPK_SEARCH_HC_FIRST; algo++) {
        gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
        o.algo = (gpk_search_algo)algo;
        o.nb = nb;
        o.seed = seed;
        gpk_search_result r, r1, r2;
        gpk_status st = run(pb, o, ctx_threads, &r);
        TU_CHECK(st == GPK_OK, "%s %s: %s", label, gpk_search_algo_name(o.algo), gpk_last_error(ctx));
        if (st != GPK_OK) continue;
        TU_CHECK(is_solution(pb, &r), "%s %s: not a solution", label, gpk_search_algo_name(o.algo));
        TU_CHECK(r.local_optimum == 1, "%s %s: local_optimum = %d", label, gpk_search_algo_name(o.algo),
                 r.local_optimum);
        int64_t full = full_cost(pb, r.solution);
        TU_CHECK(full == r.best, "%s %s: reported %lld, full evaluation %lld", label,
                 gpk_search_algo_name(o.algo), (long long)r.best, (long long)full);
        uint64_t better = improving_neighbours(pb, nb, r.solution, full);
        TU_CHECK(better == 0, "%s %s: %llu improving neighbours left", label, gpk_search_algo_name(o.algo),
                 (unsigned long long)better);
        /* Reproducible: same seed, one thread and three threads. */
        TU_CHECK(run(pb, o, 1, &r1) == GPK_OK && same_result(&r, &r1), "%s %s: 1 thread differs", label,
                 gpk_search_algo_name(o.algo));
        TU_CHECK(run(pb, o, 3, &r2) == GPK_OK && same_result(&r, &r2), "%s %s: 3 threads differ", label,
                 gpk_search_algo_name(o.algo));
        if (algo == GPK_SEARCH_HC_BEST)
            printf("  %-14s hc    %-5s best %lld after %llu moves\n", label, gpk_neighbourhood_name(nb),
                   (long long)r.best, (unsigned long long)r.iterations);
        gpk_search_result_free(&r);
        gpk_search_result_free(&r1);
        gpk_search_result_free(&r2);
    }
    /* A move limit stops early without claiming a local optimum. */
    gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
    o.algo = GPK_SEARCH_HC_BEST;
    o.nb = nb;
    o.seed = seed;
    o.iters = 1;
    gpk_search_result r;
    if (run(pb, o, ctx_threads, &r) == GPK_OK) {
        TU_CHECK(r.iterations <= 1, "%s hc iters=1: %llu moves", label, (unsigned long long)r.iterations);
        if (r.iterations == 1) TU_CHECK(r.local_optimum == 0, "%s hc iters=1: local optimum claimed", label);
        gpk_search_result_free(&r);
    }
}

/* ------------------------------------------------------------ tabu */

static void tabu_checks(const char *label, const gpk_search_problem *pb, gpk_neighbourhood nb, uint64_t seed,
                        uint64_t iters)
{
    const uint32_t n = sol_len(pb);
    uint32_t *start = malloc(n * sizeof *start);
    for (uint32_t i = 0; i < n; i++)
        start[i] = pb->kind == GPK_PROBLEM_PPP ? (uint32_t)(gpk_rng_next(&rng) & 1) : i;
    if (pb->kind != GPK_PROBLEM_PPP)
        for (uint32_t i = n; i > 1; i--) {
            uint32_t k = (uint32_t)(gpk_rng_next(&rng) % i), t = start[i - 1];
            start[i - 1] = start[k];
            start[k] = t;
        }
    const int64_t start_cost = full_cost(pb, start);
    for (int algo = GPK_SEARCH_TABU; algo <= GPK_SEARCH_ITS; algo++) {
        gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
        o.algo = (gpk_search_algo)algo;
        o.nb = nb;
        o.seed = seed;
        o.start = start;
        o.iters = iters;
        o.global_iters = 3;
        gpk_search_result r, r1;
        gpk_status st = run(pb, o, ctx_threads, &r);
        TU_CHECK(st == GPK_OK, "%s %s: %s", label, gpk_search_algo_name(o.algo), gpk_last_error(ctx));
        if (st != GPK_OK) continue;
        TU_CHECK(is_solution(pb, &r), "%s %s: not a solution", label, gpk_search_algo_name(o.algo));
        TU_CHECK(full_cost(pb, r.solution) == r.best, "%s %s: best %lld is not the solution's cost", label,
                 gpk_search_algo_name(o.algo), (long long)r.best);
        TU_CHECK(r.best <= start_cost, "%s %s: %lld worse than the start %lld", label,
                 gpk_search_algo_name(o.algo), (long long)r.best, (long long)start_cost);
        TU_CHECK(r.best < start_cost || start_cost == 0, "%s %s: no improvement on the start %lld", label,
                 gpk_search_algo_name(o.algo), (long long)start_cost);
        TU_CHECK(run(pb, o, 1, &r1) == GPK_OK && same_result(&r, &r1), "%s %s: 1 thread differs", label,
                 gpk_search_algo_name(o.algo));
        gpk_search_result_free(&r1);
        TU_CHECK(run(pb, o, 2, &r1) == GPK_OK && same_result(&r, &r1), "%s %s: 2 threads differ", label,
                 gpk_search_algo_name(o.algo));
        gpk_search_result_free(&r1);
        printf("  %-14s %-5s %-5s start %lld -> %lld (%llu iterations)\n", label,
               gpk_search_algo_name(o.algo), gpk_neighbourhood_name(nb), (long long)start_cost,
               (long long)r.best, (unsigned long long)r.iterations);
        gpk_search_result_free(&r);
    }
    free(start);
}

/* ------------------------------------------------------------ quality */

static void its_quality(const char *name, double bound_pct)
{
    gpk_qap q;
    if (!load_qap(name, &q)) return;
    int64_t bk = best_known(name);
    gpk_search_problem pb = {GPK_PROBLEM_QAP, &q, NULL, NULL};
    gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
    o.algo = GPK_SEARCH_ITS;
    o.seed = gpk_rng_next(&rng);
    gpk_search_result r;
    gpk_status st = run(&pb, o, ctx_threads, &r);
    TU_CHECK(st == GPK_OK, "%s its: %s", name, gpk_last_error(ctx));
    if (st == GPK_OK) {
        TU_CHECK(full_cost(&pb, r.solution) == r.best, "%s its: reported cost is not the solution's", name);
        /* the default budget of a QAP ITS: 100 x 1000 */
        const uint32_t rounds = gpk_search_default_global_iters(GPK_PROBLEM_QAP, GPK_SEARCH_ITS, q.n);
        TU_CHECK(rounds == 100u, "%s: %u default rounds", name, rounds);
        TU_CHECK(r.iterations == 1000ull * rounds, "%s its: %llu iterations, %u x 1000 expected", name,
                 (unsigned long long)r.iterations, rounds);
        if (bk > 0) {
            double gap = 100.0 * (double)(r.best - bk) / (double)bk;
            printf("  %-8s its %ux1000: %lld, best known %lld, gap %.2f %%, %.1f ms, %.2fM neighbours/s\n",
                   name, rounds, (long long)r.best, (long long)bk, gap, r.ms, r.evaluated / (r.ms * 1e3));
            TU_CHECK(r.best >= bk, "%s: %lld below the best known %lld", name, (long long)r.best,
                     (long long)bk);
            TU_CHECK(gap <= bound_pct, "%s: gap %.2f %% above %.1f %%", name, gap, bound_pct);
        } else {
            printf("  %-8s its: %lld (no best-known value)\n", name, (long long)r.best);
        }
        gpk_search_result_free(&r);
    }
    gpk_qap_free(&q);
}

/* tsplib/bestSolutions.txt: lines "NAME : LENGTH"; -1 when absent. */
static int64_t tsp_optimum(const char *name)
{
    char path[1024], line[256], key[64];
    snprintf(path, sizeof path, "%s/tsplib/bestSolutions.txt", data_dir);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int64_t v = -1;
    long long x;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, " %63[^ :] : %lld", key, &x) == 2 && strcmp(key, name) == 0) {
            v = x;
            break;
        }
    fclose(f);
    return v;
}

static void tsp_quality(const char *name)
{
    gpk_tsp t;
    if (!load_tsp(name, &t)) return;
    gpk_search_problem pb = {GPK_PROBLEM_TSP, NULL, &t, NULL};
    hc_checks(name, &pb, GPK_NB_TWO_OPT, gpk_rng_next(&rng));
    hc_checks(name, &pb, GPK_NB_SWAP, gpk_rng_next(&rng));
    gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
    o.algo = GPK_SEARCH_ITS;
    o.seed = gpk_rng_next(&rng);
    gpk_search_result r;
    if (run(&pb, o, ctx_threads, &r) == GPK_OK) {
        TU_CHECK(full_cost(&pb, r.solution) == r.best, "%s its: reported cost is not the solution's", name);
        int64_t opt = tsp_optimum(name);
        if (opt > 0) {
            double gap = 100.0 * (double)(r.best - opt) / (double)opt;
            printf("  %-8s its 2opt 10x1000: length %lld, optimum %lld, gap %.2f %%, %.1f ms\n", name,
                   (long long)r.best, (long long)opt, gap, r.ms);
            TU_CHECK(r.best >= opt && gap <= 5.0, "%s: its gap %.2f %%", name, gap);
        } else {
            printf("  %-8s its 2opt 10x1000: length %lld, %.1f ms\n", name, (long long)r.best, r.ms);
        }
        gpk_search_result_free(&r);
    } else {
        TU_CHECK(0, "%s its: %s", name, gpk_last_error(ctx));
    }
    gpk_tsp_free(&t);
}

/* The paper's requirement: a PPP instance with small m, n is solved. */
static void ppp_solved(uint32_t m, uint32_t n, uint64_t inst_seed, gpk_search_algo algo, gpk_neighbourhood nb)
{
    gpk_ppp p;
    TU_CHECK(gpk_ppp_generate(m, n, inst_seed, &p) == GPK_OK, "ppp generate: %s", gpk_last_error(NULL));
    gpk_search_problem pb = {GPK_PROBLEM_PPP, NULL, NULL, &p};
    gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
    o.algo = algo;
    o.nb = nb;
    o.seed = gpk_rng_next(&rng);
    o.starts = 4;
    gpk_search_result r;
    gpk_status st = run(&pb, o, ctx_threads, &r);
    TU_CHECK(st == GPK_OK, "ppp: %s", gpk_last_error(ctx));
    if (st == GPK_OK) {
        printf("  ppp %u-%u-%llu %-5s %-5s: fitness %lld after %llu iterations, %.1f ms\n", m, n,
               (unsigned long long)inst_seed, gpk_search_algo_name(algo), gpk_neighbourhood_name(nb),
               (long long)r.best, (unsigned long long)r.iterations, r.ms);
        TU_CHECK(r.best == 0, "ppp %u-%u-%llu %s: fitness %lld, not solved", m, n,
                 (unsigned long long)inst_seed, gpk_search_algo_name(algo), (long long)r.best);
        TU_CHECK(full_cost(&pb, r.solution) == r.best, "ppp: reported fitness is not the solution's");
        gpk_search_result_free(&r);
    }
    gpk_ppp_free(&p);
}

/* ------------------------------------------------------------ the rest */

static int progress_calls;
static uint64_t progress_last;
static void on_progress(const gpk_search_progress *p, void *user)
{
    (void)user;
    progress_calls++;
    progress_last = p->iteration;
}

/* The defaults (issue "what a user meets first"): GPK_SEARCH_OPTS_INIT is
 * the best real-use search, a time limit is a budget used to its end, and
 * a multistart's reports count every run. */
static uint64_t tally_last;
static void on_tally(const gpk_search_progress *p, void *user)
{
    (void)user;
    tally_last = p->iteration;
}

static void default_checks(void)
{
    gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
    TU_CHECK(o.algo == GPK_SEARCH_AUTO && o.nb == GPK_NB_DEFAULT, "OPTS_INIT: algo %d, nb %d", (int)o.algo,
             (int)o.nb);
    gpk_search_opts_resolve(GPK_PROBLEM_TSP, &o);
    TU_CHECK(o.algo == GPK_SEARCH_MULTISTART && o.nb == GPK_NB_OR_OPT &&
                 o.time_limit == GPK_SEARCH_TSP_DEFAULT_SECONDS,
             "TSP default: %s/%s %g s", gpk_search_algo_name(o.algo), gpk_neighbourhood_name(o.nb),
             o.time_limit);
    o = (gpk_search_opts)GPK_SEARCH_OPTS_INIT;
    o.iters = 50;
    gpk_search_opts_resolve(GPK_PROBLEM_TSP, &o);
    TU_CHECK(o.algo == GPK_SEARCH_MULTISTART && o.time_limit == 0, "TSP with iters: %g s", o.time_limit);
    o = (gpk_search_opts)GPK_SEARCH_OPTS_INIT;
    o.nb = GPK_NB_TWO_OPT;
    gpk_search_opts_resolve(GPK_PROBLEM_TSP, &o);
    TU_CHECK(o.algo == GPK_SEARCH_ITS && o.nb == GPK_NB_TWO_OPT, "TSP 2opt default: %s",
             gpk_search_algo_name(o.algo));
    for (int k = 0; k < 3; k += 2) {
        o = (gpk_search_opts)GPK_SEARCH_OPTS_INIT;
        gpk_search_opts_resolve((gpk_problem_kind)k, &o);
        TU_CHECK(o.algo == GPK_SEARCH_ITS && o.nb == (k ? GPK_NB_FLIP1 : GPK_NB_SWAP) && o.time_limit == 0,
                 "%s default: %s/%s %g s", k ? "PPP" : "QAP", gpk_search_algo_name(o.algo),
                 gpk_neighbourhood_name(o.nb), o.time_limit);
    }
    gpk_search_algo a;
    TU_CHECK(gpk_search_algo_parse("auto", &a) == GPK_OK && a == GPK_SEARCH_AUTO &&
                 strcmp(gpk_search_algo_name(GPK_SEARCH_AUTO), "auto") == 0,
             "the name auto");

    gpk_tsp t;
    random_tsp(40, &t);
    gpk_search_problem pb = {GPK_PROBLEM_TSP, NULL, &t, NULL};
    /* OPTS_INIT on a TSP, bounded by a short limit: or2opt multistart, a tour */
    gpk_search_result r;
    o = (gpk_search_opts)GPK_SEARCH_OPTS_INIT;
    o.time_limit = 0.2;
    if (run(&pb, o, ctx_threads, &r) == GPK_OK) {
        TU_CHECK(is_solution(&pb, &r) && r.stopped == GPK_SEARCH_TIME_LIMIT && r.runs == 1,
                 "OPTS_INIT on a TSP under 0.2 s: stopped %d", (int)r.stopped);
        gpk_search_result_free(&r);
    }
    /* A limit is a budget: tabu, its and multistart with the full 2-opt
     * neighbourhood and no count search until it (on 12 cities their
     * default budgets, 10 000 iterations each, took milliseconds before). */
    gpk_tsp t12;
    random_tsp(12, &t12);
    gpk_search_problem pb12 = {GPK_PROBLEM_TSP, NULL, &t12, NULL};
    for (int algo = GPK_SEARCH_TABU; algo <= GPK_SEARCH_MULTISTART; algo++) {
        o = (gpk_search_opts)GPK_SEARCH_OPTS_INIT;
        o.algo = (gpk_search_algo)algo;
        o.nb = GPK_NB_TWO_OPT;
        o.time_limit = 0.4;
        o.starts = 2;
        if (run(&pb12, o, ctx_threads, &r) == GPK_OK) {
            TU_CHECK(r.stopped == GPK_SEARCH_TIME_LIMIT && r.ms >= 380,
                     "%s 2opt, 0.4 s and no count: stopped %d after %llu iterations, %.0f ms",
                     gpk_search_algo_name(o.algo), (int)r.stopped, (unsigned long long)r.iterations, r.ms);
            gpk_search_result_free(&r);
        }
    }
    gpk_tsp_free(&t12);
    /* ... but a count given is the budget */
    o = (gpk_search_opts)GPK_SEARCH_OPTS_INIT;
    o.algo = GPK_SEARCH_ITS;
    o.nb = GPK_NB_TWO_OPT;
    o.time_limit = 30;
    o.global_iters = 2;
    o.iters = 100;
    if (run(&pb, o, ctx_threads, &r) == GPK_OK) {
        TU_CHECK(r.stopped == GPK_SEARCH_DONE && r.iterations == 200,
                 "its 2 x 100 under 30 s: stopped %d after %llu", (int)r.stopped,
                 (unsigned long long)r.iterations);
        gpk_search_result_free(&r);
    }
    /* Multistart reports the totals of its runs: on one thread the runs
     * follow each other, and the last report (run 1's last iteration)
     * counts run 0's iterations too. Full neighbourhood and or2opt. */
    for (int k = 0; k < 2; k++) {
        o = (gpk_search_opts)GPK_SEARCH_OPTS_INIT;
        o.algo = GPK_SEARCH_MULTISTART;
        o.nb = k ? GPK_NB_OR_OPT : GPK_NB_TWO_OPT;
        o.starts = 2;
        o.iters = 100;
        o.global_iters = 2;
        o.progress = on_tally;
        o.progress_every = 1;
        tally_last = 0;
        if (run(&pb, o, 1, &r) == GPK_OK) {
            TU_CHECK(tally_last == r.iterations && r.iterations == 400,
                     "multistart %s: the last report counts %llu of %llu iterations",
                     gpk_neighbourhood_name(o.nb), (unsigned long long)tally_last,
                     (unsigned long long)r.iterations);
            gpk_search_result_free(&r);
        }
    }
    gpk_tsp_free(&t);
}

static void misc_checks(void)
{
    gpk_qap q;
    random_qap(9, &q);
    gpk_search_problem pb = {GPK_PROBLEM_QAP, &q, NULL, NULL};
    gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
    gpk_search_result r, r1;
    o.seed = 7;

    /* Progress: every progress_every iterations. */
    o.algo = GPK_SEARCH_TABU;
    o.iters = 1000;
    o.progress = on_progress;
    o.progress_every = 100;
    progress_calls = 0;
    TU_CHECK(run(&pb, o, ctx_threads, &r) == GPK_OK, "progress run: %s", gpk_last_error(ctx));
    TU_CHECK(progress_calls == 10 && progress_last == 1000, "progress: %d calls, last %llu", progress_calls,
             (unsigned long long)progress_last);
    gpk_search_result_free(&r);
    o.progress = NULL;

    /* Multistart: reproducible across thread counts for a fixed `starts`. */
    o.algo = GPK_SEARCH_MULTISTART;
    o.iters = 200;
    o.global_iters = 3;
    o.starts = 4;
    TU_CHECK(run(&pb, o, 1, &r) == GPK_OK, "multistart: %s", gpk_last_error(ctx));
    TU_CHECK(run(&pb, o, 3, &r1) == GPK_OK && same_result(&r, &r1), "multistart: 3 threads differ from 1");
    TU_CHECK(r.iterations == 4 * 3 * 200, "multistart: %llu iterations", (unsigned long long)r.iterations);
    TU_CHECK(full_cost(&pb, r.solution) == r.best, "multistart: reported cost is not the solution's");
    gpk_search_result_free(&r);
    gpk_search_result_free(&r1);

    /* Same seed, same result; another seed, usually another start. */
    o.algo = GPK_SEARCH_TABU;
    o.iters = 300;
    TU_CHECK(run(&pb, o, ctx_threads, &r) == GPK_OK && run(&pb, o, ctx_threads, &r1) == GPK_OK &&
                 same_result(&r, &r1),
             "tabu: same seed, different results");
    gpk_search_result_free(&r);
    gpk_search_result_free(&r1);

    /* Bad inputs. */
    gpk_search_opts bad = GPK_SEARCH_OPTS_INIT;
    bad.nb = GPK_NB_TWO_OPT;
    TU_CHECK(gpk_search_run(ctx, &pb, &bad, &r) == GPK_EINVAL, "QAP with 2opt accepted");
    printf("  rejected: %s\n", gpk_last_error(ctx));
    bad.nb = GPK_NB_FLIP1;
    TU_CHECK(gpk_search_run(ctx, &pb, &bad, &r) == GPK_EINVAL, "QAP with flip1 accepted");
    bad.nb = (gpk_neighbourhood)99;
    TU_CHECK(gpk_search_run(ctx, &pb, &bad, &r) == GPK_EINVAL, "neighbourhood 99 accepted");
    bad.nb = GPK_NB_DEFAULT;
    bad.algo = (gpk_search_algo)42;
    TU_CHECK(gpk_search_run(ctx, &pb, &bad, &r) == GPK_EINVAL, "algorithm 42 accepted");
    bad.algo = GPK_SEARCH_TABU;
    uint32_t perm[9] = {0, 1, 2, 3, 4, 5, 6, 7, 7};
    bad.start = perm;
    TU_CHECK(gpk_search_run(ctx, &pb, &bad, &r) == GPK_EINVAL, "repeated entry in start accepted");
    printf("  rejected: %s\n", gpk_last_error(ctx));
    perm[8] = 9;
    TU_CHECK(gpk_search_run(ctx, &pb, &bad, &r) == GPK_EINVAL, "out-of-range start accepted");
    bad.start = NULL;
    gpk_search_problem nul = {GPK_PROBLEM_QAP, NULL, NULL, NULL};
    TU_CHECK(gpk_search_run(ctx, &nul, &bad, &r) == GPK_EINVAL, "NULL qap accepted");
    printf("  rejected: %s\n", gpk_last_error(ctx));
    gpk_search_problem mismatch = {GPK_PROBLEM_TSP, &q, NULL, NULL};
    TU_CHECK(gpk_search_run(ctx, &mismatch, &bad, &r) == GPK_EINVAL, "TSP kind with a QAP instance accepted");
    TU_CHECK(gpk_search_run(NULL, &pb, &bad, &r) == GPK_EINVAL, "NULL ctx accepted");
    TU_CHECK(gpk_search_run(ctx, &pb, NULL, &r) == GPK_EINVAL, "NULL opts accepted");
    TU_CHECK(gpk_search_run(ctx, &pb, &bad, NULL) == GPK_EINVAL, "NULL result accepted");
    uint32_t n_saved = q.n;
    q.n = 1;
    TU_CHECK(gpk_search_run(ctx, &pb, &bad, &r) == GPK_EINVAL, "QAP n = 1 accepted");
    printf("  rejected: %s\n", gpk_last_error(ctx));
    q.n = n_saved;
    gpk_ppp pp;
    TU_CHECK(gpk_ppp_generate(5, 1, 3, &pp) == GPK_OK, "ppp 5-1-3: %s", gpk_last_error(NULL));
    gpk_search_problem ppb = {GPK_PROBLEM_PPP, NULL, NULL, &pp};
    TU_CHECK(gpk_search_run(ctx, &ppb, &bad, &r) == GPK_EINVAL, "PPP n = 1 accepted");
    gpk_ppp_free(&pp);
    TU_CHECK(gpk_ppp_generate(7, 5, 3, &pp) == GPK_OK, "ppp 7-5-3: %s", gpk_last_error(NULL));
    ppb.ppp = &pp;
    uint32_t bits[5] = {0, 1, 2, 0, 1};
    bad.start = bits;
    TU_CHECK(gpk_search_run(ctx, &ppb, &bad, &r) == GPK_EINVAL, "PPP start bit 2 accepted");
    printf("  rejected: %s\n", gpk_last_error(ctx));
    bad.start = NULL;
    bad.nb = GPK_NB_SWAP;
    TU_CHECK(gpk_search_run(ctx, &ppb, &bad, &r) == GPK_EINVAL, "PPP with swap accepted");
    gpk_ppp_free(&pp);

    /* Names round-trip. */
    for (int a = 0; a <= GPK_SEARCH_MULTISTART; a++) {
        gpk_search_algo x;
        TU_CHECK(gpk_search_algo_parse(gpk_search_algo_name((gpk_search_algo)a), &x) == GPK_OK && (int)x == a,
                 "algo name %d", a);
    }
    for (int b = 0; b <= GPK_NB_FLIP2; b++) {
        gpk_neighbourhood x;
        TU_CHECK(gpk_neighbourhood_parse(gpk_neighbourhood_name((gpk_neighbourhood)b), &x) == GPK_OK &&
                     (int)x == b,
                 "neighbourhood name %d", b);
    }
    gpk_search_algo xa;
    TU_CHECK(gpk_search_algo_parse("sa", &xa) == GPK_EINVAL, "unknown algorithm parsed");
    gpk_qap_free(&q);
}

/* The problem table: every kind named, parsed back and described; a kind
 * with no problem is GPK_EINVAL everywhere, never taken for another one. */
static void problem_table_checks(void)
{
    static const char *const names[] = {"qap", "tsp", "ppp"};
    for (int k = 0; k < 3; k++) {
        gpk_problem_kind x;
        TU_CHECK(strcmp(gpk_problem_name((gpk_problem_kind)k), names[k]) == 0, "problem %d named '%s'", k,
                 gpk_problem_name((gpk_problem_kind)k));
        TU_CHECK(gpk_problem_parse(names[k], &x) == GPK_OK && (int)x == k, "problem '%s' parsed", names[k]);
        TU_CHECK(gpk_search_nb_applies((gpk_problem_kind)k, gpk_search_default_nb((gpk_problem_kind)k)) &&
                     gpk_search_nb_applies((gpk_problem_kind)k, gpk_search_paper_nb((gpk_problem_kind)k)),
                 "problem '%s': its default or paper neighbourhood does not apply", names[k]);
    }
    gpk_problem_kind x;
    TU_CHECK(gpk_problem_parse("vrp", &x) == GPK_EINVAL, "unknown problem 'vrp' parsed");
    TU_CHECK(gpk_search_nb_applies(GPK_PROBLEM_QAP, GPK_NB_SWAP) &&
                 !gpk_search_nb_applies(GPK_PROBLEM_QAP, GPK_NB_TWO_OPT) &&
                 gpk_search_nb_applies(GPK_PROBLEM_TSP, GPK_NB_OR_OPT) &&
                 !gpk_search_nb_applies(GPK_PROBLEM_PPP, GPK_NB_SWAP) &&
                 !gpk_search_nb_applies(GPK_PROBLEM_PPP, (gpk_neighbourhood)99),
             "gpk_search_nb_applies");
    TU_CHECK(gpk_search_paper_nb(GPK_PROBLEM_TSP) == GPK_NB_TWO_OPT &&
                 gpk_search_default_nb(GPK_PROBLEM_TSP) == GPK_NB_OR_OPT,
             "TSP: paper %d, default %d", (int)gpk_search_paper_nb(GPK_PROBLEM_TSP),
             (int)gpk_search_default_nb(GPK_PROBLEM_TSP));

    /* description, check and cost of each problem */
    gpk_qap q;
    random_qap(9, &q);
    gpk_tsp t;
    random_tsp(12, &t);
    gpk_ppp pp;
    TU_CHECK(gpk_ppp_generate(7, 5, 3, &pp) == GPK_OK, "ppp 7-5-3: %s", gpk_last_error(NULL));
    const gpk_search_problem pbs[3] = {{GPK_PROBLEM_QAP, &q, NULL, NULL},
                                       {GPK_PROBLEM_TSP, NULL, &t, NULL},
                                       {GPK_PROBLEM_PPP, NULL, NULL, &pp}};
    uint32_t sol[12];
    for (int k = 0; k < 3; k++) {
        gpk_search_problem_info info;
        TU_CHECK(gpk_search_problem_describe(&pbs[k], &info) == GPK_OK, "describe %s: %s", names[k],
                 gpk_last_error(NULL));
        const uint32_t n = k == 0 ? q.n : k == 1 ? t.n : pp.n;
        TU_CHECK(info.n == n, "describe %s: n = %u, not %u", names[k], info.n, n);
        uint64_t f0 = 0, f1 = 1;
        TU_CHECK(gpk_search_problem_fingerprint(&pbs[k], &f0) == GPK_OK &&
                     gpk_search_problem_fingerprint(&pbs[k], &f1) == GPK_OK && f0 == f1,
                 "fingerprint %s: not the same twice", names[k]);
        for (uint32_t i = 0; i < n; i++) sol[i] = k == 2 ? i % 2 : n - 1 - i;
        int64_t cost = -1;
        TU_CHECK(gpk_search_problem_check_solution(&pbs[k], sol) == GPK_OK, "check %s: %s", names[k],
                 gpk_last_error(NULL));
        TU_CHECK(gpk_search_problem_cost(&pbs[k], sol, &cost) == GPK_OK, "cost %s", names[k]);
        int64_t want = 0;
        if (k == 0) want = gpk_qap_cost(&q, sol);
        if (k == 1) want = gpk_tsp_tour_length(&t, sol);
        if (k == 2) {
            int8_t v[5];
            int32_t y[7];
            for (uint32_t i = 0; i < n; i++) v[i] = sol[i] ? 1 : -1;
            gpk_ppp_product(&pp, v, y);
            want = gpk_ppp_fitness(&pp, y);
        }
        TU_CHECK(cost == want, "cost %s: %lld, not %lld", names[k], (long long)cost, (long long)want);
        sol[1] = k == 2 ? 2 : sol[0];
        TU_CHECK(gpk_search_problem_check_solution(&pbs[k], sol) == GPK_EINVAL,
                 "check %s: a bad solution passed", names[k]);
        printf("  %s %s n=%u: rejected: %s\n", names[k], info.name, info.n, gpk_last_error(NULL));
    }
    uint64_t f0, f1;
    gpk_search_problem_fingerprint(&pbs[0], &f0);
    q.a[1] += 1;
    gpk_search_problem_fingerprint(&pbs[0], &f1);
    TU_CHECK(f0 != f1, "fingerprint: another matrix, the same fingerprint");

    /* a fourth kind: rejected by every call, never run as another problem */
    const gpk_problem_kind fourth = (gpk_problem_kind)3;
    gpk_search_problem bad = {fourth, &q, &t, &pp};
    gpk_search_problem_info info;
    int64_t cost;
    TU_CHECK(strcmp(gpk_problem_name(fourth), "unknown") == 0, "kind 3 named '%s'", gpk_problem_name(fourth));
    TU_CHECK(!gpk_search_nb_applies(fourth, GPK_NB_FLIP1), "kind 3: flip1 applies");
    TU_CHECK(gpk_search_default_nb(fourth) == GPK_NB_DEFAULT, "kind 3 has a default neighbourhood");
    TU_CHECK(gpk_search_problem_describe(&bad, &info) == GPK_EINVAL, "kind 3 described");
    TU_CHECK(gpk_search_problem_fingerprint(&bad, &f0) == GPK_EINVAL, "kind 3 fingerprinted");
    TU_CHECK(gpk_search_problem_cost(&bad, sol, &cost) == GPK_EINVAL, "kind 3 evaluated");
    TU_CHECK(gpk_search_problem_check_solution(&bad, sol) == GPK_EINVAL, "kind 3 checked");
    gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
    gpk_search_result r;
    TU_CHECK(gpk_search_run(ctx, &bad, &o, &r) == GPK_EINVAL, "kind 3 searched");
    printf("  rejected: %s\n", gpk_last_error(ctx));
    gpk_ctx *one[1] = {ctx};
    TU_CHECK(gpk_search_run_multi(one, 1, &bad, &o, &r) == GPK_EINVAL, "kind 3 searched by run_multi");
    gpk_qap_free(&q);
    gpk_tsp_free(&t);
    gpk_ppp_free(&pp);
}

/* Neighbourhoods large enough for the parallel scan (small ones are
 * scanned on one thread): the same result with 1, 2 and 3 threads. */
static void parallel_determinism(void)
{
    gpk_qap q;
    gpk_tsp t;
    random_qap(150, &q);
    random_tsp(300, &t);
    gpk_search_problem pbs[2] = {{GPK_PROBLEM_QAP, &q, NULL, NULL}, {GPK_PROBLEM_TSP, NULL, &t, NULL}};
    for (int p = 0; p < 2; p++)
        for (int algo = GPK_SEARCH_HC_BEST; algo <= GPK_SEARCH_ITS; algo++) {
            if (algo == GPK_SEARCH_HC_FIRST) continue; /* sequential by nature */
            gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
            o.algo = (gpk_search_algo)algo;
            /* the full scan's neighbourhoods (the TSP default, or2opt, scans
             * neighbour lists: not a 2-opt local optimum over every pair) */
            o.nb = p ? GPK_NB_TWO_OPT : GPK_NB_SWAP;
            o.seed = gpk_rng_next(&rng);
            o.iters = algo == GPK_SEARCH_HC_BEST ? 0 : 60;
            o.global_iters = 2;
            gpk_search_result r[3];
            int ok = 1;
            for (int th = 1; th <= 3; th++) ok &= run(&pbs[p], o, th, &r[th - 1]) == GPK_OK;
            TU_CHECK(ok, "parallel %s: %s", gpk_search_algo_name(o.algo), gpk_last_error(ctx));
            if (!ok) continue;
            TU_CHECK(same_result(&r[0], &r[1]) && same_result(&r[0], &r[2]),
                     "%s n=%u %s: results differ between 1, 2 and 3 threads", p ? "tsp" : "qap", r[0].n,
                     gpk_search_algo_name(o.algo));
            TU_CHECK(full_cost(&pbs[p], r[0].solution) == r[0].best, "parallel %s: reported cost wrong",
                     gpk_search_algo_name(o.algo));
            if (algo == GPK_SEARCH_HC_BEST)
                TU_CHECK(improving_neighbours(&pbs[p], p ? GPK_NB_TWO_OPT : GPK_NB_SWAP, r[0].solution,
                                              r[0].best) == 0,
                         "parallel hc: not a local optimum");
            printf("  %s n=%u %-5s best %lld, %llu iterations, %.1f ms (3 threads)\n", p ? "tsp" : "qap",
                   r[0].n, gpk_search_algo_name(o.algo), (long long)r[2].best,
                   (unsigned long long)r[2].iterations, r[2].ms);
            for (int th = 0; th < 3; th++) gpk_search_result_free(&r[th]);
        }
    gpk_qap_free(&q);
    gpk_tsp_free(&t);
}

/* opts.qap_delta = FORMULA (the O(n) swap delta, no Taillard table) gives
 * the table's results on 1 and 3 threads; opts.eval is ignored on the CPU;
 * gpk_search_run_multi gives the same result on 1, 2 and 3 contexts. */
static void delta_formula_and_multi(void)
{
    gpk_qap q;
    random_qap(70, &q); /* n >= 64: the table update runs in parallel */
    gpk_search_problem pb = {GPK_PROBLEM_QAP, &q, NULL, NULL};
    for (int algo = GPK_SEARCH_HC_BEST; algo <= GPK_SEARCH_MULTISTART; algo++) {
        gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
        o.algo = (gpk_search_algo)algo;
        o.seed = gpk_rng_next(&rng);
        o.iters = algo <= GPK_SEARCH_HC_FIRST ? 0 : 80;
        o.global_iters = 2;
        o.starts = 3;
        gpk_search_result a, b, c;
        gpk_search_opts of = o;
        of.qap_delta = GPK_QAP_DELTA_FORMULA;
        of.eval = GPK_SEARCH_EVAL_PAPER;
        int ok =
            run(&pb, o, 1, &a) == GPK_OK && run(&pb, of, 1, &b) == GPK_OK && run(&pb, of, 3, &c) == GPK_OK;
        TU_CHECK(ok, "formula %s: %s", gpk_search_algo_name(o.algo), gpk_last_error(ctx));
        if (!ok) continue;
        TU_CHECK(same_result(&a, &b) && same_result(&a, &c) && a.evaluated == b.evaluated &&
                     b.gpu_evaluated == 0,
                 "qap n=70 %s: the O(n) formula (1 and 3 threads) differs from Taillard's table",
                 gpk_search_algo_name(o.algo));
        gpk_search_result_free(&a);
        gpk_search_result_free(&b);
        gpk_search_result_free(&c);
    }
    gpk_ctx *cs[3] = {ctx, NULL, NULL};
    int made = gpk_ctx_create(&cs[1], GPK_BACKEND_CPU) == GPK_OK &&
        gpk_ctx_create(&cs[2], GPK_BACKEND_CPU) == GPK_OK;
    TU_CHECK(made, "contexts: %s", gpk_last_error(NULL));
    if (made) {
        gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
        o.algo = GPK_SEARCH_MULTISTART; /* each run: its */
        o.iters = 50;
        o.global_iters = 2;
        o.starts = 5;
        o.seed = gpk_rng_next(&rng);
        gpk_search_result r[3];
        int ok = 1;
        for (int k = 0; k < 3; k++) ok &= gpk_search_run_multi(cs, k + 1, &pb, &o, &r[k]) == GPK_OK;
        TU_CHECK(ok, "multi: %s", gpk_last_error(ctx));
        if (ok) {
            for (int k = 1; k < 3; k++)
                TU_CHECK(same_result(&r[0], &r[k]) && r[k].best_run == r[0].best_run && r[k].runs == 5 &&
                             r[k].evaluated == r[0].evaluated,
                         "multi: %d contexts found %lld (run %u), 1 context %lld (run %u)", k + 1,
                         (long long)r[k].best, r[k].best_run, (long long)r[0].best, r[0].best_run);
            TU_CHECK(full_cost(&pb, r[0].solution) == r[0].best, "multi: reported cost wrong");
            printf("  qap n=70 multi: 5 runs, best %lld from run %u, 1 / 2 / 3 contexts agree\n",
                   (long long)r[0].best, r[0].best_run);
            for (int k = 0; k < 3; k++) gpk_search_result_free(&r[k]);
        }
        /* the reports count every run of every context: context 0's last
         * report, in its second run, counts its first run's 100 iterations
         * too (it counted its own run's alone) */
        o.starts = 4;
        o.progress = on_tally;
        o.progress_every = 1;
        tally_last = 0;
        gpk_search_result rp;
        if (gpk_search_run_multi(cs, 2, &pb, &o, &rp) == GPK_OK) {
            TU_CHECK(tally_last > 150 && tally_last <= rp.iterations && rp.iterations == 400,
                     "multi: the last report counts %llu of %llu iterations (runs of 100)",
                     (unsigned long long)tally_last, (unsigned long long)rp.iterations);
            gpk_search_result_free(&rp);
        }
        o.progress = NULL;
        gpk_search_result r2;
        gpk_ctx *twice[2] = {ctx, ctx};
        TU_CHECK(gpk_search_run_multi(twice, 2, &pb, &o, &r2) == GPK_EINVAL,
                 "multi: a repeated context accepted");
        TU_CHECK(gpk_search_run_multi(cs, 0, &pb, &o, &r2) == GPK_EINVAL, "multi: count 0 accepted");
    }
    if (cs[1]) gpk_ctx_destroy(cs[1]);
    if (cs[2]) gpk_ctx_destroy(cs[2]);
    gpk_search_opts bad = GPK_SEARCH_OPTS_INIT;
    bad.eval = (gpk_search_eval)7;
    gpk_search_result r3;
    TU_CHECK(gpk_search_run(ctx, &pb, &bad, &r3) == GPK_EINVAL, "an unknown eval mode accepted");
    gpk_search_eval e;
    TU_CHECK(gpk_search_eval_parse("paper", &e) == GPK_OK && e == GPK_SEARCH_EVAL_PAPER &&
                 strcmp(gpk_search_eval_name(GPK_SEARCH_EVAL_OURS), "ours") == 0 &&
                 gpk_search_eval_parse("fast", &e) == GPK_EINVAL,
             "eval names");
    gpk_qap_free(&q);
}

int main(int argc, char **argv)
{
    gpk_backend backend;
    int rc = tu_open_backend("test_search_algos", argc, argv, &ctx, &backend);
    if (rc >= 0) return rc;
    gpk_ctx_info info;
    gpk_ctx_info_get(ctx, &info);
    ctx_threads = (int)info.threads;
    if (ctx_threads < 1) ctx_threads = 1;
    gpk_rng_seed(&rng, tu_seed());
    data_dir = argc > 2 ? argv[2] : NULL;
    struct stat st;
    if (data_dir && (stat(data_dir, &st) != 0 || !S_ISDIR(st.st_mode))) data_dir = NULL;
    if (!data_dir) printf("data directory not found: the instance-file parts are skipped\n");

    printf("defaults:\n");
    default_checks();
    printf("the problem table:\n");
    problem_table_checks();
    printf("hill climbing (local optima checked by brute force):\n");
    {
        gpk_qap q;
        random_qap(10, &q);
        gpk_search_problem pb = {GPK_PROBLEM_QAP, &q, NULL, NULL};
        hc_checks("qap random-10", &pb, GPK_NB_SWAP, gpk_rng_next(&rng));
        tabu_checks("qap random-10", &pb, GPK_NB_SWAP, gpk_rng_next(&rng), 500);
        gpk_qap_free(&q);
        gpk_tsp t;
        random_tsp(30, &t);
        pb = (gpk_search_problem){GPK_PROBLEM_TSP, NULL, &t, NULL};
        hc_checks("tsp random-30", &pb, GPK_NB_TWO_OPT, gpk_rng_next(&rng));
        hc_checks("tsp random-30", &pb, GPK_NB_SWAP, gpk_rng_next(&rng));
        tabu_checks("tsp random-30", &pb, GPK_NB_TWO_OPT, gpk_rng_next(&rng), 500);
        tabu_checks("tsp random-30", &pb, GPK_NB_SWAP, gpk_rng_next(&rng), 500);
        gpk_tsp_free(&t);
        gpk_ppp p;
        TU_CHECK(gpk_ppp_generate(31, 25, 11, &p) == GPK_OK, "ppp: %s", gpk_last_error(NULL));
        pb = (gpk_search_problem){GPK_PROBLEM_PPP, NULL, NULL, &p};
        hc_checks("ppp 31-25-11", &pb, GPK_NB_FLIP1, gpk_rng_next(&rng));
        hc_checks("ppp 31-25-11", &pb, GPK_NB_FLIP2, gpk_rng_next(&rng));
        tabu_checks("ppp 31-25-11", &pb, GPK_NB_FLIP1, gpk_rng_next(&rng), 300);
        tabu_checks("ppp 31-25-11", &pb, GPK_NB_FLIP2, gpk_rng_next(&rng), 100);
        gpk_ppp_free(&p);
    }
    if (data_dir) {
        gpk_qap q;
        if (load_qap("nug12", &q)) {
            gpk_search_problem pb = {GPK_PROBLEM_QAP, &q, NULL, NULL};
            hc_checks("nug12", &pb, GPK_NB_SWAP, gpk_rng_next(&rng));
            tabu_checks("nug12", &pb, GPK_NB_SWAP, gpk_rng_next(&rng), 500);
            gpk_qap_free(&q);
        }
        if (load_qap("chr12a", &q)) {
            gpk_search_problem pb = {GPK_PROBLEM_QAP, &q, NULL, NULL};
            hc_checks("chr12a", &pb, GPK_NB_SWAP, gpk_rng_next(&rng));
            gpk_qap_free(&q);
        }
        printf("TSPLIB:\n");
        tsp_quality("burma14");
        tsp_quality("ulysses16");
        printf("iterated tabu search quality (QAPLIB, the default budget):\n");
        its_quality("nug12", 5.0);
        its_quality("chr12a", 5.0);
        its_quality("tai12a", 5.0);
        its_quality("had12", 5.0);
        its_quality("nug15", 5.0);
        its_quality("nug30", 10.0);
    }
    printf("PPP solved to fitness 0:\n");
    /* Fixed instances, random search seeds: with the default tenure one
     * 10 x 1000 ITS solved 21-21-1, -2 and -3 from 40 of 40 random starts
     * each (a few ms). Instances differ: of 21-21-1 .. 12, 21-21-12 was
     * solved from 18 of 40 starts, the others 40/40; over 50 random m = n =
     * 21 instances one ITS solved 47 (31-31: 43, 51-51: 19). */
    ppp_solved(21, 21, 1, GPK_SEARCH_ITS, GPK_NB_FLIP1);
    ppp_solved(21, 21, 2, GPK_SEARCH_ITS, GPK_NB_FLIP1);
    ppp_solved(21, 21, 3, GPK_SEARCH_MULTISTART, GPK_NB_FLIP1);
    printf("parallel scan, 1 / 2 / 3 threads:\n");
    parallel_determinism();
    printf("QAP delta formula, multi-context multistart:\n");
    delta_formula_and_multi();
    printf("misc:\n");
    misc_checks();
    gpk_ctx_destroy(ctx);
    return tu_finish("test_search_algos");
}
