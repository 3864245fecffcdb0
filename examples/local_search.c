/* Example (local search family): a random Euclidean TSP instance written in
 * TSPLIB format, parsed, and solved by iterated tabu search in the 2-opt
 * neighbourhood. Checks that the result is a tour of that length.
 *   usage: local_search [CITIES] [SEED] */
#include <gpk/gpk.h>
#include <gpk/search.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 100;
    unsigned seed = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : (unsigned)time(NULL);
    printf("local_search: %u cities, seed %u\n", n, seed);
    size_t cap = 128 + (size_t)n * 40, len = 0;
    char *text = malloc(cap);
    if (!text) return 1;
    srand(seed);
    len += (size_t)snprintf(text + len, cap - len,
                            "NAME: random%u\nTYPE: TSP\nDIMENSION: %u\n"
                            "EDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n",
                            n, n);
    for (unsigned i = 1; i <= n; i++)
        len += (size_t)snprintf(text + len, cap - len, "%u %d %d\n", i, rand() % 1000, rand() % 1000);
    len += (size_t)snprintf(text + len, cap - len, "EOF\n");

    gpk_tsp tsp;
    if (gpk_tsp_parse(text, len, "random", &tsp) != GPK_OK) {
        fprintf(stderr, "local_search: %s\n", gpk_last_error(NULL));
        return 1;
    }
    gpk_ctx *ctx;
    if (gpk_ctx_create(&ctx, GPK_BACKEND_AUTO) != GPK_OK) { /* the GPU evaluates the moves when present */
        fprintf(stderr, "local_search: %s\n", gpk_last_error(NULL));
        return 1;
    }
    gpk_search_problem pb = {GPK_PROBLEM_TSP, NULL, &tsp, NULL};
    gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
    o.algo = GPK_SEARCH_ITS;
    o.nb = GPK_NB_TWO_OPT;
    o.iters = 200;
    o.global_iters = 5;
    o.seed = seed;
    gpk_search_result r;
    if (gpk_search_run(ctx, &pb, &o, &r) != GPK_OK) {
        fprintf(stderr, "local_search: %s\n", gpk_last_error(ctx));
        return 1;
    }
    /* a permutation of the cities whose length is the one reported */
    unsigned char *seen = calloc(n ? n : 1, 1);
    int ok = seen && r.n == n;
    for (unsigned i = 0; ok && i < n; i++) ok = r.solution[i] < n && !seen[r.solution[i]]++;
    ok = ok && gpk_tsp_tour_length(&tsp, r.solution) == r.best;
    printf("local_search: tour length %lld after %llu iterations, %llu moves evaluated, %.1f ms on %s: %s\n",
           (long long)r.best, (unsigned long long)r.iterations, (unsigned long long)r.evaluated, r.ms,
           gpk_backend_name(gpk_ctx_backend(ctx)), ok ? "a valid tour" : "INVALID");
    free(seen);
    gpk_search_result_free(&r);
    gpk_ctx_destroy(ctx);
    gpk_tsp_free(&tsp);
    free(text);
    return ok ? 0 : 1;
}
