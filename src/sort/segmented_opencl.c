/* Segmented sorts on a backend without a segmented kernel of its own (the
 * OpenCL backend): two stable sorts of all the covered elements at once
 * through the backend's plain radix sort, LSD style:
 *   1. (key, slot) pairs by key, in the asked order;
 *   2. (segment, slot) pairs by segment, stably, in the order of 1,
 * which leaves the slots ordered by (segment, key) with equal keys in
 * input order. The slots number the covered elements segment after
 * segment, so segment i's sorted slots land where its slots were, and
 * each goes back to the segment's own positions. Nothing in the arrays
 * changes before both sorts have succeeded. */
#include "segmented_internal.h"

#include <stdlib.h>
#include <string.h>

/* Entry j of an array of u32 (w == 4) or u64 entries. */
static uint64_t at(const void *a, unsigned w, size_t j)
{
    return w == 4 ? ((const uint32_t *)a)[j] : ((const uint64_t *)a)[j];
}
static void put(void *a, unsigned w, size_t j, uint64_t x)
{
    if (w == 4) ((uint32_t *)a)[j] = (uint32_t)x;
    else ((uint64_t *)a)[j] = x;
}

gpk_status gpk__seg_sort_by_two_sorts(gpk_ctx *ctx, const gpk_seg_job *job)
{
    const gpk_segments *S = &job->segs;
    const size_t m = (size_t)job->covered, count = S->count, kw = job->key_width, vw = job->value_width;
    if (m < 2) {
        if (job->sigma)
            for (size_t i = 0; i < count; i++) {
                uint64_t b, e;
                gpk__seg_bounds(S, i, &b, &e);
                if (e > b) job->sigma[b] = 0;
            }
        return GPK_OK;
    }
    const unsigned iw = m <= UINT32_MAX ? 4 : 8;                   /* slot numbers */
    const unsigned sw = count <= UINT32_MAX ? 4 : 8;               /* segment numbers */
    uint64_t *pos = malloc(m * sizeof *pos);                       /* slot -> position in the arrays */
    uint64_t *start = malloc((count ? count : 1) * sizeof *start); /* segment -> its first slot */
    void *seg = malloc(m * sw), *sid = malloc(m * sw), *idx = malloc(m * iw);
    char *ck = malloc(m * kw), *orig = malloc(m * kw), *cv = vw ? malloc(m * vw) : NULL;
    gpk_status s = GPK_OK;
    if (!pos || !start || !seg || !sid || !idx || !ck || !orig || (vw && !cv)) {
        s = gpk__fail(ctx, GPK_ENOMEM, "segmented sort: no memory for the %zu covered elements' copies", m);
        goto done;
    }
    size_t slot = 0;
    for (size_t i = 0; i < count; i++) {
        uint64_t b, e;
        gpk__seg_bounds(S, i, &b, &e);
        start[i] = slot;
        for (uint64_t p = b; p < e; p++, slot++) {
            pos[slot] = p;
            put(seg, sw, slot, i);
            put(idx, iw, slot, slot);
            memcpy(orig + slot * kw, (const char *)job->keys + p * kw, kw);
        }
    }
    memcpy(ck, orig, m * kw);
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    o.algorithm = GPK_SORT_RADIX;
    o.descending = job->descending;
    const gpk_type it = iw == 4 ? GPK_U32 : GPK_U64, st = sw == 4 ? GPK_U32 : GPK_U64;
    s = gpk_sort_pairs(ctx, job->key_type, ck, it, idx, m, &o);
    if (s != GPK_OK) goto done;
    for (size_t j = 0; j < m; j++) put(sid, sw, j, at(seg, sw, (size_t)at(idx, iw, j)));
    o.descending = 0;
    s = gpk_sort_pairs(ctx, st, sid, it, idx, m, &o);
    if (s != GPK_OK) goto done;
    /* slot j belongs to segment seg[j] and receives the element of slot idx[j] */
    if (vw)
        for (size_t j = 0; j < m; j++) memcpy(cv + j * vw, (const char *)job->values + pos[j] * vw, vw);
    for (size_t j = 0; j < m; j++) {
        const size_t from = (size_t)at(idx, iw, j);
        memcpy((char *)job->keys + pos[j] * kw, orig + from * kw, kw);
        if (vw) memcpy((char *)job->values + pos[j] * vw, cv + from * vw, vw);
        if (job->sigma) job->sigma[pos[j]] = (uint32_t)(from - start[at(seg, sw, j)]);
    }
done:
    free(pos);
    free(start);
    free(seg);
    free(sid);
    free(idx);
    free(ck);
    free(orig);
    free(cv);
    return s;
}
