/* The CUDA device of the out-of-core sort (ooc.c, ooc_internal.h).
 *
 * Three streams: loads (host to device), sorts, stores (device to host),
 * ordered by events per slot, so that with three slots the load of one
 * slot, the sort of another and the store of the third run at once and
 * the link carries data both ways. The driver's extra buffer B is
 * page-locked (once: the context keeps it locked), so its transfers are
 * one DMA each. The caller's arrays are not locked: all threads copy them
 * through pinned staging, one part a slot, while the link moves the slot
 * before, unless the caller has locked them (gpk_host_lock): then they go
 * by DMA directly. Locking them instead costs what the copies cost, and does not
 * overlap the transfers (docs/perf/radix.md, "Out of core"). Where staging
 * memory cannot be had, the arrays are locked run by run; where locking
 * fails the transfers still work, through the driver's own staging, slower. The sort is the device-pointer API's (in
 * place, stable), on one temporary sized for a full slot. */
#include "ooc_internal.h"

#include "../core/cuda_internal.h"
#include "gpk/cuda.h"

#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 3
#define MIN_CAP 8
/* Default slot size: small enough that filling the first slot and
 * emptying the last (the pipeline's ramp) are short, large enough that
 * the device sort runs at full speed. Tests cap it (gpk__test.ooc_slot_bytes). */
#define SLOT_BYTES_DEFAULT ((size_t)2 << 30)

typedef struct cuda_dev {
    cudaStream_t up, work, down;
    cudaEvent_t loaded[SLOTS], sorted[SLOTS], freed[SLOTS];
    int pending_free[SLOTS];
    void *keys[SLOTS], *vals[SLOTS], *temp;
    void *kept_keys, *kept_vals; /* d->kept_runs runs of cap elements */
    size_t temp_bytes;
    struct lock_piece {
        char *p;
        size_t bytes;
        int locked, kept, scratch;
    } * pieces;
    size_t npieces;
    /* the host arrays (A keys, A values, B keys, B values): their pieces
     * [first, end) in pieces[], locked up to next as the runs need them */
    char *base[4];
    unsigned width[4];
    size_t first[4], end[4], next[4];
    size_t unlocked[2]; /* A's pieces before these are unlocked again (dev_release) */
    size_t *todo;       /* scratch: the pieces one prepare locks */
    int *b_locked;      /* a kept B: set when all its pieces are locked (gpk_ooc_host) */
    size_t n;           /* elements of the sort */
    int ahead;          /* lock all at open, unlock all at close */
    /* staging of the caller's arrays (the default) */
    int stage_a;
    char *stage;               /* SLOTS parts of cap * (key_width + value_width) bytes, pinned */
    int stage_owned;           /* made for this call (no kept one): freed at close */
    cudaEvent_t staged[SLOTS]; /* the last copy to the device out of a part is done */
    int pending_staged[SLOTS];
    struct copy_out {
        char *keys, *vals;
        size_t n;
    } out[SLOTS];         /* after freed[slot] */
    uintptr_t a_lo, a_hi; /* the caller's keys */
    int device, threads;
    int caller_device; /* the thread's device before the call, set back at close */
} cuda_dev;

/* Page-locking runs in pieces on all threads (one thread locks a few GB/s,
 * and a call locks twice the input: the caller's arrays and the extra
 * buffer), run by run as the first phase reaches them, so that it overlaps
 * the transfers of the runs before. Pieces end at multiples of PIN_PIECE
 * bytes of the address, so no two of them share a page. */
#define PIN_PIECE ((uintptr_t)256 << 20)

static size_t cut_pieces(void *base, size_t bytes, struct lock_piece *out)
{
    if (!base || !bytes) return 0;
    const uintptr_t end = (uintptr_t)base + bytes;
    size_t count = 0;
    for (uintptr_t at = (uintptr_t)base; at < end; count++) {
        uintptr_t next = (at / PIN_PIECE + 1) * PIN_PIECE;
        if (next > end) next = end;
        if (out) {
            out[count].p = (char *)at;
            out[count].bytes = next - at;
            out[count].locked = 0;
            out[count].kept = 0;
            out[count].scratch = 0;
        }
        at = next;
    }
    return count;
}

static int pin_threads(const cuda_dev *c) { return c->threads; }

/* Locks pieces[idx[0..n)]; 1 when every one is locked (by this call or
 * already by the caller). */
static int lock_pieces(cuda_dev *c, const size_t *idx, size_t count)
{
    long failed = 0;
    const long long n = (long long)count;
#pragma omp parallel for num_threads(pin_threads(c)) schedule(dynamic, 1) reduction(+ : failed)
    for (long long i = 0; i < n; i++) {
        struct lock_piece *q = &c->pieces[idx[i]];
        /* Fresh scratch pages (B's first call) are faulted in by these
         * threads first: cudaHostRegister of untouched memory ran several
         * times slower than of touched memory (docs/perf/radix.md). */
        if (q->scratch)
            for (size_t at = 0; at < q->bytes; at += 4096) ((volatile char *)q->p)[at] = 0;
        cudaError_t e = cudaSetDevice(c->device);
        if (e == cudaSuccess) e = cudaHostRegister(q->p, q->bytes, cudaHostRegisterPortable);
        if (e == cudaSuccess) q->locked = 1;
        else if (e != cudaErrorHostMemoryAlreadyRegistered) failed++;
        (void)cudaGetLastError();
    }
    return failed == 0;
}

static void unlock_pieces(cuda_dev *c, const size_t *idx, size_t count)
{
    const long long n = (long long)count;
#pragma omp parallel for num_threads(pin_threads(c)) schedule(dynamic, 1)
    for (long long i = 0; i < n; i++) {
        struct lock_piece *q = &c->pieces[idx[i]];
        (void)cudaSetDevice(c->device);
        (void)cudaHostUnregister(q->p);
        (void)cudaGetLastError();
        q->locked = 0;
    }
}

static void unlock_all(cuda_dev *c)
{
    const long long n = (long long)c->npieces;
#pragma omp parallel for num_threads(pin_threads(c)) schedule(dynamic, 1)
    for (long long i = 0; i < n; i++)
        if (c->pieces[i].locked && !c->pieces[i].kept) {
            (void)cudaSetDevice(c->device);
            (void)cudaHostUnregister(c->pieces[i].p);
            (void)cudaGetLastError();
        }
    free(c->pieces);
    c->pieces = NULL;
    c->npieces = 0;
}

/* Before the first phase touches elements [from, from + n) of the host
 * arrays: lock the pieces that hold them. */
static gpk_status dev_prepare(gpk_ooc_dev *d, size_t from, size_t n)
{
    cuda_dev *c = (cuda_dev *)d->impl;
    if (!c->pieces) return GPK_OK;
    const double t0 = omp_get_wtime();
    size_t count = 0;
    for (int i = 0; i < 4; i++) {
        if (!c->base[i]) continue;
        /* the last run takes all that is left (a kept B may be longer) */
        const uintptr_t upto =
            from + n >= c->n ? UINTPTR_MAX : (uintptr_t)c->base[i] + (from + n) * c->width[i];
        while (c->next[i] < c->end[i] && (uintptr_t)c->pieces[c->next[i]].p < upto)
            c->todo[count++] = c->next[i]++;
    }
    if (count && !lock_pieces(c, c->todo, count)) d->stats->pinned = 0;
    d->stats->lock_ms += 1e3 * (omp_get_wtime() - t0);
    return GPK_OK;
}

/* In the merge, elements [0, upto) of the caller's arrays are final and no
 * transfer touches them any more: their pieces are unlocked now, while the
 * link works on the partitions after, instead of all at the end. */
static gpk_status dev_release(gpk_ooc_dev *d, size_t upto)
{
    cuda_dev *c = (cuda_dev *)d->impl;
    if (!c->pieces || c->ahead) return GPK_OK;
    const double t0 = omp_get_wtime();
    size_t count = 0;
    for (int i = 0; i < 2; i++) {
        if (!c->base[i]) continue;
        const uintptr_t final_end = (uintptr_t)c->base[i] + upto * c->width[i];
        size_t q = c->unlocked[i] > c->first[i] ? c->unlocked[i] : c->first[i];
        for (; q < c->next[i]; q++) {
            const struct lock_piece *pc = &c->pieces[q];
            if ((uintptr_t)pc->p + pc->bytes > final_end) break;
            if (pc->locked && !pc->kept) c->todo[count++] = q;
        }
        c->unlocked[i] = q;
    }
    if (count) unlock_pieces(c, c->todo, count);
    d->stats->unlock_ms += 1e3 * (omp_get_wtime() - t0);
    return GPK_OK;
}

static gpk_status fail(gpk_ooc_dev *d, cudaError_t e, const char *what)
{
    return gpk__cuda_fail(d->ctx, e, what);
}

/* ---- staging of the caller's arrays ---- */

/* Pinned memory, faulted in by all threads and then locked: faster than
 * cudaHostAlloc of the same size (docs/perf/radix.md, "Out of core"). */
static void *alloc_pinned(size_t bytes, int threads)
{
    const size_t huge = (size_t)2 << 20;
    void *p = gpk__host_alloc_large(bytes);
    if (!p) return NULL;
    const long long pages = (long long)((bytes + huge - 1) / huge);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (long long i = 0; i < pages; i++) {
        const size_t at = (size_t)i * huge, len = bytes - at < huge ? bytes - at : huge;
        memset((char *)p + at, 0, len);
    }
    if (cudaHostRegister(p, bytes, cudaHostRegisterPortable) != cudaSuccess) {
        (void)cudaGetLastError();
        free(p);
        return NULL;
    }
    return p;
}

static void free_pinned(void *p)
{
    if (!p) return;
    (void)cudaHostUnregister(p);
    (void)cudaGetLastError();
    free(p);
}

static int staged_in_caller(const cuda_dev *c, const void *keys)
{
    const uintptr_t a = (uintptr_t)keys;
    return c->stage_a && a >= c->a_lo && a < c->a_hi;
}

static char *stage_keys(const gpk_ooc_dev *d, const cuda_dev *c, int slot)
{
    return c->stage + (size_t)slot * d->cap * (d->key_width + d->value_width);
}

static char *stage_vals(const gpk_ooc_dev *d, const cuda_dev *c, int slot)
{
    return stage_keys(d, c, slot) + d->cap * d->key_width;
}

/* The slot's store into staging has landed: its bytes go on to the
 * caller's arrays. */
static void copy_out(gpk_ooc_dev *d, cuda_dev *c, int slot)
{
    struct copy_out *o = &c->out[slot];
    if (!o->keys) return;
    gpk__host_copy(o->keys, stage_keys(d, c, slot), o->n * d->key_width, c->threads);
    if (d->value_width) gpk__host_copy(o->vals, stage_vals(d, c, slot), o->n * d->value_width, c->threads);
    o->keys = o->vals = NULL;
    o->n = 0;
}

/* One copy per locked piece: a DMA never spans two registrations. */
static cudaError_t copy_pieces(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                               cudaStream_t stream)
{
    const uintptr_t host = (uintptr_t)(kind == cudaMemcpyHostToDevice ? src : dst);
    cudaError_t e = cudaSuccess;
    for (size_t done = 0; done < bytes && e == cudaSuccess;) {
        const uintptr_t at = host + done;
        size_t len = (size_t)((at / PIN_PIECE + 1) * PIN_PIECE - at);
        if (len > bytes - done) len = bytes - done;
        e = cudaMemcpyAsync((char *)dst + done, (const char *)src + done, len, kind, stream);
        done += len;
    }
    return e;
}

static gpk_status dev_load(gpk_ooc_dev *d, int slot, size_t at, const void *keys, const void *vals, size_t n)
{
    cuda_dev *c = (cuda_dev *)d->impl;
    cudaError_t e = cudaSuccess;
    if (c->pending_free[slot]) {
        e = cudaStreamWaitEvent(c->up, c->freed[slot], 0);
        c->pending_free[slot] = 0;
    }
    const int staged = staged_in_caller(c, keys);
    if (staged && e == cudaSuccess) {
        if (c->pending_staged[slot]) e = cudaEventSynchronize(c->staged[slot]);
        c->pending_staged[slot] = 0;
        if (e == cudaSuccess) {
            char *sk = stage_keys(d, c, slot) + at * d->key_width;
            gpk__host_copy(sk, keys, n * d->key_width, c->threads);
            keys = sk;
            if (d->value_width) {
                char *sv = stage_vals(d, c, slot) + at * d->value_width;
                gpk__host_copy(sv, vals, n * d->value_width, c->threads);
                vals = sv;
            }
        }
    }
    if (e == cudaSuccess)
        e = copy_pieces((char *)c->keys[slot] + at * d->key_width, keys, n * d->key_width,
                        cudaMemcpyHostToDevice, c->up);
    if (e == cudaSuccess && d->value_width)
        e = copy_pieces((char *)c->vals[slot] + at * d->value_width, vals, n * d->value_width,
                        cudaMemcpyHostToDevice, c->up);
    if (e == cudaSuccess && staged) {
        e = cudaEventRecord(c->staged[slot], c->up);
        if (e == cudaSuccess) c->pending_staged[slot] = 1;
    }
    return e == cudaSuccess ? GPK_OK : fail(d, e, "out-of-core sort: copy to device");
}

static gpk_status dev_sort(gpk_ooc_dev *d, int slot, size_t n)
{
    cuda_dev *c = (cuda_dev *)d->impl;
    cudaError_t e = cudaEventRecord(c->loaded[slot], c->up);
    if (e == cudaSuccess) e = cudaStreamWaitEvent(c->work, c->loaded[slot], 0);
    if (e != cudaSuccess) return fail(d, e, "out-of-core sort: cudaEventRecord");
    if (n < 2) return GPK_OK;
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    o.key_bits = d->key_bits;
    o.radix_bits = d->radix_bits;
    o.algorithm = GPK_SORT_RADIX;
    size_t tb = c->temp_bytes;
    if (d->value_width)
        return gpk_cuda_sort_pairs(d->ctx, c->temp, &tb, d->key_type, c->keys[slot], c->keys[slot],
                                   d->value_width, c->vals[slot], c->vals[slot], n, &o, 0, c->work);
    return gpk_cuda_sort_keys(d->ctx, c->temp, &tb, d->key_type, c->keys[slot], c->keys[slot], n, &o, 0,
                              c->work);
}

/* On the sort's stream: the slot's store records its event after this
 * copy, so the slot is not reloaded before it is kept. */
static gpk_status dev_stash(gpk_ooc_dev *d, int slot, size_t run, size_t n)
{
    cuda_dev *c = (cuda_dev *)d->impl;
    cudaError_t e = cudaMemcpyAsync((char *)c->kept_keys + run * d->cap * d->key_width, c->keys[slot],
                                    n * d->key_width, cudaMemcpyDeviceToDevice, c->work);
    if (e == cudaSuccess && d->value_width)
        e = cudaMemcpyAsync((char *)c->kept_vals + run * d->cap * d->value_width, c->vals[slot],
                            n * d->value_width, cudaMemcpyDeviceToDevice, c->work);
    return e == cudaSuccess ? GPK_OK : fail(d, e, "out-of-core sort: keeping a run on the device");
}

static gpk_status dev_load_kept(gpk_ooc_dev *d, int slot, size_t at, size_t run, size_t from, size_t n)
{
    cuda_dev *c = (cuda_dev *)d->impl;
    cudaError_t e = cudaSuccess;
    if (c->pending_free[slot]) {
        e = cudaStreamWaitEvent(c->up, c->freed[slot], 0);
        c->pending_free[slot] = 0;
    }
    const size_t src = run * d->cap + from;
    if (e == cudaSuccess)
        e = cudaMemcpyAsync((char *)c->keys[slot] + at * d->key_width,
                            (char *)c->kept_keys + src * d->key_width, n * d->key_width,
                            cudaMemcpyDeviceToDevice, c->up);
    if (e == cudaSuccess && d->value_width)
        e = cudaMemcpyAsync((char *)c->vals[slot] + at * d->value_width,
                            (char *)c->kept_vals + src * d->value_width, n * d->value_width,
                            cudaMemcpyDeviceToDevice, c->up);
    return e == cudaSuccess ? GPK_OK : fail(d, e, "out-of-core sort: gathering a kept run's slice");
}

static gpk_status dev_store(gpk_ooc_dev *d, int slot, void *keys, void *vals, size_t n)
{
    cuda_dev *c = (cuda_dev *)d->impl;
    const int staged = staged_in_caller(c, keys);
    /* the part's last store goes on to the caller's arrays now: its slot
     * was freed before this slot's loads and sort were issued, which run
     * while this thread copies */
    cudaError_t e = cudaSuccess;
    if (staged && c->out[slot].keys) {
        e = cudaEventSynchronize(c->freed[slot]);
        if (e != cudaSuccess) return fail(d, e, "out-of-core sort: copy to host");
        copy_out(d, c, slot);
    }
    char *hk = staged ? stage_keys(d, c, slot) : (char *)keys;
    char *hv = staged && d->value_width ? stage_vals(d, c, slot) : (char *)vals;
    e = cudaEventRecord(c->sorted[slot], c->work);
    if (e == cudaSuccess) e = cudaStreamWaitEvent(c->down, c->sorted[slot], 0);
    if (e == cudaSuccess)
        e = copy_pieces(hk, c->keys[slot], n * d->key_width, cudaMemcpyDeviceToHost, c->down);
    if (e == cudaSuccess && d->value_width)
        e = copy_pieces(hv, c->vals[slot], n * d->value_width, cudaMemcpyDeviceToHost, c->down);
    if (e == cudaSuccess) e = cudaEventRecord(c->freed[slot], c->down);
    if (e == cudaSuccess) c->pending_free[slot] = 1;
    if (e == cudaSuccess && staged) {
        c->out[slot].keys = (char *)keys;
        c->out[slot].vals = (char *)vals;
        c->out[slot].n = n;
    }
    return e == cudaSuccess ? GPK_OK : fail(d, e, "out-of-core sort: copy to host");
}

static gpk_status dev_done(gpk_ooc_dev *d, int slot)
{
    cuda_dev *c = (cuda_dev *)d->impl;
    const cudaError_t e = cudaEventSynchronize(c->freed[slot]);
    return e == cudaSuccess ? GPK_OK : fail(d, e, "out-of-core sort");
}

static gpk_status dev_wait(gpk_ooc_dev *d)
{
    cuda_dev *c = (cuda_dev *)d->impl;
    const cudaError_t a = cudaStreamSynchronize(c->up);
    const cudaError_t b = cudaStreamSynchronize(c->work);
    const cudaError_t w = cudaStreamSynchronize(c->down);
    const cudaError_t e = a != cudaSuccess ? a : b != cudaSuccess ? b : w;
    for (int i = 0; i < SLOTS; i++) {
        if (e == cudaSuccess) copy_out(d, c, i);
        c->out[i].keys = c->out[i].vals = NULL;
    }
    return e == cudaSuccess ? GPK_OK : fail(d, e, "out-of-core sort");
}

/* Teardown after the work is done or drained; errors here change nothing
 * of the result, so they are not reported. */
static void dev_close(gpk_ooc_dev *d)
{
    cuda_dev *c = (cuda_dev *)d->impl;
    if (!c) return;
    (void)cudaSetDevice(c->device);
    if (c->up) (void)cudaStreamSynchronize(c->up);
    if (c->work) (void)cudaStreamSynchronize(c->work);
    if (c->down) (void)cudaStreamSynchronize(c->down);
    /* a kept B stays locked when all of it is; else none of it stays */
    for (int i = 2; i < 4 && c->pieces && c->b_locked; i++) {
        int all = c->end[i] > c->first[i];
        for (size_t q = c->first[i]; q < c->end[i]; q++) all = all && c->pieces[q].locked;
        for (size_t q = c->first[i]; q < c->end[i]; q++) c->pieces[q].kept = all;
        if (all) c->b_locked[i - 2] = 1;
    }
    if (c->pieces) {
        const double t0 = omp_get_wtime();
        unlock_all(c);
        d->stats->unlock_ms += 1e3 * (omp_get_wtime() - t0);
    }
    free(c->todo);
    for (int i = 0; i < SLOTS; i++) {
        if (c->keys[i]) (void)cudaFree(c->keys[i]);
        if (c->vals[i]) (void)cudaFree(c->vals[i]);
        if (c->loaded[i]) (void)cudaEventDestroy(c->loaded[i]);
        if (c->sorted[i]) (void)cudaEventDestroy(c->sorted[i]);
        if (c->freed[i]) (void)cudaEventDestroy(c->freed[i]);
        if (c->staged[i]) (void)cudaEventDestroy(c->staged[i]);
    }
    if (c->stage_owned) free_pinned(c->stage);
    if (c->temp) (void)cudaFree(c->temp);
    if (c->kept_keys) (void)cudaFree(c->kept_keys);
    if (c->kept_vals) (void)cudaFree(c->kept_vals);
    if (c->up) (void)cudaStreamDestroy(c->up);
    if (c->work) (void)cudaStreamDestroy(c->work);
    if (c->down) (void)cudaStreamDestroy(c->down);
    (void)cudaSetDevice(c->caller_device);
    (void)cudaGetLastError();
    free(c);
    d->impl = NULL;
}

/* The slots that the in-memory sort keeps between calls give their memory
 * back (they are grow-only caches), and the temporaries' pool too. */
static cudaError_t release_cached(gpk_cuda_state *st)
{
    cudaError_t e = cudaStreamSynchronize(st->stream);
    for (int i = 0; i < GPK_CUDA_SLOTS && e == cudaSuccess; i++)
        if (st->buf[i]) {
            e = cudaFree(st->buf[i]);
            st->buf[i] = NULL;
            st->buf_bytes[i] = 0;
        }
    if (e == cudaSuccess && st->temp_pool) e = cudaMemPoolTrimTo(st->temp_pool, 0);
    return e;
}

/* Bytes the in-memory CUDA sort of n elements of this width would need
 * and the device memory free for it now (slots of earlier calls count as
 * free). */
static gpk_status cuda_fit(gpk_ctx *ctx, size_t n, unsigned key_width, unsigned value_width, size_t *need,
                           size_t *avail)
{
    gpk_cuda_state *st = (gpk_cuda_state *)ctx->cuda;
    if (!st) return gpk__fail(ctx, GPK_EINVAL, "sort: context has no CUDA state");
    int caller = 0;
    (void)cudaGetDevice(&caller);
    cudaError_t e = cudaSetDevice(ctx->device);
    size_t free_b = 0, total_b = 0;
    if (e == cudaSuccess) e = cudaMemGetInfo(&free_b, &total_b);
    (void)cudaSetDevice(caller);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "cudaMemGetInfo");
    for (int i = 0; i < GPK_CUDA_SLOTS; i++) free_b += st->buf_bytes[i];
    /* the in-memory sort: keys and values twice, and its tables */
    const double per = (double)(key_width + value_width);
    const double want = 2.0 * (double)n * per + (double)n * per / 16.0 + (double)(64u << 20);
    *need = want > (double)SIZE_MAX ? SIZE_MAX : (size_t)want;
    *avail = free_b;
    return GPK_OK;
}

/* The slot size: cap elements a slot such that SLOTS slots and the sort's
 * temporaries fit the free device memory (less a margin) and the budget;
 * *limit: the bytes usable in all. Runs on ctx->device; on failure the
 * caller's device is set back. */
static gpk_status plan_slots(gpk_ctx *ctx, const gpk_ooc_dev *d, size_t budget, int caller, size_t *cap_out,
                             size_t *temp_out, size_t *limit_out)
{
    gpk_cuda_state *st = (gpk_cuda_state *)ctx->cuda;
    cudaError_t e = cudaSetDevice(ctx->device);
    if (e == cudaSuccess) e = release_cached(st);
    size_t free_b = 0, total_b = 0;
    if (e == cudaSuccess) e = cudaMemGetInfo(&free_b, &total_b);
    if (e != cudaSuccess) {
        gpk_status s = gpk__cuda_fail(ctx, e, "out-of-core sort: device memory");
        (void)cudaSetDevice(caller);
        return s;
    }
    /* a margin for the runtime and the kernels' own needs */
    const size_t margin = ((size_t)256 << 20) + total_b / 64;
    size_t limit = free_b > margin ? free_b - margin : 0;
    if (budget && budget < limit) limit = budget;

    const size_t per = d->key_width + d->value_width;
    size_t cap = limit / ((SLOTS + 2) * per);
    const size_t slot_max =
        (gpk__test.ooc_slot_bytes > 0 ? (size_t)gpk__test.ooc_slot_bytes : SLOT_BYTES_DEFAULT) / per;
    if (cap > slot_max) cap = slot_max;
    if (cap > UINT32_MAX) cap = UINT32_MAX;
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    o.key_bits = d->key_bits;
    o.radix_bits = d->radix_bits;
    size_t temp = 0;
    for (;;) {
        if (cap < MIN_CAP) {
            (void)cudaSetDevice(caller);
            return gpk__fail(
                ctx, GPK_EINVAL,
                "sort: a device budget of %zu bytes (%zu usable) is too small for an out-of-core "
                "sort of %u-byte elements",
                budget, limit, (unsigned)per);
        }
        gpk_status s = d->value_width
            ? gpk_cuda_sort_pairs(ctx, NULL, &temp, d->key_type, NULL, NULL, d->value_width, NULL, NULL, cap,
                                  &o, 0, NULL)
            : gpk_cuda_sort_keys(ctx, NULL, &temp, d->key_type, NULL, NULL, cap, &o, 0, NULL);
        if (s != GPK_OK) {
            (void)cudaSetDevice(caller);
            return s;
        }
        if (SLOTS * cap * per + temp <= limit) break;
        cap -= cap / 8 + 1;
    }
    *cap_out = cap;
    *temp_out = temp;
    *limit_out = limit;
    return GPK_OK;
}

/* The streams, events, slots and temporaries on the device. On failure
 * dev_close has undone them (and set the caller's device back). */
static gpk_status alloc_device(gpk_ctx *ctx, gpk_ooc_dev *d, cuda_dev *c)
{
    const size_t cap = d->cap;
    cudaError_t e = cudaStreamCreateWithFlags(&c->up, cudaStreamNonBlocking);
    if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&c->work, cudaStreamNonBlocking);
    if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&c->down, cudaStreamNonBlocking);
    for (int i = 0; i < SLOTS && e == cudaSuccess; i++) {
        e = cudaEventCreateWithFlags(&c->loaded[i], cudaEventDisableTiming);
        if (e == cudaSuccess) e = cudaEventCreateWithFlags(&c->sorted[i], cudaEventDisableTiming);
        if (e == cudaSuccess) e = cudaEventCreateWithFlags(&c->freed[i], cudaEventDisableTiming);
        if (e == cudaSuccess) e = cudaEventCreateWithFlags(&c->staged[i], cudaEventDisableTiming);
    }
    if (e != cudaSuccess) {
        gpk_status s = gpk__cuda_fail(ctx, e, "out-of-core sort: streams");
        dev_close(d);
        return s;
    }
    for (int i = 0; i < SLOTS && e == cudaSuccess; i++) {
        e = cudaMalloc(&c->keys[i], cap * d->key_width);
        if (e == cudaSuccess && d->value_width) e = cudaMalloc(&c->vals[i], cap * d->value_width);
    }
    if (e == cudaSuccess) e = cudaMalloc(&c->temp, c->temp_bytes ? c->temp_bytes : 1);
    if (e != cudaSuccess) {
        gpk_status s = gpk__cuda_fail(ctx, e, "out-of-core sort: cudaMalloc of the slots");
        dev_close(d);
        return s;
    }
    return GPK_OK;
}

/* The runs the rest of the budget (beyond the slots and temporaries)
 * holds stay on the device; where that allocation fails the sort goes on
 * with fewer, or none. */
static void keep_runs_on_device(gpk_ooc_dev *d, cuda_dev *c, size_t n, size_t limit)
{
    const size_t cap = d->cap, per = d->key_width + d->value_width;
    const size_t used = SLOTS * cap * per + c->temp_bytes;
    size_t kept = gpk__ooc_kept_runs(n, cap, per, limit > used ? limit - used : 0);
    for (; kept > 0; kept -= kept / 8 + 1) {
        cudaError_t e = cudaMalloc(&c->kept_keys, kept * cap * d->key_width);
        if (e == cudaSuccess && d->value_width) e = cudaMalloc(&c->kept_vals, kept * cap * d->value_width);
        if (e == cudaSuccess) break;
        (void)cudaGetLastError();
        if (c->kept_keys) (void)cudaFree(c->kept_keys);
        c->kept_keys = NULL;
    }
    d->kept_runs = kept;
    d->stash = dev_stash;
    d->load_kept = dev_load_kept;
}

/* Pinned staging memory for the caller's arrays (SLOTS slots' worth): the
 * context's kept one when large enough, else a new one (kept with the
 * context when it keeps one). Without it (c->stage_a stays 0) the
 * caller's arrays are locked run by run. */
static void stage_caller_arrays(const gpk_ooc_dev *d, cuda_dev *c, const gpk_ooc_host *h)
{
    const size_t need = SLOTS * d->cap * (d->key_width + d->value_width);
    if (h->stage && *h->stage && *h->stage_bytes >= need) {
        c->stage = (char *)*h->stage;
    } else {
        if (h->stage && *h->stage) {
            free_pinned(*h->stage);
            *h->stage = NULL;
            *h->stage_bytes = 0;
        }
        void *p = alloc_pinned(need, c->threads);
        if (p) {
            c->stage = (char *)p;
            if (h->stage) {
                *h->stage = p;
                *h->stage_bytes = need;
            } else {
                c->stage_owned = 1;
            }
        }
        (void)cudaGetLastError(); /* no staging: the caller's arrays are locked run by run */
    }
    if (c->stage) {
        c->stage_a = 1;
        c->a_lo = (uintptr_t)h->a_keys;
        c->a_hi = (uintptr_t)h->a_keys + h->n * d->key_width;
    }
}

/* The host arrays to lock, cut into pieces (c->pieces): A's unless staged
 * or locked by the caller, B's unless the context keeps B locked. Without
 * host memory for the table nothing is locked (d->stats->pinned stays 0). */
static void cut_host_arrays(gpk_ooc_dev *d, cuda_dev *c, const gpk_ooc_host *h, int a_locked)
{
    void *arr[4] = {h->a_keys, h->a_vals, h->b_keys, h->b_vals};
    const unsigned width[4] = {d->key_width, d->value_width, d->key_width, d->value_width};
    size_t bytes[4];
    for (int i = 0; i < 4; i++)
        bytes[i] = arr[i] && !(i < 2 && (c->stage_a || a_locked)) ? h->n * width[i] : 0;
    for (int i = 0; i < 2 && h->b_locked; i++) bytes[2 + i] = h->b_locked[i] ? 0 : h->b_bytes[i];
    size_t count = 0;
    for (int i = 0; i < 4; i++) count += cut_pieces(arr[i], bytes[i], NULL);
    c->pieces = calloc(count ? count : 1, sizeof *c->pieces);
    c->todo = calloc(count ? count : 1, sizeof *c->todo);
    if (!c->pieces || !c->todo) {
        free(c->pieces);
        c->pieces = NULL;
        return;
    }
    d->stats->pinned = 1;
    c->b_locked = h->b_locked;
    c->n = h->n;
    c->npieces = 0;
    for (int i = 0; i < 4; i++) {
        c->first[i] = c->next[i] = c->npieces;
        c->npieces += cut_pieces(arr[i], bytes[i], c->pieces + c->npieces);
        c->end[i] = c->npieces;
        for (size_t q = c->first[i]; q < c->end[i] && i >= 2 && h->b_locked; q++) c->pieces[q].kept = 1;
        for (size_t q = c->first[i]; q < c->end[i] && i >= 2; q++) c->pieces[q].scratch = 1;
        if (bytes[i]) {
            c->base[i] = (char *)arr[i];
            c->width[i] = width[i];
        }
    }
    /* with staging or the caller's own locking: what is to be locked is
     * locked before the first transfer, unlocked after the last */
    if (c->stage_a || a_locked) {
        (void)dev_prepare(d, 0, h->n);
        c->ahead = 1;
    }
}

static gpk_status cuda_open(gpk_ctx *ctx, gpk_ooc_dev *d, size_t budget, const gpk_ooc_host *h)
{
    gpk_cuda_state *st = (gpk_cuda_state *)ctx->cuda;
    if (!st) return gpk__fail(ctx, GPK_EINVAL, "sort: context has no CUDA state");
    int caller = 0;
    (void)cudaGetDevice(&caller);
    size_t cap = 0, temp = 0, limit = 0;
    gpk_status s = plan_slots(ctx, d, budget, caller, &cap, &temp, &limit);
    if (s != GPK_OK) return s;

    cuda_dev *c = calloc(1, sizeof *c);
    if (!c) {
        (void)cudaSetDevice(caller);
        return gpk__fail(ctx, GPK_ENOMEM, "sort: out of host memory");
    }
    c->device = ctx->device;
    c->caller_device = caller;
    c->threads = ctx->threads > 0 ? ctx->threads : 1;
    d->impl = c;
    d->cap = cap;
    d->slots = SLOTS;
    d->load = dev_load;
    d->sort = dev_sort;
    d->store = dev_store;
    d->wait = dev_wait;
    d->done = dev_done;
    d->prepare = dev_prepare;
    d->release = dev_release;
    d->close = dev_close;
    c->temp_bytes = temp;
    s = alloc_device(ctx, d, c);
    if (s != GPK_OK) return s;
    keep_runs_on_device(d, c, h->n, limit);

    /* The default: B locked whole before the first transfer (unless the
     * context kept it locked), the caller's arrays staged. Without staging
     * memory: the host arrays locked run by run (dev_prepare), the caller's
     * unlocked as the merge finishes with them (dev_release) and B at the
     * end, unless B is the context's kept buffer: that one stays locked.
     * What the caller has registered already stays as it is. */
    d->stats->pinned = 0;
    /* the caller's arrays came page-locked (gpk_host_lock): no staging */
    const int a_locked = gpk__cuda_host_locked(h->a_keys, h->n * d->key_width) &&
        gpk__cuda_host_locked(h->a_vals, h->a_vals ? h->n * d->value_width : 0);
    d->stats->caller_pinned = a_locked;
    if (!a_locked) stage_caller_arrays(d, c, h);
    cut_host_arrays(d, c, h, a_locked);
    return GPK_OK;
}

static void cuda_free_pinned(gpk_ctx *ctx, void *p)
{
    (void)ctx;
    free_pinned(p);
}

static void cuda_unlock(gpk_ctx *ctx, void *p, size_t bytes)
{
    /* the pieces were locked portable: any device's thread may unlock them */
    cuda_dev c;
    memset(&c, 0, sizeof c);
    c.device = ctx->device;
    c.threads = ctx->threads > 0 ? ctx->threads : 1;
    c.npieces = cut_pieces(p, bytes, NULL);
    c.pieces = calloc(c.npieces ? c.npieces : 1, sizeof *c.pieces);
    if (!c.pieces) return;
    cut_pieces(p, bytes, c.pieces);
    for (size_t i = 0; i < c.npieces; i++) c.pieces[i].locked = 1;
    int caller = 0;
    (void)cudaGetDevice(&caller);
    unlock_all(&c);
    (void)cudaSetDevice(caller);
}

/* Small sorts (a time step's) skip the device query. */
static int cuda_too_large(gpk_ctx *ctx, const gpk_radix_job *job, unsigned vw)
{
    const double guess = 2.2 * (double)job->n * (job->key_width + vw);
    if (!ctx->device_budget && guess * 4.0 < (double)ctx->info.memory_bytes) return 0;
    size_t need = 0, avail = 0;
    if (cuda_fit(ctx, job->n, job->key_width, vw, &need, &avail) != GPK_OK) {
        gpk__clear_error(ctx); /* the in-memory path reports the device's failure */
        return 0;
    }
    const size_t limit = ctx->device_budget && ctx->device_budget < avail ? ctx->device_budget : avail;
    return need > limit;
}

const gpk__ooc_backend gpk__ooc_cuda = {cuda_too_large, cuda_open, cuda_unlock, cuda_free_pinned};
