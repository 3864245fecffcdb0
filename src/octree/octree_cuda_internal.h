/* The CUDA octree builders (built with -DGPK_WITH_CUDA_OCTREE=ON; see
 * CMakeLists.txt). octree.c calls gpk__octree_build_cuda for a CUDA
 * context; it computes the Morton codes on the device (bit-identical to
 * gpk__octree_codes: the same double operations, no contraction into fused
 * multiply-adds) and runs the Morton builder (octree_cuda.cu) or hands the
 * codes to the pool builder (octree_cuda_pool.cu), which runs the paper's
 * one-task-per-block partitioning on the device pools of gpk/pool_cuda.cuh.
 * Both fill the same tree as the CPU builders: the same leaves, in the same
 * order. */
#ifndef GPK_OCTREE_CUDA_INTERNAL_H
#define GPK_OCTREE_CUDA_INTERNAL_H

#include "octree_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every scheme on a CUDA context (job->ctx->backend == GPK_BACKEND_CUDA). */
gpk_status gpk__octree_build_cuda(const octree_job *job, gpk_octree *tree);

/* The pool schemes. d_codes, d_idx: the n Morton codes and the input
 * indices 0..n-1 in device memory (the builder may reorder both in place
 * and may use d_codes_tmp, d_idx_tmp, n entries each, as scratch). Fills
 * tree->nodes, n_nodes, perm, tasks (host arrays) and leaves d_idx in tree
 * order; the caller gathers tree->xyz. */
gpk_status gpk__octree_build_cuda_pool(const octree_job *job, uint64_t *d_codes, uint32_t *d_idx,
                                       uint64_t *d_codes_tmp, uint32_t *d_idx_tmp, gpk_octree *tree);

#ifdef __cplusplus
}
#endif
#endif
