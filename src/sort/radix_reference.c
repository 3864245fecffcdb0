/* The reference sort: a plain stable merge sort of indices by mapped key.
 * It shares nothing with the backends but the key mapping (whose own
 * correctness the tests check against the natural order of each type). */
#include "radix_internal.h"

#include <stdlib.h>
#include <string.h>

/* Whether element a goes strictly before element b. Descending: the
 * reverse of the mapped keys' order, except that NaNs (nan[] not NULL)
 * come after every other key and in ascending order among themselves. */
static int before(const uint64_t *key, const unsigned char *nan, int descending, size_t a, size_t b)
{
    if (!descending) return key[a] < key[b];
    if (nan && nan[a] != nan[b]) return nan[b];
    if (nan && nan[a]) return key[a] < key[b];
    return key[a] > key[b];
}

static void merge_sort(size_t *idx, size_t *tmp, const uint64_t *key, const unsigned char *nan,
                       int descending, size_t n)
{
    if (n < 2) return;
    size_t half = n / 2;
    merge_sort(idx, tmp, key, nan, descending, half);
    merge_sort(idx + half, tmp, key, nan, descending, n - half);
    size_t i = 0, j = half, k = 0;
    while (i < half && j < n) tmp[k++] = before(key, nan, descending, idx[j], idx[i]) ? idx[j++] : idx[i++];
    while (i < half) tmp[k++] = idx[i++];
    while (j < n) tmp[k++] = idx[j++];
    memcpy(idx, tmp, n * sizeof *idx);
}

static gpk_status permute(void *data, size_t width, const size_t *idx, size_t n)
{
    char *copy = malloc(n * width);
    if (!copy) return GPK_ENOMEM;
    memcpy(copy, data, n * width);
    for (size_t j = 0; j < n; j++) memcpy((char *)data + j * width, copy + idx[j] * width, width);
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
    size_t *idx = malloc(n * sizeof *idx), *tmp = malloc(n * sizeof *tmp);
    uint64_t *key = malloc(n * sizeof *key);
    /* NaNs, told by the value itself: descending full-width floats only */
    const int floats = key_type == GPK_F32 || key_type == GPK_F64;
    unsigned char *nan = descending && floats && (key_bits == 0 || key_bits == 8 * kw) ? malloc(n) : NULL;
    gpk_status s = GPK_ENOMEM;
    if (!idx || !tmp || !key || (descending && floats && (key_bits == 0 || key_bits == 8 * kw) && !nan))
        goto done;
    for (size_t i = 0; i < n; i++) {
        idx[i] = i;
        key[i] = gpk__mapped_key_at(key_type, keys, i, mask);
        if (nan) {
            if (key_type == GPK_F32) {
                float f;
                memcpy(&f, (const char *)keys + 4 * i, 4);
                nan[i] = f != f;
            } else {
                double d;
                memcpy(&d, (const char *)keys + 8 * i, 8);
                nan[i] = d != d;
            }
        }
    }
    merge_sort(idx, tmp, key, nan, descending, n);
    s = permute(keys, kw, idx, n);
    if (s == GPK_OK && value_width) s = permute(values, value_width, idx, n);
    if (s == GPK_OK && sigma)
        for (size_t j = 0; j < n; j++) sigma[j] = (uint32_t)idx[j];
done:
    free(nan);
    free(idx);
    free(tmp);
    free(key);
    return s;
}
