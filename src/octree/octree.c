/* Octree dispatch: validation, the backend's builder (octree_backends.c),
 * tree statistics, scheme names (include/gpk/octree.h). */
#include "octree_internal.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

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
        octree_job job = {.ctx = ctx,
                          .xyz = xyz,
                          .n = n,
                          .leaf_threshold = leaf_threshold,
                          .scheme = scheme,
                          .opts = opts ? opts : &defaults};
        const gpk__octree_backend *be = gpk__octree_backend_of(ctx->backend);
        /* a builder that finds the root cube itself (on the device) also
         * counts the leaves and the depth */
        const int own_root = be && be->own_root;
        /* one pass finds the root cube and whether every coordinate is finite */
        if (!own_root && !gpk__octree_root(xyz, n, &job.root, ctx->threads)) {
            const size_t bad = first_nonfinite(xyz, n, ctx->threads);
            return gpk__fail(ctx, GPK_EINVAL, "octree: particle %zu has a non-finite coordinate (%g, %g, %g)",
                             bad, (double)xyz[3 * bad], (double)xyz[3 * bad + 1], (double)xyz[3 * bad + 2]);
        }
        const gpk_status s = be && be->build ? be->build(&job, &built)
            : scheme == GPK_OCTREE_MORTON    ? gpk__octree_build_morton(&job, &built)
                                             : gpk__octree_build_pool(&job, &built);
        if (s != GPK_OK) {
            gpk_octree_free(&built);
            return s;
        }
        counted = own_root;
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

/* the canonical name of each scheme first: gpk_octree_scheme_name returns it */
static const gpk__name_value scheme_names[] = {
    {"static", GPK_OCTREE_STATIC},      {"blocking", GPK_OCTREE_BLOCKING}, {"lockfree", GPK_OCTREE_LOCKFREE},
    {"steal", GPK_OCTREE_STEAL},        {"morton", GPK_OCTREE_MORTON},     {"queue", GPK_OCTREE_BLOCKING},
    {"lock-free", GPK_OCTREE_LOCKFREE}, {"stealing", GPK_OCTREE_STEAL},
};
GPK__NAME_FUNCTIONS(gpk_octree_scheme, gpk_octree_scheme_name, gpk_octree_scheme_parse, scheme_names)
