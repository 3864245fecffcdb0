/* The reference segmented sort: each segment by a plain stable merge sort
 * of indices by sort key, one segment after the other. It shares nothing
 * with the backends but the key maps and the segment checks. */
#include "segmented_internal.h"

#include <stdlib.h>
#include <string.h>

static void merge_sort(size_t *idx, size_t *tmp, const uint64_t *key, size_t n)
{
    if (n < 2) return;
    const size_t half = n / 2;
    merge_sort(idx, tmp, key, half);
    merge_sort(idx + half, tmp, key, n - half);
    size_t i = 0, j = half, k = 0;
    while (i < half && j < n) tmp[k++] = key[idx[j]] < key[idx[i]] ? idx[j++] : idx[i++];
    while (i < half) tmp[k++] = idx[i++];
    while (j < n) tmp[k++] = idx[j++];
    memcpy(idx, tmp, n * sizeof *idx);
}

/* data[j] = copy[idx[j]] for the len entries of width w at data. */
static void gather(void *data, void *copy, size_t w, const size_t *idx, size_t len)
{
    memcpy(copy, data, len * w);
    for (size_t j = 0; j < len; j++) memcpy((char *)data + j * w, (char *)copy + idx[j] * w, w);
}

gpk_status gpk_sort_segmented_reference(gpk_type key_type, void *keys, size_t value_width, void *values,
                                        uint32_t *sigma, size_t n, const gpk_segments *segs, int descending)
{
    const size_t kw = gpk_type_size(key_type);
    if (kw == 0) return GPK_EINVAL;
    if (value_width != 0 && value_width != 4 && value_width != 8) return GPK_EINVAL;
    if (descending != 0 && descending != 1) return GPK_EINVAL;
    uint64_t longest, covered;
    GPK_CHECK(gpk__seg_check(NULL, segs, n, &longest, &covered));
    if (covered == 0) return GPK_OK;
    if (!keys || (value_width && !values)) return GPK_EINVAL;
    if (sigma && longest > UINT32_MAX) return GPK_EINVAL;
    size_t *idx = malloc(longest * sizeof *idx), *tmp = malloc(longest * sizeof *tmp);
    uint64_t *key = malloc(longest * sizeof *key);
    char *copy = malloc(longest * 8);
    gpk_status s = GPK_ENOMEM;
    if (!idx || !tmp || !key || !copy) goto done;
    for (size_t i = 0; i < segs->count; i++) {
        uint64_t b, e;
        gpk__seg_bounds(segs, i, &b, &e);
        const size_t len = (size_t)(e - b);
        char *k = (char *)keys + b * kw;
        for (size_t j = 0; j < len; j++) {
            idx[j] = j;
            const uint64_t m = gpk__mapped_key_at(key_type, k, j, ~0ull);
            key[j] = kw == 4 ? gpk__seg_order32(key_type, descending, (uint32_t)m)
                             : gpk__seg_order64(key_type, descending, m);
        }
        merge_sort(idx, tmp, key, len);
        gather(k, copy, kw, idx, len);
        if (value_width) gather((char *)values + b * value_width, copy, value_width, idx, len);
        if (sigma)
            for (size_t j = 0; j < len; j++) sigma[b + j] = (uint32_t)idx[j];
    }
    s = GPK_OK;
done:
    free(idx);
    free(tmp);
    free(key);
    free(copy);
    return s;
}
