/* Octree partitioning of particles (Cederman & Tsigas 2008, Section 5),
 * built with a task pool (gpk/pool.h) or, as the modern baseline, from
 * sorted Morton codes (Karras 2012 style, on gpk's radix sort).
 *
 * The tree. The root is the bounding cube of the particles: the smallest
 * axis-aligned cube at their minimum corner that holds them all. Every
 * particle gets integer coordinates q = floor((x - lo) / side * 2^21),
 * clamped to [0, 2^21 - 1] per axis; at depth d (root: 0) a node splits
 * into the eight octants given by bit 20 - d of (qx, qy, qz), octant
 * number = 4 * xbit + 2 * ybit + zbit. A node with more than
 * leaf_threshold particles splits, unless it is at GPK_OCTREE_MAX_DEPTH;
 * empty octants get no node. Both builders decide on the same integers, so
 * every scheme gives the same leaves (the same boxes, in the same order,
 * with the same particles); only node numbering and the order of the
 * particles inside a leaf may differ.
 *
 * Output: nodes[0] is the root; every node has its box, its depth, its
 * particle range [first, first + count) in the reordered arrays, and the
 * indices of its children (-1 for an empty octant; all -1 for a leaf).
 * Leaves appear in Morton order along the particle arrays.
 *
 * Limits: n <= 2^32 - 1 particles (particle ranges and perm are u32; more
 * is GPK_EINVAL), at most 2^31 - 1 nodes (int32 child links; more is
 * GPK_ENOMEM), depth at most GPK_OCTREE_MAX_DEPTH. The sorts themselves
 * have no such limit (gpk/sort.h). */
#ifndef GPK_OCTREE_H
#define GPK_OCTREE_H

#include "gpk.h"
#include "pool.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GPK_OCTREE_MAX_DEPTH 21

typedef enum gpk_octree_scheme {
    GPK_OCTREE_STATIC = GPK_POOL_STATIC,
    GPK_OCTREE_BLOCKING = GPK_POOL_BLOCKING,
    GPK_OCTREE_LOCKFREE = GPK_POOL_LOCKFREE,
    GPK_OCTREE_STEAL = GPK_POOL_STEAL,
    GPK_OCTREE_MORTON = 4 /* Morton codes, radix sort, leaves and nodes from the sorted codes */
} gpk_octree_scheme;

typedef struct gpk_octree_node {
    float lo[3], hi[3]; /* the node's box */
    int32_t child[8];   /* node index per octant, -1 if empty (all -1: a leaf) */
    uint32_t first;     /* particle range in the reordered arrays */
    uint32_t count;
    uint32_t depth; /* root: 0 */
    uint32_t leaf;  /* 1 for a leaf */
} gpk_octree_node;

typedef struct gpk_octree {
    gpk_octree_node *nodes;
    size_t n_nodes;
    size_t n;       /* particles */
    float *xyz;     /* 3n floats: the particles reordered, leaves contiguous */
    uint32_t *perm; /* n: perm[i] = input index of reordered particle i */
    uint64_t tasks; /* pool schemes: the tasks the pool ran, one per node that
                            split (root included; leaves are not tasks); Morton: nodes */
    unsigned depth; /* deepest leaf */
    size_t leaves;
    double ms;        /* wall time of the build (host clock, includes transfers) */
    double device_ms; /* CUDA: the build on the device, from the particles in device
                            memory to the nodes and reordered particles there (CUDA
                            events; gpk_cuda_octree_build takes this plus the cudaMalloc
                            of its three output arrays); 0 elsewhere */
    double pool_ms;   /* pool schemes: the pool's run alone, a part of the build (CUDA:
                            the persistent kernel, CUDA events; CPU: gpk_pool_run's wall
                            time); 0 for Morton */
} gpk_octree;

typedef struct gpk_octree_opts {
    gpk_pool_opts pool;  /* workers, capacity, victim choice (pool schemes) */
    unsigned blocks;     /* CUDA pool schemes: thread blocks of the persistent kernel
                            (0: as many as are resident at once; more are refused,
                            since spinning blocks must all be resident) */
    unsigned threads;    /* CUDA pool schemes: threads per block (0: 64, the paper's
                            best for work stealing) */
    unsigned grid_split; /* CUDA pool schemes: a task of more particles than this is split
                            by the whole grid, level by level, before the pool starts
                            (one block would stream it alone), and so is one of more
                            than grid_split / 16 while the pool would start with fewer
                            tasks than blocks; 0: the default GPK_OCTREE_GRID_SPLIT;
                            UINT_MAX: every task in the pool, as in the paper */
} gpk_octree_opts;
#define GPK_OCTREE_GRID_SPLIT 65536u
#define GPK_OCTREE_OPTS_INIT           \
    {                                  \
        GPK_POOL_OPTS_INIT, 0u, 0u, 0u \
    }

/* xyz: n particles as x0 y0 z0 x1 y1 z1 ... (finite floats). n = 0 gives
 * an empty tree (no nodes). leaf_threshold >= 1. NaN or infinite
 * coordinates: GPK_EINVAL naming the first bad particle. *tree is filled
 * only on success; free it with gpk_octree_free. */
GPK_API gpk_status gpk_octree_build(gpk_ctx *ctx, const float *xyz, size_t n, unsigned leaf_threshold,
                                    gpk_octree_scheme scheme, const gpk_octree_opts *opts, gpk_octree *tree);
GPK_API void gpk_octree_free(gpk_octree *tree);

/* "static", "blocking" (also "queue"), "lockfree" (also "lock-free"),
 * "steal" (also "stealing"), "morton"; the parse is case-blind. */
GPK_API const char *gpk_octree_scheme_name(gpk_octree_scheme s);
GPK_API gpk_status gpk_octree_scheme_parse(const char *name, gpk_octree_scheme *out);

/* Particle distributions of the paper (uniform, tube) and a clustered one,
 * seeded, the same on every machine: 3n floats into xyz. */
typedef enum gpk_particle_dist {
    GPK_PARTICLES_UNIFORM = 0, /* uniform in the unit cube */
    GPK_PARTICLES_TUBE = 1,    /* uniform in a thin-walled tube along z (the paper's Figure 1):
                                  radius in [0.45, 0.5] around (0.5, 0.5), z in [0, 1) */
    GPK_PARTICLES_PLUMMER = 2  /* Plummer sphere (scale 0.01) centred in the unit cube,
                                  radii cut at 0.5: a deep, unbalanced tree */
} gpk_particle_dist;
GPK_API gpk_status gpk_particles_generate(gpk_particle_dist dist, float *xyz, size_t n, uint64_t seed);
GPK_API const char *gpk_particle_dist_name(gpk_particle_dist d);
GPK_API gpk_status gpk_particle_dist_parse(const char *name, gpk_particle_dist *out);

#ifdef __cplusplus
}
#endif
#endif
