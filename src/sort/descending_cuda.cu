/* Descending order on device memory: the map to descending sort keys and
 * back (descending.h) as one grid-stride kernel. */
#include <cuda_runtime.h>

#include "descending.h"
#include "radix_internal.h"
#include "../core/cuda_internal.h"

namespace {

/* The order-preserving maps of radix_internal.h on the device. */
__device__ __forceinline__ uint32_t map32(gpk_type t, uint32_t x)
{
    if (t == GPK_I32) return x ^ 0x80000000u;
    if (t == GPK_F32) return (x ^ ((x >> 31) ? 0xFFFFFFFFu : 0x80000000u)) - 0x007FFFFFu;
    return x;
}
__device__ __forceinline__ uint32_t unmap32(gpk_type t, uint32_t m)
{
    if (t == GPK_I32) return m ^ 0x80000000u;
    if (t == GPK_F32) {
        const uint32_t s = m + 0x007FFFFFu;
        return s ^ ((s >> 31) ? 0x80000000u : 0xFFFFFFFFu);
    }
    return m;
}
__device__ __forceinline__ uint64_t map64(gpk_type t, uint64_t x)
{
    if (t == GPK_I64) return x ^ 0x8000000000000000ull;
    if (t == GPK_F64)
        return (x ^ ((x >> 63) ? 0xFFFFFFFFFFFFFFFFull : 0x8000000000000000ull)) - 0x000FFFFFFFFFFFFFull;
    return x;
}
__device__ __forceinline__ uint64_t unmap64(gpk_type t, uint64_t m)
{
    if (t == GPK_I64) return m ^ 0x8000000000000000ull;
    if (t == GPK_F64) {
        const uint64_t s = m + 0x000FFFFFFFFFFFFFull;
        return s ^ ((s >> 63) ? 0x8000000000000000ull : 0xFFFFFFFFFFFFFFFFull);
    }
    return m;
}

__global__ void desc32_kernel(const uint32_t *in, uint32_t *out, size_t n, gpk_type t, unsigned bits,
                              int inverse)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const uint32_t x = in[i];
        out[i] = inverse ? unmap32(t, gpk__desc_key32(t, bits, x)) : gpk__desc_key32(t, bits, map32(t, x));
    }
}
__global__ void desc64_kernel(const uint64_t *in, uint64_t *out, size_t n, gpk_type t, unsigned bits,
                              int inverse)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const uint64_t x = in[i];
        out[i] = inverse ? unmap64(t, gpk__desc_key64(t, bits, x)) : gpk__desc_key64(t, bits, map64(t, x));
    }
}

} // namespace

extern "C" gpk_status gpk__desc_apply_cuda(gpk_ctx *ctx, gpk_type t, unsigned key_bits, const void *d_in,
                                           void *d_out, size_t n, int inverse, void *stream)
{
    if (n == 0) return GPK_OK;
    const size_t blocks = (n + 255) / 256;
    const unsigned grid = (unsigned)(blocks < 8192 ? blocks : 8192);
    cudaStream_t st = (cudaStream_t)stream;
    if (gpk_type_size(t) == 4)
        desc32_kernel<<<grid, 256, 0, st>>>((const uint32_t *)d_in, (uint32_t *)d_out, n, t, key_bits,
                                            inverse);
    else
        desc64_kernel<<<grid, 256, 0, st>>>((const uint64_t *)d_in, (uint64_t *)d_out, n, t, key_bits,
                                            inverse);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "descending sort: key map kernel");
    return GPK_OK;
}
