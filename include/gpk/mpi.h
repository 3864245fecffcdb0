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

/* Non-zero when this libgpk_mpi moves device-memory shards with NCCL
 * (else through CUDA-aware MPI where the MPI says it is, else through
 * host memory). */
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
 * that gives it, from the thread running its ctxs[0]'s runs. */
typedef struct gpk_mpi_search_run {
    int64_t best;            /* the run's best cost */
    uint64_t iterations, evaluated, gpu_evaluated;
    double ms;               /* the run's own time */
    int rank;                /* the rank that ran it */
    int local_optimum;       /* HC: no improving neighbour left */
    gpk_search_stop stopped;
} gpk_mpi_search_run;

GPK_API gpk_status gpk_mpi_search_multistart(MPI_Comm comm, gpk_ctx *const *ctxs, int count,
                                             const gpk_search_problem *problem, const gpk_search_opts *opts,
                                             gpk_search_result *result, gpk_mpi_search_run **runs);

#ifdef __cplusplus
}
#endif
#endif
