/* Descending order on host arrays: the in-place map to descending sort
 * keys and back (descending.h), over the context's threads. */
#include "descending.h"
#include "radix_internal.h"

#include <string.h>

void gpk__desc_apply_host(const gpk_ctx *ctx, gpk_type t, unsigned key_bits, const void *src, void *base,
                          size_t n, size_t stride, int inverse)
{
    const int threads = ctx && ctx->threads > 0 ? ctx->threads : 1;
    const ptrdiff_t m = (ptrdiff_t)n;
    const char *from = src ? (const char *)src : (const char *)base;
    char *to = base;
    const size_t from_stride = src ? gpk_type_size(t) : stride;
    if (gpk_type_size(t) == 4) {
#pragma omp parallel for num_threads(threads) schedule(static) if (n >= 65536)
        for (ptrdiff_t i = 0; i < m; i++) {
            uint32_t x;
            memcpy(&x, from + (size_t)i * from_stride, 4);
            x = inverse ? gpk__unmap_u32(t, gpk__desc_key32(t, key_bits, x))
                        : gpk__desc_key32(t, key_bits, gpk__map_u32(t, x));
            memcpy(to + (size_t)i * stride, &x, 4);
        }
    } else {
#pragma omp parallel for num_threads(threads) schedule(static) if (n >= 65536)
        for (ptrdiff_t i = 0; i < m; i++) {
            uint64_t x;
            memcpy(&x, from + (size_t)i * from_stride, 8);
            x = inverse ? gpk__unmap_u64(t, gpk__desc_key64(t, key_bits, x))
                        : gpk__desc_key64(t, key_bits, gpk__map_u64(t, x));
            memcpy(to + (size_t)i * stride, &x, 8);
        }
    }
}
