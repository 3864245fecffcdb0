/* Paths the MPI tests force, as src/core/test_hooks.h does for libgpk: all
 * zero is the library's own choice. Exported from libgpk_mpi for its tests
 * only (not in the public headers); a test sets the same on every rank. */
#ifndef GPK_MPI_TEST_HOOKS_H
#define GPK_MPI_TEST_HOOKS_H

#include "gpk/gpk.h"
#include <stddef.h>

typedef struct gpk_mpi_test_hooks {
    int host_exchange_mpi; /* 1: host shards through MPI_Alltoallv, not the node's shared window */
    size_t
        chunk_bytes; /* > 0: point-to-point messages of this many bytes (the path of counts past INT_MAX) */
} gpk_mpi_test_hooks;

/* Sets the hooks (NULL: all back to zero). */
GPK_API void gpk__mpi_test_hooks_set(const gpk_mpi_test_hooks *hooks);

#endif
