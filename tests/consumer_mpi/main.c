/* A tiny program built against the installed gpk::mpi, as a user would
 * (run as a singleton, without mpiexec): a distributed sort on the ranks
 * it has. */
#include <gpk/mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) return 1;
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    gpk_ctx *ctx;
    if (gpk_ctx_create(&ctx, GPK_BACKEND_CPU) != GPK_OK) return 1;
    int keys[6] = { 5, -1, 4, -1, 3, 0 }, out[6];
    size_t n_out = 0;
    gpk_status s = gpk_mpi_sort_keys(MPI_COMM_WORLD, ctx, GPK_I32, keys, 6, out, 6, &n_out, NULL);
    int ok = s == GPK_OK && n_out == 6 && out[0] == -1 && out[1] == -1 && out[2] == 0 && out[5] == 5;
    printf("gpk %s mpi consumer %s: %d rank(s), NCCL %s\n", gpk_version(), ok ? "ok" : "FAILED", size,
           gpk_mpi_have_nccl() ? "yes" : "no");
    gpk_ctx_destroy(ctx);
    MPI_Finalize();
    return ok ? 0 : 1;
}
