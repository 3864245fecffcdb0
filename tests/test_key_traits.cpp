/* core/key_traits.h: the type list agrees with the public API, the maps
 * are the ones gpk/sort.h documents (written out here with their literal
 * constants, as the oracle), the maps as data (Twiddle) equal the maps by
 * kind, and the descending sort key reverses the order with NaNs last.
 * Built as C++ so the Twiddle templates the CUDA sources use are checked
 * on the host. */
#include "core/key_traits.h"
#include "gpk/gen.h"
#include "testutil.h"

#include <string.h>

/* gpk/sort.h: signed flip the sign bit; floats flip all bits of negative
 * values and the sign bit of the others, then subtract 2^23-1 / 2^52-1. */
static uint32_t doc_map32(gpk_type t, uint32_t x)
{
    if (t == GPK_I32) return x ^ 0x80000000u;
    if (t == GPK_F32) return (x ^ ((x >> 31) ? 0xFFFFFFFFu : 0x80000000u)) - 0x007FFFFFu;
    return x;
}
static uint64_t doc_map64(gpk_type t, uint64_t x)
{
    if (t == GPK_I64) return x ^ 0x8000000000000000ull;
    if (t == GPK_F64) return (x ^ ((x >> 63) ? ~0ull : 0x8000000000000000ull)) - 0x000FFFFFFFFFFFFFull;
    return x;
}

/* Values where maps go wrong: around the sign bit, zero, the rotation
 * constant, infinities and NaNs, then random ones. */
static uint64_t sample(gpk_rng *r, int i)
{
    static const uint64_t edge[] = {0,
                                    1,
                                    0x7FFFFFull,
                                    0x800000ull,
                                    0x7F800000ull,
                                    0x7F800001ull,
                                    0x7FC00000ull,
                                    0x7FFFFFFFull,
                                    0x80000000ull,
                                    0x80000001ull,
                                    0xFF800000ull,
                                    0xFF800001ull,
                                    0xFFC00000ull,
                                    0xFFFFFFFFull,
                                    0x000FFFFFFFFFFFFFull,
                                    0x0010000000000000ull,
                                    0x7FF0000000000000ull,
                                    0x7FF0000000000001ull,
                                    0x7FF8000000000000ull,
                                    0x7FFFFFFFFFFFFFFFull,
                                    0x8000000000000000ull,
                                    0x8000000000000001ull,
                                    0xFFF0000000000000ull,
                                    0xFFF0000000000001ull,
                                    0xFFF8000000000000ull,
                                    0xFFFFFFFFFFFFFFFFull};
    const int ne = (int)(sizeof edge / sizeof edge[0]);
    return i < ne ? edge[i] : gpk_rng_next(r);
}

int main(void)
{
    const uint64_t seed = tu_seed();
    gpk_rng r;
    gpk_rng_seed(&r, seed);

    /* The list: in gpk_type order, names and sizes as the API gives them,
     * the bits type as wide as the C type. */
    int at = 0;
#define CHECK_ENTRY(T, N, B, U, C, K)                                                            \
    TU_CHECK((int)T == at, #N " at %d", at);                                                     \
    TU_CHECK(gpk_type_size(T) == B && gpk_key_bytes(T) == B && sizeof(U) == B && sizeof(C) == B, \
             #N " width");                                                                       \
    TU_CHECK(strcmp(gpk_type_name(T), #N) == 0, #N " name %s", gpk_type_name(T));                \
    TU_CHECK(gpk_key_kind(T) == K, #N " kind");                                                  \
    at++;
    GPK_KEY_TYPES(CHECK_ENTRY)
#undef CHECK_ENTRY
    TU_CHECK(at == 6, "%d types", at);

    TU_CHECK(GPK_KEY_INF_MAPPED32 == doc_map32(GPK_F32, 0x7F800000u), "f32 +inf mapped");
    TU_CHECK(GPK_KEY_INF_MAPPED64 == doc_map64(GPK_F64, 0x7FF0000000000000ull), "f64 +inf mapped");

    int bad_map = 0, bad_unmap = 0, bad_twiddle = 0, bad_desc = 0;
    for (int i = 0; i < 200000; i++) {
        const uint64_t v = sample(&r, i), w = sample(&r, 1000);
        for (int ti = 0; ti < 6; ti++) {
            const gpk_type t = (gpk_type)ti;
            const int kind = gpk_key_kind(t);
            if (gpk_key_bytes(t) == 4) {
                const uint32_t x = (uint32_t)v, y = (uint32_t)w, m = gpk__map_u32(t, x);
                bad_map += m != doc_map32(t, x) || m != gpk_key_map32(kind, x);
                bad_unmap += gpk__unmap_u32(t, m) != x;
                bad_twiddle += gpk_key::twiddle(gpk_key::twiddle_map<uint32_t>(t), x) != m ||
                    gpk_key::twiddle(gpk_key::twiddle_unmap<uint32_t>(t), m) != x;
                const uint32_t n = gpk__map_u32(t, y), dm = gpk_key_descending32(kind, m),
                               dn = gpk_key_descending32(kind, n);
                const bool nan_m = kind == GPK_KEY_FLOAT && m > GPK_KEY_INF_MAPPED32;
                const bool nan_n = kind == GPK_KEY_FLOAT && n > GPK_KEY_INF_MAPPED32;
                bad_desc += gpk_key_descending32(kind, dm) != m || gpk__descending_u32(t, m) != dm;
                if (!nan_m && !nan_n) bad_desc += (m < n) != (dm > dn);
                else if (nan_m != nan_n) bad_desc += (dm > dn) != nan_m;
            } else {
                const uint64_t m = gpk__map_u64(t, v), n = gpk__map_u64(t, w);
                bad_map += m != doc_map64(t, v) || m != gpk_key_map64(kind, v);
                bad_unmap += gpk__unmap_u64(t, m) != v;
                bad_twiddle += gpk_key::twiddle(gpk_key::twiddle_map<uint64_t>(t), v) != m ||
                    gpk_key::twiddle(gpk_key::twiddle_unmap<uint64_t>(t), m) != v;
                const uint64_t dm = gpk_key_descending64(kind, m), dn = gpk_key_descending64(kind, n);
                const bool nan_m = kind == GPK_KEY_FLOAT && m > GPK_KEY_INF_MAPPED64;
                const bool nan_n = kind == GPK_KEY_FLOAT && n > GPK_KEY_INF_MAPPED64;
                bad_desc += gpk_key_descending64(kind, dm) != m || gpk__descending_u64(t, m) != dm;
                if (!nan_m && !nan_n) bad_desc += (m < n) != (dm > dn);
                else if (nan_m != nan_n) bad_desc += (dm > dn) != nan_m;
            }
        }
    }
    TU_CHECK(bad_map == 0, "%d maps differ from gpk/sort.h's", bad_map);
    TU_CHECK(bad_unmap == 0, "%d unmaps do not invert", bad_unmap);
    TU_CHECK(bad_twiddle == 0, "%d Twiddle maps differ", bad_twiddle);
    TU_CHECK(bad_desc == 0, "%d descending keys out of order", bad_desc);

    return tu_finish("key_traits");
}
