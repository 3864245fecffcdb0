/* The CLI's --mpi (gpk qap|tsp|ppp, gpk sort under mpirun). The installed
 * gpk links libgpk alone, never MPI: given --mpi it runs the program
 * gpk-mpi beside it (the same commands, built with gpk::mpi when CMake
 * finds MPI) with the same arguments, as `gpk bench` runs gpk-bench.
 * gpk-mpi (GPK_HAVE_MPI) starts and ends MPI and makes all ranks agree on
 * whether to go on, so that a rank that fails (a bad file, a missing
 * device) never leaves the others waiting in a collective
 * (tools/gpk/mpi_cli.c). Without --mpi no MPI call is made. */
#ifndef GPK_MPI_CLI_H
#define GPK_MPI_CLI_H

#include <string.h>

/* 1 when "--mpi" is among the arguments (no MPI call). */
static inline int cli_mpi_requested(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--mpi") == 0) return 1;
    return 0;
}

/* gpk (tools/gpk/mpi_forward.c, built where gpk-mpi is: GPK_MPI_PROGRAM):
 * runs gpk-mpi from gpk's own directory with argv (gpk's own, argv[0]
 * replaced); returns only on failure, after a message. */
int cli_mpi_forward(const char *cmd, char **argv);

#ifdef GPK_HAVE_MPI
#include <mpi.h>

typedef struct cli_mpi {
    int rank, size;             /* in MPI_COMM_WORLD */
    int local_rank, local_size; /* among the ranks of this node (MPI_COMM_TYPE_SHARED) */
} cli_mpi;

/* MPI_Init_thread (MPI_THREAD_FUNNELED: gpk's threads make no MPI call),
 * the ranks, and MPI_COMM_WORLD's timeout from --mpi-timeout (read here,
 * before any collective; the command's parser checks the value); 0, or -1
 * after a message. */
int cli_mpi_init(const char *cmd, int *argc, char ***argv, cli_mpi *mp);
/* MPI_Finalize; returns rc. */
int cli_mpi_finalize(int rc);
/* Collective: 1 when every rank passes ok != 0. Else 0, and rank 0 names
 * the lowest rank that failed at `what` (that rank printed its own
 * message). */
int cli_mpi_all_ok(const char *cmd, const cli_mpi *mp, int ok, const char *what);
/* The largest of every rank's value (MPI_MAX). */
int cli_mpi_max(int v);
/* The sum of every rank's value. */
int cli_mpi_sum(int v);
/* --mpi-timeout SECONDS: every wait for other ranks (the CLI's and
 * gpk::mpi's) gives up after that long without progress, naming the
 * silent ranks (gpk_mpi_set_timeout). The value: 0 on success (0 to 10^6
 * seconds, 0: no bound), -1 when bad. */
int cli_mpi_timeout_value(const char *text, double *seconds);
/* Sets MPI_COMM_WORLD's timeout from argv's --mpi-timeout (the default
 * without one). */
void cli_mpi_set_timeout(int argc, char **argv);
/* Waits for req (a collective of MPI_COMM_WORLD) within the timeout; a
 * rank that times out says why and ends the job (cli_mpi_lost). */
void cli_mpi_wait(const char *cmd, MPI_Request *req, const char *what);
/* Another rank went silent: msg (after this rank's number), the temporary
 * outputs removed, and the whole job ended (MPI_Abort): the ranks cannot
 * agree any more, and MPI_Finalize would wait for the silent rank. Does
 * not return. */
void cli_mpi_lost(const char *cmd, const char *msg);
/* Ranks other than 0 keep stderr quiet while on (arguments every rank
 * parses alike: rank 0 says what is wrong once). */
void cli_mpi_mute(const cli_mpi *mp, int on);
#endif

#endif
