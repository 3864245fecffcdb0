/* Helpers shared by the gpk bench commands (bench/cmd_bench*.c). */
#ifndef GPK_BENCH_UTIL_H
#define GPK_BENCH_UTIL_H

#include <stddef.h>

/* Splits a comma list and calls fn on each item; -1 when an item is empty,
 * fn returns non-zero, or the list is longer than 1023 characters. */
int bench_for_each_item(const char *list, int (*fn)(const char *, void *), void *arg);

/* The machine for the JSON files: host name, CPU model and logical cores
 * (/proc/cpuinfo), memory (/proc/meminfo); "unknown" and 0 where absent. */
void bench_machine(char *host, size_t host_len, char *model, size_t model_len, int *cores,
                   unsigned long long *mem_bytes);

#endif
