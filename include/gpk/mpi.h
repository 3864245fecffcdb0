/* gpk over MPI: distributed calls on a communicator (library gpk::mpi,
 * libgpk_mpi, pkg-config gpk-mpi; built when CMake finds MPI).
 *
 * Every call here is collective over its communicator: every rank calls it
 * with the same arguments where they must agree (types, options), and either
 * every rank returns GPK_OK or none does. A failure on one rank (bad argument, out of
 * memory, a device error) is agreed on before any step that would wait on
 * it: the rank that failed keeps its own message in gpk_last_error(ctx), the
 * others say which rank failed; no rank is left waiting. MPI or NCCL calls
 * that fail give GPK_EDEVICE where MPI returns errors (MPI_ERRORS_RETURN on
 * the communicator; under MPI's default handler MPI ends the job itself).
 * The library never prints and never aborts.
 *
 * Each rank uses its own gpk_ctx (CPU, CUDA: one GPU per rank). The caller
 * initialises MPI (MPI_Init or MPI_Init_thread) and frees it.
 */
#ifndef GPK_MPI_H
#define GPK_MPI_H

#include "gpk.h"
#include "search.h"
#include "sort.h"
#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- bounded waits ---------------------------------------------------------------
 *
 * Every wait of these calls for other ranks (collectives, the exchange of
 * the sort, the end of a multistart) is bounded: where the ranks waited for
 * make no progress for the communicator's timeout (by default
 * GPK_MPI_TIMEOUT_DEFAULT seconds), the call returns GPK_EIO with a message
 * naming the ranks that did not answer (a rank stopped, hung or far behind)
 * instead of waiting forever. A multistart's ranks that still run their
 * searches keep answering, so long runs never count as silence; the local
 * work of a sort between two of its waits (a rank's own sort of its shard)
 * must take less than the timeout. After GPK_EIO the communicator has
 * operations in flight that never end: the job cannot go on (MPI_Abort).
 * The timeout goes with MPI_Comm_dup. */
#define GPK_MPI_TIMEOUT_DEFAULT 300.0

/* Sets comm's timeout in seconds (0: wait forever, as MPI does). Local:
 * each rank sets its own bound. GPK_EINVAL for a negative, NaN or larger
 * than 10^6 value. */
GPK_API gpk_status gpk_mpi_set_timeout(MPI_Comm comm, double seconds);
/* comm's timeout in seconds (0: none). */
GPK_API double gpk_mpi_timeout(MPI_Comm comm);

/* Waits for the count requests of comm (MPI_REQUEST_NULL entries are
 * skipped; completed ones become MPI_REQUEST_NULL) within comm's timeout,
 * as the calls above wait: GPK_OK; GPK_EIO when no request completed for
 * the timeout, naming the ranks that did not answer; GPK_EDEVICE when MPI
 * failed. peers (may be NULL) gives the rank each request waits for
 * (point-to-point); without it the silent ranks are found by asking every
 * rank (ranks waiting in gpk_mpi_wait on comm answer). On failure the
 * message, beginning with `what`, goes to msg (len bytes; msg may be
 * NULL). For programs that use the calls above and wait for their ranks
 * themselves too (their own collectives: MPI_Iallreduce, then this). */
GPK_API gpk_status gpk_mpi_wait(MPI_Comm comm, int count, MPI_Request *reqs, const int *peers,
                                const char *what, char *msg, size_t len);

/* ---- distributed sort ----------------------------------------------------------
 *
 * Every rank holds a shard of keys (and values); afterwards the shards are
 * globally sorted: every key of rank r comes before every key of rank r+1,
 * in the order of gpk_sort_keys (gpk/sort.h, floats and NaNs included).
 * The sort is stable as a whole: equal keys keep the order of (rank, index)
 * of the input, so pairs with equal keys keep their input order across
 * ranks too.
 *
 * Sizes: by default the output is balanced exactly: with N keys in all on P
 * ranks, rank r ends with keys [floor(r N / P), floor((r+1) N / P)) of the
 * global order, so every rank holds N/P rounded down or up, whatever the
 * keys (all equal, few distinct, one rank holding them all). With
 * keep_sizes every rank ends with as many keys as it gave.
 * gpk_mpi_sort_count tells a rank its output size before the sort, for
 * allocating the output; out_capacity below is checked on every rank
 * before any key moves.
 *
 * Memory: the input is left unchanged; keys_out (values_out) may be the
 * input itself (in place) when it holds out_capacity keys, and must not
 * overlap it otherwise. Besides the output the call needs about twice the
 * shard (its sorted copy, the local sort's temporary) and once the output
 * (the runs received), in host or device memory, where the shard is; the
 * part plan of device shards (below) about 2.9 times the shard.
 * These buffers are KEPT with the communicator between calls, grow-only
 * (a call with more keys than any before on a rank frees and allocates the
 * larger size; smaller calls reuse them), with what goes with them: the
 * shared-memory window of host shards, each rank's CUDA IPC mappings of
 * the other ranks' buffers, the NCCL communicator. So only the first call
 * of a size pays for allocating, first-touching and mapping. They stay
 * until gpk_mpi_release(comm, ctx), or until comm is freed (MPI_Comm_free;
 * MPI_Finalize for MPI_COMM_WORLD); the device buffers also go with
 * gpk_ctx_destroy of the context they were made for (call gpk_mpi_release
 * first where the other ranks go on: another rank may still map them).
 * A call with another context or GPU on the same communicator lets the
 * old device buffers go. The library keeps one set per communicator: do
 * not sort on one communicator from two threads at once.
 *
 * Where the keys are: host memory on any context (the local sort runs on
 * the context's backend, the merge on its CPU threads); device memory of
 * the context's GPU on a CUDA context with device_memory set (everything
 * runs on the GPU; where all ranks share a node and their GPUs are peers,
 * each rank's merge reads the others' sorted shards in place through CUDA
 * IPC (GPK_MPI_DEVICE_EXCHANGE=copy: the copy engines move the pieces over
 * the mappings first); otherwise shards move by NCCL send/recv when built with NCCL, by
 * CUDA-aware MPI when MPI says it is, else through host memory). One GPU
 * per rank: give each rank's context its own device.
 *
 * How (device shards of ranks of one node with peer GPUs, 4-byte keys,
 * large shards, from the size in docs/perf/scale.md: the part plan;
 * GPK_MPI_DEVICE_PLAN=part|merge forces one): each rank partitions its shard by the top 8 bits, the ranks
 * gather the digit counts, and each rank copies its buckets' pieces from
 * every rank (CUDA IPC) and sorts each bucket by the bits below as its
 * pieces arrive; skewed keys fall back to the plan below. Otherwise:
 * each rank sorts its shard (gpk's radix sort), the ranks agree on
 * the exact split keys by a digit-by-digit search (one MPI_Allreduce of
 * counts per 8 bits of key), ties at a split are divided by (rank, index),
 * the pieces move with MPI_Alltoallv (chunked point-to-point messages where
 * a count passes INT_MAX), CUDA IPC or NCCL, or, for ranks of one node, are
 * read in place (an MPI shared-memory window; CUDA IPC), and each rank
 * merges the sorted pieces it received. docs/guide.md, "Distributed sort (MPI)", has the details.
 */
typedef struct gpk_mpi_sort_opts {
    int keep_sizes;    /* non-zero: every rank ends with as many keys as it gave */
    int device_memory; /* non-zero: the shard and output are device memory (CUDA context) */
} gpk_mpi_sort_opts;
#define GPK_MPI_SORT_OPTS_INIT \
    {                          \
        0, 0                   \
    }

/* Collective: *n_out = the number of keys this rank holds after a sort of
 * n_local keys per rank with these options (opts may be NULL). */
GPK_API gpk_status gpk_mpi_sort_count(MPI_Comm comm, size_t n_local, const gpk_mpi_sort_opts *opts,
                                      size_t *n_out);

/* Collective: sorts the shards keys_in[0, n_in) of every rank of comm into
 * keys_out, which holds out_capacity keys; *n_out = the keys this rank
 * holds now. key type and options must be the same on every rank (else
 * GPK_EINVAL on every rank). A rank may hold no keys (n_in = 0, keys_in
 * NULL). A communicator of one rank sorts locally. */
GPK_API gpk_status gpk_mpi_sort_keys(MPI_Comm comm, gpk_ctx *ctx, gpk_type type, const void *keys_in,
                                     size_t n_in, void *keys_out, size_t out_capacity, size_t *n_out,
                                     const gpk_mpi_sort_opts *opts);

/* gpk_mpi_sort_keys with values moving with their keys, stably. value_type
 * gives the width only (4 or 8 bytes, the same on every rank). */
GPK_API gpk_status gpk_mpi_sort_pairs(MPI_Comm comm, gpk_ctx *ctx, gpk_type key_type, const void *keys_in,
                                      gpk_type value_type, const void *values_in, size_t n_in, void *keys_out,
                                      void *values_out, size_t out_capacity, size_t *n_out,
                                      const gpk_mpi_sort_opts *opts);

/* Where the time of this thread's last gpk_mpi_sort_keys / _pairs call
 * went, in milliseconds on this rank (each phase ends when its work has
 * finished, on the device too): the local sort (until every rank's sort
 * has ended), the split search, the exchange (counts and data), the merge,
 * and the whole call; and how the pieces moved: "local" (one rank),
 * "shared-memory" (host shards read in place in an MPI shared-memory
 * window), "mpi" (MPI_Alltoallv or its chunks), "cuda-ipc" (the merge
 * kernel reads the peers' shards over the link), "cuda-ipc-part" (the part
 * plan: sort = the partition, merge = the bucket copies and sorts),
 * "cuda-ipc-copy" (copy
 * engines move the pieces from the mapped peers' shards, then a local
 * merge), "nccl", "cuda-aware-mpi", "host-staged". setup_ms: of the
 * phases above, the time spent making what is kept between calls (buffers
 * allocated or grown, the window made, peers' buffers mapped), and setups:
 * how many of those this call made (0 when all were kept from an earlier
 * call). For reports and benchmarks; zero and "" before the first call. */
typedef struct gpk_mpi_sort_times {
    double sort_ms, split_ms, exchange_ms, merge_ms, total_ms;
    const char *exchange;
    double setup_ms;
    int setups;
} gpk_mpi_sort_times;
GPK_API void gpk_mpi_last_sort_times(gpk_mpi_sort_times *times);

/* Collective on comm: frees what the distributed sort keeps with comm
 * between calls (the buffers above, the window, the CUDA IPC mappings):
 * every rank first closes its mappings of the others' buffers, then frees
 * its own. ctx: for the error message (may be NULL). Nothing kept: GPK_OK.
 * A later sort on comm makes them again. */
GPK_API gpk_status gpk_mpi_release(MPI_Comm comm, gpk_ctx *ctx);

/* Non-zero when this libgpk_mpi moves device-memory shards with NCCL
 * (else through CUDA-aware MPI where the MPI says it is, else through
 * host memory): built with NCCL, and NCCL opens in this process. NCCL is
 * opened at run time (libnccl.so.2; libgpk_mpi does not need it to
 * load), at the first call of this or of a device sort that wants it; a
 * device sort uses it only where every rank opens it. */
GPK_API int gpk_mpi_have_nccl(void);

/* ---- multistart of the local search (include/gpk/search.h) ------------------ */
/* gpk_mpi_search_multistart: the runs of gpk_search_run_multi spread over
 * the contexts of every rank of comm. Collective: every rank calls it with the same problem (the same
 * instance data) and the same opts (algo, nb, iters, global_iters, tenure,
 * starts, seed, eval, qap_delta, time_limit, start), and its own contexts
 * (one or more, distinct; CPU or CUDA; the counts may differ by rank). The
 * runs are those of gpk_search_run_multi: opts->starts runs (0: the
 * contexts of all ranks together), run r seeded with splitmix64(seed + r)
 * (run 0 from opts->start when given), each running opts->algo (multistart
 * means its). Numbering the contexts of all ranks in rank order, run r goes
 * to context r mod (their number); each rank runs its contexts on threads
 * of its own. The best run, ties to the lowest r, is the result on EVERY
 * rank (solution included), so it depends on the seed and `starts` only:
 * it is what gpk_search_run_multi and the one-process multistart
 * (gpk_search_run with GPK_SEARCH_MULTISTART on the CPU) return for the
 * same opts. iterations, evaluated and gpu_evaluated are totals over the
 * ranks; ms is this rank's wall time of the call.
 *
 * runs (optional, NULL: not wanted): on success *runs is a malloc'd array
 * (free()) of result->runs entries, entry r the result of run r, on every
 * rank.
 *
 * Stops: the time limit counts from the call on each rank; *opts->cancel
 * (each rank's own flag, e.g. set by its signal handler) stops that rank's
 * runs and, within milliseconds, every other rank's: every rank then
 * returns GPK_OK with the best found before the stop (stopped =
 * GPK_SEARCH_CANCELLED).
 *
 * Errors: every rank returns the same status, with the message naming the
 * failing rank in gpk_last_error(ctxs[0]) (a rank whose ctxs are NULL gets
 * the status alone): bad arguments on any rank, a problem or opts that
 * differ between ranks (the instance data compared by a hash), a failed
 * run, MPI_THREAD_SINGLE (the runs run on threads of their own; the calling
 * thread alone calls MPI, so MPI_THREAD_FUNNELED is enough). comm must be a
 * valid communicator on every rank. opts->progress is called on each rank
 * that gives it, from the thread running its ctxs[0]'s runs; its counts
 * (iteration, evaluated, best) are totals over the runs of every rank on
 * rank 0 (the other ranks' as they sent them, a quarter of a second ago at
 * most), over this rank's runs on the others. */
typedef struct gpk_mpi_search_run {
    int64_t best; /* the run's best cost */
    uint64_t iterations, evaluated, gpu_evaluated;
    double ms;         /* the run's own time */
    int rank;          /* the rank that ran it */
    int local_optimum; /* HC: no improving neighbour left */
    gpk_search_stop stopped;
} gpk_mpi_search_run;

GPK_API gpk_status gpk_mpi_search_multistart(MPI_Comm comm, gpk_ctx *const *ctxs, int count,
                                             const gpk_search_problem *problem, const gpk_search_opts *opts,
                                             gpk_search_result *result, gpk_mpi_search_run **runs);

#ifdef __cplusplus
}
#endif
#endif
