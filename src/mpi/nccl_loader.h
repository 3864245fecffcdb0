/* The NCCL entry points gpk::mpi uses, opened at run time (nccl_loader.c):
 * libgpk_mpi names no libnccl among its NEEDED entries, so a CUDA build
 * loads and sorts on the CPU where NCCL (or CUDA) is not installed, and
 * the device sort then moves its shards another way. The types come from
 * nccl.h at build time; every nccl* call of the library goes through the
 * table below. Built only with GPK_HAVE_NCCL. */
#ifndef GPK_NCCL_LOADER_H
#define GPK_NCCL_LOADER_H

#include <nccl.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every NCCL function the library calls; a new call adds its name here. */
#define GPK_NCCL_FUNCTIONS(X) \
    X(ncclCommDestroy)        \
    X(ncclCommInitRank)       \
    X(ncclGetErrorString)     \
    X(ncclGetUniqueId)        \
    X(ncclGroupEnd)           \
    X(ncclGroupStart)         \
    X(ncclRecv)               \
    X(ncclSend)

typedef struct gpk_nccl_api {
#define GPK_NCCL_FIELD(f) __typeof__(&f) f;
    GPK_NCCL_FUNCTIONS(GPK_NCCL_FIELD)
#undef GPK_NCCL_FIELD
} gpk_nccl_api;

/* Filled by gpk__nccl_load. */
extern gpk_nccl_api gpk__nccl;

/* Opens NCCL (libnccl.so.2, then libnccl.so.2 in the directory the build
 * found NCCL in, then libnccl.so) once per process and fills gpk__nccl.
 * NULL when every function is there, else why NCCL cannot be used on this
 * rank ("NCCL (libnccl.so.2) could not be opened: ..."). Thread safe;
 * local (each rank answers for itself). */
const char *gpk__nccl_load(void);

#ifndef GPK_NCCL_LOADER_IMPL
#define ncclCommDestroy gpk__nccl.ncclCommDestroy
#define ncclCommInitRank gpk__nccl.ncclCommInitRank
#define ncclGetErrorString gpk__nccl.ncclGetErrorString
#define ncclGetUniqueId gpk__nccl.ncclGetUniqueId
#define ncclGroupEnd gpk__nccl.ncclGroupEnd
#define ncclGroupStart gpk__nccl.ncclGroupStart
#define ncclRecv gpk__nccl.ncclRecv
#define ncclSend gpk__nccl.ncclSend
#endif

#ifdef __cplusplus
}
#endif
#endif
