/* Internal hooks of the CPU radix sort for the tests. */
#ifndef GPK_RADIX_CPU_HOOKS_H
#define GPK_RADIX_CPU_HOOKS_H

#include <stddef.h>

/* on != 0: the sort's team takes the context's threads whatever the
 * machine's load (the tests force team sizes); 0: the default, a team no
 * larger than the cores free now (radix_cpu.c, free_cores). */
void gpk__radix_cpu_ignore_load(int on);

/* The team a sort asking for `threads` threads would get now: no larger
 * than the free cores of the CPUs this process may run on (radix_cpu.c,
 * cap_by_free_cores), or `threads` while the load is ignored. */
int gpk__radix_cpu_team_cap(int threads);

/* The rule behind it: a team for `threads` threads asked, on `usable` of
 * `online` CPUs, beside `others` runnable threads of other processes
 * (charged to the usable CPUs in their share, rounded up): at least 1. */
int gpk__radix_cpu_team_fit(int threads, long online, long usable, long others);

/* The instruction-set level (vector_sort.h: 0 portable, 1 avx2, 2 avx512)
 * at which keys alone are sorted now, a forced level (cpu_sort_simd)
 * applied: 0 where no vectorised sorter was built or none runs here. */
int gpk__radix_cpu_simd_level(void);

/* Up to how many bytes 4-byte keys alone on one thread take the AVX-512
 * quicksort now (path "radix-vector-avx512"; the test hook
 * cpu_avx512_sort_bytes applied): 0 where it does not run here. */
size_t gpk__radix_cpu_avx512_bytes(void);

/* The same for the AVX2 quicksort (path "radix-vector-avx2"; the test
 * hook cpu_avx2_sort_bytes), which takes such keys the AVX-512 one does
 * not: 0 where it does not run here. */
size_t gpk__radix_cpu_avx2_bytes(void);

/* How many pieces a thread of a team of two has taken from the other's
 * stack (radix_cpu.c, piece_pool) since the process started. */
size_t gpk__radix_cpu_pieces_stolen(void);

#endif
