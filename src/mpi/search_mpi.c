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

/* A hash of the instance data, to see that every rank read the same. */
static uint64_t hash_bytes(uint64_t h, const void *data, size_t bytes)
{
    const unsigned char *b = data;
    size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = (h ^ w) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 32;
    }
    uint64_t w = 0;
    memcpy(&w, b + i, bytes - i);
    return gpk__splitmix64(h ^ w ^ (uint64_t)bytes);
}

/* What each rank tells the others before any run. Exchanged as bytes: the
 * ranks are one program on one kind of machine. */
typedef struct agree_rec {
    int32_t status;   /* this rank's own verdict on its arguments */
    int32_t count;    /* its contexts */
    int32_t kind, algo, nb, eval, qap_delta, have_start;
    uint32_t n, global_iters, tenure, starts;
    uint64_t iters, seed, data_hash, start_hash;
    double time_limit;
    char name[64];
    char msg[MSG_LEN];
} agree_rec;

static const char *kind_name(int32_t k)
{
    return k == GPK_PROBLEM_QAP ? "QAP" : k == GPK_PROBLEM_TSP ? "TSP" : k == GPK_PROBLEM_PPP ? "PPP" : "?";
}

/* Fills a (status and message on a bad argument) from this rank's view. */
static void describe(agree_rec *a, gpk_ctx *const *ctxs, int count, const gpk_search_problem *pb,
                     const gpk_search_opts *o, const gpk_search_result *result)
{
    memset(a, 0, sizeof *a);
    a->count = count;
#define BAD(...)                                          \
    do {                                                  \
        a->status = GPK_EINVAL;                           \
        snprintf(a->msg, sizeof a->msg, __VA_ARGS__);     \
        return;                                           \
    } while (0)
    if (!ctxs || count < 1) BAD("no contexts (count %d)", count);
    for (int g = 0; g < count; g++) {
        if (!ctxs[g]) BAD("context %d is NULL", g);
        for (int h = 0; h < g; h++)
            if (ctxs[h] == ctxs[g]) BAD("contexts %d and %d are the same (one per thread)", h, g);
    }
    if (!pb || !o || !result) BAD("NULL %s", !pb ? "problem" : !o ? "opts" : "result");
    a->kind = (int32_t)pb->kind;
    uint64_t h = 0x6a09e667f3bcc908ull ^ (uint64_t)pb->kind;
    switch (pb->kind) {
    case GPK_PROBLEM_QAP:
        if (!pb->qap || !pb->qap->a || !pb->qap->b) BAD("QAP problem without its instance or matrices");
        a->n = pb->qap->n;
        snprintf(a->name, sizeof a->name, "%s", pb->qap->name);
        h = hash_bytes(h, pb->qap->a, (size_t)a->n * a->n * sizeof *pb->qap->a);
        h = hash_bytes(h, pb->qap->b, (size_t)a->n * a->n * sizeof *pb->qap->b);
        break;
    case GPK_PROBLEM_TSP: {
        const gpk_tsp *t = pb->tsp;
        if (!t || (!t->matrix && (!t->x || !t->y))) BAD("TSP problem without its instance");
        a->n = t->n;
        snprintf(a->name, sizeof a->name, "%s", t->name);
        h ^= (uint64_t)t->weight << 40;
        if (t->x && t->y) {
            h = hash_bytes(h, t->x, (size_t)t->n * sizeof *t->x);
            h = hash_bytes(h, t->y, (size_t)t->n * sizeof *t->y);
        } else {
            h = hash_bytes(h, t->matrix, (size_t)t->n * t->n * sizeof *t->matrix);
        }
        break;
    }
    case GPK_PROBLEM_PPP: {
        const gpk_ppp *p = pb->ppp;
        if (!p || !p->a) BAD("PPP problem without its instance (not generated)");
        a->n = p->n;
        snprintf(a->name, sizeof a->name, "%u-%u-%llu", p->m, p->n, (unsigned long long)p->seed);
        h ^= (uint64_t)p->m << 32;
        h = hash_bytes(h, p->a, (size_t)p->m * p->n);
        if (p->hist) h = hash_bytes(h, p->hist, ((size_t)p->n + 1) * sizeof *p->hist);
        break;
    }
    default: BAD("unknown problem kind %d", (int)pb->kind);
    }
#undef BAD
    a->data_hash = h;
    a->algo = (int32_t)o->algo;
    a->nb = (int32_t)o->nb;
    a->eval = (int32_t)o->eval;
    a->qap_delta = (int32_t)o->qap_delta;
    a->iters = o->iters;
    a->global_iters = o->global_iters;
    a->tenure = o->tenure;
    a->starts = o->starts;
    a->seed = o->seed;
    a->time_limit = o->time_limit;
    a->have_start = o->start != NULL;
    if (o->start) a->start_hash = hash_bytes(0, o->start, (size_t)a->n * sizeof *o->start);
}

/* The first option in which b differs from a, or NULL. */
static const char *opts_differ(const agree_rec *a, const agree_rec *b, char *buf, size_t len)
{
#define CMP(field, what, fmt, cast)                                                                     \
    if (a->field != b->field) {                                                                         \
        snprintf(buf, len, "%s " fmt ", rank 0's " fmt, what, (cast)b->field, (cast)a->field);         \
        return buf;                                                                                     \
    }
    CMP(algo, "algo", "%d", int)
    CMP(nb, "neighbourhood", "%d", int)
    CMP(iters, "iters", "%llu", unsigned long long)
    CMP(global_iters, "global_iters", "%u", unsigned)
    CMP(tenure, "tenure", "%u", unsigned)
    CMP(starts, "starts", "%u", unsigned)
    CMP(seed, "seed", "%llu", unsigned long long)
    CMP(eval, "eval", "%d", int)
    CMP(qap_delta, "qap_delta", "%d", int)
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
                     FN ": rank %d's problem differs from rank 0's: %s '%s' n=%u (data hash %016llx), rank 0 %s "
                        "'%s' n=%u (%016llx); every rank must read the same instance",
                     r, kind_name(b->kind), b->name, b->n, (unsigned long long)b->data_hash, kind_name(a->kind),
                     a->name, a->n, (unsigned long long)a->data_hash);
            return GPK_EINVAL;
        }
        char why[200];
        if (opts_differ(a, b, why, sizeof why)) {
            snprintf(msg, len, FN ": rank %d's options differ from rank 0's: %s; every rank must pass the same",
                     r, why);
            return GPK_EINVAL;
        }
    }
    return GPK_OK;
}

/* ---- step 2: the runs --------------------------------------------------------------- */

/* One run's outcome, exchanged as bytes in step 4. */
typedef struct run_rec {
    uint32_t run;
    int32_t rank, stopped, local_optimum;
    int64_t best;
    uint64_t iterations, evaluated, gpu_evaluated;
    double ms;
} run_rec;

typedef struct shared {
    const gpk_search_problem *problem;
    const gpk_search_opts *opts;
    double deadline;             /* now_s() at the time limit; 0: none */
    volatile sig_atomic_t stop;  /* the runs' cancel flag: set by the watcher */
    atomic_int failed;           /* a run failed on this rank */
    atomic_int done;             /* workers finished */
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
    int reports;         /* passes opts->progress on (ctxs[0]'s runs) */
    uint32_t first, step;
    run_rec *recs;       /* one per run of this worker, in run order */
    uint32_t nrec;
    gpk_status st;
    char msg[MSG_LEN];
    int64_t best;        /* this worker's best run (ties: the lowest r, the first met) */
    uint32_t best_run;
    uint32_t *best_sol;  /* NULL until a run succeeded */
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
        rc->rank = sh->rank;
        rc->stopped = (int32_t)res.stopped;
        rc->local_optimum = res.local_optimum;
        rc->best = res.best;
        rc->iterations = res.iterations;
        rc->evaluated = res.evaluated;
        rc->gpu_evaluated = res.gpu_evaluated;
        rc->ms = res.ms;
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
    int code_in, got;    /* the one receive kept posted */
    MPI_Request rreq;
    int sent, code_out;
    MPI_Request *sreqs;  /* size entries */
    double limit;        /* the communicator's timeout (0: none) */
    double beat_at;      /* when this rank next says it is still here, to all */
    double count_at;     /* when this rank next sends rank 0 its counts */
    double *heard;       /* size entries: when each rank was last heard from */
    uint64_t (*out)[3];  /* size entries: the heartbeat in flight to each rank */
    MPI_Request *breqs;  /* size entries: its request */
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

#define MPI_CK(call, name)                                   \
    do {                                                     \
        const int e_ = (call);                               \
        if (e_ != MPI_SUCCESS) {                             \
            st = mpi_fail(msg, sizeof msg, name, e_);        \
            goto out;                                        \
        }                                                    \
    } while (0)

/* A nonblocking collective `start` (its request: rq_), then its wait
 * within the communicator's timeout. */
#define MPI_BOUNDED(start, name)                                                  \
    do {                                                                          \
        MPI_Request rq_ = MPI_REQUEST_NULL;                                       \
        MPI_CK(start, name);                                                      \
        st = gpk__mpi_wait_msg(cm, 1, &rq_, NULL, FN ": " name, msg, sizeof msg); \
        if (st != GPK_OK) goto out;                                               \
    } while (0)

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
    gpk_status st = GPK_OK;
    char msg[GPK_ERRLEN] = "";
    MPI_Comm cm = MPI_COMM_NULL;
    agree_rec me, *all = NULL;
    worker *ws = NULL;
    pthread_t *tids = NULL;
    int nthreads = 0;
    run_rec *recs = NULL, *allrecs = NULL;
    int *rcounts = NULL, *rdispls = NULL;
    uint32_t *sol = NULL;
    gpk_mpi_search_run *runs_arr = NULL;
    stopper sp;
    memset(&sp, 0, sizeof sp);
    sp.rreq = MPI_REQUEST_NULL;
    shared sh;
    memset(&sh, 0, sizeof sh);

    /* A private communicator: the stop messages meet no message of the
     * caller's, and MPI failures come back as codes. */
    MPI_CK(MPI_Comm_dup(comm, &cm), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(cm, MPI_ERRORS_RETURN);
    int rank, size;
    MPI_CK(MPI_Comm_rank(cm, &rank), "MPI_Comm_rank");
    MPI_CK(MPI_Comm_size(cm, &size), "MPI_Comm_size");
    sp.comm = cm;
    sp.rank = rank;
    sp.size = size;

    /* ---- 1. agreement ---- */
    describe(&me, ctxs, count, problem, opts, result);
    if (me.status == GPK_OK) {
        int level = MPI_THREAD_SINGLE, is_main = 0;
        MPI_Query_thread(&level);
        MPI_Is_thread_main(&is_main);
        if (level < MPI_THREAD_FUNNELED) {
            me.status = GPK_EINVAL;
            snprintf(me.msg, sizeof me.msg, "MPI was initialised with MPI_THREAD_SINGLE; the runs need threads "
                                            "(MPI_Init_thread with MPI_THREAD_FUNNELED or more)");
        } else if (level < MPI_THREAD_SERIALIZED && !is_main) {
            me.status = GPK_EINVAL;
            snprintf(me.msg, sizeof me.msg, "called from a thread other than MPI's main thread under "
                                            "MPI_THREAD_FUNNELED");
        }
    }
    all = malloc((size_t)size * sizeof *all);
    /* the heartbeats' records too: every rank takes part in their end (step 3) */
    sp.heard = malloc((size_t)size * sizeof *sp.heard);
    sp.out = malloc((size_t)size * sizeof *sp.out);
    sp.breqs = malloc((size_t)size * sizeof *sp.breqs);
    sp.sent_to = calloc((size_t)size, sizeof *sp.sent_to);
    sp.got_from = calloc((size_t)size, sizeof *sp.got_from);
    sh.remote = malloc((size_t)size * 3 * sizeof *sh.remote);
    int have_all = all && sp.heard && sp.out && sp.breqs && sp.sent_to && sp.got_from && sh.remote,
        all_have = 0;
    for (int r = 0; have_all && r < size; r++) {
        sp.breqs[r] = MPI_REQUEST_NULL;
        atomic_init(&sh.remote[3 * r], 0);
        atomic_init(&sh.remote[3 * r + 1], 0);
        atomic_init(&sh.remote[3 * r + 2], (uint64_t)INT64_MAX);
    }
    MPI_BOUNDED(MPI_Iallreduce(&have_all, &all_have, 1, MPI_INT, MPI_LAND, cm, &rq_), "MPI_Allreduce");
    if (!all_have) {
        st = GPK_ENOMEM;
        snprintf(msg, sizeof msg, FN ": out of host memory for %d ranks' records on %s", size,
                 have_all ? "another rank" : "this rank");
        goto out;
    }
    MPI_BOUNDED(MPI_Iallgather(&me, (int)sizeof me, MPI_BYTE, all, (int)sizeof me, MPI_BYTE, cm, &rq_),
                "MPI_Allgather");
    st = agree(all, size, msg, sizeof msg);
    if (st != GPK_OK) goto out;

    /* Contexts of all ranks numbered in rank order; run r on number r mod T. */
    uint64_t total = 0, offset = 0;
    for (int r = 0; r < size; r++) {
        if (r == rank) offset = total;
        total += (uint64_t)all[r].count;
    }
    const uint64_t runs64 = opts->starts ? opts->starts : total;
    if (total > UINT32_MAX || runs64 > (uint64_t)INT32_MAX / sizeof(run_rec)) {
        st = GPK_EINVAL;
        snprintf(msg, sizeof msg, FN ": %llu runs on %llu contexts: at most %llu runs", (unsigned long long)runs64,
                 (unsigned long long)total, (unsigned long long)((uint64_t)INT32_MAX / sizeof(run_rec)));
        goto out;
    }
    const uint32_t runs = (uint32_t)runs64;
    const uint32_t n = me.n;

    /* ---- 2. the runs ---- */
    sh.problem = problem;
    sh.opts = opts;
    sh.rank = rank;
    sh.runs = runs;
    atomic_init(&sh.failed, 0);
    atomic_init(&sh.done, 0);
    if (opts->time_limit > 0) sh.deadline = t0 + opts->time_limit;
    ws = calloc((size_t)count, sizeof *ws);
    tids = calloc((size_t)count, sizeof *tids);
    recs = calloc(runs / total + 1, (size_t)count * sizeof *recs);
    sp.sreqs = malloc((size_t)size * sizeof *sp.sreqs);
    sp.limit = gpk_mpi_timeout(cm);
    for (int r = 0; r < size; r++) sp.heard[r] = now_s(); /* all here at the agreement */
    sh.ws = ws, sh.nw = ws ? count : 0, sh.nranks = size;
    for (int g = 0; ws && g < count; g++) {
        atomic_init(&ws[g].done_it, 0), atomic_init(&ws[g].done_ev, 0);
        atomic_init(&ws[g].live_it, 0), atomic_init(&ws[g].live_ev, 0);
        atomic_init(&ws[g].best_seen, INT64_MAX);
    }
    sol = malloc((size_t)n * sizeof *sol);
    runs_arr = runs_out ? malloc((size_t)(runs ? runs : 1) * sizeof *runs_arr) : NULL;
    allrecs = malloc((size_t)(runs ? runs : 1) * sizeof *allrecs);
    rcounts = malloc((size_t)size * sizeof *rcounts);
    rdispls = malloc((size_t)size * sizeof *rdispls);
    int local_ok = ws && tids && recs && sp.sreqs && sol && (!runs_out || runs_arr) && allrecs && rcounts && rdispls;
    if (!local_ok) {
        me.status = GPK_ENOMEM;
        snprintf(me.msg, sizeof me.msg, "out of host memory for %u runs (n = %u)", runs, n);
    }
    if (sp.sreqs)
        for (int r = 0; r < size; r++) sp.sreqs[r] = MPI_REQUEST_NULL;
    MPI_CK(MPI_Irecv(&sp.code_in, 1, MPI_INT, MPI_ANY_SOURCE, TAG_STOP, cm, &sp.rreq), "MPI_Irecv");
    if (local_ok) {
        uint32_t used = 0;
        for (int g = 0; g < count; g++) {
            worker *w = &ws[g];
            w->sh = &sh;
            w->ctx = ctxs[g];
            w->reports = g == 0;
            w->first = (uint32_t)(offset + (uint64_t)g);
            w->step = (uint32_t)total;
            w->recs = recs + used;
            w->st = GPK_OK;
            if (w->first >= runs) continue;
            used += (runs - 1 - w->first) / w->step + 1;
            if (pthread_create(&tids[nthreads], NULL, worker_main, w) != 0) {
                w->st = GPK_ENOMEM;
                snprintf(w->msg, sizeof w->msg, "cannot start a thread for context %d", g);
                atomic_store(&sh.failed, 1);
                atomic_fetch_add(&sh.done, 1);
                continue;
            }
            nthreads++;
        }
        /* nthreads counts started threads; `done` counts every worker that
         * had runs, started or not. */
        int expected = 0;
        for (int g = 0; g < count; g++)
            if (ws[g].first < runs) expected++;
        int e = MPI_SUCCESS;
        while (atomic_load(&sh.done) < expected) {
            if (e == MPI_SUCCESS) e = watch(&sp, &sh, opts->cancel);
            if (e != MPI_SUCCESS) sh.stop = 1; /* stop the runs, report after the join */
            pause_watch();
        }
        for (int t = 0; t < nthreads; t++) pthread_join(tids[t], NULL);
        if (e != MPI_SUCCESS) {
            st = mpi_fail(msg, sizeof msg, "a stop message", e);
            goto out;
        }
    }

    /* ---- 3. the end of the stop messages ---- */
    {
        MPI_Request bar;
        MPI_CK(MPI_Ibarrier(cm, &bar), "MPI_Ibarrier");
        for (;;) {
            int flag = 0;
            MPI_CK(MPI_Test(&bar, &flag, MPI_STATUS_IGNORE), "MPI_Test");
            if (flag) break;
            MPI_CK(watch(&sp, &sh, opts->cancel), "a stop message");
            /* the ranks still running say so; one heard from for no
             * timeout is stopped or hung */
            const double t = now_s();
            for (int r = 0; sp.limit > 0 && sp.heard && r < size; r++)
                if (r != rank && t - sp.heard[r] >= sp.limit) {
                    st = GPK_EIO; /* bar stays pending (a collective cannot be cancelled) */
                    snprintf(
                        msg, sizeof msg,
                        FN ": no sign of life from rank %d for %g s (stopped or hung; the "
                           "bound is the communicator's timeout, gpk_mpi_set_timeout): the job cannot go on",
                        r, sp.limit);
                    goto out;
                }
            pause_watch();
        }
        int senders = 0;
        MPI_BOUNDED(MPI_Iallreduce(&sp.sent, &senders, 1, MPI_INT, MPI_SUM, cm, &rq_), "MPI_Allreduce");
        int expect = senders - sp.sent;
        if (expect == 0) {
            MPI_CK(MPI_Cancel(&sp.rreq), "MPI_Cancel");
            MPI_CK(MPI_Wait(&sp.rreq, MPI_STATUS_IGNORE), "MPI_Wait");
        } else {
            if (!sp.got) {
                st = gpk__mpi_wait_msg(cm, 1, &sp.rreq, NULL, FN ": a stop message", msg, sizeof msg);
                if (st != GPK_OK) goto out;
            }
            for (int k = 1; k < expect; k++) {
                MPI_CK(MPI_Irecv(&sp.code_in, 1, MPI_INT, MPI_ANY_SOURCE, TAG_STOP, cm, &sp.rreq),
                       "MPI_Irecv");
                st = gpk__mpi_wait_msg(cm, 1, &sp.rreq, NULL, FN ": a stop message", msg, sizeof msg);
                if (st != GPK_OK) goto out;
            }
        }
        sp.rreq = MPI_REQUEST_NULL;
        if (sp.sent) {
            st = gpk__mpi_wait_msg(cm, size - 1, sp.sreqs, NULL, FN ": a stop message", msg, sizeof msg);
            if (st != GPK_OK) goto out;
        }
        sp.sent = 0;
        /* the heartbeats still in flight: how many each rank sent to each */
        {
            int *sent_me = sp.sent_to; /* reused: sent_to[r] becomes what r sent here */
            int *mine = malloc((size_t)size * sizeof *mine);
            if (!mine) {
                st = GPK_ENOMEM;
                snprintf(msg, sizeof msg, FN ": out of host memory");
                goto out;
            }
            memcpy(mine, sp.sent_to, (size_t)size * sizeof *mine);
            MPI_Request q = MPI_REQUEST_NULL;
            int e = MPI_Ialltoall(mine, 1, MPI_INT, sent_me, 1, MPI_INT, cm, &q);
            if (e == MPI_SUCCESS)
                st = gpk__mpi_wait_msg(cm, 1, &q, NULL, FN ": MPI_Alltoall", msg, sizeof msg);
            free(mine);
            if (e != MPI_SUCCESS) {
                st = mpi_fail(msg, sizeof msg, "MPI_Alltoall", e);
                goto out;
            }
            if (st != GPK_OK) goto out;
            for (int r = 0; r < size; r++)
                for (int k = sp.got_from[r]; k < sent_me[r]; k++) {
                    MPI_CK(MPI_Irecv(sp.in, 3, MPI_UINT64_T, r, TAG_BEAT, cm, &q), "MPI_Irecv");
                    st = gpk__mpi_wait_msg(cm, 1, &q, NULL, FN ": a heartbeat", msg, sizeof msg);
                    if (st != GPK_OK) goto out;
                }
            st = gpk__mpi_wait_msg(cm, size, sp.breqs, NULL, FN ": a heartbeat", msg, sizeof msg);
            if (st != GPK_OK) goto out;
        }
    }

    /* ---- 4. the results ---- */
    /* This rank's verdict and best, then every run's record. */
    uint32_t nrec = 0;
    int best_w = -1;
    for (int g = 0; local_ok && g < count; g++) {
        worker *w = &ws[g];
        if (w->st != GPK_OK && me.status == GPK_OK) {
            me.status = w->st;
            snprintf(me.msg, sizeof me.msg, "%s", w->msg);
        }
        nrec += w->nrec;
        if (w->best_sol && (best_w < 0 || w->best < ws[best_w].best ||
                            (w->best == ws[best_w].best && w->best_run < ws[best_w].best_run)))
            best_w = g;
    }
    MPI_BOUNDED(MPI_Iallgather(&me, (int)sizeof me, MPI_BYTE, all, (int)sizeof me, MPI_BYTE, cm, &rq_),
                "MPI_Allgather");
    for (int r = 0; r < size; r++)
        if (all[r].status != GPK_OK) {
            st = (gpk_status)all[r].status;
            snprintf(msg, sizeof msg, FN ": rank %d: %s", r, all[r].msg);
            goto out;
        }
    /* Every rank ran all its runs (none failed): the counts are known. */
    int nbytes = (int)(nrec * sizeof(run_rec)), off = 0;
    MPI_BOUNDED(MPI_Iallgather(&nbytes, 1, MPI_INT, rcounts, 1, MPI_INT, cm, &rq_), "MPI_Allgather");
    for (int r = 0; r < size; r++) {
        rdispls[r] = off;
        off += rcounts[r];
    }
    if ((uint64_t)off != (uint64_t)runs * sizeof(run_rec)) {
        st = GPK_EINVAL;
        snprintf(msg, sizeof msg, FN ": internal error: %d bytes of run records for %u runs", off, runs);
        goto out;
    }
    /* This rank's records, packed (each worker's are in order). */
    for (int g = 0, k = 0; g < count; g++)
        for (uint32_t i = 0; i < ws[g].nrec; i++) recs[k++] = ws[g].recs[i];
    MPI_BOUNDED(MPI_Iallgatherv(recs, nbytes, MPI_BYTE, allrecs, rcounts, rdispls, MPI_BYTE, cm, &rq_),
                "MPI_Allgatherv");
    int owner = -1;
    uint32_t best_run = 0;
    int64_t best = 0;
    for (uint32_t k = 0; k < runs; k++) {
        const run_rec *rc = &allrecs[k];
        result->iterations += rc->iterations;
        result->evaluated += rc->evaluated;
        result->gpu_evaluated += rc->gpu_evaluated;
        if (rc->stopped > (int32_t)result->stopped) result->stopped = (gpk_search_stop)rc->stopped;
        if (owner < 0 || rc->best < best || (rc->best == best && rc->run < best_run)) {
            owner = rc->rank;
            best = rc->best;
            best_run = rc->run;
            result->local_optimum = rc->local_optimum;
        }
        if (runs_arr) {
            gpk_mpi_search_run *o = &runs_arr[rc->run];
            o->best = rc->best;
            o->iterations = rc->iterations;
            o->evaluated = rc->evaluated;
            o->gpu_evaluated = rc->gpu_evaluated;
            o->ms = rc->ms;
            o->rank = rc->rank;
            o->local_optimum = rc->local_optimum;
            o->stopped = (gpk_search_stop)rc->stopped;
        }
    }
    if (owner == rank) memcpy(sol, ws[best_w].best_sol, (size_t)n * sizeof *sol);
    MPI_BOUNDED(MPI_Ibcast(sol, (int)n, MPI_UINT32_T, owner, cm, &rq_), "MPI_Bcast");
    result->best = best;
    result->n = n;
    result->solution = sol;
    sol = NULL;
    result->runs = runs;
    result->best_run = best_run;
    result->ms = (now_s() - t0) * 1e3;
    if (runs_out) {
        *runs_out = runs_arr;
        runs_arr = NULL;
    }

out:
    if (sp.rreq != MPI_REQUEST_NULL) {
        MPI_Cancel(&sp.rreq);
        MPI_Wait(&sp.rreq, MPI_STATUS_IGNORE);
    }
    if (ws)
        for (int g = 0; g < count; g++) free(ws[g].best_sol);
    free(ws);
    free(tids);
    free(recs);
    free(allrecs);
    free(rcounts);
    free(rdispls);
    free(sp.sreqs);
    free(sp.heard);
    free(sp.out);
    free(sp.breqs);
    free(sp.sent_to);
    free(sp.got_from);
    free(sh.remote);
    free(sol);
    free(runs_arr);
    free(all);
    if (cm != MPI_COMM_NULL) MPI_Comm_free(&cm);
    if (st != GPK_OK) {
        if (result) gpk_search_result_free(result);
        return gpk__mpi_fail(c0, st, "%s", msg);
    }
    return GPK_OK;
}
