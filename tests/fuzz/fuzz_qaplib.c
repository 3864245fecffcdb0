/* libFuzzer target of the QAPLIB reader: any input must either parse into
 * a consistent instance or fail with a status, without crashes, leaks or
 * undefined behaviour (built with -fsanitize=fuzzer,address,undefined; see
 * run.sh). */
#include "gpk/search.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gpk_qap q;
    if (gpk_qap_parse((const char *)data, size, "fuzz", &q) != GPK_OK) return 0;
    /* Read every entry of both matrices through the identity permutation's
     * cost (O(n^2)) and one swap delta. */
    uint32_t *p = malloc((q.n ? q.n : 1) * sizeof *p);
    if (p) {
        for (uint32_t i = 0; i < q.n; i++) p[i] = i;
        int64_t c = gpk_qap_cost(&q, p);
        if (q.n >= 2) c += gpk_qap_swap_delta(&q, p, 0, q.n - 1);
        if (c == INT64_MIN + 1) abort(); /* keeps the calls from being optimised away */
        free(p);
    }
    gpk_qap_free(&q);
    return 0;
}
