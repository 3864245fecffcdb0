/* Multi-device sort driver and the CPU's virtual devices.
 *
 * Plan lsd (the default): distributed LSD passes. The keys of all devices
 * form one sequence (shard 0, then shard 1, ...); output j owns the
 * positions [bounds[j], bounds[j + 1]) of it (the balanced shares). Each
 * pass is a stable counting sort of the whole sequence by one digit:
 *  1. the host gathers every device's counts of the pass's digit; the keys
 *     of digit x on device i start at the global position
 *        base_i[x] = sum over all devices of their keys of digits < x
 *                  + sum over devices i' < i of their keys of digit x;
 *  2. every device writes each key of digit x to base_i[x], base_i[x] + 1,
 *     ... in its order, on the device that owns that position; and counts
 *     what it sends to each device by the next pass's digit, which gives
 *     that device its counts for the next pass (before the first pass, a
 *     histogram of each shard gives them).
 * After every pass device j holds positions [bounds[j], bounds[j + 1]) of
 * the sequence sorted by the digits so far, so the passes sort as on one
 * device: stable, exact balance at every pass, whatever the keys, no
 * splitters and no merge. Every key crosses the links once per pass (for
 * uniform keys (K - 1) / K of them go to another device), while the pass
 * runs. A pass waits for the one before it on every device (its writes
 * land where the other devices read): one host round trip per pass, which
 * also carries the counts.
 *
 * Plan merge (the default; lsd only with GPK_MULTI_PLAN=lsd and where every
 * device can write every other's memory): sort first, then merge (Maltenberger et al., SIGMOD
 * 2022, call it the merge-based multi-GPU sort):
 *  1. Every device sorts its shard in place (the stable radix sort).
 *  2. Splitters: output j starts at global rank r_j = m_0 + ... + m_{j-1}.
 *     The key v of rank r_j is found by a search over key values, 4095
 *     probes a round (every device counts, for each probe, its keys below
 *     it with binary searches in its sorted shard), so 3 rounds for 32-bit
 *     keys and 6 for 64-bit ones, all boundaries at once. Shard i then
 *     gives output j its keys below v plus, in shard order, the keys equal
 *     to v that rank r_j leaves: ties split by (shard, index), which makes
 *     the cut exact whatever the keys and the sort stable.
 *  3. Every device merges its pieces (one from each shard), reading the
 *     other devices' pieces where they lie (CUDA: peer loads over NVLink).
 * The exchange is the merge's reads: no copy of its own. */
#define _POSIX_C_SOURCE 200809L
#include "sort_backend.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

size_t gpk_shard_share(size_t n, int k, int i)
{
    if (k <= 0 || i < 0 || i >= k) return 0;
    return n / (size_t)k + ((size_t)i < n % (size_t)k ? 1 : 0);
}

/* ---- the driver ------------------------------------------------------------ */

/* At most np probes splitting (lo, hi] into equal steps; returns their count. */
static size_t fill_probes(uint64_t lo, uint64_t hi, uint64_t np, uint64_t *p)
{
    const uint64_t span = hi - lo;
    size_t c = 0;
    if (span <= np) {
        for (uint64_t t = 1; t <= span; t++) p[c++] = lo + t;
        return c;
    }
    const uint64_t step = span / np + (span % np != 0);
    for (uint64_t t = 1; t <= np && step <= span / t; t++) p[c++] = lo + t * step;
    return c;
}

/* cut[b * k + i]: how many of sorted shard i's keys go to outputs before b. */
static gpk_status find_cuts(gpk_multi_dev *d, size_t *cut)
{
    const int k = d->k;
    const size_t nb = (size_t)k + 1;
    uint64_t lo[GPK_MAX_DEVICES + 1], hi[GPK_MAX_DEVICES + 1];
    size_t rank_of[GPK_MAX_DEVICES + 1], first[GPK_MAX_DEVICES + 1], count[GPK_MAX_DEVICES + 1];
    int open[GPK_MAX_DEVICES + 1];
    size_t r = 0;
    for (size_t b = 0; b < nb; b++) {
        rank_of[b] = r;
        if (b < (size_t)k) r += gpk_shard_share(d->total, k, (int)b);
        /* boundaries 0 and k, and those past the last key, need no search */
        open[b] = b > 0 && b < (size_t)k && rank_of[b] < d->total;
        lo[b] = 0;
        hi[b] = d->mask;
        for (int i = 0; i < k; i++) cut[b * k + i] = b > 0 && !open[b] ? d->shards[i].n : 0;
    }
    const size_t most = (size_t)(k > 1 ? k - 1 : 1) * d->probes;
    uint64_t *probes = malloc(most * sizeof *probes);
    uint64_t *below = malloc(most * (size_t)k * sizeof *below);
    uint64_t *le = malloc((size_t)(k + 1) * (size_t)k * sizeof *le);
    gpk_status s = GPK_OK;
    if (!probes || !below || !le) {
        s = gpk__fail(d->ctx, GPK_ENOMEM, "multi-device sort: out of host memory for the splitters");
        goto done;
    }
    for (;;) {
        size_t m = 0;
        for (size_t b = 0; b < nb; b++) {
            first[b] = m;
            count[b] = open[b] && lo[b] < hi[b] ? fill_probes(lo[b], hi[b], d->probes, probes + m) : 0;
            m += count[b];
        }
        if (m == 0) break;
        s = d->rank(d, probes, m, below, NULL);
        if (s != GPK_OK) goto done;
        for (size_t b = 0; b < nb; b++) {
            /* the key of rank r is the largest v with (keys below v) <= r */
            for (size_t t = 0; t < count[b]; t++) {
                size_t sum = 0;
                for (int i = 0; i < k; i++) sum += (size_t)below[(size_t)i * m + first[b] + t];
                if (sum <= rank_of[b]) {
                    lo[b] = probes[first[b] + t];
                } else {
                    hi[b] = probes[first[b] + t] - 1;
                    break;
                }
            }
        }
    }
    /* the cut at the key v = lo[b] of rank r: all keys below v, then keys
     * equal to v shard by shard until r is reached */
    size_t m = 0;
    for (size_t b = 0; b < nb; b++) {
        first[b] = m;
        if (open[b]) probes[m++] = lo[b];
    }
    if (m > 0) {
        s = d->rank(d, probes, m, below, le);
        if (s != GPK_OK) goto done;
    }
    for (size_t b = 0; b < nb; b++) {
        if (!open[b]) continue;
        size_t left = rank_of[b];
        for (int i = 0; i < k; i++) left -= (size_t)below[(size_t)i * m + first[b]];
        for (int i = 0; i < k; i++) {
            const size_t eq = (size_t)(le[(size_t)i * m + first[b]] - below[(size_t)i * m + first[b]]);
            const size_t take = left < eq ? left : eq;
            cut[b * k + i] = (size_t)below[(size_t)i * m + first[b]] + take;
            left -= take;
        }
        if (left != 0) {
            s = gpk__fail(d->ctx, GPK_EDEVICE,
                          "multi-device sort: the splitter search lost %zu keys of rank %zu "
                          "(a shard was not sorted)",
                          left, rank_of[b]);
            goto done;
        }
    }
done:
    free(probes);
    free(below);
    free(le);
    return s;
}

/* The multi-device parts of ctx's backend (NULL: one device a context). */
static const gpk__multi_backend *multi_of(const gpk_ctx *ctx)
{
    const gpk__sort_backend *be = gpk__sort_backend_of(ctx->backend);
    return be ? be->multi : NULL;
}

size_t gpk__multi_part_min(const gpk_ctx *ctx)
{
    const long long forced = gpk__hook(gpk__test.multi_part_min, -1);
    if (forced >= 0) return (size_t)forced;
    const gpk__multi_backend *mb = multi_of(ctx);
    return mb ? mb->part_min : 0;
}

int gpk__multi_plan(const gpk_ctx *ctx, unsigned key_width, int out_in_temp, size_t total)
{
    /* part by default for 4-byte keys on the shard API from
     * gpk__multi_part_min keys a device, where it beat merge on two GPUs
     * (keys and pairs), but below it the host's issue of the bucket sorts
     * (256 sorts of a few launches each) costs more than the exchange it
     * hides; merge for 8-byte keys, whose bucket sorts side by side on
     * several streams ran 5x slower (the Onesweep passes of 8-byte keys do
     * not share a GPU well), and for the host API (its output lives in the
     * temp merge sizes). lsd only when asked for: its peer stores made
     * every pass 2.4x slower than a local one. Figures: docs/perf/scale.md. */
    const char *v = getenv("GPK_MULTI_PLAN");
    const int k = ctx->n_devices > 0 ? ctx->n_devices : 1;
    const gpk__multi_backend *mb = multi_of(ctx);
    const int own_memory = mb && mb->own_memory;
    const int part_fits = !out_in_temp || !own_memory;
    if (v && !strcmp(v, "merge")) return GPK_MULTI_PLAN_MERGE;
    if (v && !strcmp(v, "part")) return part_fits ? GPK_MULTI_PLAN_PART : GPK_MULTI_PLAN_MERGE;
    if (!v || strcmp(v, "lsd"))
        return key_width == 4 && part_fits && total / (size_t)k >= gpk__multi_part_min(ctx)
            ? GPK_MULTI_PLAN_PART
            : GPK_MULTI_PLAN_MERGE;
    if (own_memory)
        for (int i = 0; i < k; i++)
            for (int j = 0; j < k; j++)
                if (!ctx->peer[i][j]) return GPK_MULTI_PLAN_MERGE;
    return GPK_MULTI_PLAN_LSD;
}

/* base[i][x] for digits x < D from cnt[i][x] (rows of GPK_MULTI_MAX_DIGITS):
 * digit by digit, device by device, the global order of (digit, shard). */
static uint64_t global_bases(const gpk_multi_dev *d, unsigned D, const uint64_t *cnt, uint64_t *base)
{
    uint64_t run = 0;
    for (unsigned x = 0; x < D; x++)
        for (int i = 0; i < d->k; i++) {
            base[(size_t)i * GPK_MULTI_MAX_DIGITS + x] = run;
            run += cnt[(size_t)i * GPK_MULTI_MAX_DIGITS + x];
        }
    return run;
}

static gpk_status run_lsd(gpk_multi_dev *d)
{
    const int k = d->k;
    gpk_multi_stats *st = d->stats;
    unsigned digits[64];
    const unsigned passes = d->lsd_plan(d, digits);
    if (passes == 0 || passes > 64)
        return gpk__fail(d->ctx, GPK_EDEVICE, "multi-device sort: a plan of %u passes", passes);
    for (unsigned p = 0; p < passes; p++)
        if (digits[p] == 0 || digits[p] > GPK_MULTI_MAX_DIGITS)
            return gpk__fail(d->ctx, GPK_EDEVICE, "multi-device sort: pass %u has %u digits", p, digits[p]);
    st->passes = (int)passes;
    const size_t row = GPK_MULTI_MAX_DIGITS;
    uint64_t *cnt = d->lsd_counts, *base = d->lsd_bases, *next = d->lsd_next;
    const double t0 = now_ms();
    gpk_status s = GPK_OK;
    for (int i = 0; i < k && s == GPK_OK; i++) s = d->lsd_count(d, i, cnt + (size_t)i * row);
    gpk_status w = d->wait(d);
    if (s == GPK_OK) s = w;
    const double t1 = now_ms();
    st->count_ms = t1 - t0;
    for (unsigned p = 0; p < passes && s == GPK_OK; p++) {
        const uint64_t sum = global_bases(d, digits[p], cnt, base);
        if (sum != d->total)
            return gpk__fail(d->ctx, GPK_EDEVICE,
                             "multi-device sort: pass %u's digit counts add up to %llu keys, "
                             "not %zu",
                             p, (unsigned long long)sum, d->total);
        const int last = p + 1 == passes;
        for (int i = 0; i < k && s == GPK_OK; i++)
            s = d->lsd_pass(d, i, p, base + (size_t)i * row, last ? NULL : next + (size_t)i * k * row);
        w = d->wait(d);
        if (s == GPK_OK) s = w;
        if (s != GPK_OK || last) break;
        /* device o's counts of the next digit: what every device sent it */
        const unsigned D = digits[p + 1];
        for (int o = 0; o < k; o++) {
            uint64_t got = 0;
            for (unsigned x = 0; x < D; x++) {
                uint64_t c = 0;
                for (int i = 0; i < k; i++) c += next[(size_t)i * k * row + (size_t)o * D + x];
                cnt[(size_t)o * row + x] = c;
                got += c;
            }
            if (got != d->bounds[o + 1] - d->bounds[o])
                return gpk__fail(d->ctx, GPK_EDEVICE,
                                 "multi-device sort: pass %u sent %llu keys to device %d, "
                                 "not %zu",
                                 p, (unsigned long long)got, o, d->bounds[o + 1] - d->bounds[o]);
        }
    }
    st->passes_ms = now_ms() - t1;
    return s;
}

/* The part plan (multi_internal.h). *fell_back: a bucket too large for
 * its device, or the keys too narrow for a digit above the bits it sorts;
 * nothing was written but the devices' own buffers. */
static gpk_status run_part(gpk_multi_dev *d, int *fell_back)
{
    const int k = d->k;
    gpk_multi_stats *st = d->stats;
    const unsigned bits = d->key_bits ? d->key_bits : 8 * d->key_width;
    *fell_back = 1;
    if (bits <= GPK_MULTI_PART_BITS) return GPK_OK;
    const unsigned shift = bits - GPK_MULTI_PART_BITS, D = 1u << GPK_MULTI_PART_BITS;
    uint64_t *own = calloc((size_t)k * D * 3, sizeof *own);
    if (!own) return gpk__fail(d->ctx, GPK_ENOMEM, "multi-device sort: out of host memory");
    uint64_t *at = d->part_starts ? d->part_starts : own; /* at[i * D + x]: digit x's first key in X_i */
    uint64_t *cnt = own + (size_t)k * D, *total = cnt + (size_t)k * D;
    const double t0 = now_ms();
    gpk_status s = GPK_OK;
    for (int i = 0; i < k && s == GPK_OK; i++) s = d->part_partition(d, i, shift, D, at + (size_t)i * D);
    gpk_status w = d->wait(d);
    if (s == GPK_OK) s = w;
    const double t1 = now_ms();
    st->sort_ms = t1 - t0;
    if (s != GPK_OK) goto done;
    /* the buckets: global start P, owner, and what each owner holds */
    size_t P[1u << GPK_MULTI_PART_BITS], work[GPK_MAX_DEVICES] = {0}, wlo[GPK_MAX_DEVICES];
    int owner[1u << GPK_MULTI_PART_BITS];
    for (int i = 0; i < k; i++)
        for (unsigned x = 0; x < D; x++) {
            const uint64_t a = at[(size_t)i * D + x],
                           b = x + 1 < D ? at[(size_t)i * D + x + 1] : d->shards[i].n;
            if (a > b || b > d->shards[i].n) {
                s = gpk__fail(d->ctx, GPK_EDEVICE,
                              "multi-device sort: device %d's digit %u starts at %llu, the "
                              "next at %llu, of %zu keys",
                              i, x, (unsigned long long)a, (unsigned long long)b, d->shards[i].n);
                goto done;
            }
            cnt[(size_t)i * D + x] = b - a;
            total[x] += b - a;
        }
    size_t p = 0;
    int o = 0;
    for (unsigned x = 0; x < D; x++) {
        P[x] = p;
        while (o + 1 < k && p >= d->bounds[o + 1]) o++;
        owner[x] = o;
        if (total[x] > 0) {
            const size_t end = p + total[x];
            /* a bucket sorted on one device, reaching at most into the next output */
            const size_t cap = gpk__multi_part_cap(d->bounds[o + 1] - d->bounds[o]);
            if (total[x] > cap || (o + 2 <= k && end > d->bounds[o + 2])) goto done;
            if (work[o] == 0) wlo[o] = p;
            work[o] += total[x];
            if (work[o] > d->bounds[o + 1] - d->bounds[o] + cap) goto done;
        }
        p += total[x];
    }
    *fell_back = 0;
    /* Bucket by bucket: its pieces moved in shard order, then its sort.
     * The owners take turns (each one's r-th bucket, r = 0, 1, ...), so
     * that every device gets work as early as the host can issue it. */
    unsigned next[GPK_MAX_DEVICES] = {0};
    for (int left = 1; left && s == GPK_OK;) {
        left = 0;
        for (int b = 0; b < k && s == GPK_OK; b++) {
            unsigned x = next[b];
            while (x < D && (owner[x] != b || !total[x])) x++;
            next[b] = x + 1;
            if (x >= D) continue;
            left = 1;
            size_t to = P[x] - wlo[b];
            for (int i = 0; i < k && s == GPK_OK; i++) {
                const size_t c = cnt[(size_t)i * D + x];
                if (c) s = d->part_move(d, i, x, at[(size_t)i * D + x], b, to, c);
                to += c;
            }
            const size_t room = d->bounds[b + 1] - P[x];
            if (s == GPK_OK)
                s = d->part_sort(d, b, x, P[x] - wlo[b], total[x], P[x] - d->bounds[b],
                                 total[x] < room ? total[x] : room, shift);
        }
    }
    w = d->wait(d);
    if (s == GPK_OK) s = w;
    st->merge_ms = now_ms() - t1;
done:
    free(own);
    return s;
}

GPK__CTX_STATS(gpk_multi_stats, gpk__multi_stats)

gpk_status gpk__multi_run(gpk_multi_dev *d)
{
    const int k = d->k;
    gpk_multi_stats *st = d->stats;
    memset(st, 0, sizeof *st);
    size_t at = 0;
    for (int j = 0; j < k; j++) {
        d->bounds[j] = at;
        at += gpk_shard_share(d->total, k, j);
    }
    d->bounds[k] = at;
    if (d->plan == GPK_MULTI_PLAN_LSD) {
        st->plan = "lsd";
        return d->total == 0 ? GPK_OK : run_lsd(d);
    }
    if (d->plan == GPK_MULTI_PLAN_PART) {
        st->plan = "part";
        int fell_back = 0;
        gpk_status s = d->total == 0 ? GPK_OK : run_part(d, &fell_back);
        if (s != GPK_OK || !fell_back) return s;
        memset(st, 0, sizeof *st);
        d->plan = GPK_MULTI_PLAN_MERGE; /* the caller's report says which ran */
    }
    st->plan = "merge";
    double t0 = now_ms();
    gpk_status s = GPK_OK;
    for (int i = 0; i < k && s == GPK_OK; i++) s = d->sort(d, i);
    gpk_status w = d->wait(d);
    if (s == GPK_OK) s = w;
    if (s != GPK_OK || d->total == 0) return s;
    double t1 = now_ms();
    st->sort_ms = t1 - t0;
    size_t *cut = malloc((size_t)(k + 1) * (size_t)k * sizeof *cut);
    if (!cut) return gpk__fail(d->ctx, GPK_ENOMEM, "multi-device sort: out of host memory");
    s = find_cuts(d, cut);
    t0 = now_ms();
    st->split_ms = t0 - t1;
    for (int j = 0; j < k && s == GPK_OK; j++)
        s = d->merge(d, j, cut + (size_t)j * k, cut + (size_t)(j + 1) * k);
    w = d->wait(d);
    if (s == GPK_OK) s = w;
    st->merge_ms = now_ms() - t0;
    free(cut);
    return s;
}

/* ---- the CPU's virtual devices ------------------------------------------------ */

static gpk_status cpu_sort(gpk_multi_dev *d, int i)
{
    const gpk_shard *sh = &d->shards[i];
    if (sh->n < 2) return GPK_OK;
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    o.key_bits = d->key_bits;
    o.radix_bits = d->radix_bits;
    gpk_radix_job job;
    GPK_CHECK(gpk__radix_job_init(d->ctx, &job, d->key_type, sh->keys, d->value_width, sh->values, NULL, 0,
                                  sh->n, &o));
    return gpk__radix_sort_cpu(d->ctx, &job);
}

/* First index of sorted keys[0, n) whose key is > x (or >= x when below). */
static size_t cpu_bound(const gpk_multi_dev *d, const void *keys, size_t n, uint64_t x, int below)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        const uint64_t y = gpk__mapped_key_at(d->key_type, keys, mid, d->mask);
        if (below ? y < x : y <= x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static gpk_status cpu_rank(gpk_multi_dev *d, const uint64_t *probes, size_t m, uint64_t *below, uint64_t *le)
{
    for (int i = 0; i < d->k; i++)
        for (size_t c = 0; c < m; c++) {
            below[(size_t)i * m + c] = cpu_bound(d, d->shards[i].keys, d->shards[i].n, probes[c], 1);
            if (le) le[(size_t)i * m + c] = cpu_bound(d, d->shards[i].keys, d->shards[i].n, probes[c], 0);
        }
    return GPK_OK;
}

/* A k-way merge by picking the smallest head, the lowest shard on ties:
 * plain, for tests. */
static gpk_status cpu_merge(gpk_multi_dev *d, int j, const size_t *lo, const size_t *hi)
{
    const gpk_shard *out = &d->shards[j];
    const size_t kw = d->key_width, vw = d->value_width;
    size_t at[GPK_MAX_DEVICES];
    for (int i = 0; i < d->k; i++) at[i] = lo[i];
    const size_t m = gpk_shard_share(d->total, d->k, j);
    for (size_t o = 0; o < m; o++) {
        int best = -1;
        uint64_t best_key = 0;
        for (int i = 0; i < d->k; i++) {
            if (at[i] >= hi[i]) continue;
            const uint64_t y = gpk__mapped_key_at(d->key_type, d->shards[i].keys, at[i], d->mask);
            if (best < 0 || y < best_key) {
                best = i;
                best_key = y;
            }
        }
        if (best < 0)
            return gpk__fail(d->ctx, GPK_EDEVICE, "multi-device sort: output %d ran out of pieces", j);
        memcpy((char *)out->keys_out + o * kw, (const char *)d->shards[best].keys + at[best] * kw, kw);
        if (vw)
            memcpy((char *)out->values_out + o * vw, (const char *)d->shards[best].values + at[best] * vw,
                   vw);
        at[best]++;
    }
    for (int i = 0; i < d->k; i++)
        if (at[i] != hi[i])
            return gpk__fail(d->ctx, GPK_EDEVICE, "multi-device sort: output %d left keys over", j);
    return GPK_OK;
}

/* The part plan on the virtual devices: X_i and W_j in host memory (the
 * same caps as on CUDA, so that the same inputs take the same plan). */
typedef struct cpu_part {
    void *x[GPK_MAX_DEVICES], *xv[GPK_MAX_DEVICES], *w[GPK_MAX_DEVICES], *wv[GPK_MAX_DEVICES];
} cpu_part;

/* The virtual devices' buffers (d->impl): the part plan's, or the lsd
 * plan's spares of the outputs (k pointers for keys, then k for values). */
typedef struct cpu_multi {
    cpu_part cp;
    void *spare[2 * GPK_MAX_DEVICES];
} cpu_multi;

/* The lsd plan on the virtual devices, pass for pass as on CUDA: digits of
 * r bits (radix_bits, else 8; at most 11, as on CUDA) from bit 0 up, the
 * last one narrower; every output's spare in d->impl (k pointers for keys,
 * then k for values). */
static unsigned cpu_lsd_plan(gpk_multi_dev *d, unsigned *digits)
{
    const unsigned bits = d->key_bits ? d->key_bits : 8 * d->key_width;
    unsigned r = d->radix_bits ? d->radix_bits : 8;
    if (r > 11) r = 11;
    unsigned p = 0;
    for (unsigned lo = 0; lo < bits; lo += r) digits[p++] = 1u << (bits - lo < r ? bits - lo : r);
    return p;
}

static unsigned cpu_digit_shift(const gpk_multi_dev *d, unsigned p)
{
    const unsigned r = d->radix_bits ? (d->radix_bits > 11 ? 11 : d->radix_bits) : 8;
    return p * r;
}

static gpk_status cpu_lsd_count(gpk_multi_dev *d, int i, uint64_t *counts)
{
    const gpk_shard *sh = &d->shards[i];
    unsigned digits[64];
    cpu_lsd_plan(d, digits);
    memset(counts, 0, digits[0] * sizeof *counts);
    for (size_t t = 0; t < sh->n; t++)
        counts[gpk__mapped_key_at(d->key_type, sh->keys, t, d->mask) & (digits[0] - 1)]++;
    return GPK_OK;
}

static gpk_status cpu_lsd_pass(gpk_multi_dev *d, int i, unsigned p, const uint64_t *bases, uint64_t *next)
{
    const size_t kw = d->key_width, vw = d->value_width;
    unsigned digits[64];
    const unsigned passes = cpu_lsd_plan(d, digits);
    const unsigned shift = cpu_digit_shift(d, p), D = digits[p];
    void **spare = ((cpu_multi *)d->impl)->spare;
    /* pass p writes the outputs where an even number of passes follow it,
     * else the spares; it reads the shard (p = 0) or what p - 1 wrote */
    const int to_out = (passes - 1 - p) % 2 == 0;
    const void *keys = d->shards[i].keys, *vals = d->shards[i].values;
    size_t n = d->shards[i].n;
    if (p > 0) {
        keys = to_out ? spare[i] : d->shards[i].keys_out;
        vals = to_out ? spare[d->k + i] : d->shards[i].values_out;
        n = d->bounds[i + 1] - d->bounds[i];
    }
    const unsigned nshift = p + 1 < passes ? cpu_digit_shift(d, p + 1) : 0,
                   ND = p + 1 < passes ? digits[p + 1] : 0;
    if (next) memset(next, 0, (size_t)d->k * ND * sizeof *next);
    uint64_t *at = malloc(D * sizeof *at);
    if (!at) return gpk__fail(d->ctx, GPK_ENOMEM, "multi-device sort: out of host memory");
    memcpy(at, bases, D * sizeof *at);
    for (size_t t = 0; t < n; t++) {
        const uint64_t key = gpk__mapped_key_at(d->key_type, keys, t, d->mask);
        const uint64_t pos = at[(key >> shift) & (D - 1)]++;
        int j = 0;
        while (j + 1 < d->k && pos >= d->bounds[j + 1]) j++;
        if (pos >= d->bounds[j + 1]) {
            free(at);
            return gpk__fail(d->ctx, GPK_EDEVICE, "multi-device sort: position %llu past the outputs",
                             (unsigned long long)pos);
        }
        const size_t o = (size_t)(pos - d->bounds[j]);
        char *kd = to_out ? d->shards[j].keys_out : spare[j];
        char *vd = to_out ? d->shards[j].values_out : spare[d->k + j];
        memcpy(kd + o * kw, (const char *)keys + t * kw, kw);
        if (vw) memcpy(vd + o * vw, (const char *)vals + t * vw, vw);
        if (next) next[(size_t)j * ND + ((key >> nshift) & (ND - 1))]++;
    }
    free(at);
    return GPK_OK;
}

static gpk_status cpu_part_partition(gpk_multi_dev *d, int i, unsigned shift, unsigned D, uint64_t *starts)
{
    const cpu_part *cp = &((const cpu_multi *)d->impl)->cp;
    const gpk_shard *sh = &d->shards[i];
    const size_t kw = d->key_width, vw = d->value_width;
    uint64_t *at = calloc(D, sizeof *at); /* counts, then the next free place of each digit */
    if (!at) return gpk__fail(d->ctx, GPK_ENOMEM, "multi-device sort: out of host memory");
    for (size_t t = 0; t < sh->n; t++) at[gpk__mapped_key_at(d->key_type, sh->keys, t, d->mask) >> shift]++;
    for (uint64_t x = 0, run = 0; x < D; x++) {
        const uint64_t c = at[x];
        starts[x] = at[x] = run;
        run += c;
    }
    for (size_t t = 0; t < sh->n; t++) {
        const uint64_t pos = at[gpk__mapped_key_at(d->key_type, sh->keys, t, d->mask) >> shift]++;
        memcpy((char *)cp->x[i] + pos * kw, (const char *)sh->keys + t * kw, kw);
        if (vw) memcpy((char *)cp->xv[i] + pos * vw, (const char *)sh->values + t * vw, vw);
    }
    free(at);
    return GPK_OK;
}

static gpk_status cpu_part_move(gpk_multi_dev *d, int i, unsigned x, size_t from, int o, size_t to,
                                size_t count)
{
    (void)x;
    const cpu_part *cp = &((const cpu_multi *)d->impl)->cp;
    const size_t kw = d->key_width, vw = d->value_width;
    memcpy((char *)cp->w[o] + to * kw, (const char *)cp->x[i] + from * kw, count * kw);
    if (vw) memcpy((char *)cp->wv[o] + to * vw, (const char *)cp->xv[i] + from * vw, count * vw);
    return GPK_OK;
}

static gpk_status cpu_part_sort(gpk_multi_dev *d, int o, unsigned x, size_t at, size_t count, size_t out_at,
                                size_t split, unsigned shift)
{
    (void)x;
    const cpu_part *cp = &((const cpu_multi *)d->impl)->cp;
    const size_t kw = d->key_width, vw = d->value_width;
    char *keys = (char *)cp->w[o] + at * kw, *vals = vw ? (char *)cp->wv[o] + at * vw : NULL;
    if (count > 1) {
        gpk_radix_opts opt = GPK_RADIX_OPTS_INIT;
        opt.key_bits = shift;
        opt.radix_bits = d->radix_bits;
        gpk_radix_job job;
        GPK_CHECK(gpk__radix_job_init(d->ctx, &job, d->key_type, keys, vw, vals, NULL, 0, count, &opt));
        GPK_CHECK(gpk__radix_sort_cpu(d->ctx, &job));
    }
    memcpy((char *)d->shards[o].keys_out + out_at * kw, keys, split * kw);
    if (vw) memcpy((char *)d->shards[o].values_out + out_at * vw, vals, split * vw);
    if (split < count) {
        memcpy(d->shards[o + 1].keys_out, keys + split * kw, (count - split) * kw);
        if (vw) memcpy(d->shards[o + 1].values_out, vals + split * vw, (count - split) * vw);
    }
    return GPK_OK;
}

static gpk_status cpu_wait(gpk_multi_dev *d)
{
    (void)d;
    return GPK_OK;
}

/* The virtual devices of the CPU backend (d->ctx->part[i] == ctx): their
 * operations and buffers. */
static gpk_status cpu_open(gpk_multi_dev *d)
{
    const int k = d->k;
    const size_t kw = d->key_width, vw = d->value_width;
    d->probes = 255;
    d->sort = cpu_sort;
    d->rank = cpu_rank;
    d->merge = cpu_merge;
    d->wait = cpu_wait;
    d->lsd_plan = cpu_lsd_plan;
    d->lsd_count = cpu_lsd_count;
    d->lsd_pass = cpu_lsd_pass;
    d->part_partition = cpu_part_partition;
    d->part_move = cpu_part_move;
    d->part_sort = cpu_part_sort;
    cpu_multi *m = calloc(1, sizeof *m);
    d->impl = m;
    /* counts, bases, next; the spares of the outputs */
    d->lsd_counts = malloc((size_t)k * GPK_MULTI_MAX_DIGITS * (2 + (size_t)k) * sizeof *d->lsd_counts);
    if (!m || !d->lsd_counts) return gpk__fail(d->ctx, GPK_ENOMEM, "multi-device sort: out of host memory");
    int short_of_memory = 0;
    for (int j = 0; j < k && d->plan == GPK_MULTI_PLAN_LSD; j++) {
        const size_t share = gpk_shard_share(d->total, k, j);
        m->spare[j] = malloc(share * kw + 1);
        m->spare[k + j] = malloc(share * vw + 1);
        short_of_memory |= !m->spare[j] || !m->spare[k + j];
    }
    for (int j = 0; j < k && d->plan == GPK_MULTI_PLAN_PART; j++) {
        const size_t share = gpk_shard_share(d->total, k, j), work = share + gpk__multi_part_cap(share);
        m->cp.x[j] = malloc(d->shards[j].n * kw + 1);
        m->cp.xv[j] = malloc(d->shards[j].n * vw + 1);
        m->cp.w[j] = malloc(work * kw + 1);
        m->cp.wv[j] = malloc(work * vw + 1);
        short_of_memory |= !m->cp.x[j] || !m->cp.xv[j] || !m->cp.w[j] || !m->cp.wv[j];
    }
    if (short_of_memory) return gpk__fail(d->ctx, GPK_ENOMEM, "multi-device sort: out of host memory");
    d->lsd_bases = d->lsd_counts + (size_t)k * GPK_MULTI_MAX_DIGITS;
    d->lsd_next = d->lsd_bases + (size_t)k * GPK_MULTI_MAX_DIGITS;
    return GPK_OK;
}

static void cpu_close(gpk_multi_dev *d)
{
    cpu_multi *m = (cpu_multi *)d->impl;
    if (m) {
        for (int j = 0; j < d->k; j++)
            free(m->cp.x[j]), free(m->cp.xv[j]), free(m->cp.w[j]), free(m->cp.wv[j]);
        for (int j = 0; j < 2 * d->k; j++) free(m->spare[j]);
        free(m);
    }
    free(d->lsd_counts);
    d->impl = NULL;
    d->lsd_counts = NULL;
}

/* ---- the public entry points ------------------------------------------------ */

static const char *multi_path(int plan)
{
    return plan == GPK_MULTI_PLAN_LSD ? "radix-multi-lsd"
        : plan == GPK_MULTI_PLAN_PART ? "radix-multi-part"
                                      : "radix-multi";
}

#define CPU_TEMP_BYTES 256 /* the virtual devices need no scratch; a non-zero size keeps the query plain */

gpk_status gpk__sort_shards(gpk_ctx *ctx, gpk_type key_type, size_t value_width, gpk_shard *shards,
                            const gpk_sort_opts *opts, const char *fn, int out_in_temp)
{
    if (!ctx) return GPK_EINVAL;
    gpk__clear_error(ctx);
    size_t kw;
    gpk_status ws = gpk__sort_widths_check(ctx, fn, shards, "shards", key_type, value_width, &kw);
    if (ws != GPK_OK) return ws;
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    if (opts) o = *opts;
    if (o.algorithm != GPK_SORT_AUTO && o.algorithm != GPK_SORT_RADIX)
        return gpk__fail(ctx, GPK_EUNSUPPORTED,
                         "%s: only the radix sort sorts shards (algorithm %s asked for)", fn,
                         gpk_sort_algo_name(o.algorithm));
    if (o.descending)
        return gpk__fail(ctx, GPK_EUNSUPPORTED, "%s: shards are sorted in ascending order only", fn);
    const gpk_status bs = gpk__radix_bits_check(ctx, fn, key_type, &o);
    if (bs != GPK_OK) return bs;
    const gpk__multi_backend *mb = multi_of(ctx);
    if (!mb)
        return gpk__fail(ctx, GPK_EUNSUPPORTED, "%s: the %s backend does not sort shards (CPU and CUDA do)",
                         fn, gpk_backend_name(ctx->backend));
    const int k = ctx->n_devices > 0 ? ctx->n_devices : 1;
    size_t total = 0;
    for (int i = 0; i < k; i++) {
        if (shards[i].n > ((size_t)-1) / 16 - total)
            return gpk__fail(ctx, GPK_EINVAL, "%s: the shards' sizes add up past what can be addressed", fn);
        total += shards[i].n;
    }
    size_t need[GPK_MAX_DEVICES];
    for (int i = 0; i < k; i++) {
        need[i] = mb->temp ? mb->temp(ctx, i, k, shards[i].n, gpk_shard_share(total, k, i), (unsigned)kw,
                                      (unsigned)value_width, &o, out_in_temp,
                                      gpk__multi_plan(ctx, (unsigned)kw, out_in_temp, total))
                           : CPU_TEMP_BYTES;
    }
    if (!shards[0].temp) {
        for (int i = 0; i < k; i++) shards[i].temp_bytes = need[i];
        return GPK_OK;
    }
    for (int i = 0; i < k; i++) {
        const gpk_shard *sh = &shards[i];
        const size_t m = gpk_shard_share(total, k, i);
        if (!sh->temp || sh->temp_bytes < need[i])
            return gpk__fail(ctx, GPK_EINVAL,
                             "%s: shard %d has %zu temp bytes at %p, it needs %zu (ask with "
                             "shards[0].temp = NULL)",
                             fn, i, sh->temp_bytes, sh->temp, need[i]);
        if (sh->n > 0 && (!sh->keys || (value_width && !sh->values)))
            return gpk__fail(ctx, GPK_EINVAL, "%s: shard %d holds %zu keys but its %s pointer is NULL", fn, i,
                             sh->n, sh->keys ? "values" : "keys");
        if (!out_in_temp && m > 0 && (!sh->keys_out || (value_width && !sh->values_out)))
            return gpk__fail(ctx, GPK_EINVAL, "%s: output %d gets %zu keys but its %s pointer is NULL", fn, i,
                             m, sh->keys_out ? "values_out" : "keys_out");
    }
    /* Every buffer of every shard is read or written while the others
     * are: none may share memory with another (the callers' own buffers;
     * the internal callers place outputs in the temp themselves). */
    if (!out_in_temp) {
        static const char *const what[5] = {"keys", "values", "keys_out", "values_out", "temp"};
        for (int i = 0; i < 5 * k; i++)
            for (int j = i + 1; j < 5 * k; j++) {
                const void *p[2];
                size_t len[2];
                for (int e = 0; e < 2; e++) {
                    const int id = e ? j : i, s5 = id / 5, f = id % 5;
                    const gpk_shard *sh = &shards[s5];
                    const size_t m = gpk_shard_share(total, k, s5);
                    p[e] = f == 0 ? sh->keys
                        : f == 1  ? sh->values
                        : f == 2  ? sh->keys_out
                        : f == 3  ? sh->values_out
                                  : sh->temp;
                    len[e] = f == 0 ? sh->n * kw
                        : f == 1    ? sh->n * value_width
                        : f == 2    ? m * kw
                        : f == 3    ? m * value_width
                                    : sh->temp_bytes;
                }
                if (gpk__overlap(p[0], len[0], p[1], len[1]))
                    return gpk__fail(ctx, GPK_EINVAL, "%s: shard %d's %s and shard %d's %s overlap", fn,
                                     i / 5, what[i % 5], j / 5, what[j % 5]);
            }
    }
    gpk_multi_dev d;
    memset(&d, 0, sizeof d);
    d.ctx = ctx;
    d.stats = stats_slot(ctx);
    if (!d.stats)
        return gpk__fail(ctx, GPK_ENOMEM, "%s: out of host memory (or context hooks) for the statistics", fn);
    d.k = k;
    d.shards = shards;
    d.total = total;
    d.key_type = key_type;
    d.key_width = (unsigned)kw;
    d.value_width = (unsigned)value_width;
    d.key_bits = o.key_bits;
    d.radix_bits = o.radix_bits;
    const unsigned bits = o.key_bits ? o.key_bits : (unsigned)(8 * kw);
    d.mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
    d.out_in_temp = out_in_temp && mb->own_memory;
    d.plan = gpk__multi_plan(ctx, (unsigned)kw, out_in_temp, total);
    gpk_status s;
    s = mb->open(&d);
    if (s == GPK_OK) s = gpk__multi_run(&d);
    if (mb->close) mb->close(&d);
    if (s == GPK_OK) {
        gpk__set_last_algo(ctx, GPK_SORT_RADIX);
        ctx->last_sort_path = multi_path(d.plan);
    }
    return s;
}

gpk_status gpk_sort_shards_keys(gpk_ctx *ctx, gpk_type key_type, gpk_shard *shards, const gpk_sort_opts *opts)
{
    return gpk__sort_shards(ctx, key_type, 0, shards, opts, "gpk_sort_shards_keys", 0);
}

gpk_status gpk_sort_shards_pairs(gpk_ctx *ctx, gpk_type key_type, size_t value_width, gpk_shard *shards,
                                 const gpk_sort_opts *opts)
{
    if (ctx && value_width != 4 && value_width != 8) {
        gpk__clear_error(ctx);
        return gpk__fail(ctx, GPK_EINVAL, "gpk_sort_shards_pairs: value_width must be 4 or 8, not %zu",
                         value_width);
    }
    return gpk__sort_shards(ctx, key_type, value_width, shards, opts, "gpk_sort_shards_pairs", 0);
}

/* ---- the host API on several devices -------------------------------------------- */

size_t gpk__multi_min(const gpk_ctx *ctx)
{
    const long long forced = gpk__hook(gpk__test.multi_min, -1);
    if (forced >= 0) return (size_t)forced;
    /* the CPU's virtual devices exist for tests: their merge is one thread */
    const gpk__multi_backend *mb = multi_of(ctx);
    return mb ? mb->host_min : (size_t)-1;
}

gpk_status gpk__multi_sort_host(gpk_ctx *ctx, const gpk_radix_job *job, int *declined)
{
    *declined = 0;
    const int k = ctx->n_devices;
    const size_t n = job->n, kw = job->key_width;
    void *values = job->sigma ? job->sigma : job->values;
    const size_t vw = job->sigma ? job->sigma_width : job->value_width;
    const gpk__multi_backend *mb = multi_of(ctx);
    if (mb && mb->sort_host) return mb->sort_host(ctx, job, declined);
    /* a device budget that one device's share (with its output) exceeds:
     * the out-of-core sort of the first device takes it */
    const size_t per = gpk_shard_share(n, k, 0);
    if (ctx->device_budget && 2.0 * (double)per * (double)(kw + vw) > (double)ctx->device_budget) {
        *declined = 1;
        return GPK_OK;
    }
    /* the outputs and the sorts' scratch: refused before anything is
     * touched, not left to an overcommitting allocator */
    if (ctx->info.memory_bytes && 3.0 * (double)n * (double)(kw + vw) > (double)ctx->info.memory_bytes)
        return gpk__fail(ctx, GPK_ENOMEM,
                         "sort: %zu elements over %d virtual devices need %.2f GiB, the host has %.2f GiB", n,
                         k, 3.0 * (double)n * (double)(kw + vw) / 1073741824.0,
                         (double)ctx->info.memory_bytes / 1073741824.0);
    unsigned char *out_keys = malloc(n * kw), *out_vals = vw ? malloc(n * vw) : NULL;
    unsigned char temp[GPK_MAX_DEVICES][CPU_TEMP_BYTES];
    gpk_status s = GPK_OK;
    if (!out_keys || (vw && !out_vals)) {
        s = gpk__fail(ctx, GPK_ENOMEM, "sort: out of host memory for the %d virtual devices' outputs", k);
        goto done;
    }
    if (job->sigma) gpk__sigma_iota(job->sigma, job->sigma_width, 0, n);
    gpk_shard shards[GPK_MAX_DEVICES];
    size_t off = 0;
    for (int i = 0; i < k; i++) {
        const size_t m = gpk_shard_share(n, k, i);
        shards[i].keys = (char *)job->keys + off * kw;
        shards[i].values = vw ? (char *)values + off * vw : NULL;
        shards[i].n = m;
        shards[i].keys_out = out_keys + off * kw;
        shards[i].values_out = vw ? out_vals + off * vw : NULL;
        shards[i].temp = temp[i];
        shards[i].temp_bytes = sizeof temp[i];
        off += m;
    }
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    o.key_bits = job->key_bits;
    o.radix_bits = job->radix_bits;
    s = gpk__sort_shards(ctx, job->key_type, vw, shards, &o, "sort", 0);
    if (s == GPK_OK) {
        memcpy(job->keys, out_keys, n * kw);
        if (vw) memcpy(values, out_vals, n * vw);
    }
done:
    free(out_keys);
    free(out_vals);
    return s;
}

const gpk__multi_backend gpk__multi_cpu = {0, (size_t)-1, 0, NULL, cpu_open, cpu_close, NULL};
