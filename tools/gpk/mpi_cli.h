/* The CLI's --mpi (gpk qap|tsp|ppp, gpk sort under mpirun): MPI's start
 * and end, and the agreement of all ranks on whether to go on, so that a
 * rank that fails (a bad file, a missing device) never leaves the others
 * waiting in a collective. tools/gpk/mpi_cli.c, built when gpk::mpi is
 * (GPK_HAVE_MPI). Without --mpi no MPI call is made. */
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

#ifdef GPK_HAVE_MPI
typedef struct cli_mpi {
    int rank, size;             /* in MPI_COMM_WORLD */
    int local_rank, local_size; /* among the ranks of this node (MPI_COMM_TYPE_SHARED) */
} cli_mpi;

/* MPI_Init_thread (MPI_THREAD_FUNNELED: gpk's threads make no MPI call)
 * and the ranks; 0, or -1 after a message. */
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
/* Ranks other than 0 keep stderr quiet while on (arguments every rank
 * parses alike: rank 0 says what is wrong once). */
void cli_mpi_mute(const cli_mpi *mp, int on);
#endif

#endif
