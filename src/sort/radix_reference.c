/* The reference sort: a plain stable merge sort of (mapped key, index)
 * elements. It shares nothing with the backends but the key mapping (whose own
 * correctness the tests check against the natural order of each type). */
#include "radix_internal.h"

#include <stdlib.h>
#include <string.h>

/* One element: its order key and its index. Descending, ord is the
 * reversed mapped key and NaNs take the class bit (ORD_NAN in the index
 * word), so that every order here is ascending (class, ord). */
typedef struct {
    uint64_t ord;
    uint64_t idx; /* the input index; bit 63: the element is a NaN (descending) */
} ref_elem;

#define ORD_NAN ((uint64_t)1 << 63)

/* Whether a goes strictly before b. */
static int before(const ref_elem *a, const ref_elem *b)
{
    const uint64_t ca = a->idx & ORD_NAN, cb = b->idx & ORD_NAN;
    return ca != cb ? ca < cb : a->ord < b->ord;
}

/* Stable: a later element passes an earlier one only when strictly before
 * it. Top down, so that the levels below the cache's size stay in it. The
 * sorted a[0, n) lands in a, or in b when into_b; the other is scratch. */
enum { RUN = 16 };
static void merge_sort(ref_elem *a, ref_elem *b, size_t n, int into_b)
{
    if (n <= RUN) {
        for (size_t i = 1; i < n; i++) {
            const ref_elem x = a[i];
            size_t j = i;
            for (; j > 0 && before(&x, &a[j - 1]); j--) a[j] = a[j - 1];
            a[j] = x;
        }
        if (into_b) memcpy(b, a, n * sizeof *a);
        return;
    }
    const size_t half = n / 2;
    merge_sort(a, b, half, !into_b);
    merge_sort(a + half, b + half, n - half, !into_b);
    const ref_elem *src = into_b ? a : b;
    ref_elem *dst = into_b ? b : a;
    size_t i = 0, j = half, k = 0;
    while (i < half && j < n) dst[k++] = before(&src[j], &src[i]) ? src[j++] : src[i++];
    while (i < half) dst[k++] = src[i++];
    while (j < n) dst[k++] = src[j++];
}

/* data[j] = its old element at sorted[j]'s index, for widths 4 and 8 (keys,
 * values). */
static gpk_status permute(void *data, size_t width, const ref_elem *sorted, size_t n)
{
    void *copy = malloc(n * width);
    if (!copy) return GPK_ENOMEM;
    memcpy(copy, data, n * width);
    if (width == 4)
        for (size_t j = 0; j < n; j++)
            ((uint32_t *)data)[j] = ((const uint32_t *)copy)[sorted[j].idx & ~ORD_NAN];
    else
        for (size_t j = 0; j < n; j++)
            ((uint64_t *)data)[j] = ((const uint64_t *)copy)[sorted[j].idx & ~ORD_NAN];
    free(copy);
    return GPK_OK;
}

gpk_status gpk_sort_reference(gpk_type key_type, void *keys, size_t value_width, void *values,
                              uint32_t *sigma, size_t n, unsigned key_bits)
{
    return gpk_sort_reference_ordered(key_type, keys, value_width, values, sigma, n, key_bits, 0);
}

gpk_status gpk_sort_reference_ordered(gpk_type key_type, void *keys, size_t value_width, void *values,
                                      uint32_t *sigma, size_t n, unsigned key_bits, int descending)
{
    size_t kw = gpk_type_size(key_type);
    if (kw == 0) return GPK_EINVAL;
    if (value_width != 0 && value_width != 4 && value_width != 8) return GPK_EINVAL;
    key_bits = gpk__key_bits(key_bits, kw);
    if (key_bits > 8 * kw) return GPK_EINVAL;
    if (descending != 0 && descending != 1) return GPK_EINVAL;
    if (n == 0) return GPK_OK;
    if (!keys || (value_width && !values)) return GPK_EINVAL;
    if (sigma && n > UINT32_MAX) return GPK_EINVAL;

    uint64_t mask = (key_bits == 0 || key_bits == 64) ? ~0ull : ((1ull << key_bits) - 1);
    ref_elem *elems = malloc(n * sizeof *elems), *spare = malloc(n * sizeof *spare);
    /* NaNs, told by the value itself: descending full-width floats only */
    const int floats = key_type == GPK_F32 || key_type == GPK_F64;
    const int nans = descending && floats && (key_bits == 0 || key_bits == 8 * kw);
    gpk_status s = GPK_ENOMEM;
    if (!elems || !spare) goto done;
    for (size_t i = 0; i < n; i++) {
        const uint64_t key = gpk__mapped_key_at(key_type, keys, i, mask);
        int nan = 0;
        if (nans && key_type == GPK_F32) {
            float f;
            memcpy(&f, (const char *)keys + 4 * i, 4);
            nan = f != f;
        } else if (nans) {
            double d;
            memcpy(&d, (const char *)keys + 8 * i, 8);
            nan = d != d;
        }
        /* descending: NaNs last, ascending among themselves */
        elems[i].ord = descending && !nan ? ~key : key;
        elems[i].idx = nan ? i | ORD_NAN : i;
    }
    merge_sort(elems, spare, n, 0);
    s = permute(keys, kw, elems, n);
    if (s == GPK_OK && value_width) s = permute(values, value_width, elems, n);
    if (s == GPK_OK && sigma)
        for (size_t j = 0; j < n; j++) sigma[j] = (uint32_t)(elems[j].idx & ~ORD_NAN);
done:
    free(elems);
    free(spare);
    return s;
}
