/* CUDA backend state, kept in ctx->cuda. Shared by src/core/cuda_ctx.cu
 * (creation, buffers, release), src/core/cuda_staging.c (large host copies)
 * and the CUDA kernels' host code. C-compatible. */
#ifndef GPK_CUDA_INTERNAL_H
#define GPK_CUDA_INTERNAL_H

#include <cuda_runtime_api.h>

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Device buffers the host-pointer API keeps between calls (grow-only), so
 * that a code which sorts every time step does not cudaMalloc every time. */
typedef enum gpk_cuda_slot {
    GPK_CUDA_KEYS_A,
    GPK_CUDA_KEYS_B,
    GPK_CUDA_KEYS_C,
    GPK_CUDA_VALUES_A,
    GPK_CUDA_VALUES_B,
    GPK_CUDA_VALUES_C,
    GPK_CUDA_TEMP,
    GPK_CUDA_SLOTS
} gpk_cuda_slot;

typedef struct gpk_cuda_state {
    cudaStream_t stream; /* the host-pointer API's work runs here */
    int sm_count;        /* multiprocessors */
    size_t smem_optin;   /* largest dynamic shared memory a block may ask for */
    void *buf[GPK_CUDA_SLOTS];
    size_t buf_bytes[GPK_CUDA_SLOTS];
    unsigned long long *pinned; /* 4 words of pinned host memory for small read-backs */
    cudaEvent_t ev_start, ev_stop;
    void *staging; /* pinned: two chunks for gpk__cuda_copy_to_host/_device */
    cudaEvent_t staging_ev[2];
    cudaMemPool_t temp_pool; /* gpk__cuda_temp_alloc's (NULL: plain cudaMalloc) */
} gpk_cuda_state;

/* The CUDA device backend (cuda_ctx.cu) and its entries. */
extern const gpk__device_backend gpk__cuda_device;
int gpk__cuda_device_count(void);
const char *gpk__cuda_unavailable_reason(void);
gpk_status gpk__cuda_ctx_init(gpk_ctx *ctx);
void gpk__cuda_ctx_release(gpk_ctx *ctx);
gpk_status gpk__cuda_enable_peers(gpk_ctx *ctx);
/* gpk_host_lock / gpk_host_unlock on a CUDA context (cuda_staging.c) */
gpk_status gpk__cuda_host_lock(gpk_ctx *ctx, void *p, size_t bytes);
gpk_status gpk__cuda_host_unlock(gpk_ctx *ctx, void *p);

/* The benches' timed repetitions on the context's events: the end of one
 * (records ev_stop on stream, waits for it, *ms since ev_start; what names
 * the bench in a failure), and the median of reps of them (sorted in place). */
gpk_status gpk__cuda_rep_end(gpk_ctx *ctx, cudaStream_t stream, double *ms, const char *what);
double gpk__median_ms(double *times, int reps);

/* Makes sure every slot i holds at least bytes[i] bytes (0: leave as is).
 * Checks free device memory first: GPK_ENOMEM with a message when the
 * request cannot fit. Slots that grow lose their contents. */
gpk_status gpk__cuda_reserve(gpk_ctx *ctx, const size_t bytes[GPK_CUDA_SLOTS], const char *what);

/* Temporary device arrays of one call, stream-ordered: from the context's
 * own memory pool, which keeps what it holds between calls (released with
 * the context), so that a call made every time step pays no cudaMalloc or
 * cudaFree (each costs tens of microseconds and cudaFree waits for the
 * device). Free with gpk__cuda_temp_free on the same stream; never hand
 * such an array to the caller. On a device without memory pools they are plain cudaMalloc / cudaFree. An allocation
 * that fails first gives the pool's unused memory back and tries again. */
gpk_status gpk__cuda_temp_alloc(gpk_ctx *ctx, void **p, size_t bytes, cudaStream_t stream, const char *what);
cudaError_t gpk__cuda_temp_free(gpk_ctx *ctx, void *p, cudaStream_t stream);

/* Records "what: cudaGetErrorString(e)" on ctx: GPK_ENOMEM for allocation
 * failures, GPK_EDEVICE otherwise. Clears the runtime's last (non-sticky) error. */
gpk_status gpk__cuda_fail(gpk_ctx *ctx, cudaError_t e, const char *what);
/* Whether host memory [p, p + bytes) came page-locked (asked at its two
 * ends: a middle left pageable still copies correctly, only slower;
 * cuda_staging.c). */
int gpk__cuda_host_locked(const void *p, size_t bytes);

/* Large copies between pageable host memory and the device, synchronous on
 * stream: chunks pass through the context's two pinned staging buffers
 * (allocated on first use), the DMA of one overlapping the host copy of the
 * other, which runs on the context's threads (so that first-touch faults of
 * a fresh host array spread over the cores). */
gpk_status gpk__cuda_copy_to_host(gpk_ctx *ctx, void *dst, const void *d_src, size_t bytes,
                                  cudaStream_t stream);
gpk_status gpk__cuda_copy_to_device(gpk_ctx *ctx, void *d_dst, const void *src, size_t bytes,
                                    cudaStream_t stream);

#ifdef __cplusplus
}

/* CUDA sources: makes ctx's device current for a call and gives the
 * caller's back on scope exit (enter's error, if any, is the caller's to
 * report; the restore is best effort). */
struct DeviceGuard {
    int previous = -1;
    bool changed = false;
    cudaError_t enter(int device)
    {
        cudaError_t e = cudaGetDevice(&previous);
        if (e != cudaSuccess) return e;
        if (previous != device) {
            changed = true;
            return cudaSetDevice(device);
        }
        return cudaSuccess;
    }
    ~DeviceGuard()
    {
        if (changed) (void)cudaSetDevice(previous);
    }
};
#endif
#endif
