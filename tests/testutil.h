/* Small helpers shared by the test programs: checks that count, a seed that
 * is fresh per run but printed (and can be replayed with GPK_TEST_SEED). */
#ifndef GPK_TESTUTIL_H
#define GPK_TESTUTIL_H

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpk/gpk.h"

static int tu_failures, tu_checks;

#define TU_CHECK(cond, ...)                                          \
    do {                                                             \
        tu_checks++;                                                 \
        if (!(cond)) {                                               \
            tu_failures++;                                           \
            if (tu_failures <= 30) {                                 \
                fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
                fprintf(stderr, __VA_ARGS__);                        \
                fprintf(stderr, "\n");                               \
            }                                                        \
        }                                                            \
    } while (0)

/* The index of the first of n elements of w bytes where a and b differ; n
 * when they are equal. */
static inline size_t tu_first_difference(const void *a, const void *b, size_t n, size_t w)
{
    const char *x = (const char *)a, *y = (const char *)b;
    if (n == 0 || !memcmp(x, y, n * w)) return n;
    size_t i = 0;
    while (!memcmp(x + i * w, y + i * w, w)) i++;
    return i;
}

static uint64_t tu_seed(void)
{
    const char *env = getenv("GPK_TEST_SEED");
    uint64_t seed =
        env && *env ? strtoull(env, NULL, 0) : ((uint64_t)time(NULL) * 2654435761u) ^ (uint64_t)clock();
    printf("seed %" PRIu64 " (replay with GPK_TEST_SEED=%" PRIu64 ")\n", seed, seed);
    return seed;
}

/* Skip code understood by ctest (SKIP_RETURN_CODE 77). */
#define TU_SKIP 77

/* The context of the backend named by argv[1] ("cpu", "cuda", "opencl")
 * for a test program `prog`. Returns -1 with *ctx and *backend set, or the
 * exit status the program should end with: 2 for bad usage, TU_SKIP when
 * the backend is unusable here, 1 when it is unusable but
 * GPK_REQUIRE_<BACKEND>=1 says it must run. Prints the device. */
static int tu_open_backend(const char *prog, int argc, char **argv, gpk_ctx **ctx, gpk_backend *backend)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s cpu|cuda|opencl\n", prog);
        return 2;
    }
    if (gpk_backend_parse(argv[1], backend) != GPK_OK || *backend == GPK_BACKEND_AUTO) {
        fprintf(stderr, "unknown backend %s\n", argv[1]);
        return 2;
    }
    char req[64];
    snprintf(req, sizeof req, "GPK_REQUIRE_%s", argv[1]);
    for (char *c = req; *c; c++) *c = (char)toupper((unsigned char)*c);
    const char *required = getenv(req);
    if (gpk_ctx_create(ctx, *backend) != GPK_OK) {
        printf("backend %s unavailable: %s\n", argv[1], gpk_last_error(NULL));
        if (required && *required == '1') {
            printf("but %s=1: failing\n", req);
            return 1;
        }
        printf("skipped\n");
        return TU_SKIP;
    }
    gpk_ctx_info info;
    gpk_ctx_info_get(*ctx, &info);
    printf("backend %s: %s / %s, %u compute units, %u threads\n", argv[1], info.device_name, info.platform,
           info.compute_units, info.threads);
    return -1;
}

static int tu_finish(const char *name)
{
    printf("%s: %d checks, %d passed, %d failed\n", name, tu_checks, tu_checks - tu_failures, tu_failures);
    return tu_failures ? 1 : 0;
}

#endif
