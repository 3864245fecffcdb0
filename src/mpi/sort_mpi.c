/* The distributed sort (gpk/mpi.h): local sort, exact splitters by a
 * digit-by-digit search over the sorted shards, one all-to-all exchange
 * (or, for ranks of one node, none: each rank's merge reads its pieces in
 * the others' shards, through an MPI shared-memory window or CUDA IPC), a
 * stable merge of the runs.
 *
 * Order: keys by mapped key, ties by (rank, index) of the input. The local
 * sort is stable, so a shard's run is in that order; the split positions
 * divide each value's ties by rank (the exclusive scan of the equal counts
 * over ranks); the receiver merges the runs with earlier senders first on
 * ties. So the whole is stable, and any split position is exact: balanced
 * sizes hold for all-equal keys as for distinct ones. */
#include "mpi_internal.h"
#include "sort_mpi_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#ifdef GPK_HAVE_CUDA
#include <cuda_runtime_api.h>
#include "gpk/cuda.h"
#endif
#ifdef GPK_HAVE_NCCL
#include <nccl.h>
#endif
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

#define DIGIT_BITS 8
#define DIGITS (1u << DIGIT_BITS)
#define P2P_TAG 7117

/* One call of the sort, as its steps see it. */
typedef struct sort_call {
    MPI_Comm comm;
    gpk_ctx *ctx;
    gpk_type type;
    size_t kw, vw;          /* key and value widths (vw 0: keys only) */
    gpk_type vtype;
    int device;             /* shards in device memory */
    int P, rank, threads;
    const char *what;
} sort_call;

/* ---- host kernels: counts and merges on mapped keys -------------------------- */

#define DEFINE_HOST_TYPE(NAME, KT, MAP)                                                              \
    static size_t count_##NAME(const KT *k, size_t n, uint64_t q, int or_equal)                     \
    {                                                                                               \
        size_t lo = 0, hi = n;                                                                      \
        while (lo < hi) {                                                                           \
            size_t mid = lo + (hi - lo) / 2;                                                        \
            uint64_t m = MAP(k[mid]);                                                               \
            if (m < q || (or_equal && m == q)) lo = mid + 1;                                        \
            else hi = mid;                                                                          \
        }                                                                                           \
        return lo;                                                                                  \
    }                                                                                               \
    /* how many of the first k outputs of the stable merge of a and b come from a */                \
    static size_t corank_##NAME(const KT *a, size_t na, const KT *b, size_t nb, size_t k)           \
    {                                                                                               \
        size_t lo = k > nb ? k - nb : 0, hi = k < na ? k : na;                                      \
        while (lo < hi) {                                                                           \
            size_t mid = lo + (hi - lo) / 2;                                                        \
            if (MAP(a[mid]) <= MAP(b[k - mid - 1])) lo = mid + 1;                                   \
            else hi = mid;                                                                          \
        }                                                                                           \
        return lo;                                                                                  \
    }                                                                                               \
    static void merge_##NAME(const KT *a, const void *va, size_t na, const KT *b, const void *vb,   \
                             size_t nb, KT *out, void *vout, size_t vw, int threads)                \
    {                                                                                               \
        size_t n = na + nb;                                                                         \
        int parts = n < 2048 ? 1 : threads;                                                         \
        _Pragma("omp parallel for num_threads(parts) schedule(static, 1)")                          \
        for (int t = 0; t < parts; t++) {                                                           \
            size_t k0 = n / (size_t)parts * (size_t)t + n % (size_t)parts * (size_t)t / (size_t)parts; \
            size_t k1 = n / (size_t)parts * (size_t)(t + 1) +                                       \
                        n % (size_t)parts * (size_t)(t + 1) / (size_t)parts;                        \
            size_t i = corank_##NAME(a, na, b, nb, k0), i1 = corank_##NAME(a, na, b, nb, k1);       \
            size_t j = k0 - i, j1 = k1 - i1;                                                        \
            for (size_t o = k0; o < k1; o++) {                                                      \
                int from_b = i >= i1 || (j < j1 && MAP(b[j]) < MAP(a[i]));                          \
                size_t src = from_b ? j++ : i++;                                                    \
                out[o] = from_b ? b[src] : a[src];                                                  \
                if (vw == 4)                                                                        \
                    ((uint32_t *)vout)[o] = ((const uint32_t *)(from_b ? vb : va))[src];            \
                else if (vw == 8)                                                                   \
                    ((uint64_t *)vout)[o] = ((const uint64_t *)(from_b ? vb : va))[src];            \
            }                                                                                       \
        }                                                                                           \
    }

#define MAP_U32(x) ((uint64_t)(x))
#define MAP_I32(x) ((uint64_t)gpk__mpi_map32(GPK_I32, (x)))
#define MAP_F32(x) ((uint64_t)gpk__mpi_map32(GPK_F32, (x)))
#define MAP_U64(x) ((uint64_t)(x))
#define MAP_I64(x) gpk__mpi_map64(GPK_I64, (x))
#define MAP_F64(x) gpk__mpi_map64(GPK_F64, (x))
DEFINE_HOST_TYPE(u32, uint32_t, MAP_U32)
DEFINE_HOST_TYPE(i32, uint32_t, MAP_I32)
DEFINE_HOST_TYPE(f32, uint32_t, MAP_F32)
DEFINE_HOST_TYPE(u64, uint64_t, MAP_U64)
DEFINE_HOST_TYPE(i64, uint64_t, MAP_I64)
DEFINE_HOST_TYPE(f64, uint64_t, MAP_F64)

static size_t host_count(gpk_type t, const void *k, size_t n, uint64_t q, int or_equal)
{
    switch (t) {
    case GPK_U32: return count_u32(k, n, q, or_equal);
    case GPK_I32: return count_i32(k, n, q, or_equal);
    case GPK_F32: return count_f32(k, n, q, or_equal);
    case GPK_U64: return count_u64(k, n, q, or_equal);
    case GPK_I64: return count_i64(k, n, q, or_equal);
    case GPK_F64: return count_f64(k, n, q, or_equal);
    }
    return 0;
}

static void host_merge2(gpk_type t, const void *a, const void *va, size_t na, const void *b, const void *vb,
                        size_t nb, void *out, void *vout, size_t vw, int threads)
{
    switch (t) {
    case GPK_U32: merge_u32(a, va, na, b, vb, nb, out, vout, vw, threads); break;
    case GPK_I32: merge_i32(a, va, na, b, vb, nb, out, vout, vw, threads); break;
    case GPK_F32: merge_f32(a, va, na, b, vb, nb, out, vout, vw, threads); break;
    case GPK_U64: merge_u64(a, va, na, b, vb, nb, out, vout, vw, threads); break;
    case GPK_I64: merge_i64(a, va, na, b, vb, nb, out, vout, vw, threads); break;
    case GPK_F64: merge_f64(a, va, na, b, vb, nb, out, vout, vw, threads); break;
    }
}

/* Merges the runs [off[i], off[i+1]) of (keys, values) pairwise, round by
 * round, between the run buffer and the output; the last round writes the
 * output (one copy where the round count leaves the result in the runs).
 * off is overwritten. */
static void host_merge_runs(gpk_type t, size_t kw, size_t vw, void *keys, void *values, size_t *off, int runs,
                            void *out_k, void *out_v, int threads)
{
    size_t n = off[runs];
    char *src_k = keys, *src_v = values, *dst_k = out_k, *dst_v = out_v;
    while (runs > 1) {
        int next = 0;
        for (int i = 0; i < runs; i += 2) {
            size_t a0 = off[i], a1 = off[i + 1];
            size_t b1 = i + 1 < runs ? off[i + 2] : a1;
            host_merge2(t, src_k + a0 * kw, vw ? src_v + a0 * vw : NULL, a1 - a0, src_k + a1 * kw,
                        vw ? src_v + a1 * vw : NULL, b1 - a1, dst_k + a0 * kw, vw ? dst_v + a0 * vw : NULL, vw,
                        threads);
            off[next++] = a0;
        }
        off[next] = n;
        runs = next;
        char *tk = src_k, *tv = src_v;
        src_k = dst_k, src_v = dst_v;
        dst_k = tk, dst_v = tv;
    }
    if (src_k != (char *)out_k && n) {
        memcpy(out_k, src_k, n * kw);
        if (vw) memcpy(out_v, src_v, n * vw);
    }
}

/* memcpy on the context's threads (a peer's run read through shared memory) */
static void copy_threads(void *dst, const void *src, size_t bytes, int threads)
{
    const size_t chunk = (size_t)1 << 22;
    size_t parts = (bytes + chunk - 1) / chunk;
    #pragma omp parallel for num_threads(threads) schedule(static) if (parts > 1)
    for (size_t i = 0; i < parts; i++) {
        size_t len = bytes - i * chunk < chunk ? bytes - i * chunk : chunk;
        memcpy((char *)dst + i * chunk, (const char *)src + i * chunk, len);
    }
}

/* The runs at rk[i] (len[i] keys, values at rv[i]) wherever they are (a
 * peer's shared memory too): round 1 merges them pairwise from there, the
 * later rounds ping-pong between scratch and out so the last writes out.
 * off holds runs + 1 entries of scratch. */
static void host_merge_ptr(gpk_type t, size_t kw, size_t vw, const void *const *rk, const void *const *rv,
                           const size_t *len, int runs, void *scratch_k, void *scratch_v, void *out_k, void *out_v,
                           size_t *off, int threads)
{
    size_t n = 0;
    int rounds = 0;
    for (int i = 0; i < runs; i++) n += len[i];
    for (int r = runs; r > 1; r = (r + 1) / 2) rounds++;
    if (runs == 1) {
        copy_threads(out_k, rk[0], n * kw, threads);
        if (vw) copy_threads(out_v, rv[0], n * vw, threads);
        return;
    }
    if (runs == 0) return;
    char *dst_k = rounds % 2 ? out_k : scratch_k, *dst_v = rounds % 2 ? out_v : scratch_v;
    int next = 0;
    size_t at = 0;
    for (int i = 0; i < runs; i += 2) {
        size_t na = len[i], nb = i + 1 < runs ? len[i + 1] : 0;
        host_merge2(t, rk[i], vw ? rv[i] : NULL, na, i + 1 < runs ? rk[i + 1] : rk[i],
                    vw && i + 1 < runs ? rv[i + 1] : NULL, nb, dst_k + at * kw, vw ? dst_v + at * vw : NULL, vw,
                    threads);
        off[next++] = at;
        at += na + nb;
    }
    off[next] = n;
    if (rounds > 1) {
        /* from dst to the other buffer; when dst is out, the rounds left are
         * even and end there (host_merge_runs then copies it to scratch too) */
        void *other_k = dst_k == (char *)out_k ? scratch_k : out_k, *other_v = dst_k == (char *)out_k ? scratch_v : out_v;
        host_merge_runs(t, kw, vw, dst_k, dst_v, off, next, other_k, other_v, threads);
    }
}

/* ---- exchange of host (or CUDA-aware MPI device) buffers ------------------------- */

typedef gpk_status (*copy_fn)(gpk_ctx *ctx, void *dst, const void *src, size_t bytes);

static gpk_status copy_host(gpk_ctx *ctx, void *dst, const void *src, size_t bytes)
{
    if (bytes) memcpy(dst, src, bytes);
    return GPK_OK;
}

/* Bytes per point-to-point message where counts do not fit MPI's int:
 * GPK_MPI_CHUNK_BYTES sets it and forces that path (for tests). */
static size_t chunk_bytes(int *forced)
{
    const char *env = getenv("GPK_MPI_CHUNK_BYTES");
    *forced = 0;
    if (env && *env) {
        char *end;
        unsigned long long v = strtoull(env, &end, 10);
        if (*end == '\0' && v > 0 && v <= (1ull << 30)) {
            *forced = 1;
            return (size_t)v;
        }
    }
    return (size_t)1 << 30;
}

/* Posts the point-to-point messages of one side of the exchange: for each
 * other rank p, count[p] elements of `width` bytes at its place in buf, in
 * chunks of at most `chunk` bytes (sends, or receives), into req[*r...]. */
static gpk_status post_chunks(MPI_Comm comm, gpk_ctx *ctx, char *buf, const uint64_t *count, size_t width,
                              size_t chunk, int sending, MPI_Request *req, size_t *r, const char *what)
{
    int P, rank;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &rank);
    gpk_status s = GPK_OK;
    size_t at = 0;
    for (int p = 0; p < P && s == GPK_OK; p++) {
        size_t bytes = (size_t)count[p] * width;
        for (size_t o = 0; p != rank && o < bytes && s == GPK_OK; o += chunk) {
            int len = (int)(bytes - o < chunk ? bytes - o : chunk);
            int rc = sending ? MPI_Isend(buf + at + o, len, MPI_BYTE, p, P2P_TAG, comm, &req[(*r)++])
                             : MPI_Irecv(buf + at + o, len, MPI_BYTE, p, P2P_TAG, comm, &req[(*r)++]);
            s = gpk__mpi_check(ctx, rc, what);
        }
        at += bytes;
    }
    return s;
}

/* send[d] elements of `width` bytes go to rank d, in rank order from
 * sendbuf; recv[s] arrive from rank s, in rank order into recvbuf. */
static gpk_status exchange(MPI_Comm comm, gpk_ctx *ctx, const void *sendbuf, const uint64_t *send, void *recvbuf,
                           const uint64_t *recv, size_t width, copy_fn copy, const char *what)
{
    int P, rank;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &rank);
    int forced;
    size_t chunk = chunk_bytes(&forced);
    int fits = !forced && width <= INT_MAX;
    uint64_t stotal = 0, rtotal = 0;
    size_t nreq = 0;
    for (int p = 0; p < P; p++) {
        if (send[p] > INT_MAX || recv[p] > INT_MAX || stotal > INT_MAX || rtotal > INT_MAX) fits = 0;
        stotal += send[p];
        rtotal += recv[p];
        if (p != rank) nreq += (send[p] * width + chunk - 1) / chunk + (recv[p] * width + chunk - 1) / chunk;
    }
    /* Every rank takes the same path, and none enters it after a failure:
     * one reduction of (failure, does not fit) before either. */
    int *ints = malloc(sizeof(int) * 4 * (size_t)P);
    MPI_Request *req = malloc(sizeof(MPI_Request) * (nreq ? nreq : 1));
    int flags[2] = { !ints || !req, !fits }, any[2] = { 1, 1 };
    gpk_status s = gpk__mpi_check(ctx, MPI_Allreduce(flags, any, 2, MPI_INT, MPI_MAX, comm), what);
    if (s == GPK_OK && flags[0]) s = gpk__mpi_fail(ctx, GPK_ENOMEM, "%s: out of memory for %zu requests", what, nreq);
    else if (s == GPK_OK && any[0]) s = gpk__mpi_fail(ctx, GPK_EDEVICE, "%s: another rank failed", what);
    if (s == GPK_OK && !any[1]) {
        int *sc = ints, *sd = ints + P, *rc = ints + 2 * P, *rd = ints + 3 * P;
        int so = 0, ro = 0;
        for (int p = 0; p < P; p++) {
            sc[p] = (int)send[p], sd[p] = so, so += sc[p];
            rc[p] = (int)recv[p], rd[p] = ro, ro += rc[p];
        }
        MPI_Datatype elem;
        s = gpk__mpi_check(ctx, MPI_Type_contiguous((int)width, MPI_BYTE, &elem), what);
        if (s == GPK_OK) {
            s = gpk__mpi_check(ctx, MPI_Type_commit(&elem), what);
            if (s == GPK_OK)
                s = gpk__mpi_check(ctx, MPI_Alltoallv(sendbuf, sc, sd, elem, recvbuf, rc, rd, elem, comm), what);
            MPI_Type_free(&elem);
        }
    }
    if (s != GPK_OK || !any[1]) {
        free(ints);
        free(req);
        return s;
    }
    free(ints);
    /* Counts past int: chunks of at most `chunk` bytes, one tag per pair
     * (MPI keeps their order), all posted at once. */
    size_t r = 0;
    const char *sb = sendbuf;
    char *rb = recvbuf;
    s = post_chunks(comm, ctx, rb, recv, width, chunk, 0, req, &r, what);
    if (s == GPK_OK) s = post_chunks(comm, ctx, (char *)sb, send, width, chunk, 1, req, &r, what);
    if (s == GPK_OK) {
        size_t sself = 0, rself = 0;
        for (int p = 0; p < rank; p++) sself += (size_t)send[p] * width, rself += (size_t)recv[p] * width;
        s = copy(ctx, rb + rself, sb + sself, (size_t)send[rank] * width);
    }
    /* wait for what was posted even after a failure: the buffers must outlive it */
    int wrc = r ? MPI_Waitall((int)r, req, MPI_STATUSES_IGNORE) : MPI_SUCCESS;
    if (s == GPK_OK) s = gpk__mpi_check(ctx, wrc, what);
    free(req);
    return s;
}

/* ---- device shards (CUDA context) ------------------------------------------------ */

#ifdef GPK_HAVE_CUDA
static gpk_status cuda_fail(gpk_ctx *ctx, cudaError_t e, const char *what)
{
    return gpk__mpi_fail(ctx, e == cudaErrorMemoryAllocation ? GPK_ENOMEM : GPK_EDEVICE, "%s: %s", what,
                         cudaGetErrorString(e));
}

static gpk_status copy_device(gpk_ctx *ctx, void *dst, const void *src, size_t bytes)
{
    cudaError_t e = bytes ? cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice) : cudaSuccess;
    return e == cudaSuccess ? GPK_OK : cuda_fail(ctx, e, "distributed sort: copy on the device");
}

#ifdef GPK_HAVE_NCCL
/* One NCCL communicator per MPI communicator, kept as an attribute of it:
 * freeing the MPI communicator destroys the NCCL one. */
typedef struct nccl_cache {
    ncclComm_t comm;
    int device;
} nccl_cache;
static int nccl_keyval = MPI_KEYVAL_INVALID;

static int nccl_cache_delete(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    nccl_cache *c = attr;
    ncclCommDestroy(c->comm);
    free(c);
    return MPI_SUCCESS;
}

static gpk_status nccl_fail(gpk_ctx *ctx, ncclResult_t r, const char *what)
{
    return gpk__mpi_fail(ctx, r == ncclSystemError ? GPK_ENOMEM : GPK_EDEVICE, "%s: NCCL: %s", what,
                         ncclGetErrorString(r));
}

/* Collective: the NCCL communicator of comm on ctx's device, created (or
 * created again for another device) on every rank at once. */
static gpk_status nccl_comm_get(MPI_Comm comm, gpk_ctx *ctx, ncclComm_t *out)
{
    const char *what = "distributed sort: NCCL communicator";
    gpk_status s = GPK_OK;
    if (nccl_keyval == MPI_KEYVAL_INVALID)
        s = gpk__mpi_check(ctx, MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, nccl_cache_delete, &nccl_keyval, NULL),
                           what);
    nccl_cache *c = NULL;
    int found = 0;
    if (s == GPK_OK) s = gpk__mpi_check(ctx, MPI_Comm_get_attr(comm, nccl_keyval, &c, &found), what);
    int usable = s == GPK_OK && found && c->device == ctx->device, all_usable = 0;
    s = gpk__mpi_agree(comm, ctx, s, what);
    if (s != GPK_OK) return s;
    s = gpk__mpi_check(ctx, MPI_Allreduce(&usable, &all_usable, 1, MPI_INT, MPI_MIN, comm), what);
    if (s != GPK_OK) return s;
    if (all_usable) {
        *out = c->comm;
        return GPK_OK;
    }
    if (found) MPI_Comm_delete_attr(comm, nccl_keyval);
    int P, rank;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &rank);
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    ncclResult_t r = rank == 0 ? ncclGetUniqueId(&id) : ncclSuccess;
    if (r != ncclSuccess) s = nccl_fail(ctx, r, what);
    s = gpk__mpi_agree(comm, ctx, s, what);
    if (s != GPK_OK) return s;
    s = gpk__mpi_check(ctx, MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, comm), what);
    if (s != GPK_OK) return s;
    c = malloc(sizeof *c);
    if (!c) s = gpk__mpi_fail(ctx, GPK_ENOMEM, "%s: out of memory", what);
    /* every rank enters ncclCommInitRank, or none: it waits for the others */
    s = gpk__mpi_agree(comm, ctx, s, what);
    if (s != GPK_OK) {
        free(c);
        return s;
    }
    r = ncclCommInitRank(&c->comm, P, id, rank);
    if (r != ncclSuccess) {
        free(c);
        c = NULL;
        s = nccl_fail(ctx, r, what);
    } else {
        c->device = ctx->device;
        s = gpk__mpi_check(ctx, MPI_Comm_set_attr(comm, nccl_keyval, c), what);
        if (s != GPK_OK) {
            ncclCommDestroy(c->comm);
            free(c);
            c = NULL;
        }
    }
    s = gpk__mpi_agree(comm, ctx, s, what);
    if (s != GPK_OK) return s;
    *out = c->comm;
    return GPK_OK;
}

static gpk_status exchange_nccl(MPI_Comm comm, gpk_ctx *ctx, ncclComm_t nc, const void *sendbuf, const uint64_t *send,
                                void *recvbuf, const uint64_t *recv, size_t width)
{
    int P;
    MPI_Comm_size(comm, &P);
    const char *sb = sendbuf;
    char *rb = recvbuf;
    ncclResult_t r = ncclGroupStart();
    for (int p = 0; p < P && r == ncclSuccess; p++) {
        if (send[p] && r == ncclSuccess) r = ncclSend(sb, send[p] * width, ncclUint8, p, nc, 0);
        if (recv[p] && r == ncclSuccess) r = ncclRecv(rb, recv[p] * width, ncclUint8, p, nc, 0);
        sb += send[p] * width;
        rb += recv[p] * width;
    }
    ncclResult_t g = ncclGroupEnd();
    if (r == ncclSuccess) r = g;
    if (r != ncclSuccess) return nccl_fail(ctx, r, "distributed sort: exchange");
    cudaError_t e = cudaStreamSynchronize(0);
    return e == cudaSuccess ? GPK_OK : cuda_fail(ctx, e, "distributed sort: exchange");
}
#endif /* GPK_HAVE_NCCL */

static int mpi_cuda_aware(void)
{
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    return MPIX_Query_cuda_support();
#else
    return 0;
#endif
}

/* How device shards move: GPK_MPI_DEVICE_EXCHANGE = ipc (the merge reads
 * the other ranks' sorted shards through CUDA IPC: every rank on one node,
 * each pair of GPUs peers), nccl, mpi (CUDA-aware MPI) or host (through
 * host memory) chooses; by default the first that this build, this MPI and
 * these ranks offer (ipc is checked on every call, and falls back to the
 * next where it does not hold). The same on every rank (one build). */
typedef enum { DX_IPC, DX_NCCL, DX_MPI, DX_HOST } device_exchange;
static device_exchange device_exchange_pick(void)
{
    const char *env = getenv("GPK_MPI_DEVICE_EXCHANGE");
    if (!env || !*env || !strcmp(env, "ipc")) return DX_IPC;
#ifdef GPK_HAVE_NCCL
    if (!env || !*env || !strcmp(env, "nccl")) return DX_NCCL;
#endif
    if ((!env || !*env || !strcmp(env, "mpi")) && mpi_cuda_aware()) return DX_MPI;
    return DX_HOST;
}

/* The exchange that stands in where ipc does not hold. */
static device_exchange device_exchange_after_ipc(void)
{
#ifdef GPK_HAVE_NCCL
    return DX_NCCL;
#else
    return mpi_cuda_aware() ? DX_MPI : DX_HOST;
#endif
}

/* Collective: non-zero on every rank when all ranks are on one node and
 * every rank's GPU can reach every other's (CUDA peer access). */
static int ipc_usable(MPI_Comm comm, gpk_ctx *ctx)
{
    int P, rank;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &rank);
    char name[MPI_MAX_PROCESSOR_NAME + 1] = "";
    int len = 0;
    MPI_Get_processor_name(name, &len);
    uint64_t mine[2] = { 1469598103934665603ull, (uint64_t)ctx->device };
    for (int i = 0; i < len; i++) mine[0] = (mine[0] ^ (unsigned char)name[i]) * 1099511628211ull;
    uint64_t *all = malloc(sizeof mine * (size_t)P);
    int ok = all != NULL, all_ok = 0;
    uint64_t dummy[2];
    int rc = MPI_Allgather(mine, 2, MPI_UINT64_T, all ? (void *)all : (void *)dummy, all ? 2 : 0, MPI_UINT64_T, comm);
    ok = ok && rc == MPI_SUCCESS;
    for (int p = 0; p < P && ok; p++) {
        if (all[2 * p] != mine[0]) ok = 0;
        else if (p != rank && (int)all[2 * p + 1] != ctx->device) {
            int can = 0;
            if (cudaDeviceCanAccessPeer(&can, ctx->device, (int)all[2 * p + 1]) != cudaSuccess || !can) ok = 0;
        }
    }
    (void)cudaGetLastError();
    free(all);
    if (MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) return 0;
    return all_ok;
}

typedef struct ipc_handles {
    cudaIpcMemHandle_t keys, values;
} ipc_handles;

/* Collective: maps every other rank's sorted shard (keys, values) that
 * holds keys for this rank; base_k[p] / base_v[p] (this rank's own: its
 * shard). On failure nothing stays mapped and every rank knows. */
static gpk_status ipc_map(const sort_call *c, void *sk, void *sv, const uint64_t *recv, void **base_k, void **base_v)
{
    const char *what = "distributed sort: CUDA IPC";
    ipc_handles mine, *all = malloc(sizeof mine * (size_t)c->P);
    memset(&mine, 0, sizeof mine);
    gpk_status s = all ? GPK_OK : gpk__mpi_fail(c->ctx, GPK_ENOMEM, "%s: out of memory", what);
    cudaError_t e = cudaSuccess;
    if (s == GPK_OK) e = cudaIpcGetMemHandle(&mine.keys, sk);
    if (s == GPK_OK && e == cudaSuccess && c->vw) e = cudaIpcGetMemHandle(&mine.values, sv);
    if (s == GPK_OK && e != cudaSuccess) s = cuda_fail(c->ctx, e, what);
    s = gpk__mpi_agree(c->comm, c->ctx, s, what);
    if (s != GPK_OK) {
        free(all);
        return s;
    }
    s = gpk__mpi_check(c->ctx, MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, c->comm),
                       what);
    for (int p = 0; p < c->P; p++) base_k[p] = base_v[p] = NULL;
    for (int p = 0; p < c->P && s == GPK_OK; p++) {
        if (p == c->rank) {
            base_k[p] = sk, base_v[p] = sv;
            continue;
        }
        if (!recv[p]) continue;
        e = cudaIpcOpenMemHandle(&base_k[p], all[p].keys, cudaIpcMemLazyEnablePeerAccess);
        if (e == cudaSuccess && c->vw) {
            e = cudaIpcOpenMemHandle(&base_v[p], all[p].values, cudaIpcMemLazyEnablePeerAccess);
            if (e != cudaSuccess) base_v[p] = NULL;
        }
        if (e != cudaSuccess) s = cuda_fail(c->ctx, e, what);
    }
    free(all);
    s = gpk__mpi_agree(c->comm, c->ctx, s, what);
    if (s != GPK_OK) {
        for (int p = 0; p < c->P; p++) {
            if (p != c->rank && base_k[p]) cudaIpcCloseMemHandle(base_k[p]);
            if (p != c->rank && base_v[p]) cudaIpcCloseMemHandle(base_v[p]);
            base_k[p] = base_v[p] = NULL;
        }
        (void)cudaGetLastError();
    }
    return s;
}

static void ipc_unmap(const sort_call *c, void **base_k, void **base_v)
{
    for (int p = 0; p < c->P; p++) {
        if (p != c->rank && base_k[p]) (void)cudaIpcCloseMemHandle(base_k[p]);
        if (p != c->rank && base_v[p]) (void)cudaIpcCloseMemHandle(base_v[p]);
        base_k[p] = base_v[p] = NULL;
    }
}

static gpk_status exchange_device(MPI_Comm comm, gpk_ctx *ctx, device_exchange how, void *nccl, const void *sendbuf,
                                  size_t n_send, const uint64_t *send, void *recvbuf, size_t n_recv,
                                  const uint64_t *recv, size_t width)
{
    const char *what = "distributed sort: exchange";
#ifdef GPK_HAVE_NCCL
    if (how == DX_NCCL) return exchange_nccl(comm, ctx, (ncclComm_t)nccl, sendbuf, send, recvbuf, recv, width);
#endif
    if (how == DX_MPI) return exchange(comm, ctx, sendbuf, send, recvbuf, recv, width, copy_device, what);
    /* through host memory */
    void *hs = malloc(n_send * width + 1), *hr = malloc(n_recv * width + 1);
    gpk_status s = GPK_OK;
    if (!hs || !hr) s = gpk__mpi_fail(ctx, GPK_ENOMEM, "%s: out of host memory for staging", what);
    cudaError_t e = cudaSuccess;
    if (s == GPK_OK && n_send) e = cudaMemcpy(hs, sendbuf, n_send * width, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) s = cuda_fail(ctx, e, what);
    s = gpk__mpi_agree(comm, ctx, s, what);
    if (s == GPK_OK) s = exchange(comm, ctx, hs, send, hr, recv, width, copy_host, what);
    if (s == GPK_OK && n_recv) e = cudaMemcpy(recvbuf, hr, n_recv * width, cudaMemcpyHostToDevice);
    if (s == GPK_OK && e != cudaSuccess) s = cuda_fail(ctx, e, what);
    free(hs);
    free(hr);
    return s;
}
#endif /* GPK_HAVE_CUDA */

/* ---- host shards of ranks on one node: a shared-memory window ----------------------- */

/* Where every rank of comm is on one node (and GPK_MPI_HOST_EXCHANGE is not
 * "mpi"), the sorted shards live in one MPI shared-memory window and each
 * rank's merge reads its pieces from the others' shards in place, on all
 * its threads: no copy through MPI. */
typedef struct shm_state {
    MPI_Comm node;  /* comm's ranks, in comm's order, errors returned */
    MPI_Win win;
    int locked;
} shm_state;

static size_t shm_values_at(size_t n, size_t kw)
{
    return (n * kw + 63) / 64 * 64;
}

/* Collective: the window for this rank's sorted shard (keys, then values),
 * or, where the ranks are not on one node or a rank cannot make it, no
 * window on any rank (*keys = NULL). */
static void shm_open(const sort_call *c, size_t n_in, shm_state *st, void **keys, void **values)
{
    st->node = MPI_COMM_NULL, st->win = MPI_WIN_NULL, st->locked = 0;
    *keys = *values = NULL;
    const char *env = getenv("GPK_MPI_HOST_EXCHANGE");
    if (env && !strcmp(env, "mpi")) return; /* the same on every rank: one environment */
    int node_size = 0, one_node = 0, all_one = 0;
    if (MPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &st->node) == MPI_SUCCESS)
        MPI_Comm_size(st->node, &node_size);
    one_node = node_size == c->P;
    if (MPI_Allreduce(&one_node, &all_one, 1, MPI_INT, MPI_MIN, c->comm) != MPI_SUCCESS || !all_one) return;
    MPI_Comm_set_errhandler(st->node, MPI_ERRORS_RETURN);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true"); /* each rank's part near its own threads */
    size_t bytes = shm_values_at(n_in, c->kw) + n_in * c->vw;
    void *base = NULL;
    int rc = MPI_Win_allocate_shared((MPI_Aint)(bytes ? bytes : 64), 1, info, st->node, &base, &st->win);
    MPI_Info_free(&info);
    int failed = rc != MPI_SUCCESS, any = 1;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, c->comm);
    if (any) {
        /* a window made on every rank goes (shm_close); one that failed
         * somewhere cannot be freed collectively and is left to MPI_Finalize */
        if (failed) st->win = MPI_WIN_NULL;
        else MPI_Win_free(&st->win);
        return;
    }
    MPI_Win_lock_all(MPI_MODE_NOCHECK, st->win);
    st->locked = 1;
    *keys = base;
    *values = c->vw ? (char *)base + shm_values_at(n_in, c->kw) : NULL;
}

static void shm_close(shm_state *st)
{
    if (st->win != MPI_WIN_NULL) {
        if (st->locked) MPI_Win_unlock_all(st->win);
        MPI_Win_free(&st->win);
    }
    if (st->node != MPI_COMM_NULL) MPI_Comm_free(&st->node);
}

/* ---- the sort --------------------------------------------------------------------- */

static _Thread_local gpk_mpi_sort_times last_times = { 0, 0, 0, 0, 0, "" };

void gpk_mpi_last_sort_times(gpk_mpi_sort_times *times)
{
    if (times) *times = last_times;
}

static uint64_t balanced_start(uint64_t N, int P, int r)
{
    uint64_t q = N / (uint64_t)P, m = N % (uint64_t)P;
    return q * (uint64_t)r + m * (uint64_t)r / (uint64_t)P;
}

gpk_status gpk_mpi_sort_count(MPI_Comm comm, size_t n_local, const gpk_mpi_sort_opts *opts, size_t *n_out)
{
    if (!n_out) return GPK_EINVAL;
    if (opts && opts->keep_sizes) {
        *n_out = n_local;
        return GPK_OK;
    }
    int P, rank;
    if (MPI_Comm_size(comm, &P) != MPI_SUCCESS || MPI_Comm_rank(comm, &rank) != MPI_SUCCESS) return GPK_EDEVICE;
    uint64_t mine = n_local, N = 0;
    if (MPI_Allreduce(&mine, &N, 1, MPI_UINT64_T, MPI_SUM, comm) != MPI_SUCCESS) return GPK_EDEVICE;
    *n_out = (size_t)(balanced_start(N, P, rank + 1) - balanced_start(N, P, rank));
    return GPK_OK;
}

/* What every rank states about its call, gathered before any work. */
enum { R_TYPE, R_VWIDTH, R_KEEP, R_DEVICE, R_N, R_FIELDS };


/* Local counts of keys < q (or <= q) in the sorted shard, for nq queries. */
static gpk_status shard_count(const sort_call *c, const void *keys, size_t n, const uint64_t *q, size_t nq,
                              int or_equal, uint64_t *counts)
{
#ifdef GPK_HAVE_CUDA
    if (c->device) return gpk__mpi_cuda_count(c->ctx, (int)c->type, keys, n, q, nq, or_equal, counts);
#endif
    #pragma omp parallel for num_threads(c->threads) schedule(static) if (nq > 64)
    for (size_t i = 0; i < nq; i++) counts[i] = host_count(c->type, keys, n, q[i], or_equal);
    return GPK_OK;
}

/* Split positions: split[r] = how many keys of this rank's sorted shard
 * belong to ranks < r (split[0] = 0, split[P] = n), from the global starts. */
static gpk_status find_splits(const sort_call *c, const void *sorted, size_t n, uint64_t N, const uint64_t *start,
                              uint64_t *split)
{
    int P = c->P;
    /* the starts strictly inside (0, N) need a split key */
    size_t nb = 0;
    for (int r = 1; r < P; r++) nb += start[r] > 0 && start[r] < N;
    size_t nq = nb * DIGITS;
    uint64_t *b = calloc(nb + 1, sizeof *b), *prefix = calloc(nb + 1, sizeof *prefix),
             *less = calloc(nb + 1, sizeof *less), *q = calloc(nq + 1, sizeof *q),
             *local = calloc(nq + 1, sizeof *local), *global = calloc(nq + 1, sizeof *global),
             *lb = calloc(nb + 1, sizeof *lb), *ub = calloc(nb + 1, sizeof *ub),
             *eq = calloc(nb + 1, sizeof *eq), *eq_before = calloc(nb + 1, sizeof *eq_before);
    gpk_status s = GPK_OK;
    if (!b || !prefix || !less || !q || !local || !global || !lb || !ub || !eq || !eq_before)
        s = gpk__mpi_fail(c->ctx, GPK_ENOMEM, "%s: out of memory for the splitters", c->what);
    s = gpk__mpi_agree(c->comm, c->ctx, s, c->what);
    if (s != GPK_OK) goto done;
    size_t j = 0;
    for (int r = 1; r < P; r++)
        if (start[r] > 0 && start[r] < N) b[j++] = start[r];
    /* The key at global position b: the largest v with count(< v) <= b,
     * DIGIT_BITS bits a round, from the top. The last slot of each
     * reduction counts the ranks that failed, so no rank waits on one. */
    for (int shift = (int)(c->kw * 8) - DIGIT_BITS; shift >= 0 && nb; shift -= DIGIT_BITS) {
        for (j = 0; j < nb; j++)
            for (unsigned d = 0; d < DIGITS; d++) q[j * DIGITS + d] = prefix[j] | ((uint64_t)d << shift);
        s = shard_count(c, sorted, n, q, nq, 0, local);
        local[nq] = s != GPK_OK;
        gpk_status m = gpk__mpi_check(c->ctx, MPI_Allreduce(local, global, (int)nq + 1, MPI_UINT64_T, MPI_SUM,
                                                            c->comm), c->what);
        if (s != GPK_OK) goto done;
        if (m != GPK_OK) { s = m; goto done; }
        if (global[nq]) {
            s = gpk__mpi_fail(c->ctx, GPK_EDEVICE, "%s: another rank failed while splitting", c->what);
            goto done;
        }
        for (j = 0; j < nb; j++) {
            unsigned d = DIGITS - 1;
            while (global[j * DIGITS + d] > b[j]) d--; /* d = 0 qualifies: count(< prefix) <= b */
            prefix[j] |= (uint64_t)d << shift;
            less[j] = global[j * DIGITS + d];
        }
    }
    /* ties at a split key: ranks before this one take theirs first */
    s = shard_count(c, sorted, n, prefix, nb, 0, lb);
    if (s == GPK_OK) s = shard_count(c, sorted, n, prefix, nb, 1, ub);
    s = gpk__mpi_agree(c->comm, c->ctx, s, c->what);
    if (s != GPK_OK) goto done;
    for (j = 0; j < nb; j++) eq[j] = ub[j] - lb[j];
    if (nb) {
        s = gpk__mpi_check(c->ctx, MPI_Exscan(eq, eq_before, (int)nb, MPI_UINT64_T, MPI_SUM, c->comm), c->what);
        if (c->rank == 0) memset(eq_before, 0, nb * sizeof *eq_before);
        s = gpk__mpi_agree(c->comm, c->ctx, s, c->what);
        if (s != GPK_OK) goto done;
    }
    j = 0;
    split[0] = 0;
    split[P] = n;
    for (int r = 1; r < P; r++) {
        if (start[r] == 0) split[r] = 0;
        else if (start[r] >= N) split[r] = n;
        else {
            uint64_t want = b[j] - less[j]; /* keys equal to the split key before position b */
            uint64_t take = want > eq_before[j] ? want - eq_before[j] : 0;
            split[r] = lb[j] + (take < eq[j] ? take : eq[j]);
            j++;
        }
    }
done:
    free(b), free(prefix), free(less), free(q), free(local), free(global);
    free(lb), free(ub), free(eq), free(eq_before);
    return s;
}

static void *buffer_alloc(const sort_call *c, size_t bytes)
{
#ifdef GPK_HAVE_CUDA
    if (c->device) {
        void *p = NULL;
        return cudaMalloc(&p, bytes ? bytes : 1) == cudaSuccess ? p : NULL;
    }
#endif
    return malloc(bytes ? bytes : 1);
}

static void buffer_free(const sort_call *c, void *p)
{
    if (!p) return;
#ifdef GPK_HAVE_CUDA
    if (c->device) {
        cudaFree(p);
        return;
    }
#endif
    free(p);
}

/* Sorts this rank's shard into (sk, sv), stably. */
static gpk_status local_sort(const sort_call *c, const void *keys, const void *values, size_t n, void *sk, void *sv)
{
    if (n == 0) return GPK_OK;
    gpk_sort_opts o = GPK_SORT_OPTS_INIT;
    o.algorithm = GPK_SORT_RADIX; /* stable */
#ifdef GPK_HAVE_CUDA
    if (c->device) {
        size_t tb = 0;
        gpk_status s = c->vw ? gpk_cuda_sort_pairs(c->ctx, NULL, &tb, c->type, keys, sk, c->vw, values, sv, n, &o, 0, 0)
                             : gpk_cuda_sort_keys(c->ctx, NULL, &tb, c->type, keys, sk, n, &o, 0, 0);
        if (s != GPK_OK) return s;
        void *temp = NULL;
        cudaError_t e = cudaMalloc(&temp, tb ? tb : 1);
        if (e != cudaSuccess) return cuda_fail(c->ctx, e, "distributed sort: temporary storage of the local sort");
        s = c->vw ? gpk_cuda_sort_pairs(c->ctx, temp, &tb, c->type, keys, sk, c->vw, values, sv, n, &o, 0, 0)
                  : gpk_cuda_sort_keys(c->ctx, temp, &tb, c->type, keys, sk, n, &o, 0, 0);
        e = cudaStreamSynchronize(0);
        cudaFree(temp);
        if (s == GPK_OK && e != cudaSuccess) s = cuda_fail(c->ctx, e, "distributed sort: local sort");
        return s;
    }
#endif
    if (!c->vw) return gpk_sort_keys_to(c->ctx, c->type, keys, sk, n, &o);
    if (sk != keys) memcpy(sk, keys, n * c->kw);
    if (sv != values) memcpy(sv, values, n * c->vw);
    return gpk_sort_pairs(c->ctx, c->type, sk, c->vtype, sv, n, &o);
}

static gpk_status merge_runs(const sort_call *c, void *rk, void *rv, size_t *off, int runs, void *ok, void *ov)
{
#ifdef GPK_HAVE_CUDA
    if (c->device) return gpk__mpi_cuda_merge(c->ctx, (int)c->type, rk, rv, c->vw, off, runs, ok, ov);
#endif
    host_merge_runs(c->type, c->kw, c->vw, rk, rv, off, runs, ok, ov, c->threads);
    return GPK_OK;
}

static gpk_status sort_impl(MPI_Comm comm, gpk_ctx *ctx, gpk_type type, const void *keys_in, int with_values,
                            gpk_type vtype, const void *values_in, size_t n_in, void *keys_out, void *values_out,
                            size_t cap, size_t *n_out, const gpk_mpi_sort_opts *opts, const char *what)
{
    gpk_mpi_sort_opts o = GPK_MPI_SORT_OPTS_INIT;
    if (opts) o = *opts;
    gpk_mpi_sort_times times = { 0, 0, 0, 0, 0, "" };
    double t_start = MPI_Wtime(), t_phase = t_start;
    sort_call c = { comm, ctx, type, 0, 0, vtype, o.device_memory != 0, 1, 0, 1, what };
    if (MPI_Comm_size(comm, &c.P) != MPI_SUCCESS || MPI_Comm_rank(comm, &c.rank) != MPI_SUCCESS)
        return gpk__mpi_fail(ctx, GPK_EINVAL, "%s: not a valid communicator", what);
    int64_t *all = NULL;
    uint64_t *start = NULL, *split = NULL, *send = NULL, *recv = NULL, N = 0;
    void *sk = NULL, *sv = NULL, *rk = NULL, *rv = NULL;
    size_t *off = NULL, n_mine = 0;
#ifdef GPK_HAVE_CUDA
    int prev_device = -1, ipc_mapped = 0;
    void *nccl = NULL, **base_k = NULL, **base_v = NULL;
    device_exchange how = c.device ? device_exchange_pick() : DX_HOST;
#endif
    shm_state shm = { MPI_COMM_NULL, MPI_WIN_NULL, 0 };
    int in_shm = 0;

    /* 1. each rank checks its own arguments; the ranks agree, then gather
     * what must match */
    gpk_status s = GPK_OK;
    if (!ctx) s = GPK_EINVAL; /* nowhere to say why: the status tells */
    else if (!n_out) s = gpk__mpi_fail(ctx, GPK_EINVAL, "%s: n_out is NULL", what);
    else if ((unsigned)type > GPK_F64) s = gpk__mpi_fail(ctx, GPK_EINVAL, "%s: unknown key type %d", what, (int)type);
    else if (with_values && (unsigned)vtype > GPK_F64)
        s = gpk__mpi_fail(ctx, GPK_EINVAL, "%s: unknown value type %d", what, (int)vtype);
    else if (n_in && (!keys_in || (with_values && !values_in)))
        s = gpk__mpi_fail(ctx, GPK_EINVAL, "%s: the shard is NULL with %zu keys", what, n_in);
    else if (cap && (!keys_out || (with_values && !values_out)))
        s = gpk__mpi_fail(ctx, GPK_EINVAL, "%s: the output is NULL with capacity %zu", what, cap);
    else if (c.device && ctx->backend != GPK_BACKEND_CUDA)
        s = gpk__mpi_fail(ctx, GPK_EINVAL, "%s: device_memory needs a CUDA context (this one is %s)", what,
                          gpk_backend_name(ctx->backend));
    if (s == GPK_OK) {
        c.kw = gpk_type_size(type);
        c.vw = with_values ? gpk_type_size(vtype) : 0;
        c.threads = ctx->threads > 0 ? ctx->threads : 1;
        all = malloc(sizeof(int64_t) * R_FIELDS * (size_t)c.P);
        start = malloc(sizeof(uint64_t) * ((size_t)c.P + 1) * 5); /* start, split, send, recv, at_sender */
        off = malloc(sizeof(size_t) * ((size_t)c.P + 1));
        if (!all || !start || !off) s = gpk__mpi_fail(ctx, GPK_ENOMEM, "%s: out of memory", what);
    }
    s = gpk__mpi_agree(comm, ctx, s, what);
    if (s != GPK_OK) goto done;
    int64_t mine[R_FIELDS] = { type, (int64_t)c.vw, o.keep_sizes != 0, c.device, (int64_t)n_in };
    s = gpk__mpi_check(ctx, MPI_Allgather(mine, R_FIELDS, MPI_INT64_T, all, R_FIELDS, MPI_INT64_T, comm), what);
    if (s != GPK_OK) goto done;
    for (int p = 1; p < c.P && s == GPK_OK; p++) {
        const int64_t *a = all + (size_t)p * R_FIELDS, *z = all;
        if (a[R_TYPE] != z[R_TYPE])
            s = gpk__mpi_fail(ctx, GPK_EINVAL, "%s: key types differ across ranks (rank 0 %s, rank %d %s)", what,
                              gpk_type_name((gpk_type)z[R_TYPE]), p, gpk_type_name((gpk_type)a[R_TYPE]));
        else if (a[R_VWIDTH] != z[R_VWIDTH])
            s = gpk__mpi_fail(ctx, GPK_EINVAL,
                              "%s: value widths differ across ranks (rank 0 %d bytes, rank %d %d bytes)", what,
                              (int)z[R_VWIDTH], p, (int)a[R_VWIDTH]);
        else if (a[R_KEEP] != z[R_KEEP])
            s = gpk__mpi_fail(ctx, GPK_EINVAL, "%s: keep_sizes differs across ranks (rank 0 and rank %d)", what, p);
        else if (a[R_DEVICE] != z[R_DEVICE])
            s = gpk__mpi_fail(ctx, GPK_EINVAL, "%s: device_memory differs across ranks (rank 0 and rank %d)", what,
                              p);
    }
    if (s != GPK_OK) goto done; /* every rank saw the same records: no agreement needed */
#ifndef GPK_HAVE_CUDA
    if (c.device) {
        s = gpk__mpi_fail(ctx, GPK_EUNSUPPORTED, "%s: device_memory: gpk was built without CUDA", what);
        goto done;
    }
#endif

    /* 2. where each rank's output starts in the global order */
    split = start + c.P + 1, send = split + c.P + 1, recv = send + c.P + 1;
    start[0] = 0;
    for (int p = 0; p < c.P; p++) N += (uint64_t)all[(size_t)p * R_FIELDS + R_N];
    for (int p = 1; p <= c.P; p++)
        start[p] = o.keep_sizes ? start[p - 1] + (uint64_t)all[(size_t)(p - 1) * R_FIELDS + R_N]
                                : balanced_start(N, c.P, p);
    n_mine = (size_t)(start[c.rank + 1] - start[c.rank]);
    *n_out = n_mine;
    if (cap < n_mine)
        s = gpk__mpi_fail(ctx, GPK_EINVAL, "%s: out_capacity %zu is below the %zu keys this rank receives", what,
                          cap, n_mine);
#ifdef GPK_HAVE_CUDA
    if (s == GPK_OK && c.device) {
        int current = -1;
        cudaError_t e = cudaGetDevice(&current);
        if (e == cudaSuccess && current != ctx->device) {
            e = cudaSetDevice(ctx->device);
            if (e == cudaSuccess) prev_device = current;
        }
        if (e != cudaSuccess) s = cuda_fail(ctx, e, what);
    }
#endif

    /* one rank: the local sort, straight into the output */
    if (c.P == 1) {
        times.exchange = "local";
        if (s == GPK_OK) s = local_sort(&c, keys_in, values_in, n_in, keys_out, values_out);
        times.sort_ms = (MPI_Wtime() - t_phase) * 1e3;
        goto done;
    }

    /* 3. local sort (host shards of one node: into the shared window) */
    if (!c.device) {
        gpk_status m = gpk__mpi_agree(comm, ctx, s, what); /* shm_open is collective */
        if (m != GPK_OK) {
            s = m;
            goto done;
        }
        shm_open(&c, n_in, &shm, &sk, &sv);
        in_shm = sk != NULL;
    }
    if (s == GPK_OK && !in_shm) {
        sk = buffer_alloc(&c, n_in * c.kw);
        sv = c.vw ? buffer_alloc(&c, n_in * c.vw) : NULL;
        if (!sk || (c.vw && !sv))
            s = gpk__mpi_fail(ctx, GPK_ENOMEM, "%s: out of %s memory for %zu keys", what,
                              c.device ? "device" : "host", n_in);
    }
    if (s == GPK_OK) s = local_sort(&c, keys_in, values_in, n_in, sk, sv);
    if (in_shm) MPI_Win_sync(shm.win); /* the shard is complete before the others read it */
    times.sort_ms = (MPI_Wtime() - t_phase) * 1e3, t_phase = MPI_Wtime();
    s = gpk__mpi_agree(comm, ctx, s, what);
    if (s != GPK_OK) goto done;

    /* 4. split positions, counts to and from every rank */
    s = find_splits(&c, sk, n_in, N, start, split);
    times.split_ms = (MPI_Wtime() - t_phase) * 1e3, t_phase = MPI_Wtime();
    if (s != GPK_OK) goto done;
    for (int p = 0; p < c.P; p++) send[p] = split[p + 1] - split[p];
    s = gpk__mpi_check(ctx, MPI_Alltoall(send, 1, MPI_UINT64_T, recv, 1, MPI_UINT64_T, comm), what);
    if (s == GPK_OK) {
        uint64_t got = 0;
        off[0] = 0;
        for (int p = 0; p < c.P; p++) got += recv[p], off[p + 1] = (size_t)got;
        if (got != n_mine)
            s = gpk__mpi_fail(ctx, GPK_EDEVICE, "%s: internal error: %llu keys would arrive for %zu places", what,
                              (unsigned long long)got, n_mine);
    }
    s = gpk__mpi_agree(comm, ctx, s, what);
    if (s != GPK_OK) goto done;
    if (in_shm) {
        /* each rank reads its pieces where they lie: it needs where its
         * piece starts in every other rank's sorted shard */
        s = gpk__mpi_check(ctx, MPI_Alltoall(split, 1, MPI_UINT64_T, recv + c.P + 1, 1, MPI_UINT64_T, comm), what);
        s = gpk__mpi_agree(comm, ctx, s, what);
        if (s != GPK_OK) goto done;
        MPI_Win_sync(shm.win);
    }
#ifdef GPK_HAVE_CUDA
    if (c.device && how == DX_IPC) {
        /* each rank reads its pieces where they lie: it needs where its
         * piece starts in every other rank's sorted shard */
        uint64_t *at_sender = recv + c.P + 1; /* the last row of `start`'s block */
        s = gpk__mpi_check(ctx, MPI_Alltoall(split, 1, MPI_UINT64_T, at_sender, 1, MPI_UINT64_T, comm), what);
        if (ipc_usable(comm, ctx)) { /* the same answer on every rank */
            base_k = calloc((size_t)c.P, sizeof *base_k), base_v = calloc((size_t)c.P, sizeof *base_v);
            gpk_status m = base_k && base_v ? s : gpk__mpi_fail(ctx, GPK_ENOMEM, "%s: out of memory", what);
            m = gpk__mpi_agree(comm, ctx, m, what);
            /* a mapping that fails leaves nothing mapped on any rank: the next exchange stands in */
            if (m == GPK_OK && ipc_map(&c, sk, sv, recv, base_k, base_v) == GPK_OK) ipc_mapped = 1;
            else if (m != GPK_OK) s = m;
        }
        if (s == GPK_OK && !ipc_mapped) {
            if (ctx) ctx->err[0] = '\0';
            how = device_exchange_after_ipc();
        }
        s = gpk__mpi_agree(comm, ctx, s, what);
        if (s != GPK_OK) goto done;
    }
#endif
#if defined(GPK_HAVE_CUDA) && defined(GPK_HAVE_NCCL)
    if (c.device && how == DX_NCCL) {
        ncclComm_t nc;
        s = nccl_comm_get(comm, ctx, &nc);
        if (s != GPK_OK) goto done;
        nccl = nc;
    }
#endif

    /* the runs received, or the merge's scratch where they are read in place
     * and take more than one round */
    int nonempty = 0;
    for (int p = 0; p < c.P; p++) nonempty += recv[p] > 0;
    int in_place = in_shm;
#ifdef GPK_HAVE_CUDA
    in_place |= ipc_mapped;
#endif
    if (!in_place || nonempty > 2) {
        rk = buffer_alloc(&c, n_mine * c.kw);
        rv = c.vw ? buffer_alloc(&c, n_mine * c.vw) : NULL;
        if (!rk || (c.vw && !rv))
            s = gpk__mpi_fail(ctx, GPK_ENOMEM, "%s: out of %s memory for %zu keys", what,
                              c.device ? "device" : "host", n_mine);
    }
    s = gpk__mpi_agree(comm, ctx, s, what);
    if (s != GPK_OK) {
#ifdef GPK_HAVE_CUDA
        if (ipc_mapped) ipc_unmap(&c, base_k, base_v);
#endif
        goto done;
    }

    times.exchange = in_shm ? "shared-memory" : "mpi";
#ifdef GPK_HAVE_CUDA
    if (c.device)
        times.exchange = ipc_mapped ? "cuda-ipc" : how == DX_NCCL ? "nccl" : how == DX_MPI ? "cuda-aware-mpi"
                                                                                          : "host-staged";
#endif
    /* 5. exchange (each call agrees on failures before it moves data) */
#ifdef GPK_HAVE_CUDA
    if (c.device && ipc_mapped) {
        /* nothing moves yet: the merge reads the pieces over the links */
    } else if (c.device) {
        s = exchange_device(comm, ctx, how, nccl, sk, n_in, send, rk, n_mine, recv, c.kw);
        if (c.vw) {
            s = gpk__mpi_agree(comm, ctx, s, what);
            if (s == GPK_OK) s = exchange_device(comm, ctx, how, nccl, sv, n_in, send, rv, n_mine, recv, c.vw);
        }
    } else
#endif
    if (in_shm) {
        /* nothing moves yet: the merge reads the pieces in the window */
    } else {
        s = exchange(comm, ctx, sk, send, rk, recv, c.kw, copy_host, what);
        if (c.vw) {
            s = gpk__mpi_agree(comm, ctx, s, what);
            if (s == GPK_OK) s = exchange(comm, ctx, sv, send, rv, recv, c.vw, copy_host, what);
        }
    }

    times.exchange_ms = (MPI_Wtime() - t_phase) * 1e3, t_phase = MPI_Wtime();
    /* 6. merge the runs received, earlier ranks first on ties */
#ifdef GPK_HAVE_CUDA
    if (s == GPK_OK && ipc_mapped) {
        const void **run_k = (const void **)calloc((size_t)c.P, sizeof(void *));
        const void **run_v = (const void **)calloc((size_t)c.P, sizeof(void *));
        size_t *run_len = calloc((size_t)c.P, sizeof(size_t));
        int runs = 0;
        uint64_t *at_sender = recv + c.P + 1;
        if (!run_k || !run_v || !run_len) s = gpk__mpi_fail(ctx, GPK_ENOMEM, "%s: out of memory", what);
        for (int p = 0; p < c.P && s == GPK_OK; p++) {
            if (!recv[p]) continue;
            run_k[runs] = (const char *)base_k[p] + at_sender[p] * c.kw;
            run_v[runs] = c.vw ? (const char *)base_v[p] + at_sender[p] * c.vw : NULL;
            run_len[runs++] = (size_t)recv[p];
        }
        if (s == GPK_OK)
            s = gpk__mpi_cuda_merge_runs(ctx, (int)c.type, run_k, run_v, c.vw, run_len, runs, rk, rv, keys_out,
                                         values_out);
        free(run_k), free(run_v), free(run_len);
        ipc_unmap(&c, base_k, base_v); /* before the agreement: then the owners may free their shards */
    } else
#endif
    if (s == GPK_OK && in_shm) {
        const void **run_k = (const void **)calloc((size_t)c.P, sizeof(void *));
        const void **run_v = (const void **)calloc((size_t)c.P, sizeof(void *));
        size_t *run_len = calloc((size_t)c.P, sizeof(size_t));
        int runs = 0;
        const uint64_t *at_sender = recv + c.P + 1;
        if (!run_k || !run_v || !run_len) s = gpk__mpi_fail(ctx, GPK_ENOMEM, "%s: out of memory", what);
        for (int p = 0; p < c.P && s == GPK_OK; p++) {
            if (!recv[p]) continue;
            MPI_Aint size;
            int unit;
            char *base = NULL;
            if (MPI_Win_shared_query(shm.win, p, &size, &unit, &base) != MPI_SUCCESS || !base) {
                s = gpk__mpi_fail(ctx, GPK_EDEVICE, "%s: MPI_Win_shared_query of rank %d failed", what, p);
                break;
            }
            size_t n_p = (size_t)all[(size_t)p * R_FIELDS + R_N];
            run_k[runs] = base + at_sender[p] * c.kw;
            run_v[runs] = c.vw ? base + shm_values_at(n_p, c.kw) + at_sender[p] * c.vw : NULL;
            run_len[runs++] = (size_t)recv[p];
        }
        if (s == GPK_OK)
            host_merge_ptr(c.type, c.kw, c.vw, run_k, run_v, run_len, runs, rk, rv, keys_out, values_out, off,
                           c.threads);
        free(run_k), free(run_v), free(run_len);
    } else if (s == GPK_OK) {
        int runs = 0;
        for (int p = 0; p < c.P; p++)
            if (recv[p]) off[runs++] = off[p];
        off[runs] = n_mine;
        s = merge_runs(&c, rk, rv, off, runs, keys_out, values_out);
    }
    times.merge_ms = (MPI_Wtime() - t_phase) * 1e3;
    s = gpk__mpi_agree(comm, ctx, s, what);
done:
    times.total_ms = (MPI_Wtime() - t_start) * 1e3;
    last_times = times;
#ifdef GPK_HAVE_CUDA
    if (prev_device >= 0) (void)cudaSetDevice(prev_device);
#endif
    if (in_shm) sk = sv = NULL; /* the window's */
    buffer_free(&c, sk), buffer_free(&c, sv), buffer_free(&c, rk), buffer_free(&c, rv);
    shm_close(&shm); /* collective: every rank comes here, after the last agreement */
    free(off), free(all), free(start);
#ifdef GPK_HAVE_CUDA
    free(base_k), free(base_v);
#endif
    return s;
}

gpk_status gpk_mpi_sort_keys(MPI_Comm comm, gpk_ctx *ctx, gpk_type type, const void *keys_in, size_t n_in,
                             void *keys_out, size_t out_capacity, size_t *n_out, const gpk_mpi_sort_opts *opts)
{
    return sort_impl(comm, ctx, type, keys_in, 0, GPK_U32, NULL, n_in, keys_out, NULL, out_capacity, n_out, opts,
                     "gpk_mpi_sort_keys");
}

gpk_status gpk_mpi_sort_pairs(MPI_Comm comm, gpk_ctx *ctx, gpk_type key_type, const void *keys_in,
                              gpk_type value_type, const void *values_in, size_t n_in, void *keys_out,
                              void *values_out, size_t out_capacity, size_t *n_out, const gpk_mpi_sort_opts *opts)
{
    return sort_impl(comm, ctx, key_type, keys_in, 1, value_type, values_in, n_in, keys_out, values_out,
                     out_capacity, n_out, opts, "gpk_mpi_sort_pairs");
}
