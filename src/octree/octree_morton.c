/* The Morton builder (the modern baseline; Karras 2012 style): quantize
 * every particle to a 63-bit Morton code, sort the codes with the
 * permutation on gpk's radix sort (on the context's backend, so a CUDA
 * context sorts on the GPU), reorder the particles, then read the nodes
 * off the sorted codes. In sorted order the particles of any node are
 * contiguous (they share the top 3d code bits), and inside a node the
 * octant at its depth is non-decreasing, so a node's children are found by
 * binary search for the seven octant boundaries in its range. */
#include "octree_internal.h"
#include "gpk/sort.h"

#include <stdlib.h>
#include <string.h>

/* First index in [lo, hi) whose octant at `depth` is > octant, given that
 * the octants in the range are non-decreasing. */
static size_t octant_end(const uint64_t *codes, size_t lo, size_t hi, unsigned depth, unsigned octant)
{
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (octree_octant(codes[mid], depth) <= octant) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Sorts codes with their permutation on ctx's backend. A backend that
 * cannot sort u64 permutations (GPK_EUNSUPPORTED) is replaced by a CPU
 * context with the same thread count: the tree does not depend on where
 * the codes were sorted. */
static gpk_status sort_codes(gpk_ctx *ctx, uint64_t *codes, uint32_t *perm, size_t n)
{
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT; /* key_bits 0: only the bits where codes differ */
    gpk_status s = gpk_sort_perm(ctx, GPK_U64, codes, perm, n, &o);
    if (s == GPK_EUNSUPPORTED) {
        gpk_ctx_opts co = GPK_CTX_OPTS_INIT;
        co.backend = GPK_BACKEND_CPU;
        co.threads = ctx->threads;
        gpk_ctx *cpu = NULL;
        s = gpk_ctx_create_ex(&cpu, &co);
        if (s != GPK_OK)
            return gpk__fail(ctx, s,
                             "octree morton: the %s backend cannot sort u64 permutations "
                             "and no CPU context could be made: %s",
                             gpk_backend_name(ctx->backend), gpk_last_error(NULL));
        s = gpk_sort_perm(cpu, GPK_U64, codes, perm, n, &o);
        if (s != GPK_OK) {
            gpk__fail(ctx, s, "octree morton: sorting codes on the CPU fallback: %s", gpk_last_error(cpu));
            gpk_ctx_destroy(cpu);
            return s;
        }
        gpk_ctx_destroy(cpu);
        gpk__clear_error(ctx);
        return GPK_OK;
    }
    if (s != GPK_OK) {
        char msg[GPK_ERRLEN];
        memcpy(msg, ctx->err, sizeof msg);
        return gpk__fail(ctx, s, "octree morton: sorting the Morton codes: %s", msg);
    }
    return GPK_OK;
}

/* A growable node array (the builder is sequential: nodes are few next to
 * particles, and every node costs at most seven binary searches). */
typedef struct node_vec {
    gpk_octree_node *v;
    size_t len, cap;
} node_vec;

static gpk_status reserve(gpk_ctx *ctx, node_vec *nv, size_t extra)
{
    if (nv->len + extra <= nv->cap) return GPK_OK;
    size_t cap = nv->cap ? nv->cap : 64;
    while (cap < nv->len + extra) cap *= 2;
    gpk_octree_node *p = realloc(nv->v, cap * sizeof *p);
    if (!p) return gpk__fail(ctx, GPK_ENOMEM, "octree morton: out of memory for %zu nodes", cap);
    nv->v = p;
    nv->cap = cap;
    return GPK_OK;
}

/* Nodes in depth-first order from the sorted codes. The stack holds the
 * nodes still to split; a node at depth d is pushed only when it splits,
 * so the stack never holds more than 7 entries per level (the siblings
 * waiting) plus one: 8 * 21 + 1. */
static gpk_status build_nodes(const octree_job *job, const uint64_t *codes, node_vec *nv)
{
    gpk_ctx *ctx = job->ctx;
    const unsigned t = job->leaf_threshold;
    enum { STACK_MAX = 8 * GPK_OCTREE_MAX_DEPTH + 1 };
    size_t stack[STACK_MAX];
    size_t top = 0;

    gpk_status s = reserve(ctx, nv, 1);
    if (s != GPK_OK) return s;
    const uint32_t n = (uint32_t)job->n;
    const int root_splits = octree_splits(n, 0, t);
    gpk__octree_node_init(&nv->v[0], &job->root, 0, 0, 0, n, !root_splits);
    nv->len = 1;
    if (root_splits) stack[top++] = 0;

    while (top > 0) {
        const size_t ni = stack[--top];
        const gpk_octree_node parent = nv->v[ni]; /* a copy: reserve may move the array */
        const unsigned d = parent.depth;
        const uint64_t prefix = codes[parent.first] >> octree_shift(d) >> 3 << 3 << octree_shift(d);
        size_t begin[8], end[8];
        size_t k = 0, at = parent.first;
        const size_t stop = (size_t)parent.first + parent.count;
        for (unsigned o = 0; o < 8; o++) {
            begin[o] = at;
            end[o] = o == 7 ? stop : octant_end(codes, at, stop, d, o);
            at = end[o];
            if (end[o] > begin[o]) k++;
        }
        s = reserve(ctx, nv, k);
        if (s != GPK_OK) return s;
        /* Children get consecutive indices; those that split are pushed
         * in reverse so that octant 0 is split first (depth-first order). */
        size_t child = nv->len, pushed_from = top;
        for (unsigned o = 0; o < 8; o++) {
            if (end[o] == begin[o]) continue;
            const uint32_t count = (uint32_t)(end[o] - begin[o]);
            const int splits = octree_splits(count, d + 1, t);
            gpk__octree_node_init(&nv->v[child], &job->root, prefix | (uint64_t)o << octree_shift(d), d + 1,
                                  (uint32_t)begin[o], count, !splits);
            nv->v[ni].child[o] = (int32_t)child;
            if (splits) {
                if (top >= STACK_MAX)
                    return gpk__fail(ctx, GPK_EINVAL, "octree morton: internal stack overflow");
                stack[top++] = child;
            }
            child++;
        }
        nv->len = child;
        for (size_t a = pushed_from, b = top; a + 1 < b; a++, b--) {
            const size_t tmp = stack[a];
            stack[a] = stack[b - 1];
            stack[b - 1] = tmp;
        }
    }
    if (nv->len > (size_t)INT32_MAX)
        return gpk__fail(ctx, GPK_ENOMEM, "octree morton: %zu nodes do not fit int32 links", nv->len);
    return GPK_OK;
}

gpk_status gpk__octree_build_morton(const octree_job *job, gpk_octree *tree)
{
    gpk_ctx *ctx = job->ctx;
    const size_t n = job->n;
    gpk_status s = GPK_OK;
    node_vec nv = {NULL, 0, 0};
    uint64_t *codes = malloc(n * sizeof *codes);
    uint32_t *perm = malloc(n * sizeof *perm);
    float *xyz = malloc(3 * n * sizeof *xyz);
    if (!codes || !perm || !xyz) {
        s = gpk__fail(ctx, GPK_ENOMEM, "octree morton: out of memory for %zu particles", n);
        goto fail;
    }
    gpk__octree_codes(job->xyz, n, &job->root, codes, ctx->threads);
    GPK_CHECK_GOTO(sort_codes(ctx, codes, perm, n), s, fail);
    gpk__octree_gather(job->xyz, perm, n, xyz, ctx->threads);
    GPK_CHECK_GOTO(build_nodes(job, codes, &nv), s, fail);
    free(codes);
    tree->nodes = nv.v;
    tree->n_nodes = nv.len;
    tree->xyz = xyz;
    tree->perm = perm;
    tree->tasks = nv.len;
    return GPK_OK;

fail:
    free(nv.v);
    free(codes);
    free(perm);
    free(xyz);
    return s;
}
