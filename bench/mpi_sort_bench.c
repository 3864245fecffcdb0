/* The distributed sort's benchmark (issue 17), run under mpiexec:
 *
 *   gpk-mpi-sort-bench --mode device|host [--type u32|u64] [--values 0|4|8]
 *                      [--n-per-rank N] [--single N] [--reps R] [--threads T]
 *                      [--label TEXT]
 *
 * device: a CUDA context per rank on the GPU of its node-local rank, the
 * shards in device memory (gpk_mpi_sort_* with device_memory); host: CPU
 * contexts of T threads, shards in host memory. Each rank generates
 * n-per-rank uniform random keys (values: the global index) from its own
 * seed; one first call, then R timed sorts, each from the same input,
 * timed from a barrier to the slowest rank's return. The first call pays
 * for what the library keeps between calls (buffers, the window, CUDA IPC
 * mappings: gpk_mpi_sort_times.setup_ms) and is reported apart
 * (ms_first, phases_first_ms); the figure is the median of the R later
 * calls, with their minimum and their phases (each the slowest rank's
 * mean, gpk_mpi_last_sort_times), and a check of the last result (order
 * within and across ranks, sizes, key multiset).
 * --single N (with one rank): gpk's plain sort of N keys instead (device:
 * gpk_cuda_sort_*; host: gpk_sort_*), the one-GPU / one-process peer.
 * One JSON line per run on stdout (rank 0). */
#define _POSIX_C_SOURCE 200809L
#include <gpk/mpi.h>
#include <gpk/sort.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef GPK_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <gpk/cuda.h>
#endif

static int rank, nranks;

static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static void generate(void *keys, void *vals, size_t kw, size_t vw, size_t n, uint64_t seed, uint64_t first)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) {
        uint64_t x = mix(seed ^ mix(first + i));
        if (kw == 4) ((uint32_t *)keys)[i] = (uint32_t)x;
        else ((uint64_t *)keys)[i] = x;
        if (vw == 4) ((uint32_t *)vals)[i] = (uint32_t)(first + i);
        else if (vw == 8) ((uint64_t *)vals)[i] = first + i;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static uint64_t key_at(const void *k, size_t kw, size_t i)
{
    return kw == 4 ? ((const uint32_t *)k)[i] : ((const uint64_t *)k)[i];
}

/* order within and across ranks and the key multiset (unsigned types only) */
static const char *check(const void *in, size_t n_in, const void *out, size_t n_out, size_t kw)
{
    int ok = 1;
    uint64_t d0 = 0, d1 = 0, d[2], sum[2];
#pragma omp parallel for schedule(static) reduction(&& : ok)
    for (size_t i = 1; i < n_out; i++) ok = ok && key_at(out, kw, i - 1) <= key_at(out, kw, i);
#pragma omp parallel for schedule(static) reduction(+ : d0)
    for (size_t i = 0; i < n_in; i++) d0 += mix(key_at(in, kw, i));
#pragma omp parallel for schedule(static) reduction(+ : d1)
    for (size_t i = 0; i < n_out; i++) d1 += mix(key_at(out, kw, i));
    d[0] = d0, d[1] = d1;
    MPI_Allreduce(d, sum, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    uint64_t edge[3] = {n_out > 0, n_out ? key_at(out, kw, 0) : 0, n_out ? key_at(out, kw, n_out - 1) : 0};
    uint64_t *all = malloc(sizeof edge * (size_t)nranks);
    MPI_Allgather(edge, 3, MPI_UINT64_T, all, 3, MPI_UINT64_T, MPI_COMM_WORLD);
    int have = 0;
    uint64_t last = 0;
    for (int p = 0; p < nranks; p++) {
        if (!all[3 * p]) continue;
        if (have && last > all[3 * p + 1]) ok = 0;
        last = all[3 * p + 2], have = 1;
    }
    free(all);
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) return "FAILED (order)";
    if (sum[0] != sum[1]) return "FAILED (keys)";
    return "passed";
}

/* The options (MPI_Abort on a bad one). */
typedef struct bench_opts {
    const char *mode, *label;
    gpk_type type;
    size_t vw, n, single;
    int reps, threads;
} bench_opts;

static void parse_options(int argc, char **argv, bench_opts *o)
{
    const bench_opts defaults = {"host", "", GPK_U32, 0, (size_t)1 << 20, 0, 3, 0};
    *o = defaults;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--mode")) o->mode = v, i++;
        else if (!strcmp(a, "--type")) {
            if (gpk_type_parse(v, &o->type) != GPK_OK || (o->type != GPK_U32 && o->type != GPK_U64)) {
                fprintf(stderr, "--type: u32 or u64\n");
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            i++;
        } else if (!strcmp(a, "--values")) o->vw = strtoull(v, NULL, 0), i++;
        else if (!strcmp(a, "--n-per-rank")) o->n = strtoull(v, NULL, 0), i++;
        else if (!strcmp(a, "--single")) o->single = strtoull(v, NULL, 0), i++;
        else if (!strcmp(a, "--reps")) o->reps = atoi(v), i++;
        else if (!strcmp(a, "--threads")) o->threads = atoi(v), i++;
        else if (!strcmp(a, "--label")) o->label = v, i++;
        else {
            if (rank == 0)
                fprintf(stderr, "unknown option %s (see the comment at the top of bench/mpi_sort_bench.c)\n",
                        a);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (o->reps < 1 || o->reps > 100 || (o->vw != 0 && o->vw != 4 && o->vw != 8) ||
        (o->single && nranks != 1)) {
        if (rank == 0) fprintf(stderr, "bad --reps, --values, or --single with more than one rank\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

/* The median, best and first calls and their phases (each the slowest
 * rank's), one JSON line on rank 0. Collective. */
static void report(const bench_opts *o, const gpk_ctx_info *info, size_t n, double *ms,
                   const gpk_mpi_sort_times *ph, const char *verdict)
{
    const int reps = o->reps;
    const size_t single = o->single, vw = o->vw;
    const char *mode = o->mode, *label = o->label;
    const gpk_type type = o->type;
    /* the phases of the rank whose total is the median one's (rank 0's view of the slowest) */
    double med = median(ms + 1, reps), best = ms[1];
    for (int r = 2; r <= reps; r++) best = ms[r] < best ? ms[r] : best;
    gpk_mpi_sort_times sum = {0, 0, 0, 0, 0, "", 0, 0}, mx, ph_first = {0, 0, 0, 0, 0, "", 0, 0};
    int later_setups = 0;
    for (int r = 1; r <= reps && !single; r++) {
        sum.sort_ms += ph[r].sort_ms / reps, sum.split_ms += ph[r].split_ms / reps;
        sum.exchange_ms += ph[r].exchange_ms / reps, sum.merge_ms += ph[r].merge_ms / reps;
        sum.total_ms += ph[r].total_ms / reps, sum.setup_ms += ph[r].setup_ms / reps;
        later_setups += ph[r].setups;
    }
    if (!single) ph_first = ph[0];
    double sums[12] = {sum.sort_ms,          sum.split_ms,      sum.exchange_ms,   sum.merge_ms,
                       sum.total_ms,         sum.setup_ms,      ph_first.sort_ms,  ph_first.split_ms,
                       ph_first.exchange_ms, ph_first.merge_ms, ph_first.total_ms, ph_first.setup_ms},
           mxs[12];
    MPI_Reduce(sums, mxs, 12, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    mx.sort_ms = mxs[0], mx.split_ms = mxs[1], mx.exchange_ms = mxs[2], mx.merge_ms = mxs[3],
    mx.total_ms = mxs[4];
    mx.setup_ms = mxs[5];
    int setups_sum[2] = {later_setups, ph_first.setups}, setups_all[2] = {0, 0};
    MPI_Reduce(setups_sum, setups_all, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    const char *how = single ? "none" : reps >= 1 && ph[reps].exchange ? ph[reps].exchange : "";
    uint64_t N = (uint64_t)n * (uint64_t)nranks;
    if (rank == 0) {
        printf(
            "{\"bench\": \"mpi-sort\", \"label\": \"%s\", \"mode\": \"%s\", \"peer\": %s, \"ranks\": %d, "
            "\"device\": \"%s\", \"threads\": %u, \"type\": \"%s\", \"value_bytes\": %zu, \"n_per_rank\": "
            "%zu, "
            "\"n_total\": %" PRIu64 ", \"reps\": %d, \"ms_median\": %.3f, \"ms_min\": %.3f, "
            "\"gkeys_per_s\": %.3f, \"phases_ms_max_over_ranks\": {\"sort\": %.3f, \"split\": %.3f, "
            "\"exchange\": %.3f, \"merge\": %.3f, \"total\": %.3f, \"setup\": %.3f}, \"setups_later\": %d, "
            "\"ms_first\": %.3f, \"phases_first_ms\": {\"sort\": %.3f, \"split\": %.3f, \"exchange\": %.3f, "
            "\"merge\": %.3f, \"total\": %.3f, \"setup\": %.3f}, \"setups_first\": %d, "
            "\"nccl\": %s, \"exchange_env\": \"%s\", "
            "\"exchange_path\": \"%s\", \"check\": \"%s\"}\n",
            label, mode, single ? "true" : "false", nranks, info->device_name, info->threads,
            gpk_type_name(type), vw, n, N, reps, med, best, med > 0 ? N / (med * 1e6) : 0.0, mx.sort_ms,
            mx.split_ms, mx.exchange_ms, mx.merge_ms, mx.total_ms, mx.setup_ms, setups_all[0], ms[0], mxs[6],
            mxs[7], mxs[8], mxs[9], mxs[10], mxs[11], setups_all[1], gpk_mpi_have_nccl() ? "true" : "false",
            getenv("GPK_MPI_DEVICE_EXCHANGE") ? getenv("GPK_MPI_DEVICE_EXCHANGE") : "", how, verdict);
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    bench_opts o;
    parse_options(argc, argv, &o);
    const char *mode = o.mode;
    const gpk_type type = o.type;
    const size_t vw = o.vw, single = o.single;
    size_t n = o.n;
    const int reps = o.reps, threads = o.threads;
    int device = !strcmp(mode, "device");
    if (single) n = single;
    size_t kw = gpk_type_size(type);
    gpk_type vtype = vw == 8 ? GPK_U64 : GPK_U32;

    /* the context: one GPU per rank of a node */
    MPI_Comm node;
    int local = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
    gpk_ctx_opts co = GPK_CTX_OPTS_INIT;
    co.backend = device ? GPK_BACKEND_CUDA : GPK_BACKEND_CPU;
    co.device = device ? local : -1;
    co.threads = threads;
    gpk_ctx *ctx = NULL;
    if (gpk_ctx_create_ex(&ctx, &co) != GPK_OK) {
        fprintf(stderr, "rank %d: context: %s\n", rank, gpk_last_error(NULL));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    gpk_ctx_info info;
    gpk_ctx_info_get(ctx, &info);

    uint64_t first = (uint64_t)rank * n;
    size_t cap = n + (size_t)nranks; /* balanced: N/P rounded up */
    void *keys = malloc(n * kw + 1), *vals = vw ? malloc(n * vw + 1) : NULL;
    void *out = malloc(cap * kw + 1), *out_v = vw ? malloc(cap * vw + 1) : NULL;
    if (!keys || !out || (vw && (!vals || !out_v))) {
        fprintf(stderr, "rank %d: out of host memory for %zu keys\n", rank, n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    generate(keys, vals, kw, vw, n, 0x5EEDull, first);
    void *d_in = keys, *d_in_v = vals, *d_out = out, *d_out_v = out_v;
#ifdef GPK_HAVE_CUDA
    void *d_temp = NULL;
    size_t temp_bytes = 0;
    if (device) {
        cudaSetDevice(local);
        int e =
            cudaMalloc(&d_in, n * kw + 1) != cudaSuccess || cudaMalloc(&d_out, cap * kw + 1) != cudaSuccess;
        if (vw)
            e |= cudaMalloc(&d_in_v, n * vw + 1) != cudaSuccess ||
                cudaMalloc(&d_out_v, cap * vw + 1) != cudaSuccess;
        if (!e) e = cudaMemcpy(d_in, keys, n * kw, cudaMemcpyHostToDevice) != cudaSuccess;
        if (!e && vw) e = cudaMemcpy(d_in_v, vals, n * vw, cudaMemcpyHostToDevice) != cudaSuccess;
        if (!e && single) {
            gpk_sort_opts so = GPK_SORT_OPTS_INIT;
            so.algorithm = GPK_SORT_RADIX;
            gpk_status s = vw ? gpk_cuda_sort_pairs(ctx, NULL, &temp_bytes, type, d_in, d_out, vw, d_in_v,
                                                    d_out_v, n, &so, 0, 0)
                              : gpk_cuda_sort_keys(ctx, NULL, &temp_bytes, type, d_in, d_out, n, &so, 0, 0);
            e = s != GPK_OK || cudaMalloc(&d_temp, temp_bytes + 1) != cudaSuccess;
        }
        if (e) {
            fprintf(stderr, "rank %d: device memory for %zu keys: %s\n", rank, n,
                    cudaGetErrorString(cudaGetLastError()));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
#else
    if (device) {
        if (rank == 0) fprintf(stderr, "built without CUDA\n");
        MPI_Abort(MPI_COMM_WORLD, 77);
    }
#endif
    gpk_mpi_sort_opts mo = GPK_MPI_SORT_OPTS_INIT;
    mo.device_memory = device;
    double *ms = malloc(sizeof(double) * (size_t)(reps + 1));
    gpk_mpi_sort_times *ph = malloc(sizeof *ph * (size_t)(reps + 1));
    size_t n_out = 0;
    gpk_status s = GPK_OK;
    for (int r = 0; r <= reps && s == GPK_OK; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (single) {
            gpk_sort_opts so = GPK_SORT_OPTS_INIT;
            so.algorithm = GPK_SORT_RADIX;
#ifdef GPK_HAVE_CUDA
            if (device) {
                s = vw ? gpk_cuda_sort_pairs(ctx, d_temp, &temp_bytes, type, d_in, d_out, vw, d_in_v, d_out_v,
                                             n, &so, 0, 0)
                       : gpk_cuda_sort_keys(ctx, d_temp, &temp_bytes, type, d_in, d_out, n, &so, 0, 0);
                if (cudaStreamSynchronize(0) != cudaSuccess) s = GPK_EDEVICE;
            } else
#endif
            {
                if (vw) {
                    memcpy(out, keys, n * kw), memcpy(out_v, vals, n * vw);
                    t0 = MPI_Wtime(); /* the copy back to the input order is not the sort's */
                    s = gpk_sort_pairs(ctx, type, out, vtype, out_v, n, &so);
                } else {
                    s = gpk_sort_keys_to(ctx, type, keys, out, n, &so);
                }
            }
            n_out = n;
        } else {
            s = vw ? gpk_mpi_sort_pairs(MPI_COMM_WORLD, ctx, type, d_in, vtype, d_in_v, n, d_out, d_out_v,
                                        cap, &n_out, &mo)
                   : gpk_mpi_sort_keys(MPI_COMM_WORLD, ctx, type, d_in, n, d_out, cap, &n_out, &mo);
            gpk_mpi_last_sort_times(&ph[r]);
        }
        double t = (MPI_Wtime() - t0) * 1e3;
        MPI_Allreduce(&t, &ms[r], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        int bad = s != GPK_OK, any = 0;
        MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (bad) fprintf(stderr, "rank %d: %s (%s)\n", rank, gpk_status_string(s), gpk_last_error(ctx));
        if (any) s = GPK_EDEVICE;
    }
    const char *verdict = "not run";
    if (s == GPK_OK) {
#ifdef GPK_HAVE_CUDA
        if (device) cudaMemcpy(out, d_out, n_out * kw, cudaMemcpyDeviceToHost);
#endif
        verdict = check(keys, n, out, n_out, kw);
    }
    report(&o, &info, n, ms, ph, verdict);
#ifdef GPK_HAVE_CUDA
    if (device) {
        cudaFree(d_in), cudaFree(d_out), cudaFree(d_temp);
        if (vw) cudaFree(d_in_v), cudaFree(d_out_v);
    }
#endif
    free(keys), free(vals), free(out), free(out_v), free(ms), free(ph);
    gpk_status rs = gpk_mpi_release(MPI_COMM_WORLD, ctx); /* collective: before the context goes */
    if (rs != GPK_OK)
        fprintf(stderr, "rank %d: gpk_mpi_release: %s (%s)\n", rank, gpk_status_string(rs),
                gpk_last_error(ctx));
    gpk_ctx_destroy(ctx);
    int rc = s == GPK_OK && !strcmp(verdict, "passed") ? 0 : 1;
    MPI_Finalize();
    return rc;
}
