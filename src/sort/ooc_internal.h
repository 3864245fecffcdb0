/* Out-of-core sort: the driver in ooc.c sorts host arrays larger
 * than the device budget as sorted runs, then merges them partition by
 * partition. It talks to a "device" through this table: the CUDA backend
 * (ooc_cuda.c) or the CPU fake in ooc.c, which runs the same driver with
 * host buffers and the CPU sort so that CI tests the chunking and co-ranks.
 *
 * A device has `slots` buffers of `cap` elements (keys and values). Calls
 * may return before the work is done (CUDA: issued on streams); the device
 * orders them itself: a slot's sort follows its loads, its store follows
 * its sort, and a load at offset 0 into a slot waits until the slot's last
 * store has left it. wait() returns when everything issued is done, with
 * the first failure. */
#ifndef GPK_OOC_INTERNAL_H
#define GPK_OOC_INTERNAL_H

#include "radix_internal.h"
#include "../hooks/bench_hooks.h"

#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The statistics of the last out-of-core sort on a context, gpk_ooc_stats
 * and gpk__ooc_stats(ctx), for gpk bench sort and the tests, are declared
 * in hooks/bench_hooks.h. */

typedef struct gpk_ooc_dev {
    gpk_ctx *ctx;
    gpk_ooc_stats *stats; /* the sort's statistics, which the device adds to */
    size_t cap;           /* elements a slot holds */
    int slots;
    size_t n; /* elements of the sort (set before open) */
    /* runs 0 .. kept_runs - 1 stay on the device after the first phase
     * (set at open from the memory left beside the slots), so that the
     * merge gathers their slices there instead of loading them back from
     * B; B still receives every run, so a failure in the merge can always
     * give the caller the sorted runs */
    size_t kept_runs;
    gpk_type key_type;
    unsigned key_width, value_width; /* value_width 0: keys only */
    unsigned key_bits, radix_bits;   /* from the caller's options */
    void *impl;
    /* n elements from host keys/vals into the slot at element offset at */
    gpk_status (*load)(struct gpk_ooc_dev *d, int slot, size_t at, const void *keys, const void *vals,
                       size_t n);
    /* stable sort of the slot's first n elements */
    gpk_status (*sort)(struct gpk_ooc_dev *d, int slot, size_t n);
    /* keeps the slot's first n (sorted) elements on the device as run r
     * (r < kept_runs); issued after the sort, before the store */
    gpk_status (*stash)(struct gpk_ooc_dev *d, int slot, size_t run, size_t n);
    /* n elements of kept run r from element `from` into the slot at element
     * offset at, ordered like load */
    gpk_status (*load_kept)(struct gpk_ooc_dev *d, int slot, size_t at, size_t run, size_t from, size_t n);
    /* the slot's first n elements to host keys/vals */
    gpk_status (*store)(struct gpk_ooc_dev *d, int slot, void *keys, void *vals, size_t n);
    /* optional: before the runs touch host elements [from, from + n) */
    gpk_status (*prepare)(struct gpk_ooc_dev *d, size_t from, size_t n);
    /* optional: the merge is done with elements [0, upto) of the caller's arrays */
    gpk_status (*release)(struct gpk_ooc_dev *d, size_t upto);
    /* returns when the slot's last store is done (the progress counts it) */
    gpk_status (*done)(struct gpk_ooc_dev *d, int slot);
    gpk_status (*wait)(struct gpk_ooc_dev *d);
    void (*close)(struct gpk_ooc_dev *d);
} gpk_ooc_dev;

/* The host arrays a device may page-lock for its transfers: the caller's
 * (a) and the driver's extra buffer (b). */
typedef struct gpk_ooc_host {
    void *a_keys, *a_vals, *b_keys, *b_vals;
    size_t n;
    /* b_locked non-NULL: B is the context's kept buffer (b_bytes[2] long,
     * keys and values), locked once and left locked; b_locked[i] says it is */
    int *b_locked;
    size_t b_bytes[2];
    /* stage non-NULL: the context's kept pinned staging buffer for the
     * caller's arrays (*stage_bytes long), grown or made here */
    void **stage;
    size_t *stage_bytes;
} gpk_ooc_host;

/* How many runs of cap elements (per bytes each) a device keeps in
 * bytes_left of its memory: as many as fit, at most all of the n elements'
 * runs and at most a test's gpk__test.ooc_resident. Inline: the devices
 * call it, and a backend never calls its front end. */
static inline size_t gpk__ooc_kept_runs(size_t n, size_t cap, size_t per, size_t bytes_left)
{
    const size_t runs = (n + cap - 1) / cap;
    size_t kept = bytes_left / (cap * per);
    if (kept > runs) kept = runs;
    const long long most = gpk__hook(gpk__test.ooc_resident, -1); /* a test's limit */
    if (most >= 0 && (unsigned long long)most < kept) kept = (size_t)most;
    return kept;
}

/* A backend's device for the out-of-core driver (ooc.c). */
typedef struct gpk__ooc_backend {
    /* whether the in-memory sort of job (values of value_width bytes)
     * would not fit (the device budget; the device's free memory) */
    int (*too_large)(gpk_ctx *ctx, const gpk_radix_job *job, unsigned value_width);
    /* fills d (cap, slots, ops) within budget bytes of device memory (0:
     * what is free), page-locking the host arrays of h where it can;
     * GPK_EINVAL when the budget is too small */
    gpk_status (*open)(gpk_ctx *ctx, gpk_ooc_dev *d, size_t budget, const gpk_ooc_host *h);
    /* unlocks a kept buffer that open locked; frees a kept staging buffer
     * that open made (NULL where open does neither) */
    void (*unlock)(gpk_ctx *ctx, void *p, size_t bytes);
    void (*free_pinned)(gpk_ctx *ctx, void *p);
} gpk__ooc_backend;

extern const gpk__ooc_backend gpk__ooc_cpu; /* ooc.c: host buffers and the CPU sort */
#ifdef GPK_HAVE_CUDA
extern const gpk__ooc_backend gpk__ooc_cuda; /* ooc_cuda.c */
#endif

/* Whether the host-API sort of job must go out of core on ctx (device
 * budget, or for CUDA the free device memory or n >= 2^32). */
int gpk__ooc_wanted(gpk_ctx *ctx, const gpk_radix_job *job);

/* Sorts job out of core (n >= 2). Failure semantics in docs/guide.md:
 * ENOMEM or EINVAL (budget too small) before anything is touched; a
 * failure during the runs leaves the input as it was; a failure during
 * the merge leaves a permutation of the input (sorted runs), pairs and
 * sigma kept consistent with their keys. */
gpk_status gpk__sort_ooc(gpk_ctx *ctx, const gpk_radix_job *job);

#ifdef __cplusplus
}
#endif
#endif
