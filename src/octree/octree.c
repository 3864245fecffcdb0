/* Octree dispatch: validation, the canonical quantization shared by both
 * builders, node boxes, tree statistics, scheme names (include/gpk/octree.h). */
#include "octree_internal.h"
#ifdef GPK_HAVE_CUDA_OCTREE
#include "octree_cuda_internal.h"
#endif

#include <ctype.h>
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

void gpk__octree_codes(const float *xyz, size_t n, const octree_root *root, uint64_t *codes,
                       int threads)
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

void gpk__octree_node_box(const octree_root *root, uint64_t prefix, unsigned depth, float lo[3],
                          float hi[3])
{
    const double cell = 0x1p-21; /* one deepest cell, as a fraction of the side */
    const uint32_t extent = OCTREE_QCELLS >> depth; /* the node's side in deepest cells */
    const uint32_t corner[3] = {octree_compact3(prefix >> 2), octree_compact3(prefix >> 1), octree_compact3(prefix)};
    for (int a = 0; a < 3; a++) {
        lo[a] = (float)(root->lo[a] + root->side * ((double)corner[a] * cell));
        hi[a] = (float)(root->lo[a] + root->side * ((double)(corner[a] + extent) * cell));
    }
}

void gpk__octree_node_init(gpk_octree_node *node, const octree_root *root, uint64_t prefix,
                           unsigned depth, uint32_t first, uint32_t count, int leaf)
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

/* ---- build ------------------------------------------------------------------- */

/* Index of the first particle with a NaN or infinite coordinate, or n: only
 * for the message, once gpk__octree_root has seen that there is one. */
static size_t first_nonfinite(const float *xyz, size_t n, int threads)
{
    long long bad = (long long)n;
    const long long nn = (long long)n;
#pragma omp parallel for reduction(min : bad) if (n > 65536) num_threads(threads)
    for (long long i = 0; i < nn; i++) {
        const float *p = xyz + 3 * (size_t)i;
        if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2])) bad = i < bad ? i : bad;
    }
    return (size_t)bad;
}

/* Leaves and deepest leaf, from the finished node array. */
static void tree_stats(gpk_octree *tree)
{
    size_t leaves = 0;
    unsigned depth = 0;
    for (size_t i = 0; i < tree->n_nodes; i++) {
        const gpk_octree_node *nd = &tree->nodes[i];
        if (!nd->leaf) continue;
        leaves++;
        if (nd->depth > depth) depth = nd->depth;
    }
    tree->leaves = leaves;
    tree->depth = depth;
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

gpk_status gpk_octree_build(gpk_ctx *ctx, const float *xyz, size_t n, unsigned leaf_threshold,
                            gpk_octree_scheme scheme, const gpk_octree_opts *opts, gpk_octree *tree)
{
    if (!ctx) return GPK_EINVAL;
    gpk__clear_error(ctx);
    const gpk_status bad = gpk__octree_check_args(ctx, xyz, "xyz", n, leaf_threshold, scheme, tree);
    if (bad != GPK_OK) return bad;

    const gpk_octree_opts defaults = GPK_OCTREE_OPTS_INIT;
    gpk_octree built;
    memset(&built, 0, sizeof built);
    const double t0 = omp_get_wtime();
    int counted = 0; /* leaves and depth counted by the builder */
    if (n > 0) {
        octree_job job;
        memset(&job, 0, sizeof job);
        job.ctx = ctx;
        job.xyz = xyz;
        job.n = n;
        job.leaf_threshold = leaf_threshold;
        job.scheme = scheme;
        job.opts = opts ? opts : &defaults;
#ifdef GPK_HAVE_CUDA_OCTREE
        /* the CUDA builders find the root cube on the device */
        const int on_cuda = gpk_ctx_backend(ctx) == GPK_BACKEND_CUDA;
#else
        const int on_cuda = 0;
#endif
        /* one pass finds the root cube and whether every coordinate is finite */
        if (!on_cuda && !gpk__octree_root(xyz, n, &job.root, ctx->threads)) {
            const size_t bad = first_nonfinite(xyz, n, ctx->threads);
            return gpk__fail(ctx, GPK_EINVAL,
                             "octree: particle %zu has a non-finite coordinate (%g, %g, %g)", bad,
                             (double)xyz[3 * bad], (double)xyz[3 * bad + 1], (double)xyz[3 * bad + 2]);
        }
#ifdef GPK_HAVE_CUDA_OCTREE
        const gpk_status s = on_cuda                       ? gpk__octree_build_cuda(&job, &built)
                             : scheme == GPK_OCTREE_MORTON ? gpk__octree_build_morton(&job, &built)
                                                           : gpk__octree_build_pool(&job, &built);
#else
        const gpk_status s = scheme == GPK_OCTREE_MORTON ? gpk__octree_build_morton(&job, &built)
                                                         : gpk__octree_build_pool(&job, &built);
#endif
        if (s != GPK_OK) {
            gpk_octree_free(&built);
            return s;
        }
        counted = on_cuda;
    }
    built.n = n;
    if (!counted) tree_stats(&built);
    built.ms = (omp_get_wtime() - t0) * 1e3;
    *tree = built;
    return GPK_OK;
}

void gpk_octree_free(gpk_octree *tree)
{
    if (!tree) return;
    free(tree->nodes);
    free(tree->xyz);
    free(tree->perm);
    memset(tree, 0, sizeof *tree);
}

/* ---- names ------------------------------------------------------------------- */

static int same_name(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
    return *a == *b;
}

static const struct {
    const char *name;
    gpk_octree_scheme scheme;
} scheme_names[] = {
    /* the canonical name of each scheme first: gpk_octree_scheme_name returns it */
    {"static", GPK_OCTREE_STATIC},     {"blocking", GPK_OCTREE_BLOCKING},
    {"lockfree", GPK_OCTREE_LOCKFREE}, {"steal", GPK_OCTREE_STEAL},
    {"morton", GPK_OCTREE_MORTON},     {"queue", GPK_OCTREE_BLOCKING},
    {"lock-free", GPK_OCTREE_LOCKFREE}, {"stealing", GPK_OCTREE_STEAL},
};

const char *gpk_octree_scheme_name(gpk_octree_scheme s)
{
    for (size_t i = 0; i < sizeof scheme_names / sizeof scheme_names[0]; i++)
        if (scheme_names[i].scheme == s) return scheme_names[i].name;
    return "unknown";
}

gpk_status gpk_octree_scheme_parse(const char *name, gpk_octree_scheme *out)
{
    if (!name || !out) return GPK_EINVAL;
    for (size_t i = 0; i < sizeof scheme_names / sizeof scheme_names[0]; i++)
        if (same_name(name, scheme_names[i].name)) {
            *out = scheme_names[i].scheme;
            return GPK_OK;
        }
    return GPK_EINVAL;
}
