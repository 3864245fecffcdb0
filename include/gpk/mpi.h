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
#include "sort.h"
#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Non-zero when this libgpk_mpi moves device-memory shards with NCCL
 * (else through CUDA-aware MPI where the MPI says it is, else through
 * host memory). */
GPK_API int gpk_mpi_have_nccl(void);

/* ---- multistart of the local search (i17ms) ---------------------------------- */
/* (section kept for the multistart across ranks; nothing here yet) */

#ifdef __cplusplus
}
#endif
#endif
