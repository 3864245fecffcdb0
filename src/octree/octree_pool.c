/* The task-pool builder of Cederman & Tsigas 2008, Section 5, on
 * gpk_pool_run (any of the four schemes).
 *
 * A task is a node that splits: its node index, its particle range, its
 * depth and its code prefix. The worker counts the particles of the eight
 * octants, moves the particles of each octant together (a stable counting
 * partition into scratch, copied back), creates the non-empty children and
 * pushes those that split again as new tasks; the others are leaves. What
 * moves is each particle's Morton code (its quantized position, see
 * octree_internal.h) with its input index; the coordinates are gathered
 * once at the end. Octants are laid out 0..7, so leaves end up in Morton
 * order, the same as the Morton builder's.
 *
 * Concurrency. Tasks in the pool at one time are never nested (a child is
 * pushed only by its parent's task, which has then left the pool), so the
 * ranges that running tasks partition are disjoint, and so are the scratch
 * regions they use. Node indices come from one atomic counter; the nodes
 * live in fixed-size chunks published with compare-and-swap, so the node
 * array needs no bound in memory, only in its table of chunks. A node's
 * fields are written by its parent's task before the push, and its child
 * links by its own task; the pool's push and pop order those writes. */
#include "octree_internal.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct octree_task {
    uint64_t prefix; /* the node's code bits above its depth */
    uint32_t node;
    uint32_t first;
    uint32_t count;
    uint32_t depth;
} octree_task;

#define CHUNK_BITS 14u /* 16384 nodes (1 MiB) per chunk */
#define CHUNK_NODES ((size_t)1 << CHUNK_BITS)

typedef struct pool_build {
    const octree_job *job;
    uint64_t *codes, *codes_tmp; /* moved together with idx */
    uint32_t *idx, *idx_tmp;     /* idx[i]: input index of the particle at i */
    _Atomic(gpk_octree_node *) *chunks;
    size_t n_chunks; /* table size: from the node bound */
    size_t node_bound;
    atomic_size_t next_node;
    atomic_int failed; /* the first failing worker writes message */
    char message[GPK_ERRLEN];
} pool_build;

/* Records the first worker failure (workers must not touch ctx). */
static gpk_status worker_fail(pool_build *b, gpk_status s, const char *msg, size_t value)
{
    if (atomic_exchange(&b->failed, 1) == 0)
        snprintf(b->message, sizeof b->message, "octree %s: %s (%zu)", gpk_octree_scheme_name(b->job->scheme),
                 msg, value);
    return s;
}

/* The chunk holding node i, allocated on first use. */
static gpk_octree_node *node_at(pool_build *b, size_t i)
{
    const size_t c = i >> CHUNK_BITS;
    gpk_octree_node *chunk = atomic_load_explicit(&b->chunks[c], memory_order_acquire);
    if (!chunk) {
        gpk_octree_node *fresh = malloc(CHUNK_NODES * sizeof *fresh);
        if (!fresh) return NULL;
        gpk_octree_node *expected = NULL;
        if (atomic_compare_exchange_strong_explicit(&b->chunks[c], &expected, fresh, memory_order_acq_rel,
                                                    memory_order_acquire)) {
            chunk = fresh;
        } else {
            free(fresh); /* another worker published this chunk first */
            chunk = expected;
        }
    }
    return &chunk[i & (CHUNK_NODES - 1)];
}

/* One task: split the node into its non-empty octants. */
static gpk_status split_node(gpk_pool_worker *w, const void *task_bytes, void *user)
{
    pool_build *b = user;
    octree_task t;
    memcpy(&t, task_bytes, sizeof t);
    const unsigned d = t.depth, shift = octree_shift(d);
    const size_t first = t.first, stop = (size_t)t.first + t.count;
    uint64_t *codes = b->codes, *codes_tmp = b->codes_tmp;
    uint32_t *idx = b->idx, *idx_tmp = b->idx_tmp;

    /* Count, then move each octant's particles together (stable). */
    size_t count[8] = {0}, at[8];
    for (size_t i = first; i < stop; i++) count[(codes[i] >> shift) & 7u]++;
    size_t k = 0, pos = first;
    for (unsigned o = 0; o < 8; o++) {
        at[o] = pos;
        pos += count[o];
        if (count[o]) k++;
    }
    for (size_t i = first; i < stop; i++) {
        const size_t dst = at[(codes[i] >> shift) & 7u]++;
        codes_tmp[dst] = codes[i];
        idx_tmp[dst] = idx[i];
    }
    memcpy(codes + first, codes_tmp + first, t.count * sizeof *codes);
    memcpy(idx + first, idx_tmp + first, t.count * sizeof *idx);

    /* The children take k consecutive node indices. */
    const size_t base = atomic_fetch_add_explicit(&b->next_node, k, memory_order_relaxed);
    if (base + k > b->node_bound)
        return worker_fail(b, GPK_EINVAL, "node count above its proven bound, an internal error", base + k);
    if (base + k > (size_t)INT32_MAX)
        return worker_fail(b, GPK_ENOMEM, "more nodes than int32 child links can name", base + k);
    gpk_octree_node *parent = node_at(b, t.node);
    if (!parent) return worker_fail(b, GPK_ENOMEM, "out of memory for nodes", t.node);

    size_t child = base, start = first;
    for (unsigned o = 0; o < 8; o++) {
        if (!count[o]) continue;
        gpk_octree_node *node = node_at(b, child);
        if (!node) return worker_fail(b, GPK_ENOMEM, "out of memory for nodes", child);
        const uint64_t prefix = t.prefix | (uint64_t)o << shift;
        const uint32_t c = (uint32_t)count[o];
        const int splits = octree_splits(c, d + 1, b->job->leaf_threshold);
        gpk__octree_node_init(node, &b->job->root, prefix, d + 1, (uint32_t)start, c, !splits);
        parent->child[o] = (int32_t)child;
        if (splits) {
            const octree_task sub = {prefix, (uint32_t)child, (uint32_t)start, c, d + 1};
            const gpk_status s = gpk_pool_push(w, &sub);
            if (s != GPK_OK) return s; /* the pool records why (a full queue) */
        }
        start += count[o];
        child++;
    }
    return GPK_OK;
}

gpk_status gpk__octree_build_pool(const octree_job *job, gpk_octree *tree)
{
    gpk_ctx *ctx = job->ctx;
    const size_t n = job->n;
    const unsigned t = job->leaf_threshold;
    gpk_status s = GPK_OK;
    pool_build b;
    memset(&b, 0, sizeof b);
    b.job = job;
    b.node_bound = octree_node_bound(n, t);
    b.n_chunks = (b.node_bound + CHUNK_NODES - 1) / CHUNK_NODES;
    atomic_init(&b.next_node, 1);
    atomic_init(&b.failed, 0);
    gpk_octree_node *nodes = NULL;
    float *xyz = NULL;
    b.codes = malloc(n * sizeof *b.codes);
    b.codes_tmp = malloc(n * sizeof *b.codes_tmp);
    b.idx = malloc(n * sizeof *b.idx);
    b.idx_tmp = malloc(n * sizeof *b.idx_tmp);
    b.chunks = malloc(b.n_chunks * sizeof *b.chunks);
    if (!b.codes || !b.codes_tmp || !b.idx || !b.idx_tmp || !b.chunks) {
        s = gpk__fail(ctx, GPK_ENOMEM, "octree %s: out of memory for %zu particles",
                      gpk_octree_scheme_name(job->scheme), n);
        goto done;
    }
    for (size_t c = 0; c < b.n_chunks; c++) atomic_init(&b.chunks[c], NULL);
    gpk__octree_codes(job->xyz, n, &job->root, b.codes, ctx->threads);
    for (size_t i = 0; i < n; i++) b.idx[i] = (uint32_t)i;

    gpk_octree_node *root = node_at(&b, 0);
    if (!root) {
        s = gpk__fail(ctx, GPK_ENOMEM, "octree: out of memory for nodes");
        goto done;
    }
    const int root_splits = octree_splits((uint32_t)n, 0, t);
    gpk__octree_node_init(root, &job->root, 0, 0, 0, (uint32_t)n, !root_splits);
    uint64_t tasks = 0;
    if (root_splits) {
        /* Tasks queued together are disjoint inner nodes, at most
         * n / (t + 1) of them: that capacity never overflows. A capacity
         * given in the options is used as is (GPK_EFULL if too small). */
        gpk_pool_opts po = job->opts->pool;
        if (po.capacity == 0) {
            const size_t pool_max = (size_t)1 << 30; /* gpk_pool_run's largest capacity */
            size_t cap = n / ((size_t)t + 1) + 1;
            if (cap < 64) cap = 64;
            po.capacity = cap < pool_max ? cap : pool_max;
        }
        const octree_task first_task = {0, 0, 0, (uint32_t)n, 0};
        gpk_pool_stats stats;
        s = gpk_pool_run(ctx, (gpk_pool_scheme)job->scheme, &first_task, 1, sizeof first_task, split_node, &b,
                         &po, &stats);
        if (s != GPK_OK) {
            if (atomic_load(&b.failed)) gpk__fail(ctx, s, "%s", b.message);
            goto done;
        }
        tasks = stats.tasks;
        tree->pool_ms = stats.ms;
    }

    /* The chunks into one array. */
    const size_t n_nodes = atomic_load(&b.next_node);
    nodes = malloc(n_nodes * sizeof *nodes);
    xyz = malloc(3 * n * sizeof *xyz);
    if (!nodes || !xyz) {
        s = gpk__fail(ctx, GPK_ENOMEM, "octree: out of memory for %zu nodes", n_nodes);
        goto done;
    }
    for (size_t i = 0; i < n_nodes; i += CHUNK_NODES) {
        const size_t len = n_nodes - i < CHUNK_NODES ? n_nodes - i : CHUNK_NODES;
        memcpy(nodes + i, atomic_load(&b.chunks[i >> CHUNK_BITS]), len * sizeof *nodes);
    }
    gpk__octree_gather(job->xyz, b.idx, n, xyz, ctx->threads);
    tree->nodes = nodes;
    tree->n_nodes = n_nodes;
    tree->xyz = xyz;
    tree->perm = b.idx;
    tree->tasks = tasks;
    nodes = NULL;
    xyz = NULL;
    b.idx = NULL; /* now the tree's */

done:
    if (b.chunks)
        for (size_t c = 0; c < b.n_chunks; c++) free(atomic_load(&b.chunks[c]));
    free(b.chunks);
    free(b.codes);
    free(b.codes_tmp);
    free(b.idx);
    free(b.idx_tmp);
    free(nodes);
    free(xyz);
    return s;
}
