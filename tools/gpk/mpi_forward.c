/* gpk --mpi: the program gpk-mpi beside gpk does it (tools/gpk/mpi_cli.h). */
#include "cli.h"
#include "mpi_cli.h"

int cli_mpi_forward(const char *cmd, char **argv)
{
    return cli_exec_beside(
        cmd, argv, "gpk-mpi", "--mpi: ",
        "--mpi is the program gpk-mpi, built and installed beside gpk when MPI is found at "
        "build time");
}
