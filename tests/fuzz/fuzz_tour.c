/* libFuzzer target of the TSPLIB .tour reader (gpk_tsp_load_tour): any
 * input must either give a tour (each city of 0..n-1 once) or fail with a
 * status, without crashes, leaks or undefined behaviour (built with
 * -fsanitize=fuzzer,address,undefined; see run.sh). */
#include "fuzz_memfile.h"
#include "gpk/search.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_memfile(data, size);
    if (!path) abort();
    uint32_t n = 0, *tour = NULL;
    if (gpk_tsp_load_tour(path, &n, &tour) != GPK_OK) return 0;
    unsigned char *seen = calloc(n ? n : 1, 1);
    if (!seen) abort();
    for (uint32_t i = 0; i < n; i++) {
        if (tour[i] >= n || seen[tour[i]]) abort();
        seen[tour[i]] = 1;
    }
    free(seen);
    free(tour);
    return 0;
}
