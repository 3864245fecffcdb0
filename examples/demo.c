/* make demo: a short showcase on the best backend present (CUDA, else the
 * CPU; GPK_BACKEND overrides). Sorts a few typical inputs, times them and
 * checks each result against the reference sort. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <gpk/gen.h>
#include <gpk/gpk.h>
#include <gpk/sort.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct {
    const char *what;
    gpk_type type;
    gpk_dist dist;
    unsigned gen_bits, key_bits, radix_bits;
    int with_perm;
} demo_case;

static int run(gpk_ctx *ctx, const demo_case *c, size_t n)
{
    size_t w = gpk_type_size(c->type);
    char *keys = malloc(n * w), *want = malloc(n * w);
    uint32_t *sigma = malloc(n * sizeof *sigma), *want_sigma = malloc(n * sizeof *want_sigma);
    int ok = 0;
    if (!keys || !want || !sigma || !want_sigma) {
        fprintf(stderr, "demo: out of memory\n");
        goto out;
    }
    gpk_generate(c->type, c->dist, keys, n, 2011, c->gen_bits);
    memcpy(want, keys, n * w);
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    o.key_bits = c->key_bits;
    o.radix_bits = c->radix_bits;
    /* The first call on a GPU includes start-up costs: warm up on a copy. */
    gpk_sort_keys(ctx, c->type, want, n < 4096 ? n : 4096, &o);
    memcpy(want, keys, n * w);

    double t0 = seconds();
    gpk_status s = c->with_perm ? gpk_sort_perm(ctx, c->type, keys, sigma, n, &o)
                                : gpk_sort_keys(ctx, c->type, keys, n, &o);
    double t1 = seconds();
    if (s != GPK_OK) {
        fprintf(stderr, "demo: %s: %s\n", c->what, gpk_last_error(ctx));
        goto out;
    }
    gpk_sort_reference(c->type, want, 0, NULL, c->with_perm ? want_sigma : NULL, n, c->key_bits);
    ok = memcmp(keys, want, n * w) == 0 &&
        (!c->with_perm || memcmp(sigma, want_sigma, n * sizeof *sigma) == 0);
    printf("  %-34s %4s  n = %9zu  %8.2f ms  %8.1f Mkeys/s  %s\n", c->what, gpk_type_name(c->type), n,
           (t1 - t0) * 1e3, (double)n / (t1 - t0) / 1e6, ok ? "correct" : "WRONG");
out:
    free(keys);
    free(want);
    free(sigma);
    free(want_sigma);
    return ok;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : (size_t)1 << 24;
    gpk_ctx *ctx;
    if (gpk_ctx_create(&ctx, GPK_BACKEND_AUTO) != GPK_OK) {
        fprintf(stderr, "demo: %s\n", gpk_last_error(NULL));
        return 1;
    }
    gpk_ctx_info info;
    gpk_ctx_info_get(ctx, &info);
    printf("gpk %s demo\nbackend: %s on %s (%s), %u compute units, %.1f GiB\n", gpk_version(),
           gpk_backend_name(info.backend), info.device_name, info.platform, info.compute_units,
           (double)info.memory_bytes / (1024.0 * 1024.0 * 1024.0));
    printf("host-array sorts (times include any host<->device copies):\n");
    const demo_case cases[] = {
        {"uniform keys", GPK_U32, GPK_DIST_UNIFORM, 0, 0, 0, 0},
        {"PIC cell keys, b=10 r=5, with sigma", GPK_U32, GPK_DIST_FEW_BITS, 10, 10, 5, 1},
        {"PIC cell keys, b=30 r=5, with sigma", GPK_U32, GPK_DIST_FEW_BITS, 10, 30, 5, 1},
        {"uniform keys", GPK_U64, GPK_DIST_UNIFORM, 0, 0, 0, 0},
        {"floats with NaN, +-0, +-inf", GPK_F64, GPK_DIST_FLOAT_SPECIALS, 0, 0, 0, 1},
    };
    int all = 1;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) all &= run(ctx, &cases[i], n);
    gpk_ctx_destroy(ctx);
    printf("%s\n", all ? "all results correct" : "SOME RESULTS WRONG");
    return all ? 0 : 1;
}
