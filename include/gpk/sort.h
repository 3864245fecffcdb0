/* gpk sorting: LSD radix sort (Helluy 2011) on every backend.
 *
 * Keys are sorted in ascending natural order, stably. Signed and floating
 * keys are mapped to an order-preserving unsigned form ("mapped key")
 * before sorting and mapped back afterwards, so no bit of any key changes:
 *   signed: flip the sign bit;
 *   float:  flip all bits of negative values and the sign bit of the others,
 *           then subtract 2^23-1 (f32) or 2^52-1 (f64), modulo 2^32 / 2^64.
 * The subtraction is a rotation that moves NaNs with the sign bit set from
 * the bottom to the top, so floats sort as
 *   -inf < ... < -denormals < -0.0 < +0.0 < ... < +inf < +NaNs < -NaNs:
 * -0.0 comes before +0.0 and every NaN comes last.
 *
 * descending = 1 in the options sorts in the reverse order, still stably
 * (equal keys keep their input order), in every sort call (keys, the
 * copying sort, pairs, permutations, records; the CUDA device calls of
 * gpk/cuda.h too; not the shard sorts): the keys come in exactly the
 * reverse of the ascending order (+0.0 before -0.0), except that every
 * float NaN still comes last, as numpy puts them. With key_bits b, the
 * order of the low b bits is reversed.
 *
 * key_bits (b) and radix_bits (r) refer to the mapped key. With 0 < b <=
 * the key's bits, bits [0, b) are sorted and keys must be < 2^b in mapped
 * form (higher bits do not take part in the order). With
 * b = GPK_KEY_BITS_DETECT (0, the default) the host API (gpk_sort_keys,
 * _to, _perm, _perm64, _pairs, _records) reduces the keys once (AND and OR
 * of all mapped keys) and sorts only the bit range where keys differ, so
 * 10-bit cell keys stored in u32 cost 10 bits of passes (on the CUDA
 * backend only for large inputs, where sorting every bit costs more than
 * the detection's wait for the device: docs/guide.md). With b = GPK_KEY_BITS_ALL every bit of
 * the key type is sorted, with no detection, in every API.
 * A pass sorts r bits; b need not be a multiple of r (the last pass is
 * narrower).
 */
#ifndef GPK_SORT_H
#define GPK_SORT_H

#include "gpk.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which sort runs. AUTO: the radix sort, unless the measured table of the
 * backend (docs/perf/quicksort.md) says quicksort is faster for this type,
 * size and kind of call; gpk_last_sort_algo(ctx) tells which ran. QUICK is
 * not stable (equal keys may change order) and ignores key_bits and
 * radix_bits. QUICK_RECURSIVE is the recursive GPU variant (CUDA dynamic
 * parallelism); on the CPU it is the same as QUICK. The OpenCL backend has
 * no quicksort (GPK_EUNSUPPORTED; AUTO picks the radix sort there). */
typedef enum gpk_sort_algo {
    GPK_SORT_AUTO = 0,
    GPK_SORT_RADIX = 1,
    GPK_SORT_QUICK = 2,
    GPK_SORT_QUICK_RECURSIVE = 3
} gpk_sort_algo;

/* Named values of gpk_radix_opts.key_bits (b above). DETECT is 0, the
 * default: the host API detects the bit range; the device-pointer API
 * (gpk/cuda.h, where GPK_CUDA_DETECT_BITS asks for detection), the shard
 * sorts and gpk_sort_reference read 0 as every bit. Either way the order
 * is the same: detection only saves passes. ALL: every bit of the key
 * type, never a detection pass, in every API. */
#define GPK_KEY_BITS_DETECT 0u
#define GPK_KEY_BITS_ALL 0xFFFFFFFFu

typedef struct gpk_radix_opts {
    unsigned key_bits;       /* b: GPK_KEY_BITS_DETECT (0), 1..the key's bits, or GPK_KEY_BITS_ALL */
    unsigned radix_bits;     /* r in 1..16: 0 = tuned per backend and device */
    unsigned items;          /* I, work-items per group (OpenCL): 0 = tuned */
    unsigned groups;         /* G, number of groups: 0 = tuned */
    unsigned scan_split;     /* s, local scans before the global scan (OpenCL): 0 = tuned */
    gpk_sort_algo algorithm; /* GPK_SORT_AUTO (0) by default */
    int descending;          /* 0: ascending (default); 1: descending, below */
} gpk_radix_opts;
#define GPK_RADIX_OPTS_INIT                  \
    {                                        \
        0u, 0u, 0u, 0u, 0u, GPK_SORT_AUTO, 0 \
    }
/* The same options under the name that fits every sort. */
typedef gpk_radix_opts gpk_sort_opts;
#define GPK_SORT_OPTS_INIT GPK_RADIX_OPTS_INIT

/* Sizes: every sort takes n up to what memory allows on every backend (no
 * 2^31 or 2^32 limit); only gpk_sort_perm's u32 sigma stops at 2^32 - 1.
 * The CUDA and OpenCL backends hold the keys (and values or sigma) twice
 * in device memory, so n * 2 * (key + value bytes) must fit there.
 *
 * Sorts n keys of type `type` in place. opts may be NULL (defaults). */
GPK_API gpk_status gpk_sort_keys(gpk_ctx *ctx, gpk_type type, void *keys, size_t n,
                                 const gpk_radix_opts *opts);

/* Sorts n keys from `in` into `out`, leaving `in` as it was (the copying
 * sort, as numpy.sort): the same order and options as gpk_sort_keys. in ==
 * out is allowed and sorts in place; buffers that overlap otherwise are
 * GPK_EINVAL. On the CPU the radix sort's first pass reads `in` itself, so
 * the copy costs no pass of its own and `out`'s pages are first touched by
 * the sorting threads; other backends and quicksort copy `in` to `out` and
 * sort there. On failure `in` is unchanged and `out` is undefined. */
GPK_API gpk_status gpk_sort_keys_to(gpk_ctx *ctx, gpk_type type, const void *in, void *out, size_t n,
                                    const gpk_radix_opts *opts);

/* Sorts keys in place and writes sigma: keys_out[j] = keys_in[sigma[j]].
 * sigma is u32: n must be <= UINT32_MAX (2^32 - 1), else GPK_EINVAL; use
 * gpk_sort_perm64 beyond. */
GPK_API gpk_status gpk_sort_perm(gpk_ctx *ctx, gpk_type type, void *keys, uint32_t *sigma, size_t n,
                                 const gpk_radix_opts *opts);

/* gpk_sort_perm with a u64 sigma, for any n. The same sort and the same
 * sigma; the 32-bit one moves half the sigma bytes, so it is the faster
 * choice below 2^32 keys. */
GPK_API gpk_status gpk_sort_perm64(gpk_ctx *ctx, gpk_type type, void *keys, uint64_t *sigma, size_t n,
                                   const gpk_radix_opts *opts);

/* Sorts keys and moves values with them, stably. value_type gives only the
 * width: any 4-byte (u32, i32, f32) or 8-byte (u64, i64, f64) type. */
GPK_API gpk_status gpk_sort_pairs(gpk_ctx *ctx, gpk_type key_type, void *keys, gpk_type value_type,
                                  void *values, size_t n, const gpk_radix_opts *opts);

/* Sorts n records of record_size bytes (1..256) in place by the key of
 * type key_type stored at byte offset key_offset of each record (any
 * alignment; key_offset + key size <= record_size). The key order is that
 * of gpk_sort_keys. RADIX sorts (key, index) pairs with the radix sort and
 * gathers the records on the host (stable); QUICK sorts (key, index) pairs
 * with the quicksort and gathers on the backend (CUDA: on the device; not
 * stable). */
GPK_API gpk_status gpk_sort_records(gpk_ctx *ctx, void *records, size_t n, size_t record_size,
                                    size_t key_offset, gpk_type key_type, const gpk_sort_opts *opts);

/* The algorithm the last successful sort call on ctx ran (never AUTO). */
GPK_API gpk_sort_algo gpk_last_sort_algo(const gpk_ctx *ctx);
/* The variant the last successful sort on ctx ran, for reports: on CUDA
 * "radix-onesweep" (LSD passes), "radix-small" (the same passes in one
 * launch, for small inputs: docs/guide.md), "radix-hybrid" (MSD window + on-chip
 * bucket sorts, where a test enables it) or "radix-hybrid+lsd" (skewed keys:
 * some buckets sorted by LSD passes); on the CPU "radix-vector" (keys alone,
 * or pairs and permutations as (key, index) composites, by a vectorised
 * quicksort), "radix-vector-avx2" or "radix-vector-avx512" (4-byte keys
 * alone by gpk's own AVX2 or AVX-512 quicksort, where chosen) or
 * "radix-presorted" (the input was already in order, or keys alone in
 * reverse order: one read, and a copy or reversal where needed);
 * elsewhere the algorithm's name. */
GPK_API const char *gpk_last_sort_path(const gpk_ctx *ctx);
/* The instruction set the CPU backend's vectorised sort runs at on this
 * processor: "avx512", "avx2", "portable" (the radix passes alone), or,
 * where the library was built without Highway, "avx512 (without
 * Highway)" or "avx2 (without Highway)" (gpk's own quicksorts of 4- and
 * 8-byte keys alone) or "portable (without Highway)". */
GPK_API const char *gpk_cpu_sort_simd(void);
GPK_API const char *gpk_sort_algo_name(gpk_sort_algo a);
GPK_API gpk_status gpk_sort_algo_parse(const char *name, gpk_sort_algo *out);

/* The plain sequential reference: a stable merge sort on mapped keys, as
 * simple as can be, that shares no code with the backends. values (width
 * 0, 4 or 8) and sigma may be NULL. key_bits 0 (or GPK_KEY_BITS_ALL)
 * means all bits. Needs no
 * context; the tests hold every backend to its answer. */
GPK_API gpk_status gpk_sort_reference(gpk_type key_type, void *keys, size_t value_width, void *values,
                                      uint32_t *sigma, size_t n, unsigned key_bits);
/* The same in either order: descending 0 or 1 (the order of
 * gpk_radix_opts.descending). */
GPK_API gpk_status gpk_sort_reference_ordered(gpk_type key_type, void *keys, size_t value_width, void *values,
                                              uint32_t *sigma, size_t n, unsigned key_bits, int descending);

/* ---- Sorting data spread over the devices of a context (shards) ---------
 *
 * A context opened over K devices (gpk_ctx_opts.devices, GPK_DEVICES=0,1)
 * sorts data of which each device holds a part: shard i lives in the
 * memory of the context's i-th device (device memory on CUDA, host memory
 * on the CPU backend's virtual devices). Afterwards the shards' outputs
 * hold the globally sorted sequence, cut by rank: output i holds elements
 * [off_i, off_i + m_i) of the sorted whole, m_i = gpk_shard_share(n, K, i)
 * (n the total; the first n mod K outputs hold one more), whatever the
 * keys (all-equal keys included). Stable: equal keys keep the order
 * (shard, index in shard). The order of keys is that of gpk_sort_keys;
 * opts: key_bits (0 or GPK_KEY_BITS_ALL = all bits of the type, as in
 * gpk/cuda.h: no detection pass), radix_bits; algorithm must be AUTO or
 * RADIX.
 *
 * Plans (docs/guide.md, "Several GPUs"; GPK_MULTI_PLAN=part|merge|lsd
 * picks; by default part for 4-byte keys of large shards on CUDA, from the
 * size in docs/guide.md, else merge): part: every device partitions its shard
 * by the top 8 bits into its temp (the inputs are only read), the buckets'
 * pieces move to the device that owns each bucket's first position, and
 * each bucket is sorted there by the bits below as its pieces arrive
 * (skewed keys fall back to merge before anything moves).
 * lsd (only with GPK_MULTI_PLAN=lsd, where every device can reach every
 * other's memory; slower than merge as measured, docs/perf/scale.md):
 * every radix pass is a stable counting sort of the whole sequence (shard
 * 0, shard 1, ...), each device storing its keys at their global positions
 * on the devices that own them (peer-to-peer stores over NVLink); the
 * inputs are only read. merge: every device sorts its shard in place (the
 * inputs are scratch), exact splitters by co-ranking the sorted shards, and
 * each device merges the pieces that belong to it, reading the other
 * devices' pieces over peer-to-peer loads.
 *
 * Temporary storage, CUB-style: call with shards[0].temp == NULL to get
 * every shards[i].temp_bytes (memory of device i), allocate, call again.
 * The call is synchronous: on CUDA it first waits for all work on every
 * device (so the caller's writes of the inputs, on any stream, are done),
 * runs on the context's own streams, and returns when the outputs are
 * written (it reads digit counts or co-ranks back on the way). Values are
 * 4 or 8 bytes wide. A failure leaves each input shard a permutation of
 * itself (values moved with their keys); the outputs are then undefined.
 * CUDA: the other devices reach each device's buffers where they lie (peer
 * access, enabled by the context; lsd writes the outputs and the temp,
 * merge reads the inputs, part copies between the temps and writes the
 * next device's output): memory from cudaMalloc is reachable so; memory
 * from a stream-ordered pool (cudaMallocAsync) only where the pool grants
 * the other devices access (cudaMemPoolSetAccess). */
typedef struct gpk_shard {
    void *keys;       /* n keys: scratch (merge: sorted in place) */
    void *values;     /* NULL (keys only), or n values moved with them */
    size_t n;         /* may be 0 */
    void *keys_out;   /* gpk_shard_share(total, K, i) keys */
    void *values_out; /* as many values (pairs only) */
    void *temp;       /* temp_bytes of scratch in the same memory */
    size_t temp_bytes;
} gpk_shard;

/* Elements output i of k holds when n are sorted: n / k, plus one for the
 * first n % k outputs. */
GPK_API size_t gpk_shard_share(size_t n, int k, int i);

/* shards: gpk_ctx_info.n_devices entries, shard i on device i. */
GPK_API gpk_status gpk_sort_shards_keys(gpk_ctx *ctx, gpk_type key_type, gpk_shard *shards,
                                        const gpk_sort_opts *opts);
GPK_API gpk_status gpk_sort_shards_pairs(gpk_ctx *ctx, gpk_type key_type, size_t value_width,
                                         gpk_shard *shards, const gpk_sort_opts *opts);

/* ---- Segmented and batched sorts ----------------------------------------
 *
 * Many independent sorts in one call: each segment of the array is sorted
 * on its own, stably, in the key order of gpk_sort_keys (or its reverse,
 * below). Segments are either
 *   rows: begin == NULL, segment i = [i * length, (i + 1) * length) for
 *         i < count (count * length <= n), as numpy's sort(axis=-1) of a
 *         count x length matrix; or
 *   offsets: segment i = [begin[i], end[i]) (CUB's convention), 64-bit
 *         offsets into the n elements; empty segments are allowed, the
 *         segments need not be in order nor cover the array, but must not
 *         overlap. Elements outside every segment are left alone.
 * The host API checks begin[i] <= end[i] <= n and that no two segments
 * overlap (GPK_EINVAL otherwise) before touching anything. */
typedef struct gpk_segments {
    size_t count;          /* number of segments (0 allowed) */
    const uint64_t *begin; /* count begin offsets, or NULL for rows */
    const uint64_t *end;   /* count end offsets (with begin) */
    uint64_t length;       /* rows: the length of each (begin == NULL) */
} gpk_segments;

/* descending: reverse order, still stable (equal keys keep their input
 * order). Floats: every NaN comes last in either order (as numpy puts
 * them); the other keys come in exactly the reverse of the ascending
 * order, so +0.0 comes before -0.0.
 * small_max and large_min tune how segments are spread (0 = tuned for the
 * backend): segments of at least large_min keys each get the backend's
 * full radix sort (every thread, or the whole device); the others are
 * sorted whole by one thread each (CPU), or on CUDA in on-chip memory by
 * one block (up to small_max keys) or by one block's passes over global
 * memory (between small_max and large_min). */
typedef struct gpk_segmented_opts {
    int descending;
    size_t small_max;
    size_t large_min;
} gpk_segmented_opts;
#define GPK_SEGMENTED_OPTS_INIT \
    {                           \
        0, 0u, 0u               \
    }

/* Sorts the keys of every segment in place. opts may be NULL (defaults).
 * Backends: CPU, CUDA and OpenCL (host arrays; OpenCL: two stable radix
 * sorts of all the covered elements, by key and then by segment).
 * On failure the keys (values, sigma) are unchanged. */
GPK_API gpk_status gpk_sort_segmented_keys(gpk_ctx *ctx, gpk_type key_type, void *keys, size_t n,
                                           const gpk_segments *segs, const gpk_segmented_opts *opts);
/* The copying form (as gpk_sort_keys_to): out receives all n keys of in,
 * each segment sorted, keys outside every segment as they were; in is not
 * changed. in == out is the in-place sort; other overlaps are refused.
 * The copy runs on the context's threads, so a fresh out takes its
 * first-touch page faults in parallel. */
GPK_API gpk_status gpk_sort_segmented_keys_to(gpk_ctx *ctx, gpk_type key_type, const void *in, void *out,
                                              size_t n, const gpk_segments *segs,
                                              const gpk_segmented_opts *opts);
/* Moves values (any 4- or 8-byte type) with their keys. */
GPK_API gpk_status gpk_sort_segmented_pairs(gpk_ctx *ctx, gpk_type key_type, void *keys, gpk_type value_type,
                                            void *values, size_t n, const gpk_segments *segs,
                                            const gpk_segmented_opts *opts);
/* Sorts the keys and writes each segment's permutation, relative to the
 * segment (numpy's argsort(axis=-1)): for segment [b, e) and b <= j < e,
 * keys_out[j] = keys_in[b + sigma[j]]. Each segment must hold at most
 * UINT32_MAX keys. */
GPK_API gpk_status gpk_sort_segmented_perm(gpk_ctx *ctx, gpk_type key_type, void *keys, uint32_t *sigma,
                                           size_t n, const gpk_segments *segs,
                                           const gpk_segmented_opts *opts);
/* The sequential reference of the three (values of width 0, 4 or 8 and
 * sigma may be NULL): each segment by a plain stable merge sort; it
 * validates the segments as the host API does. Needs no context. */
GPK_API gpk_status gpk_sort_segmented_reference(gpk_type key_type, void *keys, size_t value_width,
                                                void *values, uint32_t *sigma, size_t n,
                                                const gpk_segments *segs, int descending);

#ifdef __cplusplus
}
#endif
#endif
