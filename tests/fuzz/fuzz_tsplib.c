/* libFuzzer target of the TSPLIB95 reader: any input must either parse into
 * a consistent instance or fail with a status, without crashes, leaks or
 * undefined behaviour (built with -fsanitize=fuzzer,address,undefined; see
 * run.sh). */
#include "gpk/search.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gpk_tsp t;
    if (gpk_tsp_parse((const char *)data, size, "fuzz", &t) != GPK_OK) return 0;
    /* Touch every distance a tour uses (matrix or coordinates) and the
     * deltas, including the wrap-around pair, while n keeps it quick. */
    if (t.n <= 4096) {
        uint32_t *tour = malloc(t.n * sizeof *tour);
        if (tour) {
            for (uint32_t i = 0; i < t.n; i++) tour[i] = t.n - 1 - i;
            int64_t len = gpk_tsp_tour_length(&t, tour);
            len += gpk_tsp_two_opt_delta(&t, tour, 0, t.n - 1);
            len += gpk_tsp_swap_delta(&t, tour, 0, t.n - 1);
            len += gpk_tsp_swap_delta(&t, tour, 1, t.n / 2);
            if (len == INT64_MIN) abort(); /* keeps the calls from being optimised away */
            free(tour);
        }
    }
    gpk_tsp_free(&t);
    return 0;
}
