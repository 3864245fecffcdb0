/* CPU time of one gpk_sort_keys call (or gpk_sort_keys_to) on the CPU
 * backend, for A/B runs of radix_cpu.c on a loaded machine, where only CPU
 * time at GPK_THREADS=1 means much. Not built by CMake:
 *   cc -O2 -fopenmp -Iinclude bench/cpu_sort_time.c -o cpu_sort_time build/libgpk.a -lm [-lOpenCL] \
 *      [-lhwy_contrib -lhwy -lstdc++: a library built with Highway, GPK_HAVE_VECTOR_SORT]
 *   GPK_THREADS=1 ./cpu_sort_time LOG2N normal|uniform|narrow|few REPS inplace|to|copy|pairs|perm [f64|u64|u32|f32]
 *      [portable|avx2|avx512]
 * normal: normal(0, 1) (python/bench/bench.py's data); uniform: [0, 1) for
 * floats, every bit random for integers; narrow: integers in [0, 2^28); few: in [0, 2^10). to: gpk_sort_keys_to into a fresh
 * array; copy: memcpy into a fresh array, then gpk_sort_keys (the old
 * gpk.sort). Prints the median and best wall and process CPU time of REPS
 * and checks the order of in-place results. */
#define _POSIX_C_SOURCE 200809L
#include "gpk/gpk.h"
#include "gpk/sort.h"
#include "../src/core/test_hooks.h"
#include "../src/sort/radix_cpu_hooks.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double seconds(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t state = 88172645463325252ull;
static uint64_t next_bits(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}
static double unit(void) { return (double)(next_bits() >> 11) * 0x1p-53; }
static double normal(void) { return sqrt(-2 * log(1 - unit())) * cos(6.283185307179586 * unit()); }

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr,
                "usage: %s LOG2N normal|uniform|narrow|few REPS inplace|to|copy|pairs|perm [f64|u64|u32|f32] "
                "[portable|avx2|avx512]\n",
                argv[0]);
        return 2;
    }
    const size_t n = (size_t)1 << atoi(argv[1]);
    const int is_normal = strcmp(argv[2], "normal") == 0, is_narrow = strcmp(argv[2], "narrow") == 0,
              is_few = strcmp(argv[2], "few") == 0, reps = atoi(argv[3]);
    const char *mode = argv[4], *type_name = argc > 5 ? argv[5] : "f64";
    gpk_type type = GPK_F64;
    if (gpk_type_parse(type_name, &type) != GPK_OK) return 2;
    const size_t width = gpk_type_size(type);
    if (argc > 6 && gpk__test_set("cpu_sort_simd", argv[6]) != 0) return 2;
    if (getenv("GPK_BENCH_IGNORE_LOAD")) gpk__radix_cpu_ignore_load(1); /* teams whatever the load */
    const int pairs = !strcmp(mode, "pairs"), perm = !strcmp(mode, "perm");
    unsigned char *input = malloc(n * width), *work = malloc(n * width), *vals = malloc(n * width);
    if (!input || !work || !vals) return 1;
    for (size_t i = 0; i < n; i++) {
        union {
            double f64;
            float f32;
            uint64_t u64;
            uint32_t u32;
        } v;
        if (type == GPK_F64) v.f64 = is_normal ? normal() : unit();
        else if (type == GPK_F32) v.f32 = (float)(is_normal ? normal() : unit());
        else if (is_narrow) v.u64 = next_bits() >> 36, v.u32 = (uint32_t)v.u64; /* [0, 2^28) */
        else if (is_few) v.u64 = next_bits() >> 54, v.u32 = (uint32_t)v.u64;    /* [0, 2^10) */
        else if (width == 8) v.u64 = next_bits();
        else v.u32 = (uint32_t)(next_bits() >> 32);
        memcpy(input + i * width, &v, width);
    }
    gpk_ctx *ctx;
    if (gpk_ctx_create(&ctx, GPK_BACKEND_CPU) != GPK_OK) return 1;
    double best_wall = 1e30, best_cpu = 1e30, *walls = malloc(sizeof(double) * (reps + 1)),
           *cpus = malloc(sizeof(double) * (reps + 1));
    if (!walls || !cpus) return 1;
    for (int r = 0; r < reps; r++) {
        memcpy(work, input, n * width);
        for (size_t i = 0; pairs && i < n; i++) {
            if (width == 4) ((uint32_t *)vals)[i] = (uint32_t)i;
            else ((uint64_t *)vals)[i] = i;
        }
        const int in_place = !strcmp(mode, "inplace") || pairs || perm;
        unsigned char *fresh = in_place ? NULL : malloc(n * width);
        const double w0 = seconds(CLOCK_MONOTONIC), c0 = seconds(CLOCK_PROCESS_CPUTIME_ID);
        gpk_status s;
        if (!strcmp(mode, "inplace")) s = gpk_sort_keys(ctx, type, work, n, NULL);
        else if (pairs) s = gpk_sort_pairs(ctx, type, work, width == 4 ? GPK_U32 : GPK_U64, vals, n, NULL);
        else if (perm) s = gpk_sort_perm(ctx, type, work, (uint32_t *)vals, n, NULL);
        else if (!strcmp(mode, "to")) s = gpk_sort_keys_to(ctx, type, input, fresh, n, NULL);
        else {
            memcpy(fresh, input, n * width);
            s = gpk_sort_keys(ctx, type, fresh, n, NULL);
        }
        const double w1 = seconds(CLOCK_MONOTONIC), c1 = seconds(CLOCK_PROCESS_CPUTIME_ID);
        free(fresh);
        if (s != GPK_OK) {
            fprintf(stderr, "sort failed: %s\n", gpk_last_error(ctx));
            return 1;
        }
        if (in_place)
            for (size_t i = 1; i < n; i++) {
                int bad = type == GPK_F64 ? ((double *)work)[i - 1] > ((double *)work)[i]
                    : type == GPK_F32     ? ((float *)work)[i - 1] > ((float *)work)[i]
                    : width == 8          ? ((uint64_t *)work)[i - 1] > ((uint64_t *)work)[i]
                                          : ((uint32_t *)work)[i - 1] > ((uint32_t *)work)[i];
                if (bad) {
                    fprintf(stderr, "not sorted at %zu\n", i);
                    return 1;
                }
            }
        walls[r] = w1 - w0;
        cpus[r] = c1 - c0;
        if (w1 - w0 < best_wall) best_wall = w1 - w0;
        if (c1 - c0 < best_cpu) best_cpu = c1 - c0;
    }
    qsort(walls, (size_t)reps, sizeof *walls, cmp_double);
    qsort(cpus, (size_t)reps, sizeof *cpus, cmp_double);
    printf("n=2^%s %s %s %s %s (%s): median wall %.3f ms, cpu %.3f ms; best wall %.3f, cpu %.3f (of %d)\n",
           argv[1], argv[2], mode, type_name, argc > 6 ? argv[6] : "native", gpk_last_sort_path(ctx),
           walls[reps / 2] * 1e3, cpus[reps / 2] * 1e3, best_wall * 1e3, best_cpu * 1e3, reps);
    free(walls);
    free(cpus);
    gpk_ctx_destroy(ctx);
    free(input);
    free(work);
    free(vals);
    return 0;
}
