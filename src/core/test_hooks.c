#include "test_hooks.h"

#include <stdlib.h>
#include <string.h>

gpk_test_hooks gpk__test = GPK_TEST_HOOKS_INIT;

void gpk__test_hooks_reset(void)
{
    const gpk_test_hooks unset = GPK_TEST_HOOKS_INIT;
    gpk__test = unset;
}

/* Words some hooks take, each with its value. */
struct word {
    const char *hook, *word;
    long long value;
};
static const struct word words[] = {
    {"cpu_radix_first", "count", 1},   {"cpu_radix_path", "lsd", 1},
    {"cpu_radix_path", "hybrid", 2},   {"cpu_radix_path", "cache", 3},
    {"cpu_sort_simd", "portable", 0},  {"cpu_sort_simd", "avx2", 1},
    {"cpu_sort_simd", "avx512", 2},    {"opencl_vendor", "emulate", 3},
    {"opencl_variant", "fast", 0},     /* GPK_OCL_FAST */
    {"opencl_variant", "paper", 1},    /* GPK_OCL_PAPER */
    {"opencl_variant", "global", 2},   /* GPK_OCL_GLOBAL */
    {"opencl_variant", "onesweep", 3}, /* GPK_OCL_ONESWEEP */
};

#define HOOK_INT(f)            \
    {                          \
#f, &gpk__test.f, NULL \
    }
#define HOOK_LL(f)             \
    {                          \
#f, NULL, &gpk__test.f \
    }
struct field {
    const char *name;
    int *i;
    long long *ll;
};
static const struct field fields[] = {
    {"cpu_radix_first", &gpk__test.cpu_radix_first_count, NULL},
    HOOK_INT(cpu_radix_path),
    HOOK_INT(cpu_sort_simd),
    HOOK_INT(cpu_presorted),
    HOOK_LL(cpu_avx512_sort_bytes),
    HOOK_LL(cpu_avx2_sort_bytes),
    HOOK_LL(cpu_vector_pair_bytes),
    HOOK_INT(cpu_compress_store),
    HOOK_INT(cpu_pair_stall_ms),
    HOOK_INT(radix_cuda_small),
    HOOK_INT(radix_cuda_small_max_log),
    HOOK_INT(radix_cuda_detect_from_log),
    HOOK_INT(radix_cuda_sample_from_log),
    HOOK_INT(radix_cuda_fused_detect),
    HOOK_INT(radix_cuda_hybrid),
    HOOK_INT(radix_cuda_hybrid_min_log),
    HOOK_INT(radix_cuda_hybrid_fill),
    HOOK_INT(quick_front_min_log),
    HOOK_INT(quick_front_bucket_log),
    HOOK_INT(opencl_vendor),
    HOOK_INT(opencl_variant),
    HOOK_INT(opencl_transpose),
    HOOK_LL(opencl_wide_from),
    HOOK_INT(opencl_profile),
    HOOK_LL(multi_part_min),
    HOOK_LL(multi_min),
    HOOK_INT(ooc_force),
    HOOK_LL(ooc_fail_at),
    HOOK_LL(ooc_slot_bytes),
    HOOK_LL(ooc_resident),
    HOOK_INT(ooc_keep),
    HOOK_INT(segmented_cuda_medium_rank),
};

int gpk__test_set(const char *name, const char *value)
{
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (strcmp(fields[i].name, name) != 0) continue;
        long long v = GPK_HOOK_UNSET;
        if (value) {
            int found = 0;
            for (size_t w = 0; w < sizeof words / sizeof words[0] && !found; w++)
                if (!strcmp(words[w].hook, name) && !strcmp(words[w].word, value)) {
                    v = words[w].value;
                    found = 1;
                }
            if (!found) {
                char *end;
                v = strtoll(value, &end, 0);
                if (end == value || *end != '\0') return -1;
            }
        }
        if (fields[i].i) *fields[i].i = (int)v;
        else *fields[i].ll = v;
        return 0;
    }
    return -1;
}
