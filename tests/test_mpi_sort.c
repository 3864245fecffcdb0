/* The distributed sort (gpk/mpi.h) under mpiexec -n P: every type, keys and
 * pairs, against gpk_sort_reference of all shards gathered on rank 0
 * (bit for bit: the sort is stable over (rank, index), so with unique
 * values the pairs must come out exactly as the reference puts them), the
 * output sizes (balanced N/P rounded, or kept), empty shards, one rank
 * holding everything, all-equal and few distinct keys, float specials,
 * in place, the chunked exchange, communicators of one rank and split
 * ones, and bad input on one rank only: every rank must return an error.
 *
 *   test_mpi_sort cpu            host shards, CPU contexts
 *   test_mpi_sort cuda           host and device shards, one GPU per rank
 *                                (rank -> GPU by local rank; exit 77
 *                                without a GPU); device shards by the
 *                                default plans, then with the part plan
 *                                forced (GPK_MPI_DEVICE_PLAN=part)
 *   test_mpi_sort silent         the last rank stops itself (SIGSTOP) before
 *                                a sort: the others return GPK_EIO within
 *                                the communicator's timeout (1 s), naming
 *                                it, instead of waiting forever
 * GPK_TEST_SEED replays a run (rank 0 prints the seed). */
#define _POSIX_C_SOURCE 200809L
#include <gpk/mpi.h>
#include <gpk/sort.h>

#include "testutil.h"
#include "mpi/mpi_test_hooks.h"

#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef GPK_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static int rank, nranks;
static uint64_t seed;
/* the communicator run_case sorts on (WORLD or a duplicate of it: the
 * same ranks in the same order), and what its last sort reported */
static MPI_Comm sort_comm;
static gpk_mpi_sort_times last_tm;
static gpk_mpi_test_hooks hooks; /* the paths forced, the same on every rank */

/* testutil.h's check, its message prefixed with the rank */
#define CHECK(cond, fmt, ...) TU_CHECK(cond, "rank %d: " fmt, rank, __VA_ARGS__)

static uint64_t splitmix(uint64_t *s)
{
    uint64_t x = (*s += 0x9E3779B97F4A7C15ull);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

enum dist { D_RANDOM, D_FEW, D_EQUAL, D_SORTED, D_SPECIAL, D_COUNT };
static const char *dist_name[] = {"random", "few", "equal", "sorted", "special"};

static void fill_keys(gpk_type t, enum dist d, void *keys, size_t n, uint64_t *rng, uint64_t base)
{
    size_t w = gpk_type_size(t);
    for (size_t i = 0; i < n; i++) {
        uint64_t x = splitmix(rng);
        switch (d) {
        case D_RANDOM: break;
        case D_FEW: x %= 3; break;
        case D_EQUAL: x = 42; break;
        case D_SORTED: x = base + i; break;
        case D_SPECIAL:
            if (t == GPK_F32) {
                const float v[] = {-0.0f, 0.0f, NAN, -NAN, INFINITY, -INFINITY, 1.5f, -1.5f, 1e-40f};
                float f = v[x % 9];
                uint32_t u;
                memcpy(&u, &f, 4);
                x = u;
            } else if (t == GPK_F64) {
                const double v[] = {-0.0, 0.0, NAN, -NAN, INFINITY, -INFINITY, 1.5, -1.5, 1e-310};
                double f = v[x % 9];
                memcpy(&x, &f, 8);
            } else {
                const uint64_t v[] = {0, 1, UINT64_MAX, UINT64_MAX / 2, UINT64_MAX / 2 + 1};
                x = v[x % 5];
            }
            break;
        default: break;
        }
        if (w == 4) ((uint32_t *)keys)[i] = (uint32_t)x;
        else ((uint64_t *)keys)[i] = x;
    }
}

/* Gathers every rank's (bytes) on rank 0, in rank order. */
static char *gather(const void *buf, size_t bytes, size_t *total)
{
    int mine = (int)bytes;
    int *counts = malloc(sizeof(int) * (size_t)nranks), *displs = malloc(sizeof(int) * (size_t)nranks);
    MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    size_t sum = 0;
    if (rank == 0)
        for (int p = 0; p < nranks; p++) displs[p] = (int)sum, sum += (size_t)counts[p];
    char *all = rank == 0 ? malloc(sum + 1) : NULL;
    MPI_Gatherv(buf, mine, MPI_BYTE, all, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
    free(counts);
    free(displs);
    *total = sum;
    return all;
}

typedef struct where {
    gpk_ctx *ctx;
    int device; /* shards in device memory */
} where;

/* One sort: n_in keys on this rank; checked on rank 0 against the reference. */
static void run_case(where at, gpk_type t, int vwidth, enum dist d, size_t n_in, int keep, int in_place,
                     const char *label)
{
    size_t kw = gpk_type_size(t);
    uint64_t rng =
        seed ^ (0x51ED27u * (uint64_t)(rank + 1)) ^ ((uint64_t)t << 40) ^ ((uint64_t)d << 48) ^ n_in;
    uint64_t offset = 0, mine = n_in, N = 0;
    MPI_Exscan(&mine, &offset, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) offset = 0;
    MPI_Allreduce(&mine, &N, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    gpk_mpi_sort_opts o = GPK_MPI_SORT_OPTS_INIT;
    o.keep_sizes = keep;
    o.device_memory = at.device;
    size_t expect = 0;
    gpk_status s = gpk_mpi_sort_count(sort_comm, n_in, &o, &expect);
    CHECK(s == GPK_OK, "%s: gpk_mpi_sort_count: %s", label, gpk_status_string(s));
    uint64_t lo =
        N / (uint64_t)nranks * (uint64_t)rank + N % (uint64_t)nranks * (uint64_t)rank / (uint64_t)nranks;
    uint64_t hi = N / (uint64_t)nranks * (uint64_t)(rank + 1) +
        N % (uint64_t)nranks * (uint64_t)(rank + 1) / (uint64_t)nranks;
    CHECK(expect == (keep ? n_in : (size_t)(hi - lo)), "%s: count %zu, balanced %" PRIu64, label, expect,
          hi - lo);

    size_t cap = in_place ? (expect > n_in ? expect : n_in) : expect;
    size_t held = cap > n_in ? cap : n_in;
    void *keys = malloc(held * kw + 1), *vals = vwidth ? malloc(held * (size_t)vwidth + 1) : NULL;
    fill_keys(t, d, keys, n_in, &rng, offset);
    for (size_t i = 0; i < n_in && vwidth; i++) {
        if (vwidth == 4) ((uint32_t *)vals)[i] = (uint32_t)(offset + i);
        else ((uint64_t *)vals)[i] = offset + i + ((uint64_t)1 << 40);
    }
    size_t in_bytes_total, in_v_bytes;
    char *all_in = gather(keys, n_in * kw, &in_bytes_total);
    char *all_in_v = vwidth ? gather(vals, n_in * (size_t)vwidth, &in_v_bytes) : NULL;

    void *out = in_place ? keys : malloc(cap * kw + 1),
         *out_v = in_place ? vals : (vwidth ? malloc(cap * (size_t)vwidth + 1) : NULL);
    void *d_in = keys, *d_in_v = vals, *d_out = out, *d_out_v = out_v;
#ifdef GPK_HAVE_CUDA
    if (at.device) {
        cudaMalloc(&d_in, held * kw + 1);
        cudaMemcpy(d_in, keys, n_in * kw, cudaMemcpyHostToDevice);
        d_out = in_place ? d_in : NULL;
        if (!in_place) cudaMalloc(&d_out, cap * kw + 1);
        if (vwidth) {
            cudaMalloc(&d_in_v, held * (size_t)vwidth + 1);
            cudaMemcpy(d_in_v, vals, n_in * (size_t)vwidth, cudaMemcpyHostToDevice);
            d_out_v = in_place ? d_in_v : NULL;
            if (!in_place) cudaMalloc(&d_out_v, cap * (size_t)vwidth + 1);
        }
    }
#endif
    size_t n_out = 12345;
    s = vwidth ? gpk_mpi_sort_pairs(sort_comm, at.ctx, t, d_in, vwidth == 4 ? GPK_U32 : GPK_U64, d_in_v, n_in,
                                    d_out, d_out_v, cap, &n_out, &o)
               : gpk_mpi_sort_keys(sort_comm, at.ctx, t, d_in, n_in, d_out, cap, &n_out, &o);
    CHECK(s == GPK_OK, "%s: %s (%s)", label, gpk_status_string(s), gpk_last_error(at.ctx));
    CHECK(n_out == expect, "%s: n_out %zu, expected %zu", label, n_out, expect);
    /* the path the pieces took: host shards of one node read in place, unless told otherwise */
    gpk_mpi_sort_times tm;
    gpk_mpi_last_sort_times(&tm);
    last_tm = tm;
    const char *want = nranks == 1 ? "local"
        : at.device                ? NULL
        : hooks.host_exchange_mpi  ? "mpi"
                                   : "shared-memory";
    if (want)
        CHECK(s != GPK_OK || !strcmp(tm.exchange, want), "%s: exchange %s, expected %s", label, tm.exchange,
              want);
    if (at.device && rank == 0 && t == GPK_U32 && d == D_RANDOM && vwidth == 0 && n_in == 1)
        printf("device shards moved by: %s\n", tm.exchange);
    /* the part plan forced, where the ranks read each other over CUDA IPC:
     * random keys fill every bucket far below its cap (a share / 16, at
     * least 4096), so it must run; one bucket of all keys (equal, or sorted
     * from 0: one top digit) past 4096 must send the sort to sort-first */
    const char *plan = getenv("GPK_MPI_DEVICE_PLAN");
    if (s == GPK_OK && at.device && nranks > 1 && plan && !strcmp(plan, "part") &&
        !strncmp(tm.exchange, "cuda-ipc", 8)) {
        if (d == D_RANDOM && N > 0)
            CHECK(!strcmp(tm.exchange, "cuda-ipc-part"), "%s: exchange %s, the part plan expected", label,
                  tm.exchange);
        if ((d == D_EQUAL || d == D_SORTED) && N > 4096)
            CHECK(strcmp(tm.exchange, "cuda-ipc-part") != 0,
                  "%s: the part plan ran on one bucket of %" PRIu64 " keys", label, N);
    }
    if (s != GPK_OK) n_out = 0;
#ifdef GPK_HAVE_CUDA
    if (at.device) {
        cudaMemcpy(out, d_out, n_out * kw, cudaMemcpyDeviceToHost);
        if (vwidth) cudaMemcpy(out_v, d_out_v, n_out * (size_t)vwidth, cudaMemcpyDeviceToHost);
        cudaFree(d_in);
        if (!in_place) cudaFree(d_out);
        if (vwidth) {
            cudaFree(d_in_v);
            if (!in_place) cudaFree(d_out_v);
        }
    }
#endif
    size_t out_bytes_total, out_v_bytes = 0;
    char *all_out = gather(out, n_out * kw, &out_bytes_total);
    char *all_out_v = vwidth ? gather(out_v, n_out * (size_t)vwidth, &out_v_bytes) : NULL;
    int bad = 0;
    if (rank == 0) {
        size_t n = in_bytes_total / kw;
        gpk_status r = gpk_sort_reference(t, all_in, (size_t)vwidth, all_in_v, NULL, n, 0);
        if (r != GPK_OK || out_bytes_total != n * kw || out_v_bytes != n * (size_t)vwidth) bad = 1;
        else if (memcmp(all_in, all_out, n * kw)) bad = 2;
        else if (vwidth && memcmp(all_in_v, all_out_v, n * (size_t)vwidth)) bad = 3;
        CHECK(!bad, "%s: %s (N = %" PRIu64 ")", label,
              bad == 1       ? "sizes differ"
                  : bad == 2 ? "keys differ from the reference"
                             : "values differ (not stable)",
              N);
    }
    free(all_in), free(all_in_v), free(all_out), free(all_out_v);
    if (!in_place) free(out), free(out_v);
    free(keys), free(vals);
}

/* Repeated calls on one communicator, as a program that sorts every step
 * makes them: sizes that grow and shrink, key types and value widths in
 * turn, a rank with nothing, release and call again, the communicator
 * freed while buffers are kept, and a second context that sorts and is
 * destroyed. Every result against the reference (run_case); a call that
 * needs no more than an earlier one makes nothing (setups 0), and the
 * first call after a release makes its buffers again (setups > 0). */
static void repeated_calls(where at, const char *what)
{
    char label[160];
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    sort_comm = dup;
    gpk_status s = gpk_mpi_release(dup, at.ctx); /* nothing kept yet */
    CHECK(s == GPK_OK, "%s: release before any sort: %s", what, gpk_status_string(s));
    struct step {
        gpk_type t;
        int vw;
        size_t n;  /* per rank, plus rank * 13 */
        int none;  /* rank 1 holds nothing */
        int reuse; /* needs no more than an earlier step: nothing made */
    } steps[] = {
        {GPK_U32, 0, 3000, 0, 0},
        {GPK_U64, 8, 20000, 0, 0},
        {GPK_F32, 4, 5000, 0, 1},
        /* step 4 grows rank 0's shard buffer by 4 bytes (a new generation:
         * the others drop their mappings of it) and moves no values, so step
         * 5 maps rank 0's values afresh on device shards: not a reuse */
        {GPK_U64, 8, 20000, 0, 1},
        {GPK_I32, 0, 40001, 0, 0},
        {GPK_F64, 4, 7, 1, 0},
        {GPK_I64, 8, 1, 0, 1},
        {GPK_U32, 4, 60013, 1, 0},
        {GPK_I32, 4, 60013, 1, 1},
    };
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
            const struct step *st = &steps[i];
            size_t n = st->none && rank == 1 ? 0 : st->n + (size_t)rank * 13;
            snprintf(label, sizeof label, "%s repeated round %d step %zu (%s vw %d)", what, round, i,
                     gpk_type_name(st->t), st->vw);
            run_case(at, st->t, st->vw, D_RANDOM, n, 0, 0, label);
            if (st->reuse)
                CHECK(last_tm.setups == 0, "%s: %d buffers made where the kept ones suffice", label,
                      last_tm.setups);
            if (i == 0)
                CHECK(last_tm.setups > 0, "%s: nothing made on the first call after a release", label);
        }
        s = gpk_mpi_release(dup, at.ctx);
        CHECK(s == GPK_OK, "%s: release: %s (%s)", what, gpk_status_string(s), gpk_last_error(at.ctx));
    }
    /* freed with its buffers kept: the communicator's attribute frees them */
    snprintf(label, sizeof label, "%s before MPI_Comm_free", what);
    run_case(at, GPK_U64, 4, D_FEW, 4000 + (size_t)rank, 0, 0, label);
    MPI_Comm_free(&dup);
    sort_comm = MPI_COMM_WORLD;
    /* a second context on WORLD, destroyed after it sorted; then the first again */
    gpk_ctx *other = NULL;
    gpk_ctx_opts o = GPK_CTX_OPTS_INIT;
    o.backend = gpk_ctx_backend(at.ctx);
    gpk_ctx_info info;
    gpk_ctx_info_get(at.ctx, &info);
    o.device = o.backend == GPK_BACKEND_CUDA ? (int)info.devices[0] : -1;
    int made = gpk_ctx_create_ex(&other, &o) == GPK_OK, all_made = 0;
    MPI_Allreduce(&made, &all_made, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    CHECK(all_made, "%s: a second context: %s", what, gpk_last_error(NULL));
    if (all_made) {
        where second = {other, at.device};
        snprintf(label, sizeof label, "%s first context, then a second", what);
        run_case(at, GPK_F32, 0, D_RANDOM, 9000 + (size_t)rank * 3, 0, 0, label);
        run_case(second, GPK_F32, 0, D_RANDOM, 9000 + (size_t)rank * 3, 0, 0, label);
        run_case(second, GPK_I64, 8, D_SORTED, 7000, 0, 0, label);
        gpk_ctx_destroy(other);
        snprintf(label, sizeof label, "%s after the second context's destroy", what);
        run_case(at, GPK_I64, 8, D_RANDOM, 7000 + (size_t)rank, 0, 0, label);
        run_case(at, GPK_U32, 0, D_EQUAL, 3000, 0, 0, label);
    } else if (other) gpk_ctx_destroy(other);
    s = gpk_mpi_release(MPI_COMM_WORLD, at.ctx);
    CHECK(s == GPK_OK, "%s: release of WORLD: %s", what, gpk_status_string(s));
    snprintf(label, sizeof label, "%s after releasing WORLD", what);
    run_case(at, GPK_U64, 0, D_RANDOM, 2000 + (size_t)rank, 0, 0, label);
    CHECK(last_tm.setups > 0, "%s: nothing made after a release", label);
}

/* Bad input on some ranks: every rank must return an error, none may hang. */
static void bad_inputs(gpk_ctx *ctx)
{
    uint32_t k[8] = {5, 3, 1, 7, 2, 2, 9, 0}, out[64];
    uint64_t v[8] = {0}, vout[64];
    size_t n_out;
    gpk_status s;
    char label[64];
    if (nranks > 1) {
        /* key types differ */
        s = gpk_mpi_sort_keys(MPI_COMM_WORLD, ctx, rank == nranks - 1 ? GPK_I32 : GPK_U32, k, 8, out, 64,
                              &n_out, NULL);
        CHECK(s == GPK_EINVAL && strstr(gpk_last_error(ctx), "key types differ"), "mismatched types: %s (%s)",
              gpk_status_string(s), gpk_last_error(ctx));
        /* value widths differ */
        s = gpk_mpi_sort_pairs(MPI_COMM_WORLD, ctx, GPK_U32, k, rank == 0 ? GPK_U64 : GPK_U32, v, 8, out,
                               vout, 64, &n_out, NULL);
        CHECK(s == GPK_EINVAL && strstr(gpk_last_error(ctx), "value widths differ"),
              "mismatched widths: %s (%s)", gpk_status_string(s), gpk_last_error(ctx));
        /* keep_sizes on one rank only */
        gpk_mpi_sort_opts o = GPK_MPI_SORT_OPTS_INIT;
        o.keep_sizes = rank == 0;
        s = gpk_mpi_sort_keys(MPI_COMM_WORLD, ctx, GPK_U32, k, 8, out, 64, &n_out, &o);
        CHECK(s == GPK_EINVAL, "keep_sizes on one rank: %s", gpk_status_string(s));
    }
    /* a NULL shard with n > 0 on the last rank */
    s = gpk_mpi_sort_keys(MPI_COMM_WORLD, ctx, GPK_U32, rank == nranks - 1 ? NULL : k, 8, out, 64, &n_out,
                          NULL);
    snprintf(label, sizeof label, "rank %d failed", nranks - 1);
    CHECK(s == GPK_EINVAL &&
              (rank == nranks - 1 ? strstr(gpk_last_error(ctx), "NULL") != NULL
                                  : strstr(gpk_last_error(ctx), label) != NULL),
          "NULL shard: %s (%s)", gpk_status_string(s), gpk_last_error(ctx));
    /* an output too small on rank 0 only */
    s = gpk_mpi_sort_keys(MPI_COMM_WORLD, ctx, GPK_U32, k, 8, out, rank == 0 ? 3 : 64, &n_out, NULL);
    CHECK(s == GPK_EINVAL && (rank != 0 || strstr(gpk_last_error(ctx), "out_capacity")),
          "small output: %s (%s)", gpk_status_string(s), gpk_last_error(ctx));
    /* an unknown key type on rank 0 */
    s = gpk_mpi_sort_keys(MPI_COMM_WORLD, ctx, rank == 0 ? (gpk_type)17 : GPK_U32, k, 8, out, 64, &n_out,
                          NULL);
    CHECK(s == GPK_EINVAL, "unknown type: %s", gpk_status_string(s));
    /* device memory on a CPU context */
    if (gpk_ctx_backend(ctx) == GPK_BACKEND_CPU) {
        gpk_mpi_sort_opts o = GPK_MPI_SORT_OPTS_INIT;
        o.device_memory = 1;
        s = gpk_mpi_sort_keys(MPI_COMM_WORLD, ctx, GPK_U32, k, 8, out, 64, &n_out, &o);
        CHECK(s == GPK_EINVAL && strstr(gpk_last_error(ctx), "CUDA"), "device memory on CPU: %s (%s)",
              gpk_status_string(s), gpk_last_error(ctx));
    }
    /* a NULL n_out */
    s = gpk_mpi_sort_keys(MPI_COMM_WORLD, ctx, GPK_U32, k, 8, out, 64, rank == 0 ? NULL : &n_out, NULL);
    CHECK(s == GPK_EINVAL, "NULL n_out: %s", gpk_status_string(s));
    /* and a good call after them all */
    s = gpk_mpi_sort_keys(MPI_COMM_WORLD, ctx, GPK_U32, k, 8, out, 64, &n_out, NULL);
    CHECK(s == GPK_OK && n_out == 8, "sort after errors: %s (%s)", gpk_status_string(s), gpk_last_error(ctx));
}

/* A communicator of one rank (MPI_COMM_SELF) and split halves of WORLD. */
static void other_comms(gpk_ctx *ctx)
{
    size_t n = 1000 + (size_t)rank * 7, n_out = 0;
    uint64_t rng = seed + (uint64_t)rank * 977;
    uint64_t *k = malloc(n * 8), *ref = malloc(n * 8), *out = malloc(n * 8);
    fill_keys(GPK_I64, D_RANDOM, k, n, &rng, 0);
    memcpy(ref, k, n * 8);
    gpk_sort_reference(GPK_I64, ref, 0, NULL, NULL, n, 0);
    gpk_status s = gpk_mpi_sort_keys(MPI_COMM_SELF, ctx, GPK_I64, k, n, out, n, &n_out, NULL);
    CHECK(s == GPK_OK && n_out == n && !memcmp(out, ref, n * 8), "MPI_COMM_SELF: %s (%s)",
          gpk_status_string(s), gpk_last_error(ctx));
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int hs, hr;
    MPI_Comm_size(half, &hs);
    MPI_Comm_rank(half, &hr);
    uint64_t mine = n, total = 0;
    MPI_Allreduce(&mine, &total, 1, MPI_UINT64_T, MPI_SUM, half);
    size_t cap = (size_t)(total / (uint64_t)hs + 1);
    uint64_t *hout = malloc(cap * 8);
    s = gpk_mpi_sort_keys(half, ctx, GPK_I64, k, n, hout, cap, &n_out, NULL);
    CHECK(s == GPK_OK, "split communicator: %s (%s)", gpk_status_string(s), gpk_last_error(ctx));
    /* sorted within the rank and across neighbours of the half */
    int ok = 1;
    for (size_t i = 1; i < n_out; i++) ok &= (int64_t)hout[i - 1] <= (int64_t)hout[i];
    int64_t edge[2] = {n_out ? (int64_t)hout[0] : INT64_MAX, n_out ? (int64_t)hout[n_out - 1] : INT64_MIN};
    int64_t *edges = malloc(sizeof edge * (size_t)hs);
    MPI_Allgather(edge, 2, MPI_INT64_T, edges, 2, MPI_INT64_T, half);
    int64_t last = INT64_MIN;
    for (int p = 0; p < hs; p++) {
        if (edges[2 * p] == INT64_MAX) continue;
        ok &= last <= edges[2 * p];
        last = edges[2 * p + 1];
    }
    CHECK(ok && (n_out == total / (uint64_t)hs || n_out == total / (uint64_t)hs + 1),
          "split communicator: order or size (%zu of %" PRIu64 " on %d ranks)", n_out, total, hs);
    free(edges), free(hout);
    MPI_Comm_free(&half);
    free(k), free(ref), free(out);
}

static void suite(where at, const char *what)
{
    const gpk_type types[] = {GPK_U32, GPK_I32, GPK_F32, GPK_U64, GPK_I64, GPK_F64};
    char label[256];
    /* sizes per rank: r is the rank; "one" = one rank holds everything */
    const size_t big = getenv("GPK_TEST_SMALL") ? 20011 : 100003;
    for (int ti = 0; ti < 6; ti++)
        for (int d = 0; d < D_COUNT; d++) {
            gpk_type t = types[ti];
            size_t sizes[] = {0,
                              1,
                              7 + (size_t)rank * 3,
                              1000 + (size_t)rank * 131,
                              rank == 0 ? big : 0,
                              rank == nranks - 1 ? 4099 : 2};
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
                if (d != D_RANDOM && si == 0) continue;
                int vw = (si + (size_t)d) % 3 == 0 ? 0 : (si + (size_t)d) % 3 == 1 ? 4 : 8;
                int keep = si == 3 && d == D_FEW;
                int in_place = si == 2;
                snprintf(label, sizeof label, "%s %s %s size#%zu vw %d%s%s", what, gpk_type_name(t),
                         dist_name[d], si, vw, keep ? " keep" : "", in_place ? " in-place" : "");
                run_case(at, t, vw, (enum dist)d, sizes[si], keep, in_place, label);
            }
        }
    /* a larger balanced case per width, and the chunked exchange */
    run_case(at, GPK_U32, 4, D_RANDOM, big + (size_t)rank * 1009, 0, 0, "large u32/u32");
    run_case(at, GPK_F64, 8, D_FEW, big / 2 + (size_t)rank, 0, 0, "large f64/u64 few");
    /* kept sizes with rank 1 empty: on 3 ranks or more an empty range
     * inside the order, where a bucket of past 4096 keys straddles it (the
     * part plan must not count that bucket as rank 1's) */
    run_case(at, GPK_U32, 0, D_RANDOM, rank == 1 ? 0 : 700001, 1, 0, "large keep, rank 1 empty");
    /* host shards through MPI_Alltoallv instead of the shared window, then
     * in chunks of 1000 bytes (the path of counts past INT_MAX) */
    hooks.host_exchange_mpi = 1;
    gpk__mpi_test_hooks_set(&hooks);
    snprintf(label, sizeof label, "%s exchange by MPI", what);
    run_case(at, GPK_F32, 4, D_SPECIAL, 3000 + (size_t)rank * 7, 0, 0, label);
    run_case(at, GPK_U64, 0, D_RANDOM, rank == 0 ? 9000 : 0, 0, 0, label);
    run_case(at, GPK_I32, 8, D_FEW, 2000 + (size_t)rank, 1, 0, label);
    hooks.chunk_bytes = 1000;
    gpk__mpi_test_hooks_set(&hooks);
    snprintf(label, sizeof label, "%s chunked exchange", what);
    run_case(at, GPK_I64, 4, D_RANDOM, 5000 + (size_t)rank * 11, 0, 0, label);
    run_case(at, GPK_U32, 8, D_EQUAL, 3001, 0, 0, label);
    hooks.chunk_bytes = 0;
    hooks.host_exchange_mpi = 0;
    gpk__mpi_test_hooks_set(&hooks);
}

/* A rank stopped with SIGSTOP: every other rank's sort returns GPK_EIO
 * within the timeout plus the roll call (at most 1 s more), naming the
 * stopped rank; then rank 0 wakes it and the ranks meet on WORLD, which
 * the failed sort's communicator (a duplicate) leaves usable. */
static int silent_rank(gpk_ctx *ctx)
{
    const int last = nranks - 1;
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    CHECK(gpk_mpi_set_timeout(comm, 1.0) == GPK_OK && fabs(gpk_mpi_timeout(comm) - 1.0) < 1e-9, "%s",
          "gpk_mpi_set_timeout(comm, 1)");
    CHECK(gpk_mpi_set_timeout(comm, -1) == GPK_EINVAL && gpk_mpi_set_timeout(comm, NAN) == GPK_EINVAL, "%s",
          "a negative or NaN timeout refused");
    MPI_Comm dup2;
    MPI_Comm_dup(comm, &dup2);
    CHECK(fabs(gpk_mpi_timeout(dup2) - 1.0) < 1e-9, "the timeout goes with MPI_Comm_dup: %g",
          gpk_mpi_timeout(dup2));
    MPI_Comm_free(&dup2);
    int pid = (int)getpid(), *pids = malloc(sizeof *pids * (size_t)nranks);
    MPI_Allgather(&pid, 1, MPI_INT, pids, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Barrier(comm);
    if (rank == last) {
        raise(SIGSTOP); /* until rank 0's SIGCONT below */
    } else {
        enum { N = 1000 };
        uint32_t keys[N], out[N + 8];
        for (int i = 0; i < N; i++) keys[i] = (uint32_t)(i * 2654435761u);
        size_t n_out = 0;
        const double t0 = MPI_Wtime();
        const gpk_status s = gpk_mpi_sort_keys(comm, ctx, GPK_U32, keys, N, out, N + 8, &n_out, NULL);
        const double t = MPI_Wtime() - t0;
        char want[32];
        snprintf(want, sizeof want, "rank %d did not answer", last);
        CHECK(s == GPK_EIO && strstr(gpk_last_error(ctx), want) != NULL, "sort with rank %d stopped: %s (%s)",
              last, gpk_status_string(s), gpk_last_error(ctx));
        CHECK(t >= 0.9 && t < 10, "sort with rank %d stopped: returned after %.2f s (timeout 1 s)", last, t);
        printf("rank %d: after %.2f s: %s\n", rank, t, gpk_last_error(ctx));
        fflush(stdout);
    }
    if (rank == 0) kill((pid_t)pids[last], SIGCONT);
    free(pids);
    MPI_Barrier(MPI_COMM_WORLD);
    /* comm keeps the failed sort's requests: it is not freed */
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const char *backend = argc > 1 ? argv[1] : "cpu";
    if (rank == 0) {
        const char *env = getenv("GPK_TEST_SEED");
        seed =
            env && *env ? strtoull(env, NULL, 0) : ((uint64_t)time(NULL) * 2654435761u) ^ (uint64_t)clock();
        printf("seed %" PRIu64 " (replay with GPK_TEST_SEED=%" PRIu64 "), %d ranks, %s\n", seed, seed, nranks,
               backend);
    }
    MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    sort_comm = MPI_COMM_WORLD;
    gpk_ctx *ctx = NULL;
    int skip = 0;
    if (!strcmp(backend, "cuda")) {
        gpk_ctx_opts o = GPK_CTX_OPTS_INIT;
        o.backend = GPK_BACKEND_CUDA;
        const char *lr = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
        int gpus = 0;
#ifdef GPK_HAVE_CUDA
        if (cudaGetDeviceCount(&gpus) != cudaSuccess) gpus = 0;
#endif
        if (gpus == 0) skip = 1;
        else {
            o.device = (lr ? atoi(lr) : rank) % gpus;
            if (gpk_ctx_create_ex(&ctx, &o) != GPK_OK) skip = 1;
        }
    } else if (gpk_ctx_create(&ctx, GPK_BACKEND_CPU) != GPK_OK) {
        fprintf(stderr, "rank %d: CPU context: %s\n", rank, gpk_last_error(NULL));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int any_skip = 0;
    MPI_Allreduce(&skip, &any_skip, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_skip) {
        if (rank == 0) printf("no CUDA device on some rank: skipped\n");
        if (ctx) gpk_ctx_destroy(ctx);
        MPI_Finalize();
        return 77;
    }
    if (!strcmp(backend, "silent")) {
        if (nranks < 2) {
            if (rank == 0) printf("silent: needs 2 ranks or more: skipped\n");
            gpk_ctx_destroy(ctx);
            MPI_Finalize();
            return 77;
        }
        silent_rank(ctx);
        goto end;
    }
    where host = {ctx, 0};
    suite(host, "host");
    repeated_calls(host, "host");
    hooks.host_exchange_mpi = 1;
    gpk__mpi_test_hooks_set(&hooks);
    repeated_calls(host, "host (exchange by MPI)");
    hooks.host_exchange_mpi = 0;
    gpk__mpi_test_hooks_set(&hooks);
#ifdef GPK_HAVE_CUDA
    if (!strcmp(backend, "cuda")) {
        /* NCCL refuses two ranks on one GPU */
        int gpus = 0, shared = 0;
        const char *x = getenv("GPK_MPI_DEVICE_EXCHANGE");
        cudaGetDeviceCount(&gpus);
        MPI_Comm node;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
        int local_size = 1;
        MPI_Comm_size(node, &local_size);
        MPI_Comm_free(&node);
        shared = local_size > gpus && x && !strcmp(x, "nccl");
        if (shared) {
            if (rank == 0)
                printf("device shards skipped: %d ranks share %d GPU(s) and NCCL refuses that\n", local_size,
                       gpus);
        } else {
            where dev = {ctx, 1};
            suite(dev, "device");
            repeated_calls(dev, "device");
            /* the part plan (partition first), which takes large 4-byte keys
             * by default, forced on every size and width */
            setenv("GPK_MPI_DEVICE_PLAN", "part", 1);
            suite(dev, "device part");
            repeated_calls(dev, "device part");
            unsetenv("GPK_MPI_DEVICE_PLAN");
        }
    }
#endif
    bad_inputs(ctx);
    other_comms(ctx);
end:
    gpk_ctx_destroy(ctx);
    int total_fail = 0, total_checks = 0;
    MPI_Allreduce(&tu_failures, &total_fail, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&tu_checks, &total_checks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %d checks on %d ranks, %d failed\n", total_fail ? "FAILED" : "passed", total_checks,
               nranks, total_fail);
    MPI_Finalize();
    return total_fail ? 1 : 0;
}
