/* gpk::mpi: what every distributed call shares (errors agreed across ranks). */
#include "mpi_internal.h"

#include <stdio.h>

int gpk_mpi_have_nccl(void)
{
#ifdef GPK_HAVE_NCCL
    return 1;
#else
    return 0;
#endif
}

gpk_status gpk__mpi_fail(gpk_ctx *ctx, gpk_status s, const char *fmt, ...)
{
    if (!ctx) return s;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->err, GPK_ERRLEN, fmt, ap);
    va_end(ap);
    return s;
}

gpk_status gpk__mpi_check(gpk_ctx *ctx, int mpi_rc, const char *what)
{
    if (mpi_rc == MPI_SUCCESS) return GPK_OK;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(mpi_rc, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "error %d", mpi_rc);
    return gpk__mpi_fail(ctx, GPK_EDEVICE, "%s: MPI failed: %s", what, text);
}

gpk_status gpk__mpi_agree(MPI_Comm comm, gpk_ctx *ctx, gpk_status mine, const char *what)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    struct { int status, rank; } in = { (int)mine, rank }, worst;
    gpk_status s = gpk__mpi_check(ctx, MPI_Allreduce(&in, &worst, 1, MPI_2INT, MPI_MAXLOC, comm), what);
    if (s != GPK_OK) return s;
    if (worst.status == GPK_OK || mine != GPK_OK) return mine;
    return gpk__mpi_fail(ctx, (gpk_status)worst.status, "%s: rank %d failed (%s)", what, worst.rank,
                         gpk_status_string((gpk_status)worst.status));
}
