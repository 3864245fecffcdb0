/* Out-of-core sorts against gpk_sort_reference, with a device
 * budget small enough that every call runs the run + merge driver.
 *
 * Usage: test_ooc cpu|cuda. On the CPU the driver runs with the CPU sort
 * as its device (the CI fake); on CUDA with the real device. The slot
 * (run) length is set with the ooc_slot_bytes hook and ooc_force sends
 * even sizes of one slot out of core, so the sizes hit run boundaries.
 * Covers every key type, pairs (4/8-byte values), perm, records; uniform,
 * few distinct, all equal, 90% one value, sorted, reversed keys; the
 * budget-too-small error, the GPK_DEVICE_BUDGET parse, and failures
 * injected at a transfer of either phase (ooc_fail_at). GPK_TEST_SMALL=1
 * runs fewer sizes. */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include <string.h>

#include "core/internal.h"
#include "sort/ooc_internal.h"
#include "gpk/sort.h"

static uint64_t rng_state;
static uint64_t rnd(void)
{
    rng_state += 0x9E3779B97F4A7C15ull;
    uint64_t z = rng_state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

enum { D_UNIFORM, D_FEW, D_EQUAL, D_SKEW90, D_SORTED, D_REVERSED, D_COUNT };
static const char *dist_name[D_COUNT] = {"uniform", "few", "equal", "skew90", "sorted", "reversed"};

static void fill_keys(void *keys, size_t n, unsigned kw, int dist)
{
    const uint64_t common = rnd();
    for (size_t i = 0; i < n; i++) {
        uint64_t x;
        switch (dist) {
        case D_FEW: x = common ^ (rnd() % 5); break;
        case D_EQUAL: x = common; break;
        case D_SKEW90: x = rnd() % 10 ? common : rnd(); break;
        case D_SORTED: x = (uint64_t)i * 3; break;
        case D_REVERSED: x = (uint64_t)(n - i) * 5; break;
        default: x = rnd();
        }
        if (kw == 4) {
            uint32_t y = (uint32_t)x;
            memcpy((char *)keys + 4 * i, &y, 4);
        } else {
            memcpy((char *)keys + 8 * i, &x, 8);
        }
    }
}

/* How many states the context keeps for gpk_ctx_trim to give back: the
 * out-of-core sort's is the only hook registered with trim. */
static int kept_states(const gpk_ctx *ctx)
{
    int k = 0;
    for (int i = 0; i < ctx->n_hooks; i++) k += ctx->hook[i].trim && ctx->hook[i].state;
    return k;
}

static void set_slot(size_t cap, unsigned per)
{
    char v[64];
    snprintf(v, sizeof v, "%zu", cap * per);
    gpk__test_set("ooc_slot_bytes", v);
}

/* kind: 0 keys, 4/8 pairs with values of that width, 1 perm, 2 perm64 */
static void check_case(gpk_ctx *ctx, gpk_type t, int kind, size_t n, int dist)
{
    const unsigned kw = (unsigned)gpk_type_size(t);
    const unsigned vw = kind == 4 || kind == 8 ? (unsigned)kind : 0;
    unsigned char *keys = malloc(n * kw + 8), *ref = malloc(n * kw + 8);
    unsigned char *vals = malloc(n * (vw ? vw : 4) + 8), *rvals = malloc(n * (vw ? vw : 4) + 8);
    uint32_t *sigma = malloc(n * 4 + 8), *rsigma = malloc(n * 4 + 8);
    uint64_t *sigma64 = malloc(n * 8 + 8);
    fill_keys(keys, n, kw, dist);
    for (size_t i = 0; i < n * (vw ? vw : 4); i++) vals[i] = (unsigned char)rnd();
    memcpy(ref, keys, n * kw);
    memcpy(rvals, vals, n * (vw ? vw : 4));
    gpk_status s, rs;
    if (kind == 1 || kind == 2) {
        s = kind == 1 ? gpk_sort_perm(ctx, t, keys, sigma, n, NULL)
                      : gpk_sort_perm64(ctx, t, keys, sigma64, n, NULL);
        if (kind == 2)
            for (size_t i = 0; i < n; i++)
                sigma[i] = sigma64[i] > UINT32_MAX ? UINT32_MAX : (uint32_t)sigma64[i];
        rs = gpk_sort_reference(t, ref, 0, NULL, rsigma, n, 0);
    } else if (vw) {
        s = gpk_sort_pairs(ctx, t, keys, vw == 4 ? GPK_U32 : GPK_U64, vals, n, NULL);
        rs = gpk_sort_reference(t, ref, vw, rvals, NULL, n, 0);
    } else {
        s = gpk_sort_keys(ctx, t, keys, n, NULL);
        rs = gpk_sort_reference(t, ref, 0, NULL, NULL, n, 0);
    }
    const char *what = kind == 1 ? "perm"
        : kind == 2              ? "perm64"
        : vw == 4                ? "pairs4"
        : vw == 8                ? "pairs8"
                                 : "keys";
    TU_CHECK(s == GPK_OK && rs == GPK_OK, "%s %s n=%zu %s: %s (%s)", what, gpk_type_name(t), n,
             dist_name[dist], gpk_status_string(s), gpk_last_error(ctx));
    if (s == GPK_OK) {
        TU_CHECK(memcmp(keys, ref, n * kw) == 0, "%s %s n=%zu %s: keys differ from the reference", what,
                 gpk_type_name(t), n, dist_name[dist]);
        if (vw)
            TU_CHECK(memcmp(vals, rvals, n * vw) == 0, "%s %s n=%zu %s: values differ (stability)", what,
                     gpk_type_name(t), n, dist_name[dist]);
        if (kind == 1 || kind == 2)
            TU_CHECK(memcmp(sigma, rsigma, n * 4) == 0, "%s %s n=%zu %s: sigma differs", what,
                     gpk_type_name(t), n, dist_name[dist]);
        if (n >= 2)
            TU_CHECK(gpk_last_sort_path(ctx) && !strcmp(gpk_last_sort_path(ctx), "radix-out-of-core"),
                     "%s %s n=%zu: ran %s, not out of core", what, gpk_type_name(t), n,
                     gpk_last_sort_path(ctx));
    }
    free(keys);
    free(ref);
    free(vals);
    free(rvals);
    free(sigma);
    free(rsigma);
    free(sigma64);
}

static void check_records(gpk_ctx *ctx, gpk_type t, size_t n, size_t size, size_t off, int dist)
{
    const unsigned kw = (unsigned)gpk_type_size(t);
    unsigned char *rec = malloc(n * size + 1), *orig = malloc(n * size + 1), *keys = malloc(n * kw + 1);
    uint32_t *sigma = malloc(n * 4 + 4);
    for (size_t i = 0; i < n * size; i++) rec[i] = (unsigned char)rnd();
    fill_keys(keys, n, kw, dist);
    for (size_t i = 0; i < n; i++) memcpy(rec + i * size + off, keys + i * kw, kw);
    memcpy(orig, rec, n * size);
    gpk_sort_opts o = GPK_SORT_OPTS_INIT;
    o.algorithm = GPK_SORT_RADIX;
    gpk_status s = gpk_sort_records(ctx, rec, n, size, off, t, &o);
    TU_CHECK(s == GPK_OK, "records %s n=%zu: %s (%s)", gpk_type_name(t), n, gpk_status_string(s),
             gpk_last_error(ctx));
    gpk_sort_reference(t, keys, 0, NULL, sigma, n, 0);
    int same = 1;
    for (size_t j = 0; j < n && same; j++)
        same = memcmp(rec + j * size, orig + (size_t)sigma[j] * size, size) == 0;
    TU_CHECK(s != GPK_OK || same, "records %s n=%zu size %zu: differ from the reference order",
             gpk_type_name(t), n, size);
    free(rec);
    free(orig);
    free(keys);
    free(sigma);
}

/* Failure at transfer k: status not OK; the keys a permutation of the
 * input with values (indices) still naming their key; before the merge
 * the input exactly. Returns 0 when the sort has fewer than k transfers
 * (it then succeeded, and its result is checked). */
static int check_fault(gpk_ctx *ctx, gpk_type t, size_t n, size_t runs, long k, int perm)
{
    const unsigned kw = (unsigned)gpk_type_size(t);
    unsigned char *keys = malloc(n * kw), *in = malloc(n * kw), *ref = malloc(n * kw);
    uint32_t *idx = malloc(n * 4);
    char *seen = calloc(n, 1);
    fill_keys(keys, n, kw, D_FEW);
    memcpy(in, keys, n * kw);
    memcpy(ref, keys, n * kw);
    for (size_t i = 0; i < n; i++) idx[i] = (uint32_t)i;
    char v[32];
    snprintf(v, sizeof v, "%ld", k);
    gpk__test_set("ooc_fail_at", v);
    gpk_status s = perm ? gpk_sort_perm(ctx, t, keys, idx, n, NULL)
                        : gpk_sort_pairs(ctx, t, keys, GPK_U32, idx, n, NULL);
    gpk__test_set("ooc_fail_at", NULL);
    int ok = 1;
    for (size_t i = 0; i < n && ok; i++) {
        ok = idx[i] < n && !seen[idx[i]] && memcmp(keys + i * kw, in + (size_t)idx[i] * kw, kw) == 0;
        if (ok) seen[idx[i]] = 1;
    }
    TU_CHECK(ok, "fault at %ld (%s): the array is not a permutation of the input with its values", k,
             perm ? "perm" : "pairs");
    if (s == GPK_OK) {
        gpk_sort_reference(t, ref, 0, NULL, NULL, n, 0);
        TU_CHECK(!memcmp(keys, ref, n * kw), "no fault at %ld: sorted", k);
    } else {
        TU_CHECK(s == GPK_EDEVICE && strstr(gpk_last_error(ctx), "failed"), "fault at %ld: %s (%s)", k,
                 gpk_status_string(s), gpk_last_error(ctx));
        if ((size_t)k <= 2 * runs)
            TU_CHECK(memcmp(keys, in, n * kw) == 0, "fault at %ld during the runs: the input changed", k);
        else
            TU_CHECK(strstr(gpk_last_error(ctx), "permutation"), "fault at %ld in the merge: says so (%s)", k,
                     gpk_last_error(ctx));
    }
    free(keys);
    free(in);
    free(ref);
    free(idx);
    free(seen);
    return s != GPK_OK;
}

typedef struct progress_log {
    int calls, backwards;
    double last;
} progress_log;

static void on_progress(void *user, double done)
{
    progress_log *p = (progress_log *)user;
    p->calls++;
    if (done < p->last || done > 1.0 || done <= 0.0) p->backwards++;
    p->last = done;
}

int main(int argc, char **argv)
{
    gpk_ctx *ctx;
    gpk_backend be;
    int rc = tu_open_backend("test_ooc", argc, argv, &ctx, &be);
    if (rc >= 0) return rc;
    rng_state = tu_seed();
    const int small = getenv("GPK_TEST_SMALL") && *getenv("GPK_TEST_SMALL") == '1';
    const size_t cap = be == GPK_BACKEND_CUDA ? (small ? 4099 : 40009) : (small ? 61 : 257);
    gpk__test_set("ooc_force", "1");
    gpk_ctx_set_device_budget(ctx, be == GPK_BACKEND_CUDA ? (size_t)256 << 20 : (size_t)64 << 20);

    const size_t sizes[] = {0,       1,           2,       3,           5,           97,   cap - 1,      cap,
                            cap + 1, 2 * cap - 1, 2 * cap, 2 * cap + 1, 3 * cap + 1, 7919, 37 * cap + 11};
    const size_t nsizes = sizeof sizes / sizeof sizes[0];
    const int kinds[] = {0, 4, 8, 1, 2};
    for (int t = GPK_U32; t <= GPK_F64; t++)
        for (int ki = 0; ki < 5; ki++) {
            const int kind = kinds[ki];
            const unsigned per = (unsigned)gpk_type_size((gpk_type)t) +
                (kind == 1       ? 4
                     : kind == 2 ? 8
                                 : kind);
            set_slot(cap, per);
            for (size_t si = 0; si < nsizes; si++)
                for (int d = 0; d < D_COUNT; d++) {
                    if (small && si % 3 && d != D_UNIFORM && d != D_SKEW90) continue;
                    check_case(ctx, (gpk_type)t, kind, sizes[si], d);
                    if (sizes[si] >= 2 * cap + 1)
                        TU_CHECK(gpk__ooc_stats(ctx).cap == cap, "slot of %zu elements, not %zu",
                                 gpk__ooc_stats(ctx).cap, cap);
                }
        }

    /* key_bits: only bits [0, b) of the mapped key order them (stably) */
    {
        const unsigned bits[] = {12, 33};
        for (int t = GPK_U32; t <= GPK_F64; t++)
            for (int bi = 0; bi < 2; bi++) {
                const unsigned kw = (unsigned)gpk_type_size((gpk_type)t), b = bits[bi];
                if (b > 8 * kw) continue;
                set_slot(cap, kw + 4);
                const size_t n = 7 * cap + 3;
                unsigned char *k = malloc(n * kw), *ref = malloc(n * kw);
                uint32_t *v = malloc(n * 4), *rv = malloc(n * 4);
                fill_keys(k, n, kw, D_UNIFORM);
                for (size_t i = 0; i < n; i++) v[i] = (uint32_t)i;
                memcpy(ref, k, n * kw);
                memcpy(rv, v, n * 4);
                gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
                o.key_bits = b;
                gpk_status s = gpk_sort_pairs(ctx, (gpk_type)t, k, GPK_U32, v, n, &o);
                gpk_sort_reference((gpk_type)t, ref, 4, rv, NULL, n, b);
                TU_CHECK(s == GPK_OK && !memcmp(k, ref, n * kw) && !memcmp(v, rv, n * 4),
                         "key_bits %u %s: %s, differs from the reference", b, gpk_type_name((gpk_type)t),
                         gpk_status_string(s));
                free(k);
                free(ref);
                free(v);
                free(rv);
            }
    }

    /* records: through (key, index) pairs, 4-byte indices */
    set_slot(cap, 8 + 4);
    for (int t = GPK_U32; t <= GPK_F64; t++)
        for (int d = 0; d < D_COUNT; d++) {
            check_records(ctx, (gpk_type)t, 5 * cap + 3, 24, 3, d);
            check_records(ctx, (gpk_type)t, cap + 1, 9, 0, d);
        }

    /* runs kept on the device for the merge: none, some (the merge mixes
     * kept slices and slices loaded from B), all (the default here: the
     * budget holds them) */
    {
        const char *limits[] = {"0", "2", "1000000"};
        const size_t ns[] = {2 * cap + 1, 5 * cap - 1, 9 * cap + 4};
        for (int li = 0; li < 3; li++) {
            gpk__test_set("ooc_resident", limits[li]);
            for (int t = GPK_U32; t <= GPK_F64; t++)
                for (int ki = 0; ki < 3; ki++) {
                    const int kind = ki == 0 ? 0 : ki == 1 ? 4 : 2;
                    const unsigned per = (unsigned)gpk_type_size((gpk_type)t) + (kind == 2 ? 8 : kind);
                    set_slot(cap, per);
                    for (int ni = 0; ni < 3; ni++) {
                        const int d = (t + ki + ni) % D_COUNT;
                        check_case(ctx, (gpk_type)t, kind, ns[ni], d);
                        const size_t runs = (ns[ni] + cap - 1) / cap;
                        const size_t want = li == 0 ? 0 : li == 1 ? 2 : runs;
                        TU_CHECK(gpk__ooc_stats(ctx).runs == runs && gpk__ooc_stats(ctx).kept_runs == want,
                                 "ooc_resident %s, %zu runs: %zu kept, want %zu", limits[li],
                                 gpk__ooc_stats(ctx).runs, gpk__ooc_stats(ctx).kept_runs, want);
                    }
                }
        }
        gpk__test_set("ooc_resident", NULL);
    }

    /* failures midway: every transfer of a 5-run pairs sort in turn */
    {
        const size_t n = 5 * cap - 2, runs = 5;
        set_slot(cap, 8);
        /* runs: 2 transfers each; merge: up to runs + 1 per partition */
        long k = 1, faults = 0;
        while (check_fault(ctx, GPK_U32, n, runs, k, (int)(k % 2))) k++, faults++;
        TU_CHECK(faults > (long)(2 * runs) + 5, "%ld transfers failed in turn: both phases covered", faults);
        set_slot(cap, 12);
        for (k = 1; k <= 40; k += 3)
            if (!check_fault(ctx, GPK_F64, n, runs, k, 0)) break;
        /* the same with no run kept and with two kept */
        const char *limits[] = {"0", "2"};
        for (int li = 0; li < 2; li++) {
            gpk__test_set("ooc_resident", limits[li]);
            set_slot(cap, 8);
            for (k = 1; check_fault(ctx, GPK_U32, n, runs, k, (int)(k % 2)); k++) {}
            TU_CHECK(k > (long)(2 * runs) + 5, "ooc_resident %s: %ld transfers failed in turn", limits[li],
                     k - 1);
        }
        gpk__test_set("ooc_resident", NULL);
    }

    /* the extra buffer stays with the context (locked on CUDA; the
     * default, ooc_keep unset), grows, is reused, goes with gpk_ctx_trim */
    {
        gpk__test_set("ooc_keep", "1");
        set_slot(cap, 12);
        const size_t ns[] = {3 * cap + 1, 9 * cap + 2, 2 * cap + 7, 9 * cap + 2};
        for (int i = 0; i < 4; i++) {
            check_case(ctx, GPK_U64, 4, ns[i], D_UNIFORM);
            check_case(ctx, GPK_F32, 8, ns[i], D_SKEW90);
        }
        TU_CHECK(kept_states(ctx) == 1, "the out-of-core sort keeps its buffer on the context");
        gpk_ctx_trim(ctx);
        TU_CHECK(kept_states(ctx) == 0, "gpk_ctx_trim gives the kept buffer back");
        check_case(ctx, GPK_U64, 4, 5 * cap + 3, D_FEW);
        gpk__test_set("ooc_keep", "0"); /* a buffer for each call */
        check_case(ctx, GPK_U64, 4, 5 * cap + 3, D_FEW);
        TU_CHECK(kept_states(ctx) == 0, "ooc_keep 0 keeps no buffer");
        check_case(ctx, GPK_F64, 0, 4 * cap + 1, D_SKEW90);
        gpk__test_set("ooc_keep", NULL);
    }

    /* progress: rising, ending at 1 */
    {
        progress_log log = {0, 0, 0.0};
        gpk_ctx_set_progress(ctx, on_progress, &log);
        set_slot(cap, 4);
        check_case(ctx, GPK_U32, 0, 9 * cap + 5, D_UNIFORM);
        gpk_ctx_set_progress(ctx, NULL, NULL);
        TU_CHECK(log.calls >= 10 && log.backwards == 0 && log.last == 1.0,
                 "progress: %d calls, %d out of order, last %g", log.calls, log.backwards, log.last);
    }

    /* the caller's arrays page-locked with gpk_host_lock: on CUDA the sort
     * moves them directly (no staging), elsewhere the lock does nothing */
    {
        set_slot(cap, 8);
        const size_t n = 6 * cap + 5;
        uint32_t *k = malloc(n * 4), *v = malloc(n * 4), *rk = malloc(n * 4), *rv = malloc(n * 4);
        fill_keys(k, n, 4, D_UNIFORM);
        for (size_t i = 0; i < n; i++) v[i] = (uint32_t)i;
        memcpy(rk, k, n * 4);
        memcpy(rv, v, n * 4);
        gpk_status l1 = gpk_host_lock(ctx, k, n * 4), l2 = gpk_host_lock(ctx, v, n * 4);
        TU_CHECK(l1 == GPK_OK && l2 == GPK_OK, "gpk_host_lock: %s %s (%s)", gpk_status_string(l1),
                 gpk_status_string(l2), gpk_last_error(ctx));
        gpk_status s = gpk_sort_pairs(ctx, GPK_U32, k, GPK_U32, v, n, NULL);
        gpk_sort_reference(GPK_U32, rk, 4, rv, NULL, n, 0);
        TU_CHECK(s == GPK_OK && !memcmp(k, rk, n * 4) && !memcmp(v, rv, n * 4),
                 "locked arrays: %s, differ from the reference", gpk_status_string(s));
        TU_CHECK(gpk__ooc_stats(ctx).caller_pinned == (be == GPK_BACKEND_CUDA),
                 "locked arrays: caller_pinned %d on %s", gpk__ooc_stats(ctx).caller_pinned,
                 gpk_backend_name(be));
        TU_CHECK(gpk_host_unlock(ctx, k) == GPK_OK && gpk_host_unlock(ctx, v) == GPK_OK,
                 "gpk_host_unlock (%s)", gpk_last_error(ctx));
        /* unlocked again: staged as before */
        fill_keys(k, n, 4, D_FEW);
        s = gpk_sort_keys(ctx, GPK_U32, k, n, NULL);
        TU_CHECK(s == GPK_OK && gpk__ooc_stats(ctx).caller_pinned == 0,
                 "after gpk_host_unlock: %s, caller_pinned %d", gpk_status_string(s),
                 gpk__ooc_stats(ctx).caller_pinned);
        TU_CHECK(gpk_host_lock(ctx, NULL, 64) == GPK_EINVAL && gpk_host_lock(NULL, k, 64) == GPK_EINVAL &&
                     gpk_host_lock(ctx, k, 0) == GPK_OK,
                 "gpk_host_lock: bad arguments");
        free(k);
        free(v);
        free(rk);
        free(rv);
    }

    /* a budget too small to make progress: a clear error, nothing touched */
    {
        gpk__test_set("ooc_slot_bytes", NULL);
        uint32_t keys[1000], copy[1000], sigma[1000];
        for (int i = 0; i < 1000; i++) keys[i] = (uint32_t)rnd();
        memcpy(copy, keys, sizeof keys);
        gpk_ctx_set_device_budget(ctx, 100);
        gpk_status s = gpk_sort_perm(ctx, GPK_U32, keys, sigma, 1000, NULL);
        TU_CHECK(s == GPK_EINVAL && strstr(gpk_last_error(ctx), "too small"), "budget 100: %s (%s)",
                 gpk_status_string(s), gpk_last_error(ctx));
        TU_CHECK(memcmp(keys, copy, sizeof keys) == 0, "keys untouched after a budget too small");
        /* more than the host can hold beside the input: ENOMEM, nothing touched */
        gpk_ctx_set_device_budget(ctx, (size_t)1 << 30);
        s = gpk_sort_keys(ctx, GPK_U32, keys, (size_t)1 << 40, NULL);
        TU_CHECK(s == GPK_ENOMEM && strstr(gpk_last_error(ctx), "host memory"),
                 "2^40 keys out of core: %s (%s)", gpk_status_string(s), gpk_last_error(ctx));
        TU_CHECK(memcmp(keys, copy, sizeof keys) == 0, "keys untouched after ENOMEM");
        /* without the force hook a budget that fits sorts in memory */
        gpk__test_set("ooc_force", NULL);
        gpk_ctx_set_device_budget(ctx, (size_t)1 << 30);
        s = gpk_sort_keys(ctx, GPK_U32, keys, 1000, NULL);
        TU_CHECK(s == GPK_OK && strcmp(gpk_last_sort_path(ctx), "radix-out-of-core") != 0,
                 "a budget that fits: in memory (%s)", gpk_last_sort_path(ctx));
        /* and one that does not, out of core without the hook */
        gpk_ctx_set_device_budget(ctx, be == GPK_BACKEND_CUDA ? (size_t)32 << 20 : 4000);
        uint32_t *big = malloc(((size_t)1 << 23) * 4), *ref = malloc(((size_t)1 << 23) * 4);
        const size_t nb = be == GPK_BACKEND_CUDA ? (size_t)1 << 23 : 1000;
        for (size_t i = 0; i < nb; i++) big[i] = ref[i] = (uint32_t)rnd();
        s = gpk_sort_keys(ctx, GPK_U32, big, nb, NULL);
        gpk_sort_reference(GPK_U32, ref, 0, NULL, NULL, nb, 0);
        TU_CHECK(s == GPK_OK && !strcmp(gpk_last_sort_path(ctx), "radix-out-of-core") &&
                     !memcmp(big, ref, nb * 4),
                 "a budget that does not fit: out of core (%s, %s)", gpk_status_string(s),
                 gpk_last_sort_path(ctx));
        free(big);
        free(ref);
        gpk_ctx_set_device_budget(ctx, 0);
    }

    /* GPK_DEVICE_BUDGET at context creation */
    {
        gpk_ctx *c2 = NULL;
        setenv("GPK_DEVICE_BUDGET", "12x", 1);
        gpk_status s = gpk_ctx_create(&c2, be);
        TU_CHECK(s == GPK_EINVAL && strstr(gpk_last_error(NULL), "GPK_DEVICE_BUDGET"),
                 "GPK_DEVICE_BUDGET=12x: %s", gpk_last_error(NULL));
        if (s == GPK_OK) gpk_ctx_destroy(c2);
        setenv("GPK_DEVICE_BUDGET", "3M", 1);
        s = gpk_ctx_create(&c2, be);
        TU_CHECK(s == GPK_OK && c2->device_budget == (size_t)3 << 20, "GPK_DEVICE_BUDGET=3M: %s",
                 gpk_last_error(NULL));
        if (s == GPK_OK) gpk_ctx_destroy(c2);
        unsetenv("GPK_DEVICE_BUDGET");
    }

    gpk_ctx_destroy(ctx);
    return tu_finish("test_ooc");
}
