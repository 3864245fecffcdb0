/* Small helpers shared by the test programs: checks that count, a seed that
 * is fresh per run but printed (and can be replayed with GPK_TEST_SEED). */
#ifndef GPK_TESTUTIL_H
#define GPK_TESTUTIL_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int tu_failures, tu_checks;

#define TU_CHECK(cond, ...)                                                   \
    do {                                                                      \
        tu_checks++;                                                          \
        if (!(cond)) {                                                        \
            tu_failures++;                                                    \
            if (tu_failures <= 30) {                                          \
                fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);          \
                fprintf(stderr, __VA_ARGS__);                                 \
                fprintf(stderr, "\n");                                        \
            }                                                                 \
        }                                                                     \
    } while (0)

static uint64_t tu_seed(void)
{
    const char *env = getenv("GPK_TEST_SEED");
    uint64_t seed = env && *env ? strtoull(env, NULL, 0)
                                : ((uint64_t)time(NULL) * 2654435761u) ^ (uint64_t)clock();
    printf("seed %" PRIu64 " (replay with GPK_TEST_SEED=%" PRIu64 ")\n", seed, seed);
    return seed;
}

/* Skip code understood by ctest (SKIP_RETURN_CODE 77). */
#define TU_SKIP 77

static int tu_finish(const char *name)
{
    printf("%s: %d checks, %d passed, %d failed\n", name, tu_checks, tu_checks - tu_failures,
           tu_failures);
    return tu_failures ? 1 : 0;
}

#endif
