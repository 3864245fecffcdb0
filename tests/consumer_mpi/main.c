/* A tiny program built against the installed gpk::mpi, as a user would
 * (run as a singleton, without mpiexec). */
#include <gpk/mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) return 1;
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("gpk %s mpi consumer ok: %d rank(s), NCCL %s\n", gpk_version(), size,
           gpk_mpi_have_nccl() ? "yes" : "no");
    MPI_Finalize();
    return size >= 1 ? 0 : 1;
}
