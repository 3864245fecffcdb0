/* gpk --mpi: the program gpk-mpi beside gpk does it (tools/gpk/mpi_cli.h). */
#define _POSIX_C_SOURCE 200809L /* execv, readlink */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "mpi_cli.h"

int cli_mpi_forward(const char *cmd, char **argv)
{
    char self[4096];
    const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 32);
    if (len <= 0) {
        cli_error(cmd, "--mpi: cannot find this program's directory: %s", strerror(errno));
        return CLI_FAIL;
    }
    self[len] = '\0';
    char *slash = strrchr(self, '/');
    strcpy(slash ? slash + 1 : self, "gpk-mpi");
    argv[0] = self;
    execv(self, argv);
    cli_error(cmd,
              "--mpi: cannot run %s: %s (--mpi is the program gpk-mpi, built and installed beside gpk "
              "when MPI is found at build time)",
              self, strerror(errno));
    return CLI_FAIL;
}
