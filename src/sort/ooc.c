/* Out-of-core sort driver and the CPU fake of a device.
 *
 * Plan: sorted runs, then a merge by output partitions.
 *  1. Runs: the input (the caller's array A) is cut into runs of one slot
 *     (cap elements); each is loaded, sorted on the device (stable radix)
 *     and stored into an extra host buffer B at its own place. A is only
 *     read, so a failure here leaves the input as it was.
 *  2. Merge: the output is cut into partitions of cap elements. For each,
 *     co-ranks (a binary search over the key values, ties broken by run
 *     index, so the merge is stable) give the slice of every run that
 *     belongs to it; the slices are loaded one after another into a slot,
 *     which then holds the runs' slices in run order, and a stable sort of
 *     that slot is their stable merge; it is stored into A. A failure here
 *     copies B (the sorted runs: a permutation of the input) back into A.
 * Skew does not matter: the partitions have cap elements whatever the keys,
 * all-equal keys included. The device sort re-sorts merged slices instead
 * of merging them: no new kernel, and on the GPU the sort runs faster than
 * the link that feeds it (docs/perf/radix.md, "Out-of-core").
 * Three slots let the load of one, the sort of the next and the store of a
 * third overlap; the device orders them (ooc_internal.h).
 * Runs kept on the device: the memory beside the slots holds as many sorted
 * runs as fit (all of them for inputs up to about 60% of the device), and
 * the merge gathers their slices on the device, so that only the output
 * crosses the link in phase 2. They still go to B in phase 1, on the link's
 * other direction, which the loads leave idle: the co-ranks read them there
 * and a failed merge hands them to the caller. */
#define _GNU_SOURCE
#include "sort_backend.h"

#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OOC_SLOTS 3
#define OOC_MIN_CAP 8     /* a slot smaller than this makes no real progress */
#define OOC_MAX_RUNS 4096 /* the co-rank table is (runs + 1)^2 entries */

/* ---- host helpers ------------------------------------------------------------ */

/* The extra buffer (gpk__host_alloc_large) is not touched here: on CUDA
 * the locking threads fault it in first; on the CPU the first copies into
 * it do. */
/* The extra buffer stays with the context (page-locked on CUDA) for the
 * next call, so that a code which sorts large inputs again and again pays
 * its page faults and locking once; gpk_ctx_trim and gpk_ctx_destroy give
 * it back (a test's gpk__test.ooc_keep 0 frees it after every call). */
typedef struct ooc_keep {
    unsigned char *buf[2]; /* keys, values */
    size_t bytes[2];
    int locked[2];
    void *stage; /* CUDA: the pinned staging of the caller's arrays */
    size_t stage_bytes;
} ooc_keep;

/* The out-of-core device of ctx's backend (NULL: none). */
static const gpk__ooc_backend *ooc_of(const gpk_ctx *ctx)
{
    const gpk__sort_backend *be = gpk__sort_backend_of(ctx->backend);
    return be ? be->ooc : NULL;
}

static void keep_drop(gpk_ctx *ctx, ooc_keep *k, int i)
{
    const gpk__ooc_backend *ob = ooc_of(ctx);
    if (k->locked[i] && ob && ob->unlock) ob->unlock(ctx, k->buf[i], k->bytes[i]);
    free(k->buf[i]);
    k->buf[i] = NULL;
    k->bytes[i] = 0;
    k->locked[i] = 0;
}

/* The context's release hook (gpk_ctx_destroy, gpk_ctx_trim): frees the
 * kept buffers; the next out-of-core sort allocates them again. */
static void ooc_release(gpk_ctx *ctx)
{
    void **slot = gpk__ctx_hook_state(ctx, ooc_release);
    ooc_keep *k = slot ? (ooc_keep *)*slot : NULL;
    if (!k) return;
    keep_drop(ctx, k, 0);
    keep_drop(ctx, k, 1);
    const gpk__ooc_backend *ob = ooc_of(ctx);
    if (k->stage && ob && ob->free_pinned) ob->free_pinned(ctx, k->stage);
    free(k);
    *slot = NULL;
}

/* What ctx keeps for the out-of-core sort, created (with the context's
 * release hook) on first use; NULL when out of memory or hooks. */
static ooc_keep *kept(gpk_ctx *ctx)
{
    void **slot = gpk__ctx_hook(ctx, ooc_release, 1);
    if (!slot) return NULL;
    if (!*slot) *slot = calloc(1, sizeof(ooc_keep));
    return (ooc_keep *)*slot;
}

/* The statistics: a hook of their own, which gpk_ctx_trim leaves alone (the
 * kept buffers' hook is trimmed). */
GPK__CTX_STATS(gpk_ooc_stats, gpk__ooc_stats)

static unsigned char *extra_buffer(gpk_ctx *ctx, int keep, int i, size_t bytes, int threads)
{
    if (!keep) return gpk__host_alloc_large(bytes);
    ooc_keep *k = kept(ctx);
    if (!k) return NULL;
    if (k->bytes[i] >= bytes && k->buf[i]) return k->buf[i];
    keep_drop(ctx, k, i);
    k->buf[i] = gpk__host_alloc_large(bytes);
    if (k->buf[i]) k->bytes[i] = bytes;
    return k->buf[i];
}

static void extra_free(int keep, void *p)
{
    if (!keep) free(p);
}

static double host_memory_bytes(void) { return (double)gpk__host_memory_bytes(); }

static unsigned value_width_of(const gpk_radix_job *job)
{
    return job->values ? job->value_width : job->sigma ? job->sigma_width : 0u;
}

int gpk__ooc_wanted(gpk_ctx *ctx, const gpk_radix_job *job)
{
    const unsigned vw = value_width_of(job);
    /* Test hook: with a budget set, gpk__test.ooc_force sends every sort out
     * of core, so that the tests reach sizes around one slot (which would
     * otherwise fit the budget in memory). */
    if (ctx->device_budget && gpk__hook(gpk__test.ooc_force, 0) == 1) return 1;
    const gpk__ooc_backend *ob = ooc_of(ctx);
    return ob && ob->too_large(ctx, job, vw);
}

/* ---- the CPU fake of a device ------------------------------------------------ */

typedef struct cpu_dev {
    unsigned char *keys[OOC_SLOTS], *vals[OOC_SLOTS];
    unsigned char *kept_keys, *kept_vals; /* kept_runs runs of cap elements */
} cpu_dev;

static gpk_status cpu_load(gpk_ooc_dev *d, int slot, size_t at, const void *keys, const void *vals, size_t n);

static gpk_status cpu_stash(gpk_ooc_dev *d, int slot, size_t run, size_t n)
{
    cpu_dev *c = (cpu_dev *)d->impl;
    gpk__host_copy(c->kept_keys + run * d->cap * d->key_width, c->keys[slot], n * d->key_width,
                   d->ctx->threads);
    if (d->value_width)
        gpk__host_copy(c->kept_vals + run * d->cap * d->value_width, c->vals[slot], n * d->value_width,
                       d->ctx->threads);
    return GPK_OK;
}

static gpk_status cpu_load_kept(gpk_ooc_dev *d, int slot, size_t at, size_t run, size_t from, size_t n)
{
    cpu_dev *c = (cpu_dev *)d->impl;
    const size_t src = run * d->cap + from;
    return cpu_load(d, slot, at, c->kept_keys + src * d->key_width,
                    d->value_width ? c->kept_vals + src * d->value_width : NULL, n);
}

static gpk_status cpu_load(gpk_ooc_dev *d, int slot, size_t at, const void *keys, const void *vals, size_t n)
{
    cpu_dev *c = (cpu_dev *)d->impl;
    gpk__host_copy(c->keys[slot] + at * d->key_width, keys, n * d->key_width, d->ctx->threads);
    if (d->value_width)
        gpk__host_copy(c->vals[slot] + at * d->value_width, vals, n * d->value_width, d->ctx->threads);
    return GPK_OK;
}

static gpk_status cpu_sort(gpk_ooc_dev *d, int slot, size_t n)
{
    cpu_dev *c = (cpu_dev *)d->impl;
    if (n < 2) return GPK_OK;
    gpk_radix_job job;
    memset(&job, 0, sizeof job);
    job.key_type = d->key_type;
    job.key_width = d->key_width;
    job.keys = c->keys[slot];
    job.values = d->value_width ? c->vals[slot] : NULL;
    job.value_width = d->value_width;
    job.n = n;
    job.key_bits = d->key_bits;
    job.radix_bits = d->radix_bits;
    return gpk__radix_sort_cpu(d->ctx, &job);
}

static gpk_status cpu_store(gpk_ooc_dev *d, int slot, void *keys, void *vals, size_t n)
{
    cpu_dev *c = (cpu_dev *)d->impl;
    gpk__host_copy(keys, c->keys[slot], n * d->key_width, d->ctx->threads);
    if (d->value_width) gpk__host_copy(vals, c->vals[slot], n * d->value_width, d->ctx->threads);
    return GPK_OK;
}

static gpk_status cpu_wait(gpk_ooc_dev *d) { return GPK_OK; }
static gpk_status cpu_done(gpk_ooc_dev *d, int slot) { return GPK_OK; }

static void cpu_close(gpk_ooc_dev *d)
{
    cpu_dev *c = (cpu_dev *)d->impl;
    if (!c) return;
    for (int i = 0; i < OOC_SLOTS; i++) {
        free(c->keys[i]);
        free(c->vals[i]);
    }
    free(c->kept_keys);
    free(c->kept_vals);
    free(c);
    d->impl = NULL;
}

/* The budget holds the slots and the CPU sort's scratch for one slot
 * (counted as two more slots, as the CUDA device's sort needs); what is
 * left keeps runs, as on CUDA. */
static gpk_status cpu_open(gpk_ctx *ctx, gpk_ooc_dev *d, size_t budget)
{
    const size_t per = d->key_width + d->value_width;
    d->slots = OOC_SLOTS;
    d->cap = budget / ((OOC_SLOTS + 2) * per);
    /* as on CUDA: tests choose the run length with a cap on a slot */
    const long long sb = gpk__hook(gpk__test.ooc_slot_bytes, 0);
    if (sb > 0 && (size_t)sb / per < d->cap) d->cap = (size_t)sb / per;
    if (d->cap < OOC_MIN_CAP)
        return gpk__fail(ctx, GPK_EINVAL,
                         "sort: a device budget of %zu bytes is too small for an out-of-core sort of "
                         "%u-byte elements (at least %zu bytes)",
                         budget, (unsigned)per, (size_t)(OOC_SLOTS + 2) * per * OOC_MIN_CAP);
    cpu_dev *c = calloc(1, sizeof *c);
    if (!c) return gpk__fail(ctx, GPK_ENOMEM, "sort: out of host memory");
    d->impl = c;
    d->load = cpu_load;
    d->sort = cpu_sort;
    d->store = cpu_store;
    d->wait = cpu_wait;
    d->done = cpu_done;
    d->close = cpu_close;
    for (int i = 0; i < OOC_SLOTS; i++) {
        c->keys[i] = malloc(d->cap * d->key_width);
        c->vals[i] = d->value_width ? malloc(d->cap * d->value_width) : NULL;
        if (!c->keys[i] || (d->value_width && !c->vals[i])) {
            cpu_close(d);
            return gpk__fail(ctx, GPK_ENOMEM, "sort: out of host memory for the out-of-core slots");
        }
    }
    size_t kept = gpk__ooc_kept_runs(d->n, d->cap, per, budget - (OOC_SLOTS + 2) * d->cap * per);
    if (kept) {
        c->kept_keys = malloc(kept * d->cap * d->key_width);
        c->kept_vals = d->value_width ? malloc(kept * d->cap * d->value_width) : NULL;
        if (!c->kept_keys || (d->value_width && !c->kept_vals)) {
            free(c->kept_keys);
            free(c->kept_vals);
            c->kept_keys = c->kept_vals = NULL;
            kept = 0;
        }
    }
    d->kept_runs = kept;
    d->stash = cpu_stash;
    d->load_kept = cpu_load_kept;
    return GPK_OK;
}

/* ---- co-ranks ----------------------------------------------------------------- */

typedef struct runs_view {
    gpk_type type;
    const unsigned char *keys; /* B: the sorted runs one after another */
    unsigned key_width;
    size_t n, cap, count; /* run r: [r * cap, min(n, (r + 1) * cap)) */
    uint64_t mask;        /* mapped keys are compared under this mask */
} runs_view;

static size_t run_len(const runs_view *v, size_t r)
{
    const size_t start = r * v->cap;
    return v->n - start < v->cap ? v->n - start : v->cap;
}

/* Elements of run r whose mapped key is < x (or <= x when le). */
static size_t run_bound(const runs_view *v, size_t r, uint64_t x, int le)
{
    const unsigned char *keys = v->keys + r * v->cap * v->key_width;
    size_t lo = 0, hi = run_len(v, r);
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        const uint64_t k = gpk__mapped_key_at(v->type, keys, mid, v->mask);
        if (k < x || (le && k == x)) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* split[r] for every run: how many of run r's elements are among the k
 * first of the stable merge (order by key, then run, then position). */
static void co_rank(const runs_view *v, size_t k, size_t *split)
{
    if (k == 0 || k == v->n) {
        for (size_t r = 0; r < v->count; r++) split[r] = k ? run_len(v, r) : 0;
        return;
    }
    /* the smallest key value x with at least k elements <= x */
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t r = 0; r < v->count; r++) {
        const unsigned char *keys = v->keys + r * v->cap * v->key_width;
        const uint64_t first = gpk__mapped_key_at(v->type, keys, 0, v->mask);
        const uint64_t last = gpk__mapped_key_at(v->type, keys, run_len(v, r) - 1, v->mask);
        if (first < lo) lo = first;
        if (last > hi) hi = last;
    }
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        size_t le = 0;
        for (size_t r = 0; r < v->count; r++) le += run_bound(v, r, mid, 1);
        if (le >= k) hi = mid;
        else lo = mid + 1;
    }
    /* below x everything is in; the keys equal to x go in run order */
    size_t left = k;
    for (size_t r = 0; r < v->count; r++) {
        split[r] = run_bound(v, r, lo, 0);
        left -= split[r];
    }
    for (size_t r = 0; r < v->count && left; r++) {
        const size_t equal = run_bound(v, r, lo, 1) - split[r];
        const size_t take = equal < left ? equal : left;
        split[r] += take;
        left -= take;
    }
}

/* ---- the driver --------------------------------------------------------------- */

/* Test hook: gpk__test.ooc_fail_at = k makes the k-th transfer (load or store,
 * counted from 1 over both phases) fail as a device transfer would. */
typedef struct xfer {
    gpk_ooc_dev *d;
    long count, fail_at;
} xfer;

static gpk_status injected(xfer *x)
{
    return gpk__fail(x->d->ctx, GPK_EDEVICE, "sort: out-of-core transfer %ld failed (injected by a test)",
                     x->count);
}

static gpk_status x_load(xfer *x, int slot, size_t at, const void *keys, const void *vals, size_t n)
{
    if (++x->count == x->fail_at) return injected(x);
    return x->d->load(x->d, slot, at, keys, vals, n);
}

static gpk_status x_load_kept(xfer *x, int slot, size_t at, size_t run, size_t from, size_t n)
{
    if (++x->count == x->fail_at) return injected(x);
    return x->d->load_kept(x->d, slot, at, run, from, n);
}

static gpk_status x_store(xfer *x, int slot, void *keys, void *vals, size_t n)
{
    if (++x->count == x->fail_at) return injected(x);
    return x->d->store(x->d, slot, keys, vals, n);
}

/* Waits for the device after a failure (nothing may still write A or B)
 * and keeps the first failure's message. */
static gpk_status drain(gpk_ooc_dev *d, gpk_status s)
{
    char keep[GPK_ERRLEN];
    memcpy(keep, d->ctx->err, sizeof keep);
    (void)d->wait(d);
    memcpy(d->ctx->err, keep, sizeof keep);
    return s;
}

/* Item `item` of a phase is about to use its slot: wait for the slot's
 * previous store, which completes item - OOC_SLOTS, and report it. */
static gpk_status slot_ready(gpk_ooc_dev *d, size_t item, size_t before, size_t total)
{
    if (item < OOC_SLOTS) return GPK_OK;
    gpk_status s = d->done(d, (int)(item % OOC_SLOTS));
    if (s == GPK_OK && d->ctx->progress)
        d->ctx->progress(d->ctx->progress_user, (double)(before + item - OOC_SLOTS + 1) / (double)total);
    return s;
}

static void report(gpk_ctx *ctx, size_t done, size_t total)
{
    if (ctx->progress) ctx->progress(ctx->progress_user, (double)done / (double)total);
}

/* The in-memory CPU sort: the arrays and their scratch. */
static int cpu_too_large(gpk_ctx *ctx, const gpk_radix_job *job, unsigned vw)
{
    return ctx->device_budget && 2.0 * (double)job->n * (job->key_width + vw) > (double)ctx->device_budget;
}

static gpk_status cpu_open_host(gpk_ctx *ctx, gpk_ooc_dev *d, size_t budget, const gpk_ooc_host *h)
{
    (void)h; /* host buffers need no locking */
    return cpu_open(ctx, d, budget);
}

const gpk__ooc_backend gpk__ooc_cpu = {cpu_too_large, cpu_open_host, NULL, NULL};

/* The caller's arrays A and the extra buffer B of one out-of-core sort. */
typedef struct {
    unsigned char *a_keys, *a_vals, *b_keys, *b_vals;
    size_t n;
    unsigned kw, vw;
    int threads, keep; /* keep: B stays with the context */
} ooc_arrays;

/* Allocates B (kept with the context unless a test says not to), before
 * anything of the caller's is touched. */
static gpk_status alloc_extra(gpk_ctx *ctx, ooc_arrays *A)
{
    const size_t n = A->n;
    const double extra = (double)n * (A->kw + A->vw);
    const double host = host_memory_bytes();
    if (host > 0 && 2.0 * extra > host)
        return gpk__fail(ctx, GPK_ENOMEM,
                         "sort: an out-of-core sort of %zu elements needs %.2f GiB of host memory beside the "
                         "input; the host has %.2f GiB in all",
                         n, extra / 1073741824.0, host / 1073741824.0);
    A->keep = gpk__hook(gpk__test.ooc_keep, 1) != 0; /* tests: 0 keeps no buffer */
    if (!A->keep) ooc_release(ctx);                  /* nor one kept from before */
    A->b_keys = extra_buffer(ctx, A->keep, 0, n * A->kw, A->threads);
    A->b_vals = A->vw ? extra_buffer(ctx, A->keep, 1, n * A->vw, A->threads) : NULL;
    if (!A->b_keys || (A->vw && !A->b_vals)) {
        extra_free(A->keep, A->b_keys);
        extra_free(A->keep, A->b_vals);
        return gpk__fail(ctx, GPK_ENOMEM,
                         "sort: cannot allocate the %.2f GiB of host memory an out-of-core "
                         "sort of %zu elements needs beside the input",
                         extra / 1073741824.0, n);
    }
    return GPK_OK;
}

/* Opens the context's out-of-core backend on dev, with A and B. */
static gpk_status open_dev(gpk_ctx *ctx, const gpk_radix_job *job, const ooc_arrays *A, gpk_ooc_stats *st,
                           gpk_ooc_dev *dev)
{
    *dev = (gpk_ooc_dev){.ctx = ctx,
                         .stats = st,
                         .key_type = job->key_type,
                         .key_width = A->kw,
                         .value_width = A->vw,
                         .key_bits = job->key_bits,
                         .radix_bits = job->radix_bits,
                         .n = A->n};
    const gpk__ooc_backend *ob = ooc_of(ctx);
    if (!ob)
        return gpk__fail(ctx, GPK_EUNSUPPORTED, "sort: no out-of-core sort on the %s backend",
                         gpk_backend_name(ctx->backend));
    gpk_ooc_host h = {A->a_keys, A->a_vals, A->b_keys, A->b_vals, A->n, NULL, {0, 0}, NULL, NULL};
    if (A->keep) {
        ooc_keep *k = kept(ctx); /* extra_buffer made it */
        h.b_locked = k->locked;
        h.b_bytes[0] = k->bytes[0];
        h.b_bytes[1] = A->vw ? k->bytes[1] : 0;
        h.stage = &k->stage;
        h.stage_bytes = &k->stage_bytes;
    }
    return ob->open(ctx, dev, ctx->device_budget, &h);
}

/* Phase 1, A -> B: each slice of cap elements sorted on the device into a
 * run. On failure A was only read. */
static gpk_status sort_runs(gpk_ooc_dev *dev, xfer *x, const ooc_arrays *A, size_t runs)
{
    const size_t n = A->n, cap = dev->cap;
    const unsigned kw = A->kw, vw = A->vw;
    gpk_status s = GPK_OK;
    for (size_t r = 0; r < runs && s == GPK_OK; r++) {
        const int slot = (int)(r % OOC_SLOTS);
        const size_t at = r * cap, len = n - at < cap ? n - at : cap;
        s = dev->prepare ? dev->prepare(dev, at, len) : GPK_OK;
        if (s == GPK_OK) s = slot_ready(dev, r, 0, 2 * runs);
        if (s == GPK_OK) s = x_load(x, slot, 0, A->a_keys + at * kw, vw ? A->a_vals + at * vw : NULL, len);
        if (s == GPK_OK) s = dev->sort(dev, slot, len);
        if (s == GPK_OK && r < dev->kept_runs) s = dev->stash(dev, slot, r, len);
        if (s == GPK_OK) s = x_store(x, slot, A->b_keys + at * kw, vw ? A->b_vals + at * vw : NULL, len);
    }
    return s == GPK_OK ? dev->wait(dev) : drain(dev, s);
}

/* split[p * runs + r]: where output partition p (output [p * cap,
 * (p + 1) * cap)) starts in run r, for p = 0..runs. */
static void co_rank_parts(const gpk_radix_job *job, const ooc_arrays *A, size_t cap, size_t runs,
                          size_t *split)
{
    const size_t n = A->n;
    runs_view v = {job->key_type,
                   A->b_keys,
                   A->kw,
                   n,
                   cap,
                   runs,
                   job->key_bits == 0 || job->key_bits >= 64 ? UINT64_MAX
                                                             : (((uint64_t)1 << job->key_bits) - 1)};
    const ptrdiff_t parts = (ptrdiff_t)runs;
#pragma omp parallel for num_threads(A->threads) schedule(dynamic, 1)
    for (ptrdiff_t p = 0; p <= parts; p++) {
        const size_t k = (size_t)p * cap < n ? (size_t)p * cap : n;
        co_rank(&v, k, split + (size_t)p * runs);
    }
}

/* Phase 2, B -> A: each output partition gathered from its parts of the
 * runs (kept runs from the device) and sorted on the device. */
static gpk_status merge_parts(gpk_ooc_dev *dev, xfer *x, const ooc_arrays *A, size_t runs,
                              const size_t *split)
{
    const size_t cap = dev->cap;
    const unsigned kw = A->kw, vw = A->vw;
    gpk_status s = GPK_OK;
    for (size_t p = 0; p < runs && s == GPK_OK; p++) {
        const int slot = (int)(p % OOC_SLOTS);
        const size_t *lo = split + p * runs, *hi = split + (p + 1) * runs;
        size_t at = 0;
        s = slot_ready(dev, p, runs, 2 * runs);
        /* the partitions before p - OOC_SLOTS + 1 are stored: done with */
        if (s == GPK_OK && dev->release && p >= OOC_SLOTS) s = dev->release(dev, (p - OOC_SLOTS + 1) * cap);
        for (size_t r = 0; r < runs && s == GPK_OK; r++) {
            const size_t len = hi[r] - lo[r], from = r * cap + lo[r];
            if (len && r < dev->kept_runs) s = x_load_kept(x, slot, at, r, lo[r], len);
            else if (len)
                s = x_load(x, slot, at, A->b_keys + from * kw, vw ? A->b_vals + from * vw : NULL, len);
            at += len;
        }
        if (s == GPK_OK) s = dev->sort(dev, slot, at);
        if (s == GPK_OK)
            s = x_store(x, slot, A->a_keys + p * cap * kw, vw ? A->a_vals + p * cap * vw : NULL, at);
    }
    return s == GPK_OK ? dev->wait(dev) : drain(dev, s);
}

/* After a failed merge A is part merged output, part input: the sorted
 * runs replace it, so it holds a permutation of the input, values (or
 * sigma) with their keys, and the message says so. */
static void restore_runs(gpk_ctx *ctx, const ooc_arrays *A)
{
    gpk__host_copy(A->a_keys, A->b_keys, A->n * A->kw, A->threads);
    if (A->vw) gpk__host_copy(A->a_vals, A->b_vals, A->n * A->vw, A->threads);
    const size_t len = strlen(ctx->err);
    if (len + 80 < sizeof ctx->err)
        strcat(ctx->err, " (the array holds its keys as sorted runs: a permutation of the input)");
}

gpk_status gpk__sort_ooc(gpk_ctx *ctx, const gpk_radix_job *job)
{
    const double t0 = omp_get_wtime();
    gpk_ooc_stats *st = stats_slot(ctx);
    if (!st)
        return gpk__fail(ctx, GPK_ENOMEM,
                         "sort: out of host memory (or context hooks) for the out-of-core statistics");
    memset(st, 0, sizeof *st);
    ooc_arrays A;
    memset(&A, 0, sizeof A);
    A.n = job->n;
    A.kw = job->key_width;
    A.vw = value_width_of(job);
    A.a_keys = (unsigned char *)job->keys;
    A.a_vals = (unsigned char *)(job->values ? job->values : (void *)job->sigma);
    A.threads = ctx->threads > 0 ? ctx->threads : 1;
    const size_t n = A.n;

    gpk_status s = alloc_extra(ctx, &A);
    if (s != GPK_OK) return s;
    const double t1 = omp_get_wtime();
    st->alloc_ms = 1e3 * (t1 - t0);

    gpk_ooc_dev dev;
    s = open_dev(ctx, job, &A, st, &dev);
    if (s != GPK_OK) {
        extra_free(A.keep, A.b_keys);
        extra_free(A.keep, A.b_vals);
        return s;
    }
    const double t2 = omp_get_wtime();
    st->pin_ms = 1e3 * (t2 - t1);
    const size_t cap = dev.cap;
    const size_t runs = (n + cap - 1) / cap;
    size_t *split = NULL;
    if (runs > OOC_MAX_RUNS) {
        s = gpk__fail(
            ctx, GPK_EINVAL,
            "sort: the device budget (%zu elements a slot) is too small for %zu elements: %zu runs, "
            "at most %d",
            cap, n, runs, OOC_MAX_RUNS);
        goto out;
    }
    split = malloc((runs + 1) * runs * sizeof *split);
    if (!split) {
        s = gpk__fail(ctx, GPK_ENOMEM, "sort: out of host memory for the co-ranks");
        goto out;
    }
    st->cap = cap;
    st->runs = runs;
    st->kept_runs = dev.kept_runs;
    st->parts = runs;
    /* sigma is output only: the identity goes in as the values */
    if (job->sigma) {
#pragma omp parallel num_threads(A.threads) if (n > 65536)
        {
            const size_t T = (size_t)omp_get_num_threads(), t = (size_t)omp_get_thread_num();
            gpk__sigma_iota(job->sigma, job->sigma_width, n * t / T, n * (t + 1) / T);
        }
    }
    xfer x = {&dev, 0, 0};
    x.fail_at = (long)gpk__hook(gpk__test.ooc_fail_at, 0); /* tests: the k-th transfer fails */

    s = sort_runs(&dev, &x, &A, runs);
    if (s != GPK_OK) goto out; /* A was only read */
    report(ctx, runs, 2 * runs);
    const double t3 = omp_get_wtime();
    st->runs_ms = 1e3 * (t3 - t2);

    co_rank_parts(job, &A, cap, runs, split);
    s = merge_parts(&dev, &x, &A, runs, split);
    if (s != GPK_OK) {
        restore_runs(ctx, &A);
        goto out;
    }
    st->merge_ms = 1e3 * (omp_get_wtime() - t3);
    report(ctx, 2 * runs, 2 * runs);
    ctx->last_sort_path = "radix-out-of-core";

out : {
    const double t4 = omp_get_wtime();
    dev.close(&dev); /* CUDA: unlocks the host arrays */
    st->unpin_ms = 1e3 * (omp_get_wtime() - t4);
}
    free(split);
    extra_free(A.keep, A.b_keys);
    extra_free(A.keep, A.b_vals);
    st->total_ms = 1e3 * (omp_get_wtime() - t0);
    return s;
}
