/* Peers that gpk measures itself against in the same run (gpk bench sort).
 * Each function sorts a copy of `keys` (and values when value_width > 0)
 * `reps` times, returns the median time in milliseconds through *ms and
 * leaves the last sorted keys in keys_out (may be NULL). Returns 0 on
 * success, non-zero with a message in err otherwise, and -1 when the peer
 * is not built in. Keys are in the caller's natural type. */
#ifndef GPK_BENCH_PEERS_H
#define GPK_BENCH_PEERS_H

#include <stddef.h>
#include "gpk/gpk.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gpk_peer_result {
    double ms;       /* median over reps */
    char name[64];   /* e.g. "cub::DeviceRadixSort" */
    char form[48];   /* the call that was fastest, e.g. "64-bit n, DoubleBuffer"; "" for peers of one form */
    char forms[256]; /* every form tried with its median, "" for peers of one form */
} gpk_peer_result;

/* CPU peers. threads = 0: all cores. */
int gpk_peer_qsort(gpk_type t, const void *keys, void *keys_out, size_t n, int reps, gpk_peer_result *r,
                   char *err, size_t errlen);
int gpk_peer_std_sort(gpk_type t, const void *keys, void *keys_out, size_t n, int reps, gpk_peer_result *r,
                      char *err, size_t errlen);
/* Highway's vqsort (vectorised quicksort, one thread), when CMake found
 * libhwy-dev; -1 when not built in. */
int gpk_peer_vqsort(gpk_type t, const void *keys, void *keys_out, size_t n, int reps, gpk_peer_result *r,
                    char *err, size_t errlen);
/* libstdc++ parallel mode (__gnu_parallel::sort, multiway mergesort on OpenMP). */
int gpk_peer_gnu_parallel_sort(gpk_type t, const void *keys, void *keys_out, size_t n, int threads, int reps,
                               gpk_peer_result *r, char *err, size_t errlen);
/* IPS4o's parallel samplesort (in-place, not stable), when CMake found its
 * headers (Debian libips4o-dev); the faster of a call per sort and a kept
 * sorter; -1 when not built in. */
int gpk_peer_ips4o(gpk_type t, const void *keys, void *keys_out, size_t n, int threads, int reps,
                   gpk_peer_result *r, char *err, size_t errlen);
/* The same on (key, value) records compared by key, values 4 or 8 bytes:
 * what sorting pairs costs without a radix sort. Not stable; keys_out gets
 * the sorted keys for the bench's check. */
int gpk_peer_gnu_parallel_sort_pairs(gpk_type t, const void *keys, const void *values, size_t value_width,
                                     void *keys_out, size_t n, int threads, int reps, gpk_peer_result *r,
                                     char *err, size_t errlen);

/* CUDA peer: cub::DeviceRadixSort on device-resident data, bits
 * [begin_bit, end_bit) of the key as CUB defines them (for signed and float
 * keys CUB's own order-preserving twiddle applies). Time excludes uploads.
 * Every call a user could make is timed (32-bit num_items where n allows,
 * 64-bit; in/out arrays and DoubleBuffer), interleaved, and the fastest
 * form's median is the result (r->form names it, r->forms lists all). */
int gpk_peer_cub_radix(int device, gpk_type t, const void *keys, void *keys_out, size_t value_width, size_t n,
                       int begin_bit, int end_bit, int reps, gpk_peer_result *r, char *err, size_t errlen);

/* CUDA comparison sorts for gpk bench quicksort, device-resident, keys in
 * the natural order of the type (NaNs: whatever the peer does; the bench
 * checks peers only on NaN-free data): cub::DeviceMergeSort::SortKeys and
 * thrust::sort. */
int gpk_peer_cub_merge_sort(int device, gpk_type t, const void *keys, void *keys_out, size_t n, int reps,
                            gpk_peer_result *r, char *err, size_t errlen);
int gpk_peer_thrust_sort(int device, gpk_type t, const void *keys, void *keys_out, size_t n, int reps,
                         gpk_peer_result *r, char *err, size_t errlen);

/* Record peers: n records of record_size bytes with a key of type t at
 * key_offset, device-resident. "index": cub::DeviceRadixSort::SortPairs of
 * (key, u32 index) then a gather kernel moving the records;
 * "thrust": thrust::sort_by_key of (key, index) then thrust::gather.
 * records_out gets the sorted records (may be NULL). */
int gpk_peer_records_cub_index(int device, gpk_type t, const void *records, void *records_out, size_t n,
                               size_t record_size, size_t key_offset, int reps, gpk_peer_result *r, char *err,
                               size_t errlen);
int gpk_peer_records_thrust(int device, gpk_type t, const void *records, void *records_out, size_t n,
                            size_t record_size, size_t key_offset, int reps, gpk_peer_result *r, char *err,
                            size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
