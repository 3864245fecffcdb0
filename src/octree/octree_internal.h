/* Octree internals shared by the dispatch (octree.c), the Morton builder
 * (octree_morton.c) and the task-pool builder (octree_pool.c).
 *
 * Both builders decide on the same integers: every particle is quantized
 * once to a 63-bit Morton code (21 bits per axis, interleaved x y z from
 * the top, so the three bits at depth d are bits 3*(20-d) + 2 .. + 0 and
 * read 4*xbit + 2*ybit + zbit, the octant number of octree.h). A node at
 * depth d is named by the top 3d bits of the codes it holds (its
 * "prefix"), and its box is computed from that prefix by one function,
 * octree_node_box, so the two builders produce bit-identical boxes. */
#ifndef GPK_OCTREE_INTERNAL_H
#define GPK_OCTREE_INTERNAL_H

#include "../core/internal.h"
#include "gpk/octree.h"

#ifdef __cplusplus
extern "C" { /* the CUDA builders (octree_cuda*.cu) call these */
#endif

#define OCTREE_QBITS 21u                   /* bits per axis = GPK_OCTREE_MAX_DEPTH */
#define OCTREE_QCELLS (1u << OCTREE_QBITS) /* 2^21 cells per axis at the deepest level */

/* The root cube: minimum corner and side (in double; see octree.h). */
typedef struct octree_root {
    double lo[3];
    double side;
} octree_root;

/* Bit position of the lowest of the three octant bits at depth d (0..20). */
static inline unsigned octree_shift(unsigned depth) { return 3u * (OCTREE_QBITS - 1u - depth); }

#ifdef __CUDACC__
#define OCTREE_HD __host__ __device__
#else
#define OCTREE_HD
#endif

/* Spreads the low 21 bits of v to every third bit (bit i goes to bit 3i);
 * host and device build codes with this one function. */
static inline OCTREE_HD uint64_t octree_spread3(uint64_t v)
{
    v &= 0x1fffffull;
    v = (v | v << 32) & 0x1f00000000ffffull;
    v = (v | v << 16) & 0x1f0000ff0000ffull;
    v = (v | v << 8) & 0x100f00f00f00f00full;
    v = (v | v << 4) & 0x10c30c30c30c30c3ull;
    v = (v | v << 2) & 0x1249249249249249ull;
    return v;
}

/* Octant (0..7) of a code at depth d. */
/* The inverse of octree_spread3: gathers every third bit (from bit 0) into 21 bits. */
static inline OCTREE_HD uint32_t octree_compact3(uint64_t v)
{
    v &= 0x1249249249249249ull;
    v = (v ^ (v >> 2)) & 0x10c30c30c30c30c3ull;
    v = (v ^ (v >> 4)) & 0x100f00f00f00f00full;
    v = (v ^ (v >> 8)) & 0x1f0000ff0000ffull;
    v = (v ^ (v >> 16)) & 0x1f00000000ffffull;
    v = (v ^ (v >> 32)) & 0x1fffffull;
    return (uint32_t)v;
}

static inline unsigned octree_octant(uint64_t code, unsigned depth)
{
    return (unsigned)(code >> octree_shift(depth)) & 7u;
}

/* The OpenMP helpers below run on `threads` threads: the context's count
 * (ctx->threads), as every CPU region of the library does. */

/* Finds the root cube of n particles (n >= 1); returns 0 when a coordinate
 * is NaN or infinite (the cube is then meaningless), else 1. */
int gpk__octree_root(const float *xyz, size_t n, octree_root *root, int threads);

/* The root cube from the particles' bounds (what gpk__octree_root does after
 * its reduction; the CUDA builders reduce on the device). */
void gpk__octree_root_from_bounds(const float lo[3], const float hi[3], octree_root *root);

/* Morton codes of all particles (OpenMP parallel). */
void gpk__octree_codes(const float *xyz, size_t n, const octree_root *root, uint64_t *codes, int threads);

/* The box of the node at `depth` whose codes share `prefix` (lower bits zero). */
void gpk__octree_node_box(const octree_root *root, uint64_t prefix, unsigned depth, float lo[3], float hi[3]);

/* A node with every field set: box from (prefix, depth), no children, leaf
 * flag as given. */
void gpk__octree_node_init(gpk_octree_node *node, const octree_root *root, uint64_t prefix, unsigned depth,
                           uint32_t first, uint32_t count, int leaf);

/* Whether a node of `count` particles at `depth` splits. */
/* The most nodes a tree of n particles can have: the inner nodes of one
 * depth are disjoint and hold more than t particles each, so each of the
 * depths 0..20 has at most n / (t + 1); the leaves are non-empty and
 * disjoint (at most n), and at most 7 per inner node plus one. */
static inline size_t octree_node_bound(size_t n, unsigned t)
{
    const size_t inner = (size_t)GPK_OCTREE_MAX_DEPTH * (n / ((size_t)t + 1));
    const size_t leaves = n < 7 * inner + 1 ? n : 7 * inner + 1;
    return inner + leaves;
}

static inline int octree_splits(uint32_t count, unsigned depth, unsigned leaf_threshold)
{
    return count > leaf_threshold && depth < GPK_OCTREE_MAX_DEPTH;
}

/* What a builder gets: the validated input and the root cube. The builder
 * fills tree->nodes, n_nodes, xyz, perm and tasks; the dispatch fills the
 * rest (n, depth, leaves, ms) and frees a partial tree on failure. */
typedef struct octree_job {
    gpk_ctx *ctx;
    const float *xyz;
    size_t n; /* >= 1 */
    unsigned leaf_threshold;
    octree_root root;
    gpk_octree_scheme scheme;
    const gpk_octree_opts *opts; /* never NULL */
} octree_job;

/* The argument checks of gpk_octree_build and gpk_cuda_octree_build (ctx
 * not NULL; xyz_name names the particle pointer in the message). */
gpk_status gpk__octree_check_args(gpk_ctx *ctx, const void *xyz, const char *xyz_name, size_t n,
                                  unsigned leaf_threshold, gpk_octree_scheme scheme, const void *tree);

/* The CPU builders: the Morton scheme, and the pool schemes. */
gpk_status gpk__octree_build_morton(const octree_job *job, gpk_octree *tree);
gpk_status gpk__octree_build_pool(const octree_job *job, gpk_octree *tree);

/* A backend's octree builder: build runs every scheme (NULL: the CPU
 * builders, by scheme); own_root: it finds the root cube itself (job->root
 * is not read) and counts the leaves and the depth. */
typedef struct gpk__octree_backend {
    gpk_status (*build)(const octree_job *job, gpk_octree *tree);
    int own_root;
} gpk__octree_backend;

/* The builder of backend b (src/backends.c); NULL: the backend builds no
 * octree of its own (the CPU builders run). */
const gpk__octree_backend *gpk__octree_backend_of(gpk_backend b);

/* Gathers xyz into tree order: out[i] = xyz[perm[i]] (OpenMP parallel). */
void gpk__octree_gather(const float *xyz, const uint32_t *perm, size_t n, float *out, int threads);

#ifdef __cplusplus
}
#endif
#endif
