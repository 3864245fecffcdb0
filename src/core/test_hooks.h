/* Paths that tests and the benchmark force: one process-wide set of
 * overrides, each GPK_HOOK_UNSET (the library's own choice) unless a test
 * program, linked with the static library, sets it before it sorts. The
 * library only reads them; they are not part of the public API, and no
 * environment variable reaches them (the variables a user may set are the
 * table in docs/guide.md). */
#ifndef GPK_TEST_HOOKS_H
#define GPK_TEST_HOOKS_H

#include <limits.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GPK_HOOK_UNSET INT_MIN

typedef struct gpk_test_hooks {
    /* CPU radix sort: 1 makes 8-byte keys that need mapping take the
     * counted first level instead of the sampled plan */
    int cpu_radix_first_count;
    int cpu_radix_path; /* 1 lsd, 2 hybrid, 3 cache: that path for every size */
    int cpu_sort_simd;  /* keys-only CPU sorts at most at 0 portable, 1 avx2, 2 avx512 */
    int cpu_presorted;  /* 0: CPU sorts never look for a presorted input */
    /* 4-byte keys alone up to this many bytes take the AVX-512 quicksort
     * (vector_sort_quick.h) on a team of one thread; 0: never */
    long long cpu_avx512_sort_bytes;
    /* the same for the AVX2 quicksort (vector_sort_quick.h) */
    long long cpu_avx2_sort_bytes;
    /* keys up to this many bytes (floats: twice as many) on a team of two
     * sort as two halves and a merge (radix_cpu.c, VECTOR_PAIR_BYTES) */
    long long cpu_vector_pair_bytes;
    /* the AVX-512 quicksort's partition: 1 compress-stores to memory, 0
     * compresses in registers (vector_sort_avx512.c, compress_in_memory) */
    int cpu_compress_store;
    /* a team of two's second thread sleeps this many ms once its side is
     * shared (radix_cpu.c, quick_pair_sort), so that the first takes it */
    int cpu_pair_stall_ms;
    /* CUDA radix sort */
    int radix_cuda_small;           /* 0: no single-launch small path */
    int radix_cuda_small_max_log;   /* 1..24: one size limit of that path for keys and pairs */
    int radix_cuda_detect_from_log; /* the bit-range detection from 2^x keys */
    int radix_cuda_sample_from_log; /* the detection's first sample from 2^x keys */
    int radix_cuda_fused_detect;    /* 0: the detection as a separate read */
    int radix_cuda_hybrid;          /* the opt-in hybrid: -1 pairs and sigma, 1 keys too */
    int radix_cuda_hybrid_min_log;  /* the hybrid from 2^x keys */
    int radix_cuda_hybrid_fill;     /* the hybrid's keys per bucket */
    /* CUDA quicksort's records front end */
    int quick_front_min_log;    /* from 2^x records (0: never) */
    int quick_front_bucket_log; /* buckets of about 2^x keys */
    /* OpenCL radix sort */
    int opencl_vendor;          /* 0: never the vendor kernels, 2: a failed build is an error, 3: emulate */
    int opencl_variant;         /* a gpk_ocl_variant */
    int opencl_transpose;       /* 1: the paper variant's transposition */
    long long opencl_wide_from; /* 64-bit positions from this many keys on */
    int opencl_profile;         /* 1: time every launch (radix_opencl.c's profile) */
    /* several devices */
    long long multi_part_min; /* the part plan from this many keys a device */
    long long multi_min;      /* the host API spreads sorts from this many keys */
    /* out of core */
    int ooc_force;            /* 1: with a budget, every sort goes out of core */
    long long ooc_fail_at;    /* the k-th transfer fails (k >= 1) */
    long long ooc_slot_bytes; /* a cap on a slot's bytes (the run length) */
    long long ooc_resident;   /* at most this many runs stay on the device */
    int ooc_keep;             /* 0: no host buffer kept between calls */
    /* CUDA segmented sort: how a medium segment's tiles are ranked
     * (0: block radix sort, 1: warp digit matches) */
    int segmented_cuda_medium_rank;
} gpk_test_hooks;

#define GPK_TEST_HOOKS_INIT                                                                                 \
    {                                                                                                       \
        GPK_HOOK_UNSET, GPK_HOOK_UNSET, GPK_HOOK_UNSET, GPK_HOOK_UNSET, GPK_HOOK_UNSET, GPK_HOOK_UNSET,     \
            GPK_HOOK_UNSET, GPK_HOOK_UNSET, GPK_HOOK_UNSET, GPK_HOOK_UNSET, GPK_HOOK_UNSET, GPK_HOOK_UNSET, \
            GPK_HOOK_UNSET, GPK_HOOK_UNSET, GPK_HOOK_UNSET, GPK_HOOK_UNSET, GPK_HOOK_UNSET, GPK_HOOK_UNSET, \
            GPK_HOOK_UNSET, GPK_HOOK_UNSET, GPK_HOOK_UNSET, GPK_HOOK_UNSET, GPK_HOOK_UNSET, GPK_HOOK_UNSET, \
            GPK_HOOK_UNSET, GPK_HOOK_UNSET, GPK_HOOK_UNSET, GPK_HOOK_UNSET, GPK_HOOK_UNSET, GPK_HOOK_UNSET, \
            GPK_HOOK_UNSET, GPK_HOOK_UNSET                                                                  \
    }

extern gpk_test_hooks gpk__test;

/* Every override back to GPK_HOOK_UNSET. */
void gpk__test_hooks_reset(void);

/* Sets the hook named as its field (cpu_radix_first for
 * cpu_radix_first_count) from a number or a word ("count"; "lsd", "hybrid",
 * "cache"; "portable", "avx2", "avx512"; "emulate"; "fast", "paper", "global", "onesweep"); NULL unsets it. 0, or -1 for an
 * unknown name or value. */
int gpk__test_set(const char *name, const char *value);

/* The forced value, else the library's default. */
static inline long long gpk__hook(long long forced, long long fallback)
{
    return forced == GPK_HOOK_UNSET ? fallback : forced;
}

#ifdef __cplusplus
}
#endif

#endif
