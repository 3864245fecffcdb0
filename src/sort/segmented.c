/* Segmented sorts: argument checks, dispatch, and the CPU backend.
 *
 * CPU plan, by segment length L (thresholds in gpk_segmented_opts):
 *   L < 2: nothing to sort (sigma gets 0);
 *   L < large_min: one thread sorts the whole segment in its own buffers
 *     (insertion sort up to SEG_INSERTION_MAX keys, else an LSD radix sort
 *     of 8-bit digits that skips the digits all keys share), the segments
 *     spread over the threads with dynamic scheduling, the longer ones
 *     (> SEG_MEDIUM_MIN keys) first so that no long segment starts last;
 *   L >= large_min: the full parallel radix sort of radix_cpu.c, one such
 *     segment after the other, every thread on each.
 * large_min's default gives a segment every thread only when it holds a
 * large share of the work: with fewer threads than segments, sorting
 * whole segments side by side needs no synchronisation at all. */
#include "radix_internal.h"
#include "sort_backend.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

enum {
    SEG_INSERTION_MAX = 32,     /* below, insertion sort beats counting 256 digits */
    SEG_MEDIUM_MIN = 4096,      /* segments longer than this are dealt out first, one at a time */
    SEG_LARGE_MIN_LO = 1 << 16, /* the default large_min: at least this, */
    SEG_LARGE_MIN_HI = 1 << 22  /* at most this (bounds the per-thread buffers) */
};

/* ---- segment checks -------------------------------------------------- */

static int cmp_begin(const void *a, const void *b)
{
    const uint64_t x = ((const uint64_t *)a)[0], y = ((const uint64_t *)b)[0];
    return x < y ? -1 : x > y;
}

static gpk_status seg_fail(gpk_ctx *ctx, gpk_status s, const char *msg, size_t i, uint64_t a, uint64_t b)
{
    if (!ctx) return s;
    return gpk__fail(ctx, s, "segmented sort: segment %zu: %s (%llu, %llu)", i, msg, (unsigned long long)a,
                     (unsigned long long)b);
}

gpk_status gpk__seg_check(gpk_ctx *ctx, const gpk_segments *segs, size_t n, uint64_t *max_len,
                          uint64_t *covered)
{
    *max_len = 0;
    *covered = 0;
    if (!segs) return ctx ? gpk__fail(ctx, GPK_EINVAL, "segmented sort: segs is NULL") : GPK_EINVAL;
    const size_t count = segs->count;
    if (!segs->begin) {
        if (segs->end)
            return ctx ? gpk__fail(ctx, GPK_EINVAL, "segmented sort: end offsets without begin offsets")
                       : GPK_EINVAL;
        if (count == 0 || segs->length == 0) return GPK_OK;
        if (segs->length > n || count > n / segs->length)
            return ctx
                ? gpk__fail(ctx, GPK_EINVAL, "segmented sort: %zu rows of %llu do not fit %zu elements",
                            count, (unsigned long long)segs->length, n)
                : GPK_EINVAL;
        *max_len = segs->length;
        *covered = (uint64_t)count * segs->length;
        return GPK_OK;
    }
    if (count == 0) return GPK_OK;
    if (!segs->end)
        return ctx ? gpk__fail(ctx, GPK_EINVAL, "segmented sort: begin offsets without end offsets")
                   : GPK_EINVAL;
    int ordered = 1;
    uint64_t prev_end = 0, longest = 0, sum = 0;
    for (size_t i = 0; i < count; i++) {
        const uint64_t b = segs->begin[i], e = segs->end[i];
        if (b > e) return seg_fail(ctx, GPK_EINVAL, "begin > end", i, b, e);
        if (e > n) return seg_fail(ctx, GPK_EINVAL, "past the end of the array", i, b, e);
        if (b == e) continue;
        if (b < prev_end) ordered = 0;
        prev_end = e;
        if (e - b > longest) longest = e - b;
        sum += e - b;
    }
    if (!ordered) {
        /* (begin, end) of the non-empty segments, ordered by begin: they
         * overlap where one begins before the one before it ends. */
        uint64_t *be = malloc(2 * sizeof(uint64_t) * count);
        if (!be)
            return ctx ? gpk__fail(ctx, GPK_ENOMEM, "segmented sort: no memory to check the segments")
                       : GPK_ENOMEM;
        size_t m = 0;
        for (size_t i = 0; i < count; i++)
            if (segs->begin[i] < segs->end[i]) {
                be[2 * m] = segs->begin[i];
                be[2 * m + 1] = segs->end[i];
                m++;
            }
        qsort(be, m, 2 * sizeof(uint64_t), cmp_begin);
        for (size_t k = 1; k < m; k++)
            if (be[2 * k] < be[2 * k - 1]) {
                const uint64_t b = be[2 * k], e = be[2 * k - 1];
                free(be);
                if (!ctx) return GPK_EINVAL;
                return gpk__fail(
                    ctx, GPK_EINVAL,
                    "segmented sort: segments overlap (one begins at %llu before another ends at %llu)",
                    (unsigned long long)b, (unsigned long long)e);
            }
        free(be);
    }
    *max_len = longest;
    *covered = sum;
    return GPK_OK;
}

/* ---- one segment on one thread ---------------------------------------- */

/* Stable sort of n sort keys k[] (and their indices ix[], when not NULL),
 * with spare arrays tk[] and ti[] of n entries; the result ends in k[]
 * and ix[]. */
#define SEG_DEFINE_SMALL_SORT(NAME, KT)                                                  \
    static void NAME(KT *k, uint32_t *ix, KT *tk, uint32_t *ti, size_t n)                \
    {                                                                                    \
        if (n <= SEG_INSERTION_MAX) {                                                    \
            for (size_t i = 1, j; i < n; i++) {                                          \
                GPK__INSERTION_STEP(KT, uint32_t, k, ix, ix != NULL, i, j);              \
            }                                                                            \
            return;                                                                      \
        }                                                                                \
        enum { DIGITS = (int)sizeof(KT) };                                               \
        uint32_t hist[DIGITS][256];                                                      \
        memset(hist, 0, sizeof hist);                                                    \
        for (size_t i = 0; i < n; i++) {                                                 \
            const KT x = k[i];                                                           \
            for (int d = 0; d < DIGITS; d++) hist[d][(x >> (8 * d)) & 0xFF]++;           \
        }                                                                                \
        KT *src = k, *dst = tk;                                                          \
        uint32_t *isrc = ix, *idst = ti;                                                 \
        for (int d = 0; d < DIGITS; d++) {                                               \
            uint32_t *h = hist[d];                                                       \
            const KT x0 = src[0];                                                        \
            if (h[(x0 >> (8 * d)) & 0xFF] == n) continue; /* every key has this digit */ \
            uint32_t sum = 0;                                                            \
            for (int c = 0; c < 256; c++) {                                              \
                const uint32_t t = h[c];                                                 \
                h[c] = sum;                                                              \
                sum += t;                                                                \
            }                                                                            \
            if (isrc)                                                                    \
                for (size_t i = 0; i < n; i++) {                                         \
                    const KT x = src[i];                                                 \
                    const uint32_t p = h[(x >> (8 * d)) & 0xFF]++;                       \
                    dst[p] = x;                                                          \
                    idst[p] = isrc[i];                                                   \
                }                                                                        \
            else                                                                         \
                for (size_t i = 0; i < n; i++) {                                         \
                    const KT x = src[i];                                                 \
                    dst[h[(x >> (8 * d)) & 0xFF]++] = x;                                 \
                }                                                                        \
            KT *t = src;                                                                 \
            src = dst;                                                                   \
            dst = t;                                                                     \
            uint32_t *it = isrc;                                                         \
            isrc = idst;                                                                 \
            idst = it;                                                                   \
        }                                                                                \
        if (src != k) {                                                                  \
            memcpy(k, src, n * sizeof(KT));                                              \
            if (ix) memcpy(ix, isrc, n * sizeof(uint32_t));                              \
        }                                                                                \
    }

SEG_DEFINE_SMALL_SORT(small_sort32, uint32_t)
SEG_DEFINE_SMALL_SORT(small_sort64, uint64_t)

/* A thread's buffers for segments of up to cap keys. */
typedef struct seg_buf {
    void *k, *tk;      /* cap sort keys each (key width) */
    uint32_t *ix, *ti; /* cap indices each (pairs and perm only) */
    void *v;           /* cap values (pairs only) */
} seg_buf;

static size_t seg_buf_bytes(const gpk_seg_job *job, size_t cap)
{
    const size_t with_ix = job->values || job->sigma;
    return gpk__align_up(cap * job->key_width, 64) * 2 + (with_ix ? gpk__align_up(cap * 4, 64) * 2 : 0) +
        gpk__align_up(cap * job->value_width, 64);
}

static seg_buf seg_buf_at(const gpk_seg_job *job, char *p, size_t cap)
{
    seg_buf B;
    const size_t kb = gpk__align_up(cap * job->key_width, 64), ib = gpk__align_up(cap * 4, 64);
    B.k = p;
    B.tk = p + kb;
    p += 2 * kb;
    B.ix = B.ti = NULL;
    if (job->values || job->sigma) {
        B.ix = (uint32_t *)p;
        B.ti = (uint32_t *)(p + ib);
        p += 2 * ib;
    }
    B.v = job->value_width ? p : NULL;
    return B;
}

/* Sorts segment [b, b + len) (2 <= len <= the buffers' cap) on this thread. */
static void sort_segment_here(const gpk_seg_job *job, const seg_buf *B, uint64_t b, size_t len)
{
    const gpk_type t = job->key_type;
    const int desc = job->descending;
    uint32_t *ix = B->ix;
    if (ix)
        for (size_t j = 0; j < len; j++) ix[j] = (uint32_t)j;
    if (job->key_width == 4) {
        uint32_t *keys = (uint32_t *)job->keys + b, *k = (uint32_t *)B->k;
        for (size_t j = 0; j < len; j++) k[j] = gpk__seg_order32(t, desc, gpk__map_u32(t, keys[j]));
        small_sort32(k, ix, (uint32_t *)B->tk, B->ti, len);
        for (size_t j = 0; j < len; j++) keys[j] = gpk__unmap_u32(t, gpk__seg_order32(t, desc, k[j]));
    } else {
        uint64_t *keys = (uint64_t *)job->keys + b, *k = (uint64_t *)B->k;
        for (size_t j = 0; j < len; j++) k[j] = gpk__seg_order64(t, desc, gpk__map_u64(t, keys[j]));
        small_sort64(k, ix, (uint64_t *)B->tk, B->ti, len);
        for (size_t j = 0; j < len; j++) keys[j] = gpk__unmap_u64(t, gpk__seg_order64(t, desc, k[j]));
    }
    if (job->sigma) memcpy(job->sigma + b, ix, len * sizeof *ix);
    if (job->value_width == 4) {
        uint32_t *v = (uint32_t *)job->values + b, *copy = (uint32_t *)B->v;
        memcpy(copy, v, len * 4);
        for (size_t j = 0; j < len; j++) v[j] = copy[ix[j]];
    } else if (job->value_width == 8) {
        uint64_t *v = (uint64_t *)job->values + b, *copy = (uint64_t *)B->v;
        memcpy(copy, v, len * 8);
        for (size_t j = 0; j < len; j++) v[j] = copy[ix[j]];
    }
}

/* Sorts segment [b, b + len) in place with the parallel radix sort, which
 * takes the descending order into its own key map. */
static gpk_status sort_segment_parallel(gpk_ctx *ctx, const gpk_seg_job *job, uint64_t b, size_t len)
{
    const unsigned kw = job->key_width;
    void *keys = (char *)job->keys + b * kw;
    gpk_radix_job rj;
    gpk_status s = gpk__radix_job_init(ctx, &rj, job->key_type, keys, job->value_width,
                                       job->values ? (char *)job->values + b * job->value_width : NULL,
                                       job->sigma ? job->sigma + b : NULL, 4, len, NULL);
    rj.descending = job->descending;
    if (s == GPK_OK) s = gpk__radix_sort_cpu(ctx, &rj);
    return s;
}

gpk_status gpk__seg_sort_cpu(gpk_ctx *ctx, const gpk_seg_job *job)
{
    const gpk_segments *S = &job->segs;
    const size_t count = S->count;
    const int T = ctx->threads > 0 ? ctx->threads : 1;
    size_t large_min = job->large_min;
    if (large_min == 0) {
        /* a segment gets every thread when it holds at least half of one
         * thread's share of the work */
        const uint64_t share = job->covered / (2 * (uint64_t)T);
        large_min = share < SEG_LARGE_MIN_LO ? SEG_LARGE_MIN_LO
            : share > SEG_LARGE_MIN_HI       ? SEG_LARGE_MIN_HI
                                             : (size_t)share;
    }
    if (large_min < 2) large_min = 2;
    /* a thread's buffers index a segment with u32 */
    if (large_min > UINT32_MAX) large_min = UINT32_MAX;
    /* The longest segment a thread sorts alone, for the buffers' size. */
    uint64_t cap = 0;
    size_t n_large = 0, n_medium = 0;
    for (size_t i = 0; i < count; i++) {
        uint64_t b, e;
        gpk__seg_bounds(S, i, &b, &e);
        const uint64_t len = e - b;
        if (!S->begin) {
            /* rows: every segment alike, dealt out in one loop */
            if (len >= large_min) n_large = count;
            else cap = len;
            break;
        }
        if (len >= large_min) n_large++;
        else {
            if (len > cap) cap = len;
            if (len > SEG_MEDIUM_MIN) n_medium++;
        }
    }
    const size_t per_thread = gpk__align_up(seg_buf_bytes(job, (size_t)cap), 64);
    char *bufs = NULL;
    size_t *order = NULL;
    if (cap >= 2) {
        bufs = gpk__host_alloc_large(per_thread * (size_t)T);
        if (!bufs)
            return gpk__fail(ctx, GPK_ENOMEM, "segmented sort: no memory for %d buffers of %zu bytes", T,
                             per_thread);
    }
    /* Offsets: the large segments and the medium ones, each in a list of
     * their own (the rest is every other segment, found by a second loop). */
    if (S->begin && (n_large || n_medium)) {
        order = malloc((n_large + n_medium) * sizeof *order);
        if (!order) {
            free(bufs);
            return gpk__fail(ctx, GPK_ENOMEM, "segmented sort: no memory for the segment lists");
        }
        size_t a = 0, c = n_large;
        for (size_t i = 0; i < count; i++) {
            const uint64_t len = S->end[i] - S->begin[i];
            if (len >= large_min) order[a++] = i;
            else if (len > SEG_MEDIUM_MIN) order[c++] = i;
        }
    }
    gpk_status s = GPK_OK;
    /* Large segments first, each with every thread: a failure here (memory)
     * comes before any other segment is touched. */
    if (n_large) {
        for (size_t q = 0; q < n_large && s == GPK_OK; q++) {
            uint64_t b, e;
            gpk__seg_bounds(S, S->begin ? order[q] : q, &b, &e);
            s = sort_segment_parallel(ctx, job, b, (size_t)(e - b));
        }
    }
    if (s == GPK_OK && cap >= 2) {
        const int rows = S->begin == NULL;
        const ptrdiff_t medium = (ptrdiff_t)n_medium, all = (ptrdiff_t)count;
        /* rows of few keys are dealt out in chunks of about 16 K keys */
        ptrdiff_t chunk = rows ? (ptrdiff_t)(16384 / (S->length ? S->length : 1)) : 64;
        if (chunk < 1) chunk = 1;
#pragma omp parallel num_threads(T)
        {
            const seg_buf B = seg_buf_at(job, bufs + (size_t)omp_get_thread_num() * per_thread, (size_t)cap);
#pragma omp for schedule(dynamic, 1) nowait
            for (ptrdiff_t q = 0; q < medium; q++) {
                const size_t i = order[n_large + (size_t)q];
                sort_segment_here(job, &B, S->begin[i], (size_t)(S->end[i] - S->begin[i]));
            }
#pragma omp for schedule(dynamic, chunk)
            for (ptrdiff_t q = 0; q < all; q++) {
                uint64_t b, e;
                gpk__seg_bounds(S, (size_t)q, &b, &e);
                const uint64_t len = e - b;
                if (len < 2 || len >= large_min || (!rows && len > SEG_MEDIUM_MIN)) continue;
                sort_segment_here(job, &B, b, (size_t)len);
            }
        }
    }
    /* Segments of one key: their permutation is 0. */
    if (s == GPK_OK && job->sigma) {
        for (size_t i = 0; i < count; i++) {
            uint64_t b, e;
            gpk__seg_bounds(S, i, &b, &e);
            if (e - b == 1) job->sigma[b] = 0;
            if (!S->begin && e - b != 1) break;
        }
    }
    free(order);
    free(bufs);
    return s;
}

/* ---- dispatch ------------------------------------------------------------ */

/* src: NULL (in place), or the array the keys are copied from into keys
 * (the copying form; keys only), once every check has passed so that a
 * refused call leaves keys as they were. */
static gpk_status seg_dispatch(gpk_ctx *ctx, gpk_type key_type, const void *src, void *keys,
                               size_t value_width, void *values, uint32_t *sigma, size_t n,
                               const gpk_segments *segs, const gpk_segmented_opts *opts)
{
    if (!ctx) return GPK_EINVAL;
    gpk__clear_error(ctx);
    gpk_segmented_opts o = GPK_SEGMENTED_OPTS_INIT;
    if (opts) o = *opts;
    const size_t kw = gpk_type_size(key_type);
    if (kw == 0) return gpk__fail(ctx, GPK_EINVAL, "segmented sort: unknown key type %d", (int)key_type);
    if (n > ((size_t)-1) / 16) return gpk__fail(ctx, GPK_EINVAL, "segmented sort: n = %zu is too large", n);
    if (o.descending != 0 && o.descending != 1)
        return gpk__fail(ctx, GPK_EINVAL, "segmented sort: descending must be 0 or 1, not %d", o.descending);
    gpk_seg_job job;
    memset(&job, 0, sizeof job);
    GPK_CHECK(gpk__seg_check(ctx, segs, n, &job.max_len, &job.covered));
    if (job.covered > 0) {
        if (!keys) return gpk__fail(ctx, GPK_EINVAL, "segmented sort: keys is NULL");
        if (value_width && !values) return gpk__fail(ctx, GPK_EINVAL, "segmented sort: values is NULL");
    }
    if (src && n > 0) {
        if (!keys) return gpk__fail(ctx, GPK_EINVAL, "segmented sort: out is NULL");
        const uintptr_t a = (uintptr_t)src, b = (uintptr_t)keys, bytes = n * kw;
        if (a < b + bytes && b < a + bytes)
            return gpk__fail(ctx, GPK_EINVAL,
                             "segmented sort: in and out overlap without being the same array");
    }
    if (sigma && job.max_len > UINT32_MAX)
        return gpk__fail(ctx, GPK_EINVAL,
                         "segmented sort: a u32 permutation cannot index a segment of %llu keys",
                         (unsigned long long)job.max_len);
    job.key_type = key_type;
    job.key_width = (unsigned)kw;
    job.keys = keys;
    job.values = value_width ? values : NULL;
    job.value_width = (unsigned)value_width;
    job.sigma = sigma;
    job.n = n;
    job.segs = *segs;
    job.descending = o.descending;
    job.small_max = o.small_max;
    job.large_min = o.large_min;
    ctx->last_sort_path = NULL;
    gpk_status s;
    const gpk__sort_backend *be = gpk__sort_backend_of(ctx->backend);
    if (!be || !be->segmented)
        return gpk__fail(ctx, GPK_EUNSUPPORTED, "segmented sort: not implemented on the %s backend",
                         gpk_backend_name(ctx->backend));
    if (src && n > 0) gpk__host_copy(keys, src, n * kw, ctx->threads);
    s = be->segmented(ctx, &job);
    if (s == GPK_OK) {
        ctx->last_sort_algo = GPK_SORT_RADIX;
        ctx->last_sort_path = "segmented";
    }
    return s;
}

gpk_status gpk_sort_segmented_keys(gpk_ctx *ctx, gpk_type key_type, void *keys, size_t n,
                                   const gpk_segments *segs, const gpk_segmented_opts *opts)
{
    return seg_dispatch(ctx, key_type, NULL, keys, 0, NULL, NULL, n, segs, opts);
}

gpk_status gpk_sort_segmented_keys_to(gpk_ctx *ctx, gpk_type key_type, const void *in, void *out, size_t n,
                                      const gpk_segments *segs, const gpk_segmented_opts *opts)
{
    if (ctx && n > 0 && !in) {
        gpk__clear_error(ctx);
        return gpk__fail(ctx, GPK_EINVAL, "segmented sort: in is NULL");
    }
    return seg_dispatch(ctx, key_type, in == out ? NULL : in, out, 0, NULL, NULL, n, segs, opts);
}

gpk_status gpk_sort_segmented_pairs(gpk_ctx *ctx, gpk_type key_type, void *keys, gpk_type value_type,
                                    void *values, size_t n, const gpk_segments *segs,
                                    const gpk_segmented_opts *opts)
{
    const size_t vw = gpk_type_size(value_type);
    if (ctx && vw == 0)
        return gpk__fail(ctx, GPK_EINVAL, "segmented sort: unknown value type %d", (int)value_type);
    return seg_dispatch(ctx, key_type, NULL, keys, vw, values, NULL, n, segs, opts);
}

gpk_status gpk_sort_segmented_perm(gpk_ctx *ctx, gpk_type key_type, void *keys, uint32_t *sigma, size_t n,
                                   const gpk_segments *segs, const gpk_segmented_opts *opts)
{
    if (ctx && n > 0 && !sigma) return gpk__fail(ctx, GPK_EINVAL, "segmented sort: sigma is NULL");
    return seg_dispatch(ctx, key_type, NULL, keys, 0, NULL, sigma, n, segs, opts);
}
