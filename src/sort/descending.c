/* Descending order on host arrays: the in-place map to descending sort
 * keys and back (descending.h), over the context's threads. One loop per
 * type and kind of descending map (descending.h's cases: an XOR with a
 * mask, or floats' reflection below the mapped +inf), each with its maps
 * constant. */
#include "descending.h"
#include "radix_internal.h"

#include <string.h>

/* The loops of one type over keys [lo, hi): U its bits type, W its bytes,
 * K its kind of map; DESC(m) its descending sort key of mapped key m (the
 * mask xm in scope). */
#define DEFINE_DESC_APPLY(NAME, U, W, MAP, UNMAP, K, DESC)                                         \
    static void NAME(uint64_t mask, const char *from, size_t from_stride, char *to, size_t stride, \
                     size_t lo, size_t hi, int inverse)                                            \
    {                                                                                              \
        const U xm = (U)mask;                                                                      \
        (void)xm;                                                                                  \
        if (inverse) {                                                                             \
            for (size_t i = lo; i < hi; i++) {                                                     \
                U x;                                                                               \
                memcpy(&x, from + i * from_stride, W);                                             \
                x = UNMAP(K, DESC(x));                                                             \
                memcpy(to + i * stride, &x, W);                                                    \
            }                                                                                      \
        } else {                                                                                   \
            for (size_t i = lo; i < hi; i++) {                                                     \
                U x;                                                                               \
                memcpy(&x, from + i * from_stride, W);                                             \
                x = DESC(MAP(K, x));                                                               \
                memcpy(to + i * stride, &x, W);                                                    \
            }                                                                                      \
        }                                                                                          \
    }

#define XOR_(m) ((m) ^ xm)
#define REFLECT32_(m) gpk_key_descending32(GPK_KEY_FLOAT, (m))
#define REFLECT64_(m) gpk_key_descending64(GPK_KEY_FLOAT, (m))
DEFINE_DESC_APPLY(apply_u32, uint32_t, 4, gpk_key_map32, gpk_key_unmap32, GPK_KEY_UNSIGNED, XOR_)
DEFINE_DESC_APPLY(apply_i32, uint32_t, 4, gpk_key_map32, gpk_key_unmap32, GPK_KEY_SIGNED, XOR_)
DEFINE_DESC_APPLY(apply_f32_xor, uint32_t, 4, gpk_key_map32, gpk_key_unmap32, GPK_KEY_FLOAT, XOR_)
DEFINE_DESC_APPLY(apply_f32, uint32_t, 4, gpk_key_map32, gpk_key_unmap32, GPK_KEY_FLOAT, REFLECT32_)
DEFINE_DESC_APPLY(apply_u64, uint64_t, 8, gpk_key_map64, gpk_key_unmap64, GPK_KEY_UNSIGNED, XOR_)
DEFINE_DESC_APPLY(apply_i64, uint64_t, 8, gpk_key_map64, gpk_key_unmap64, GPK_KEY_SIGNED, XOR_)
DEFINE_DESC_APPLY(apply_f64_xor, uint64_t, 8, gpk_key_map64, gpk_key_unmap64, GPK_KEY_FLOAT, XOR_)
DEFINE_DESC_APPLY(apply_f64, uint64_t, 8, gpk_key_map64, gpk_key_unmap64, GPK_KEY_FLOAT, REFLECT64_)

typedef void (*desc_apply_fn)(uint64_t mask, const char *from, size_t from_stride, char *to, size_t stride,
                              size_t lo, size_t hi, int inverse);

void gpk__desc_apply_host(const gpk_ctx *ctx, gpk_type t, unsigned key_bits, const void *src, void *base,
                          size_t n, size_t stride, int inverse)
{
    const int threads = ctx && ctx->threads > 0 ? ctx->threads : 1;
    const char *from = src ? (const char *)src : (const char *)base;
    char *to = base;
    const size_t from_stride = src ? gpk_type_size(t) : stride;
    /* descending.h's cases: key_bits b below the width reverses the low b
     * bits; else integers take ~m, floats the reflection */
    const unsigned width = 8 * (unsigned)gpk_type_size(t);
    const int part = key_bits > 0 && key_bits < width;
    const uint64_t mask = part ? ((uint64_t)1 << key_bits) - 1 : ~(uint64_t)0;
    desc_apply_fn fn;
    switch (t) {
    case GPK_U32: fn = apply_u32; break;
    case GPK_I32: fn = apply_i32; break;
    case GPK_F32: fn = part ? apply_f32_xor : apply_f32; break;
    case GPK_U64: fn = apply_u64; break;
    case GPK_I64: fn = apply_i64; break;
    case GPK_F64: fn = part ? apply_f64_xor : apply_f64; break;
    default: return;
    }
    const size_t slice = 16384;
    const ptrdiff_t slices = (ptrdiff_t)((n + slice - 1) / slice);
#pragma omp parallel for num_threads(threads) schedule(static) if (n >= 65536)
    for (ptrdiff_t c = 0; c < slices; c++) {
        const size_t lo = (size_t)c * slice, hi = n - lo < slice ? n : lo + slice;
        fn(mask, from, from_stride, to, stride, lo, hi, inverse);
    }
}
