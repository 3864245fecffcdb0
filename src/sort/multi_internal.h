/* Multi-device sort: the driver in multi.c sorts shards spread
 * over the devices of a context (gpk_sort_shards_*) by one of two plans:
 *  lsd    distributed LSD passes: in every pass, every device writes each
 *         of its keys to its global position in the stable counting sort
 *         of the whole sequence by that digit, on the device that owns the
 *         position (CUDA: stores through peer pointers over NVLink); the
 *         digit counts that give the positions are exchanged through the
 *         host between passes;
 *  merge  local sorts, exact splitters by co-ranking, a merge of the
 *         pieces on each device.
 * It talks to the devices through this table: the CUDA backend
 * (multi_cuda.cu) or the CPU's virtual devices (multi.c), so that CI tests
 * the driver.
 *
 * Calls may return before the work is done (CUDA: issued on each device's
 * stream); wait() returns when everything issued is done, with the first
 * failure. rank() is synchronous. */
#ifndef GPK_MULTI_INTERNAL_H
#define GPK_MULTI_INTERNAL_H

#include "radix_internal.h"
#include "../hooks/bench_hooks.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most probes per boundary and round of the splitter search: with 4095
 * the search takes 3 rounds for 32-bit keys and 6 for 64-bit ones (plus one
 * to count the keys equal to the splitter), each a small copy to and from
 * every device; the CPU's virtual devices take 255 (more rounds, less
 * work per round for the host that runs them). */
#define GPK_MULTI_PROBES 4095

/* The most digits of the lsd plan's last pass (11-bit digits). */
#define GPK_MULTI_MAX_DIGITS 2048

enum { GPK_MULTI_PLAN_LSD = 0, GPK_MULTI_PLAN_MERGE = 1, GPK_MULTI_PLAN_PART = 2 };

/* The part plan's top digit: 8 bits (256 buckets). */
#define GPK_MULTI_PART_BITS 8

/* The part plan's largest bucket on a device whose output holds m keys
 * (every backend sizes its buffers by it, the driver checks it): m / 16,
 * at least 4096; the device's working buffer holds m plus one such bucket. Uniform keys fill a bucket with n / 256 keys, so this
 * holds up to 16 devices; skewed keys (a top digit shared by many keys)
 * take the merge plan. The MPI part plan (src/mpi/sort_mpi.c) caps a
 * rank's buckets by the same rule. */
static inline size_t gpk__multi_part_cap(size_t m) { return m / 16 > 4096 ? m / 16 : 4096; }

/* The part plan's bucket sorts side by side on each device (8 streams
 * measured fastest against 4 and 1, docs/perf/scale.md); the MPI part
 * plan's too. */
#define GPK_MULTI_PART_STREAMS 8

/* The last multi-device sort's phases, gpk_multi_stats and
 * gpk__multi_stats(ctx), are declared in hooks/bench_hooks.h. */

typedef struct gpk_multi_dev {
    gpk_ctx *ctx;
    gpk_multi_stats *stats; /* this sort's phases, which the backend adds to */
    int k;                  /* shards = devices */
    gpk_shard *shards;      /* k of them, validated */
    size_t total;           /* sum of shards[i].n */
    gpk_type key_type;
    unsigned key_width, value_width; /* value_width 0: keys only */
    unsigned key_bits, radix_bits;   /* from the caller's options */
    uint64_t mask;                   /* the mapped-key bits that take part in the order */
    unsigned probes;                 /* per boundary and round, 1..GPK_MULTI_PROBES */
    int out_in_temp; /* CUDA: the outputs go into each shard's scratch, after the local sort's use
                                  of it (keys_out, values_out are set there): the host API's two copies */
    void *impl;
    /* stable sort of shard i's keys (and values) in place */
    gpk_status (*sort)(struct gpk_multi_dev *d, int i);
    /* for each of m probes (mapped, masked keys) and every shard i:
     * below[i * m + c] = keys of sorted shard i whose masked mapped key is
     * < probes[c]; le likewise with <= (le may be NULL) */
    gpk_status (*rank)(struct gpk_multi_dev *d, const uint64_t *probes, size_t m, uint64_t *below,
                       uint64_t *le);
    /* output j (shards[j].keys_out) = the stable merge of the pieces
     * [lo[i], hi[i]) of the sorted shards i = 0..k-1, ties in shard order */
    gpk_status (*merge)(struct gpk_multi_dev *d, int j, const size_t *lo, const size_t *hi);
    gpk_status (*wait)(struct gpk_multi_dev *d);

    /* The lsd plan. */
    int plan;                           /* GPK_MULTI_PLAN_* */
    size_t bounds[GPK_MAX_DEVICES + 1]; /* output j holds the global positions [bounds[j], bounds[j + 1]) */
    /* set by the backend: counts and bases [k][GPK_MULTI_MAX_DIGITS],
     * next [k][k][GPK_MULTI_MAX_DIGITS] */
    uint64_t *lsd_counts, *lsd_bases, *lsd_next;
    /* the passes, the digits of each in digits[] (at most 64 passes) */
    unsigned (*lsd_plan)(struct gpk_multi_dev *d, unsigned *digits);
    /* counts[x]: shard i's keys of first digit x, there after wait() */
    gpk_status (*lsd_count)(struct gpk_multi_dev *d, int i, uint64_t *counts);
    /* pass p of device i: its keys of digit x go to the global positions
     * bases[x], bases[x] + 1, ... in order, on their owners; then (not on
     * the last pass) next[o * D + x] = the keys it sent to device o whose
     * next digit is x (D: the next pass's digits), there after wait().
     * Every device's pass p - 1 is done before any pass p starts. */
    gpk_status (*lsd_pass)(struct gpk_multi_dev *d, int i, unsigned p, const uint64_t *bases, uint64_t *next);

    /* The part plan (partition first): every device partitions its shard
     * by the top digit into its own buffer X_i; the buckets go to the
     * devices that own their first position, into a working buffer W_o,
     * each bucket's pieces in shard order; every bucket is sorted there on
     * the bits below the digit into the outputs. Each backend sizes W_o and
     * the bucket sorts by gpk__multi_part_cap of output o's share; past it
     * the sort takes the merge plan (the shards untouched). */
    uint64_t *part_starts; /* k x 2^GPK_MULTI_PART_BITS for part_partition (CUDA: pinned), else NULL */
    /* shard i -> X_i, stable by digit (mapped key & mask) >> shift, D
     * digits; starts[x] = X_i's keys of digits below x (its first key of
     * digit x), x < D, there after wait() */
    gpk_status (*part_partition)(struct gpk_multi_dev *d, int i, unsigned shift, unsigned D,
                                 uint64_t *starts);
    /* X_i[from, from + count) (digit x) -> W_o[to, to + count) */
    gpk_status (*part_move)(struct gpk_multi_dev *d, int i, unsigned x, size_t from, int o, size_t to,
                            size_t count);
    /* bucket x, W_o[at, at + count), once every move of digit x into W_o
     * is done: sorted by the bits below shift; its first split keys go to
     * output o from out_at, the others to output o + 1 from 0 */
    gpk_status (*part_sort)(struct gpk_multi_dev *d, int o, unsigned x, size_t at, size_t count,
                            size_t out_at, size_t split, unsigned shift);
} gpk_multi_dev;

/* gpk_sort_shards_* (fn names the caller in messages). */
gpk_status gpk__sort_shards(gpk_ctx *ctx, gpk_type key_type, size_t value_width, gpk_shard *shards,
                            const gpk_sort_opts *opts, const char *fn, int out_in_temp);

/* Runs the plan on d (argument checks done, outputs sized). */
gpk_status gpk__multi_run(gpk_multi_dev *d);

/* The plan a sort of total keys on ctx takes: GPK_MULTI_PLAN=merge|part|lsd
 * when set (lsd only where every device can write every other's memory:
 * CUDA peer access, always on the CPU's virtual devices; part not for the
 * CUDA host API, out_in_temp); else part for 4-byte keys from
 * gpk__multi_part_min keys a device (falling back to merge for skewed
 * keys), and merge below it, for 8-byte keys and for the CUDA host API. */
int gpk__multi_plan(const gpk_ctx *ctx, unsigned key_width, int out_in_temp, size_t total);

/* Where the part plan starts to pay on CUDA, in keys a device (measured on
 * two GPUs, docs/perf/scale.md): below it the host's issue of the bucket
 * sorts costs more than the exchange it hides. */
#define GPK_MULTI_PART_MIN_CUDA ((size_t)1 << 29)
/* The fewest keys a device (total / devices) that take the part plan by
 * default: a test's gpk__test.multi_part_min when set, else
 * GPK_MULTI_PART_MIN_CUDA on CUDA and 0 on the CPU's virtual devices (they
 * are for tests). */
size_t gpk__multi_part_min(const gpk_ctx *ctx);

/* The smallest host-API sort that a context of several devices spreads
 * over them: a test's gpk__test.multi_min when set, else 2^22 keys on CUDA (a
 * few splitter rounds cost a fraction of a millisecond; docs/perf/scale.md
 * measures 2^22), never on the CPU's virtual devices (they are for tests,
 * which set gpk__test.multi_min). */
size_t gpk__multi_min(const gpk_ctx *ctx);

/* Host-API sort of job on a context of several devices (radix.c calls it
 * when ctx->n_devices > 1). *declined: the input does not fit the devices
 * (nothing touched; the caller sorts it another way). */
gpk_status gpk__multi_sort_host(gpk_ctx *ctx, const gpk_radix_job *job, int *declined);

/* A backend's devices for the multi-device sort: the front end (multi.c)
 * plans, the backend runs the plan's steps on its devices. */
typedef struct gpk__multi_backend {
    size_t part_min; /* gpk__multi_part_min without a test's override */
    size_t host_min; /* gpk__multi_min without a test's override */
    /* 1: devices with memory of their own: the host API's outputs go into
     * each shard's scratch (out_in_temp), where the part plan does not fit,
     * and the lsd plan needs peer access between every two devices */
    int own_memory;
    /* temp bytes shard i needs; NULL: a small constant (the CPU's) */
    size_t (*temp)(gpk_ctx *ctx, int i, int k, size_t n_i, size_t m_i, unsigned key_width,
                   unsigned value_width, const gpk_radix_opts *o, int out_in_temp, int plan);
    /* fills d's operations and buffers; close frees them (also after a
     * failed open) */
    gpk_status (*open)(gpk_multi_dev *d);
    void (*close)(gpk_multi_dev *d);
    /* the host API's sort over the devices; NULL: the front end's (host
     * arrays as shards) */
    gpk_status (*sort_host)(gpk_ctx *ctx, const gpk_radix_job *job, int *declined);
} gpk__multi_backend;

extern const gpk__multi_backend gpk__multi_cpu; /* multi.c: the CPU's virtual devices */
#ifdef GPK_HAVE_CUDA
extern const gpk__multi_backend gpk__multi_cuda; /* multi_cuda.cu */
#endif

#ifdef __cplusplus
}
#endif
#endif
