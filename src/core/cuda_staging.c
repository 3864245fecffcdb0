/* Large host <-> device copies through pinned staging (cuda_internal.h).
 *
 * cudaMemcpy from or to pageable memory copies through the driver's own
 * staging on one host thread, and a fresh output array (malloc'd for the
 * caller) takes its first-touch page faults on that thread too. Here the
 * chunks pass through two pinned buffers of the context: the DMA of chunk
 * k + 1 runs while the context's threads copy chunk k, page faults
 * included (gpk__host_copy). Arrays the caller has page-locked
 * (gpk_host_lock, cudaHostRegister, cudaMallocHost) go by DMA directly. */
#include "cuda_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define STAGE_CHUNK ((size_t)16 << 20)
#define DIRECT_MAX ((size_t)1 << 20) /* smaller copies go straight through cudaMemcpy */

static gpk_status staging_ready(gpk_ctx *ctx, gpk_cuda_state *st)
{
    if (st->staging) return GPK_OK;
    cudaError_t e = cudaHostAlloc(&st->staging, 2 * STAGE_CHUNK, cudaHostAllocDefault);
    if (e != cudaSuccess) {
        st->staging = NULL;
        return gpk__cuda_fail(ctx, e, "cudaHostAlloc (staging buffers)");
    }
    for (int i = 0; i < 2; i++) {
        e = cudaEventCreateWithFlags(&st->staging_ev[i], cudaEventDisableTiming);
        if (e != cudaSuccess) {
            st->staging_ev[i] = NULL;
            return gpk__cuda_fail(ctx, e, "cudaEventCreate (staging)");
        }
    }
    return GPK_OK;
}

int gpk__cuda_host_locked(const void *p, size_t bytes)
{
    if (!p || !bytes) return 1;
    const char *ends[2] = {(const char *)p, (const char *)p + bytes - 1};
    for (int i = 0; i < 2; i++) {
        struct cudaPointerAttributes a;
        if (cudaPointerGetAttributes(&a, ends[i]) != cudaSuccess) {
            (void)cudaGetLastError();
            return 0;
        }
        if (a.type != cudaMemoryTypeHost) return 0;
    }
    return 1;
}

gpk_status gpk__cuda_host_lock(gpk_ctx *ctx, void *p, size_t bytes)
{
    const cudaError_t e = cudaHostRegister(p, bytes, cudaHostRegisterPortable);
    return e == cudaSuccess ? GPK_OK : gpk__cuda_fail(ctx, e, "gpk_host_lock: cudaHostRegister");
}

gpk_status gpk__cuda_host_unlock(gpk_ctx *ctx, void *p)
{
    const cudaError_t e = cudaHostUnregister(p);
    return e == cudaSuccess ? GPK_OK : gpk__cuda_fail(ctx, e, "gpk_host_unlock: cudaHostUnregister");
}

static size_t chunk_len(size_t bytes, size_t k)
{
    const size_t off = k * STAGE_CHUNK;
    return bytes - off < STAGE_CHUNK ? bytes - off : STAGE_CHUNK;
}

/* A staged copy: the two chunk buffers, the chunk count, the host threads
 * that copy a chunk, and the events that mark each buffer's last DMA. */
typedef struct staged {
    char *stage[2];
    size_t chunks;
    int threads;
    cudaEvent_t *ev;
} staged;

/* Device to host: the DMA of chunk k + 1 runs while the host copies chunk
 * k out of the other buffer. */
static cudaError_t stage_to_host(const staged *sg, void *dst, const void *d_src, size_t bytes,
                                 cudaStream_t stream)
{
    cudaError_t e = cudaMemcpyAsync(sg->stage[0], d_src, chunk_len(bytes, 0), cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess) e = cudaEventRecord(sg->ev[0], stream);
    for (size_t k = 0; k < sg->chunks && e == cudaSuccess; k++) {
        if (k + 1 < sg->chunks) {
            /* chunk k + 1 goes where chunk k - 1 was, which the host has copied */
            const int b = (int)((k + 1) & 1);
            e = cudaMemcpyAsync(sg->stage[b], (const char *)d_src + (k + 1) * STAGE_CHUNK,
                                chunk_len(bytes, k + 1), cudaMemcpyDeviceToHost, stream);
            if (e == cudaSuccess) e = cudaEventRecord(sg->ev[b], stream);
        }
        if (e == cudaSuccess) e = cudaEventSynchronize(sg->ev[k & 1]);
        if (e == cudaSuccess)
            gpk__host_copy((char *)dst + k * STAGE_CHUNK, sg->stage[k & 1], chunk_len(bytes, k), sg->threads);
    }
    return e;
}

/* Host to device: the host fills one buffer while the other one's DMA runs. */
static cudaError_t stage_to_device(const staged *sg, void *d_dst, const void *src, size_t bytes,
                                   cudaStream_t stream)
{
    cudaError_t e = cudaSuccess;
    for (size_t k = 0; k < sg->chunks && e == cudaSuccess; k++) {
        const int b = (int)(k & 1);
        /* the DMA of chunk k - 2 has left this buffer */
        if (k >= 2) e = cudaEventSynchronize(sg->ev[b]);
        if (e != cudaSuccess) break;
        gpk__host_copy(sg->stage[b], (const char *)src + k * STAGE_CHUNK, chunk_len(bytes, k), sg->threads);
        e = cudaMemcpyAsync((char *)d_dst + k * STAGE_CHUNK, sg->stage[b], chunk_len(bytes, k),
                            cudaMemcpyHostToDevice, stream);
        if (e == cudaSuccess) e = cudaEventRecord(sg->ev[b], stream);
    }
    /* the next call may reuse both buffers at once */
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    return e;
}

/* Both copies: a small one, or one whose host side (host) is already
 * page-locked, goes directly; any other through the staging buffers. */
static gpk_status staged_copy(gpk_ctx *ctx, void *dst, const void *src, size_t bytes,
                              enum cudaMemcpyKind kind, cudaStream_t stream)
{
    gpk_cuda_state *st = (gpk_cuda_state *)ctx->cuda;
    const int to_host = kind == cudaMemcpyDeviceToHost;
    const char *what = to_host ? "copy to host" : "copy to device";
    cudaError_t e;
    if (bytes <= DIRECT_MAX || gpk__cuda_host_locked(to_host ? dst : src, bytes)) {
        e = cudaMemcpyAsync(dst, src, bytes, kind, stream);
        if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
        return e == cudaSuccess ? GPK_OK : gpk__cuda_fail(ctx, e, what);
    }
    const gpk_status s = staging_ready(ctx, st);
    if (s != GPK_OK) return s;
    const staged sg = {{(char *)st->staging, (char *)st->staging + STAGE_CHUNK},
                       (bytes + STAGE_CHUNK - 1) / STAGE_CHUNK,
                       ctx->threads > 0 ? ctx->threads : 1,
                       st->staging_ev};
    e = to_host ? stage_to_host(&sg, dst, src, bytes, stream) : stage_to_device(&sg, dst, src, bytes, stream);
    if (e != cudaSuccess) {
        (void)cudaStreamSynchronize(stream); /* nothing may still use the staging buffers */
        return gpk__cuda_fail(ctx, e, what);
    }
    return GPK_OK;
}

gpk_status gpk__cuda_copy_to_host(gpk_ctx *ctx, void *dst, const void *d_src, size_t bytes,
                                  cudaStream_t stream)
{
    return staged_copy(ctx, dst, d_src, bytes, cudaMemcpyDeviceToHost, stream);
}

gpk_status gpk__cuda_copy_to_device(gpk_ctx *ctx, void *d_dst, const void *src, size_t bytes,
                                    cudaStream_t stream)
{
    return staged_copy(ctx, d_dst, src, bytes, cudaMemcpyHostToDevice, stream);
}
