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
#include "mpi_test_hooks.h"
#include "sort/multi_internal.h" /* the part plan's digit, bucket cap and streams */

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef GPK_HAVE_CUDA
#include <cuda_runtime_api.h>
#include "gpk/cuda.h"
#endif
#ifdef GPK_HAVE_NCCL
#include "nccl_loader.h" /* nccl.h's types; its calls through the table opened at run time */
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
    size_t kw, vw; /* key and value widths (vw 0: keys only) */
    gpk_type vtype;
    int device; /* shards in device memory */
    int P, rank, threads;
    const char *what;
    struct sort_keep *keep; /* what comm keeps between calls */
    double setup_ms;        /* spent growing kept buffers, making the window, mapping peers */
    int setups;             /* how many of those this call did */
} sort_call;

/* ---- host kernels: counts and merges on mapped keys -------------------------- */

/* the merge loop of merge_NAME with values of type VT beside the keys */
#define MERGE_STEPS(KT, MAP, VT)          \
    {                                     \
        const VT *pa = va, *pb = vb;      \
        VT *po = vout;                    \
        while (i < i1 && j < j1) {        \
            KT x = a[i], y = b[j];        \
            int tb = MAP(y) < MAP(x);     \
            out[o] = tb ? y : x;          \
            po[o++] = tb ? pb[j] : pa[i]; \
            i += !tb, j += tb;            \
        }                                 \
    }

#define DEFINE_HOST_TYPE(NAME, KT, MAP)                                                                      \
    static size_t count_##NAME(const KT *k, size_t n, uint64_t q, int or_equal)                              \
    {                                                                                                        \
        size_t lo = 0, hi = n;                                                                               \
        while (lo < hi) {                                                                                    \
            size_t mid = lo + (hi - lo) / 2;                                                                 \
            uint64_t m = MAP(k[mid]);                                                                        \
            if (m < q || (or_equal && m == q)) lo = mid + 1;                                                 \
            else hi = mid;                                                                                   \
        }                                                                                                    \
        return lo;                                                                                           \
    }                                                                                                        \
    /* how many of the first k outputs of the stable merge of a and b come from a */                         \
    static size_t corank_##NAME(const KT *a, size_t na, const KT *b, size_t nb, size_t k)                    \
    {                                                                                                        \
        size_t lo = k > nb ? k - nb : 0, hi = k < na ? k : na;                                               \
        while (lo < hi) {                                                                                    \
            size_t mid = lo + (hi - lo) / 2;                                                                 \
            if (MAP(a[mid]) <= MAP(b[k - mid - 1])) lo = mid + 1;                                            \
            else hi = mid;                                                                                   \
        }                                                                                                    \
        return lo;                                                                                           \
    }                                                                                                        \
    static void merge_##NAME(const KT *a, const void *va, size_t na, const KT *b, const void *vb, size_t nb, \
                             KT *out, void *vout, size_t vw, int threads)                                    \
    {                                                                                                        \
        size_t n = na + nb;                                                                                  \
        int parts = n < 2048 ? 1 : threads;                                                                  \
        _Pragma("omp parallel for num_threads(parts) schedule(static, 1)") for (int t = 0; t < parts; t++)   \
        {                                                                                                    \
            size_t k0 = n / (size_t)parts * (size_t)t + n % (size_t)parts * (size_t)t / (size_t)parts;       \
            size_t k1 =                                                                                      \
                n / (size_t)parts * (size_t)(t + 1) + n % (size_t)parts * (size_t)(t + 1) / (size_t)parts;   \
            size_t i = corank_##NAME(a, na, b, nb, k0), i1 = corank_##NAME(a, na, b, nb, k1);                \
            size_t j = k0 - i, j1 = k1 - i1, o = k0;                                                         \
            /* branch-free while both runs last (a branch per key mispredicts half the time on     \
             * random keys, most of the merge's time); ties from a, the earlier run */         \
            if (vw == 4) MERGE_STEPS(KT, MAP, uint32_t)                                                      \
            else if (vw == 8) MERGE_STEPS(KT, MAP, uint64_t)                                                 \
            else                                                                                             \
                while (i < i1 && j < j1) {                                                                   \
                    KT x = a[i], y = b[j];                                                                   \
                    int tb = MAP(y) < MAP(x);                                                                \
                    out[o++] = tb ? y : x;                                                                   \
                    i += !tb, j += tb;                                                                       \
                }                                                                                            \
            /* the rest of the one run left (an empty run may be NULL) */                                    \
            if (i < i1) {                                                                                    \
                memcpy(out + o, a + i, (i1 - i) * sizeof(KT));                                               \
                if (vw) memcpy((char *)vout + o * vw, (const char *)va + i * vw, (i1 - i) * vw);             \
            } else if (j < j1) {                                                                             \
                memcpy(out + o, b + j, (j1 - j) * sizeof(KT));                                               \
                if (vw) memcpy((char *)vout + o * vw, (const char *)vb + j * vw, (j1 - j) * vw);             \
            }                                                                                                \
        }                                                                                                    \
    }

/* count_NAME, corank_NAME and merge_NAME for every key type; map_NAME its
 * mapped key, widened to 64 bits. */
#define MAP_BYTES4(T, x) ((uint64_t)gpk__map_u32((T), (x)))
#define MAP_BYTES8(T, x) gpk__map_u64((T), (x))
#define KEY_MAP(T, N, B, U, C, K) \
    static inline uint64_t map_##N(U x) { return MAP_BYTES##B(T, x); }
#define KEY_DEFINE(T, N, B, U, C, K) DEFINE_HOST_TYPE(N, U, map_##N)
GPK_KEY_TYPES(KEY_MAP)
GPK_KEY_TYPES(KEY_DEFINE)

static size_t host_count(gpk_type t, const void *k, size_t n, uint64_t q, int or_equal)
{
#define KEY_CASE(T, N, B, U, C, K) \
    case T: return count_##N(k, n, q, or_equal);
    switch (t) {
        GPK_KEY_TYPES(KEY_CASE)
    }
#undef KEY_CASE
    return 0;
}

static void host_merge2(gpk_type t, const void *a, const void *va, size_t na, const void *b, const void *vb,
                        size_t nb, void *out, void *vout, size_t vw, int threads)
{
#define KEY_CASE(T, N, B, U, C, K) \
    case T: merge_##N(a, va, na, b, vb, nb, out, vout, vw, threads); break;
    switch (t) {
        GPK_KEY_TYPES(KEY_CASE)
    }
#undef KEY_CASE
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
        for (int i = 0; i < runs; i += 2) {
            size_t a0 = off[i], a1 = off[i + 1];
            size_t b1 = i + 1 < runs ? off[i + 2] : a1;
            host_merge2(t, src_k + a0 * kw, vw ? src_v + a0 * vw : NULL, a1 - a0, src_k + a1 * kw,
                        vw ? src_v + a1 * vw : NULL, b1 - a1, dst_k + a0 * kw, vw ? dst_v + a0 * vw : NULL,
                        vw, threads);
        }
        runs = gpk__merge_round_end(off, runs, n, &src_k, &src_v, &dst_k, &dst_v);
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
                           const size_t *len, int runs, void *scratch_k, void *scratch_v, void *out_k,
                           void *out_v, size_t *off, int threads)
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
                    vw && i + 1 < runs ? rv[i + 1] : NULL, nb, dst_k + at * kw, vw ? dst_v + at * vw : NULL,
                    vw, threads);
        off[next++] = at;
        at += na + nb;
    }
    off[next] = n;
    if (rounds > 1) {
        /* from dst to the other buffer; when dst is out, the rounds left are
         * even and end there (host_merge_runs then copies it to scratch too) */
        void *other_k = dst_k == (char *)out_k ? scratch_k : out_k,
             *other_v = dst_k == (char *)out_k ? scratch_v : out_v;
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

static gpk_mpi_test_hooks test_hooks;

void gpk__mpi_test_hooks_set(const gpk_mpi_test_hooks *hooks)
{
    static const gpk_mpi_test_hooks none;
    test_hooks = hooks ? *hooks : none;
}

/* Bytes per point-to-point message where counts do not fit MPI's int; a
 * test's chunk_bytes sets it and forces that path. */
static size_t chunk_bytes(int *forced)
{
    const size_t v = test_hooks.chunk_bytes;
    *forced = v > 0 && v <= ((size_t)1 << 30);
    return *forced ? v : (size_t)1 << 30;
}

/* Posts the point-to-point messages of one side of the exchange: for each
 * other rank p, count[p] elements of `width` bytes at its place in buf, in
 * chunks of at most `chunk` bytes (sends, or receives), into req[*r...]
 * and their peers into peer[*r...]. */
static gpk_status post_chunks(MPI_Comm comm, gpk_ctx *ctx, char *buf, const uint64_t *count, size_t width,
                              size_t chunk, int sending, MPI_Request *req, int *peer, size_t *r,
                              const char *what)
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
            peer[*r] = p;
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
static gpk_status exchange(MPI_Comm comm, gpk_ctx *ctx, const void *sendbuf, const uint64_t *send,
                           void *recvbuf, const uint64_t *recv, size_t width, copy_fn copy, const char *what)
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
    int *peer = malloc(sizeof(int) * (nreq ? nreq : 1));
    int flags[2] = {!ints || !req || !peer, !fits}, any[2] = {1, 1};
    gpk_status s = gpk__mpi_allreduce(comm, ctx, flags, any, 2, MPI_INT, MPI_MAX, what);
    if (s == GPK_OK && flags[0])
        s = gpk__mpi_fail(ctx, GPK_ENOMEM, "%s: out of memory for %zu requests", what, nreq);
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
                s = gpk__mpi_alltoallv(comm, ctx, sendbuf, sc, sd, elem, recvbuf, rc, rd, elem, what);
            MPI_Type_free(&elem);
        }
    }
    if (s != GPK_OK || !any[1]) {
        free(ints);
        free(req);
        free(peer);
        return s;
    }
    free(ints);
    /* Counts past int: chunks of at most `chunk` bytes, one tag per pair
     * (MPI keeps their order), all posted at once. */
    size_t r = 0;
    const char *sb = sendbuf;
    char *rb = recvbuf;
    s = post_chunks(comm, ctx, rb, recv, width, chunk, 0, req, peer, &r, what);
    if (s == GPK_OK) s = post_chunks(comm, ctx, (char *)sb, send, width, chunk, 1, req, peer, &r, what);
    if (s == GPK_OK) {
        size_t sself = 0, rself = 0;
        for (int p = 0; p < rank; p++) sself += (size_t)send[p] * width, rself += (size_t)recv[p] * width;
        s = copy(ctx, rb + rself, sb + sself, (size_t)send[rank] * width);
    }
    /* wait for what was posted even after a failure: the buffers must
     * outlive it (bounded: after GPK_EIO the job cannot go on anyway) */
    char msg[GPK_ERRLEN];
    const gpk_status ws = gpk__mpi_wait_msg(comm, (int)r, req, peer, what, msg, sizeof msg);
    if (s == GPK_OK && ws != GPK_OK) s = gpk__mpi_fail(ctx, ws, "%s", msg);
    free(req);
    free(peer);
    return s;
}

/* ---- device shards (CUDA context) ------------------------------------------------ */

#ifdef GPK_HAVE_CUDA
static gpk_status copy_device(gpk_ctx *ctx, void *dst, const void *src, size_t bytes)
{
    cudaError_t e = bytes ? cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice) : cudaSuccess;
    return e == cudaSuccess ? GPK_OK : gpk__mpi_cuda_fail(ctx, e, "distributed sort: copy on the device");
}

#ifdef GPK_HAVE_NCCL
/* One NCCL communicator per MPI communicator, kept as an attribute of it:
 * freeing the MPI communicator destroys the NCCL one. */
typedef struct nccl_cache {
    ncclComm_t comm;
    int device;
} nccl_cache;
static int nccl_keyval = MPI_KEYVAL_INVALID;

/* (an attribute exists only where NCCL was opened) */
static int nccl_cache_delete(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    nccl_cache *c = attr;
    (void)ncclCommDestroy(c->comm); /* nowhere to report it: the communicator is going */
    free(c);
    return MPI_SUCCESS;
}

static gpk_status nccl_fail(gpk_ctx *ctx, ncclResult_t r, const char *what)
{
    return gpk__mpi_fail(ctx, r == ncclSystemError ? GPK_ENOMEM : GPK_EDEVICE, "%s: NCCL: %s", what,
                         ncclGetErrorString(r));
}

/* Collective: whether every rank of comm opened NCCL (*all, the same on
 * every rank: ranks may differ in what is installed). Where some rank did
 * not and NCCL was asked for (GPK_MPI_DEVICE_EXCHANGE=nccl, on any rank),
 * an error on every rank with the first such rank's reason. */
static gpk_status nccl_open_everywhere(MPI_Comm comm, gpk_ctx *ctx, int asked, int *all, const char *what)
{
    int P, rank;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &rank);
    const char *why = gpk__nccl_load();
    /* the first rank without NCCL (P: none), and -1 where any rank asked */
    int mine[2] = {why ? rank : P, asked ? -1 : 0}, least[2] = {P, 0};
    *all = 0;
    gpk_status s = gpk__mpi_allreduce(comm, ctx, mine, least, 2, MPI_INT, MPI_MIN, what);
    if (s != GPK_OK) return s;
    const int first = least[0];
    if (first == P) {
        *all = 1;
        return GPK_OK;
    }
    if (least[1] == 0) return GPK_OK; /* NCCL was the fallback: another exchange stands in */
    char reason[256] = "";
    if (rank == first) snprintf(reason, sizeof reason, "%s", why);
    s = gpk__mpi_bcast(comm, ctx, reason, (int)sizeof reason, MPI_CHAR, first, what);
    if (s != GPK_OK) return s;
    reason[sizeof reason - 1] = '\0';
    return gpk__mpi_fail(ctx, GPK_EUNSUPPORTED,
                         "%s: GPK_MPI_DEVICE_EXCHANGE=nccl, but NCCL is not usable on rank %d: %s", what,
                         first, reason);
}

/* Collective: the NCCL communicator of comm on ctx's device, created (or
 * created again for another device) on every rank at once. NCCL is open
 * on every rank (nccl_open_everywhere). */
static gpk_status nccl_comm_get(MPI_Comm comm, gpk_ctx *ctx, ncclComm_t *out)
{
    const char *what = "distributed sort: NCCL communicator";
    gpk_status s = GPK_OK;
    if (nccl_keyval == MPI_KEYVAL_INVALID)
        s = gpk__mpi_check(
            ctx, MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, nccl_cache_delete, &nccl_keyval, NULL), what);
    nccl_cache *c = NULL;
    int found = 0;
    if (s == GPK_OK) s = gpk__mpi_check(ctx, MPI_Comm_get_attr(comm, nccl_keyval, &c, &found), what);
    int usable = s == GPK_OK && found && c->device == ctx->device, all_usable = 0;
    s = gpk__mpi_agree(comm, ctx, s, what);
    if (s != GPK_OK) return s;
    s = gpk__mpi_allreduce(comm, ctx, &usable, &all_usable, 1, MPI_INT, MPI_MIN, what);
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
    s = gpk__mpi_bcast(comm, ctx, &id, (int)sizeof id, MPI_BYTE, 0, what);
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

static gpk_status exchange_nccl(MPI_Comm comm, gpk_ctx *ctx, ncclComm_t nc, const void *sendbuf,
                                const uint64_t *send, void *recvbuf, const uint64_t *recv, size_t width)
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
    return e == cudaSuccess ? GPK_OK : gpk__mpi_cuda_fail(ctx, e, "distributed sort: exchange");
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

/* How device shards move: GPK_MPI_DEVICE_EXCHANGE = ipc (the merge kernel
 * reads the other ranks' sorted shards through CUDA IPC mappings: every
 * rank on one node, each pair of GPUs peers), copy (the copy engines move
 * the pieces over the same mappings, then the merge reads local memory),
 * nccl, mpi (CUDA-aware MPI) or host (through host memory) chooses; by
 * default the first that this build, this MPI and these ranks offer. ipc
 * is the default because the in-process sort measured its peer-load merge
 * 1.3 ms ahead of copy-then-merge (docs/perf/scale.md); ipc and copy fall
 * back to the next where the ranks are not peers. The same on every rank
 * (one environment). NCCL is opened at run time: nccl here is a wish that
 * connect_devices settles once every rank said whether it opened NCCL
 * (nccl asked for and missing on a rank: an error; nccl as the fallback:
 * device_exchange_without_nccl). */
typedef enum { DX_IPC, DX_COPY, DX_NCCL, DX_MPI, DX_HOST } device_exchange;
static device_exchange device_exchange_pick(void)
{
    const char *env = getenv("GPK_MPI_DEVICE_EXCHANGE");
    if (!env || !*env || !strcmp(env, "ipc")) return DX_IPC;
    if (!strcmp(env, "copy")) return DX_COPY;
#ifdef GPK_HAVE_NCCL
    if (!env || !*env || !strcmp(env, "nccl")) return DX_NCCL;
#endif
    if ((!env || !*env || !strcmp(env, "mpi")) && mpi_cuda_aware()) return DX_MPI;
    return DX_HOST;
}

/* The exchange where NCCL is not there (or not on every rank). */
static device_exchange device_exchange_without_nccl(void) { return mpi_cuda_aware() ? DX_MPI : DX_HOST; }

/* The exchange that stands in where ipc does not hold. */
static device_exchange device_exchange_after_ipc(void)
{
#ifdef GPK_HAVE_NCCL
    return DX_NCCL; /* where every rank opens it (connect_devices) */
#else
    return device_exchange_without_nccl();
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
    uint64_t mine[2] = {1469598103934665603ull, (uint64_t)ctx->device};
    for (int i = 0; i < len; i++) mine[0] = (mine[0] ^ (unsigned char)name[i]) * 1099511628211ull;
    uint64_t *all = malloc(sizeof mine * (size_t)P);
    int ok = all != NULL, all_ok = 0;
    uint64_t dummy[2];
    gpk_status gs = gpk__mpi_allgather(comm, NULL, mine, 2, MPI_UINT64_T, all ? (void *)all : (void *)dummy,
                                       all ? 2 : 0, MPI_UINT64_T, "distributed sort");
    ok = ok && gs == GPK_OK;
    for (int p = 0; p < P && ok; p++) {
        if (all[2 * p] != mine[0]) ok = 0;
        else if (p != rank && (int)all[2 * p + 1] != ctx->device) {
            int can = 0;
            if (cudaDeviceCanAccessPeer(&can, ctx->device, (int)all[2 * p + 1]) != cudaSuccess || !can)
                ok = 0;
        }
    }
    (void)cudaGetLastError();
    free(all);
    /* a rank gone silent: no IPC; the next collective says who */
    if (gs != GPK_OK) return 0;
    if (gpk__mpi_allreduce(comm, NULL, &ok, &all_ok, 1, MPI_INT, MPI_MIN, "distributed sort") != GPK_OK)
        return 0;
    return all_ok;
}

static gpk_status exchange_device(MPI_Comm comm, gpk_ctx *ctx, device_exchange how, void *nccl,
                                  const void *sendbuf, size_t n_send, const uint64_t *send, void *recvbuf,
                                  size_t n_recv, const uint64_t *recv, size_t width)
{
    const char *what = "distributed sort: exchange";
#ifdef GPK_HAVE_NCCL
    if (how == DX_NCCL)
        return exchange_nccl(comm, ctx, (ncclComm_t)nccl, sendbuf, send, recvbuf, recv, width);
#endif
    if (how == DX_MPI) return exchange(comm, ctx, sendbuf, send, recvbuf, recv, width, copy_device, what);
    /* through host memory */
    void *hs = malloc(n_send * width + 1), *hr = malloc(n_recv * width + 1);
    gpk_status s = GPK_OK;
    if (!hs || !hr) s = gpk__mpi_fail(ctx, GPK_ENOMEM, "%s: out of host memory for staging", what);
    cudaError_t e = cudaSuccess;
    if (s == GPK_OK && n_send) e = cudaMemcpy(hs, sendbuf, n_send * width, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) s = gpk__mpi_cuda_fail(ctx, e, what);
    s = gpk__mpi_agree(comm, ctx, s, what);
    if (s == GPK_OK) s = exchange(comm, ctx, hs, send, hr, recv, width, copy_host, what);
    if (s == GPK_OK && n_recv) e = cudaMemcpy(recvbuf, hr, n_recv * width, cudaMemcpyHostToDevice);
    if (s == GPK_OK && e != cudaSuccess) s = gpk__mpi_cuda_fail(ctx, e, what);
    free(hs);
    free(hr);
    return s;
}
#endif /* GPK_HAVE_CUDA */

/* ---- what a communicator keeps between calls ---------------------------------------- */

/* A buffer kept between calls, grow-only: a call that needs more frees it
 * and allocates the larger size, one that needs less uses it as it is. So
 * a program that sorts every step pays the allocation, the first touch of
 * its pages and (CUDA IPC) the mapping on its first call only. */
typedef struct kept {
    void *p;
    size_t bytes;
} kept;

#ifdef GPK_HAVE_CUDA
/* What a rank tells the others of its sorted-shard buffers each call. */
typedef struct ipc_record {
    uint64_t gen; /* changes whenever the buffers are other allocations */
    cudaIpcMemHandle_t keys, values;
    int has_values;
} ipc_record;
#endif

/* Kept per communicator, as an attribute of it (freeing the communicator
 * frees it), until gpk_mpi_release. Where it says what every rank holds
 * (win_bytes) it is the same on every rank: every rank computes it from
 * the sizes all ranks state at the start of each call. */
typedef struct sort_keep {
    int P;
    int ready;     /* made on every rank (the collective steps of freeing it may run) */
    MPI_Comm node; /* comm's ranks that share memory with this one, errors returned */
    int one_node;  /* every rank of comm is in node */
    /* host memory */
    kept hk, hv;       /* the sorted shard where it is not in the window */
    kept hrk, hrv;     /* the runs received, or the merge's scratch */
    MPI_Win win;       /* the sorted shards of one node, read in place; MPI_WIN_NULL: none */
    size_t *win_bytes; /* each rank's part of win */
    int win_locked;
#ifdef GPK_HAVE_CUDA
    gpk_ctx *owner; /* the context whose GPU holds the device buffers; NULL: none held */
    int device;
    kept dk, dv;    /* the sorted shard: the other ranks map these (CUDA IPC) */
    kept dtemp;     /* the local sort's temporary */
    kept drk, drv;  /* the runs received, or the merge's scratch */
    kept dwork;     /* split counts and the merge's tile bounds */
    kept dpart;     /* the part plan: the bucket sorts' temps, the straddling buckets sorted aside */
    uint64_t gen;   /* of dk / dv: a new value with every new allocation of either */
    void **retired; /* earlier dk / dv allocations: freed once no rank maps them */
    int n_retired, cap_retired;
    ipc_record mine;         /* dk / dv's handles, for generation mine.gen */
    void **peer_k, **peer_v; /* this rank's mappings of every other rank's dk / dv */
    uint64_t *peer_gen;      /* the generation each mapping is of */
    uint64_t ipc_sig;        /* the ranks' (node, GPU) list that ipc_ok holds for; 0: not found yet */
    int ipc_ok;
#endif
    struct sort_keep *next; /* every keep of the process (gpk_ctx_destroy looks for its own) */
} sort_keep;

static int keep_keyval = MPI_KEYVAL_INVALID, finalize_keyval = MPI_KEYVAL_INVALID;
static int finalizing; /* MPI_Finalize has begun: no more MPI calls from the delete callbacks */
static sort_keep *keeps;

/* MPI_Finalize deletes MPI_COMM_SELF's attributes first, while MPI still
 * works; the communicators' own attributes go later, when it may not. */
static int on_finalize(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    finalizing = 1;
    return MPI_SUCCESS;
}

#ifdef GPK_HAVE_CUDA
/* Closes this rank's mappings of the other ranks' buffers (local). */
static void keep_unmap(sort_keep *k)
{
    if (k->device < 0 || !k->peer_k || !k->peer_v || !k->peer_gen) return; /* no device work yet */
    for (int p = 0; p < k->P; p++) {
        if (k->peer_k[p]) (void)cudaIpcCloseMemHandle(k->peer_k[p]);
        if (k->peer_v[p]) (void)cudaIpcCloseMemHandle(k->peer_v[p]);
        k->peer_k[p] = k->peer_v[p] = NULL;
        k->peer_gen[p] = 0;
    }
    (void)cudaGetLastError();
}

static void kept_cuda_free(kept *b)
{
    if (b->p) (void)cudaFree(b->p);
    b->p = NULL, b->bytes = 0;
}

/* Frees the device buffers (local). exported: dk, dv and the retired ones
 * too, which other ranks may have mapped: only once they no longer do. */
static void keep_free_device(sort_keep *k, int exported)
{
    if (k->device < 0) return; /* host shards only: no CUDA call at all */
    int prev = -1;
    if (k->device >= 0 && cudaGetDevice(&prev) == cudaSuccess && prev != k->device)
        (void)cudaSetDevice(k->device);
    else prev = -1;
    kept_cuda_free(&k->dtemp), kept_cuda_free(&k->drk), kept_cuda_free(&k->drv), kept_cuda_free(&k->dwork);
    kept_cuda_free(&k->dpart);
    if (exported) {
        kept_cuda_free(&k->dk), kept_cuda_free(&k->dv);
        for (int i = 0; i < k->n_retired; i++) (void)cudaFree(k->retired[i]);
        k->n_retired = 0;
    }
    k->gen++; /* whatever comes next is another allocation */
    if (prev >= 0) (void)cudaSetDevice(prev);
    (void)cudaGetLastError();
}

/* dk / dv go to `retired`: freed at the end of the next call that every
 * rank completes (by then no rank maps them), or when the keep goes. */
static void keep_retire_shard(sort_keep *k)
{
    kept *exp[2] = {&k->dk, &k->dv};
    for (int i = 0; i < 2; i++) {
        if (!exp[i]->p) continue;
        void **r = realloc(k->retired, sizeof *r * (size_t)(k->n_retired + 1));
        if (r) k->retired = r, k->cap_retired = k->n_retired + 1, k->retired[k->n_retired++] = exp[i]->p;
        else (void)cudaFree(exp[i]->p); /* out of memory: freed now rather than lost */
        exp[i]->p = NULL, exp[i]->bytes = 0;
    }
}

/* gpk_ctx_destroy of a context that device buffers were kept for: frees
 * them, except the sorted shard, which other ranks may still map (freeing
 * it first would be undefined: cudaIpcOpenMemHandle): that goes with the
 * next call on the communicator, or its release. */
static void keep_ctx_destroyed(gpk_ctx *ctx)
{
    for (sort_keep *k = keeps; k; k = k->next)
        if (k->owner == ctx) {
            keep_unmap(k);
            keep_retire_shard(k);
            keep_free_device(k, 0);
            k->owner = NULL;
        }
}
#endif

static void kept_host_free(kept *b)
{
    free(b->p);
    b->p = NULL, b->bytes = 0;
}

/* The attribute's delete callback: gpk_mpi_release, MPI_Comm_free of the
 * communicator, MPI_Finalize. The first two are collective on comm, so
 * every rank gets here: each closes its mappings of the others' buffers,
 * they wait for each other, then each frees its own. */
static int keep_delete(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    sort_keep *k = attr;
    int collective = k->ready && !finalizing;
#ifdef GPK_HAVE_CUDA
    keep_unmap(k);
#endif
    if (collective && k->one_node) MPI_Barrier(k->node);
#ifdef GPK_HAVE_CUDA
    /* under MPI_Finalize another rank may still map dk / dv: the process
     * ends soon and takes them */
    keep_free_device(k, collective);
#endif
    kept_host_free(&k->hk), kept_host_free(&k->hv), kept_host_free(&k->hrk), kept_host_free(&k->hrv);
    if (collective) {
        if (k->win != MPI_WIN_NULL) {
            if (k->win_locked) MPI_Win_unlock_all(k->win);
            MPI_Win_free(&k->win);
        }
        if (k->node != MPI_COMM_NULL) MPI_Comm_free(&k->node);
    }
    for (sort_keep **at = &keeps; *at; at = &(*at)->next)
        if (*at == k) {
            *at = k->next;
            break;
        }
    free(k->win_bytes);
#ifdef GPK_HAVE_CUDA
    free(k->retired), free(k->peer_k), free(k->peer_v), free(k->peer_gen);
#endif
    free(k);
    return MPI_SUCCESS;
}

/* Collective: comm's keep, made on every rank on the first call (and the
 * first after gpk_mpi_release). */
static gpk_status keep_get(sort_call *c, sort_keep **out)
{
    const char *what = c->what;
    gpk_status s = GPK_OK;
    double t = MPI_Wtime();
    *out = NULL;
    if (keep_keyval == MPI_KEYVAL_INVALID) {
        s = gpk__mpi_check(
            c->ctx, MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, keep_delete, &keep_keyval, NULL), what);
        if (s == GPK_OK)
            s = gpk__mpi_check(
                c->ctx, MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_finalize, &finalize_keyval, NULL),
                what);
        if (s == GPK_OK)
            s = gpk__mpi_check(c->ctx, MPI_Comm_set_attr(MPI_COMM_SELF, finalize_keyval, NULL), what);
    }
    sort_keep *k = NULL;
    int found = 0, any_found = 0;
    if (s == GPK_OK) s = gpk__mpi_check(c->ctx, MPI_Comm_get_attr(c->comm, keep_keyval, &k, &found), what);
    s = gpk__mpi_agree(c->comm, c->ctx, s, what);
    if (s != GPK_OK) return s;
    s = gpk__mpi_allreduce(c->comm, c->ctx, &found, &any_found, 1, MPI_INT, MPI_MIN, what);
    if (s != GPK_OK) return s;
    if (any_found) {
        *out = k;
        return GPK_OK;
    }
    if (found) /* only here: made on this rank, not on all: start again */
        MPI_Comm_delete_attr(c->comm, keep_keyval);
    k = calloc(1, sizeof *k);
    if (k) {
        k->P = c->P, k->node = MPI_COMM_NULL, k->win = MPI_WIN_NULL;
        k->win_bytes = calloc((size_t)c->P, sizeof *k->win_bytes);
#ifdef GPK_HAVE_CUDA
        k->device = -1;
        k->peer_k = calloc((size_t)c->P, sizeof(void *)), k->peer_v = calloc((size_t)c->P, sizeof(void *));
        k->peer_gen = calloc((size_t)c->P, sizeof(uint64_t));
        if (!k->peer_k || !k->peer_v || !k->peer_gen) k->win_bytes = (free(k->win_bytes), NULL);
#endif
        if (!k->win_bytes) keep_delete(c->comm, keep_keyval, k, NULL), k = NULL;
    }
    if (!k) s = gpk__mpi_fail(c->ctx, GPK_ENOMEM, "%s: out of memory", what);
    s = gpk__mpi_agree(c->comm, c->ctx, s, what);
    if (s != GPK_OK) {
        if (k) keep_delete(c->comm, keep_keyval, k, NULL);
        return s;
    }
    int node_size = 0, one = 0;
    s = gpk__mpi_barrier(c->comm, c->ctx, what); /* the split below waits without bound */
    if (s != GPK_OK) {
        keep_delete(c->comm, keep_keyval, k, NULL);
        return s;
    }
    int rc = MPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &k->node);
    if (rc == MPI_SUCCESS) {
        MPI_Comm_set_errhandler(k->node, MPI_ERRORS_RETURN);
        MPI_Comm_size(k->node, &node_size);
    } else k->node = MPI_COMM_NULL;
    one = node_size == c->P;
    s = gpk__mpi_allreduce(c->comm, c->ctx, &one, &k->one_node, 1, MPI_INT, MPI_MIN, what);
    if (s == GPK_OK) s = gpk__mpi_check(c->ctx, MPI_Comm_set_attr(c->comm, keep_keyval, k), what);
    int set = s == GPK_OK;
    s = gpk__mpi_agree(c->comm, c->ctx, s, what);
    if (s != GPK_OK) {
        /* not ready: the delete frees this rank's part only */
        if (set) MPI_Comm_delete_attr(c->comm, keep_keyval);
        else keep_delete(c->comm, keep_keyval, k, NULL);
        return s;
    }
    k->ready = 1;
    k->next = keeps, keeps = k;
    c->setups++, c->setup_ms += (MPI_Wtime() - t) * 1e3;
    *out = k;
    return GPK_OK;
}

/* Host buffer of at least `bytes` (contents not kept), or NULL. */
static void *host_grow(sort_call *c, kept *b, size_t bytes)
{
    if (bytes < 64) bytes = 64;
    if (bytes <= b->bytes) return b->p;
    double t = MPI_Wtime();
    kept_host_free(b);
    b->p = malloc(bytes);
    b->bytes = b->p ? bytes : 0;
    c->setups++, c->setup_ms += (MPI_Wtime() - t) * 1e3;
    return b->p;
}

#ifdef GPK_HAVE_CUDA
/* Device buffer of at least `bytes` of the keep's device (contents not
 * kept). exported (dk, dv): the old allocation waits in `retired` until no
 * rank maps it, and the generation changes. */
static gpk_status dev_grow(sort_call *c, kept *b, size_t bytes, int exported)
{
    sort_keep *k = c->keep;
    if (bytes < 256) bytes = 256;
    if (bytes <= b->bytes) return GPK_OK;
    double t = MPI_Wtime();
    if (b->p && exported) {
        if (k->n_retired == k->cap_retired) {
            int cap = k->cap_retired ? 2 * k->cap_retired : 4;
            void **r = realloc(k->retired, sizeof *r * (size_t)cap);
            if (!r) return gpk__mpi_fail(c->ctx, GPK_ENOMEM, "%s: out of memory", c->what);
            k->retired = r, k->cap_retired = cap;
        }
        k->retired[k->n_retired++] = b->p;
        b->p = NULL, b->bytes = 0;
    }
    kept_cuda_free(b);
    cudaError_t e = cudaMalloc(&b->p, bytes);
    if (e != cudaSuccess) {
        b->p = NULL;
        (void)cudaGetLastError();
        return gpk__mpi_fail(c->ctx, e == cudaErrorMemoryAllocation ? GPK_ENOMEM : GPK_EDEVICE,
                             "%s: %zu bytes of device memory: %s", c->what, bytes, cudaGetErrorString(e));
    }
    b->bytes = bytes;
    if (exported) k->gen++;
    c->setups++, c->setup_ms += (MPI_Wtime() - t) * 1e3;
    return GPK_OK;
}

/* The device buffers are for ctx's GPU: a call with another context or
 * device lets the old ones go (dk / dv once no rank maps them). */
static void keep_adopt(sort_call *c)
{
    sort_keep *k = c->keep;
    if (k->owner == c->ctx && k->device == c->ctx->device) return;
    keep_unmap(k);
    keep_retire_shard(k);
    keep_free_device(k, 0);
    k->owner = c->ctx, k->device = c->ctx->device;
}

/* Collective, every call with device shards: every rank states its dk /
 * dv generation and handles; each rank closes its mappings of buffers that
 * are gone. After the next agreement no rank maps a retired buffer. */
static gpk_status ipc_sync(sort_call *c, ipc_record *all)
{
    sort_keep *k = c->keep;
    gpk_status s = GPK_OK;
    if (k->mine.gen != k->gen) {
        memset(&k->mine, 0, sizeof k->mine);
        cudaError_t e = k->dk.p ? cudaIpcGetMemHandle(&k->mine.keys, k->dk.p) : cudaSuccess;
        if (e == cudaSuccess && k->dv.p) e = cudaIpcGetMemHandle(&k->mine.values, k->dv.p);
        if (e == cudaSuccess && k->dk.p) k->mine.gen = k->gen, k->mine.has_values = k->dv.p != NULL;
        else {
            (void)cudaGetLastError();
            memset(&k->mine, 0, sizeof k->mine);
        }
        /* gen 0 (no handles) tells the others not to map this rank's buffers */
    }
    s = gpk__mpi_allgather(c->comm, c->ctx, &k->mine, (int)sizeof k->mine, MPI_BYTE, all, (int)sizeof k->mine,
                           MPI_BYTE, c->what);
    if (s != GPK_OK) return s;
    for (int p = 0; p < c->P; p++) {
        if (p == c->rank || k->peer_gen[p] == all[p].gen) continue;
        if (k->peer_k[p]) (void)cudaIpcCloseMemHandle(k->peer_k[p]);
        if (k->peer_v[p]) (void)cudaIpcCloseMemHandle(k->peer_v[p]);
        k->peer_k[p] = k->peer_v[p] = NULL;
        k->peer_gen[p] = all[p].gen;
    }
    (void)cudaGetLastError();
    return GPK_OK;
}

/* Collective: maps (once per generation) every other rank's dk / dv that
 * holds keys for this rank; base_k[p] / base_v[p] (this rank's own: dk,
 * dv). Non-zero on every rank when every rank has all it needs mapped. */
static int ipc_open(sort_call *c, const ipc_record *all, const uint64_t *recv, void **base_k, void **base_v)
{
    sort_keep *k = c->keep;
    double t = MPI_Wtime();
    int ok = 1, all_ok = 0, opened = 0;
    for (int p = 0; p < c->P; p++) {
        base_k[p] = base_v[p] = NULL;
        if (p == c->rank) {
            base_k[p] = k->dk.p, base_v[p] = k->dv.p;
            continue;
        }
        if (!recv[p] || !ok) continue;
        if (!all[p].gen || (c->vw && !all[p].has_values)) {
            ok = 0;
            continue;
        }
        cudaError_t e = cudaSuccess;
        if (!k->peer_k[p]) {
            e = cudaIpcOpenMemHandle(&k->peer_k[p], all[p].keys, cudaIpcMemLazyEnablePeerAccess);
            if (e != cudaSuccess) k->peer_k[p] = NULL;
            opened++;
        }
        if (e == cudaSuccess && c->vw && !k->peer_v[p]) {
            e = cudaIpcOpenMemHandle(&k->peer_v[p], all[p].values, cudaIpcMemLazyEnablePeerAccess);
            if (e != cudaSuccess) k->peer_v[p] = NULL;
            opened++;
        }
        if (e != cudaSuccess) ok = 0;
        base_k[p] = k->peer_k[p], base_v[p] = k->peer_v[p];
    }
    (void)cudaGetLastError();
    if (opened) c->setups += opened, c->setup_ms += (MPI_Wtime() - t) * 1e3;
    /* a mapping that failed is not tried again this call: the next exchange stands in */
    if (gpk__mpi_allreduce(c->comm, NULL, &ok, &all_ok, 1, MPI_INT, MPI_MIN, c->what) != GPK_OK) return 0;
    return all_ok;
}
#endif /* GPK_HAVE_CUDA */

/* ---- host shards of ranks on one node: a shared-memory window ----------------------- */

/* Where every rank of comm is on one node (and no test forces MPI's
 * exchange), the sorted shards live in one MPI shared-memory window and each
 * rank's merge reads its pieces from the others' shards in place, on all
 * its threads: no copy through MPI. The window is kept between calls and
 * made again (collectively) only when a rank's shard outgrows its part. */
static size_t shm_values_at(size_t n, size_t kw) { return (n * kw + 63) / 64 * 64; }

/* Collective: non-zero on every rank where the sorted shards go to the
 * window, with this rank's part for its shard (keys, then values); zero on
 * every rank where the ranks are not on one node or the window cannot be
 * made. n_of[p * stride]: rank p's keys. */
static int shm_prepare(sort_call *c, const int64_t *n_of, size_t stride, void **keys, void **values)
{
    sort_keep *k = c->keep;
    *keys = *values = NULL;
    if (test_hooks.host_exchange_mpi || !k->one_node) return 0; /* the same on every rank */
    int grow = k->win == MPI_WIN_NULL;
    for (int p = 0; p < c->P; p++) {
        size_t n = (size_t)n_of[(size_t)p * stride];
        grow |= shm_values_at(n, c->kw) + n * c->vw > k->win_bytes[p];
    }
    if (grow) {
        double t = MPI_Wtime();
        /* the window calls below wait without bound: every rank is here
         * (a rank gone silent: no window; the next collective says who) */
        if (gpk__mpi_barrier(c->comm, NULL, c->what) != GPK_OK) return 0;
        if (k->win != MPI_WIN_NULL) {
            if (k->win_locked) MPI_Win_unlock_all(k->win);
            MPI_Win_free(&k->win);
            k->win = MPI_WIN_NULL, k->win_locked = 0;
        }
        size_t *bytes = malloc(sizeof *bytes * (size_t)c->P);
        for (int p = 0; bytes && p < c->P; p++) {
            size_t n = (size_t)n_of[(size_t)p * stride];
            size_t need = shm_values_at(n, c->kw) + n * c->vw;
            bytes[p] = need > k->win_bytes[p] ? need : k->win_bytes[p];
        }
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "alloc_shared_noncontig", "true"); /* each rank's part near its own threads */
        void *base = NULL;
        MPI_Win win = MPI_WIN_NULL;
        int rc =
            MPI_Win_allocate_shared((MPI_Aint)(bytes ? bytes[c->rank] : 64), 1, info, k->node, &base, &win);
        MPI_Info_free(&info);
        int failed = rc != MPI_SUCCESS || !bytes, any = 1;
        if (gpk__mpi_allreduce(c->comm, NULL, &failed, &any, 1, MPI_INT, MPI_MAX, c->what) != GPK_OK) any = 1;
        if (any) {
            /* a window made on every rank goes; one that failed somewhere
             * cannot be freed collectively and is left to MPI_Finalize */
            if (rc == MPI_SUCCESS) MPI_Win_free(&win);
            memset(k->win_bytes, 0, sizeof *k->win_bytes * (size_t)c->P);
            free(bytes);
            return 0;
        }
        memcpy(k->win_bytes, bytes, sizeof *bytes * (size_t)c->P);
        free(bytes);
        k->win = win;
        MPI_Win_lock_all(MPI_MODE_NOCHECK, k->win);
        k->win_locked = 1;
        c->setups++, c->setup_ms += (MPI_Wtime() - t) * 1e3;
    }
    if (k->win == MPI_WIN_NULL) return 0;
    MPI_Aint size;
    int unit;
    char *base = NULL;
    if (MPI_Win_shared_query(k->win, c->rank, &size, &unit, &base) != MPI_SUCCESS) base = NULL;
    int ok = base != NULL || k->win_bytes[c->rank] == 0, all_ok = 0;
    if (gpk__mpi_allreduce(c->comm, NULL, &ok, &all_ok, 1, MPI_INT, MPI_MIN, c->what) != GPK_OK) all_ok = 0;
    if (!all_ok) return 0;
    size_t n = (size_t)n_of[(size_t)c->rank * stride];
    *keys = base;
    *values = c->vw && base ? base + shm_values_at(n, c->kw) : NULL;
    return 1;
}

/* ---- the sort --------------------------------------------------------------------- */

#define GPK_MPI_SORT_TIMES_ZERO \
    {                           \
        0, 0, 0, 0, 0, "", 0, 0 \
    }
static _Thread_local gpk_mpi_sort_times last_times = GPK_MPI_SORT_TIMES_ZERO;

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
    if (MPI_Comm_size(comm, &P) != MPI_SUCCESS || MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        return GPK_EDEVICE;
    uint64_t mine = n_local, N = 0;
    const gpk_status s =
        gpk__mpi_allreduce(comm, NULL, &mine, &N, 1, MPI_UINT64_T, MPI_SUM, "gpk_mpi_sort_count");
    if (s != GPK_OK) return s;
    *n_out = (size_t)(balanced_start(N, P, rank + 1) - balanced_start(N, P, rank));
    return GPK_OK;
}

/* What every rank states about its call, gathered before any work. */
enum { R_TYPE, R_VWIDTH, R_KEEP, R_DEVICE, R_N, R_GPU, R_NODE, R_FIELDS };

/* A hash of this process's node name (which ranks share a node). */
static uint64_t node_hash(void)
{
    char name[MPI_MAX_PROCESSOR_NAME + 1] = "";
    int len = 0;
    uint64_t h = 1469598103934665603ull;
    if (MPI_Get_processor_name(name, &len) != MPI_SUCCESS) len = 0;
    for (int i = 0; i < len; i++) h = (h ^ (unsigned char)name[i]) * 1099511628211ull;
    return h;
}

/* Local counts of keys < q (or <= q) in the sorted shard, for nq queries. */
static gpk_status shard_count(const sort_call *c, const void *keys, size_t n, const uint64_t *q, size_t nq,
                              int or_equal, uint64_t *counts)
{
#ifdef GPK_HAVE_CUDA
    if (c->device)
        return gpk__mpi_cuda_count(c->ctx, (int)c->type, keys, n, q, nq, or_equal, counts, c->keep->dwork.p);
#endif
#pragma omp parallel for num_threads(c->threads) schedule(static) if (nq > 64)
    for (size_t i = 0; i < nq; i++) counts[i] = host_count(c->type, keys, n, q[i], or_equal);
    return GPK_OK;
}

/* Split positions: split[r] = how many keys of this rank's sorted shard
 * belong to ranks < r (split[0] = 0, split[P] = n), from the global starts. */
static gpk_status find_splits(const sort_call *c, const void *sorted, size_t n, uint64_t N,
                              const uint64_t *start, uint64_t *split)
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
        gpk_status m =
            gpk__mpi_allreduce(c->comm, c->ctx, local, global, (int)nq + 1, MPI_UINT64_T, MPI_SUM, c->what);
        if (s != GPK_OK) goto done;
        if (m != GPK_OK) {
            s = m;
            goto done;
        }
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
        s = gpk__mpi_exscan(c->comm, c->ctx, eq, eq_before, (int)nb, MPI_UINT64_T, MPI_SUM, c->what);
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

/* Sorts this rank's shard into (sk, sv), stably. */
static gpk_status local_sort(sort_call *c, const void *keys, const void *values, size_t n, void *sk, void *sv)
{
    if (n == 0) return GPK_OK;
    gpk_sort_opts o = GPK_SORT_OPTS_INIT;
    o.algorithm = GPK_SORT_RADIX; /* stable */
#ifdef GPK_HAVE_CUDA
    if (c->device) {
        size_t tb = 0;
        gpk_status s = c->vw
            ? gpk_cuda_sort_pairs(c->ctx, NULL, &tb, c->type, keys, sk, c->vw, values, sv, n, &o, 0, 0)
            : gpk_cuda_sort_keys(c->ctx, NULL, &tb, c->type, keys, sk, n, &o, 0, 0);
        if (s == GPK_OK) s = dev_grow(c, &c->keep->dtemp, tb, 0);
        if (s != GPK_OK) return s;
        tb = c->keep->dtemp.bytes;
        void *temp = c->keep->dtemp.p;
        s = c->vw ? gpk_cuda_sort_pairs(c->ctx, temp, &tb, c->type, keys, sk, c->vw, values, sv, n, &o, 0, 0)
                  : gpk_cuda_sort_keys(c->ctx, temp, &tb, c->type, keys, sk, n, &o, 0, 0);
        cudaError_t e = cudaStreamSynchronize(0);
        if (s == GPK_OK && e != cudaSuccess)
            s = gpk__mpi_cuda_fail(c->ctx, e, "distributed sort: local sort");
        return s;
    }
#endif
    /* the CPU sort keeps its scratch in the context (grow-only), so only
     * the first call of a size first-touches it */
    if (!c->vw) return gpk_sort_keys_to(c->ctx, c->type, keys, sk, n, &o);
    copy_threads(sk, keys, n * c->kw, c->threads);
    copy_threads(sv, values, n * c->vw, c->threads);
    return gpk_sort_pairs(c->ctx, c->type, sk, c->vtype, sv, n, &o);
}

static gpk_status merge_runs(const sort_call *c, void *rk, void *rv, size_t *off, int runs, void *ok,
                             void *ov)
{
#ifdef GPK_HAVE_CUDA
    if (c->device)
        return gpk__mpi_cuda_merge(c->ctx, (int)c->type, rk, rv, c->vw, off, runs, ok, ov, c->keep->dwork.p);
#endif
    host_merge_runs(c->type, c->kw, c->vw, rk, rv, off, runs, ok, ov, c->threads);
    return GPK_OK;
}

#ifdef GPK_HAVE_CUDA
/* The pieces of the other ranks' sorted shards (mapped by CUDA IPC) into
 * rk at their offsets, by the copy engines (cudaMemcpyAsync over the peer
 * mapping): the link at the copy engines' rate, then a merge from local
 * memory. own: this rank's piece too (where the merge takes the runs from rk). */
static gpk_status ipc_copy(const sort_call *c, void *const *base_k, void *const *base_v,
                           const uint64_t *at_sender, const uint64_t *recv, const size_t *off, void *rk,
                           void *rv, int own)
{
    cudaError_t e = cudaSuccess;
    for (int p = 0; p < c->P && e == cudaSuccess; p++) {
        if (!recv[p] || (p == c->rank && !own)) continue;
        e = cudaMemcpyAsync((char *)rk + off[p] * c->kw, (const char *)base_k[p] + at_sender[p] * c->kw,
                            recv[p] * c->kw, cudaMemcpyDefault, 0);
        if (e == cudaSuccess && c->vw)
            e = cudaMemcpyAsync((char *)rv + off[p] * c->vw, (const char *)base_v[p] + at_sender[p] * c->vw,
                                recv[p] * c->vw, cudaMemcpyDefault, 0);
    }
    cudaError_t w = cudaStreamSynchronize(0); /* after a failure too: nothing may still run */
    if (e == cudaSuccess) e = w;
    return e == cudaSuccess ? GPK_OK : gpk__mpi_cuda_fail(c->ctx, e, "distributed sort: copy from a peer");
}
#endif

#ifdef GPK_HAVE_CUDA
/* Collective where the ranks' (node, GPU) list changed since the last
 * call (the same on every rank): whether CUDA IPC holds between every pair. */
static void ipc_check(sort_call *c, const int64_t *all)
{
    uint64_t sig = 1469598103934665603ull;
    for (int p = 0; p < c->P; p++)
        for (int f = R_GPU; f <= R_NODE; f++)
            sig = (sig ^ (uint64_t)all[(size_t)p * R_FIELDS + f]) * 1099511628211ull;
    if (c->keep->ipc_sig != sig) {
        c->keep->ipc_ok = c->keep->one_node && ipc_usable(c->comm, c->ctx);
        c->keep->ipc_sig = sig;
    }
}

/* ---- the part plan: partition first, device shards of ranks of one node ------------------
 *
 * Every rank partitions its shard by the top 8 bits of the mapped key into
 * its exported buffer dk (one Onesweep pass); the ranks gather the 256
 * digit counts of every rank, which fix every bucket's global place; each
 * rank copies the pieces of the buckets that overlap its output range from
 * every rank's dk (CUDA IPC, the copy engines, in rank order: stable), and
 * sorts each bucket by the bits below as soon as its pieces are in, on 8
 * streams, straight into its output. A bucket that straddles two ranks'
 * ranges is copied and sorted by both, each keeping its part: no rank waits
 * on another after the counts. So the exchange runs under the bucket sorts,
 * where the sort-first plan puts it after the local sort (docs/perf/scale.md,
 * "MPI: the part plan"). Buckets larger than gpk__multi_part_cap of a rank's share
 * (skewed or narrow keys) send every rank to the sort-first plan before any
 * key moves. */
#define PART_COPY_STREAMS 8

/* GPK_MPI_DEVICE_PLAN=part|merge chooses; by default part for 4-byte keys
 * (8-byte bucket sorts side by side collapse: docs/perf/scale.md) from
 * PART_MIN_PER_RANK keys a rank on average: below it the issue of a rank's
 * bucket sorts costs more host time than the exchange it hides
 * (docs/perf/scale.md). The same on every rank (one environment, the same N). */
#define PART_MIN_PER_RANK ((uint64_t)1 << 29)
static int part_wanted(const sort_call *c, uint64_t N)
{
    const char *env = getenv("GPK_MPI_DEVICE_PLAN");
    if (N == 0 || c->P < 2) return 0;
    if (env && !strcmp(env, "part")) return 1;
    if (env && !strcmp(env, "merge")) return 0;
    return c->kw == 4 && N / (uint64_t)c->P >= PART_MIN_PER_RANK;
}

static gpk_status part_bits(const sort_call *c, void *temp, size_t *tb, const void *ki, void *ko,
                            const void *vi, void *vo, size_t n, unsigned begin, unsigned end, cudaStream_t st)
{
    return c->vw
        ? gpk_cuda_sort_pairs_bits(c->ctx, temp, tb, c->type, ki, ko, c->vw, vi, vo, n, begin, end, st)
        : gpk_cuda_sort_keys_bits(c->ctx, temp, tb, c->type, ki, ko, n, begin, end, st);
}

/* One call of the part plan, as its steps see it. Counts are indexed
 * [rank * D + bucket]; bucket x holds the keys whose top digit is x. */
typedef struct part_state {
    unsigned bits, shift, D;    /* key bits, the bucket digit's shift, buckets */
    uint64_t lo_mine, hi_mine;  /* this rank's output range in the global order */
    uint64_t *cnt, *first;      /* per rank and bucket: its keys, where they start in that rank's dk */
    uint64_t *G;                /* G[x]: where bucket x starts globally; G[D] = N */
    uint64_t *q, *below, *mine; /* digit bounds, this shard's keys below each, its bucket sizes */
    uint64_t *need;             /* keys this rank reads from each rank */
    ipc_record *records;
    void **base_k, **base_v; /* every rank's dk / dv as this rank maps them */
    unsigned xa, xb;         /* this rank's buckets: [xa, xb) */
    size_t tb;               /* one bucket sort's temp, aligned */
    size_t aside[2];         /* the straddling buckets' sizes: below lo_mine, above hi_mine */
    size_t aside_k, aside_v; /* their sorted copies' room, aligned */
    cudaStream_t ss[GPK_MULTI_PART_STREAMS], cs[PART_COPY_STREAMS];
    cudaEvent_t ev[PART_COPY_STREAMS];
    int ncs, made; /* copy streams in use; sort streams made (with their copy streams and events) */
} part_state;

/* Step 1: this shard partitioned by its top digit into the exported dk / dv;
 * then mine[x] = its keys in bucket x. */
static gpk_status part_partition(sort_call *c, part_state *ps, const void *keys_in, const void *values_in,
                                 size_t n_in)
{
    sort_keep *k = c->keep;
    const unsigned D = ps->D, shift = ps->shift, bits = ps->bits;
    uint64_t *q = ps->q, *below = ps->below;
    size_t tb = 0;
    gpk_status s = dev_grow(c, &k->dk, n_in * c->kw, 1);
    if (s == GPK_OK && c->vw) s = dev_grow(c, &k->dv, n_in * c->vw, 1);
    if (s == GPK_OK) s = part_bits(c, NULL, &tb, keys_in, k->dk.p, values_in, k->dv.p, n_in, shift, bits, 0);
    if (s == GPK_OK) s = dev_grow(c, &k->dtemp, tb, 0);
    if (s == GPK_OK) s = dev_grow(c, &k->dwork, gpk__mpi_cuda_work_bytes(0, D), 0);
    if (s == GPK_OK && n_in) {
        tb = k->dtemp.bytes;
        s = part_bits(c, k->dtemp.p, &tb, keys_in, k->dk.p, values_in, k->dv.p, n_in, shift, bits, 0);
        /* the keys below digit x, x = 1 .. D - 1 (the count waits for the partition: one stream) */
        for (unsigned x = 1; x < D; x++) q[x - 1] = (uint64_t)x << shift;
        if (s == GPK_OK)
            s = gpk__mpi_cuda_count(c->ctx, (int)c->type, k->dk.p, n_in, q, D - 1, 0, below + 1, k->dwork.p);
    }
    if (s == GPK_OK) {
        below[0] = 0, below[D] = n_in;
        for (unsigned x = 0; x < D; x++) ps->mine[x] = below[x + 1] - below[x];
    }
    return s;
}

/* Step 2, collective: every rank's counts give each bucket's global place
 * (G) and each piece's place in its rank's dk (first). *declined when a
 * bucket that some rank sorts is above its cap (the same on every rank:
 * all see the same counts); else this rank's buckets [xa, xb) and what it
 * reads from each rank (need). */
static gpk_status part_place(sort_call *c, part_state *ps, const uint64_t *start, int *declined)
{
    const int P = c->P;
    const unsigned D = ps->D;
    uint64_t *cnt = ps->cnt, *first = ps->first, *G = ps->G;
    gpk_status s = gpk__mpi_allgather(c->comm, c->ctx, ps->mine, (int)D, MPI_UINT64_T, cnt, (int)D,
                                      MPI_UINT64_T, c->what);
    if (s != GPK_OK) return s;
    for (unsigned x = 0; x < D; x++) {
        uint64_t t = 0;
        for (int p = 0; p < P; p++) t += cnt[(size_t)p * D + x];
        G[x + 1] = G[x] + t;
    }
    for (int p = 0; p < P; p++)
        for (unsigned x = 1; x < D; x++)
            first[(size_t)p * D + x] = first[(size_t)p * D + x - 1] + cnt[(size_t)p * D + x - 1];
    for (int r = 0; r < P && !*declined; r++) {
        if (start[r + 1] == start[r]) continue; /* no keys for rank r (keep_sizes): no buckets */
        const size_t cap = gpk__multi_part_cap((size_t)(start[r + 1] - start[r]));
        for (unsigned x = 0; x < D; x++)
            if (G[x + 1] > G[x] && G[x] < start[r + 1] && G[x + 1] > start[r] && G[x + 1] - G[x] > cap)
                *declined = 1;
    }
    if (*declined) return GPK_OK;
    /* this rank's buckets: those that overlap [lo_mine, hi_mine) */
    const uint64_t lo_mine = ps->lo_mine, hi_mine = ps->hi_mine;
    ps->xa = D, ps->xb = 0;
    for (unsigned x = 0; x < D && hi_mine > lo_mine; x++)
        if (G[x + 1] > G[x] && G[x] < hi_mine && G[x + 1] > lo_mine) {
            if (ps->xa == D) ps->xa = x;
            ps->xb = x + 1;
            for (int p = 0; p < P; p++) ps->need[p] += cnt[(size_t)p * D + x];
        }
    return GPK_OK;
}

/* Step 4: W (drk / drv: the buckets' pieces, bucket after bucket), the
 * bucket sorts' temps, the straddling buckets' sorted copies (at most two),
 * the streams and events. Sized by the bounds (every bucket at most cap,
 * the straddling ones add at most 2 cap to the share), not by this call's
 * keys, so that a later call of the same sizes finds them large enough. */
static gpk_status part_prepare_buckets(sort_call *c, part_state *ps, void *keys_out, void *values_out)
{
    sort_keep *k = c->keep;
    const size_t kw = c->kw, vw = c->vw;
    const uint64_t *G = ps->G, lo_mine = ps->lo_mine, hi_mine = ps->hi_mine;
    const size_t m = (size_t)(hi_mine - lo_mine), cap = gpk__multi_part_cap(m);
    for (unsigned x = ps->xa; x < ps->xb; x++) {
        if (G[x] < lo_mine) ps->aside[0] = (size_t)(G[x + 1] - G[x]);
        else if (G[x + 1] > hi_mine) ps->aside[1] = (size_t)(G[x + 1] - G[x]);
    }
    size_t tb = 0;
    gpk_status s = dev_grow(c, &k->drk, (m + 2 * cap) * kw, 0);
    if (s == GPK_OK && vw) s = dev_grow(c, &k->drv, (m + 2 * cap) * vw, 0);
    if (s == GPK_OK)
        s = part_bits(c, NULL, &tb, k->drk.p, keys_out, k->drv.p, values_out, cap, 0, ps->shift, 0);
    ps->tb = tb = gpk__align_up(tb, 256);
    ps->aside_k = gpk__align_up(2 * cap * kw, 256), ps->aside_v = gpk__align_up(2 * cap * vw, 256);
    if (s == GPK_OK) s = dev_grow(c, &k->dpart, GPK_MULTI_PART_STREAMS * tb + ps->aside_k + ps->aside_v, 0);
    for (int i = 0; i < GPK_MULTI_PART_STREAMS && s == GPK_OK; i++) {
        cudaError_t e = cudaStreamCreateWithFlags(&ps->ss[i], cudaStreamNonBlocking);
        if (e == cudaSuccess && i < ps->ncs) e = cudaStreamCreateWithFlags(&ps->cs[i], cudaStreamNonBlocking);
        if (e == cudaSuccess && i < ps->ncs) e = cudaEventCreateWithFlags(&ps->ev[i], cudaEventDisableTiming);
        if (e != cudaSuccess) s = gpk__mpi_cuda_fail(c->ctx, e, "distributed sort: the part plan's streams");
        ps->made = i + 1;
    }
    return s;
}

/* Step 5: per bucket, its pieces copied in rank order (rank p's on copy
 * stream p % ncs) into W, then its sort on the next sort stream once they
 * are in: straight into the output when the bucket lies wholly in this
 * rank's range, else into its aside slot and this rank's part copied out.
 * Everything issued has ended on return (after a failure too). */
static gpk_status part_copy_and_sort(sort_call *c, part_state *ps, void *keys_out, void *values_out)
{
    sort_keep *k = c->keep;
    const int P = c->P, ncs = ps->ncs;
    const unsigned D = ps->D;
    const size_t kw = c->kw, vw = c->vw, tb = ps->tb;
    const uint64_t *G = ps->G, lo_mine = ps->lo_mine, hi_mine = ps->hi_mine;
    char *W = k->drk.p, *Wv = k->drv.p, *part = k->dpart.p;
    char *aside_keys = part + GPK_MULTI_PART_STREAMS * tb, *aside_vals = aside_keys + ps->aside_k;
    size_t at = 0;
    int next = 0;
    gpk_status s = GPK_OK;
    cudaError_t e = cudaSuccess;
    for (unsigned x = ps->xa; x < ps->xb && e == cudaSuccess && s == GPK_OK; x++) {
        const size_t t = (size_t)(G[x + 1] - G[x]);
        if (!t) continue;
        size_t got = 0;
        unsigned used = 0;
        for (int p = 0; p < P && e == cudaSuccess; p++) {
            const size_t n_p = (size_t)ps->cnt[(size_t)p * D + x],
                         from = (size_t)ps->first[(size_t)p * D + x];
            if (!n_p) continue;
            const int j = p % ncs;
            e = cudaMemcpyAsync(W + (at + got) * kw, (const char *)ps->base_k[p] + from * kw, n_p * kw,
                                cudaMemcpyDefault, ps->cs[j]);
            if (e == cudaSuccess && vw)
                e = cudaMemcpyAsync(Wv + (at + got) * vw, (const char *)ps->base_v[p] + from * vw, n_p * vw,
                                    cudaMemcpyDefault, ps->cs[j]);
            used |= 1u << j;
            got += n_p;
        }
        const int qi = next++ % GPK_MULTI_PART_STREAMS;
        for (int j = 0; j < ncs && e == cudaSuccess; j++)
            if (used & (1u << j)) {
                /* the wait takes the event as recorded now: it may be recorded again for the next bucket */
                e = cudaEventRecord(ps->ev[j], ps->cs[j]);
                if (e == cudaSuccess) e = cudaStreamWaitEvent(ps->ss[qi], ps->ev[j], 0);
            }
        if (e != cudaSuccess) break;
        const uint64_t lo = (G[x] > lo_mine ? G[x] : lo_mine) - G[x],
                       hi = (G[x + 1] < hi_mine ? G[x + 1] : hi_mine) - G[x];
        const int whole = lo == 0 && hi == t;
        const size_t slot = G[x] < lo_mine ? 0 : ps->aside[0];
        char *to_k = whole ? (char *)keys_out + (size_t)(G[x] - lo_mine) * kw : aside_keys + slot * kw;
        char *to_v = !vw ? NULL
            : whole      ? (char *)values_out + (size_t)(G[x] - lo_mine) * vw
                         : aside_vals + slot * vw;
        size_t tq = tb;
        s = part_bits(c, part + (size_t)qi * tb, &tq, W + at * kw, to_k, vw ? Wv + at * vw : NULL, to_v, t, 0,
                      ps->shift, ps->ss[qi]);
        if (s == GPK_OK && !whole) {
            const size_t out_at = (size_t)(G[x] + lo - lo_mine), len = (size_t)(hi - lo);
            e = cudaMemcpyAsync((char *)keys_out + out_at * kw, to_k + lo * kw, len * kw,
                                cudaMemcpyDeviceToDevice, ps->ss[qi]);
            if (e == cudaSuccess && vw)
                e = cudaMemcpyAsync((char *)values_out + out_at * vw, to_v + lo * vw, len * vw,
                                    cudaMemcpyDeviceToDevice, ps->ss[qi]);
        }
        at += t;
    }
    if (e != cudaSuccess && s == GPK_OK)
        s = gpk__mpi_cuda_fail(c->ctx, e, "distributed sort: the part plan's buckets");
    for (int i = 0; i < ps->made; i++) {
        cudaError_t w = cudaStreamSynchronize(ps->ss[i]);
        if (i < ncs && w == cudaSuccess) w = cudaStreamSynchronize(ps->cs[i]);
        if (w != cudaSuccess && s == GPK_OK)
            s = gpk__mpi_cuda_fail(c->ctx, w, "distributed sort: the part plan's buckets");
    }
    return s;
}

/* The streams and events made, the tables; any CUDA error left is cleared. */
static void part_state_free(part_state *ps)
{
    for (int i = 0; i < ps->made; i++) {
        if (ps->ss[i]) (void)cudaStreamDestroy(ps->ss[i]);
        if (i < ps->ncs && ps->cs[i]) (void)cudaStreamDestroy(ps->cs[i]);
        if (i < ps->ncs && ps->ev[i]) (void)cudaEventDestroy(ps->ev[i]);
    }
    (void)cudaGetLastError();
    free(ps->cnt), free(ps->first), free(ps->G), free(ps->q), free(ps->below), free(ps->mine), free(ps->need);
    free(ps->records), free(ps->base_k), free(ps->base_v);
}

/* Collective. *declined (the same on every rank): a bucket is too large or
 * a mapping failed; nothing moved, the sort-first plan goes on. */
static gpk_status part_sort(sort_call *c, const uint64_t *start, const void *keys_in, const void *values_in,
                            size_t n_in, void *keys_out, void *values_out, gpk_mpi_sort_times *times,
                            double *t_phase, int *declined)
{
    const char *what = c->what;
    const int P = c->P;
    part_state ps = {0};
    ps.bits = (unsigned)(8 * c->kw), ps.shift = ps.bits - GPK_MULTI_PART_BITS,
    ps.D = 1u << GPK_MULTI_PART_BITS;
    ps.lo_mine = start[c->rank], ps.hi_mine = start[c->rank + 1];
    ps.ncs = P < PART_COPY_STREAMS ? P : PART_COPY_STREAMS;
    const unsigned D = ps.D;
    ps.cnt = calloc((size_t)P * D, sizeof *ps.cnt), ps.first = calloc((size_t)P * D, sizeof *ps.first);
    ps.G = calloc(D + 1, sizeof *ps.G), ps.q = calloc(D, sizeof *ps.q),
    ps.below = calloc(D + 1, sizeof *ps.below);
    ps.mine = calloc(D, sizeof *ps.mine), ps.need = calloc((size_t)P, sizeof *ps.need);
    ps.records = malloc(sizeof *ps.records * (size_t)P);
    ps.base_k = calloc((size_t)P, sizeof *ps.base_k), ps.base_v = calloc((size_t)P, sizeof *ps.base_v);
    *declined = 0;
    gpk_status s = GPK_OK;
    if (!ps.cnt || !ps.first || !ps.G || !ps.q || !ps.below || !ps.mine || !ps.need || !ps.records ||
        !ps.base_k || !ps.base_v)
        s = gpk__mpi_fail(c->ctx, GPK_ENOMEM, "%s: out of memory", what);

    /* 1. the partition into dk / dv, and its digit counts */
    if (s == GPK_OK) s = part_partition(c, &ps, keys_in, values_in, n_in);
    s = gpk__mpi_agree(c->comm, c->ctx, s, what);
    times->sort_ms = (MPI_Wtime() - *t_phase) * 1e3, *t_phase = MPI_Wtime();
    if (s != GPK_OK) goto out;

    /* 2. the buckets' places, and whether every bucket fits its cap */
    s = part_place(c, &ps, start, declined);
    if (s != GPK_OK || *declined) goto out;

    /* 3. the other ranks' dk / dv mapped */
    s = ipc_sync(c, ps.records);
    s = gpk__mpi_agree(c->comm, c->ctx, s, what);
    if (s != GPK_OK) goto out;
    if (!ipc_open(c, ps.records, ps.need, ps.base_k, ps.base_v)) { /* agreed inside */
        *declined = 1;
        goto out;
    }

    /* 4. room for the buckets, and the streams */
    s = part_prepare_buckets(c, &ps, keys_out, values_out);
    s = gpk__mpi_agree(c->comm, c->ctx, s, what);
    times->exchange = "cuda-ipc-part";
    times->split_ms = (MPI_Wtime() - *t_phase) * 1e3, *t_phase = MPI_Wtime();
    if (s != GPK_OK) goto out;

    /* 5. the buckets copied in and sorted */
    s = part_copy_and_sort(c, &ps, keys_out, values_out);
    times->merge_ms = (MPI_Wtime() - *t_phase) * 1e3;
out:
    part_state_free(&ps);
    return s;
}
#endif /* GPK_HAVE_CUDA */

/* The sort-first plan's state for one call, shared by its steps. start,
 * split and off hold P + 1 entries, send, recv and at_sender P; all holds
 * every rank's record of R_FIELDS. */
typedef struct sort_state {
    int64_t *all;
    uint64_t *start;     /* start[p]: where rank p's output starts in the global order */
    uint64_t *split;     /* split[p]: where the keys for rank p start in this rank's sorted shard */
    uint64_t *send;      /* keys this rank sends each rank */
    uint64_t *recv;      /* keys this rank receives from each rank */
    uint64_t *at_sender; /* where this rank's piece starts in each rank's sorted shard */
    uint64_t N;          /* keys on all ranks */
    void *sk, *sv;       /* this rank's sorted shard */
    void *rk, *rv;       /* the runs received, or the merge's scratch */
    size_t *off;         /* off[p]: where rank p's run starts in rk */
    size_t n_mine;       /* keys this rank's output receives */
    int in_shm;          /* the sorted shards lie in the shared window */
    int copy_own;        /* every run, this rank's too, goes to rk and merges there */
#ifdef GPK_HAVE_CUDA
    int prev_device, ipc_mapped;
    void *nccl, **base_k, **base_v;
    ipc_record *records;
    device_exchange how;
#endif
} sort_state;

/* Step 1, collective: every rank's record gathered; the fields that must
 * match across ranks checked (every rank sees the same records, so every
 * rank returns the same status without an agreement). */
static gpk_status gather_records(sort_call *c, sort_state *st, const gpk_mpi_sort_opts *o, size_t n_in)
{
    gpk_ctx *ctx = c->ctx;
    const char *what = c->what;
    int64_t mine[R_FIELDS] = {c->type,
                              (int64_t)c->vw,
                              o->keep_sizes != 0,
                              c->device,
                              (int64_t)n_in,
                              c->device ? ctx->device : -1,
                              (int64_t)node_hash()};
    const int64_t *all = st->all;
    gpk_status s =
        gpk__mpi_allgather(c->comm, ctx, mine, R_FIELDS, MPI_INT64_T, st->all, R_FIELDS, MPI_INT64_T, what);
    if (s != GPK_OK) return s;
    for (int p = 1; p < c->P && s == GPK_OK; p++) {
        const int64_t *a = all + (size_t)p * R_FIELDS, *z = all;
        if (a[R_TYPE] != z[R_TYPE])
            s = gpk__mpi_fail(ctx, GPK_EINVAL, "%s: key types differ across ranks (rank 0 %s, rank %d %s)",
                              what, gpk_type_name((gpk_type)z[R_TYPE]), p,
                              gpk_type_name((gpk_type)a[R_TYPE]));
        else if (a[R_VWIDTH] != z[R_VWIDTH])
            s = gpk__mpi_fail(ctx, GPK_EINVAL,
                              "%s: value widths differ across ranks (rank 0 %d bytes, rank %d %d bytes)",
                              what, (int)z[R_VWIDTH], p, (int)a[R_VWIDTH]);
        else if (a[R_KEEP] != z[R_KEEP])
            s = gpk__mpi_fail(ctx, GPK_EINVAL, "%s: keep_sizes differs across ranks (rank 0 and rank %d)",
                              what, p);
        else if (a[R_DEVICE] != z[R_DEVICE])
            s = gpk__mpi_fail(ctx, GPK_EINVAL, "%s: device_memory differs across ranks (rank 0 and rank %d)",
                              what, p);
    }
#ifndef GPK_HAVE_CUDA
    if (s == GPK_OK && c->device)
        s = gpk__mpi_fail(ctx, GPK_EUNSUPPORTED, "%s: device_memory: gpk was built without CUDA", what);
#endif
    return s;
}

/* Step 2, collective: where each rank's output starts in the global order
 * (*n_out: this rank's share), the device made current, and what the
 * communicator keeps between calls (the context's release hook frees the
 * device buffers kept for it: keep_adopt). */
static gpk_status place_output(sort_call *c, sort_state *st, const gpk_mpi_sort_opts *o, size_t cap,
                               size_t *n_out)
{
    gpk_ctx *ctx = c->ctx;
    const char *what = c->what;
    const int P = c->P;
    uint64_t *start = st->start;
    gpk_status s = GPK_OK;
    st->split = start + P + 1, st->send = st->split + P + 1, st->recv = st->send + P + 1;
    st->at_sender = st->recv + P + 1;
    start[0] = 0;
    for (int p = 0; p < P; p++) st->N += (uint64_t)st->all[(size_t)p * R_FIELDS + R_N];
    for (int p = 1; p <= P; p++)
        start[p] = o->keep_sizes ? start[p - 1] + (uint64_t)st->all[(size_t)(p - 1) * R_FIELDS + R_N]
                                 : balanced_start(st->N, P, p);
    st->n_mine = (size_t)(start[c->rank + 1] - start[c->rank]);
    *n_out = st->n_mine;
    if (cap < st->n_mine)
        s = gpk__mpi_fail(ctx, GPK_EINVAL, "%s: out_capacity %zu is below the %zu keys this rank receives",
                          what, cap, st->n_mine);
#ifdef GPK_HAVE_CUDA
    if (s == GPK_OK && c->device) {
        int current = -1;
        cudaError_t e = cudaGetDevice(&current);
        if (e == cudaSuccess && current != ctx->device) {
            e = cudaSetDevice(ctx->device);
            if (e == cudaSuccess) st->prev_device = current;
        }
        if (e != cudaSuccess) s = gpk__mpi_cuda_fail(ctx, e, what);
    }
    if (s == GPK_OK && c->device && !gpk__ctx_hook(ctx, keep_ctx_destroyed, 0))
        s = gpk__mpi_fail(ctx, GPK_ENOMEM, "%s: no free release hook on the context", what);
#endif
    s = gpk__mpi_agree(c->comm, ctx, s, what);
    if (s == GPK_OK) s = keep_get(c, &c->keep);
    if (s != GPK_OK) return s;
#ifdef GPK_HAVE_CUDA
    if (c->device) keep_adopt(c);
#endif
    return s;
}

/* The kept buffers for n keys and their values (*v: NULL without values)
 * on the shards' side, device or host: the runs received (received = 1),
 * or this rank's sorted shard (0), which the other ranks map on a device
 * (dev_grow's exported). */
static gpk_status grow_keys_values(sort_call *c, int received, size_t n, void **k, void **v)
{
    sort_keep *keep = c->keep;
#ifdef GPK_HAVE_CUDA
    if (c->device) {
        kept *dk = received ? &keep->drk : &keep->dk, *dv = received ? &keep->drv : &keep->dv;
        gpk_status s = dev_grow(c, dk, n * c->kw, !received);
        if (s == GPK_OK && c->vw) s = dev_grow(c, dv, n * c->vw, !received);
        *k = dk->p, *v = c->vw ? dv->p : NULL;
        return s;
    }
#endif
    kept *hk = received ? &keep->hrk : &keep->hk, *hv = received ? &keep->hrv : &keep->hv;
    *k = host_grow(c, hk, n * c->kw);
    *v = c->vw ? host_grow(c, hv, n * c->vw) : NULL;
    if (!*k || (c->vw && !*v))
        return gpk__mpi_fail(c->ctx, GPK_ENOMEM, "%s: out of host memory for %zu keys", c->what, n);
    return GPK_OK;
}

/* Step 3, collective: the local sort into the kept buffers (host shards of
 * one node: into the shared window, complete before any rank reads it). */
static gpk_status sort_shard(sort_call *c, sort_state *st, const void *keys_in, const void *values_in,
                             size_t n_in)
{
    gpk_status s = GPK_OK;
#ifdef GPK_HAVE_CUDA
    if (!c->device)
#endif
        st->in_shm = shm_prepare(c, st->all + R_N, R_FIELDS, &st->sk, &st->sv);
    if (!st->in_shm) s = grow_keys_values(c, 0, n_in, &st->sk, &st->sv);
    if (s == GPK_OK) s = local_sort(c, keys_in, values_in, n_in, st->sk, st->sv);
    if (st->in_shm) MPI_Win_sync(c->keep->win);
    return gpk__mpi_agree(c->comm, c->ctx, s, c->what);
}

/* Step 4, collective: split positions in the sorted shard, the counts to
 * and from every rank (they must add up to this rank's share), and where
 * the pieces are read in place, where each starts at its sender. */
static gpk_status split_shards(sort_call *c, sort_state *st, size_t n_in, gpk_mpi_sort_times *times,
                               double *t_phase)
{
    gpk_ctx *ctx = c->ctx;
    const char *what = c->what;
    gpk_status s = GPK_OK;
#ifdef GPK_HAVE_CUDA
    if (c->device)
        s = dev_grow(c, &c->keep->dwork, gpk__mpi_cuda_work_bytes(st->n_mine, (size_t)(c->P - 1) * DIGITS),
                     0);
    s = gpk__mpi_agree(c->comm, ctx, s, what);
    if (s != GPK_OK) return s;
#endif
    s = find_splits(c, st->sk, n_in, st->N, st->start, st->split);
    times->split_ms = (MPI_Wtime() - *t_phase) * 1e3, *t_phase = MPI_Wtime();
    if (s != GPK_OK) return s;
    for (int p = 0; p < c->P; p++) st->send[p] = st->split[p + 1] - st->split[p];
    s = gpk__mpi_alltoall(c->comm, ctx, st->send, 1, MPI_UINT64_T, st->recv, 1, MPI_UINT64_T, what);
    if (s == GPK_OK) {
        uint64_t got = 0;
        st->off[0] = 0;
        for (int p = 0; p < c->P; p++) got += st->recv[p], st->off[p + 1] = (size_t)got;
        if (got != st->n_mine)
            s = gpk__mpi_fail(ctx, GPK_EDEVICE, "%s: internal error: %llu keys would arrive for %zu places",
                              what, (unsigned long long)got, st->n_mine);
    }
    s = gpk__mpi_agree(c->comm, ctx, s, what);
    if (s != GPK_OK) return s;
    int read_in_place = st->in_shm;
#ifdef GPK_HAVE_CUDA
    read_in_place |= c->device && (st->how == DX_IPC || st->how == DX_COPY);
#endif
    if (read_in_place) {
        /* each rank takes its pieces where they lie: it needs where its
         * piece starts in every other rank's sorted shard */
        s = gpk__mpi_alltoall(c->comm, ctx, st->split, 1, MPI_UINT64_T, st->at_sender, 1, MPI_UINT64_T, what);
        s = gpk__mpi_agree(c->comm, ctx, s, what);
        if (s != GPK_OK) return s;
        if (st->in_shm) MPI_Win_sync(c->keep->win);
    }
    return s;
}

#ifdef GPK_HAVE_CUDA
/* Collective, device shards: every call the ranks' buffer generations, so
 * that no rank keeps a mapping of a buffer its owner let go; then the
 * peers' shards mapped where the exchange reads them in place (else the
 * fallback exchange), or the NCCL communicator. */
static gpk_status connect_devices(sort_call *c, sort_state *st)
{
    gpk_ctx *ctx = c->ctx;
    const char *what = c->what;
#ifdef GPK_HAVE_NCCL
    const int nccl_asked = st->how == DX_NCCL; /* GPK_MPI_DEVICE_EXCHANGE=nccl, the same on every rank */
#endif
    st->records = malloc(sizeof *st->records * (size_t)c->P);
    st->base_k = calloc((size_t)c->P, sizeof *st->base_k),
    st->base_v = calloc((size_t)c->P, sizeof *st->base_v);
    gpk_status s = st->records && st->base_k && st->base_v
        ? GPK_OK
        : gpk__mpi_fail(ctx, GPK_ENOMEM, "%s: out of memory", what);
    s = gpk__mpi_agree(c->comm, ctx, s, what);
    if (s == GPK_OK) s = ipc_sync(c, st->records);
    s = gpk__mpi_agree(c->comm, ctx, s, what); /* before the collectives of the mapping */
    if (s == GPK_OK && (st->how == DX_IPC || st->how == DX_COPY)) {
        ipc_check(c, st->all);
        if (c->keep->ipc_ok) st->ipc_mapped = ipc_open(c, st->records, st->recv, st->base_k, st->base_v);
        if (!st->ipc_mapped) st->how = device_exchange_after_ipc();
    }
    s = gpk__mpi_agree(c->comm, ctx, s, what);
    if (s != GPK_OK) return s;
#ifdef GPK_HAVE_NCCL
    if (st->how == DX_NCCL) {
        /* NCCL where every rank opened it, the same choice on every rank */
        int all = 0;
        s = nccl_open_everywhere(c->comm, ctx, nccl_asked, &all, what);
        if (s != GPK_OK) return s;
        if (!all) st->how = device_exchange_without_nccl();
    }
    if (st->how == DX_NCCL) {
        ncclComm_t nc;
        s = nccl_comm_get(c->comm, ctx, &nc);
        if (s != GPK_OK) return s;
        st->nccl = nc;
    }
#endif
    return s;
}
#endif

/* Collective: rk / rv, for the runs received, or the merge's scratch where
 * they are read in place and take more than one round. */
static gpk_status grow_run_buffers(sort_call *c, sort_state *st)
{
    const size_t n_mine = st->n_mine;
    gpk_status s = GPK_OK;
    int nonempty = 0;
    for (int p = 0; p < c->P; p++) nonempty += st->recv[p] > 0;
    int in_place = st->in_shm;
#ifdef GPK_HAVE_CUDA
    in_place |= st->ipc_mapped && st->how == DX_IPC;
    st->copy_own = st->ipc_mapped && st->how == DX_COPY && nonempty > 2;
#endif
    if (!in_place || nonempty > 2) s = grow_keys_values(c, 1, n_mine, &st->rk, &st->rv);
    return gpk__mpi_agree(c->comm, c->ctx, s, c->what);
}

/* The exchange's name in the times. */
static const char *exchange_name(const sort_call *c, const sort_state *st)
{
#ifdef GPK_HAVE_CUDA
    if (c->device)
        return st->ipc_mapped    ? (st->how == DX_COPY ? "cuda-ipc-copy" : "cuda-ipc")
            : st->how == DX_NCCL ? "nccl"
            : st->how == DX_MPI  ? "cuda-aware-mpi"
                                 : "host-staged";
#else
    (void)c;
#endif
    return st->in_shm ? "shared-memory" : "mpi";
}

/* Step 5, collective: the pieces moved into rk / rv, where they are not
 * read in place (each call agrees on failures before it moves data). */
static gpk_status exchange_runs(sort_call *c, sort_state *st, size_t n_in)
{
    MPI_Comm comm = c->comm;
    gpk_ctx *ctx = c->ctx;
    gpk_status s = GPK_OK;
    (void)n_in; /* only the device exchanges need the shard's size */
#ifdef GPK_HAVE_CUDA
    if (c->device && st->ipc_mapped && st->how == DX_IPC) {
        /* nothing moves yet: the merge reads the pieces over the links */
    } else if (c->device && st->ipc_mapped) {
        s = ipc_copy(c, st->base_k, st->base_v, st->at_sender, st->recv, st->off, st->rk, st->rv,
                     st->copy_own);
    } else if (c->device) {
        s = exchange_device(comm, ctx, st->how, st->nccl, st->sk, n_in, st->send, st->rk, st->n_mine,
                            st->recv, c->kw);
        if (c->vw) {
            s = gpk__mpi_agree(comm, ctx, s, c->what);
            if (s == GPK_OK)
                s = exchange_device(comm, ctx, st->how, st->nccl, st->sv, n_in, st->send, st->rv, st->n_mine,
                                    st->recv, c->vw);
        }
    } else
#endif
        if (st->in_shm) {
        /* nothing moves yet: the merge reads the pieces in the window */
    } else {
        s = exchange(comm, ctx, st->sk, st->send, st->rk, st->recv, c->kw, copy_host, c->what);
        if (c->vw) {
            s = gpk__mpi_agree(comm, ctx, s, c->what);
            if (s == GPK_OK)
                s = exchange(comm, ctx, st->sv, st->send, st->rv, st->recv, c->vw, copy_host, c->what);
        }
    }
    return s;
}

/* Step 6: the runs received merged into the output, earlier ranks first on
 * ties; each run read where it lies (a peer's mapped shard, the shared
 * window) or in rk / rv. */
static gpk_status merge_received(sort_call *c, sort_state *st, void *keys_out, void *values_out)
{
    const int P = c->P;
    const size_t kw = c->kw, vw = c->vw;
    const uint64_t *recv = st->recv, *at_sender = st->at_sender;
    const void **run_k = (const void **)calloc((size_t)P, sizeof(void *));
    const void **run_v = (const void **)calloc((size_t)P, sizeof(void *));
    size_t *run_len = calloc((size_t)P, sizeof(size_t));
    gpk_status s = GPK_OK;
    if (!run_k || !run_v || !run_len) s = gpk__mpi_fail(c->ctx, GPK_ENOMEM, "%s: out of memory", c->what);
    int runs = 0;
#ifdef GPK_HAVE_CUDA
    if (s == GPK_OK && st->ipc_mapped && !st->copy_own) {
        /* the runs in the peers' shards (in-kernel loads), or copied to rk
         * but this rank's own, read where it lies */
        for (int p = 0; p < P; p++) {
            if (!recv[p]) continue;
            int there = st->how == DX_IPC || p == c->rank;
            run_k[runs] = there ? (const char *)st->base_k[p] + at_sender[p] * kw
                                : (const char *)st->rk + st->off[p] * kw;
            run_v[runs] = !vw ? NULL
                : there       ? (const char *)st->base_v[p] + at_sender[p] * vw
                              : (const char *)st->rv + st->off[p] * vw;
            run_len[runs++] = (size_t)recv[p];
        }
        s = gpk__mpi_cuda_merge_runs(c->ctx, (int)c->type, run_k, run_v, vw, run_len, runs, st->rk, st->rv,
                                     keys_out, values_out, c->keep->dwork.p);
    } else
#endif
        if (s == GPK_OK && st->in_shm) {
        for (int p = 0; p < P && s == GPK_OK; p++) {
            if (!recv[p]) continue;
            MPI_Aint size;
            int unit;
            char *base = NULL;
            if (MPI_Win_shared_query(c->keep->win, p, &size, &unit, &base) != MPI_SUCCESS || !base) {
                s = gpk__mpi_fail(c->ctx, GPK_EDEVICE, "%s: MPI_Win_shared_query of rank %d failed", c->what,
                                  p);
                break;
            }
            size_t n_p = (size_t)st->all[(size_t)p * R_FIELDS + R_N];
            run_k[runs] = base + at_sender[p] * kw;
            run_v[runs] = vw ? base + shm_values_at(n_p, kw) + at_sender[p] * vw : NULL;
            run_len[runs++] = (size_t)recv[p];
        }
        if (s == GPK_OK)
            host_merge_ptr(c->type, kw, vw, run_k, run_v, run_len, runs, st->rk, st->rv, keys_out, values_out,
                           st->off, c->threads);
    } else if (s == GPK_OK) {
        for (int p = 0; p < P; p++)
            if (recv[p]) st->off[runs++] = st->off[p];
        st->off[runs] = st->n_mine;
        s = merge_runs(c, st->rk, st->rv, st->off, runs, keys_out, values_out);
    }
    free(run_k), free(run_v), free(run_len);
    return s;
}

/* This rank's own arguments checked; the caller has the ranks agree on
 * the result before any of them goes on. */
static gpk_status check_own_arguments(const sort_call *c, const void *keys_in, int with_values,
                                      const void *values_in, size_t n_in, const void *keys_out,
                                      const void *values_out, size_t cap, const size_t *n_out)
{
    gpk_ctx *ctx = c->ctx;
    const char *what = c->what;
    const gpk_type type = c->type, vtype = c->vtype;
    gpk_status s = GPK_OK;
    if (!ctx) s = GPK_EINVAL; /* nowhere to say why: the status tells */
    else if (!n_out) s = gpk__mpi_fail(ctx, GPK_EINVAL, "%s: n_out is NULL", what);
    else if ((unsigned)type > GPK_F64)
        s = gpk__mpi_fail(ctx, GPK_EINVAL, "%s: unknown key type %d", what, (int)type);
    else if (with_values && (unsigned)vtype > GPK_F64)
        s = gpk__mpi_fail(ctx, GPK_EINVAL, "%s: unknown value type %d", what, (int)vtype);
    else if (n_in && (!keys_in || (with_values && !values_in)))
        s = gpk__mpi_fail(ctx, GPK_EINVAL, "%s: the shard is NULL with %zu keys", what, n_in);
    else if (cap && (!keys_out || (with_values && !values_out)))
        s = gpk__mpi_fail(ctx, GPK_EINVAL, "%s: the output is NULL with capacity %zu", what, cap);
    else if (c->device && ctx->backend != GPK_BACKEND_CUDA)
        s = gpk__mpi_fail(ctx, GPK_EINVAL, "%s: device_memory needs a CUDA context (this one is %s)", what,
                          gpk_backend_name(ctx->backend));
    return s;
}

static gpk_status sort_impl(MPI_Comm comm, gpk_ctx *ctx, gpk_type type, const void *keys_in, int with_values,
                            gpk_type vtype, const void *values_in, size_t n_in, void *keys_out,
                            void *values_out, size_t cap, size_t *n_out, const gpk_mpi_sort_opts *opts,
                            const char *what)
{
    gpk_mpi_sort_opts o = GPK_MPI_SORT_OPTS_INIT;
    if (opts) o = *opts;
    gpk_mpi_sort_times times = GPK_MPI_SORT_TIMES_ZERO;
    double t_start = MPI_Wtime(), t_phase = t_start;
    sort_call c = {comm, ctx, type, 0, 0, vtype, o.device_memory != 0, 1, 0, 1, what, NULL, 0, 0};
    if (MPI_Comm_size(comm, &c.P) != MPI_SUCCESS || MPI_Comm_rank(comm, &c.rank) != MPI_SUCCESS)
        return gpk__mpi_fail(ctx, GPK_EINVAL, "%s: not a valid communicator", what);
    sort_state st = {0};
#ifdef GPK_HAVE_CUDA
    st.prev_device = -1;
    st.how = c.device ? device_exchange_pick() : DX_HOST;
#endif

    /* 1. each rank checks its own arguments; the ranks agree, then gather
     * what must match */
    gpk_status s =
        check_own_arguments(&c, keys_in, with_values, values_in, n_in, keys_out, values_out, cap, n_out);
    if (s == GPK_OK) {
        c.kw = gpk_type_size(type);
        c.vw = with_values ? gpk_type_size(vtype) : 0;
        c.threads = ctx->threads > 0 ? ctx->threads : 1;
        st.all = malloc(sizeof(int64_t) * R_FIELDS * (size_t)c.P);
        st.start = malloc(sizeof(uint64_t) * ((size_t)c.P + 1) * 5); /* start, split, send, recv, at_sender */
        st.off = malloc(sizeof(size_t) * ((size_t)c.P + 1));
        if (!st.all || !st.start || !st.off) s = gpk__mpi_fail(ctx, GPK_ENOMEM, "%s: out of memory", what);
    }
    s = gpk__mpi_agree(comm, ctx, s, what);
    if (s == GPK_OK) s = gather_records(&c, &st, &o, n_in);
    if (s != GPK_OK) goto done;

    /* 2. where each rank's output starts in the global order */
    s = place_output(&c, &st, &o, cap, n_out);
    if (s != GPK_OK) goto done;

    /* one rank: the local sort, straight into the output */
    if (c.P == 1) {
        times.exchange = "local";
        s = local_sort(&c, keys_in, values_in, n_in, keys_out, values_out);
        times.sort_ms = (MPI_Wtime() - t_phase) * 1e3;
        goto done;
    }

#ifdef GPK_HAVE_CUDA
    /* device shards of one node, peers: the part plan where it is wanted
     * and the keys allow it (else the sort-first plan below) */
    if (c.device && (st.how == DX_IPC || st.how == DX_COPY) && part_wanted(&c, st.N)) {
        ipc_check(&c, st.all);
        if (c.keep->ipc_ok) {
            int declined = 0;
            s = part_sort(&c, st.start, keys_in, values_in, n_in, keys_out, values_out, &times, &t_phase,
                          &declined);
            if (s != GPK_OK || !declined) goto finish;
            t_phase = MPI_Wtime(); /* the sort-first plan's phases from here */
        }
    }
#endif

    /* 3. the local sort; 4. split positions, counts to and from every rank */
    s = sort_shard(&c, &st, keys_in, values_in, n_in);
    times.sort_ms = (MPI_Wtime() - t_phase) * 1e3, t_phase = MPI_Wtime(); /* the slowest rank's sort */
    if (s == GPK_OK) s = split_shards(&c, &st, n_in, &times, &t_phase);
#ifdef GPK_HAVE_CUDA
    if (s == GPK_OK && c.device) s = connect_devices(&c, &st);
#endif
    if (s == GPK_OK) s = grow_run_buffers(&c, &st);
    if (s != GPK_OK) goto done;

    /* 5. exchange; 6. merge the runs received */
    times.exchange = exchange_name(&c, &st);
    s = exchange_runs(&c, &st, n_in);
    times.exchange_ms = (MPI_Wtime() - t_phase) * 1e3, t_phase = MPI_Wtime();
    if (s == GPK_OK) s = merge_received(&c, &st, keys_out, values_out);
    times.merge_ms = (MPI_Wtime() - t_phase) * 1e3;
#ifdef GPK_HAVE_CUDA
finish:
#endif
    /* after this agreement no rank reads another's shard any more, and
     * every rank has closed its mappings of buffers that were let go */
    s = gpk__mpi_agree(comm, ctx, s, what);
#ifdef GPK_HAVE_CUDA
    if (s == GPK_OK && c.keep && c.keep->n_retired) {
        for (int i = 0; i < c.keep->n_retired; i++) (void)cudaFree(c.keep->retired[i]);
        c.keep->n_retired = 0;
    }
#endif
done:
    times.total_ms = (MPI_Wtime() - t_start) * 1e3;
    times.setup_ms = c.setup_ms, times.setups = c.setups;
    last_times = times;
#ifdef GPK_HAVE_CUDA
    if (st.prev_device >= 0) (void)cudaSetDevice(st.prev_device);
    free(st.base_k), free(st.base_v), free(st.records);
#endif
    free(st.off), free(st.all), free(st.start);
    return s;
}

gpk_status gpk_mpi_sort_keys(MPI_Comm comm, gpk_ctx *ctx, gpk_type type, const void *keys_in, size_t n_in,
                             void *keys_out, size_t out_capacity, size_t *n_out,
                             const gpk_mpi_sort_opts *opts)
{
    return sort_impl(comm, ctx, type, keys_in, 0, GPK_U32, NULL, n_in, keys_out, NULL, out_capacity, n_out,
                     opts, "gpk_mpi_sort_keys");
}

gpk_status gpk_mpi_sort_pairs(MPI_Comm comm, gpk_ctx *ctx, gpk_type key_type, const void *keys_in,
                              gpk_type value_type, const void *values_in, size_t n_in, void *keys_out,
                              void *values_out, size_t out_capacity, size_t *n_out,
                              const gpk_mpi_sort_opts *opts)
{
    return sort_impl(comm, ctx, key_type, keys_in, 1, value_type, values_in, n_in, keys_out, values_out,
                     out_capacity, n_out, opts, "gpk_mpi_sort_pairs");
}

gpk_status gpk_mpi_release(MPI_Comm comm, gpk_ctx *ctx)
{
    const char *what = "gpk_mpi_release";
    int P = 0;
    if (MPI_Comm_size(comm, &P) != MPI_SUCCESS)
        return gpk__mpi_fail(ctx, GPK_EINVAL, "%s: not a valid communicator", what);
    sort_keep *k = NULL;
    int found = 0, any = 0;
    gpk_status s = GPK_OK;
    if (keep_keyval != MPI_KEYVAL_INVALID)
        s = gpk__mpi_check(ctx, MPI_Comm_get_attr(comm, keep_keyval, &k, &found), what);
    s = gpk__mpi_agree(comm, ctx, s, what);
    if (s != GPK_OK) return s;
    /* kept on every rank or on none (made and freed collectively) */
    s = gpk__mpi_allreduce(comm, ctx, &found, &any, 1, MPI_INT, MPI_MAX, what);
    if (s != GPK_OK || !any) return s;
    return gpk__mpi_check(ctx, MPI_Comm_delete_attr(comm, keep_keyval), what);
}
