/* The key types in one place: the list of the six types and the
 * order-preserving maps of their keys to unsigned bits ("mapped keys",
 * include/gpk/sort.h), the one definition every backend uses.
 *
 * Valid as C11, as CUDA C++ (every function is __host__ __device__) and as
 * OpenCL C: the OpenCL backend puts this file in front of radix.cl when it
 * builds its program (the build embeds both as strings), so the kernels'
 * maps are these. Under OpenCL only the maps by kind are defined (no
 * gpk_type there).
 *
 * A new key type: a value in gpk_type (include/gpk/gpk.h), one X line
 * below, and a kind of map here if it is none of the three. */
#ifndef GPK_KEY_TRAITS_H
#define GPK_KEY_TRAITS_H

#ifdef __OPENCL_VERSION__
typedef uint gpk_ukey32;
typedef ulong gpk_ukey64;
#define GPK_KEY_FN
#else
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "gpk/gpk.h"
typedef uint32_t gpk_ukey32;
typedef uint64_t gpk_ukey64;
#ifdef __CUDACC__
#define GPK_KEY_FN static __host__ __device__ __forceinline__
#else
#define GPK_KEY_FN static inline
#endif
#endif

/* The kinds of map: unsigned keys are their own mapped form; signed keys
 * flip the sign bit; floats flip every bit of negative values and the sign
 * bit of the others, then subtract 2^23-1 (f32) or 2^52-1 (f64) modulo
 * 2^32 / 2^64, a rotation that moves the NaNs with the sign bit set from
 * the bottom to the top, so every NaN sorts last. */
#define GPK_KEY_UNSIGNED 0
#define GPK_KEY_SIGNED 1
#define GPK_KEY_FLOAT 2

#define GPK_KEY_SIGN32 ((gpk_ukey32)1 << 31)
#define GPK_KEY_SIGN64 ((gpk_ukey64)1 << 63)
#define GPK_KEY_ROT32 (((gpk_ukey32)1 << 23) - 1)
#define GPK_KEY_ROT64 (((gpk_ukey64)1 << 52) - 1)
/* The mapped form of +inf (sign clear, exponent all ones): every NaN maps
 * above it, every other float below. */
#define GPK_KEY_INF_MAPPED32 ((gpk_ukey32)(GPK_KEY_SIGN32 | ((gpk_ukey32)0xFF << 23)) - GPK_KEY_ROT32)
#define GPK_KEY_INF_MAPPED64 ((gpk_ukey64)(GPK_KEY_SIGN64 | ((gpk_ukey64)0x7FF << 52)) - GPK_KEY_ROT64)

/* The maps of one width, W bits (32 or 64) of bits type U: defines
 *   gpk_key_mapW(kind, x):   the mapped form of key bits x;
 *   gpk_key_unmapW(kind, m): its inverse;
 *   gpk_key_descendingW(kind, m): the sort key of mapped key m for the
 *     descending order: a key whose ascending order is the reverse of m's,
 *     except that floats' NaNs stay at the top in their ascending order
 *     (NaN last either way). Its own inverse. */
#define GPK_KEY_MAPS_(W, U, SIGN, ROT, INF_MAPPED)                                     \
    GPK_KEY_FN U gpk_key_map##W(int kind, U x)                                         \
    {                                                                                  \
        if (kind == GPK_KEY_SIGNED) return x ^ SIGN;                                   \
        if (kind == GPK_KEY_FLOAT) return (x ^ ((x >> (W - 1)) ? ~(U)0 : SIGN)) - ROT; \
        return x;                                                                      \
    }                                                                                  \
    GPK_KEY_FN U gpk_key_unmap##W(int kind, U m)                                       \
    {                                                                                  \
        if (kind == GPK_KEY_SIGNED) return m ^ SIGN;                                   \
        if (kind == GPK_KEY_FLOAT) {                                                   \
            const U s = m + ROT;                                                       \
            return s ^ ((s >> (W - 1)) ? SIGN : ~(U)0);                                \
        }                                                                              \
        return m;                                                                      \
    }                                                                                  \
    GPK_KEY_FN U gpk_key_descending##W(int kind, U m)                                  \
    {                                                                                  \
        if (kind == GPK_KEY_FLOAT) return m <= INF_MAPPED ? INF_MAPPED - m : m;        \
        return ~m;                                                                     \
    }
GPK_KEY_MAPS_(32, gpk_ukey32, GPK_KEY_SIGN32, GPK_KEY_ROT32, GPK_KEY_INF_MAPPED32)
GPK_KEY_MAPS_(64, gpk_ukey64, GPK_KEY_SIGN64, GPK_KEY_ROT64, GPK_KEY_INF_MAPPED64)
#undef GPK_KEY_MAPS_

#ifndef __OPENCL_VERSION__

/* The tables below are macros of one case a line: kept as written. */
// clang-format off
/* X(type, name, bytes, bits type, C type, kind) for each key type, in the
 * order of gpk_type: dispatch on the type is generated from this list. */
#define GPK_KEY_TYPES(X)                                        \
    X(GPK_U32, u32, 4, uint32_t, uint32_t, GPK_KEY_UNSIGNED)    \
    X(GPK_I32, i32, 4, uint32_t, int32_t, GPK_KEY_SIGNED)       \
    X(GPK_F32, f32, 4, uint32_t, float, GPK_KEY_FLOAT)          \
    X(GPK_U64, u64, 8, uint64_t, uint64_t, GPK_KEY_UNSIGNED)    \
    X(GPK_I64, i64, 8, uint64_t, int64_t, GPK_KEY_SIGNED)       \
    X(GPK_F64, f64, 8, uint64_t, double, GPK_KEY_FLOAT)

/* The kind of map of type t (unknown types: unsigned). */
GPK_KEY_FN int gpk_key_kind(gpk_type t)
{
#define GPK_KEY_KIND_CASE_(T, N, B, U, C, K) \
    case T: return K;
    switch (t) { GPK_KEY_TYPES(GPK_KEY_KIND_CASE_) }
#undef GPK_KEY_KIND_CASE_
    return GPK_KEY_UNSIGNED;
}
/* Bytes of a key of type t (unknown types: 0). */
GPK_KEY_FN unsigned gpk_key_bytes(gpk_type t)
{
#define GPK_KEY_BYTES_CASE_(T, N, B, U, C, K) \
    case T: return B;
    switch (t) { GPK_KEY_TYPES(GPK_KEY_BYTES_CASE_) }
#undef GPK_KEY_BYTES_CASE_
    return 0;
}

/* The maps by type, for code that holds a gpk_type: one case per type
 * with its kind a constant (a switch on the type in a loop then compiles
 * as one loop per type; a kind looked up first does not), identity for
 * types of the other width. */
#define GPK_KEY_BY_TYPE_(FN, W, T, B, K, v) \
    case T: return B == W ? FN(K, v) : v;
#define GPK_KEY_MAP32_(T, N, B, U, C, K) GPK_KEY_BY_TYPE_(gpk_key_map32, 4, T, B, K, x)
#define GPK_KEY_UNMAP32_(T, N, B, U, C, K) GPK_KEY_BY_TYPE_(gpk_key_unmap32, 4, T, B, K, m)
#define GPK_KEY_MAP64_(T, N, B, U, C, K) GPK_KEY_BY_TYPE_(gpk_key_map64, 8, T, B, K, x)
#define GPK_KEY_UNMAP64_(T, N, B, U, C, K) GPK_KEY_BY_TYPE_(gpk_key_unmap64, 8, T, B, K, m)
#define GPK_KEY_DESC32_(T, N, B, U, C, K) \
    case T: return B == 4 ? gpk_key_descending32(K, m) : ~m;
#define GPK_KEY_DESC64_(T, N, B, U, C, K) \
    case T: return B == 8 ? gpk_key_descending64(K, m) : ~m;
/* gpk__map_uW, gpk__unmap_uW and gpk__descending_uW (the last: types of
 * the other width give ~m) for W = 32 and 64. */
#define GPK_KEY_TYPE_MAPS_(W)                                                          \
    GPK_KEY_FN uint##W##_t gpk__map_u##W(gpk_type t, uint##W##_t x)                    \
    {                                                                                  \
        switch (t) { GPK_KEY_TYPES(GPK_KEY_MAP##W##_) }                                \
        return x;                                                                      \
    }                                                                                  \
    GPK_KEY_FN uint##W##_t gpk__unmap_u##W(gpk_type t, uint##W##_t m)                  \
    {                                                                                  \
        switch (t) { GPK_KEY_TYPES(GPK_KEY_UNMAP##W##_) }                              \
        return m;                                                                      \
    }                                                                                  \
    GPK_KEY_FN uint##W##_t gpk__descending_u##W(gpk_type t, uint##W##_t m)             \
    {                                                                                  \
        switch (t) { GPK_KEY_TYPES(GPK_KEY_DESC##W##_) }                               \
        return ~m;                                                                     \
    }
GPK_KEY_TYPE_MAPS_(32)
GPK_KEY_TYPE_MAPS_(64)
#undef GPK_KEY_TYPE_MAPS_
#undef GPK_KEY_BY_TYPE_
#undef GPK_KEY_DESC32_
#undef GPK_KEY_DESC64_
// clang-format on
#undef GPK_KEY_MAP32_
#undef GPK_KEY_UNMAP32_
#undef GPK_KEY_MAP64_
#undef GPK_KEY_UNMAP64_

/* Mapped key i of an array of keys of type t (4 or 8 bytes wide, any
 * alignment), masked. */
GPK_KEY_FN uint64_t gpk__mapped_key_at(gpk_type t, const void *keys, size_t i, uint64_t mask)
{
    if (gpk_key_bytes(t) == 4) {
        uint32_t x;
        memcpy(&x, (const char *)keys + 4 * i, 4);
        return gpk__map_u32(t, x) & mask;
    }
    uint64_t x;
    memcpy(&x, (const char *)keys + 8 * i, 8);
    return gpk__map_u64(t, x) & mask;
}

#ifdef __cplusplus
/* The maps as data, for kernels that take the map as an argument instead
 * of switching on the type: f(x) = ((x + pre) ^ (the top bit of x + pre ?
 * if_set : if_clear)) + post, K the bits type (uint32_t or uint64_t). Each
 * map above and its inverse is of this form. */
namespace gpk_key {

template <class K> struct Twiddle {
    K pre, if_clear, if_set, post;
    /* The descending order folded in (0: none): m -> m <= lim ? lim - m :
     * m, gpk_key_descending's step (its own inverse), applied to the input
     * (lim_in: an unmap's) or to the result (lim_out: a map's). */
    K lim_in, lim_out;
};

template <class K> GPK_KEY_FN K twiddle_limit(K m, K lim) { return m <= lim ? lim - m : m; }

template <class K> GPK_KEY_FN K twiddle(const Twiddle<K> &t, K x)
{
    if (t.lim_in) x = twiddle_limit(x, t.lim_in);
    const K y = x + t.pre;
    const K top = y >> (sizeof(K) * 8 - 1);
    const K r = (y ^ (top ? t.if_set : t.if_clear)) + t.post;
    return t.lim_out ? twiddle_limit(r, t.lim_out) : r;
}

template <class K> GPK_KEY_FN K twiddle_sign() { return (K)1 << (sizeof(K) * 8 - 1); }
template <class K> GPK_KEY_FN K twiddle_rot() { return sizeof(K) == 4 ? (K)GPK_KEY_ROT32 : (K)GPK_KEY_ROT64; }

/* gpk_key_map32/64 of type's kind as a Twiddle (inverse: gpk_key_unmap32/64).
 * The signed maps are their own inverse; the float map's inverse adds
 * the rotation first and swaps the two masks. */
template <class K> GPK_KEY_FN Twiddle<K> twiddle_of(gpk_type type, bool inverse)
{
    const int kind = gpk_key_kind(type);
    Twiddle<K> t = {0, 0, 0, 0};
    if (kind == GPK_KEY_SIGNED) {
        t.if_clear = twiddle_sign<K>();
        t.if_set = twiddle_sign<K>();
    } else if (kind == GPK_KEY_FLOAT) {
        const K all = (K) ~(K)0;
        t.pre = inverse ? twiddle_rot<K>() : 0;
        t.if_clear = inverse ? all : twiddle_sign<K>();
        t.if_set = inverse ? twiddle_sign<K>() : all;
        t.post = inverse ? 0 : (K)(0 - twiddle_rot<K>());
    }
    return t;
}

template <class K> GPK_KEY_FN Twiddle<K> twiddle_map(gpk_type type) { return twiddle_of<K>(type, false); }
template <class K> GPK_KEY_FN Twiddle<K> twiddle_unmap(gpk_type type) { return twiddle_of<K>(type, true); }

/* The limit of the descending step for mapped keys of type with key_bits
 * significant bits (0 or the width: all): 2^key_bits - 1 (the XOR of
 * descending.h's gpk__desc_key32/64 for keys below it), else
 * gpk_key_descending's (~m for integers, the mapped +inf for floats so that
 * NaNs stay last). */
template <class K> GPK_KEY_FN K twiddle_desc_limit(gpk_type type, unsigned key_bits)
{
    if (key_bits > 0 && key_bits < 8 * sizeof(K)) return ((K)1 << key_bits) - 1;
    if (gpk_key_kind(type) == GPK_KEY_FLOAT)
        return sizeof(K) == 4 ? (K)GPK_KEY_INF_MAPPED32 : (K)GPK_KEY_INF_MAPPED64;
    return (K) ~(K)0;
}

/* twiddle_map / twiddle_unmap with the descending order folded in when desc. */
template <class K> GPK_KEY_FN Twiddle<K> twiddle_map_ordered(gpk_type type, bool desc, unsigned key_bits)
{
    Twiddle<K> t = twiddle_map<K>(type);
    if (desc) t.lim_out = twiddle_desc_limit<K>(type, key_bits);
    return t;
}
template <class K> GPK_KEY_FN Twiddle<K> twiddle_unmap_ordered(gpk_type type, bool desc, unsigned key_bits)
{
    Twiddle<K> t = twiddle_unmap<K>(type);
    if (desc) t.lim_in = twiddle_desc_limit<K>(type, key_bits);
    return t;
}

} // namespace gpk_key
#endif /* __cplusplus */

#endif /* !__OPENCL_VERSION__ */
#endif
