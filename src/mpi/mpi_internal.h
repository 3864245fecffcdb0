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

#ifdef __cplusplus
}
#endif
#endif
