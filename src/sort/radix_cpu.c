/* CPU backend: parallel LSD radix sort on OpenMP threads.
 *
 * One parallel region does the whole sort. Each thread owns a contiguous
 * chunk; per pass it counts its chunk's digits (a private histogram), the
 * offsets are a digit-major, thread-minor scan (so equal digits keep their
 * order across threads: the sort is stable), then it scatters its chunk.
 * The scatter goes through a small per-thread buffer per digit (software
 * write-combining): full 64-byte lines are copied out instead of single
 * keys, which keeps the number of open write streams within what the
 * caches and TLB handle. Mapping of signed/float keys is fused into the
 * detection read and the unmap into the last pass's copy-out.
 *
 * OpenMP rather than a hand-made pool: the whole sort is one fork-join
 * region with barriers, which is exactly what `omp parallel` + `omp
 * barrier` express, with no thread-pool code of our own to get wrong.
 */
#include "radix_internal.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define WC_BYTES 64          /* one cache line per digit buffer */
#define WC_MAX_RADIX_BITS 12 /* beyond this the buffers outgrow L2: scatter directly */
#define MIN_KEYS_PER_THREAD 65536

typedef struct {
    unsigned shift, bits;
} pass_plan;

/* Tuned choice when r is not given: 8-bit digits, balanced so that a b-bit
 * range costs ceil(b/8) passes of (nearly) equal width. */
static unsigned plan_passes(unsigned begin, unsigned end, unsigned radix_bits, pass_plan *plan)
{
    unsigned b = end - begin, p;
    if (b == 0) return 0;
    if (radix_bits) {
        p = (b + radix_bits - 1) / radix_bits;
        for (unsigned q = 0; q < p; q++) {
            plan[q].shift = begin + q * radix_bits;
            plan[q].bits = (q + 1 < p) ? radix_bits : b - q * radix_bits;
        }
        return p;
    }
    p = (b + 7) / 8;
    unsigned shift = begin;
    for (unsigned q = 0; q < p; q++) {
        unsigned bits = (b - (shift - begin) + (p - q) - 1) / (p - q);
        plan[q].shift = shift;
        plan[q].bits = bits;
        shift += bits;
    }
    return p;
}

/* The scatter of one chunk for one pass, written once per (key, value)
 * shape; KT key type, VT value type, HAS_V whether values move. */
#define DEFINE_SCATTER(NAME, KT, VT, HAS_V)                                                    \
    static void NAME(const KT *restrict src, KT *restrict dst, const VT *restrict vsrc,       \
                     VT *restrict vdst, size_t lo, size_t hi, unsigned shift, KT mask,         \
                     size_t *restrict off, unsigned char *restrict wc, unsigned radix,         \
                     int iota)                                                                 \
    {                                                                                          \
        enum { KB = WC_BYTES / sizeof(KT) };                                                   \
        if (!wc) {                                                                             \
            for (size_t i = lo; i < hi; i++) {                                                 \
                KT k = src[i];                                                                 \
                size_t pos = off[(k >> shift) & mask]++;                                       \
                dst[pos] = k;                                                                  \
                if (HAS_V) vdst[pos] = iota ? (VT)i : vsrc[i];                                 \
            }                                                                                  \
            return;                                                                            \
        }                                                                                      \
        KT *kbuf = (KT *)wc;                                                                   \
        VT *vbuf = (VT *)(wc + (size_t)radix * WC_BYTES);                                      \
        unsigned *fill = (unsigned *)(wc + (size_t)radix * WC_BYTES * 3);                     \
        memset(fill, 0, radix * sizeof *fill);                                                 \
        for (size_t i = lo; i < hi; i++) {                                                     \
            KT k = src[i];                                                                     \
            size_t d = (k >> shift) & mask;                                                    \
            unsigned f = fill[d];                                                              \
            kbuf[d * KB + f] = k;                                                              \
            if (HAS_V) vbuf[d * KB + f] = iota ? (VT)i : vsrc[i];                              \
            if (++f == KB) {                                                                   \
                memcpy(dst + off[d], kbuf + d * KB, KB * sizeof(KT));                          \
                if (HAS_V) memcpy(vdst + off[d], vbuf + d * KB, KB * sizeof(VT));              \
                off[d] += KB;                                                                  \
                f = 0;                                                                         \
            }                                                                                  \
            fill[d] = f;                                                                       \
        }                                                                                      \
        for (size_t d = 0; d < radix; d++) {                                                   \
            memcpy(dst + off[d], kbuf + d * KB, fill[d] * sizeof(KT));                         \
            if (HAS_V) memcpy(vdst + off[d], vbuf + d * KB, fill[d] * sizeof(VT));             \
            off[d] += fill[d];                                                                 \
        }                                                                                      \
    }

DEFINE_SCATTER(scatter32, uint32_t, uint32_t, 0)
DEFINE_SCATTER(scatter32_v32, uint32_t, uint32_t, 1)
DEFINE_SCATTER(scatter32_v64, uint32_t, uint64_t, 1)
DEFINE_SCATTER(scatter64, uint64_t, uint32_t, 0)
DEFINE_SCATTER(scatter64_v32, uint64_t, uint32_t, 1)
DEFINE_SCATTER(scatter64_v64, uint64_t, uint64_t, 1)

#define DEFINE_COUNT(NAME, KT)                                                                 \
    static void NAME(const KT *restrict src, size_t lo, size_t hi, unsigned shift, KT mask,   \
                     size_t *restrict hist)                                                    \
    {                                                                                          \
        for (size_t i = lo; i < hi; i++) hist[(src[i] >> shift) & mask]++;                     \
    }
DEFINE_COUNT(count32, uint32_t)
DEFINE_COUNT(count64, uint64_t)

static void scatter_chunk(unsigned kw, unsigned vw, const void *src, void *dst, const void *vsrc,
                          void *vdst, size_t lo, size_t hi, unsigned shift, uint64_t mask,
                          size_t *off, unsigned char *wc, unsigned radix, int iota)
{
    if (kw == 4) {
        uint32_t m = (uint32_t)mask;
        if (vw == 0) scatter32(src, dst, NULL, NULL, lo, hi, shift, m, off, wc, radix, 0);
        else if (vw == 4) scatter32_v32(src, dst, vsrc, vdst, lo, hi, shift, m, off, wc, radix, iota);
        else scatter32_v64(src, dst, vsrc, vdst, lo, hi, shift, m, off, wc, radix, iota);
    } else {
        if (vw == 0) scatter64(src, dst, NULL, NULL, lo, hi, shift, mask, off, wc, radix, 0);
        else if (vw == 4) scatter64_v32(src, dst, vsrc, vdst, lo, hi, shift, mask, off, wc, radix, iota);
        else scatter64_v64(src, dst, vsrc, vdst, lo, hi, shift, mask, off, wc, radix, iota);
    }
}

/* Maps keys in place and reduces AND/OR over [lo, hi). */
static void map_and_reduce(gpk_type t, unsigned kw, void *keys, size_t lo, size_t hi,
                           uint64_t *and_out, uint64_t *or_out)
{
    uint64_t a = ~0ull, o = 0;
    if (kw == 4) {
        uint32_t *k = keys;
        uint32_t a32 = ~0u, o32 = 0;
        if (t == GPK_U32) {
            for (size_t i = lo; i < hi; i++) { a32 &= k[i]; o32 |= k[i]; }
        } else {
            for (size_t i = lo; i < hi; i++) {
                uint32_t m = gpk__map_u32(t, k[i]);
                k[i] = m;
                a32 &= m;
                o32 |= m;
            }
        }
        a = a32;
        o = o32;
    } else {
        uint64_t *k = keys;
        if (t == GPK_U64) {
            for (size_t i = lo; i < hi; i++) { a &= k[i]; o |= k[i]; }
        } else {
            for (size_t i = lo; i < hi; i++) {
                uint64_t m = gpk__map_u64(t, k[i]);
                k[i] = m;
                a &= m;
                o |= m;
            }
        }
    }
    *and_out = a;
    *or_out = o;
}

/* Unmaps [lo, hi) of src into dst (dst may equal src). */
static void unmap_copy(gpk_type t, unsigned kw, const void *src, void *dst, size_t lo, size_t hi)
{
    if (kw == 4) {
        const uint32_t *s = src;
        uint32_t *d = dst;
        for (size_t i = lo; i < hi; i++) d[i] = gpk__unmap_u32(t, s[i]);
    } else {
        const uint64_t *s = src;
        uint64_t *d = dst;
        for (size_t i = lo; i < hi; i++) d[i] = gpk__unmap_u64(t, s[i]);
    }
}

static int needs_mapping(gpk_type t) { return t != GPK_U32 && t != GPK_U64; }

gpk_status gpk__radix_sort_cpu(gpk_ctx *ctx, const gpk_radix_job *job)
{
    const size_t n = job->n;
    const unsigned kw = job->key_width;
    const int with_sigma = job->sigma != NULL;
    const unsigned vw = with_sigma ? 4 : job->value_width;
    const unsigned max_radix_bits = job->radix_bits ? job->radix_bits : 8;
    const unsigned radix = 1u << max_radix_bits;
    const int use_wc = max_radix_bits <= WC_MAX_RADIX_BITS;

    size_t want = (n + MIN_KEYS_PER_THREAD - 1) / MIN_KEYS_PER_THREAD;
    int threads = ctx->threads < (int)want ? ctx->threads : (int)want;
    if (threads < 1) threads = 1;

    /* Everything is allocated before the caller's data is touched, so a
     * failure leaves it as it was. The scratch stays with the context. */
    /* Per digit: a line of keys, the matching values (up to twice as wide
     * when 4-byte keys carry 8-byte values), and the fill count. */
    size_t wc_bytes = use_wc ? (size_t)radix * (WC_BYTES * 3 + sizeof(unsigned)) : 0;
    size_t hist_bytes = (size_t)threads * radix * sizeof(size_t);
    size_t keys_bytes = (n * kw + 63) & ~(size_t)63, vals_bytes = (n * vw + 63) & ~(size_t)63;
    size_t total = keys_bytes + vals_bytes + hist_bytes + 2 * 64 * (size_t)threads +
                   (size_t)threads * wc_bytes;
    if (n > ((size_t)-1) / 32) total = (size_t)-1;
    unsigned char *scratch = total == (size_t)-1 ? NULL : gpk__host_scratch(ctx, total);
    if (!scratch)
        return gpk__fail(ctx, GPK_ENOMEM, "cpu sort: cannot allocate %zu bytes of scratch memory",
                         n * (kw + vw));
    void *alt_keys = scratch;
    void *alt_vals = vw ? scratch + keys_bytes : NULL;
    size_t *hist = (size_t *)(scratch + keys_bytes + vals_bytes);
    uint64_t *ands = (uint64_t *)((unsigned char *)hist + hist_bytes);
    uint64_t *ors = ands + 8 * (size_t)threads;  /* a cache line apart per thread */
    unsigned char *wc = use_wc ? (unsigned char *)(ors + 8 * (size_t)threads) : NULL;

    void *vals = with_sigma ? (void *)job->sigma : job->values;
    pass_plan plan[64];
    unsigned passes = 0;

#pragma omp parallel num_threads(threads)
    {
        const int T = omp_get_num_threads();
        const int tid = omp_get_thread_num();
        const size_t lo = n * (size_t)tid / (size_t)T, hi = n * (size_t)(tid + 1) / (size_t)T;
        size_t *my_hist = hist + (size_t)tid * radix;
        unsigned char *my_wc = use_wc ? wc + (size_t)tid * wc_bytes : NULL;

        map_and_reduce(job->key_type, kw, job->keys, lo, hi, &ands[8 * tid], &ors[8 * tid]);
#pragma omp barrier
#pragma omp single
        {
            unsigned begin = 0, end = job->key_bits;
            if (job->key_bits == 0) {
                uint64_t a = ~0ull, o = 0;
                for (int t = 0; t < T; t++) { a &= ands[8 * t]; o |= ors[8 * t]; }
                gpk__radix_range_from_masks(a, o, &begin, &end);
            }
            passes = plan_passes(begin, end, job->radix_bits, plan);
        } /* implicit barrier */

        void *src = job->keys, *dst = alt_keys;
        void *vsrc = vals, *vdst = alt_vals;
        for (unsigned q = 0; q < passes; q++) {
            const unsigned shift = plan[q].shift, digits = 1u << plan[q].bits;
            const uint64_t mask = digits - 1;
            memset(my_hist, 0, digits * sizeof *my_hist);
            if (kw == 4) count32(src, lo, hi, shift, (uint32_t)mask, my_hist);
            else count64(src, lo, hi, shift, mask, my_hist);
#pragma omp barrier
#pragma omp single
            {
                size_t sum = 0;
                for (unsigned d = 0; d < digits; d++)
                    for (int t = 0; t < T; t++) {
                        size_t c = hist[(size_t)t * radix + d];
                        hist[(size_t)t * radix + d] = sum;
                        sum += c;
                    }
            }
            scatter_chunk(kw, vw, src, dst, vsrc, vdst, lo, hi, shift, mask, my_hist,
                          my_wc, digits, with_sigma && q == 0);
#pragma omp barrier
            void *t1 = src; src = dst; dst = t1;
            void *t2 = vsrc; vsrc = vdst; vdst = t2;
        }

        /* The result lies in src; bring it home and undo the key mapping. */
        if (src != job->keys || needs_mapping(job->key_type)) {
            if (needs_mapping(job->key_type)) unmap_copy(job->key_type, kw, src, job->keys, lo, hi);
            else memcpy((char *)job->keys + lo * kw, (char *)src + lo * kw, (hi - lo) * kw);
        }
        if (vw && vsrc != vals) memcpy((char *)vals + lo * vw, (char *)vsrc + lo * vw, (hi - lo) * vw);
        if (with_sigma && passes == 0)
            for (size_t i = lo; i < hi; i++) job->sigma[i] = (uint32_t)i;
    }

    return GPK_OK;
}
