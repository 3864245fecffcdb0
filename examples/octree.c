/* Example (task pools, octree family): build the octree of a million
 * clustered particles through the work-stealing pool and walk its leaves.
 * Checks that each particle lies in exactly one leaf, inside its box.
 *   usage: octree [N] [SEED] */
#include <gpk/gpk.h>
#include <gpk/octree.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : (uint64_t)time(NULL);
    printf("octree: n = %zu, seed %llu\n", n, (unsigned long long)seed);
    float *xyz = malloc((n ? n : 1) * 3 * sizeof *xyz);
    unsigned char *seen = calloc(n ? n : 1, 1);
    if (!xyz || !seen) return 1;
    gpk_particles_generate(GPK_PARTICLES_PLUMMER, xyz, n, seed);
    gpk_ctx *ctx;
    if (gpk_ctx_create(&ctx, GPK_BACKEND_AUTO) != GPK_OK) {
        fprintf(stderr, "octree: %s\n", gpk_last_error(NULL));
        return 1;
    }
    gpk_octree t;
    gpk_octree_opts o = GPK_OCTREE_OPTS_INIT;
    if (gpk_octree_build(ctx, xyz, n, 20, GPK_OCTREE_STEAL, &o, &t) != GPK_OK) {
        fprintf(stderr, "octree: %s\n", gpk_last_error(ctx));
        return 1;
    }
    printf("octree: %zu nodes, %zu leaves, depth %u, %llu tasks, %.1f ms on %s\n", t.n_nodes, t.leaves,
           t.depth, (unsigned long long)t.tasks, t.ms, gpk_backend_name(gpk_ctx_backend(ctx)));
    size_t bad = 0, in_leaves = 0;
    for (size_t k = 0; k < t.n_nodes; k++) {
        const gpk_octree_node *nd = &t.nodes[k];
        if (!nd->leaf) continue;
        for (uint32_t i = nd->first; i < nd->first + nd->count; i++) {
            const float *q = &t.xyz[3 * (size_t)i];
            for (int d = 0; d < 3; d++) bad += q[d] < nd->lo[d] || q[d] > nd->hi[d];
            bad += seen[t.perm[i]]++ != 0; /* in two leaves */
            in_leaves++;
        }
    }
    const int ok = bad == 0 && in_leaves == n;
    printf("octree: %s\n", ok ? "every particle in one leaf, inside its box" : "BAD TREE");
    gpk_octree_free(&t);
    gpk_ctx_destroy(ctx);
    free(xyz);
    free(seen);
    return ok ? 0 : 1;
}
