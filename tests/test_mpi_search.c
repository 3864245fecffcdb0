/* gpk_mpi_search_multistart under mpirun -np P (ctest runs P = 1, 2, 3, 4
 * with --oversubscribe): test_mpi_search cpu|cuda [DATA_DIR]; and
 * test_mpi_search single: MPI_THREAD_SINGLE refused on every rank.
 *
 * Every rank checks its own result against what one process computes for
 * the same options: gpk_search_run_multi on one context, and for
 * multistart also gpk_search_run on the CPU (the one-process multistart),
 * so the best cost, the solution, the best run and the totals must match,
 * and each run's record must match that run alone. Starts that the ranks
 * do not divide, more ranks than starts, ranks with different numbers of
 * contexts, bad input on one rank (every rank must return the same clear
 * status), a cancel on one rank and a time limit (every rank returns a
 * valid best). cuda: the contexts on devices (local rank x contexts + i) mod
 * the devices, the CPU references as before (the GPU search returns what the
 * CPU search returns). The seed is fresh per run, printed by rank 0 and
 * sent to all (GPK_TEST_SEED replays it). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/internal.h"
#include "gpk/gen.h"
#include "gpk/mpi.h"
#include "gpk/search.h"
#include "testutil.h"
#include "search_testutil.h"

static int rank, size;
static gpk_rng rng;
static const char *data_dir;
static gpk_backend backend = GPK_BACKEND_CPU;
static int device_count = 1; /* cuda: the devices this rank may use */
static int local_rank;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The same random value on every rank. */
static uint64_t shared_random(void)
{
    uint64_t v = gpk_rng_next(&rng);
    MPI_Bcast(&v, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    return v;
}

/* This rank's contexts: count of the backend under test, one thread each. */
static int make_ctxs(gpk_ctx **cs, int count)
{
    for (int g = 0; g < count; g++) {
        gpk_ctx_opts co = GPK_CTX_OPTS_INIT;
        co.backend = backend;
        co.threads = 1;
        if (backend == GPK_BACKEND_CUDA) co.device = (local_rank * count + g) % device_count;
        if (gpk_ctx_create_ex(&cs[g], &co) != GPK_OK) {
            fprintf(stderr, "rank %d: context %d: %s\n", rank, g, gpk_last_error(NULL));
            while (g-- > 0) gpk_ctx_destroy(cs[g]);
            return 0;
        }
    }
    return 1;
}

static void free_ctxs(gpk_ctx **cs, int count)
{
    for (int g = 0; g < count; g++) gpk_ctx_destroy(cs[g]);
}

static int same_solution(const gpk_search_result *a, const gpk_search_result *b)
{
    return a->n == b->n && a->best == b->best && a->solution && b->solution &&
        memcmp(a->solution, b->solution, a->n * sizeof *a->solution) == 0;
}

/* 1 when every rank says 1. */
static int all_ranks(int ok)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

/* The MPI multistart against the one-process references. */
static void check_equal(const char *label, const gpk_search_problem *pb, gpk_search_opts o, int count)
{
    gpk_ctx *cs[4], *ref_ctx;
    if (!make_ctxs(cs, count) || gpk_ctx_create(&ref_ctx, GPK_BACKEND_CPU) != GPK_OK) {
        TU_CHECK(0, "rank %d: %s: contexts", rank, label);
        return;
    }
    gpk_ctx_set_threads(ref_ctx, 1);
    gpk_search_result res, ref, one;
    gpk_mpi_search_run *runs = NULL;
    const double t0 = now_s();
    const gpk_status st = gpk_mpi_search_multistart(MPI_COMM_WORLD, cs, count, pb, &o, &res, &runs);
    const double ms = (now_s() - t0) * 1e3;
    TU_CHECK(st == GPK_OK, "rank %d: %s: %s", rank, label, gpk_last_error(cs[0]));
    const gpk_status rs = gpk_search_run_multi(&ref_ctx, 1, pb, &o, &ref);
    TU_CHECK(rs == GPK_OK, "rank %d: %s: reference: %s", rank, label, gpk_last_error(ref_ctx));
    if (st == GPK_OK && rs == GPK_OK) {
        const uint32_t total = o.starts;
        TU_CHECK(same_solution(&res, &ref) && res.best_run == ref.best_run && res.runs == ref.runs &&
                     res.evaluated == ref.evaluated && res.iterations == ref.iterations,
                 "rank %d of %d: %s: best %lld run %u (%llu evaluated), one process %lld run %u (%llu)", rank,
                 size, label, (long long)res.best, res.best_run, (unsigned long long)res.evaluated,
                 (long long)ref.best, ref.best_run, (unsigned long long)ref.evaluated);
        TU_CHECK(full_cost(pb, res.solution) == res.best,
                 "rank %d: %s: the solution does not evaluate to the best", rank, label);
        if (backend == GPK_BACKEND_CUDA)
            TU_CHECK(res.gpu_evaluated == res.evaluated, "rank %d: %s: %llu of %llu neighbours on a GPU (%s)",
                     rank, label, (unsigned long long)res.gpu_evaluated, (unsigned long long)res.evaluated,
                     gpk_last_error(cs[0]));
        TU_CHECK(res.runs == total && runs != NULL, "rank %d: %s: %u runs, asked %u", rank, label, res.runs,
                 total);
        /* Each run's record: the run alone (two of them, to keep it quick),
         * and the rank that ran it. */
        uint64_t evaluated = 0;
        for (uint32_t r = 0; runs && r < res.runs; r++) {
            evaluated += runs[r].evaluated;
            TU_CHECK(runs[r].best >= res.best, "rank %d: %s: run %u better than the best", rank, label, r);
            TU_CHECK(runs[r].rank >= 0 && runs[r].rank < size, "rank %d: %s: run %u on rank %d", rank, label,
                     r, runs[r].rank);
        }
        TU_CHECK(!runs || evaluated == res.evaluated, "rank %d: %s: runs' evaluated sum differs", rank,
                 label);
        const uint32_t probe[2] = {res.best_run, res.runs - 1};
        for (int k = 0; runs && k < 2; k++) {
            const uint32_t r = probe[k];
            gpk_search_opts a = o;
            if (a.algo == GPK_SEARCH_MULTISTART) a.algo = GPK_SEARCH_ITS;
            a.seed = gpk__splitmix64(o.seed + r);
            a.start = r == 0 ? o.start : NULL;
            a.starts = 0;
            if (gpk_search_run(ref_ctx, pb, &a, &one) == GPK_OK) {
                TU_CHECK(one.best == runs[r].best && one.evaluated == runs[r].evaluated,
                         "rank %d: %s: run %u recorded %lld, alone %lld", rank, label, r,
                         (long long)runs[r].best, (long long)one.best);
                gpk_search_result_free(&one);
            } else {
                TU_CHECK(0, "rank %d: %s: run %u alone: %s", rank, label, r, gpk_last_error(ref_ctx));
            }
        }
        if (o.algo == GPK_SEARCH_MULTISTART) {
            /* the one-process multistart: starts over the threads */
            gpk_ctx_set_threads(ref_ctx, 2);
            if (gpk_search_run(ref_ctx, pb, &o, &one) == GPK_OK) {
                TU_CHECK(same_solution(&res, &one),
                         "rank %d: %s: gpk_search_run multistart found %lld, MPI %lld", rank, label,
                         (long long)one.best, (long long)res.best);
                gpk_search_result_free(&one);
            } else {
                TU_CHECK(0, "rank %d: %s: one-process multistart: %s", rank, label, gpk_last_error(ref_ctx));
            }
        }
        if (rank == 0)
            printf("  %-40s %u starts, %d ranks x %d: best %lld (run %u), %.1f ms\n", label, total, size,
                   count, (long long)res.best, res.best_run, ms);
    }
    free(runs);
    gpk_search_result_free(&res);
    gpk_search_result_free(&ref);
    gpk_ctx_destroy(ref_ctx);
    free_ctxs(cs, count);
}

/* Every rank must return `want` with `needle` in its message. */
static void check_refused(const char *label, gpk_status want, const char *needle, gpk_status st,
                          const char *msg)
{
    TU_CHECK(st == want, "rank %d: %s: status %d (%s), expected %d", rank, label, (int)st, msg, (int)want);
    TU_CHECK(strstr(msg, needle) != NULL, "rank %d: %s: message '%s' lacks '%s'", rank, label, msg, needle);
    if (rank == 0) printf("  %-40s refused on every rank: %s\n", label, msg);
}

static void bad_input(const gpk_search_problem *pb, const gpk_search_problem *other)
{
    gpk_ctx *cs[1];
    if (!make_ctxs(cs, 1)) {
        TU_CHECK(0, "rank %d: contexts", rank);
        return;
    }
    gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
    o.algo = GPK_SEARCH_TABU;
    o.iters = 20;
    o.starts = (uint32_t)size + 1;
    o.seed = shared_random();
    gpk_search_result res;
    gpk_status st;
    const int last = size - 1;

    if (size > 1 && other) {
        /* the last rank read another instance */
        st = gpk_mpi_search_multistart(MPI_COMM_WORLD, cs, 1, rank == last ? other : pb, &o, &res, NULL);
        char needle[64];
        snprintf(needle, sizeof needle, "rank %d's problem differs", last);
        check_refused("another instance on the last rank", GPK_EINVAL, needle, st, gpk_last_error(cs[0]));
    }
    if (size > 1) {
        gpk_search_opts p = o;
        if (rank == last) p.seed++;
        st = gpk_mpi_search_multistart(MPI_COMM_WORLD, cs, 1, pb, &p, &res, NULL);
        check_refused("another seed on the last rank", GPK_EINVAL, "seed", st, gpk_last_error(cs[0]));
        p = o;
        if (rank == last) p.iters = 21;
        st = gpk_mpi_search_multistart(MPI_COMM_WORLD, cs, 1, pb, &p, &res, NULL);
        check_refused("other iters on the last rank", GPK_EINVAL, "iters", st, gpk_last_error(cs[0]));
    }
    /* no contexts on the last rank (which has no context for a message) */
    st = gpk_mpi_search_multistart(MPI_COMM_WORLD, rank == last ? NULL : cs, rank == last ? 0 : 1, pb, &o,
                                   &res, NULL);
    char needle[64];
    snprintf(needle, sizeof needle, "rank %d: no contexts", last);
    if (rank == last) /* no context to hold a message: the status alone */
        TU_CHECK(st == GPK_EINVAL, "rank %d: no contexts: status %d", rank, (int)st);
    else check_refused("no contexts on the last rank", GPK_EINVAL, needle, st, gpk_last_error(cs[0]));
    /* a NULL problem on rank 0 */
    st = gpk_mpi_search_multistart(MPI_COMM_WORLD, cs, 1, rank == 0 ? NULL : pb, &o, &res, NULL);
    check_refused("a NULL problem on rank 0", GPK_EINVAL, "rank 0: NULL problem", st, gpk_last_error(cs[0]));
    /* a run that fails, on rank 0 only (one start): every rank reports it */
    gpk_search_opts p = o;
    p.nb = pb->kind == GPK_PROBLEM_PPP ? GPK_NB_SWAP : GPK_NB_FLIP1;
    p.starts = 1;
    st = gpk_mpi_search_multistart(MPI_COMM_WORLD, cs, 1, pb, &p, &res, NULL);
    check_refused("a failing run on rank 0 alone", GPK_EINVAL, "rank 0: run 0: gpk_search_run: neighbourhood",
                  st, gpk_last_error(cs[0]));
    /* the same calls still work after the refusals (nothing left in flight) */
    st = gpk_mpi_search_multistart(MPI_COMM_WORLD, cs, 1, pb, &o, &res, NULL);
    TU_CHECK(st == GPK_OK && full_cost(pb, res.solution) == res.best,
             "rank %d: a good call after the refusals: %s", rank, gpk_last_error(cs[0]));
    gpk_search_result_free(&res);
    /* MPI_COMM_NULL: refused on the spot (no collective) */
    st = gpk_mpi_search_multistart(MPI_COMM_NULL, cs, 1, pb, &o, &res, NULL);
    TU_CHECK(st == GPK_EINVAL && strstr(gpk_last_error(cs[0]), "MPI_COMM_NULL"),
             "rank %d: MPI_COMM_NULL: %d %s", rank, (int)st, gpk_last_error(cs[0]));
    /* a communicator of one rank: all the runs here, the same result */
    gpk_search_result one;
    st = gpk_mpi_search_multistart(MPI_COMM_SELF, cs, 1, pb, &o, &one, NULL);
    TU_CHECK(st == GPK_OK, "rank %d: MPI_COMM_SELF: %s", rank, gpk_last_error(cs[0]));
    gpk_status sw = gpk_mpi_search_multistart(MPI_COMM_WORLD, cs, 1, pb, &o, &res, NULL);
    TU_CHECK(sw == GPK_OK && st == GPK_OK && same_solution(&one, &res) && one.best_run == res.best_run,
             "rank %d: MPI_COMM_SELF found %lld, MPI_COMM_WORLD %lld", rank, (long long)one.best,
             (long long)res.best);
    if (rank == 0 && st == GPK_OK)
        printf("  %-40s best %lld, as on all ranks\n", "MPI_COMM_SELF", (long long)one.best);
    gpk_search_result_free(&one);
    gpk_search_result_free(&res);
    free_ctxs(cs, 1);
}

/* ---- stops -------------------------------------------------------------------------- */

typedef struct {
    volatile sig_atomic_t *flag;
    double after_s;
} delayed;

static void *set_later(void *arg)
{
    delayed *d = arg;
    struct timespec t = {(time_t)d->after_s, (long)((d->after_s - (double)(time_t)d->after_s) * 1e9)};
    nanosleep(&t, NULL);
    *d->flag = SIGINT;
    return NULL;
}

/* A search far longer than the test stopped by a cancel on one rank, or by
 * a time limit: every rank returns OK with a valid best, soon. */
static void stops(const gpk_search_problem *pb)
{
    gpk_ctx *cs[2];
    if (!make_ctxs(cs, 2)) {
        TU_CHECK(0, "rank %d: contexts", rank);
        return;
    }
    gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
    o.algo = GPK_SEARCH_TABU;
    o.iters = 1000000000ull; /* hours: only a stop ends it */
    o.starts = (uint32_t)(2 * size + 1);
    o.seed = shared_random();
    volatile sig_atomic_t flag = 0;
    o.cancel = &flag;
    gpk_search_result res;
    for (int who = 0; who<size; who += size> 1 ? size - 1 : 1) {
        /* rank `who` is interrupted after 0.2 s */
        flag = 0;
        pthread_t th;
        delayed d = {&flag, 0.2};
        const int mine = rank == who;
        const double t0 = now_s(); /* before the thread: its 0.2 s start at its creation */
        if (mine) pthread_create(&th, NULL, set_later, &d);
        const gpk_status st = gpk_mpi_search_multistart(MPI_COMM_WORLD, cs, 2, pb, &o, &res, NULL);
        const double s = now_s() - t0;
        if (mine) pthread_join(th, NULL);
        TU_CHECK(st == GPK_OK, "rank %d: cancel on rank %d: %s", rank, who, gpk_last_error(cs[0]));
        if (st == GPK_OK) {
            TU_CHECK(res.stopped == GPK_SEARCH_CANCELLED, "rank %d: cancel on rank %d: stopped = %d", rank,
                     who, (int)res.stopped);
            TU_CHECK(full_cost(pb, res.solution) == res.best && res.runs == o.starts,
                     "rank %d: cancel on rank %d: no valid best", rank, who);
            /* the lower bound on the interrupted rank alone: the others may
             * have entered the call a little later */
            TU_CHECK((!mine || s >= 0.2) && s < 30.0, "rank %d: cancel on rank %d: returned after %.2f s",
                     rank, who, s);
            if (rank == 0)
                printf("  %-40s every rank returned best %lld after %.2f s\n",
                       who == 0 ? "SIGINT flag on rank 0 at 0.2 s" : "SIGINT flag on the last rank at 0.2 s",
                       (long long)res.best, s);
        }
        gpk_search_result_free(&res);
        TU_CHECK(all_ranks(st == GPK_OK), "rank %d: another rank failed the cancel test", rank);
    }
    /* a flag already set: the runs stop at once, still a best */
    flag = rank == 0;
    gpk_status st = gpk_mpi_search_multistart(MPI_COMM_WORLD, cs, 2, pb, &o, &res, NULL);
    TU_CHECK(st == GPK_OK && res.stopped == GPK_SEARCH_CANCELLED && full_cost(pb, res.solution) == res.best,
             "rank %d: cancel before the call: %d %s", rank, (int)st, gpk_last_error(cs[0]));
    gpk_search_result_free(&res);
    /* a time limit */
    flag = 0;
    o.time_limit = 0.3;
    const double t0 = now_s();
    st = gpk_mpi_search_multistart(MPI_COMM_WORLD, cs, 2, pb, &o, &res, NULL);
    const double s = now_s() - t0;
    TU_CHECK(st == GPK_OK, "rank %d: time limit: %s", rank, gpk_last_error(cs[0]));
    if (st == GPK_OK) {
        TU_CHECK(res.stopped == GPK_SEARCH_TIME_LIMIT && full_cost(pb, res.solution) == res.best,
                 "rank %d: time limit: stopped %d", rank, (int)res.stopped);
        TU_CHECK(s >= 0.3 && s < 30.0, "rank %d: time limit 0.3 s: returned after %.2f s", rank, s);
        if (rank == 0)
            printf("  %-40s every rank returned best %lld after %.2f s\n", "time limit 0.3 s",
                   (long long)res.best, s);
    }
    gpk_search_result_free(&res);
    free_ctxs(cs, 2);
}

int main(int argc, char **argv)
{
    /* "single": MPI_THREAD_SINGLE, under which the call must refuse on every
     * rank (its searches run on threads) */
    const int single = argc >= 2 && strcmp(argv[1], "single") == 0;
    int provided = 0;
    MPI_Init_thread(&argc, &argv, single ? MPI_THREAD_SINGLE : MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (single) {
        gpk_ppp p;
        gpk_ctx *c;
        int ok = gpk_ppp_generate(21, 21, 7, &p) == GPK_OK && gpk_ctx_create(&c, GPK_BACKEND_CPU) == GPK_OK;
        TU_CHECK(ok, "rank %d: set-up: %s", rank, gpk_last_error(NULL));
        if (ok) {
            gpk_search_problem pb = {GPK_PROBLEM_PPP, NULL, NULL, &p};
            gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
            o.starts = 3;
            gpk_search_result res;
            const gpk_status st = gpk_mpi_search_multistart(MPI_COMM_WORLD, &c, 1, &pb, &o, &res, NULL);
            TU_CHECK(st == GPK_EINVAL && strstr(gpk_last_error(c), "MPI_THREAD_SINGLE"),
                     "rank %d: MPI_THREAD_SINGLE: status %d, '%s'", rank, (int)st, gpk_last_error(c));
            if (rank == 0) printf("MPI_THREAD_SINGLE: refused on every rank: %s\n", gpk_last_error(c));
            gpk_ctx_destroy(c);
            gpk_ppp_free(&p);
        }
        int fails = tu_failures, all_fails = 0;
        MPI_Allreduce(&fails, &all_fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Finalize();
        return all_fails ? 1 : 0;
    }
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_free(&node);
    if (argc < 2 || (strcmp(argv[1], "cpu") != 0 && strcmp(argv[1], "cuda") != 0)) {
        if (rank == 0) fprintf(stderr, "usage: mpirun -np P test_mpi_search cpu|cuda|single [DATA_DIR]\n");
        MPI_Finalize();
        return 2;
    }
    if (strcmp(argv[1], "cuda") == 0) {
        backend = GPK_BACKEND_CUDA;
        /* the devices: as many as contexts can be made on */
        gpk_ctx *probe;
        int have = 0;
        for (; have < 64; have++) {
            gpk_ctx_opts co = GPK_CTX_OPTS_INIT;
            co.backend = GPK_BACKEND_CUDA;
            co.device = have;
            if (gpk_ctx_create_ex(&probe, &co) != GPK_OK) break;
            gpk_ctx_destroy(probe);
        }
        if (!all_ranks(have > 0)) {
            if (rank == 0) printf("cuda: no usable device on some rank: skipped\n");
            MPI_Finalize();
            return TU_SKIP;
        }
        device_count = have;
    }
    uint64_t seed = rank == 0 ? tu_seed() : 0;
    MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    gpk_rng_seed(&rng, seed);
    data_dir = argc > 2 ? argv[2] : NULL;
    struct stat sb;
    if (data_dir && (stat(data_dir, &sb) != 0 || !S_ISDIR(sb.st_mode))) data_dir = NULL;
    if (rank == 0) printf("%d ranks, backend %s, data %s\n", size, argv[1], data_dir ? data_dir : "(none)");

    /* The instances: generated PPP always; QAP and TSP from the data. */
    gpk_ppp ppp, ppp2;
    gpk_qap qap, qap2;
    gpk_tsp tsp, tsp2;
    memset(&qap, 0, sizeof qap);
    memset(&qap2, 0, sizeof qap2);
    memset(&tsp, 0, sizeof tsp);
    memset(&tsp2, 0, sizeof tsp2);
    int have_qap = 0, have_tsp = 0;
    TU_CHECK(gpk_ppp_generate(21, 21, 7, &ppp) == GPK_OK && gpk_ppp_generate(21, 21, 8, &ppp2) == GPK_OK,
             "ppp: %s", gpk_last_error(NULL));
    if (data_dir) {
        char path[1024];
        snprintf(path, sizeof path, "%s/qaplib/tai12a.dat", data_dir);
        have_qap = gpk_qap_load(path, &qap) == GPK_OK;
        snprintf(path, sizeof path, "%s/qaplib/nug12.dat", data_dir);
        have_qap = have_qap && gpk_qap_load(path, &qap2) == GPK_OK;
        snprintf(path, sizeof path, "%s/tsplib/burma14.tsp", data_dir);
        have_tsp = gpk_tsp_load(path, &tsp) == GPK_OK;
        snprintf(path, sizeof path, "%s/tsplib/eil101.tsp", data_dir);
        have_tsp = have_tsp && gpk_tsp_load(path, &tsp2) == GPK_OK;
    }
    if (!all_ranks(have_qap) || !all_ranks(have_tsp)) {
        have_qap = have_tsp = 0;
        if (rank == 0) printf("QAP/TSP instances not found on every rank: those parts are skipped\n");
    }
    gpk_search_problem pp = {GPK_PROBLEM_PPP, NULL, NULL, &ppp}, pp2 = {GPK_PROBLEM_PPP, NULL, NULL, &ppp2};
    gpk_search_problem pq = {GPK_PROBLEM_QAP, &qap, NULL, NULL}, pq2 = {GPK_PROBLEM_QAP, &qap2, NULL, NULL};
    gpk_search_problem pt = {GPK_PROBLEM_TSP, NULL, &tsp, NULL}, pt2 = {GPK_PROBLEM_TSP, NULL, &tsp2, NULL};

    /* Starts around the rank count: fewer, equal, not divided, more. */
    const uint32_t P = (uint32_t)size;
    const uint32_t starts_list[] = {1, P > 1 ? P - 1 : 2, P, P + 1, 2 * P + 1, 7};
    /* or2opt (an iterated local search on neighbour lists, the TSP's
     * default) runs on the CPU of a CUDA context below 20000 cities: the
     * CPU test alone; burma14 asks for 2opt, the device scan's */
    const gpk_search_problem *pbs[4] = {&pp, have_qap ? &pq : NULL, have_tsp ? &pt : NULL,
                                        have_tsp && backend == GPK_BACKEND_CPU ? &pt2 : NULL};
    const char *names[4] = {"ppp 21-21-7", "qap tai12a", "tsp burma14 2opt", "tsp eil101 or2opt"};
    const gpk_neighbourhood nbs[4] = {GPK_NB_DEFAULT, GPK_NB_DEFAULT, GPK_NB_TWO_OPT, GPK_NB_OR_OPT};
    const gpk_search_algo algos[3] = {GPK_SEARCH_MULTISTART, GPK_SEARCH_TABU, GPK_SEARCH_HC_BEST};
    if (rank == 0) printf("the MPI multistart against one process:\n");
    for (int p = 0; p < 4; p++) {
        if (!pbs[p]) continue;
        for (size_t k = 0; k < sizeof starts_list / sizeof *starts_list; k++) {
            gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
            o.nb = nbs[p];
            o.algo = algos[(p + k) % 3];
            o.iters = o.algo == GPK_SEARCH_HC_BEST ? 0 : 30;
            o.global_iters = 2;
            o.starts = starts_list[k];
            o.seed = shared_random();
            /* ranks with different context counts on odd k */
            const int count = k % 2 ? 1 + rank % 2 : 1;
            char label[96];
            snprintf(label, sizeof label, "%s %s%s", names[p], gpk_search_algo_name(o.algo),
                     k % 2 ? ", 1-2 ctx/rank" : "");
            check_equal(label, pbs[p], o, count);
        }
    }
    /* A start solution for run 0 (on the rank that has run 0). */
    if (have_qap) {
        uint32_t start[12];
        for (uint32_t i = 0; i < 12; i++) start[i] = 11 - i;
        gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
        o.algo = GPK_SEARCH_ITS;
        o.iters = 30;
        o.global_iters = 2;
        o.starts = P + 2;
        o.seed = shared_random();
        o.start = start;
        check_equal("qap tai12a its, run 0 from a start", &pq, o, 1);
    }

    if (rank == 0) printf("bad input on one rank:\n");
    bad_input(have_qap ? &pq : &pp, have_qap ? &pq2 : &pp2);
    if (rank == 0) printf("stops:\n");
    /* tabu on a QAP runs all its iterations; a PPP search ends when solved */
    gpk_ppp hard;
    TU_CHECK(gpk_ppp_generate(73, 73, 1, &hard) == GPK_OK, "ppp 73-73-1: %s", gpk_last_error(NULL));
    gpk_search_problem ph = {GPK_PROBLEM_PPP, NULL, NULL, &hard};
    stops(have_qap ? &pq : &ph);
    gpk_ppp_free(&hard);

    gpk_ppp_free(&ppp);
    gpk_ppp_free(&ppp2);
    gpk_qap_free(&qap);
    gpk_qap_free(&qap2);
    gpk_tsp_free(&tsp);
    gpk_tsp_free(&tsp2);
    /* The verdict of all ranks. */
    int fails = tu_failures, all_fails = 0;
    MPI_Allreduce(&fails, &all_fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int checks = tu_checks, all_checks = 0;
    MPI_Allreduce(&checks, &all_checks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("test_mpi_search (%d ranks): %d checks, %d failed\n", size, all_checks, all_fails);
    MPI_Finalize();
    return all_fails ? 1 : 0;
}
