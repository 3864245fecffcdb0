/* gpk_sort_keys on the CPU backend as a shared object for ctypes, so a
 * Python script times it against numpy.sort in one process, interleaved
 * (bench/cpu_vector_vs_numpy.py), with the CPU sort's test hooks at hand
 * (which the Python module does not reach). Not built by CMake:
 *   cc -O2 -shared -fPIC -fopenmp -Iinclude bench/cpu_sort_shim.c -o /tmp/cpu_sort_shim.so \
 *      -Wl,--whole-archive build/libgpk.a -Wl,--no-whole-archive -lm \
 *      [-lhwy_contrib -lhwy -lstdc++: a library built with Highway] */
#include "gpk/gpk.h"
#include "gpk/sort.h"
#include "../src/core/test_hooks.h"
#include "../src/sort/radix_cpu_hooks.h"

#include <stdio.h>
#include <string.h>

static gpk_ctx *ctx;
static char ran[64];

/* A CPU context of `threads` threads: 0, or -1. */
int shim_init(int threads)
{
    if (gpk_ctx_create(&ctx, GPK_BACKEND_CPU) != GPK_OK) return -1;
    gpk_ctx_set_threads(ctx, threads);
    return 0;
}

/* A test hook by name and value (NULL: unset), as gpk__test_set. */
int shim_hook(const char *name, const char *value) { return gpk__test_set(name, value); }

/* The level of the vector sorters here: vqsort's (0-2), and the bytes up
 * to which the AVX-512 and the AVX2 quicksorts run now. */
int shim_simd_level(void) { return gpk__radix_cpu_simd_level(); }
long long shim_avx512_bytes(void) { return (long long)gpk__radix_cpu_avx512_bytes(); }
long long shim_avx2_bytes(void) { return (long long)gpk__radix_cpu_avx2_bytes(); }

/* gpk_sort_keys of n keys of the type named (u32, i32, f32, ...) in place:
 * 0, or -1. */
int shim_sort(const char *type, void *keys, size_t n)
{
    gpk_type t;
    if (gpk_type_parse(type, &t) != GPK_OK) return -1;
    if (gpk_sort_keys(ctx, t, keys, n, NULL) != GPK_OK) return -1;
    snprintf(ran, sizeof ran, "%s", gpk_last_sort_path(ctx));
    return 0;
}

/* The path the last sort took. */
const char *shim_last_path(void) { return ran; }
