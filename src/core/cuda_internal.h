/* CUDA backend state, kept in ctx->cuda. Shared by src/core/cuda_ctx.cu
 * (creation, buffers, release) and the CUDA kernels' host code. Only files
 * compiled by nvcc include this header. */
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
    cudaStream_t stream;        /* the host-pointer API's work runs here */
    int sm_count;               /* multiprocessors */
    size_t smem_optin;          /* largest dynamic shared memory a block may ask for */
    void *buf[GPK_CUDA_SLOTS];
    size_t buf_bytes[GPK_CUDA_SLOTS];
    unsigned long long *pinned; /* 4 words of pinned host memory for small read-backs */
    cudaEvent_t ev_start, ev_stop;
} gpk_cuda_state;

/* Makes sure every slot i holds at least bytes[i] bytes (0: leave as is).
 * Checks free device memory first: GPK_ENOMEM with a message when the
 * request cannot fit. Slots that grow lose their contents. */
gpk_status gpk__cuda_reserve(gpk_ctx *ctx, const size_t bytes[GPK_CUDA_SLOTS], const char *what);

/* Records "what: cudaGetErrorString(e)" on ctx: GPK_ENOMEM for allocation
 * failures, GPK_EDEVICE otherwise. Clears the runtime's last (non-sticky) error. */
gpk_status gpk__cuda_fail(gpk_ctx *ctx, cudaError_t e, const char *what);

#ifdef __cplusplus
}
#endif
#endif
