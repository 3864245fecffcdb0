/* The multistart table of issue 17 (docs/perf/search.md): the same S
 * independent tabu searches on 1 and K GPUs of one process
 * (gpk_search_run_multi, the paper's Algorithm 2) and over MPI ranks, one
 * GPU each (gpk_mpi_search_multistart), all in one launch:
 *
 *   mpirun -np 2 gpk_mpi_search_bench --instance tai256c --data DIR \
 *          --searches 2 --iters 3000 --gpus 1,2 [--json FILE]
 *
 * Rows: "1 process, K GPUs" for each K of --gpus (rank 0 alone, the other
 * ranks waiting), "MPI 1 rank" (rank 0 alone on MPI_COMM_SELF: the MPI
 * path's own cost), "MPI P ranks" (every rank, one GPU each, device =
 * local rank). Each row: one untimed run, then --reps timed runs, the
 * median; the time is rank 0's from a barrier to the result (which every
 * rank holds at that point). Every row must find the first row's best and
 * best run, its solution must evaluate to the best, and on CUDA every
 * neighbour must have been evaluated on a GPU: else the row says FAIL and
 * the exit status is 1. --backend cpu runs the same rows on CPU contexts
 * (--threads each), for the tests. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "gpk/mpi.h"
#include "gpk/search.h"
#include "io.h"

static int rank, size, local_rank;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mpirun -np P gpk_mpi_search_bench [options]\n"
            "  --instance NAME   a QAPLIB or TSPLIB file, or a name in --data (default tai256c)\n"
            "  --data DIR        the instances (DIR/qaplib, DIR/tsplib; default $GPK_DATA, else\n"
            "                    ../shared/data)\n"
            "  --searches S      independent tabu searches (default 2)\n"
            "  --iters N         tabu iterations per search (default 3000)\n"
            "  --seed S          (default 1)\n"
            "  --gpus LIST       the one-process rows: K GPUs for each K (default 1,2)\n"
            "  --reps R          timed runs per row, the median reported (default 3)\n"
            "  --backend B       cuda (default) or cpu\n"
            "  --threads T       CPU threads per context (default 1)\n"
            "  --json FILE       the rows as JSON (rank 0 writes it)\n");
}

typedef struct inst {
    gpk_qap qap;
    gpk_tsp tsp;
    gpk_search_problem pb;
    char label[96];
} inst;

static int load(const char *name, const char *data, inst *in)
{
    memset(in, 0, sizeof *in);
    char path[1200];
    const char *dot = strrchr(name, '.');
    const int is_tsp = dot && strcmp(dot, ".tsp") == 0;
    const int is_file = strchr(name, '/') != NULL || dot != NULL;
    gpk_status st;
    if (is_file) {
        snprintf(path, sizeof path, "%s", name);
        st = is_tsp ? gpk_tsp_load(path, &in->tsp) : gpk_qap_load(path, &in->qap);
        in->pb.kind = is_tsp ? GPK_PROBLEM_TSP : GPK_PROBLEM_QAP;
    } else {
        snprintf(path, sizeof path, "%s/qaplib/%s.dat", data, name);
        in->pb.kind = GPK_PROBLEM_QAP;
        st = gpk_qap_load(path, &in->qap);
        if (st != GPK_OK) {
            snprintf(path, sizeof path, "%s/tsplib/%s.tsp", data, name);
            in->pb.kind = GPK_PROBLEM_TSP;
            st = gpk_tsp_load(path, &in->tsp);
        }
    }
    if (st != GPK_OK) {
        fprintf(stderr, "gpk_mpi_search_bench: rank %d: %s: %s\n", rank, name, gpk_last_error(NULL));
        return -1;
    }
    in->pb.qap = &in->qap; /* the one of pb.kind is read */
    in->pb.tsp = &in->tsp;
    gpk_search_problem_info info;
    if (gpk_search_problem_describe(&in->pb, &info) != GPK_OK) {
        fprintf(stderr, "gpk_mpi_search_bench: rank %d: %s: %s\n", rank, name, gpk_last_error(NULL));
        return -1;
    }
    snprintf(in->label, sizeof in->label, "%s", info.name);
    return 0;
}

static int64_t full_cost(const gpk_search_problem *pb, const uint32_t *sol)
{
    int64_t cost = 0;
    gpk_search_problem_cost(pb, sol, &cost); /* a permutation: no memory needed */
    return cost;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* 1 when every rank passes ok. */
static int all_ok(int ok)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

typedef struct row {
    char name[48];
    int ranks, gpus; /* ranks x contexts per rank */
    double ms;       /* median */
    double ms_min, ms_max;
    int64_t best;
    uint32_t best_run;
    uint64_t evaluated;
    char verdict[200];
    int ran;
} row;

/* One row: `run` performs the search on this rank (or does nothing and
 * returns 1 when the row does not involve it); timed on rank 0. */
typedef int (*row_fn)(void *arg, gpk_search_result *res, const char **err);

static void measure(row *rw, int reps, row_fn fn, void *arg, int involved, const gpk_search_problem *pb,
                    int on_gpu, const row *first)
{
    double *t = calloc((size_t)reps, sizeof *t);
    int ok = 1;
    for (int k = -1; k < reps && ok; k++) {
        gpk_search_result res;
        memset(&res, 0, sizeof res);
        const char *err = NULL;
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = cli_now_ms();
        int good = involved ? fn(arg, &res, &err) : 1;
        const double ms = cli_now_ms() - t0;
        if (involved && rank == 0) {
            if (!good) {
                snprintf(rw->verdict, sizeof rw->verdict, "ERROR: %s", err ? err : "?");
            } else if (full_cost(pb, res.solution) != res.best) {
                snprintf(rw->verdict, sizeof rw->verdict, "FAIL: the solution does not evaluate to %lld",
                         (long long)res.best);
                good = 0;
            } else if (on_gpu && res.gpu_evaluated != res.evaluated) {
                snprintf(rw->verdict, sizeof rw->verdict, "FAIL: %llu of %llu neighbours on a GPU",
                         (unsigned long long)res.gpu_evaluated, (unsigned long long)res.evaluated);
                good = 0;
            } else if (first && first->ran && (res.best != first->best || res.best_run != first->best_run)) {
                snprintf(rw->verdict, sizeof rw->verdict, "FAIL: best %lld (run %u), first row %lld (run %u)",
                         (long long)res.best, res.best_run, (long long)first->best, first->best_run);
                good = 0;
            }
            rw->best = res.best;
            rw->best_run = res.best_run;
            rw->evaluated = res.evaluated;
        } else if (involved && !good) {
            fprintf(stderr, "gpk_mpi_search_bench: rank %d: %s: %s\n", rank, rw->name, err ? err : "?");
        }
        if (k >= 0) t[k] = ms;
        gpk_search_result_free(&res);
        ok = all_ok(good);
    }
    if (ok && rank == 0) {
        qsort(t, (size_t)reps, sizeof *t, cmp_double);
        rw->ms = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
        rw->ms_min = t[0];
        rw->ms_max = t[reps - 1];
        snprintf(rw->verdict, sizeof rw->verdict, "ok");
        rw->ran = 1;
    } else if (!ok && rank == 0 && !rw->verdict[0]) {
        snprintf(rw->verdict, sizeof rw->verdict, "ERROR on another rank (its message above)");
    }
    free(t);
}

typedef struct call {
    gpk_ctx **ctxs;
    int count;
    MPI_Comm comm;
    int mpi;
    const gpk_search_problem *pb;
    const gpk_search_opts *o;
} call;

static int run_call(void *arg, gpk_search_result *res, const char **err)
{
    call *c = arg;
    const gpk_status st = c->mpi
        ? gpk_mpi_search_multistart(c->comm, c->ctxs, c->count, c->pb, c->o, res, NULL)
        : gpk_search_run_multi(c->ctxs, c->count, c->pb, c->o, res);
    if (st != GPK_OK) *err = gpk_last_error(c->ctxs[0]);
    return st == GPK_OK;
}

/* The options. */
typedef struct mb_opts {
    const char *name, *json, *gpus_list, *data;
    uint64_t searches, iters, seed, reps, threads;
    gpk_backend backend;
    int gpus[16], ngpus, max_gpus;
} mb_opts;

/* 0, 1 on a bad argument, 2 for --help. */
static int parse_args(int argc, char **argv, mb_opts *op)
{
    int bad = 0;
    for (int i = 1; i < argc && !bad; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) return 2;
        if (!v) {
            bad = 1;
        } else if (strcmp(a, "--instance") == 0) {
            op->name = v;
        } else if (strcmp(a, "--data") == 0) {
            op->data = v;
        } else if (strcmp(a, "--json") == 0) {
            op->json = v;
        } else if (strcmp(a, "--gpus") == 0) {
            op->gpus_list = v;
        } else if (strcmp(a, "--backend") == 0) {
            if (gpk_backend_parse(v, &op->backend) != GPK_OK ||
                (op->backend != GPK_BACKEND_CUDA && op->backend != GPK_BACKEND_CPU))
                bad = 1;
        } else {
            uint64_t *dst = strcmp(a, "--searches") == 0 ? &op->searches
                : strcmp(a, "--iters") == 0              ? &op->iters
                : strcmp(a, "--seed") == 0               ? &op->seed
                : strcmp(a, "--reps") == 0               ? &op->reps
                : strcmp(a, "--threads") == 0            ? &op->threads
                                                         : NULL;
            if (!dst || cli_parse_uint(v, strcmp(a, "--seed") == 0 ? 0 : 1, UINT32_MAX, dst) != 0) bad = 1;
        }
        i++;
    }
    if (!bad) {
        char gl[128];
        snprintf(gl, sizeof gl, "%s", op->gpus_list);
        for (char *tok = strtok(gl, ","); tok && !bad; tok = strtok(NULL, ",")) {
            uint64_t v;
            if (op->ngpus == 16 || cli_parse_uint(tok, 1, 64, &v) != 0) bad = 1;
            else op->gpus[op->ngpus++] = (int)v;
            if (!bad && (int)v > op->max_gpus) op->max_gpus = (int)v;
        }
    }
    return bad;
}

/* The rows: one process with K contexts, MPI on rank 0 alone, MPI on every
 * rank. Returns the row count. */
static int measure_rows(const mb_opts *op, inst *in, gpk_ctx **mine, gpk_ctx **multi, int have, row *rows)
{
    gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
    o.algo = GPK_SEARCH_TABU;
    o.iters = op->iters;
    o.seed = op->seed;
    o.starts = (uint32_t)op->searches;
    const int on_gpu = op->backend == GPK_BACKEND_CUDA;
    const int reps = (int)op->reps;
    int nrows = 0;
    /* one process, K contexts */
    for (int q = 0; q < op->ngpus; q++) {
        row *rw = &rows[nrows++];
        const int k = op->gpus[q];
        snprintf(rw->name, sizeof rw->name, "1 process, %d %s", k,
                 on_gpu ? (k > 1 ? "GPUs" : "GPU") : (k > 1 ? "contexts" : "context"));
        rw->ranks = 1;
        rw->gpus = k;
        int present = rank == 0 ? have : 0;
        MPI_Bcast(&present, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (k > present) {
            if (rank == 0) snprintf(rw->verdict, sizeof rw->verdict, "skipped: %d present", present);
            continue;
        }
        call c = {multi, k, MPI_COMM_NULL, 0, &in->pb, &o};
        measure(rw, reps, run_call, &c, rank == 0, &in->pb, on_gpu, &rows[0]);
    }
    /* MPI, rank 0 alone */
    {
        row *rw = &rows[nrows++];
        snprintf(rw->name, sizeof rw->name, "MPI, 1 rank");
        rw->ranks = 1;
        rw->gpus = 1;
        call c = {mine, 1, MPI_COMM_SELF, 1, &in->pb, &o};
        measure(rw, reps, run_call, &c, rank == 0, &in->pb, on_gpu, &rows[0]);
    }
    /* MPI, every rank */
    if (size > 1) {
        row *rw = &rows[nrows++];
        snprintf(rw->name, sizeof rw->name, "MPI, %d ranks", size);
        rw->ranks = size;
        rw->gpus = 1;
        call c = {mine, 1, MPI_COMM_WORLD, 1, &in->pb, &o};
        measure(rw, reps, run_call, &c, 1, &in->pb, on_gpu, &rows[0]);
    }
    return nrows;
}

/* Rank 0: the table; the failed rows. */
static int print_rows(const row *rows, int nrows)
{
    int fails = 0;
    const double base = rows[0].ran ? rows[0].ms : 0;
    for (int k = 0; k < nrows; k++) {
        const row *rw = &rows[k];
        char sp[16] = "-", ms[16] = "-", best[24] = "-", run[12] = "-";
        if (rw->ran) {
            snprintf(ms, sizeof ms, "%.1f", rw->ms);
            if (base > 0) snprintf(sp, sizeof sp, "%.2fx", base / rw->ms);
            snprintf(best, sizeof best, "%lld", (long long)rw->best);
            snprintf(run, sizeof run, "%u", rw->best_run);
        }
        if (strcmp(rw->verdict, "ok") != 0 && strncmp(rw->verdict, "skipped", 7) != 0) fails++;
        printf("%-26s %6d %11d %9s %9s %14s %5s  %s\n", rw->name, rw->ranks, rw->ranks * rw->gpus, ms, sp,
               best, run, rw->verdict);
    }
    return fails;
}

/* Rank 0: the JSON record; 0, or 1 when it cannot be written. */
static int write_json(io_out *jo, const mb_opts *op, const inst *in, gpk_ctx *mine, const row *rows,
                      int nrows)
{
    gpk_ctx_info info;
    gpk_ctx_info_get(mine, &info);
    fprintf(jo->f, "{\"bench\": \"mpi_search\", \"instance\": ");
    cli_json_str(jo->f, in->label);
    fprintf(jo->f,
            ", \"searches\": %llu, \"iters\": %llu, \"seed\": %llu, \"reps\": %llu, \"backend\": \"%s\", "
            "\"device\": ",
            (unsigned long long)op->searches, (unsigned long long)op->iters, (unsigned long long)op->seed,
            (unsigned long long)op->reps, gpk_backend_name(op->backend));
    cli_json_str(jo->f, info.device_name);
    fprintf(jo->f, ", \"ranks\": %d, \"rows\": [", size);
    for (int k = 0; k < nrows; k++) {
        const row *rw = &rows[k];
        fprintf(jo->f, "%s\n {\"row\": ", k ? "," : "");
        cli_json_str(jo->f, rw->name);
        fprintf(jo->f, ", \"ranks\": %d, \"contexts\": %d", rw->ranks, rw->ranks * rw->gpus);
        if (rw->ran)
            fprintf(jo->f,
                    ", \"ms\": %.6f, \"ms_min\": %.6f, \"ms_max\": %.6f, \"speedup\": %.6f, \"best\": %lld, "
                    "\"best_run\": %u, \"evaluated\": %llu",
                    rw->ms, rw->ms_min, rw->ms_max, rows[0].ran ? rows[0].ms / rw->ms : 0.0,
                    (long long)rw->best, rw->best_run, (unsigned long long)rw->evaluated);
        fprintf(jo->f, ", \"check\": ");
        cli_json_str(jo->f, rw->verdict);
        fprintf(jo->f, "}");
    }
    fprintf(jo->f, "\n]}\n");
    char err[600];
    if (io_out_commit(jo, err, sizeof err) != 0) {
        fprintf(stderr, "gpk_mpi_search_bench: %s\n", err);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_free(&node);

    mb_opts op = {
        "tai256c", NULL,
        "1,2",     getenv("GPK_DATA") && *getenv("GPK_DATA") ? getenv("GPK_DATA") : "../shared/data",
        2,         3000,
        1,         3,
        1,         GPK_BACKEND_CUDA,
        {0},       0,
        1};
    const int parsed = parse_args(argc, argv, &op);
    if (parsed) {
        if (rank == 0) usage(parsed == 2 ? stdout : stderr);
        MPI_Finalize();
        return parsed == 2 ? 0 : 2;
    }
    /* rank 0 checks the JSON output before any work */
    io_out jo;
    memset(&jo, 0, sizeof jo);
    char err[600];
    int ok = 1;
    if (rank == 0 && op.json && io_out_open(&jo, op.json, err, sizeof err) != 0) {
        fprintf(stderr, "gpk_mpi_search_bench: %s\n", err);
        ok = 0;
    }
    inst in;
    ok &= load(op.name, op.data, &in) == 0;
    /* rank 0: max_gpus contexts (devices 0..); every rank: its own (device local rank) */
    gpk_ctx *mine = NULL, *multi[64] = {NULL};
    gpk_ctx_opts co = GPK_CTX_OPTS_INIT;
    co.backend = op.backend;
    co.threads = (int)op.threads;
    co.device = op.backend == GPK_BACKEND_CUDA ? local_rank : -1;
    if (ok && gpk_ctx_create_ex(&mine, &co) != GPK_OK) {
        fprintf(stderr, "gpk_mpi_search_bench: rank %d: %s device %d: %s\n", rank,
                gpk_backend_name(op.backend), co.device, gpk_last_error(NULL));
        ok = 0;
    }
    int have = 0; /* rank 0's usable contexts for the one-process rows */
    if (ok && rank == 0) {
        for (; have < op.max_gpus; have++) {
            co.device = op.backend == GPK_BACKEND_CUDA ? have : -1;
            if (gpk_ctx_create_ex(&multi[have], &co) != GPK_OK) break;
        }
    }
    if (!all_ok(ok)) {
        if (rank == 0) {
            fprintf(stderr, "gpk_mpi_search_bench: a rank could not start (its message above)\n");
            io_out_abort(&jo);
        }
        MPI_Finalize();
        return 1;
    }
    if (rank == 0) {
        gpk_ctx_info info;
        gpk_ctx_info_get(mine, &info);
        printf("Multistart: %llu tabu searches of %llu iterations on %s (seed %llu), %s: %s; %d rank%s\n",
               (unsigned long long)op.searches, (unsigned long long)op.iters, in.label,
               (unsigned long long)op.seed, gpk_backend_name(op.backend), info.device_name, size,
               size > 1 ? "s" : "");
        printf("%-26s %6s %11s %9s %9s %14s %5s  %s\n", "", "ranks", "contexts", "ms", "speed-up", "best",
               "run", "check");
    }
    row rows[20];
    memset(rows, 0, sizeof rows);
    const int nrows = measure_rows(&op, &in, &mine, multi, have, rows);
    int fails = 0;
    if (rank == 0) {
        fails = print_rows(rows, nrows);
        if (jo.f) fails += write_json(&jo, &op, &in, mine, rows, nrows);
    }
    MPI_Bcast(&fails, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int g = 0; g < have; g++) gpk_ctx_destroy(multi[g]);
    gpk_ctx_destroy(mine);
    gpk_qap_free(&in.qap);
    gpk_tsp_free(&in.tsp);
    MPI_Finalize();
    return fails ? 1 : 0;
}
