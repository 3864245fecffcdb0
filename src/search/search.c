/* The search's front end (include/gpk/search.h, "the search"): argument
 * validation, defaults, names, dispatch to the driver, and the multi-context
 * multistart (the paper's Algorithm 2).
 *
 * The driver is src/search/search_cpu.c for every backend: on a CUDA
 * context whose module has the search scans (gpk__search_backend_of) it
 * hands each iteration's neighbourhood evaluation to
 * src/search/search_cuda.cu. The selection rule and every random choice
 * stay in the driver, so a GPU run returns what a CPU run returns.
 *
 * The library never prints or exits: failures return a status with the
 * message in gpk_last_error(ctx). */
#include "problem.h"
#include "search_run.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An enum's names, by value, and what a failed parse says. */
typedef struct name_table {
    const char *const *names;
    unsigned count;
    const char *what;    /* the enum in a message: "search algorithm" */
    const char *choices; /* the names a message lists */
} name_table;

#define NAME_TABLE(names, what, choices)                   \
    {                                                      \
        names, sizeof names / sizeof *names, what, choices \
    }

static const char *const algo_names[] = {"hc", "hc-first", "tabu", "its", "multistart", "auto"};
static const char *const nb_names[] = {"default", "swap", "2opt", "flip1", "flip2", "or2opt"};
static const char *const eval_names[] = {"ours", "paper"};
static const name_table algos =
    NAME_TABLE(algo_names, "search algorithm", "hc, hc-first, tabu, its, multistart, auto");
static const name_table nbs =
    NAME_TABLE(nb_names, "neighbourhood", "default, swap, 2opt, flip1, flip2, or2opt");
static const name_table evals = NAME_TABLE(eval_names, "evaluation mode", "ours, paper");

static const char *table_name(const name_table *t, unsigned value)
{
    return value < t->count ? t->names[value] : "unknown";
}

/* *value = the index of name in t; GPK_EINVAL with a message when name is
 * NULL or not in t, or when the caller's out is NULL (has_out == 0). */
static gpk_status table_parse(const name_table *t, const char *fn, const char *name, int has_out,
                              unsigned *value)
{
    if (!name || !has_out) return gpk__fail(NULL, GPK_EINVAL, "%s: NULL argument", fn);
    for (unsigned i = 0; i < t->count; i++)
        if (strcmp(name, t->names[i]) == 0) {
            *value = i;
            return GPK_OK;
        }
    return gpk__fail(NULL, GPK_EINVAL, "unknown %s '%.40s' (%s)", t->what, name, t->choices);
}

const char *gpk_search_algo_name(gpk_search_algo a) { return table_name(&algos, (unsigned)a); }
const char *gpk_neighbourhood_name(gpk_neighbourhood nb) { return table_name(&nbs, (unsigned)nb); }
const char *gpk_search_eval_name(gpk_search_eval e) { return table_name(&evals, (unsigned)e); }

gpk_status gpk_search_algo_parse(const char *name, gpk_search_algo *out)
{
    unsigned v = 0;
    const gpk_status s = table_parse(&algos, "gpk_search_algo_parse", name, out != NULL, &v);
    if (s == GPK_OK) *out = (gpk_search_algo)v;
    return s;
}

gpk_status gpk_neighbourhood_parse(const char *name, gpk_neighbourhood *out)
{
    if (name && out && strcmp(name, "2-opt") == 0) { /* the spelling the paper uses */
        *out = GPK_NB_TWO_OPT;
        return GPK_OK;
    }
    unsigned v = 0;
    const gpk_status s = table_parse(&nbs, "gpk_neighbourhood_parse", name, out != NULL, &v);
    if (s == GPK_OK) *out = (gpk_neighbourhood)v;
    return s;
}

gpk_status gpk_search_eval_parse(const char *name, gpk_search_eval *out)
{
    unsigned v = 0;
    const gpk_status s = table_parse(&evals, "gpk_search_eval_parse", name, out != NULL, &v);
    if (s == GPK_OK) *out = (gpk_search_eval)v;
    return s;
}

void gpk_search_result_free(gpk_search_result *r)
{
    if (!r) return;
    free(r->solution);
    memset(r, 0, sizeof *r);
}

/* ---- the problems (problem.h): one table per problem, by kind ----
 * A new problem: its file defines its table; here one declaration and
 * one entry. */
extern const gpk__problem_ops gpk__qap_ops, gpk__tsp_ops, gpk__ppp_ops;
static const gpk__problem_ops *const problems[] = {&gpk__qap_ops, &gpk__tsp_ops, &gpk__ppp_ops};

const gpk__problem_ops *gpk__problem(gpk_problem_kind kind)
{
    for (size_t i = 0; i < sizeof problems / sizeof *problems; i++)
        if (problems[i]->kind == kind) return problems[i];
    return NULL;
}

const char *gpk_problem_name(gpk_problem_kind kind)
{
    const gpk__problem_ops *ops = gpk__problem(kind);
    return ops ? ops->command : "unknown";
}

gpk_status gpk_problem_parse(const char *name, gpk_problem_kind *out)
{
    if (!name || !out) return gpk__fail(NULL, GPK_EINVAL, "gpk_problem_parse: NULL argument");
    for (size_t i = 0; i < sizeof problems / sizeof *problems; i++)
        if (strcmp(name, problems[i]->command) == 0) {
            *out = problems[i]->kind;
            return GPK_OK;
        }
    return gpk__fail(NULL, GPK_EINVAL, "unknown problem '%.40s' (qap, tsp, ppp)", name);
}

int gpk_search_nb_applies(gpk_problem_kind kind, gpk_neighbourhood nb)
{
    const gpk__problem_ops *ops = gpk__problem(kind);
    if (!ops) return 0;
    return nb == GPK_NB_DEFAULT || ((unsigned)nb < 32 && (ops->nbs & GPK__NB_BIT(nb)));
}

/* The instance of pb checked and described (fingerprint: NULL, or see
 * problem.h); the table, or NULL after a message (gpk_last_error(NULL)). */
static const gpk__problem_ops *describe(const char *fn, const gpk_search_problem *pb,
                                        gpk_search_problem_info *info, uint64_t *fingerprint)
{
    const gpk__problem_ops *ops = gpk__problem(pb->kind);
    if (!ops) {
        gpk__fail(NULL, GPK_EINVAL, "%s: unknown problem kind %d", fn, (int)pb->kind);
        return NULL;
    }
    memset(info, 0, sizeof *info);
    const char *why = "";
    if (ops->describe(pb, info, fingerprint, &why) == GPK_OK) return ops;
    gpk__fail(NULL, GPK_EINVAL, "%s: %s", fn, why);
    return NULL;
}

gpk_status gpk_search_problem_describe(const gpk_search_problem *pb, gpk_search_problem_info *info)
{
    if (!pb || !info) return gpk__fail(NULL, GPK_EINVAL, "gpk_search_problem_describe: NULL argument");
    return describe("gpk_search_problem_describe", pb, info, NULL) ? GPK_OK : GPK_EINVAL;
}

gpk_status gpk_search_problem_fingerprint(const gpk_search_problem *pb, uint64_t *fingerprint)
{
    if (!pb || !fingerprint)
        return gpk__fail(NULL, GPK_EINVAL, "gpk_search_problem_fingerprint: NULL argument");
    gpk_search_problem_info info;
    return describe("gpk_search_problem_fingerprint", pb, &info, fingerprint) ? GPK_OK : GPK_EINVAL;
}

gpk_status gpk_search_problem_cost(const gpk_search_problem *pb, const uint32_t *solution, int64_t *cost)
{
    if (!pb || !solution || !cost)
        return gpk__fail(NULL, GPK_EINVAL, "gpk_search_problem_cost: NULL argument");
    gpk_search_problem_info info;
    const gpk__problem_ops *ops = describe("gpk_search_problem_cost", pb, &info, NULL);
    if (!ops) return GPK_EINVAL;
    const gpk_status st = ops->cost(pb, solution, cost);
    return st == GPK_OK ? st : gpk__fail(NULL, st, "gpk_search_problem_cost: out of memory (n = %u)", info.n);
}

/* Default tabu tenures (iterations a move stays tabu), chosen per problem
 * and attribute (each problem's default_tenure; src/search/search_cpu.c
 * says which attribute):
 *  - QAP swap: each move draws its tenure, so that no fixed length can
 *    cycle (Taillard's robust tabu search: uniformly in 0.9 t .. 1.1 t in
 *    1991, 8n u^3 with mean 2n in his 2006 code). Below n = 20: uniform in
 *    2n +- 10 %: 2n reached the optimum of chr12a, tai12a, nug15 more often
 *    than n (10 x 1000 ITS). From n = 20: n/2 + 6n u^3, u uniform in
 *    [0, 1): mean 2n, from n/2 to 6.5n, short tenures more often than long
 *    ones. On tai20a..tai100a (3 seeds, 100 x 1000 ITS) the summed mean
 *    gaps were 6.58 % with 2n +- 10 %, 5.73 % with n +- 10 %, 5.28 % with
 *    8n u^3, 4.96 % with n/2 + 6n u^3, 6.18 % with n + 4n u^3; on 13
 *    instances of the chr, bur, nug, ste, had, rou, scr and tai*b families
 *    n/2 + 6n u^3 did as well as 2n +- 10 % at 100 x 1000 (tai50b worse,
 *    chr25a, ste36a, tai80b, tai100b better), where n +- 10 % lost on
 *    chr20a and tai50b (docs/perf/search.md). At n = 12 with 10 rounds it
 *    left chr12a 5.7 % above the optimum in 1 run of 50 (2n +- 10 %: 0),
 *    hence the old rule below 20. opts.tenure fixes the tenure instead;
 *  - TSP swap: 2n. The attribute is (element, position) and a move is
 *    tabu only when it would put BOTH elements back, a weak restriction;
 *  - TSP 2-opt: n / 2 (at least 5) on the (i, j) pair, whose repetition is
 *    exactly the move that undoes it;
 *  - PPP 1-flip: n / 4 (at least 2) on the flipped bit (of n / 6 ... n / 2,
 *    n / 4 solved the most generated instances m = n = 21, 31, 51 within
 *    10 x 1000 ITS); PPP 2-flip: n / 10 (at least 2) on each of the two
 *    bits (tabu when either is, so each move freezes two bits). */

/* The paper's 10 x 1000 everywhere, except the QAP ITS: 100 rounds. From
 * n = 20 10 000 tabu iterations leave the robust tabu search 0.2 to 1.5 %
 * above the best known on tai*a, and 100 rounds of 1000 (10^5 iterations)
 * took the average of the mean gaps over tai10a..tai100a from 0.71 % to
 * under 0.5 %. Below n = 20 ten rounds miss the optimum of chr12a in 4
 * seeds of 1000 (3 of them 5.7 % above) and of had12 in 104, where 100
 * rounds found both in every seed tried (docs/perf/search.md). On the GPU
 * an iteration costs about 20 us at n = 20 to 55 us at n = 100 (a launch
 * and one 32-byte copy), so a run takes 2 to 5.5 s; on one CPU thread an
 * n = 12 run takes 0.3 s. An unknown kind: the paper's 10. */
uint32_t gpk_search_default_global_iters(gpk_problem_kind kind, gpk_search_algo algo, uint32_t n)
{
    const gpk__problem_ops *ops = gpk__problem(kind);
    return ops ? ops->default_global_iters(algo, n) : gpk__paper_global_iters(algo, n);
}

uint32_t gpk__paper_global_iters(gpk_search_algo algo, uint32_t n)
{
    (void)algo;
    (void)n;
    return 10;
}

/* An unknown kind: GPK_NB_DEFAULT (which gpk_search_run then rejects with
 * the kind). */
gpk_neighbourhood gpk_search_default_nb(gpk_problem_kind kind)
{
    const gpk__problem_ops *ops = gpk__problem(kind);
    return ops ? ops->default_nb : GPK_NB_DEFAULT;
}

gpk_neighbourhood gpk_search_paper_nb(gpk_problem_kind kind)
{
    const gpk__problem_ops *ops = gpk__problem(kind);
    return ops ? ops->paper_nb : GPK_NB_DEFAULT;
}

/* The defaults are the best real-use configurations measured
 * (docs/perf/search.md): for a TSP, 2-opt and Or-opt over neighbour lists
 * in an iterated local search, one per thread (multistart), for 10 s
 * (every TSPLIB instance of 100 to 1000 cities within 0.5 % on 2 cores);
 * for QAP the robust iterated tabu search (100 x 1000); for
 * PPP the iterated tabu search. The paper's reproduction is its with the
 * 2-opt (TSP) neighbourhood and 10 x 1000 iterations. An unknown kind is
 * left as it is (gpk_search_run rejects it). */
void gpk_search_opts_resolve(gpk_problem_kind kind, gpk_search_opts *o)
{
    const gpk__problem_ops *ops = gpk__problem(kind);
    if (!o || !ops) return;
    const int auto_algo = o->algo == GPK_SEARCH_AUTO;
    if (o->nb == GPK_NB_DEFAULT) o->nb = ops->default_nb;
    if (auto_algo) o->algo = ops->auto_algo(o->nb);
    if (auto_algo && ops->auto_seconds > 0 && o->time_limit == 0.0 && o->iters == 0 && o->global_iters == 0)
        o->time_limit = ops->auto_seconds;
}

int gpk__search_should_stop(const gpk__search_cfg *c)
{
    if (c->cancel && *c->cancel) return 1;
    return c->deadline > 0 && omp_get_wtime() >= c->deadline;
}

/* The problem's table and instance into c (kind, the instance pointers, n). */
static gpk_status bind_problem(gpk_ctx *ctx, const gpk_search_problem *problem, gpk__search_cfg *c,
                               const gpk__problem_ops **out)
{
    const gpk__problem_ops *ops = gpk__problem(problem->kind);
    if (!ops)
        return gpk__fail(ctx, GPK_EINVAL, "gpk_search_run: unknown problem kind %d", (int)problem->kind);
    gpk_search_problem_info info;
    const char *why = "";
    memset(&info, 0, sizeof info);
    if (ops->describe(problem, &info, NULL, &why) != GPK_OK)
        return gpk__fail(ctx, GPK_EINVAL, "gpk_search_run: %s", why);
    c->kind = problem->kind;
    c->ops = ops;
    c->qap = problem->qap;
    c->tsp = problem->tsp;
    c->ppp = problem->ppp;
    c->n = info.n;
    if (c->n < ops->n_min)
        return gpk__fail(ctx, GPK_EINVAL, "gpk_search_run: %s with n = %u: at least %u needed", ops->name,
                         c->n, ops->n_min);
    *out = ops;
    return GPK_OK;
}

/* The neighbourhood, algorithm and evaluation choices of opts into c. */
static gpk_status bind_choices(gpk_ctx *ctx, const gpk__problem_ops *ops, const gpk_search_opts *opts,
                               const gpk_search_opts *given, gpk__search_cfg *c)
{
    c->nb = opts->nb;
    if ((unsigned)c->nb >= 32 || !(ops->nbs & GPK__NB_BIT(c->nb)))
        return gpk__fail(ctx, GPK_EINVAL, "gpk_search_run: neighbourhood '%s' does not apply to %s (%s)",
                         gpk_neighbourhood_name(c->nb), ops->name, ops->nb_list);
    c->algo = opts->algo;
    if ((unsigned)c->algo > GPK_SEARCH_MULTISTART)
        return gpk__fail(ctx, GPK_EINVAL, "gpk_search_run: unknown algorithm %d", (int)given->algo);
    if ((unsigned)opts->eval > GPK_SEARCH_EVAL_PAPER)
        return gpk__fail(ctx, GPK_EINVAL, "gpk_search_run: unknown evaluation mode %d", (int)opts->eval);
    if ((unsigned)opts->qap_delta > GPK_QAP_DELTA_FORMULA)
        return gpk__fail(ctx, GPK_EINVAL, "gpk_search_run: unknown qap_delta %d", (int)opts->qap_delta);
    c->eval = opts->eval;
    c->qap_delta = opts->qap_delta;
    c->cancel = opts->cancel;
    return GPK_OK;
}

/* The budget: iterations, rounds, or2opt kicks and tabu tenures, resolved
 * per algorithm and problem. */
static void resolve_budget(const gpk__problem_ops *ops, const gpk_search_opts *opts, double deadline,
                           gpk__search_cfg *c)
{
    switch (c->algo) {
    case GPK_SEARCH_HC_BEST:
    case GPK_SEARCH_HC_FIRST: c->iters = opts->iters; break; /* 0: until a local optimum */
    case GPK_SEARCH_TABU: c->iters = opts->iters ? opts->iters : 10000; break;
    default: c->iters = opts->iters ? opts->iters : 1000; break; /* the paper's 10 x 1000 */
    }
    c->global_iters = opts->global_iters ? opts->global_iters : ops->default_global_iters(c->algo, c->n);
    /* A time limit is a budget the caller granted: with no iteration count
     * a search that has not converged (hc converges at its local optimum,
     * a PPP when solved) keeps going until it. */
    const int hc = c->algo == GPK_SEARCH_HC_BEST || c->algo == GPK_SEARCH_HC_FIRST;
    const int until_limit =
        deadline > 0 && !hc && opts->iters == 0 && (c->algo == GPK_SEARCH_TABU || opts->global_iters == 0);
    if (until_limit && c->algo == GPK_SEARCH_TABU) c->iters = UINT64_MAX;
    else if (until_limit) c->global_iters = UINT32_MAX;
    /* or2opt: the ILS kicks per run: tabu `iters`, its and multistart
     * global_iters x iters, with the same defaults; with a time limit and
     * no iteration count, as many as the time allows. */
    if (c->nb == GPK_NB_OR_OPT && !hc) {
        if (until_limit || (opts->iters == 0 && deadline > 0)) c->kicks = 0;
        else if (c->algo == GPK_SEARCH_TABU) c->kicks = c->iters;
        else c->kicks = c->iters * c->global_iters;
    }
    c->tenure = opts->tenure ? opts->tenure : ops->default_tenure(c->nb, c->n);
    /* By default some problems draw each move's tenure (default_tenure above). */
    if (!opts->tenure && ops->tenure_draw)
        ops->tenure_draw(c->n, &c->tenure, &c->tenure_spread, &c->tenure_cube);
    /* ITS perturbation: enough random moves to leave the basin of the best
     * solution, few enough to keep most of its structure. Measured on QAPLIB
     * (50 seeds each): 5 moves took chr12a from 38/50 optimal runs (3 moves)
     * to 50/50 and had12 from 35 to 47, with no loss on nug30, tai30a. */
    c->perturb = c->n / 6 < 5 ? 5 : c->n / 6;
}

/* The solution format check of gpk_search_problem_check_solution, the
 * message without a prefix. */
static gpk_status check_solution(gpk_ctx *ctx, const gpk__problem_ops *ops, const uint32_t *s, uint32_t n)
{
    if (ops->binary) {
        for (uint32_t i = 0; i < n; i++)
            if (s[i] > 1) return gpk__fail(ctx, GPK_EINVAL, "solution: bit %u is %u, not 0 or 1", i, s[i]);
        return GPK_OK;
    }
    unsigned char *seen = calloc(n, 1);
    if (!seen) return gpk__fail(ctx, GPK_ENOMEM, "out of memory (n = %u)", n);
    gpk_status st = GPK_OK;
    for (uint32_t i = 0; i < n && st == GPK_OK; i++) {
        if (s[i] >= n || seen[s[i]])
            st = gpk__fail(ctx, GPK_EINVAL, "solution is not a permutation of 0..%u: entry %u is %u (%s)",
                           n - 1, i, s[i], s[i] >= n ? "out of range" : "repeated");
        else seen[s[i]] = 1;
    }
    free(seen);
    return st;
}

gpk_status gpk_search_problem_check_solution(const gpk_search_problem *pb, const uint32_t *solution)
{
    if (!pb || !solution)
        return gpk__fail(NULL, GPK_EINVAL, "gpk_search_problem_check_solution: NULL argument");
    gpk_search_problem_info info;
    const gpk__problem_ops *ops = describe("gpk_search_problem_check_solution", pb, &info, NULL);
    return ops ? check_solution(NULL, ops, solution, info.n) : GPK_EINVAL;
}

/* A start solution must be in the problem's format. */
static gpk_status check_start(gpk_ctx *ctx, const gpk__problem_ops *ops, const uint32_t *s, uint32_t n)
{
    const gpk_status st = check_solution(ctx, ops, s, n);
    if (st == GPK_OK) return st;
    char msg[GPK_ERRLEN];
    snprintf(msg, sizeof msg, "%s", gpk_last_error(ctx));
    return gpk__fail(ctx, st, "gpk_search_run: %s%s", st == GPK_ENOMEM ? "" : "start ", msg);
}

/* gpk_search_run with the deadline already fixed (0: none), so that the
 * runs of gpk_search_run_multi share one. */
static gpk_status search_run_until(gpk_ctx *ctx, const gpk_search_problem *problem,
                                   const gpk_search_opts *given, double deadline, gpk_search_result *result)
{
    if (!ctx) return gpk__fail(NULL, GPK_EINVAL, "gpk_search_run: ctx is NULL");
    if (!problem || !given || !result)
        return gpk__fail(ctx, GPK_EINVAL, "gpk_search_run: NULL %s",
                         !problem     ? "problem"
                             : !given ? "opts"
                                      : "result");
    gpk_search_opts resolved = *given;
    gpk_search_opts_resolve(problem->kind, &resolved);
    const gpk_search_opts *opts = &resolved;
    memset(result, 0, sizeof *result);
    gpk__search_cfg c;
    memset(&c, 0, sizeof c);
    const gpk__problem_ops *ops = NULL;
    gpk_status st = bind_problem(ctx, problem, &c, &ops);
    if (st == GPK_OK) st = bind_choices(ctx, ops, opts, given, &c);
    if (st != GPK_OK) return st;
    c.deadline = deadline;
    resolve_budget(ops, opts, deadline, &c);
    c.threads = ctx->threads >= 1 ? ctx->threads : 1;
    c.starts = opts->starts ? opts->starts : (uint32_t)c.threads;
    c.seed = opts->seed;
    c.progress = opts->progress;
    c.user = opts->user;
    c.progress_every = opts->progress_every ? opts->progress_every : 1000;
    if (opts->start) {
        st = check_start(ctx, ops, opts->start, c.n);
        if (st != GPK_OK) return st;
        c.start = opts->start;
    }
    /* Every backend: the CPU driver; on a CUDA context it evaluates on the GPU. */
    st = gpk__search_cpu(ctx, &c, result);
    if (st == GPK_OK) result->runs = 1;
    return st;
}

/* The deadline of a time limit that starts now (0: none). */
static gpk_status deadline_of(gpk_ctx *ctx, const gpk_search_opts *opts, double *deadline)
{
    *deadline = 0.0;
    const double t = opts->time_limit;
    if (t != t || t < 0.0) return gpk__fail(ctx, GPK_EINVAL, "gpk_search_run: time_limit %g is not >= 0", t);
    if (t > 0.0) *deadline = omp_get_wtime() + t;
    return GPK_OK;
}

gpk_status gpk_search_run(gpk_ctx *ctx, const gpk_search_problem *problem, const gpk_search_opts *opts,
                          gpk_search_result *result)
{
    if (!ctx) return gpk__fail(NULL, GPK_EINVAL, "gpk_search_run: ctx is NULL");
    if (!opts) return gpk__fail(ctx, GPK_EINVAL, "gpk_search_run: NULL opts");
    if (!problem) return gpk__fail(ctx, GPK_EINVAL, "gpk_search_run: NULL problem");
    gpk_search_opts resolved = *opts;
    gpk_search_opts_resolve(problem->kind, &resolved);
    double deadline;
    gpk_status st = deadline_of(ctx, &resolved, &deadline);
    if (st != GPK_OK) return st;
    return search_run_until(ctx, problem, &resolved, deadline, result);
}

/* gpk_search_run_multi's progress: every run's counts go to the tally;
 * context 0's runs report the totals of all runs, as the result counts. */
typedef struct multi_report {
    gpk__tally *tally;
    uint32_t run;
    int reports;
    const gpk_search_opts *opts;
} multi_report;

static void multi_progress(const gpk_search_progress *p, void *user)
{
    const multi_report *m = user;
    gpk__tally_put(m->tally, m->run, p->iteration, p->evaluated, p->best);
    if (!m->reports) return;
    gpk_search_progress t = *p;
    gpk__tally_sum(m->tally, &t);
    m->opts->progress(&t, m->opts->user);
}

gpk_status gpk_search_run_multi(gpk_ctx *const *ctxs, int count, const gpk_search_problem *problem,
                                const gpk_search_opts *opts, gpk_search_result *result)
{
    if (!ctxs || count < 1 || !ctxs[0])
        return gpk__fail(ctxs && count >= 1 ? ctxs[0] : NULL, GPK_EINVAL,
                         "gpk_search_run_multi: no contexts (count %d)", count);
    gpk_ctx *c0 = ctxs[0];
    if (!problem || !opts || !result)
        return gpk__fail(c0, GPK_EINVAL, "gpk_search_run_multi: NULL %s",
                         !problem    ? "problem"
                             : !opts ? "opts"
                                     : "result");
    for (int g = 0; g < count; g++) {
        if (!ctxs[g]) return gpk__fail(c0, GPK_EINVAL, "gpk_search_run_multi: context %d is NULL", g);
        for (int h = 0; h < g; h++)
            if (ctxs[h] == ctxs[g])
                return gpk__fail(c0, GPK_EINVAL,
                                 "gpk_search_run_multi: contexts %d and %d are the same (one per "
                                 "thread)",
                                 h, g);
    }
    memset(result, 0, sizeof *result);
    gpk_search_opts resolved = *opts;
    gpk_search_opts_resolve(problem->kind, &resolved);
    opts = &resolved;
    const uint32_t runs = opts->starts ? opts->starts : (uint32_t)count;
    gpk_search_result *rs = calloc(runs, sizeof *rs);
    gpk_status *sts = calloc(runs, sizeof *sts);
    if (!rs || !sts) {
        free(rs);
        free(sts);
        return gpk__fail(c0, GPK_ENOMEM, "gpk_search_run_multi: out of memory for %u runs", runs);
    }
    for (uint32_t r = 0; r < runs; r++) sts[r] = GPK_EINVAL; /* not run */
    double deadline;
    if (deadline_of(c0, opts, &deadline) != GPK_OK) {
        free(rs);
        free(sts);
        return GPK_EINVAL;
    }
    const double t0 = omp_get_wtime();
    gpk__tally tally;
    memset(&tally, 0, sizeof tally);
    const int tallied = opts->progress && gpk__tally_init(&tally, runs) == 0;
    const int threads = (uint32_t)count < runs ? count : (int)runs;
    /* One host thread per context (Algorithm 2); thread g runs g, g + count, ... */
#pragma omp parallel for num_threads(threads) schedule(static, 1) if (threads > 1)
    for (int g = 0; g < threads; g++) {
        for (uint32_t r = (uint32_t)g; r < runs; r += (uint32_t)count) {
            gpk_search_opts o;
            gpk__search_multi_run_opts(problem->kind, opts, r, &o);
            multi_report mr = {&tally, r, g == 0, opts};
            if (tallied) o.progress = multi_progress, o.user = &mr; /* the calling thread reports */
            else if (g != 0) o.progress = NULL;
            sts[r] = search_run_until(ctxs[g], problem, &o, deadline, &rs[r]);
            if (sts[r] != GPK_OK) break;
            if (tallied) gpk__tally_put(&tally, r, rs[r].iterations, rs[r].evaluated, rs[r].best);
        }
    }
    gpk_status st = GPK_OK;
    uint32_t best = 0;
    for (uint32_t r = 0; r < runs; r++) {
        if (sts[r] != GPK_OK) {
            gpk_ctx *bad = ctxs[r % (uint32_t)count];
            char msg[GPK_ERRLEN];
            snprintf(msg, sizeof msg, "%s", gpk_last_error(bad));
            st = gpk__fail(c0, sts[r], "gpk_search_run_multi: run %u (context %u): %s", r,
                           r % (uint32_t)count, msg);
            break;
        }
        result->iterations += rs[r].iterations;
        result->evaluated += rs[r].evaluated;
        result->gpu_evaluated += rs[r].gpu_evaluated;
        if (rs[r].best < rs[best].best) best = r; /* ties: the lowest run */
        if (rs[r].stopped > result->stopped) result->stopped = rs[r].stopped;
    }
    if (st == GPK_OK) {
        result->best = rs[best].best;
        result->n = rs[best].n;
        result->solution = rs[best].solution;
        result->local_optimum = rs[best].local_optimum;
        rs[best].solution = NULL;
        result->runs = runs;
        result->best_run = best;
        result->ms = (omp_get_wtime() - t0) * 1e3;
    }
    for (uint32_t r = 0; r < runs; r++) gpk_search_result_free(&rs[r]);
    gpk__tally_free(&tally);
    free(rs);
    free(sts);
    return st;
}
