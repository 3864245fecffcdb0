/* The CUDA octree builders (built when CUDA is, unless
 * -DGPK_WITH_CUDA_OCTREE=OFF). The whole build runs on the device: the
 * root cube (a bounds reduction), the Morton codes (bit-identical to
 * gpk__octree_codes: the same double operations, nothing fused), then the
 * Morton builder (radix sort, nodes level by level; octree_cuda.cu) or the
 * pool builder (octree_cuda_pool.cu: the paper's one-task-per-block
 * partitioning on the device pools of gpk/pool_cuda.cuh, after the tasks
 * too large for one block are split by the whole grid). Both leave compact
 * node records on the device; one finish turns them into the gpk_octree_node
 * array (depth-first preorder, boxes bit-identical to gpk__octree_node_box)
 * and gathers the particles. Both give the CPU builders' leaves. */
#ifndef GPK_OCTREE_CUDA_INTERNAL_H
#define GPK_OCTREE_CUDA_INTERNAL_H

#include "octree_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every scheme on a CUDA context, host arrays in and out (gpk_octree_build).
 * Computes its own root cube; job->root is not read. */
gpk_status gpk__octree_build_cuda(const octree_job *job, gpk_octree *tree);

/* A node as the device builders record it (24 bytes). */
typedef struct octree_dnode {
    uint64_t prefix; /* the node's Morton prefix (octree.h) */
    uint32_t first, count;
    uint32_t parent;     /* record index of the parent; UINT32_MAX for the root */
    uint32_t depth_leaf; /* depth | leaf << 8 */
} octree_dnode;

#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__
#include <cuda_runtime.h>

/* What a device builder needs to know. */
typedef struct octree_cuda_job {
    gpk_ctx *ctx;
    cudaStream_t stream;
    size_t n; /* >= 1, < 2^32 */
    unsigned leaf_threshold;
    gpk_octree_scheme scheme;
    const gpk_octree_opts *opts; /* never NULL */
    const float *d_xyz;          /* the particles (device) */
    octree_root root;
} octree_cuda_job;

/* Launches the Morton codes of job->d_xyz into codes and the indices
 * 0..n-1 into idx (asynchronous on job->stream). */
gpk_status gpk__octree_cuda_codes(const octree_cuda_job *job, uint64_t *codes, uint32_t *idx);

/* The pool schemes. d_codes, d_idx: the n Morton codes and the input
 * indices 0..n-1; both are reordered in place into tree order (d_codes_tmp,
 * d_idx_tmp: scratch of n entries). *d_nodes receives the node records
 * (a temporary: gpk__cuda_temp_alloc on job->stream; the caller frees it
 * with gpk__cuda_temp_free), *n_nodes their number (record 0 is the
 * root), *tasks the tasks run (one per node that split); the pool kernel's
 * time (CUDA events) is added to *pool_ms. Synchronous. A restart (the
 * node estimate was too small) recomputes the codes with
 * gpk__octree_cuda_codes. */
gpk_status gpk__octree_cuda_pool(const octree_cuda_job *job, uint64_t *d_codes, uint32_t *d_idx,
                                 uint64_t *d_codes_tmp, uint32_t *d_idx_tmp, octree_dnode **d_nodes,
                                 size_t *n_nodes, uint64_t *tasks, double *pool_ms);
#endif
#endif
