/* Helpers shared by the benchmarks (bench/cmd_bench*.c, ooc_bench.c); the
 * functions declared here, not inline, are in bench_util.c (gpk-bench). */
#ifndef GPK_BENCH_UTIL_H
#define GPK_BENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bench_hooks.h"

/* The device a single-device call on ctx runs on (gpk_ctx_info's
 * devices[0]), for the peers that must run beside it; 0 if unknown. */
static inline int bench_ctx_device(const gpk_ctx *ctx)
{
    gpk_ctx_info info;
    return gpk_ctx_info_get(ctx, &info) == GPK_OK ? info.devices[0] : 0;
}

/* splitmix64's mix (Steele, Lea & Flood), the benchmarks' hash for
 * checksums and generated inputs: the same function as the library's
 * seeding, so inputs stay those of the recorded runs. */
static inline uint64_t bench_splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Splits a comma list and calls fn on each item; -1 when an item is empty,
 * fn returns non-zero, or the list is longer than 1023 characters. */
int bench_for_each_item(const char *list, int (*fn)(const char *, void *), void *arg);

/* The machine for the JSON files: host name, CPU model and logical cores
 * (/proc/cpuinfo), memory (/proc/meminfo); "unknown" and 0 where absent. */
void bench_machine(char *host, size_t host_len, char *model, size_t model_len, int *cores,
                   unsigned long long *mem_bytes);

#endif
