/* Example (sort family): sort float keys with their permutation, then
 * move a second array by that permutation. Checks the result against the
 * plain reference sort, so it doubles as a test.
 *   usage: sort_keys [N] [SEED] */
#include <gpk/gen.h>
#include <gpk/gpk.h>
#include <gpk/sort.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : (uint64_t)time(NULL);
    printf("sort_keys: n = %zu, seed %llu\n", n, (unsigned long long)seed);
    float *keys = malloc((n ? n : 1) * sizeof *keys), *ref = malloc((n ? n : 1) * sizeof *ref);
    uint32_t *sigma = malloc((n ? n : 1) * sizeof *sigma),
             *ref_sigma = malloc((n ? n : 1) * sizeof *ref_sigma);
    if (!keys || !ref || !sigma || !ref_sigma) return 1;
    gpk_generate(GPK_F32, GPK_DIST_FLOAT_SPECIALS, keys, n, seed, 0); /* NaNs, infinities, -0.0 */
    memcpy(ref, keys, n * sizeof *keys);

    gpk_ctx *ctx;
    if (gpk_ctx_create(&ctx, GPK_BACKEND_AUTO) != GPK_OK) { /* CUDA if usable, else CPU */
        fprintf(stderr, "sort_keys: %s\n", gpk_last_error(NULL));
        return 1;
    }
    gpk_sort_opts o = GPK_SORT_OPTS_INIT;
    o.algorithm = GPK_SORT_RADIX; /* stable: sigma is unique */
    gpk_status s = gpk_sort_perm(ctx, GPK_F32, keys, sigma, n, &o);
    if (s != GPK_OK) {
        fprintf(stderr, "sort_keys: %s\n", gpk_last_error(ctx));
        return 1;
    }
    printf("sort_keys: sorted on %s with %s\n", gpk_backend_name(gpk_ctx_backend(ctx)),
           gpk_sort_algo_name(gpk_last_sort_algo(ctx)));
    gpk_ctx_destroy(ctx);

    gpk_sort_reference(GPK_F32, ref, 0, NULL, ref_sigma, n, 0);
    int ok = memcmp(keys, ref, n * sizeof *keys) == 0 && memcmp(sigma, ref_sigma, n * sizeof *sigma) == 0;
    printf("sort_keys: %s\n", ok ? "same keys and permutation as the reference" : "MISMATCH");
    free(keys);
    free(ref);
    free(sigma);
    free(ref_sigma);
    return ok ? 0 : 1;
}
