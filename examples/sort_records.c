/* Example (sort family): sort an array of structs by one member with
 * gpk_sort_records, without building keys or a permutation. The radix sort
 * keeps particles of the same cell in their input order; checked here.
 *   usage: sort_records [N] [SEED] */
#include <gpk/gpk.h>
#include <gpk/sort.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct particle {
    float x, y, vx, vy;
    uint32_t id;  /* input position, to see the order of equal keys */
    int32_t cell; /* the key */
} particle;

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    unsigned seed = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : (unsigned)time(NULL);
    printf("sort_records: n = %zu, seed %u\n", n, seed);
    particle *p = malloc((n ? n : 1) * sizeof *p);
    if (!p) return 1;
    srand(seed);
    for (size_t i = 0; i < n; i++) {
        p[i].x = (float)rand() / (float)RAND_MAX;
        p[i].y = (float)rand() / (float)RAND_MAX;
        p[i].vx = p[i].vy = 0.0f;
        p[i].id = (uint32_t)i;
        p[i].cell = rand() % 1024 - 512; /* many particles per cell, negative cells too */
    }
    gpk_ctx *ctx;
    if (gpk_ctx_create(&ctx, GPK_BACKEND_AUTO) != GPK_OK) {
        fprintf(stderr, "sort_records: %s\n", gpk_last_error(NULL));
        return 1;
    }
    gpk_sort_opts o = GPK_SORT_OPTS_INIT;
    o.algorithm = GPK_SORT_RADIX;
    if (gpk_sort_records(ctx, p, n, sizeof *p, offsetof(particle, cell), GPK_I32, &o) != GPK_OK) {
        fprintf(stderr, "sort_records: %s\n", gpk_last_error(ctx));
        return 1;
    }
    printf("sort_records: sorted on %s\n", gpk_backend_name(gpk_ctx_backend(ctx)));
    gpk_ctx_destroy(ctx);
    int ok = 1;
    for (size_t i = 1; i < n && ok; i++)
        ok = p[i - 1].cell < p[i].cell || (p[i - 1].cell == p[i].cell && p[i - 1].id < p[i].id);
    printf("sort_records: %s\n", ok ? "cells ascending, equal cells in input order" : "NOT SORTED");
    free(p);
    return ok ? 0 : 1;
}
