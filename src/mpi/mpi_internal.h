/* Internal helpers of gpk::mpi (src/mpi/). */
#ifndef GPK_MPI_INTERNAL_H
#define GPK_MPI_INTERNAL_H

#include "gpk/mpi.h"
#include "core/internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* gpk__fail for libgpk_mpi: libgpk keeps gpk__fail hidden, and gpk_mpi is
 * built from the same tree, so it writes the context's message itself. */
gpk_status gpk__mpi_fail(gpk_ctx *ctx, gpk_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Agrees on the status of a step: every rank passes its own; every rank
 * gets the worst (largest code) of all and, where another rank failed, a
 * message on ctx naming that rank and `what`. Call it before any
 * collective that a rank that failed would not reach. */
gpk_status gpk__mpi_agree(MPI_Comm comm, gpk_ctx *ctx, gpk_status mine, const char *what);

/* Checks an MPI call's return code: GPK_OK, or GPK_EDEVICE with MPI's message on ctx. */
gpk_status gpk__mpi_check(gpk_ctx *ctx, int mpi_rc, const char *what);

/* gpk_mpi_wait without the checks of its arguments. */
gpk_status gpk__mpi_wait_msg(MPI_Comm comm, int count, MPI_Request *reqs, const int *peers, const char *what,
                             char *msg, size_t len);

/* MPI's collectives, bounded (gpk_mpi_wait): GPK_OK, else the status of
 * gpk_mpi_wait with the message on ctx. Every collective of gpk::mpi goes
 * through these, so that no rank waits forever for a silent one. */
gpk_status gpk__mpi_allreduce(MPI_Comm comm, gpk_ctx *ctx, const void *in, void *out, int n, MPI_Datatype t,
                              MPI_Op op, const char *what);
gpk_status gpk__mpi_allgather(MPI_Comm comm, gpk_ctx *ctx, const void *in, int n, MPI_Datatype t, void *out,
                              int m, MPI_Datatype u, const char *what);
gpk_status gpk__mpi_alltoall(MPI_Comm comm, gpk_ctx *ctx, const void *in, int n, MPI_Datatype t, void *out,
                             int m, MPI_Datatype u, const char *what);
gpk_status gpk__mpi_alltoallv(MPI_Comm comm, gpk_ctx *ctx, const void *in, const int *sc, const int *sd,
                              MPI_Datatype t, void *out, const int *rc, const int *rd, MPI_Datatype u,
                              const char *what);
gpk_status gpk__mpi_exscan(MPI_Comm comm, gpk_ctx *ctx, const void *in, void *out, int n, MPI_Datatype t,
                           MPI_Op op, const char *what);
gpk_status gpk__mpi_bcast(MPI_Comm comm, gpk_ctx *ctx, void *buf, int n, MPI_Datatype t, int root,
                          const char *what);
/* Before a blocking call that has no nonblocking form (a window, a
 * communicator split): every rank is there, else GPK_EIO. */
gpk_status gpk__mpi_barrier(MPI_Comm comm, gpk_ctx *ctx, const char *what);

#ifdef __cplusplus
}
#endif
#endif
