/* The CLI's --mpi helpers (tools/gpk/mpi_cli.h). */
#define _POSIX_C_SOURCE 200809L /* dup, dup2 */
#include "mpi_cli.h"

#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "gpk/mpi.h"
#include "io.h"

int cli_mpi_timeout_value(const char *text, double *seconds)
{
    char *end = NULL;
    const double v = text ? strtod(text, &end) : -1;
    if (!text || end == text || *end || !(v >= 0 && v <= 1e6)) return -1;
    *seconds = v;
    return 0;
}

void cli_mpi_set_timeout(int argc, char **argv)
{
    double t = GPK_MPI_TIMEOUT_DEFAULT;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--mpi-timeout") == 0 && i + 1 < argc) cli_mpi_timeout_value(argv[i + 1], &t);
        else if (strncmp(argv[i], "--mpi-timeout=", 14) == 0) cli_mpi_timeout_value(argv[i] + 14, &t);
    }
    gpk_mpi_set_timeout(MPI_COMM_WORLD, t);
}

void cli_mpi_lost(const char *cmd, const char *msg)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    cli_error(cmd, "rank %d: %s", rank, msg);
    fflush(NULL);
    io_out_remove_temps();
    MPI_Abort(MPI_COMM_WORLD, CLI_FAIL);
    _exit(CLI_FAIL); /* MPI_Abort does not return */
}

void cli_mpi_wait(const char *cmd, MPI_Request *req, const char *what)
{
    char msg[512];
    if (gpk_mpi_wait(MPI_COMM_WORLD, 1, req, NULL, what, msg, sizeof msg) != GPK_OK) cli_mpi_lost(cmd, msg);
}

int cli_mpi_init(const char *cmd, int *argc, char ***argv, cli_mpi *mp)
{
    int provided = MPI_THREAD_SINGLE;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        cli_error(cmd, "--mpi: MPI_Init_thread failed");
        return -1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &mp->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mp->size);
    cli_mpi_set_timeout(*argc, *argv);
    MPI_Comm node;
    mp->local_rank = 0;
    mp->local_size = 1;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, mp->rank, MPI_INFO_NULL, &node) ==
        MPI_SUCCESS) {
        MPI_Comm_rank(node, &mp->local_rank);
        MPI_Comm_size(node, &mp->local_size);
        MPI_Comm_free(&node);
    }
    if (provided < MPI_THREAD_FUNNELED) {
        /* every rank gets the same level from one MPI library */
        if (mp->rank == 0)
            cli_error(cmd, "--mpi: this MPI gives no thread support (MPI_THREAD_FUNNELED needed)");
        MPI_Finalize();
        return -1;
    }
    return 0;
}

int cli_mpi_finalize(int rc)
{
    int done = 0;
    MPI_Finalized(&done);
    if (!done) MPI_Finalize();
    return rc;
}

int cli_mpi_all_ok(const char *cmd, const cli_mpi *mp, int ok, const char *what)
{
    struct {
        int bad, rank;
    } in = {!ok, mp->rank}, out = {0, 0};
    /* MAXLOC: the lowest rank among those that failed */
    MPI_Request req;
    MPI_Iallreduce(&in, &out, 1, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD, &req);
    cli_mpi_wait(cmd, &req, what);
    if (!out.bad) return 1;
    if (mp->rank == 0 && out.rank != 0)
        cli_error(cmd, "rank %d failed %s (its message above)", out.rank, what);
    return 0;
}

/* v reduced with op over every rank; what: the values, for a message. */
static int reduce_int(int v, MPI_Op op, const char *what)
{
    int r = v;
    MPI_Request req;
    MPI_Iallreduce(&v, &r, 1, MPI_INT, op, MPI_COMM_WORLD, &req);
    cli_mpi_wait("gpk", &req, what);
    return r;
}

int cli_mpi_max(int v) { return reduce_int(v, MPI_MAX, "the ranks' exit statuses"); }

int cli_mpi_sum(int v) { return reduce_int(v, MPI_SUM, "the ranks' counts"); }

void cli_mpi_mute(const cli_mpi *mp, int on)
{
    static int saved = -1;
    if (mp->rank == 0) return;
    fflush(stderr);
    if (on && saved < 0) {
        const int null = open("/dev/null", O_WRONLY);
        if (null < 0) return;
        saved = dup(2);
        dup2(null, 2);
        close(null);
    } else if (!on && saved >= 0) {
        dup2(saved, 2);
        close(saved);
        saved = -1;
    }
}
