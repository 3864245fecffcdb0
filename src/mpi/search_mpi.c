/* The local search's multistart across MPI ranks (include/gpk/mpi.h,
 * gpk_mpi_search_multistart): the runs of gpk_search_run_multi spread over
 * the contexts of every rank.
 *
 * One call is four steps, each ending in a collective that every rank
 * reaches whatever happened before it, so that an error on one rank is an
 * error on all and never a hang:
 *  1. agreement: each rank checks its own arguments and hashes the instance
 *     and the options; one MPI_Allgather lets every rank see every rank's
 *     verdict and hashes and stop on the same message;
 *  2. the runs: one thread per local context runs that context's runs with
 *     gpk_search_run, while the calling thread (the only one that calls
 *     MPI) watches the caller's cancel flag and the other ranks: a stop on
 *     one rank is sent to all the others, which stop their runs too;
 *  3. the end of the stop messages: an MPI_Ibarrier (still watching, so a
 *     rank done early still passes a stop on), then an MPI_Allreduce of how
 *     many ranks sent stops, so that each rank receives every stop sent to
 *     it and no message is left in flight; while watching, every rank sends
 *     the others a heartbeat every quarter of the communicator's timeout,
 *     so a rank done early tells a rank still running from a silent one
 *     (include/gpk/mpi.h, "bounded waits"), and every later wait is bounded;
 *  4. the results: an MPI_Allgather of each rank's verdict, an
 *     MPI_Allgatherv of the per-run records, and the best run's solution
 *     broadcast by the rank that found it.
 * Memory a later step needs is allocated before the collective that
 * decides whether to go on, so that a failed allocation is a verdict too. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep */
#include "mpi_internal.h"
#include "../search/search_run.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FN "gpk_mpi_search_multistart"
#define TAG_STOP 1717
#define TAG_BEAT 1718 /* "still here": a rank's runs may outlast the communicator's timeout */
#define MSG_LEN 448
/* The watcher's pause between two looks at the flags and the messages: a
 * stop reaches the other ranks' runs within a few of these. */
#define WATCH_NS 1000000L

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void pause_watch(void)
{
    struct timespec t = {0, WATCH_NS};
    nanosleep(&t, NULL);
}

/* ---- step 1: agreement ---------------------------------------------------------- */

/* What each rank tells the others before any run. Exchanged as bytes: the
 * ranks are one program on one kind of machine. */
typedef struct agree_rec {
    int32_t status; /* this rank's own verdict on its arguments */
    int32_t count;  /* its contexts */
    int32_t kind, algo, nb, eval, qap_delta, have_start;
    uint32_t n, global_iters, tenure, starts;
    uint64_t iters, seed, data_hash, start_hash;
    double time_limit;
    char name[64];
    char msg[MSG_LEN];
} agree_rec;

/* The options every rank must give alike, as gpk_search_opts has them:
 * copied into the record and compared with rank 0's (time_limit and the
 * start solution apart). X(field, what, fmt, cast): in a message, the
 * field is `what`, printed as (cast) with fmt. */
#define AGREED_OPTIONS(X)                           \
    X(algo, "algo", "%d", int)                      \
    X(nb, "neighbourhood", "%d", int)               \
    X(iters, "iters", "%llu", unsigned long long)   \
    X(global_iters, "global_iters", "%u", unsigned) \
    X(tenure, "tenure", "%u", unsigned)             \
    X(starts, "starts", "%u", unsigned)             \
    X(seed, "seed", "%llu", unsigned long long)     \
    X(eval, "eval", "%d", int)                      \
    X(qap_delta, "qap_delta", "%d", int)

static const char *kind_name(int32_t k) { return gpk_problem_name((gpk_problem_kind)k); }

/* Fills a (status and message on a bad argument) from this rank's view. */
static void describe(agree_rec *a, gpk_ctx *const *ctxs, int count, const gpk_search_problem *pb,
                     const gpk_search_opts *o, const gpk_search_result *result)
{
    memset(a, 0, sizeof *a);
    a->count = count;
#define BAD(...)                                      \
    do {                                              \
        a->status = GPK_EINVAL;                       \
        snprintf(a->msg, sizeof a->msg, __VA_ARGS__); \
        return;                                       \
    } while (0)
    if (!ctxs || count < 1) BAD("no contexts (count %d)", count);
    for (int g = 0; g < count; g++) {
        if (!ctxs[g]) BAD("context %d is NULL", g);
        for (int h = 0; h < g; h++)
            if (ctxs[h] == ctxs[g]) BAD("contexts %d and %d are the same (one per thread)", h, g);
    }
    if (!pb || !o || !result) BAD("NULL %s", !pb ? "problem" : !o ? "opts" : "result");
    a->kind = (int32_t)pb->kind;
    gpk_search_problem_info info;
    if (gpk_search_problem_describe(pb, &info) != GPK_OK ||
        gpk_search_problem_fingerprint(pb, &a->data_hash) != GPK_OK)
        BAD("%s", gpk_last_error(NULL));
    a->n = info.n;
    snprintf(a->name, sizeof a->name, "%s", info.name);
#undef BAD
#define COPY(field, what, fmt, cast) a->field = o->field;
    AGREED_OPTIONS(COPY)
#undef COPY
    a->time_limit = o->time_limit;
    a->have_start = o->start != NULL;
    if (o->start) a->start_hash = gpk__fingerprint(0, o->start, (size_t)a->n * sizeof *o->start);
}

/* The first option in which b differs from a, or NULL. */
static const char *opts_differ(const agree_rec *a, const agree_rec *b, char *buf, size_t len)
{
#define CMP(field, what, fmt, cast)                                                            \
    if (a->field != b->field) {                                                                \
        snprintf(buf, len, "%s " fmt ", rank 0's " fmt, what, (cast)b->field, (cast)a->field); \
        return buf;                                                                            \
    }
    AGREED_OPTIONS(CMP)
    CMP(have_start, "a start solution given", "%d", int)
    CMP(start_hash, "start solution (hash)", "%016llx", unsigned long long)
#undef CMP
    if (memcmp(&a->time_limit, &b->time_limit, sizeof a->time_limit) != 0) {
        snprintf(buf, len, "time_limit %g, rank 0's %g", b->time_limit, a->time_limit);
        return buf;
    }
    return NULL;
}

/* Every rank runs this on the same records, so all reach the same verdict
 * and message. */
static gpk_status agree(const agree_rec *all, int size, char *msg, size_t len)
{
    for (int r = 0; r < size; r++)
        if (all[r].status != GPK_OK) {
            snprintf(msg, len, FN ": rank %d: %s", r, all[r].msg);
            return (gpk_status)all[r].status;
        }
    const agree_rec *a = &all[0];
    for (int r = 1; r < size; r++) {
        const agree_rec *b = &all[r];
        if (b->kind != a->kind || b->n != a->n || b->data_hash != a->data_hash) {
            snprintf(msg, len,
                     FN
                     ": rank %d's problem differs from rank 0's: %s '%s' n=%u (data hash %016llx), rank 0 %s "
                     "'%s' n=%u (%016llx); every rank must read the same instance",
                     r, kind_name(b->kind), b->name, b->n, (unsigned long long)b->data_hash,
                     kind_name(a->kind), a->name, a->n, (unsigned long long)a->data_hash);
            return GPK_EINVAL;
        }
        char why[200];
        if (opts_differ(a, b, why, sizeof why)) {
            snprintf(msg, len,
                     FN ": rank %d's options differ from rank 0's: %s; every rank must pass the same", r,
                     why);
            return GPK_EINVAL;
        }
    }
    return GPK_OK;
}

/* ---- step 2: the runs --------------------------------------------------------------- */

/* One run's outcome, exchanged as bytes in step 4. */
typedef struct run_rec {
    uint32_t run;
    gpk_mpi_search_run record; /* as the caller gets it in runs[run] */
} run_rec;

typedef struct shared {
    const gpk_search_problem *problem;
    const gpk_search_opts *opts;
    double deadline;            /* now_s() at the time limit; 0: none */
    volatile sig_atomic_t stop; /* the runs' cancel flag: set by the watcher */
    atomic_int failed;          /* a run failed on this rank */
    atomic_int done;            /* workers finished */
    int rank;
    uint32_t runs;
    /* the progress reports' totals: this rank's workers, and (rank 0) the
     * other ranks' counts as their last heartbeats said */
    struct worker *ws;
    int nw, nranks;
    _Atomic uint64_t *remote; /* 3 per rank: iterations, evaluated, best (int64 bits) */
} shared;

typedef struct worker {
    shared *sh;
    gpk_ctx *ctx;
    int reports; /* passes opts->progress on (ctxs[0]'s runs) */
    uint32_t first, step;
    run_rec *recs; /* one per run of this worker, in run order */
    uint32_t nrec;
    gpk_status st;
    char msg[MSG_LEN];
    int64_t best; /* this worker's best run (ties: the lowest r, the first met) */
    uint32_t best_run;
    uint32_t *best_sol; /* NULL until a run succeeded */
    /* counts for the progress reports: finished runs, the running one */
    _Atomic uint64_t done_it, done_ev, live_it, live_ev;
    _Atomic int64_t best_seen;
} worker;

/* This rank's counts so far (with rank 0's view of the others' when all). */
static void totals(const shared *sh, int all, uint64_t *it, uint64_t *ev, int64_t *best)
{
    *it = *ev = 0;
    *best = INT64_MAX;
    for (int g = 0; g < sh->nw; g++) {
        worker *w = &sh->ws[g];
        *it += atomic_load(&w->done_it) + atomic_load(&w->live_it);
        *ev += atomic_load(&w->done_ev) + atomic_load(&w->live_ev);
        const int64_t b = atomic_load(&w->best_seen);
        if (b < *best) *best = b;
    }
    for (int r = 0; all && sh->remote && r < sh->nranks; r++) {
        if (r == sh->rank) continue;
        *it += atomic_load(&sh->remote[3 * r]);
        *ev += atomic_load(&sh->remote[3 * r + 1]);
        const int64_t b = (int64_t)atomic_load(&sh->remote[3 * r + 2]);
        if (b < *best) *best = b;
    }
}

/* Every run's progress: kept for the totals; ctxs[0]'s runs report the
 * totals of every run of every rank to the caller (on rank 0; the other
 * ranks' reports count their own runs). */
static void worker_progress(const gpk_search_progress *p, void *user)
{
    worker *w = user;
    atomic_store(&w->live_it, p->iteration);
    atomic_store(&w->live_ev, p->evaluated);
    if (p->best < atomic_load(&w->best_seen)) atomic_store(&w->best_seen, p->best);
    if (!w->reports || !w->sh->opts->progress) return;
    gpk_search_progress t = *p;
    totals(w->sh, 1, &t.iteration, &t.evaluated, &t.best);
    w->sh->opts->progress(&t, w->sh->opts->user);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    shared *sh = w->sh;
    const gpk_search_opts *opts = sh->opts;
    for (uint32_t r = w->first; r < sh->runs; r += w->step) {
        gpk_search_opts o;
        gpk__search_multi_run_opts(sh->problem->kind, opts, r, &o); /* as gpk_search_run_multi's run r */
        o.cancel = &sh->stop;
        o.progress = worker_progress, o.user = w; /* the counts for every rank's reports */
        if (sh->deadline > 0) {
            /* the limit counts from the call for every run */
            const double left = sh->deadline - now_s();
            o.time_limit = left > 1e-9 ? left : 1e-9;
        }
        gpk_search_result res;
        const gpk_status st = gpk_search_run(w->ctx, sh->problem, &o, &res);
        if (st != GPK_OK) {
            w->st = st;
            snprintf(w->msg, sizeof w->msg, "run %u: %s", r, gpk_last_error(w->ctx));
            atomic_store(&sh->failed, 1);
            break;
        }
        atomic_fetch_add(&w->done_it, res.iterations);
        atomic_fetch_add(&w->done_ev, res.evaluated);
        atomic_store(&w->live_it, 0);
        atomic_store(&w->live_ev, 0);
        if (res.best < atomic_load(&w->best_seen)) atomic_store(&w->best_seen, res.best);
        run_rec *rc = &w->recs[w->nrec++];
        rc->run = r;
        rc->record.rank = sh->rank;
        rc->record.stopped = res.stopped;
        rc->record.local_optimum = res.local_optimum;
        rc->record.best = res.best;
        rc->record.iterations = res.iterations;
        rc->record.evaluated = res.evaluated;
        rc->record.gpu_evaluated = res.gpu_evaluated;
        rc->record.ms = res.ms;
        if (!w->best_sol || res.best < w->best) {
            free(w->best_sol);
            w->best_sol = res.solution;
            res.solution = NULL;
            w->best = res.best;
            w->best_run = r;
        }
        gpk_search_result_free(&res);
    }
    atomic_fetch_add(&sh->done, 1);
    return NULL;
}

/* The stop messages (steps 2 and 3): each rank sends at most once, to every
 * other rank, when its caller cancels or one of its runs fails. */
typedef struct stopper {
    MPI_Comm comm;
    int rank, size;
    int code_in, got; /* the one receive kept posted */
    MPI_Request rreq;
    int sent, code_out;
    MPI_Request *sreqs;      /* size entries */
    double limit;            /* the communicator's timeout (0: none) */
    double beat_at;          /* when this rank next says it is still here, to all */
    double count_at;         /* when this rank next sends rank 0 its counts */
    double *heard;           /* size entries: when each rank was last heard from */
    uint64_t (*out)[3];      /* size entries: the heartbeat in flight to each rank */
    MPI_Request *breqs;      /* size entries: its request */
    int *sent_to, *got_from; /* size entries: heartbeats sent to, received from each rank */
    uint64_t in[3];
} stopper;

/* The heartbeats: every rank sends every other one its counts (this rank's
 * iterations, evaluated, best) every quarter of the timeout, so a rank
 * whose runs ended tells a rank still running from a silent one; and every
 * rank but 0 sends them to rank 0 every REPORT_S, so that rank 0's progress
 * reports count every rank's runs. A heartbeat whose predecessor to the
 * same rank is still in flight waits for the next turn. */
#define REPORT_S 0.25
static int send_beat(stopper *sp, const shared *sh, int r)
{
    if (sp->breqs[r] != MPI_REQUEST_NULL) {
        int flag = 0;
        const int e = MPI_Test(&sp->breqs[r], &flag, MPI_STATUS_IGNORE);
        if (e != MPI_SUCCESS || !flag) return e;
    }
    int64_t best;
    totals(sh, 0, &sp->out[r][0], &sp->out[r][1], &best);
    sp->out[r][2] = (uint64_t)best;
    const int e = MPI_Isend(sp->out[r], 3, MPI_UINT64_T, r, TAG_BEAT, sp->comm, &sp->breqs[r]);
    if (e == MPI_SUCCESS) sp->sent_to[r]++;
    return e;
}

static int beat(stopper *sp, shared *sh)
{
    const double t = now_s();
    const int all = sp->limit > 0 && t >= sp->beat_at;
    const int counts = sp->rank != 0 && t >= sp->count_at;
    for (int r = 0; (all || counts) && r < sp->size; r++) {
        if (r == sp->rank || (!all && r != 0)) continue;
        const int e = send_beat(sp, sh, r);
        if (e != MPI_SUCCESS) return e;
    }
    if (all) sp->beat_at = t + sp->limit / 4;
    if (counts) sp->count_at = t + REPORT_S;
    for (;;) {
        int flag = 0;
        MPI_Status status;
        int e = MPI_Iprobe(MPI_ANY_SOURCE, TAG_BEAT, sp->comm, &flag, &status);
        if (e != MPI_SUCCESS || !flag) return e;
        const int src = status.MPI_SOURCE;
        e = MPI_Recv(sp->in, 3, MPI_UINT64_T, src, TAG_BEAT, sp->comm, MPI_STATUS_IGNORE);
        if (e != MPI_SUCCESS) return e;
        sp->heard[src] = t;
        sp->got_from[src]++;
        for (int i = 0; sh->remote && i < 3; i++) atomic_store(&sh->remote[3 * src + i], sp->in[i]);
    }
}

/* One look: passes a local stop on, takes a remote one in. */
static int watch(stopper *sp, shared *sh, const volatile sig_atomic_t *cancel)
{
    const int b = beat(sp, sh);
    if (b != MPI_SUCCESS) return b;
    const int cancelled = cancel && *cancel;
    const int failed = atomic_load(&sh->failed);
    if (cancelled || failed) sh->stop = 1;
    if (!sp->sent && sp->sreqs && (cancelled || failed)) {
        sp->code_out = failed ? 2 : 1;
        for (int r = 0, k = 0; r < sp->size; r++)
            if (r != sp->rank) {
                const int e = MPI_Isend(&sp->code_out, 1, MPI_INT, r, TAG_STOP, sp->comm, &sp->sreqs[k++]);
                if (e != MPI_SUCCESS) return e;
            }
        sp->sent = 1;
    }
    if (!sp->got) {
        int flag = 0;
        const int e = MPI_Test(&sp->rreq, &flag, MPI_STATUS_IGNORE);
        if (e != MPI_SUCCESS) return e;
        if (flag) {
            sp->got = 1;
            sh->stop = 1;
        }
    }
    return MPI_SUCCESS;
}

/* ---- the call ------------------------------------------------------------------------ */

/* An MPI call's failure, as a message (GPK_EDEVICE, as every gpk::mpi
 * call reports MPI failures). */
static gpk_status mpi_fail(char *msg, size_t len, const char *call, int code)
{
    char s[MPI_MAX_ERROR_STRING];
    int sl = 0;
    if (MPI_Error_string(code, s, &sl) != MPI_SUCCESS) snprintf(s, sizeof s, "error %d", code);
    snprintf(msg, len, FN ": %s failed: %s", call, s);
    return GPK_EDEVICE;
}

/* One call's state: what its steps share and the end releases. */
typedef struct mcall {
    MPI_Comm cm;
    int rank, size;
    agree_rec me, *all;
    uint64_t total, offset; /* the contexts of all ranks; this rank's first one's number */
    uint32_t runs, n;
    int local_ok; /* this rank has the memory for the runs */
    worker *ws;
    pthread_t *tids;
    int nthreads;
    run_rec *recs, *allrecs;
    int *rcounts, *rdispls;
    uint32_t *sol;
    gpk_mpi_search_run *runs_arr;
    void *rank_block, *runs_block; /* the arrays of alloc_rank_records, alloc_runs */
    stopper sp;
    shared sh;
    char msg[GPK_ERRLEN];
} mcall;

/* An MPI call inside a step: its failure ends the step with a message. */
#define MPI_RET(call, name)                                                        \
    do {                                                                           \
        const int e_ = (call);                                                     \
        if (e_ != MPI_SUCCESS) return mpi_fail(mc->msg, sizeof mc->msg, name, e_); \
    } while (0)

/* Requests' wait within the communicator's timeout (GPK_EIO naming a
 * silent rank), its message in mc->msg. */
static gpk_status wait_bounded(mcall *mc, int count, MPI_Request *reqs, const char *what)
{
    return gpk__mpi_wait_msg(mc->cm, count, reqs, NULL, what, mc->msg, sizeof mc->msg);
}

/* A nonblocking collective `start` (its request: rq_), then its wait
 * within the communicator's timeout; a failure ends the step. */
#define MPI_BOUNDED(start, name)                                       \
    do {                                                               \
        MPI_Request rq_ = MPI_REQUEST_NULL;                            \
        MPI_RET(start, name);                                          \
        const gpk_status s_ = wait_bounded(mc, 1, &rq_, FN ": " name); \
        if (s_ != GPK_OK) return s_;                                   \
    } while (0)

/* This rank's verdict on being called: MPI's thread level. */
static void check_threading(agree_rec *me)
{
    int level = MPI_THREAD_SINGLE, is_main = 0;
    MPI_Query_thread(&level);
    MPI_Is_thread_main(&is_main);
    if (level < MPI_THREAD_FUNNELED) {
        me->status = GPK_EINVAL;
        snprintf(me->msg, sizeof me->msg,
                 "MPI was initialised with MPI_THREAD_SINGLE; the runs need threads "
                 "(MPI_Init_thread with MPI_THREAD_FUNNELED or more)");
    } else if (level < MPI_THREAD_SERIALIZED && !is_main) {
        me->status = GPK_EINVAL;
        snprintf(me->msg, sizeof me->msg,
                 "called from a thread other than MPI's main thread under "
                 "MPI_THREAD_FUNNELED");
    }
}

/* The records of every rank (1 when allocated): the agreement's, and the
 * heartbeats', in which every rank takes part to their end (step 3), so
 * they are allocated before the agreement. Zeroed: the heartbeat counts. */
static int alloc_rank_records(mcall *mc)
{
    stopper *sp = &mc->sp;
    const size_t size = (size_t)mc->size;
    gpk__part p[] = {GPK__PART(mc->all, size),          GPK__PART(sp->heard, size),
                     GPK__PART(sp->out, size),          GPK__PART(sp->breqs, size),
                     GPK__PART(sp->sent_to, size),      GPK__PART(sp->got_from, size),
                     GPK__PART(mc->sh.remote, size * 3)};
    mc->rank_block = gpk__alloc_parts(p, sizeof p / sizeof *p, 1);
    if (!mc->rank_block) return 0;
    mc->all = p[0].at, sp->heard = p[1].at, sp->out = p[2].at, sp->breqs = p[3].at;
    sp->sent_to = p[4].at, sp->got_from = p[5].at, mc->sh.remote = p[6].at;
    for (size_t r = 0; r < size; r++) {
        sp->breqs[r] = MPI_REQUEST_NULL;
        atomic_init(&mc->sh.remote[3 * r], 0);
        atomic_init(&mc->sh.remote[3 * r + 1], 0);
        atomic_init(&mc->sh.remote[3 * r + 2], (uint64_t)INT64_MAX);
    }
    return 1;
}

/* ---- 1. agreement: every rank's arguments, and the runs ---- */
static gpk_status step_agree(mcall *mc, gpk_ctx *const *ctxs, int count, const gpk_search_problem *problem,
                             const gpk_search_opts *opts, const gpk_search_result *result)
{
    describe(&mc->me, ctxs, count, problem, opts, result);
    if (mc->me.status == GPK_OK) check_threading(&mc->me);
    int have_all = alloc_rank_records(mc), all_have = 0;
    MPI_BOUNDED(MPI_Iallreduce(&have_all, &all_have, 1, MPI_INT, MPI_LAND, mc->cm, &rq_), "MPI_Allreduce");
    if (!all_have) {
        snprintf(mc->msg, sizeof mc->msg, FN ": out of host memory for %d ranks' records on %s", mc->size,
                 have_all ? "another rank" : "this rank");
        return GPK_ENOMEM;
    }
    MPI_BOUNDED(MPI_Iallgather(&mc->me, (int)sizeof mc->me, MPI_BYTE, mc->all, (int)sizeof mc->me, MPI_BYTE,
                               mc->cm, &rq_),
                "MPI_Allgather");
    const gpk_status st = agree(mc->all, mc->size, mc->msg, sizeof mc->msg);
    if (st != GPK_OK) return st;
    /* Contexts of all ranks numbered in rank order; run r on number r mod T. */
    for (int r = 0; r < mc->size; r++) {
        if (r == mc->rank) mc->offset = mc->total;
        mc->total += (uint64_t)mc->all[r].count;
    }
    const uint64_t runs64 = opts->starts ? opts->starts : mc->total;
    if (mc->total > UINT32_MAX || runs64 > (uint64_t)INT32_MAX / sizeof(run_rec)) {
        snprintf(mc->msg, sizeof mc->msg, FN ": %llu runs on %llu contexts: at most %llu runs",
                 (unsigned long long)runs64, (unsigned long long)mc->total,
                 (unsigned long long)((uint64_t)INT32_MAX / sizeof(run_rec)));
        return GPK_EINVAL;
    }
    mc->runs = (uint32_t)runs64;
    mc->n = mc->me.n;
    return GPK_OK;
}

/* The memory of the runs and the results; a shortage is this rank's
 * verdict, told to the others in step 4. The solution and the runs'
 * records go to the caller: allocations of their own. */
static void alloc_runs(mcall *mc, int count, int want_runs)
{
    const uint32_t runs = mc->runs;
    const size_t size = (size_t)mc->size;
    gpk__part p[] = {GPK__PART(mc->ws, count),
                     GPK__PART(mc->tids, count),
                     GPK__PART(mc->recs, (runs / mc->total + 1) * (uint64_t)count),
                     GPK__PART(mc->sp.sreqs, size),
                     GPK__PART(mc->allrecs, runs ? runs : 1),
                     GPK__PART(mc->rcounts, size),
                     GPK__PART(mc->rdispls, size)};
    mc->runs_block = gpk__alloc_parts(p, sizeof p / sizeof *p, 1); /* ws, tids and recs: zeroed */
    if (mc->runs_block) {
        mc->ws = p[0].at, mc->tids = p[1].at, mc->recs = p[2].at, mc->sp.sreqs = p[3].at;
        mc->allrecs = p[4].at, mc->rcounts = p[5].at, mc->rdispls = p[6].at;
    }
    mc->sol = malloc((size_t)mc->n * sizeof *mc->sol);
    mc->runs_arr = want_runs ? malloc((size_t)(runs ? runs : 1) * sizeof *mc->runs_arr) : NULL;
    mc->local_ok = mc->runs_block && mc->sol && (!want_runs || mc->runs_arr);
    if (!mc->local_ok) {
        mc->me.status = GPK_ENOMEM;
        snprintf(mc->me.msg, sizeof mc->me.msg, "out of host memory for %u runs (n = %u)", runs, mc->n);
    }
    if (mc->sp.sreqs)
        for (int r = 0; r < mc->size; r++) mc->sp.sreqs[r] = MPI_REQUEST_NULL;
    mc->sp.limit = gpk_mpi_timeout(mc->cm);
    for (int r = 0; r < mc->size; r++) mc->sp.heard[r] = now_s(); /* all here at the agreement */
    mc->sh.ws = mc->ws, mc->sh.nw = mc->ws ? count : 0, mc->sh.nranks = mc->size;
    for (int g = 0; mc->ws && g < count; g++) {
        worker *w = &mc->ws[g];
        atomic_init(&w->done_it, 0), atomic_init(&w->done_ev, 0);
        atomic_init(&w->live_it, 0), atomic_init(&w->live_ev, 0);
        atomic_init(&w->best_seen, INT64_MAX);
    }
}

/* One worker thread per context with runs; the number expected to finish. */
static int start_workers(mcall *mc, gpk_ctx *const *ctxs, int count)
{
    shared *sh = &mc->sh;
    const uint32_t runs = mc->runs;
    uint32_t used = 0;
    for (int g = 0; g < count; g++) {
        worker *w = &mc->ws[g];
        w->sh = sh;
        w->ctx = ctxs[g];
        w->reports = g == 0;
        w->first = (uint32_t)(mc->offset + (uint64_t)g);
        w->step = (uint32_t)mc->total;
        w->recs = mc->recs + used;
        w->st = GPK_OK;
        if (w->first >= runs) continue;
        used += (runs - 1 - w->first) / w->step + 1;
        if (pthread_create(&mc->tids[mc->nthreads], NULL, worker_main, w) != 0) {
            w->st = GPK_ENOMEM;
            snprintf(w->msg, sizeof w->msg, "cannot start a thread for context %d", g);
            atomic_store(&sh->failed, 1);
            atomic_fetch_add(&sh->done, 1);
            continue;
        }
        mc->nthreads++;
    }
    /* nthreads counts started threads; `done` counts every worker that
     * had runs, started or not. */
    int expected = 0;
    for (int g = 0; g < count; g++)
        if (mc->ws[g].first < runs) expected++;
    return expected;
}

/* ---- 2. the runs, this rank's on its threads, watched for stops ---- */
static gpk_status step_runs(mcall *mc, gpk_ctx *const *ctxs, int count, const gpk_search_problem *problem,
                            const gpk_search_opts *opts, double t0, int want_runs)
{
    shared *sh = &mc->sh;
    sh->problem = problem;
    sh->opts = opts;
    sh->rank = mc->rank;
    sh->runs = mc->runs;
    atomic_init(&sh->failed, 0);
    atomic_init(&sh->done, 0);
    if (opts->time_limit > 0) sh->deadline = t0 + opts->time_limit;
    alloc_runs(mc, count, want_runs);
    MPI_RET(MPI_Irecv(&mc->sp.code_in, 1, MPI_INT, MPI_ANY_SOURCE, TAG_STOP, mc->cm, &mc->sp.rreq),
            "MPI_Irecv");
    if (!mc->local_ok) return GPK_OK;
    const int expected = start_workers(mc, ctxs, count);
    int e = MPI_SUCCESS;
    while (atomic_load(&sh->done) < expected) {
        if (e == MPI_SUCCESS) e = watch(&mc->sp, sh, opts->cancel);
        if (e != MPI_SUCCESS) sh->stop = 1; /* stop the runs, report after the join */
        pause_watch();
    }
    for (int t = 0; t < mc->nthreads; t++) pthread_join(mc->tids[t], NULL);
    if (e != MPI_SUCCESS) return mpi_fail(mc->msg, sizeof mc->msg, "a stop message", e);
    return GPK_OK;
}

/* The heartbeats still in flight (step 3's end): how many each rank sent
 * to each, then every one received and every send completed. */
static gpk_status drain_beats(mcall *mc)
{
    stopper *sp = &mc->sp;
    int *sent_me = sp->sent_to; /* reused: sent_to[r] becomes what r sent here */
    int *mine = malloc((size_t)mc->size * sizeof *mine);
    if (!mine) {
        snprintf(mc->msg, sizeof mc->msg, FN ": out of host memory");
        return GPK_ENOMEM;
    }
    memcpy(mine, sp->sent_to, (size_t)mc->size * sizeof *mine);
    MPI_Request q = MPI_REQUEST_NULL;
    gpk_status st = GPK_OK;
    const int e = MPI_Ialltoall(mine, 1, MPI_INT, sent_me, 1, MPI_INT, mc->cm, &q);
    if (e == MPI_SUCCESS) st = wait_bounded(mc, 1, &q, FN ": MPI_Alltoall");
    free(mine);
    if (e != MPI_SUCCESS) return mpi_fail(mc->msg, sizeof mc->msg, "MPI_Alltoall", e);
    if (st != GPK_OK) return st;
    for (int r = 0; r < mc->size; r++)
        for (int k = sp->got_from[r]; k < sent_me[r]; k++) {
            MPI_RET(MPI_Irecv(sp->in, 3, MPI_UINT64_T, r, TAG_BEAT, mc->cm, &q), "MPI_Irecv");
            st = wait_bounded(mc, 1, &q, FN ": a heartbeat");
            if (st != GPK_OK) return st;
        }
    return wait_bounded(mc, mc->size, sp->breqs, FN ": a heartbeat");
}

/* ---- 3. the end of the stop messages: every one sent is received ---- */
static gpk_status step_drain(mcall *mc, const gpk_search_opts *opts)
{
    stopper *sp = &mc->sp;
    MPI_Request bar;
    MPI_RET(MPI_Ibarrier(mc->cm, &bar), "MPI_Ibarrier");
    for (;;) {
        int flag = 0;
        MPI_RET(MPI_Test(&bar, &flag, MPI_STATUS_IGNORE), "MPI_Test");
        if (flag) break;
        MPI_RET(watch(sp, &mc->sh, opts->cancel), "a stop message");
        /* the ranks still running say so; one heard from for no timeout
         * is stopped or hung */
        const double t = now_s();
        for (int r = 0; sp->limit > 0 && r < mc->size; r++)
            if (r != mc->rank && t - sp->heard[r] >= sp->limit) {
                /* bar stays pending (a collective cannot be cancelled) */
                snprintf(mc->msg, sizeof mc->msg,
                         FN ": no sign of life from rank %d for %g s (stopped or hung; the "
                            "bound is the communicator's timeout, gpk_mpi_set_timeout): the job cannot go on",
                         r, sp->limit);
                return GPK_EIO;
            }
        pause_watch();
    }
    int senders = 0;
    MPI_BOUNDED(MPI_Iallreduce(&sp->sent, &senders, 1, MPI_INT, MPI_SUM, mc->cm, &rq_), "MPI_Allreduce");
    int expect = senders - sp->sent;
    gpk_status st = GPK_OK;
    if (expect == 0) {
        MPI_RET(MPI_Cancel(&sp->rreq), "MPI_Cancel");
        MPI_RET(MPI_Wait(&sp->rreq, MPI_STATUS_IGNORE), "MPI_Wait");
    } else {
        if (!sp->got) st = wait_bounded(mc, 1, &sp->rreq, FN ": a stop message");
        for (int k = 1; st == GPK_OK && k < expect; k++) {
            MPI_RET(MPI_Irecv(&sp->code_in, 1, MPI_INT, MPI_ANY_SOURCE, TAG_STOP, mc->cm, &sp->rreq),
                    "MPI_Irecv");
            st = wait_bounded(mc, 1, &sp->rreq, FN ": a stop message");
        }
        if (st != GPK_OK) return st;
    }
    sp->rreq = MPI_REQUEST_NULL;
    if (sp->sent) {
        st = wait_bounded(mc, mc->size - 1, sp->sreqs, FN ": a stop message");
        if (st != GPK_OK) return st;
    }
    sp->sent = 0;
    return drain_beats(mc);
}

/* The totals and the best run over every run's record (ties: the lowest
 * run); the rank that holds it. */
static int sum_records(mcall *mc, gpk_search_result *result, uint32_t *best_run, int64_t *best)
{
    int owner = -1;
    for (uint32_t k = 0; k < mc->runs; k++) {
        const uint32_t run = mc->allrecs[k].run;
        const gpk_mpi_search_run *rc = &mc->allrecs[k].record;
        result->iterations += rc->iterations;
        result->evaluated += rc->evaluated;
        result->gpu_evaluated += rc->gpu_evaluated;
        if (rc->stopped > result->stopped) result->stopped = rc->stopped;
        if (owner < 0 || rc->best < *best || (rc->best == *best && run < *best_run)) {
            owner = rc->rank;
            *best = rc->best;
            *best_run = run;
            result->local_optimum = rc->local_optimum;
        }
        if (mc->runs_arr) mc->runs_arr[run] = *rc;
    }
    return owner;
}

/* ---- 4. the results: every rank's verdict, every run's record, the best
 * solution from the rank that holds it ---- */
static gpk_status step_results(mcall *mc, int count, gpk_search_result *result, double t0,
                               gpk_mpi_search_run **runs_out)
{
    uint32_t nrec = 0;
    int best_w = -1;
    worker *ws = mc->ws;
    for (int g = 0; mc->local_ok && g < count; g++) {
        worker *w = &ws[g];
        if (w->st != GPK_OK && mc->me.status == GPK_OK) {
            mc->me.status = w->st;
            snprintf(mc->me.msg, sizeof mc->me.msg, "%s", w->msg);
        }
        nrec += w->nrec;
        if (w->best_sol &&
            (best_w < 0 || w->best < ws[best_w].best ||
             (w->best == ws[best_w].best && w->best_run < ws[best_w].best_run)))
            best_w = g;
    }
    MPI_BOUNDED(MPI_Iallgather(&mc->me, (int)sizeof mc->me, MPI_BYTE, mc->all, (int)sizeof mc->me, MPI_BYTE,
                               mc->cm, &rq_),
                "MPI_Allgather");
    for (int r = 0; r < mc->size; r++)
        if (mc->all[r].status != GPK_OK) {
            snprintf(mc->msg, sizeof mc->msg, FN ": rank %d: %s", r, mc->all[r].msg);
            return (gpk_status)mc->all[r].status;
        }
    /* Every rank ran all its runs (none failed): the counts are known. */
    int nbytes = (int)(nrec * sizeof(run_rec)), off = 0;
    MPI_BOUNDED(MPI_Iallgather(&nbytes, 1, MPI_INT, mc->rcounts, 1, MPI_INT, mc->cm, &rq_), "MPI_Allgather");
    for (int r = 0; r < mc->size; r++) {
        mc->rdispls[r] = off;
        off += mc->rcounts[r];
    }
    if ((uint64_t)off != (uint64_t)mc->runs * sizeof(run_rec)) {
        snprintf(mc->msg, sizeof mc->msg, FN ": internal error: %d bytes of run records for %u runs", off,
                 mc->runs);
        return GPK_EINVAL;
    }
    /* This rank's records, packed (each worker's are in order). */
    for (int g = 0, k = 0; g < count; g++)
        for (uint32_t i = 0; i < ws[g].nrec; i++) mc->recs[k++] = ws[g].recs[i];
    MPI_BOUNDED(MPI_Iallgatherv(mc->recs, nbytes, MPI_BYTE, mc->allrecs, mc->rcounts, mc->rdispls, MPI_BYTE,
                                mc->cm, &rq_),
                "MPI_Allgatherv");
    uint32_t best_run = 0;
    int64_t best = 0;
    const int owner = sum_records(mc, result, &best_run, &best);
    if (owner == mc->rank) memcpy(mc->sol, ws[best_w].best_sol, (size_t)mc->n * sizeof *mc->sol);
    MPI_BOUNDED(MPI_Ibcast(mc->sol, (int)mc->n, MPI_UINT32_T, owner, mc->cm, &rq_), "MPI_Bcast");
    result->best = best;
    result->n = mc->n;
    result->solution = mc->sol;
    mc->sol = NULL;
    result->runs = mc->runs;
    result->best_run = best_run;
    result->ms = (now_s() - t0) * 1e3;
    if (runs_out) {
        *runs_out = mc->runs_arr;
        mc->runs_arr = NULL;
    }
    return GPK_OK;
}

static void mcall_free(mcall *mc, int count)
{
    if (mc->sp.rreq != MPI_REQUEST_NULL) {
        MPI_Cancel(&mc->sp.rreq);
        MPI_Wait(&mc->sp.rreq, MPI_STATUS_IGNORE);
    }
    if (mc->ws)
        for (int g = 0; g < count; g++) free(mc->ws[g].best_sol);
    free(mc->runs_block);
    free(mc->rank_block);
    free(mc->sol);
    free(mc->runs_arr);
    if (mc->cm != MPI_COMM_NULL) MPI_Comm_free(&mc->cm);
}

/* The steps over a private communicator: the stop messages meet no message
 * of the caller's, and MPI failures come back as codes. */
static gpk_status run_steps(mcall *mc, MPI_Comm comm, gpk_ctx *const *ctxs, int count,
                            const gpk_search_problem *problem, const gpk_search_opts *opts,
                            gpk_search_result *result, gpk_mpi_search_run **runs_out, double t0)
{
    MPI_RET(MPI_Comm_dup(comm, &mc->cm), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(mc->cm, MPI_ERRORS_RETURN);
    MPI_RET(MPI_Comm_rank(mc->cm, &mc->rank), "MPI_Comm_rank");
    MPI_RET(MPI_Comm_size(mc->cm, &mc->size), "MPI_Comm_size");
    mc->sp.comm = mc->cm;
    mc->sp.rank = mc->rank;
    mc->sp.size = mc->size;
    gpk_status st = step_agree(mc, ctxs, count, problem, opts, result);
    if (st == GPK_OK) st = step_runs(mc, ctxs, count, problem, opts, t0, runs_out != NULL);
    if (st == GPK_OK) st = step_drain(mc, opts);
    if (st == GPK_OK) st = step_results(mc, count, result, t0, runs_out);
    return st;
}

gpk_status gpk_mpi_search_multistart(MPI_Comm comm, gpk_ctx *const *ctxs, int count,
                                     const gpk_search_problem *problem, const gpk_search_opts *opts,
                                     gpk_search_result *result, gpk_mpi_search_run **runs_out)
{
    /* Where the message goes: ctxs[0] when usable, else the thread's slot. */
    gpk_ctx *c0 = ctxs && count >= 1 ? ctxs[0] : NULL;
    if (result) memset(result, 0, sizeof *result);
    if (runs_out) *runs_out = NULL;
    int inited = 0, finalized = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (!inited || finalized)
        return gpk__mpi_fail(c0, GPK_EINVAL, FN ": MPI is %s", finalized ? "finalised" : "not initialised");
    if (comm == MPI_COMM_NULL) return gpk__mpi_fail(c0, GPK_EINVAL, FN ": comm is MPI_COMM_NULL");
    /* the defaults resolved once, as gpk_search_run_multi does */
    gpk_search_opts resolved;
    if (problem && opts) {
        resolved = *opts;
        gpk_search_opts_resolve(problem->kind, &resolved);
        opts = &resolved;
    }
    const double t0 = now_s();
    mcall mc;
    memset(&mc, 0, sizeof mc);
    mc.cm = MPI_COMM_NULL;
    mc.sp.rreq = MPI_REQUEST_NULL;
    const gpk_status st = run_steps(&mc, comm, ctxs, count, problem, opts, result, runs_out, t0);
    mcall_free(&mc, count);
    if (st != GPK_OK) {
        if (result) gpk_search_result_free(result);
        return gpk__mpi_fail(c0, st, "%s", mc.msg);
    }
    return GPK_OK;
}
