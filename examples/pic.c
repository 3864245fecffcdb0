/* Particle-in-cell sorting (Helluy 2011, Section 4.2 and Table 7) with gpk.
 *
 * N particles live in the periodic unit square [0,1) x [0,1), on a 32 x 32
 * grid of step h = 1/32. The particle at (x, y) is in cell k = 32 i + j with
 * i = floor(x / h), j = floor(y / h), so 0 <= k < 1024 = 2^10: two radix
 * passes of r = 5 bits sort the keys, where a 30-bit key needs six.
 *
 *  1. x, y, u, v come from four van der Corput sequences (bases 2, 3, 5, 7;
 *     index 1..N). Velocities stay in [0, 1), as in the paper: each step a
 *     particle moves by less than one cell, right and/or up.
 *  2. First sort: keys with their permutation sigma; x, y, u, v are
 *     reordered by sigma, as a PIC code keeps its particles cell-ordered.
 *  3. Move: x' = x + u/32 mod 1, y' = y + v/32 mod 1; recompute the keys.
 *     The list is now "weakly disordered": particles stay in their cell or
 *     step into a neighbouring one.
 *  4. Second sort, timed (median of reps) twice from the same keys:
 *     p = 2 passes (key_bits 10, radix_bits 5) and p = 6 (key_bits 30,
 *     radix_bits 5). Both must give the same sigma.
 *  5. Apply sigma to the particles and check that every particle lies in
 *     the cell its key names and that the keys are sorted.
 *
 * The times are those of gpk_sort_perm on host arrays, so on a GPU they
 * include the transfers, which then dominate. `gpk pic` adds device-resident
 * times of the same sorts (pic_opts.device_timer) on GPU backends.
 *
 * Usage: pic [--n N] [--backend auto|cpu|cuda|opencl] [--reps R]
 */
#include "pic.h"

#include <gpk/sort.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PIC_GRID 32u /* cells per side: h = 1/32 */

/* Radical inverse of i in the given base: the van der Corput sequence. */
static double van_der_corput(uint64_t i, unsigned base)
{
    const double inv = 1.0 / base;
    double f = inv, r = 0.0;
    while (i) {
        r += f * (double)(i % base);
        i /= base;
        f *= inv;
    }
    return r < 1.0 ? r : 0x1.fffffffffffffp-1; /* rounding must not reach 1 */
}

static uint32_t cell_of(double x, double y)
{
    /* x, y in [0, 1): x * 32 is exact, so i, j are in 0..31. */
    uint32_t i = (uint32_t)(x * PIC_GRID), j = (uint32_t)(y * PIC_GRID);
    return PIC_GRID * i + j;
}

/* x + d mod 1 for x in [0, 1), d in [0, 1/32). */
static double wrap(double x) { return x >= 1.0 ? x - 1.0 : x; }

static double now_ms(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* out[j] = in[sigma[j]] for each particle array, through one scratch array. */
static void apply_perm(double **arrays, int count, double *scratch, const uint32_t *sigma, size_t n)
{
    for (int a = 0; a < count; a++) {
        double *in = arrays[a];
        for (size_t j = 0; j < n; j++) scratch[j] = in[sigma[j]];
        memcpy(in, scratch, n * sizeof *in);
    }
}

/* Times gpk_sort_perm on a fresh copy of keys `reps` times; leaves the last
 * sorted keys in `work` and its permutation in `sigma`. */
static gpk_status timed_sort(gpk_ctx *ctx, const uint32_t *keys, uint32_t *work, uint32_t *sigma, size_t n,
                             unsigned key_bits, int reps, double *times, double *ms)
{
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    o.key_bits = key_bits;
    o.radix_bits = 5;
    for (int r = 0; r < reps; r++) {
        memcpy(work, keys, n * sizeof *keys);
        double t0 = now_ms();
        gpk_status s = gpk_sort_perm(ctx, GPK_U32, work, sigma, n, &o);
        times[r] = now_ms() - t0;
        if (s != GPK_OK) return s;
    }
    qsort(times, (size_t)reps, sizeof *times, cmp_double);
    *ms = reps % 2 ? times[reps / 2] : 0.5 * (times[reps / 2 - 1] + times[reps / 2]);
    return GPK_OK;
}

int pic_run(const pic_opts *opts, pic_result *r)
{
    pic_opts o = PIC_OPTS_INIT;
    if (opts) o = *opts;
    memset(r, 0, sizeof *r);
    r->n = o.n;
    if (o.reps < 1) o.reps = 1;
    if (o.n > UINT32_MAX) {
        snprintf(r->msg, sizeof r->msg, "n = %zu: the permutation is u32, so n <= %u", o.n, UINT32_MAX);
        return 2;
    }
    size_t n = o.n;
    int rc = 2;
    gpk_ctx *ctx = NULL;
    gpk_ctx_opts co = GPK_CTX_OPTS_INIT;
    co.backend = o.backend;
    co.device = o.device;
    co.threads = o.threads;
    gpk_status s = gpk_ctx_create_ex(&ctx, &co);
    if (s != GPK_OK) {
        /* GPK_BACKEND replaces auto: name what was asked for */
        const char *env = getenv("GPK_BACKEND");
        const int from_env = o.backend == GPK_BACKEND_AUTO && env && *env;
        snprintf(r->msg, sizeof r->msg, "cannot create a %s context: %s",
                 from_env ? env : gpk_backend_name(o.backend), gpk_last_error(NULL));
        return 2;
    }
    gpk_ctx_info_get(ctx, &r->info);

    size_t nb = n ? n : 1; /* malloc(0) may return NULL */
    double *x = malloc(nb * sizeof *x), *y = malloc(nb * sizeof *y);
    double *u = malloc(nb * sizeof *u), *v = malloc(nb * sizeof *v);
    double *scratch = malloc(nb * sizeof *scratch);
    uint32_t *keys = malloc(nb * sizeof *keys), *work = malloc(nb * sizeof *work);
    uint32_t *sigma = malloc(nb * sizeof *sigma), *sigma6 = malloc(nb * sizeof *sigma6);
    uint32_t *dwork = NULL, *dsigma = NULL; /* for o.device_timer */
    unsigned char *seen = calloc(nb, 1);
    double *times = malloc((size_t)o.reps * sizeof *times);
    if (!x || !y || !u || !v || !scratch || !keys || !work || !sigma || !sigma6 || !seen || !times) {
        snprintf(r->msg, sizeof r->msg, "out of host memory for %zu particles", n);
        goto done;
    }

    /* 1. Particles from four van der Corput sequences. */
    for (size_t p = 0; p < n; p++) {
        x[p] = van_der_corput(p + 1, 2);
        y[p] = van_der_corput(p + 1, 3);
        u[p] = van_der_corput(p + 1, 5);
        v[p] = van_der_corput(p + 1, 7);
        keys[p] = cell_of(x[p], y[p]);
    }

    /* 2. First sort (untimed; it also warms the backend up with r = 5). */
    gpk_radix_opts first = GPK_RADIX_OPTS_INIT;
    first.key_bits = 10;
    first.radix_bits = 5;
    s = gpk_sort_perm(ctx, GPK_U32, keys, sigma, n, &first);
    if (s != GPK_OK) {
        snprintf(r->msg, sizeof r->msg, "first sort: %s", gpk_last_error(ctx));
        goto done;
    }
    double *particles[4] = {x, y, u, v};
    apply_perm(particles, 4, scratch, sigma, n);

    /* 3. Move by less than one cell and recompute the keys. */
    size_t moved = 0, unsorted = 0;
    for (size_t p = 0; p < n; p++) {
        x[p] = wrap(x[p] + u[p] / PIC_GRID);
        y[p] = wrap(y[p] + v[p] / PIC_GRID);
        uint32_t k = cell_of(x[p], y[p]);
        moved += k != keys[p];
        keys[p] = k;
        if (p > 0) unsorted += keys[p - 1] > k;
    }
    r->moved = n ? (double)moved / (double)n : 0.0;
    r->unsorted = n > 1 ? (double)unsorted / (double)(n - 1) : 0.0;

    /* 4. The timed second sort: p = 6 first, then p = 2, same input. */
    s = timed_sort(ctx, keys, work, sigma6, n, 30, o.reps, times, &r->ms_p6);
    if (s == GPK_OK) s = timed_sort(ctx, keys, work, sigma, n, 10, o.reps, times, &r->ms_p2);
    if (s != GPK_OK) {
        snprintf(r->msg, sizeof r->msg, "second sort: %s", gpk_last_error(ctx));
        goto done;
    }
    r->speedup = r->ms_p2 > 0 ? r->ms_p6 / r->ms_p2 : 0.0;

    /* Optional device-resident timing of the same two sorts, into their own
     * buffers; both must agree with the host-API results. */
    if (o.device_timer && n >= 2) {
        dwork = malloc(n * sizeof *dwork);
        dsigma = malloc(n * sizeof *dsigma);
        if (!dwork || !dsigma) {
            snprintf(r->msg, sizeof r->msg, "out of host memory for %zu particles", n);
            goto done;
        }
        s = o.device_timer(ctx, keys, dwork, dsigma, n, 30, 5, o.reps, &r->dev_ms_p6);
        if (s == GPK_OK && memcmp(dsigma, sigma6, n * sizeof *dsigma) != 0) {
            snprintf(r->msg, sizeof r->msg, "the device-resident p = 6 sort disagrees with the host one");
            rc = 1;
            goto done;
        }
        if (s == GPK_OK) s = o.device_timer(ctx, keys, dwork, dsigma, n, 10, 5, o.reps, &r->dev_ms_p2);
        if (s == GPK_OK &&
            (memcmp(dsigma, sigma, n * sizeof *dsigma) != 0 || memcmp(dwork, work, n * sizeof *dwork) != 0)) {
            snprintf(r->msg, sizeof r->msg, "the device-resident p = 2 sort disagrees with the host one");
            rc = 1;
            goto done;
        }
        if (s == GPK_OK) {
            r->have_dev = 1;
            r->dev_speedup = r->dev_ms_p2 > 0 ? r->dev_ms_p6 / r->dev_ms_p2 : 0.0;
        } else if (s != GPK_EUNSUPPORTED) {
            snprintf(r->msg, sizeof r->msg, "device-resident sort: %s", gpk_last_error(ctx));
            goto done;
        }
    }

    /* 5. Checks: both pass counts agree (the sort is stable, so sigma is
     * unique); sigma is a permutation; keys are sorted; after reordering,
     * every particle is in the cell its key names. */
    rc = 1;
    if (n && memcmp(sigma, sigma6, n * sizeof *sigma) != 0) {
        snprintf(r->msg, sizeof r->msg, "p = 2 and p = 6 sorts gave different permutations");
        goto done;
    }
    for (size_t j = 0; j < n; j++) {
        if (sigma[j] >= n || seen[sigma[j]]) {
            snprintf(r->msg, sizeof r->msg, "sigma is not a permutation (sigma[%zu] = %u)", j, sigma[j]);
            goto done;
        }
        seen[sigma[j]] = 1;
        if (work[j] != keys[sigma[j]]) {
            snprintf(r->msg, sizeof r->msg, "sorted key %zu is not keys[sigma[%zu]]", j, j);
            goto done;
        }
        if (j > 0 && work[j - 1] > work[j]) {
            snprintf(r->msg, sizeof r->msg, "keys not sorted at %zu: %u > %u", j, work[j - 1], work[j]);
            goto done;
        }
    }
    apply_perm(particles, 4, scratch, sigma, n);
    for (size_t j = 0; j < n; j++)
        if (cell_of(x[j], y[j]) != work[j]) {
            snprintf(r->msg, sizeof r->msg,
                     "particle %zu at (%g, %g) is in cell %u, its key "
                     "says %u",
                     j, x[j], y[j], cell_of(x[j], y[j]), work[j]);
            goto done;
        }
    rc = 0;

done:
    free(x);
    free(y);
    free(u);
    free(v);
    free(scratch);
    free(keys);
    free(work);
    free(sigma);
    free(sigma6);
    free(seen);
    free(times);
    free(dwork);
    free(dsigma);
    gpk_ctx_destroy(ctx);
    return rc;
}

#ifndef GPK_PIC_NO_MAIN

static void pic_usage(FILE *f)
{
    fprintf(f,
            "usage: pic [--n N] [--backend auto|cpu|cuda|opencl] [--reps R]\n"
            "  --n N        particles (default 8M = 8388608; suffixes k, M, G = 2^10, 2^20, 2^30)\n"
            "  --backend B  gpk backend (default auto: CUDA when present, else CPU)\n"
            "  --reps R     timed repetitions of each second sort, median kept (default 5)\n");
}

/* N with an optional binary suffix: 1048576, 1024k, 8M. */
static int parse_count(const char *s, size_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || *s == '-') return -1;
    unsigned shift = *end == 'k' || *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
    if (shift) end++;
    if (*end || v > (SIZE_MAX >> shift)) return -1;
    *out = (size_t)v << shift;
    return 0;
}

int main(int argc, char **argv)
{
    pic_opts o = PIC_OPTS_INIT;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            pic_usage(stdout);
            return 0;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "pic: unknown option or missing value: %s\n", a);
            pic_usage(stderr);
            return 2;
        }
        const char *val = argv[++i];
        if (strcmp(a, "--n") == 0) {
            if (parse_count(val, &o.n) != 0) {
                fprintf(stderr, "pic: bad --n '%s'\n", val);
                return 2;
            }
        } else if (strcmp(a, "--backend") == 0) {
            if (gpk_backend_parse(val, &o.backend) != GPK_OK) {
                fprintf(stderr, "pic: unknown backend '%s'\n", val);
                return 2;
            }
        } else if (strcmp(a, "--reps") == 0) {
            o.reps = atoi(val);
            if (o.reps < 1) {
                fprintf(stderr, "pic: bad --reps '%s'\n", val);
                return 2;
            }
        } else {
            fprintf(stderr, "pic: unknown option %s\n", a);
            pic_usage(stderr);
            return 2;
        }
    }

    pic_result r;
    int rc = pic_run(&o, &r);
    if (rc == 2) {
        fprintf(stderr, "pic: %s\n", r.msg);
        return 1;
    }
    printf("pic: backend %s (%s), N = %zu particles, 32x32 cells\n", gpk_backend_name(r.info.backend),
           r.info.device_name, r.n);
    printf("pic: after the move %.1f%% of particles changed cell, %.2f%% of neighbours out of order\n",
           100.0 * r.moved, 100.0 * r.unsorted);
    printf("pic: second sort with permutation: p = 6 (b = 30, r = 5): %.3f ms, "
           "p = 2 (b = 10, r = 5): %.3f ms, speedup %.2fx\n",
           r.ms_p6, r.ms_p2, r.speedup);
    if (rc != 0) {
        fprintf(stderr, "pic: check FAILED: %s\n", r.msg);
        return 1;
    }
    printf("pic: check ok: keys sorted, every particle in the cell its key names\n");
    return 0;
}

#endif
