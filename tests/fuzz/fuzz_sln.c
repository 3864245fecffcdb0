/* libFuzzer target of the QAPLIB .sln reader (gpk_qap_load_solution): any
 * input must either give a permutation of 0..n-1 with its cost or fail
 * with a status, without crashes, leaks or undefined behaviour (built with
 * -fsanitize=fuzzer,address,undefined; see run.sh). */
#include "fuzz_memfile.h"
#include "gpk/search.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_memfile(data, size);
    if (!path) abort();
    uint32_t n = 0, *p = NULL;
    int64_t cost = 0;
    if (gpk_qap_load_solution(path, &n, &cost, &p) != GPK_OK) return 0;
    /* The promise: each of 0..n-1 exactly once. */
    unsigned char *seen = calloc(n ? n : 1, 1);
    if (!seen) abort();
    for (uint32_t i = 0; i < n; i++) {
        if (p[i] >= n || seen[p[i]]) abort();
        seen[p[i]] = 1;
    }
    free(seen);
    free(p);
    return 0;
}
