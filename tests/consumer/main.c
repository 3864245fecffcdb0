/* A tiny program built against the installed gpk, as a user would. */
#include <gpk/gpk.h>
#include <gpk/sort.h>
#include <stdio.h>

int main(void)
{
    gpk_ctx *ctx;
    if (gpk_ctx_create(&ctx, GPK_BACKEND_CPU) != GPK_OK) {
        fprintf(stderr, "ctx: %s\n", gpk_last_error(NULL));
        return 1;
    }
    unsigned keys[6] = {5, 1, 4, 1, 3, 0};
    unsigned sigma[6];
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    o.key_bits = 3;
    gpk_status s = gpk_sort_perm(ctx, GPK_U32, keys, sigma, 6, &o);
    gpk_ctx_destroy(ctx);
    if (s != GPK_OK) return 1;
    for (int i = 1; i < 6; i++)
        if (keys[i - 1] > keys[i]) return 1;
    printf("gpk %s consumer ok: %u %u %u %u %u %u (sigma[0]=%u)\n", gpk_version(), keys[0], keys[1],
           keys[2], keys[3], keys[4], keys[5], sigma[0]);
    return sigma[0] == 5 ? 0 : 1;
}
