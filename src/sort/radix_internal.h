/* Radix sort internals: the job every backend receives; the key maps every
 * backend must apply are in core/key_traits.h (the contract: gpk/sort.h). */
#ifndef GPK_RADIX_INTERNAL_H
#define GPK_RADIX_INTERNAL_H

#include "gpk/sort.h"

#include <string.h>
#include "../core/internal.h"
#include "../core/key_traits.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A validated sort request on host arrays, as the dispatch in radix.c hands
 * it to a backend. The backend sorts in place; on failure it must leave
 * keys, values and sigma exactly as they were. */
typedef struct gpk_radix_job {
    gpk_type key_type;
    unsigned key_width;   /* 4 or 8 bytes */
    void *keys;           /* n keys in the caller's (unmapped) form */
    const void *src;      /* NULL, or the n input keys (read only) and keys is the output,
                               which holds nothing yet: gpk_sort_keys_to on the CPU backend */
    void *values;         /* NULL, or n values of value_width bytes */
    unsigned value_width; /* 0, 4 or 8 */
    void *sigma;          /* NULL, or output: keys_out[j] = keys_in[sigma[j]] (values == NULL then) */
    unsigned sigma_width; /* 4 (gpk_sort_perm: u32) or 8 (gpk_sort_perm64: u64) when sigma is set */
    size_t n;             /* >= 2: the dispatch handles n < 2 itself */
    unsigned key_bits;    /* b from the options: 0 = detect (AND/OR reduction), else sort bits [0, b) */
    int descending;       /* 1: descending order (descending.h's sort keys), set only for a backend
                               whose table says it sorts so (radix_descending); else 0 */
    unsigned radix_bits;  /* r in 1..16, or 0 = the backend's tuned choice */
    unsigned items, groups, scan_split; /* paper tunables, 0 = tuned */
} gpk_radix_job;

/* Bit range [begin, end) of the mapped keys where they differ, from the AND
 * and OR of all mapped keys. begin == end when all keys are equal. */
static inline void gpk__radix_range_from_masks(uint64_t and_all, uint64_t or_all, unsigned *begin,
                                               unsigned *end)
{
    uint64_t diff = and_all ^ or_all;
    if (diff == 0) {
        *begin = *end = 0;
        return;
    }
    unsigned b = 0, e = 64;
    while (!((diff >> b) & 1u)) b++;
    while (!((diff >> (e - 1)) & 1u)) e--;
    *begin = b;
    *end = e;
}

/* Backend entry points. */
gpk_status gpk__radix_sort_cpu(gpk_ctx *ctx, const gpk_radix_job *job);
#ifdef GPK_HAVE_CUDA
gpk_status gpk__radix_sort_cuda(gpk_ctx *ctx, const gpk_radix_job *job);
#endif
#ifdef GPK_HAVE_OPENCL
gpk_status gpk__radix_sort_opencl(gpk_ctx *ctx, const gpk_radix_job *job);
#endif

/* Bench hooks (gpk bench sort): upload the job's arrays once, sort the
 * device-resident data `reps` times (each rep from the same unsorted
 * input), put the median kernel time in *ms (uploads and downloads
 * excluded) and leave the sorted result of the last rep in the job's
 * arrays, so the caller can check it. */
#ifdef GPK_HAVE_CUDA
gpk_status gpk__radix_bench_cuda(gpk_ctx *ctx, const gpk_radix_job *job, int reps, double *ms);
#endif
#ifdef GPK_HAVE_OPENCL
gpk_status gpk__radix_bench_opencl(gpk_ctx *ctx, const gpk_radix_job *job, int reps, double *ms);
#endif

#ifdef GPK_HAVE_CUDA
/* The distributed LSD plan of the multi-GPU sort (multi_cuda.cu): every
 * pass of every device writes each key (and value) to its global position
 * p = the global base of its digit + its rank among this device's keys of
 * that digit, on the device that owns p (output j holds [bounds[j],
 * bounds[j + 1])): a stable counting sort of the whole sequence per pass,
 * so the passes sort it as on one device. Pass p writes every device's
 * output where an even number of passes follow it, else every device's
 * spare; pass 0 reads the shard, pass p > 0 what pass p - 1 wrote here.
 * The plan covers every bit of [0, key_bits) (0: the type's), the same on
 * every device. Each call runs on ctx's stream (ctx: the device's own
 * context, current) and returns before the work is done; a pass may start
 * only when every device has finished the one before (it writes where they
 * read). */
typedef struct gpk_radix_dist {
    gpk_type key_type;
    unsigned key_width, value_width; /* value_width 0: keys only */
    unsigned key_bits, radix_bits;
    void *keys, *values; /* this device's shard, n keys: scratch */
    size_t n;
    size_t total; /* keys over all devices */
    void *temp;   /* gpk__radix_cuda_dist_temp bytes of this device */
    int self, k;  /* this device, of k */
    size_t bounds[GPK_MAX_DEVICES + 1];
    void *keys_out[GPK_MAX_DEVICES], *values_out[GPK_MAX_DEVICES]; /* writable from this device */
    void *keys_alt[GPK_MAX_DEVICES], *values_alt[GPK_MAX_DEVICES]; /* the spares, likewise */
} gpk_radix_dist;

/* Sort by the bits [begin, end) of the mapped key (radix_cuda.cu), in
 * descending order if descending: the device-pointer API's contract and
 * temp query (d_temp NULL), the separate launches only (safe side by side
 * on several streams). */
gpk_status gpk__radix_cuda_sort_bits(gpk_ctx *ctx, void *d_temp, size_t *temp_bytes, gpk_type key_type,
                                     const void *d_keys_in, void *d_keys_out, size_t value_width,
                                     const void *d_values_in, void *d_values_out, size_t n, unsigned begin,
                                     unsigned end, int descending, void *stream /* a cudaStream_t */);
/* The passes (at most 64) and the digits of each in digits[]. */
unsigned gpk__radix_cuda_dist_plan(const gpk_radix_dist *j, unsigned *digits);
/* Temp of a device with n keys in its shard and m in its output, and its
 * spare for m keys and values in that temp (where the others write). */
size_t gpk__radix_cuda_dist_temp(size_t n, size_t m, unsigned key_width, unsigned value_width, int k);
void gpk__radix_cuda_dist_spare(void *temp, size_t m, unsigned key_width, void **keys, void **values);
/* The counts of the first pass's digits in the shard into counts (pinned
 * host memory), there once the stream gets there. */
gpk_status gpk__radix_cuda_dist_count(gpk_ctx *ctx, const gpk_radix_dist *j, unsigned long long *counts);
/* Pass p: bases[d] (pinned host memory) = the global position of this
 * device's first key of digit d in the pass; unless it is the last pass,
 * next[o * D + x] (pinned, D = the next pass's digits) gets the keys it
 * sent to device o whose next digit is x. */
gpk_status gpk__radix_cuda_dist_pass(gpk_ctx *ctx, const gpk_radix_dist *j, unsigned p,
                                     const unsigned long long *bases, unsigned long long *next);
#endif

/* key_bits of the options with GPK_KEY_BITS_ALL resolved to the bits of a
 * key_width-byte key; the other values stay as they are. */
static inline unsigned gpk__key_bits(unsigned key_bits, size_t key_width)
{
    return key_bits == GPK_KEY_BITS_ALL ? (unsigned)(8 * key_width) : key_bits;
}

/* Checks a sort call's array argument (`what`: its name, NULL is refused),
 * key type and value width (0, 4 or 8 bytes) and gives the key's width in
 * *key_width; GPK_EINVAL with a message that starts with fn when one is
 * off. Defined in sort_common.c. */
gpk_status gpk__sort_widths_check(gpk_ctx *ctx, const char *fn, const void *array, const char *what,
                                  gpk_type key_type, size_t value_width, size_t *key_width);

/* Resolves o->key_bits (gpk__key_bits) for key_type, then checks it fits
 * the key and that o->radix_bits is at most 16; GPK_EINVAL with a message
 * that starts with fn when not. Defined in sort_common.c. */
gpk_status gpk__radix_bits_check(gpk_ctx *ctx, const char *fn, gpk_type key_type, gpk_radix_opts *o);

/* Validates the arguments and fills *job (key_bits 0 stays 0: each backend
 * detects the bit range on its own copy of the data; GPK_KEY_BITS_ALL
 * becomes the key's bits). Shared by the
 * dispatch and the bench. Defined in sort_common.c. */
gpk_status gpk__radix_job_init(gpk_ctx *ctx, gpk_radix_job *job, gpk_type key_type, void *keys,
                               size_t value_width, void *values, void *sigma, unsigned sigma_width, size_t n,
                               const gpk_radix_opts *opts);

/* sigma[i] = i for i in [lo, hi), sigma of 4 or 8 bytes per entry. */
static inline void gpk__sigma_iota(void *sigma, unsigned sigma_width, size_t lo, size_t hi)
{
    if (sigma_width == 8)
        for (size_t i = lo; i < hi; i++) ((uint64_t *)sigma)[i] = (uint64_t)i;
    else
        for (size_t i = lo; i < hi; i++) ((uint32_t *)sigma)[i] = (uint32_t)i;
}

/* One step of a stable insertion sort on the host: k[i] (and v[i], where
 * HAS_V) moves down into the sorted k[0..i) past every key greater than it
 * (strictly: equal keys keep their order); J (a size_t lvalue) is left at
 * its new place, so i - J keys moved. KT and VT: the key's and the
 * value's types. */
#define GPK__INSERTION_STEP(KT, VT, k, v, HAS_V, i, J)       \
    do {                                                     \
        const KT x_ = (k)[i];                                \
        const VT y_ = (HAS_V) ? (v)[i] : 0;                  \
        for ((J) = (i); (J) > 0 && (k)[(J)-1] > x_; (J)--) { \
            (k)[J] = (k)[(J)-1];                             \
            if (HAS_V) (v)[J] = (v)[(J)-1];                  \
        }                                                    \
        (k)[J] = x_;                                         \
        if (HAS_V) (v)[J] = y_;                              \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif
