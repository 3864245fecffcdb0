/* gpk device-pointer API for CUDA users.
 *
 * Asynchronous on the given stream, CUB-style two-phase temporary storage:
 * call once with d_temp == NULL to get *temp_bytes, allocate, call again.
 * ctx must be a CUDA context (it carries the device and the error message).
 * d_keys_in may equal d_keys_out (in place); the input is otherwise left
 * unchanged. Values likewise.
 *
 * key_bits = 0 here means "all bits of the type" unless
 * GPK_CUDA_DETECT_BITS is set in flags, in which case one AND/OR reduction
 * runs and the stream is synchronized once to read it back.
 */
#ifndef GPK_CUDA_H
#define GPK_CUDA_H

#include "gpk.h"
#include "sort.h"
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GPK_CUDA_DETECT_BITS 1u

GPK_API gpk_status gpk_cuda_sort_keys(gpk_ctx *ctx, void *d_temp, size_t *temp_bytes,
                                      gpk_type key_type, const void *d_keys_in,
                                      void *d_keys_out, size_t n,
                                      const gpk_radix_opts *opts, unsigned flags,
                                      cudaStream_t stream);

/* value_width is 4 or 8 bytes. */
GPK_API gpk_status gpk_cuda_sort_pairs(gpk_ctx *ctx, void *d_temp, size_t *temp_bytes,
                                       gpk_type key_type, const void *d_keys_in,
                                       void *d_keys_out, size_t value_width,
                                       const void *d_values_in, void *d_values_out,
                                       size_t n, const gpk_radix_opts *opts,
                                       unsigned flags, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
