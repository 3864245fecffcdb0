/* What the octree's front end (octree.c) and its builders share: the
 * canonical quantization (root cube, Morton codes, node boxes), the gather
 * and the argument checks. The builders and the front end call it; it
 * calls none of them. */
#include "octree_internal.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* ---- quantization ------------------------------------------------------------ */

int gpk__octree_root(const float *xyz, size_t n, octree_root *root, int threads)
{
    double lo[3], hi[3];
    for (int a = 0; a < 3; a++) lo[a] = hi[a] = xyz[a];
    /* Three scalar reductions per bound: OpenMP min/max reductions do not
     * take array sections in every compiler we meet. */
    double lx = lo[0], ly = lo[1], lz = lo[2], hx = hi[0], hy = hi[1], hz = hi[2];
    int finite = 1;
    const long long nn = (long long)n;
#pragma omp parallel for reduction(min : lx, ly, lz) reduction(max : hx, hy, hz) reduction(&& : finite) \
    if (n > 65536) num_threads(threads)
    for (long long i = 0; i < nn; i++) {
        const float *p = xyz + 3 * (size_t)i;
        finite = finite && isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]);
        lx = p[0] < lx ? p[0] : lx;
        ly = p[1] < ly ? p[1] : ly;
        lz = p[2] < lz ? p[2] : lz;
        hx = p[0] > hx ? p[0] : hx;
        hy = p[1] > hy ? p[1] : hy;
        hz = p[2] > hz ? p[2] : hz;
    }
    const float blo[3] = {(float)lx, (float)ly, (float)lz}, bhi[3] = {(float)hx, (float)hy, (float)hz};
    gpk__octree_root_from_bounds(blo, bhi, root);
    return finite;
}

void gpk__octree_root_from_bounds(const float lo[3], const float hi[3], octree_root *root)
{
    double side = 0.0;
    for (int a = 0; a < 3; a++) {
        root->lo[a] = lo[a];
        if ((double)hi[a] - (double)lo[a] > side) side = (double)hi[a] - (double)lo[a];
    }
    /* All particles at one point (or a degenerate extent): any positive
     * side quantizes them all to cell 0; 1.0 keeps the boxes readable. */
    if (!(side > 0.0) || !isnormal(side)) side = 1.0;
    root->side = side;
}

/* q = floor((x - lo) / side * 2^21) in double, clamped to [0, 2^21 - 1]
 * (octree.h). x >= lo always holds, so truncation is the floor; the
 * particles on the far faces of the root (x = lo + side) land in the last
 * cell. */
static uint32_t quantize(float x, double lo, double side)
{
    const double t = ((double)x - lo) / side * (double)OCTREE_QCELLS;
    if (!(t > 0.0)) return 0;
    if (t >= (double)(OCTREE_QCELLS - 1u)) return OCTREE_QCELLS - 1u;
    return (uint32_t)t;
}

void gpk__octree_codes(const float *xyz, size_t n, const octree_root *root, uint64_t *codes, int threads)
{
    const long long nn = (long long)n;
#pragma omp parallel for schedule(static) if (n > 65536) num_threads(threads)
    for (long long i = 0; i < nn; i++) {
        const float *p = xyz + 3 * (size_t)i;
        const uint64_t qx = quantize(p[0], root->lo[0], root->side);
        const uint64_t qy = quantize(p[1], root->lo[1], root->side);
        const uint64_t qz = quantize(p[2], root->lo[2], root->side);
        codes[i] = octree_spread3(qx) << 2 | octree_spread3(qy) << 1 | octree_spread3(qz);
    }
}

void gpk__octree_node_box(const octree_root *root, uint64_t prefix, unsigned depth, float lo[3], float hi[3])
{
    const double cell = 0x1p-21;                    /* one deepest cell, as a fraction of the side */
    const uint32_t extent = OCTREE_QCELLS >> depth; /* the node's side in deepest cells */
    const uint32_t corner[3] = {octree_compact3(prefix >> 2), octree_compact3(prefix >> 1),
                                octree_compact3(prefix)};
    for (int a = 0; a < 3; a++) {
        lo[a] = (float)(root->lo[a] + root->side * ((double)corner[a] * cell));
        hi[a] = (float)(root->lo[a] + root->side * ((double)(corner[a] + extent) * cell));
    }
}

void gpk__octree_node_init(gpk_octree_node *node, const octree_root *root, uint64_t prefix, unsigned depth,
                           uint32_t first, uint32_t count, int leaf)
{
    gpk__octree_node_box(root, prefix, depth, node->lo, node->hi);
    for (int o = 0; o < 8; o++) node->child[o] = -1;
    node->first = first;
    node->count = count;
    node->depth = depth;
    node->leaf = leaf ? 1u : 0u;
}

void gpk__octree_gather(const float *xyz, const uint32_t *perm, size_t n, float *out, int threads)
{
    const long long nn = (long long)n;
#pragma omp parallel for schedule(static) if (n > 65536) num_threads(threads)
    for (long long i = 0; i < nn; i++) {
        const float *src = xyz + 3 * (size_t)perm[i];
        float *dst = out + 3 * (size_t)i;
        dst[0] = src[0];
        dst[1] = src[1];
        dst[2] = src[2];
    }
}

gpk_status gpk__octree_check_args(gpk_ctx *ctx, const void *xyz, const char *xyz_name, size_t n,
                                  unsigned leaf_threshold, gpk_octree_scheme scheme, const void *tree)
{
    if (!tree) return gpk__fail(ctx, GPK_EINVAL, "octree: tree is NULL");
    if (n > 0 && !xyz) return gpk__fail(ctx, GPK_EINVAL, "octree: %s is NULL with n = %zu", xyz_name, n);
    if (n > (size_t)UINT32_MAX)
        return gpk__fail(ctx, GPK_EINVAL, "octree: n = %zu particles, at most 2^32 - 1", n);
    if (leaf_threshold < 1) return gpk__fail(ctx, GPK_EINVAL, "octree: leaf_threshold must be >= 1");
    if ((int)scheme < (int)GPK_OCTREE_STATIC || (int)scheme > (int)GPK_OCTREE_MORTON)
        return gpk__fail(ctx, GPK_EINVAL, "octree: unknown scheme %d", (int)scheme);
    return GPK_OK;
}
