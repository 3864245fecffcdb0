/* Parallel local search (Luong, Melab & Talbi 2009): the problems.
 *
 * This header holds the problem layer the search framework builds on:
 * instance readers (QAPLIB, TSPLIB95), a seeded generator for the permuted
 * perceptron problem, full and incremental evaluations, and the paper's
 * index bijection for the swap neighbourhood; then the search algorithms
 * (hill climbing, tabu, iterated tabu, multistart) with the neighbourhood
 * evaluated on CPU threads or, on a CUDA context, on the GPU.
 *
 * Readers need no context: on failure they return the status and keep the
 * message, "FILE:LINE: what", in gpk_last_error(NULL). Every cost is exact
 * integer arithmetic (int64_t).
 *
 * Limits: sizes and permutation entries are u32 (n < 2^32); QAP n <= 16384
 * (an n x n matrix pair; larger is GPK_EFORMAT), the permuted perceptron
 * n <= 2047 (GPK_EINVAL), TSP DIMENSION < 2^32, the swap bijection exact for
 * every n < 2^32. The sorts have no such limit (gpk/sort.h). */
#ifndef GPK_SEARCH_H
#define GPK_SEARCH_H

#include "gpk.h"

#include <signal.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the swap neighbourhood's index bijection (paper, equations 1-6) ----
 * The n(n-1)/2 swaps (i, j), 0 <= i < j < n, numbered k = 0 .. n(n-1)/2 - 1
 * in the paper's order; exact for every n < 2^32 (integer square root, no
 * floating point). */
GPK_API void gpk_swap_index_to_pair(uint64_t n, uint64_t k, uint32_t *i, uint32_t *j);
GPK_API uint64_t gpk_swap_pair_to_index(uint64_t n, uint32_t i, uint32_t j);

/* ---- QAP (QAPLIB .dat: n, matrix A, matrix B; free-form whitespace) ---- */
typedef struct gpk_qap {
    uint32_t n;
    int64_t *a, *b; /* n x n, row-major */
    char name[64];  /* file name without directory and extension */
} gpk_qap;

GPK_API gpk_status gpk_qap_load(const char *path, gpk_qap *out);
/* The same from memory (fuzzing, tests); name labels the messages. */
GPK_API gpk_status gpk_qap_parse(const char *text, size_t len, const char *name, gpk_qap *out);
GPK_API void gpk_qap_free(gpk_qap *q);
/* p: permutation of 0..n-1, p[i] = location of facility i.
 * cost = sum_i sum_j A[i][j] * B[p[i]][p[j]]. */
GPK_API int64_t gpk_qap_cost(const gpk_qap *q, const uint32_t *p);
/* Cost change of exchanging p[r] and p[s] (r != s), O(n), for any A, B
 * (not only symmetric ones). */
GPK_API int64_t gpk_qap_swap_delta(const gpk_qap *q, const uint32_t *p, uint32_t r, uint32_t s);
/* Taillard's update: delta is an n x n table with delta[u*n+v] (u < v) the
 * cost change of exchanging p[u], p[v] for the permutation before the move;
 * p_after is the permutation after exchanging r and s. Afterwards delta
 * holds the changes for p_after: O(1) per pair disjoint from {r, s}, O(n)
 * for the others. Entries with u >= v are not used. */
GPK_API void gpk_qap_delta_update(const gpk_qap *q, const uint32_t *p_after, int64_t *delta, uint32_t r,
                                  uint32_t s);
/* QAPLIB .sln: "n cost", then the 1-based permutation; *p gets it 0-based
 * (n entries, allocated here, free()). */
GPK_API gpk_status gpk_qap_load_solution(const char *path, uint32_t *n, int64_t *cost, uint32_t **p);

/* ---- TSP (TSPLIB95 symmetric instances) ---- */
typedef enum gpk_tsp_weight {
    GPK_TSP_EUC_2D = 0,
    GPK_TSP_CEIL_2D = 1,
    GPK_TSP_ATT = 2,
    GPK_TSP_GEO = 3,
    GPK_TSP_EXPLICIT = 4 /* FULL_MATRIX, UPPER_ROW, LOWER_DIAG_ROW, UPPER_DIAG_ROW */
} gpk_tsp_weight;

typedef struct gpk_tsp {
    uint32_t n;
    gpk_tsp_weight weight;
    double *x, *y;   /* coordinates (NULL for EXPLICIT) */
    int32_t *matrix; /* n x n distances: EXPLICIT always; others when n is small
                             enough (GPK_TSP_MATRIX_MAX), else NULL: computed on the fly */
    char name[64];
    /* FIXED_EDGES_SECTION: nfixed edges (fixed[2e], fixed[2e + 1], 0-based)
     * that TSPLIB requires in every tour (linhp318). The searches do not
     * read them; gpk tsp enforces them (docs/search.md). */
    uint32_t nfixed;
    uint32_t *fixed;
} gpk_tsp;
#define GPK_TSP_MATRIX_MAX 20000u

GPK_API gpk_status gpk_tsp_load(const char *path, gpk_tsp *out);
GPK_API gpk_status gpk_tsp_parse(const char *text, size_t len, const char *name, gpk_tsp *out);
GPK_API void gpk_tsp_free(gpk_tsp *t);
/* TSPLIB95 distance between cities i and j (0-based). */
GPK_API int32_t gpk_tsp_dist(const gpk_tsp *t, uint32_t i, uint32_t j);
/* tour: permutation of 0..n-1; length of the closed tour. */
GPK_API int64_t gpk_tsp_tour_length(const gpk_tsp *t, const uint32_t *tour);
/* 2-opt: reverse tour[i+1 .. j] (0 <= i < j < n); the length change. */
GPK_API int64_t gpk_tsp_two_opt_delta(const gpk_tsp *t, const uint32_t *tour, uint32_t i, uint32_t j);
/* swap: exchange tour[i] and tour[j] (i != j); the length change. */
GPK_API int64_t gpk_tsp_swap_delta(const gpk_tsp *t, const uint32_t *tour, uint32_t i, uint32_t j);
/* TSPLIB .tour (TOUR_SECTION, 1-based, ended by -1); *tour 0-based, n entries, free(). */
GPK_API gpk_status gpk_tsp_load_tour(const char *path, uint32_t *n, uint32_t **tour);

/* ---- PPP: the permuted perceptron problem (data README) ---- */
typedef struct gpk_ppp {
    uint32_t m, n; /* n odd */
    uint64_t seed;
    int8_t *a;      /* m x n, +-1, row-major; rows negated so that A V >= 0 */
    int8_t *secret; /* V, n entries +-1 */
    uint32_t *hist; /* H: hist[v] = rows with (A V)_i = v, v = 0 .. n */
} gpk_ppp;

/* The instance named "m-n-seed": the same on every machine. n odd, m >= 1. */
GPK_API gpk_status gpk_ppp_generate(uint32_t m, uint32_t n, uint64_t seed, gpk_ppp *out);
GPK_API void gpk_ppp_free(gpk_ppp *p);
/* y = A v (m entries). */
GPK_API void gpk_ppp_product(const gpk_ppp *p, const int8_t *v, int32_t *y);
/* fitness = 30 * sum_i (|Y_i| - Y_i) + sum_j |H[j] - H'(Y)[j]|; 0 solves it.
 * H' counts the Y_i over every value -n..n; H is zero below 0. */
GPK_API int64_t gpk_ppp_fitness(const gpk_ppp *p, const int32_t *y);
/* Fitness change of flipping v[j] (1-flip), and v[j], v[k] (2-flip, j != k),
 * given y = A v; O(m). */
GPK_API int64_t gpk_ppp_flip_delta(const gpk_ppp *p, const int32_t *y, const int8_t *v, uint32_t j);
GPK_API int64_t gpk_ppp_flip2_delta(const gpk_ppp *p, const int32_t *y, const int8_t *v, uint32_t j,
                                    uint32_t k);
/* Applies the flip of v[j] to v and y in O(m). */
GPK_API void gpk_ppp_apply_flip(const gpk_ppp *p, int32_t *y, int8_t *v, uint32_t j);

/* ---- the search (paper Sections 3-4, Algorithm 1) ----
 * The CPU drives the search; each iteration evaluates the WHOLE
 * neighbourhood in parallel (the CPU backend: the context's threads; a
 * CUDA context: one GPU thread per neighbour) and applies the best
 * admissible move. */
typedef enum gpk_problem_kind {
    GPK_PROBLEM_QAP = 0,
    GPK_PROBLEM_TSP = 1,
    GPK_PROBLEM_PPP = 2
} gpk_problem_kind;

typedef enum gpk_neighbourhood {
    GPK_NB_DEFAULT = 0, /* the best real-use one (gpk_search_default_nb): QAP swap, TSP or2opt, PPP
                            1-flip; the paper's TSP neighbourhood is GPK_NB_TWO_OPT */
    GPK_NB_SWAP = 1,    /* permutation 2-exchange, n(n-1)/2 neighbours (QAP, TSP) */
    GPK_NB_TWO_OPT = 2, /* TSP: reverse tour[i+1..j], 0 <= i < j < n (n(n-1)/2 index pairs) */
    GPK_NB_FLIP1 = 3,   /* binary, Hamming distance 1: n neighbours (PPP) */
    GPK_NB_FLIP2 = 4,   /* binary, Hamming distance 2: n(n-1)/2 neighbours (PPP) */
    GPK_NB_OR_OPT = 5   /* TSP at scale: 2-opt and Or-opt (segments of 1..3 cities) over the 10
                            nearest neighbours of each city, don't-look bits, first improvement;
                            memory O(n K), no matrix needed (docs/search.md, "or2opt"). On a CUDA
                            context from GPK_TSP_OR_OPT_GPU_MIN cities, the descent of hc, hc-first,
                            tabu and its (one run) evaluates its moves on the GPU in batches */
} gpk_neighbourhood;
#define GPK_TSP_OR_OPT_GPU_MIN 20000u

typedef enum gpk_search_algo {
    GPK_SEARCH_HC_BEST = 0,  /* hill climbing, best improvement, until a local optimum or iters */
    GPK_SEARCH_HC_FIRST = 1, /* hill climbing, first improvement (scan order from a random start) */
    GPK_SEARCH_TABU = 2, /* tabu search: tenure, aspiration (a tabu move that beats the best is allowed) */
    GPK_SEARCH_ITS = 3,  /* iterated tabu search: global_iters x iters of tabu, perturbation between */
    GPK_SEARCH_MULTISTART = 4, /* `starts` independent iterated tabu searches from random starts, best kept */
    GPK_SEARCH_AUTO = 5        /* the default: the best real-use search for the problem
                                 (gpk_search_opts_resolve): TSP multistart over the threads (or2opt:
                                 for GPK_SEARCH_TSP_DEFAULT_SECONDS unless a time limit or an
                                 iteration count is given), QAP and PPP the iterated tabu search */
} gpk_search_algo;
/* How long GPK_SEARCH_AUTO searches a TSP when neither opts.time_limit nor
 * an iteration count (iters, global_iters) is given. */
#define GPK_SEARCH_TSP_DEFAULT_SECONDS 10.0

/* How a CUDA context chooses the move (docs/search.md, "On CUDA"). */
typedef enum gpk_search_eval {
    GPK_SEARCH_EVAL_OURS = 0, /* the best admissible move reduced on the GPU, one move copied back */
    GPK_SEARCH_EVAL_PAPER = 1 /* the paper's: every delta copied to the host, chosen there */
} gpk_search_eval;

/* How the CPU scan evaluates a QAP swap. Both give the same exact deltas,
 * so the same result; only the speed differs. */
typedef enum gpk_qap_delta {
    GPK_QAP_DELTA_TABLE = 0,  /* Taillard's delta table: O(1) per neighbour, O(n^2) update per move */
    GPK_QAP_DELTA_FORMULA = 1 /* the O(n) swap delta per neighbour, no table (the GPU's formula) */
} gpk_qap_delta;

typedef struct gpk_search_problem {
    gpk_problem_kind kind;
    const gpk_qap *qap; /* the one matching kind */
    const gpk_tsp *tsp;
    const gpk_ppp *ppp;
} gpk_search_problem;

typedef struct gpk_search_progress {
    uint64_t iteration;
    int64_t current, best;
    uint64_t evaluated; /* neighbours evaluated so far */
    double ms;          /* since the start */
} gpk_search_progress;

typedef struct gpk_search_opts {
    gpk_search_algo algo;
    gpk_neighbourhood nb;
    uint64_t iters;        /* HC: most moves (0: until a local optimum); TABU: iterations
                               (0: 10000); ITS / MULTISTART: tabu iterations per global
                               iteration (0: 1000, the paper's) */
    uint32_t global_iters; /* ITS / MULTISTART: (0: gpk_search_default_global_iters: 10, the
                               paper's, but 100 for a QAP ITS) */
    uint32_t tenure; /* TABU / ITS: iterations a move stays tabu (0: a default per problem, documented) */
    uint32_t starts; /* MULTISTART: searches (0: the context's threads) */
    uint64_t seed;   /* the start solution and every random choice: same seed,
                               same result on the same backend */
    const uint32_t *start; /* optional start solution (permutation, or 0/1 bits for PPP as
                               uint32_t values); NULL: random from the seed */
    void (*progress)(const gpk_search_progress *p, void *user); /* optional, from the calling thread */
    void *user;
    uint64_t progress_every;       /* iterations between progress calls (0: 1000) */
    gpk_search_eval eval;          /* CUDA context: ours (default) or the paper's mode; ignored on the CPU */
    gpk_qap_delta qap_delta;       /* QAP on the CPU scan: Taillard's table (default) or the O(n) formula;
                                a CUDA context evaluates with the formula on the GPU either way */
    double time_limit;             /* seconds from the call (0: none, but see GPK_SEARCH_AUTO); the search
                                stops at the limit, mid-scan when one scan is long, and returns the
                                best so far. A limit is a budget: tabu, its and multistart given one
                                and no iteration count (iters 0; its, multistart: global_iters 0)
                                search until it (a PPP until solved) */
    volatile sig_atomic_t *cancel; /* optional: the search stops soon after *cancel becomes
                                non-zero; a signal handler may set it. NULL: no flag */
} gpk_search_opts;
#define GPK_SEARCH_OPTS_INIT                                                                             \
    {                                                                                                    \
        GPK_SEARCH_AUTO, GPK_NB_DEFAULT, 0u, 0u, 0u, 0u, 1u, NULL, NULL, NULL, 0u, GPK_SEARCH_EVAL_OURS, \
            GPK_QAP_DELTA_TABLE, 0.0, NULL                                                               \
    }

/* Why a search returned (gpk_search_result.stopped). A stopped search is
 * no error: the result holds the best solution found before the stop. */
typedef enum gpk_search_stop {
    GPK_SEARCH_DONE = 0,       /* the budget (iterations) ran out, or a local optimum */
    GPK_SEARCH_TIME_LIMIT = 1, /* opts.time_limit */
    GPK_SEARCH_CANCELLED = 2   /* *opts.cancel */
} gpk_search_stop;

typedef struct gpk_search_result {
    int64_t best; /* cost / tour length / fitness of `solution` */
    uint32_t n;
    uint32_t *solution;  /* n entries: permutation (QAP: p[facility] = location; TSP: tour),
                               PPP: v as 0 (-1) / 1 (+1); free with gpk_search_result_free */
    uint64_t iterations; /* moves applied (HC) / iterations run */
    uint64_t evaluated;  /* neighbours evaluated */
    double ms;
    int local_optimum;       /* HC: 1 when no improving neighbour is left */
    uint64_t gpu_evaluated;  /* of `evaluated`, the neighbours evaluated on a GPU (0 on the CPU
                               backend; below `evaluated` when a CUDA failure sent the search
                               back to the CPU scan, the message then in gpk_last_error(ctx)) */
    uint32_t runs;           /* gpk_search_run_multi: searches run (else 1) */
    uint32_t best_run;       /* gpk_search_run_multi: the run that found `best` */
    gpk_search_stop stopped; /* DONE, or why the search stopped before its budget */
} gpk_search_result;

GPK_API gpk_status gpk_search_run(gpk_ctx *ctx, const gpk_search_problem *problem,
                                  const gpk_search_opts *opts, gpk_search_result *result);
GPK_API void gpk_search_result_free(gpk_search_result *r);
/* Multistart over several contexts (the paper's Section 6, Algorithm 2: one
 * CPU thread per GPU, each driving its own device): `opts->starts` runs
 * (0: `count`), run r on ctxs[r % count] seeded with splitmix64(seed + r)
 * (run 0 from opts->start when given), each running opts->algo (hc, tabu,
 * its; multistart means its). One host thread per context runs its runs in
 * order. The result is the best run, ties to the lowest r, so it depends
 * on the seed and `starts` only, not on `count`; iterations, evaluated and
 * gpu_evaluated are totals, ms the wall time. The contexts must be
 * distinct (one per thread). On failure the first failing run's message
 * is copied to ctxs[0]. Progress is reported from the runs of ctxs[0].
 * The time limit counts from this call for every run; `stopped` is set
 * when any run stopped early. */
GPK_API gpk_status gpk_search_run_multi(gpk_ctx *const *ctxs, int count, const gpk_search_problem *problem,
                                        const gpk_search_opts *opts, gpk_search_result *result);
/* ---- the problems by kind (one table per problem, src/search/problem.h) ----
 * Every call below answers GPK_EINVAL (or "unknown", 0) for a kind no
 * problem has: a kind is never taken for another problem. */
/* "qap", "tsp", "ppp" (the CLI's commands); "unknown" for no problem. */
GPK_API const char *gpk_problem_name(gpk_problem_kind kind);
GPK_API gpk_status gpk_problem_parse(const char *name, gpk_problem_kind *out);
/* 1 when the neighbourhood nb applies to kind (GPK_NB_DEFAULT: always), else 0. */
GPK_API int gpk_search_nb_applies(gpk_problem_kind kind, gpk_neighbourhood nb);
typedef struct gpk_search_problem_info {
    uint32_t n;    /* solution length */
    char name[64]; /* the instance's name ("m-n-seed" for a PPP) */
} gpk_search_problem_info;
/* Checks that problem carries its kind's instance (GPK_EINVAL with the
 * message in gpk_last_error(NULL) otherwise) and describes it. */
GPK_API gpk_status gpk_search_problem_describe(const gpk_search_problem *problem,
                                               gpk_search_problem_info *info);
/* A hash of the instance's data (equal data, equal fingerprints), read in
 * full: O(n^2) for a QAP or an EXPLICIT TSP. GPK_EINVAL as describe. */
GPK_API gpk_status gpk_search_problem_fingerprint(const gpk_search_problem *problem, uint64_t *fingerprint);
/* The full evaluation of a solution in the result's format (the cost, tour
 * length or fitness), as gpk_qap_cost, gpk_tsp_tour_length or
 * gpk_ppp_fitness give it. The solution is not checked. */
GPK_API gpk_status gpk_search_problem_cost(const gpk_search_problem *problem, const uint32_t *solution,
                                           int64_t *cost);
/* Checks that solution (n entries, the result's format) is one of the
 * problem's: 0/1 bits for a PPP, else a permutation of 0..n-1. GPK_EINVAL
 * with the message in gpk_last_error(NULL) ("solution: bit 3 is 2, not 0
 * or 1", "solution is not a permutation of 0..9: entry 4 is 7 (repeated)"),
 * GPK_ENOMEM. */
GPK_API gpk_status gpk_search_problem_check_solution(const gpk_search_problem *problem,
                                                     const uint32_t *solution);
/* "ours", "paper" */
GPK_API const char *gpk_search_eval_name(gpk_search_eval e);
GPK_API gpk_status gpk_search_eval_parse(const char *name, gpk_search_eval *out);
/* The global iterations an ITS or multistart run makes when opts.global_iters is 0:
 * 10 (the paper's 10 x 1000), except a QAP ITS, 100 (docs/search.md). */
GPK_API uint32_t gpk_search_default_global_iters(gpk_problem_kind kind, gpk_search_algo algo, uint32_t n);
/* The neighbourhood GPK_NB_DEFAULT stands for: QAP swap, TSP or2opt, PPP flip1. */
GPK_API gpk_neighbourhood gpk_search_default_nb(gpk_problem_kind kind);
/* The paper's neighbourhood (its reproduction, gpk --paper): QAP swap, TSP 2opt, PPP flip1;
 * GPK_NB_DEFAULT for an unknown kind. */
GPK_API gpk_neighbourhood gpk_search_paper_nb(gpk_problem_kind kind);
/* Replaces what the defaults stand for in *opts, as gpk_search_run does:
 * GPK_NB_DEFAULT (gpk_search_default_nb), GPK_SEARCH_AUTO (TSP with or2opt:
 * multistart; other TSP neighbourhoods, QAP, PPP: its) and, for AUTO on a
 * TSP with no time limit and no iteration count, time_limit =
 * GPK_SEARCH_TSP_DEFAULT_SECONDS. Other fields are left as they are. */
GPK_API void gpk_search_opts_resolve(gpk_problem_kind kind, gpk_search_opts *opts);
/* "hc", "hc-first", "tabu", "its", "multistart", "auto"; "default", "swap", "2opt", "flip1", "flip2",
 * "or2opt" */
GPK_API const char *gpk_search_algo_name(gpk_search_algo a);
GPK_API gpk_status gpk_search_algo_parse(const char *name, gpk_search_algo *out);
GPK_API const char *gpk_neighbourhood_name(gpk_neighbourhood nb);
GPK_API gpk_status gpk_neighbourhood_parse(const char *name, gpk_neighbourhood *out);

#ifdef __cplusplus
}
#endif
#endif
