/* Octrees from every scheme (the four task pools and the Morton builder)
 * against the definition in include/gpk/octree.h, and against each other:
 * particle sets of the three distributions, sizes from 0 to 300000,
 * thresholds 1, 20, 64, pool options; then bad input, degenerate sets and
 * the particle generators.
 * Usage: test_octree BACKEND. Exits 77 (skipped) when the backend has no
 * device here, unless GPK_REQUIRE_<BACKEND>=1 says it must run. */
#include "gpk/octree.h"
#include "testutil.h"
#ifdef GPK_HAVE_CUDA_OCTREE
#include "gpk/cuda.h"
#endif

#include <ctype.h>
#include <float.h>
#include <math.h>
#include <string.h>

static gpk_ctx *ctx;
static uint64_t seed_base;

#define QCELLS 2097152u /* 2^21 */
#define N_SCHEMES 5
static const gpk_octree_scheme schemes[N_SCHEMES] = {
    GPK_OCTREE_MORTON, GPK_OCTREE_STATIC, GPK_OCTREE_BLOCKING, GPK_OCTREE_LOCKFREE, GPK_OCTREE_STEAL};

/* ---- the definition, written out independently of the library ---------------- */

typedef struct ref_root {
    double lo[3], side;
} ref_root;

static ref_root root_of(const float *xyz, size_t n)
{
    ref_root r;
    double hi[3];
    for (int a = 0; a < 3; a++) r.lo[a] = hi[a] = xyz[a];
    for (size_t i = 0; i < n; i++)
        for (int a = 0; a < 3; a++) {
            if (xyz[3 * i + a] < r.lo[a]) r.lo[a] = xyz[3 * i + a];
            if (xyz[3 * i + a] > hi[a]) hi[a] = xyz[3 * i + a];
        }
    r.side = 0;
    for (int a = 0; a < 3; a++)
        if (hi[a] - r.lo[a] > r.side) r.side = hi[a] - r.lo[a];
    if (!(r.side > 0) || !isnormal(r.side)) r.side = 1.0;
    return r;
}

static uint32_t quant(float x, double lo, double side)
{
    double t = floor(((double)x - lo) / side * (double)QCELLS);
    if (t < 0) t = 0;
    if (t > QCELLS - 1) t = QCELLS - 1;
    return (uint32_t)t;
}

/* The box of the node whose integer corner is `corner` at depth d. */
static void box_of(const ref_root *r, const uint32_t corner[3], unsigned d, float lo[3], float hi[3])
{
    for (int a = 0; a < 3; a++) {
        lo[a] = (float)(r->lo[a] + r->side * ((double)corner[a] * 0x1p-21));
        hi[a] = (float)(r->lo[a] + r->side * ((double)(corner[a] + (QCELLS >> d)) * 0x1p-21));
    }
}

/* ---- one tree against the definition ------------------------------------------ */

typedef struct walk_item {
    int32_t node;
    uint32_t corner[3];
} walk_item;

/* Checks everything octree.h promises about one tree. Returns 1 when the
 * tree holds (so that comparisons between schemes are meaningful). */
static int check_tree(const gpk_octree *tr, const float *xyz, size_t n, unsigned t, gpk_octree_scheme sc,
                      const char *label)
{
    const int before = tu_failures;
    TU_CHECK(tr->n == n, "%s: n %zu, expected %zu", label, tr->n, n);
    if (n == 0) {
        TU_CHECK(tr->n_nodes == 0 && tr->nodes == NULL && tr->leaves == 0, "%s: empty tree has nodes", label);
        return tu_failures == before;
    }
    if (!tr->nodes || !tr->xyz || !tr->perm || tr->n_nodes == 0) {
        TU_CHECK(0, "%s: missing arrays", label);
        return 0;
    }
    /* perm is a permutation and xyz follows it bit for bit */
    unsigned char *seen = calloc(n, 1);
    uint32_t(*q)[3] = malloc(n * sizeof *q);
    walk_item *stack = malloc((tr->n_nodes + 1) * sizeof *stack);
    unsigned char *visited = calloc(tr->n_nodes, 1);
    if (!seen || !q || !stack || !visited) {
        fprintf(stderr, "test: out of memory\n");
        exit(1);
    }
    int perm_ok = 1;
    for (size_t i = 0; i < n && perm_ok; i++) {
        const uint32_t p = tr->perm[i];
        if (p >= n || seen[p]) perm_ok = 0;
        else seen[p] = 1;
        if (perm_ok && memcmp(tr->xyz + 3 * i, xyz + 3 * (size_t)p, 3 * sizeof(float)) != 0) perm_ok = 0;
    }
    TU_CHECK(perm_ok, "%s: perm is not a permutation or xyz does not follow it", label);
    if (!perm_ok) goto out;

    const ref_root r = root_of(xyz, n);
    for (size_t i = 0; i < n; i++)
        for (int a = 0; a < 3; a++) q[i][a] = quant(tr->xyz[3 * i + a], r.lo[a], r.side);
    /* Float containment tolerance: a box face is the double value rounded
     * to float (half an ulp of the coordinate's magnitude), and the double
     * quotient that decides the cell may put a particle lying within a few
     * double ulps of a face on either side of it; together less than one
     * float ulp of the largest magnitude, 2 * FLT_EPSILON * mag covers it.
     * The exact check is the integer one (the particle's quantized
     * coordinates start with the node's path). */
    double mag = 0;
    for (int a = 0; a < 3; a++) {
        if (fabs(r.lo[a]) > mag) mag = fabs(r.lo[a]);
        if (fabs(r.lo[a] + r.side) > mag) mag = fabs(r.lo[a] + r.side);
    }
    const double tol = 2.0 * FLT_EPSILON * mag;

    size_t top = 0, reached = 0, leaves = 0, inner = 0, next_first = 0;
    unsigned depth = 0;
    stack[top++] = (walk_item){0, {0, 0, 0}};
    int ok = 1;
    while (top > 0 && ok) {
        const walk_item it = stack[--top];
        if (it.node < 0 || (size_t)it.node >= tr->n_nodes || visited[it.node]) {
            TU_CHECK(0, "%s: node %d out of range or reached twice", label, (int)it.node);
            ok = 0;
            break;
        }
        visited[it.node] = 1;
        reached++;
        const gpk_octree_node *nd = &tr->nodes[it.node];
        const unsigned d = nd->depth;
        float lo[3], hi[3];
        box_of(&r, it.corner, d, lo, hi);
        if (memcmp(lo, nd->lo, sizeof lo) != 0 || memcmp(hi, nd->hi, sizeof hi) != 0) {
            TU_CHECK(0, "%s: node %d box (%g %g %g)-(%g %g %g), expected (%g %g %g)-(%g %g %g)", label,
                     (int)it.node, nd->lo[0], nd->lo[1], nd->lo[2], nd->hi[0], nd->hi[1], nd->hi[2], lo[0],
                     lo[1], lo[2], hi[0], hi[1], hi[2]);
            ok = 0;
        }
        int n_children = 0;
        for (int o = 0; o < 8; o++) n_children += nd->child[o] >= 0;
        if ((n_children == 0) != (nd->leaf == 1) || nd->count == 0 || (size_t)nd->first + nd->count > n) {
            TU_CHECK(0, "%s: node %d leaf flag %u with %d children, range %u+%u", label, (int)it.node,
                     nd->leaf, n_children, nd->first, nd->count);
            ok = 0;
            break;
        }
        const int should_split = nd->count > t && d < GPK_OCTREE_MAX_DEPTH;
        if (should_split != !nd->leaf) {
            TU_CHECK(0, "%s: node %d depth %u count %u threshold %u: leaf %u", label, (int)it.node, d,
                     nd->count, t, nd->leaf);
            ok = 0;
        }
        if (nd->leaf) {
            leaves++;
            if (d > depth) depth = d;
            /* leaves tile [0, n) in depth-first octant order */
            if (nd->first != next_first) {
                TU_CHECK(0, "%s: leaf %d starts at %u, expected %zu", label, (int)it.node, nd->first,
                         next_first);
                ok = 0;
            }
            next_first = (size_t)nd->first + nd->count;
            for (size_t i = nd->first; i < next_first && ok; i++) {
                for (int a = 0; a < 3; a++) {
                    const unsigned sh = GPK_OCTREE_MAX_DEPTH - d; /* the bits below the node */
                    const float x = tr->xyz[3 * i + a];
                    if ((q[i][a] >> sh) != (it.corner[a] >> sh) || x < lo[a] - tol || x > hi[a] + tol) {
                        TU_CHECK(
                            0,
                            "%s: particle %zu (axis %d: %.9g, cell %u) outside leaf %d [%.9g, %.9g] depth %u",
                            label, i, a, x, q[i][a], (int)it.node, lo[a], hi[a], d);
                        ok = 0;
                        break;
                    }
                }
            }
        } else {
            inner++;
            /* children tile the parent's range in octant order; pushed in
             * reverse so that octant 0 is walked first */
            size_t at = nd->first;
            for (int o = 0; o < 8; o++) {
                if (nd->child[o] < 0) continue;
                if ((size_t)nd->child[o] >= tr->n_nodes) {
                    TU_CHECK(0, "%s: child link %d out of range", label, (int)nd->child[o]);
                    ok = 0;
                    break;
                }
                const gpk_octree_node *c = &tr->nodes[nd->child[o]];
                if (c->first != at || c->depth != d + 1) {
                    TU_CHECK(0,
                             "%s: node %d octant %d: child range %u+%u depth %u, expected start %zu depth %u",
                             label, (int)it.node, o, c->first, c->count, c->depth, at, d + 1);
                    ok = 0;
                }
                at += c->count;
            }
            if (at != (size_t)nd->first + nd->count) {
                TU_CHECK(0, "%s: node %d children cover %zu of %u+%u", label, (int)it.node, at, nd->first,
                         nd->count);
                ok = 0;
            }
            for (int o = 7; o >= 0 && ok; o--) {
                if (nd->child[o] < 0) continue;
                walk_item c = {nd->child[o], {0, 0, 0}};
                const unsigned bit = GPK_OCTREE_MAX_DEPTH - 1 - d;
                c.corner[0] = it.corner[0] | (uint32_t)((o >> 2) & 1) << bit;
                c.corner[1] = it.corner[1] | (uint32_t)((o >> 1) & 1) << bit;
                c.corner[2] = it.corner[2] | (uint32_t)(o & 1) << bit;
                stack[top++] = c;
            }
        }
    }
    if (ok) {
        TU_CHECK(tr->nodes[0].depth == 0 && tr->nodes[0].first == 0 && tr->nodes[0].count == n,
                 "%s: root is not node 0 over all particles", label);
        TU_CHECK(reached == tr->n_nodes, "%s: %zu of %zu nodes reachable from the root", label, reached,
                 tr->n_nodes);
        TU_CHECK(next_first == n, "%s: leaves cover %zu of %zu particles", label, next_first, n);
        TU_CHECK(leaves == tr->leaves && depth == tr->depth, "%s: stats leaves %zu depth %u, counted %zu %u",
                 label, tr->leaves, tr->depth, leaves, depth);
        const uint64_t expect_tasks = sc == GPK_OCTREE_MORTON ? (uint64_t)tr->n_nodes : (uint64_t)inner;
        TU_CHECK(tr->tasks == expect_tasks, "%s: tasks %llu, expected %llu", label,
                 (unsigned long long)tr->tasks, (unsigned long long)expect_tasks);
    }
out:
    free(seen);
    free(q);
    free(stack);
    free(visited);
    return tu_failures == before;
}

/* ---- canonical leaves, to compare schemes --------------------------------------- */

typedef struct leaf_key {
    float lo[3], hi[3];
    uint32_t first, count, depth;
} leaf_key;

typedef struct canon {
    leaf_key *leaves; /* in particle order */
    size_t n_leaves;
    uint32_t *members; /* perm with each leaf's range sorted */
} canon;

static int cmp_u32(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int cmp_leaf(const void *a, const void *b)
{
    const leaf_key *x = a, *y = b;
    return (x->first > y->first) - (x->first < y->first);
}

static canon canon_of(const gpk_octree *tr)
{
    canon c = {NULL, 0, NULL};
    c.leaves = malloc((tr->leaves + 1) * sizeof *c.leaves);
    c.members = malloc((tr->n + 1) * sizeof *c.members);
    if (!c.leaves || !c.members) {
        fprintf(stderr, "test: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < tr->n_nodes; i++) {
        const gpk_octree_node *nd = &tr->nodes[i];
        if (!nd->leaf || c.n_leaves >= tr->leaves) continue;
        leaf_key k;
        memset(&k, 0, sizeof k);
        memcpy(k.lo, nd->lo, sizeof k.lo);
        memcpy(k.hi, nd->hi, sizeof k.hi);
        k.first = nd->first;
        k.count = nd->count;
        k.depth = nd->depth;
        c.leaves[c.n_leaves++] = k;
    }
    qsort(c.leaves, c.n_leaves, sizeof *c.leaves, cmp_leaf);
    if (tr->n) memcpy(c.members, tr->perm, tr->n * sizeof *c.members);
    for (size_t l = 0; l < c.n_leaves; l++)
        if ((size_t)c.leaves[l].first + c.leaves[l].count <= tr->n)
            qsort(c.members + c.leaves[l].first, c.leaves[l].count, sizeof *c.members, cmp_u32);
    return c;
}

static void canon_free(canon *c)
{
    free(c->leaves);
    free(c->members);
}

static int canon_equal(const canon *a, const canon *b, size_t n)
{
    return a->n_leaves == b->n_leaves && memcmp(a->leaves, b->leaves, a->n_leaves * sizeof *a->leaves) == 0 &&
        memcmp(a->members, b->members, n * sizeof *a->members) == 0;
}

/* ---- the matrix ------------------------------------------------------------------ */

static gpk_octree_opts opts_for(gpk_octree_scheme sc, size_t case_no)
{
    gpk_octree_opts o = GPK_OCTREE_OPTS_INIT;
    /* vary the workers (0: the context's threads) and the victim choice */
    static const unsigned workers[] = {0, 1, 3, 8};
    o.pool.workers = workers[case_no % 4];
    if (sc == GPK_OCTREE_STEAL && case_no % 2) {
        o.pool.victim = GPK_POOL_VICTIM_RANDOM;
        o.pool.seed = seed_base + case_no;
    }
    return o;
}

static size_t case_counter;

/* Builds one particle set with every scheme, checks each tree, compares
 * each with the Morton tree. */
static void run_set(gpk_particle_dist dist, size_t n, unsigned t, const float *xyz)
{
    canon ref = {NULL, 0, NULL};
    int have_ref = 0;
    for (int si = 0; si < N_SCHEMES; si++) {
        const gpk_octree_scheme sc = schemes[si];
        char label[160];
        const gpk_octree_opts o = opts_for(sc, case_counter++);
        snprintf(label, sizeof label, "%s n=%zu t=%u %s workers=%u", gpk_particle_dist_name(dist), n, t,
                 gpk_octree_scheme_name(sc), o.pool.workers);
        gpk_octree tr;
        const gpk_status s = gpk_octree_build(ctx, xyz, n, t, sc, &o, &tr);
        TU_CHECK(s == GPK_OK, "%s: build failed: %s: %s", label, gpk_status_string(s), gpk_last_error(ctx));
        if (s != GPK_OK) continue;
        if (check_tree(&tr, xyz, n, t, sc, label)) {
            canon c = canon_of(&tr);
            if (!have_ref) {
                ref = c;
                have_ref = 1;
            } else {
                TU_CHECK(canon_equal(&ref, &c, n), "%s: leaves differ from the %s tree's (%zu vs %zu leaves)",
                         label, gpk_octree_scheme_name(schemes[0]), c.n_leaves, ref.n_leaves);
                canon_free(&c);
            }
        }
        gpk_octree_free(&tr);
    }
    if (have_ref) canon_free(&ref);
}

static void matrix(void)
{
    const size_t sizes[] = {0, 1, 2, 7, 100, 1000, 65537, 300000};
    const unsigned thresholds[] = {1, 20, 64};
    const size_t max_n = 300000;
    /* GPK_TEST_SMALL=1 (runs under compute-sanitizer): sizes up to 65537 */
    const char *small = getenv("GPK_TEST_SMALL");
    const size_t top_n = small && *small && strcmp(small, "0") != 0 ? 65537 : max_n;
    float *xyz = malloc(3 * max_n * sizeof *xyz);
    if (!xyz) exit(1);
    for (int d = 0; d < 3; d++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            const size_t n = sizes[si];
            if (n > top_n) continue;
            const uint64_t seed = seed_base ^ (n * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)d << 56);
            TU_CHECK(gpk_particles_generate((gpk_particle_dist)d, xyz, n, seed) == GPK_OK, "generate");
            for (size_t ti = 0; ti < sizeof thresholds / sizeof thresholds[0]; ti++)
                run_set((gpk_particle_dist)d, n, thresholds[ti], xyz);
        }
    free(xyz);
}

/* ---- degenerate sets ------------------------------------------------------------- */

/* All particles at one point: every split puts them all in octant 0, down
 * to the depth guard: a chain of 21 single-child nodes and one leaf at
 * depth 21 holding everything, with box [p, p + 2^-21] (side 1.0). */
static void one_point(void)
{
    const size_t n = 100;
    float xyz[3 * 100];
    for (size_t i = 0; i < n; i++) {
        xyz[3 * i] = 0.25f;
        xyz[3 * i + 1] = -3.0f;
        xyz[3 * i + 2] = 7.5f;
    }
    for (int si = 0; si < N_SCHEMES; si++) {
        gpk_octree tr;
        const gpk_status s = gpk_octree_build(ctx, xyz, n, 20, schemes[si], NULL, &tr);
        TU_CHECK(s == GPK_OK, "one point %s: %s", gpk_octree_scheme_name(schemes[si]), gpk_last_error(ctx));
        if (s != GPK_OK) continue;
        check_tree(&tr, xyz, n, 20, schemes[si], "one point");
        TU_CHECK(tr.leaves == 1 && tr.depth == GPK_OCTREE_MAX_DEPTH && tr.n_nodes == GPK_OCTREE_MAX_DEPTH + 1,
                 "one point %s: %zu leaves, depth %u, %zu nodes", gpk_octree_scheme_name(schemes[si]),
                 tr.leaves, tr.depth, tr.n_nodes);
        for (size_t i = 0; i < tr.n_nodes; i++) {
            const gpk_octree_node *nd = &tr.nodes[i];
            if (!nd->leaf) continue;
            TU_CHECK(nd->count == n && nd->lo[0] == 0.25f && nd->hi[0] == (float)(0.25 + 0x1p-21) &&
                         nd->lo[1] == -3.0f && nd->lo[2] == 7.5f,
                     "one point: leaf %u particles, box x [%g, %g]", nd->count, nd->lo[0], nd->hi[0]);
        }
        gpk_octree_free(&tr);
    }
    /* one particle: a single leaf root of side 1 */
    gpk_octree tr;
    TU_CHECK(gpk_octree_build(ctx, xyz, 1, 1, GPK_OCTREE_STEAL, NULL, &tr) == GPK_OK, "one particle");
    TU_CHECK(tr.n_nodes == 1 && tr.leaves == 1 && tr.depth == 0 && tr.tasks == 0 &&
                 tr.nodes[0].hi[0] == 1.25f,
             "one particle: %zu nodes", tr.n_nodes);
    gpk_octree_free(&tr);
}

/* Two exact duplicates groups far apart and a flat (2-D) set: deep chains
 * and zero extent on some axes. */
static void degenerate_sets(void)
{
    enum { N = 5000 };
    static float xyz[3 * N];
    for (size_t i = 0; i < N; i++) {
        const int group = i % 3;
        xyz[3 * i] = group == 0 ? 1.0f : group == 1 ? 1e6f : (float)i;
        xyz[3 * i + 1] = group == 2 ? 5.0f : -2.0f;
        xyz[3 * i + 2] = group == 2 ? (float)(i % 17) * 0.001f : 3.0f;
    }
    const unsigned ts[] = {1, 20};
    for (int k = 0; k < 2; k++) run_set(GPK_PARTICLES_UNIFORM, N, ts[k], xyz);
    /* flat: z = 0 for all */
    for (size_t i = 0; i < N; i++) {
        xyz[3 * i] = (float)(i % 71);
        xyz[3 * i + 1] = (float)(i / 71);
        xyz[3 * i + 2] = 0.0f;
    }
    run_set(GPK_PARTICLES_UNIFORM, N, 4, xyz);
}

/* ---- bad input ------------------------------------------------------------------- */

static void bad_input(void)
{
    float xyz[3 * 10];
    for (int i = 0; i < 30; i++) xyz[i] = (float)i * 0.1f;
    gpk_octree tr, untouched;
    memset(&untouched, 0xAB, sizeof untouched);
    gpk_status s;

    TU_CHECK(gpk_octree_build(NULL, xyz, 10, 1, GPK_OCTREE_MORTON, NULL, &tr) == GPK_EINVAL, "NULL ctx");
    TU_CHECK(gpk_octree_build(ctx, xyz, 10, 1, GPK_OCTREE_MORTON, NULL, NULL) == GPK_EINVAL, "NULL tree");
    TU_CHECK(gpk_octree_build(ctx, NULL, 10, 1, GPK_OCTREE_MORTON, NULL, &tr) == GPK_EINVAL, "NULL xyz");
    TU_CHECK(gpk_octree_build(ctx, xyz, 10, 1, (gpk_octree_scheme)9, NULL, &tr) == GPK_EINVAL, "scheme 9");
    for (int si = 0; si < N_SCHEMES; si++) {
        const gpk_octree_scheme sc = schemes[si];
        const char *name = gpk_octree_scheme_name(sc);
        /* threshold 0 */
        tr = untouched;
        s = gpk_octree_build(ctx, xyz, 10, 0, sc, NULL, &tr);
        TU_CHECK(s == GPK_EINVAL && strstr(gpk_last_error(ctx), "threshold") != NULL,
                 "%s threshold 0: %s \"%s\"", name, gpk_status_string(s), gpk_last_error(ctx));
        TU_CHECK(memcmp(&tr, &untouched, sizeof tr) == 0, "%s: tree written on failure", name);
        /* NaN, +inf, -inf at particle 6 (and a later one at 8) */
        const float bad[3] = {NAN, INFINITY, -INFINITY};
        for (int b = 0; b < 3; b++) {
            float x2[30];
            memcpy(x2, xyz, sizeof x2);
            x2[3 * 6 + b] = bad[b];
            x2[3 * 8] = NAN;
            tr = untouched;
            s = gpk_octree_build(ctx, x2, 10, 1, sc, NULL, &tr);
            TU_CHECK(s == GPK_EINVAL && strstr(gpk_last_error(ctx), "particle 6 ") != NULL,
                     "%s non-finite %d: %s \"%s\"", name, b, gpk_status_string(s), gpk_last_error(ctx));
            TU_CHECK(memcmp(&tr, &untouched, sizeof tr) == 0, "%s: tree written on failure", name);
        }
        /* n = 0 (xyz may be NULL) */
        s = gpk_octree_build(ctx, NULL, 0, 1, sc, NULL, &tr);
        TU_CHECK(s == GPK_OK && tr.n_nodes == 0 && tr.nodes == NULL && tr.leaves == 0 && tr.depth == 0,
                 "%s n = 0: %s", name, gpk_status_string(s));
        if (s == GPK_OK) gpk_octree_free(&tr);
    }
    /* A pool too small: GPK_EFULL from every pool scheme, with a message. */
    enum { N = 20000 };
    float *big = malloc(3 * N * sizeof *big);
    if (!big) exit(1);
    gpk_particles_generate(GPK_PARTICLES_UNIFORM, big, N, seed_base);
    for (int si = 1; si < N_SCHEMES; si++) {
        gpk_octree_opts o = GPK_OCTREE_OPTS_INIT;
        o.pool.capacity = 2;
        tr = untouched;
        s = gpk_octree_build(ctx, big, N, 1, schemes[si], &o, &tr);
        TU_CHECK(s == GPK_EFULL && gpk_last_error(ctx)[0] != '\0', "%s capacity 2: %s \"%s\"",
                 gpk_octree_scheme_name(schemes[si]), gpk_status_string(s), gpk_last_error(ctx));
        TU_CHECK(memcmp(&tr, &untouched, sizeof tr) == 0, "capacity 2: tree written on failure");
    }
    free(big);
    gpk_octree_free(NULL); /* allowed */
}

/* ---- names and generators ---------------------------------------------------------- */

static void names(void)
{
    for (int si = 0; si < N_SCHEMES; si++) {
        gpk_octree_scheme back;
        TU_CHECK(gpk_octree_scheme_parse(gpk_octree_scheme_name(schemes[si]), &back) == GPK_OK &&
                     back == schemes[si],
                 "scheme name round trip %d", (int)schemes[si]);
    }
    gpk_octree_scheme s;
    TU_CHECK(gpk_octree_scheme_parse("queue", &s) == GPK_OK && s == GPK_OCTREE_BLOCKING, "queue alias");
    TU_CHECK(gpk_octree_scheme_parse("MORTON", &s) == GPK_OK && s == GPK_OCTREE_MORTON, "case");
    TU_CHECK(gpk_octree_scheme_parse("bogus", &s) == GPK_EINVAL, "bogus scheme");
    TU_CHECK(gpk_octree_scheme_parse(NULL, &s) == GPK_EINVAL, "NULL scheme name");
    for (int d = 0; d < 3; d++) {
        gpk_particle_dist back;
        TU_CHECK(gpk_particle_dist_parse(gpk_particle_dist_name((gpk_particle_dist)d), &back) == GPK_OK &&
                     (int)back == d,
                 "dist name round trip %d", d);
    }
    gpk_particle_dist pd;
    TU_CHECK(gpk_particle_dist_parse("gaussian", &pd) == GPK_EINVAL, "bogus dist");
    TU_CHECK(strcmp(gpk_particle_dist_name((gpk_particle_dist)7), "unknown") == 0, "unknown dist name");
}

static uint64_t fnv1a(const void *p, size_t bytes)
{
    const unsigned char *c = p;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < bytes; i++) h = (h ^ c[i]) * 0x100000001b3ull;
    return h;
}

static void generators(void)
{
    enum { N = 20000 };
    float *a = malloc(3 * N * sizeof *a), *b = malloc(3 * N * sizeof *b);
    if (!a || !b) exit(1);
    for (int d = 0; d < 3; d++) {
        const char *name = gpk_particle_dist_name((gpk_particle_dist)d);
        const uint64_t seed = seed_base + (uint64_t)d;
        TU_CHECK(gpk_particles_generate((gpk_particle_dist)d, a, N, seed) == GPK_OK, "%s", name);
        TU_CHECK(gpk_particles_generate((gpk_particle_dist)d, b, N, seed) == GPK_OK, "%s", name);
        TU_CHECK(memcmp(a, b, 3 * N * sizeof *a) == 0, "%s: same seed, different particles", name);
        gpk_particles_generate((gpk_particle_dist)d, b, N, seed + 1000);
        TU_CHECK(memcmp(a, b, 3 * N * sizeof *a) != 0, "%s: different seeds, same particles", name);
        int in_shape = 1;
        double sum[3] = {0, 0, 0};
        for (size_t i = 0; i < N && in_shape; i++) {
            const double x = a[3 * i], y = a[3 * i + 1], z = a[3 * i + 2];
            sum[0] += x;
            sum[1] += y;
            sum[2] += z;
            const double dx = x - 0.5, dy = y - 0.5, dz = z - 0.5;
            const double eps = 1e-6; /* float rounding of 0.5 + offset */
            switch (d) {
            case GPK_PARTICLES_UNIFORM:
                in_shape = x >= 0 && x < 1 && y >= 0 && y < 1 && z >= 0 && z < 1;
                break;
            case GPK_PARTICLES_TUBE: {
                const double rr = sqrt(dx * dx + dy * dy);
                in_shape = rr >= 0.45 - eps && rr <= 0.5 + eps && z >= 0 && z < 1;
                break;
            }
            default: {
                const double rr = sqrt(dx * dx + dy * dy + dz * dz);
                in_shape = rr <= 0.5 + eps && x >= 0 && x <= 1 && y >= 0 && y <= 1 && z >= 0 && z <= 1;
            }
            }
            TU_CHECK(in_shape, "%s: particle %zu (%g %g %g) outside its shape", name, i, x, y, z);
        }
        /* every distribution is centred at 0.5 per axis */
        for (int ax = 0; ax < 3; ax++)
            TU_CHECK(fabs(sum[ax] / N - 0.5) < 0.02, "%s: mean %g on axis %d", name, sum[ax] / N, ax);
        if (d == GPK_PARTICLES_PLUMMER) {
            /* half the mass of a Plummer sphere lies within 1.305 a */
            size_t inside = 0;
            for (size_t i = 0; i < N; i++) {
                const double dx = a[3 * i] - 0.5, dy = a[3 * i + 1] - 0.5, dz = a[3 * i + 2] - 0.5;
                inside += sqrt(dx * dx + dy * dy + dz * dz) < 1.3048 * 0.01;
            }
            TU_CHECK(fabs((double)inside / N - 0.5) < 0.02, "plummer: %zu of %d within the half-mass radius",
                     inside, N);
        }
    }
    /* Portability: the same floats on every machine. These digests were
     * taken from this implementation; a change means the generator's
     * output changed (and every stored benchmark set with it). */
    const uint64_t golden[3] = {0x7f1b45e56cd04058ull, 0xddf8c44da49f047eull, 0x898685ecdc8548e1ull};
    for (int d = 0; d < 3; d++) {
        gpk_particles_generate((gpk_particle_dist)d, a, 1000, 12345);
        const uint64_t h = fnv1a(a, 3 * 1000 * sizeof *a);
        TU_CHECK(h == golden[d], "%s: digest of seed 12345 is 0x%016llx, expected 0x%016llx",
                 gpk_particle_dist_name((gpk_particle_dist)d), (unsigned long long)h,
                 (unsigned long long)golden[d]);
    }
    TU_CHECK(gpk_particles_generate((gpk_particle_dist)5, a, 10, 1) == GPK_EINVAL, "bad dist");
    TU_CHECK(gpk_particles_generate(GPK_PARTICLES_UNIFORM, NULL, 10, 1) == GPK_EINVAL, "NULL xyz");
    TU_CHECK(gpk_particles_generate(GPK_PARTICLES_UNIFORM, NULL, 0, 1) == GPK_OK, "n = 0");
    free(a);
    free(b);
}

#ifdef GPK_HAVE_CUDA_OCTREE
/* gpk_cuda_octree_build on device memory: the definition, and the same node
 * array as gpk_octree_build (host arrays) for the same scheme. Sizes up to
 * 2^20 + 3: a Plummer sphere of that size makes tasks above the pool
 * builder's grid-wide split size (2^16 particles) several levels deep. */
static void device_api(void)
{
    if (gpk_ctx_backend(ctx) != GPK_BACKEND_CUDA) return;
    const size_t sizes[] = {0, 1, 1000, 300000, (1u << 20) + 3};
    const char *small = getenv("GPK_TEST_SMALL");
    const size_t top_n = small && *small && strcmp(small, "0") != 0 ? 65537 : ((size_t)1 << 20) + 3;
    const size_t max_n = ((size_t)1 << 20) + 3;
    float *xyz = malloc(3 * max_n * sizeof *xyz);
    float *d_xyz = NULL;
    if (!xyz || cudaMalloc((void **)&d_xyz, 3 * max_n * sizeof *xyz) != cudaSuccess) {
        TU_CHECK(0, "device_api: allocation");
        free(xyz);
        return;
    }
    for (int d = 0; d < 3; d += 2) /* uniform, plummer */
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            const size_t n = sizes[si];
            if (n > top_n) continue;
            const uint64_t seed = seed_base ^ (n * 0xD1B54A32D192ED03ull) ^ ((uint64_t)d << 48);
            TU_CHECK(gpk_particles_generate((gpk_particle_dist)d, xyz, n, seed) == GPK_OK, "generate");
            TU_CHECK(cudaMemcpy(d_xyz, xyz, 3 * n * sizeof *xyz, cudaMemcpyHostToDevice) == cudaSuccess,
                     "upload");
            for (int sci = 0; sci < N_SCHEMES; sci++) {
                const gpk_octree_scheme sc = schemes[sci];
                char label[160];
                snprintf(label, sizeof label, "device api %s n=%zu t=20 %s",
                         gpk_particle_dist_name((gpk_particle_dist)d), n, gpk_octree_scheme_name(sc));
                gpk_cuda_octree dt;
                gpk_status s = gpk_cuda_octree_build(ctx, d_xyz, n, 20, sc, NULL, &dt, 0);
                TU_CHECK(s == GPK_OK, "%s: %s: %s", label, gpk_status_string(s), gpk_last_error(ctx));
                if (s != GPK_OK) continue;
                gpk_octree h;
                memset(&h, 0, sizeof h);
                h.n = dt.n;
                h.n_nodes = dt.n_nodes;
                h.tasks = dt.tasks;
                h.depth = dt.depth;
                h.leaves = dt.leaves;
                if (n > 0) {
                    h.nodes = malloc(dt.n_nodes * sizeof *h.nodes);
                    h.xyz = malloc(3 * n * sizeof *h.xyz);
                    h.perm = malloc(n * sizeof *h.perm);
                    TU_CHECK(h.nodes && h.xyz && h.perm, "host memory");
                    TU_CHECK(cudaMemcpy(h.nodes, dt.nodes, dt.n_nodes * sizeof *h.nodes,
                                        cudaMemcpyDeviceToHost) == cudaSuccess &&
                                 cudaMemcpy(h.xyz, dt.xyz, 3 * n * sizeof *h.xyz, cudaMemcpyDeviceToHost) ==
                                     cudaSuccess &&
                                 cudaMemcpy(h.perm, dt.perm, n * sizeof *h.perm, cudaMemcpyDeviceToHost) ==
                                     cudaSuccess,
                             "%s: download", label);
                }
                gpk_cuda_octree_free(&dt);
                TU_CHECK(dt.nodes == NULL && dt.xyz == NULL && dt.perm == NULL, "%s: free clears the tree",
                         label);
                if (check_tree(&h, xyz, n, 20, sc, label)) {
                    gpk_octree ht;
                    s = gpk_octree_build(ctx, xyz, n, 20, sc, NULL, &ht);
                    TU_CHECK(s == GPK_OK, "%s: host build: %s", label, gpk_last_error(ctx));
                    if (s == GPK_OK) {
                        TU_CHECK(ht.n_nodes == h.n_nodes && ht.leaves == h.leaves && ht.depth == h.depth &&
                                     (n == 0 || memcmp(ht.nodes, h.nodes, h.n_nodes * sizeof *h.nodes) == 0),
                                 "%s: node array differs from gpk_octree_build's (%zu vs %zu nodes)", label,
                                 h.n_nodes, ht.n_nodes);
                        TU_CHECK(ht.device_ms > 0.0 || n == 0, "%s: device_ms %g", label, ht.device_ms);
                        gpk_octree_free(&ht);
                    }
                }
                gpk_octree_free(&h);
            }
        }
    /* bad input: a NaN (named by index), NULL pointers, threshold 0 */
    for (int i = 0; i < 30; i++) xyz[i] = (float)i * 0.1f;
    xyz[3 * 6 + 1] = NAN;
    TU_CHECK(cudaMemcpy(d_xyz, xyz, 30 * sizeof *xyz, cudaMemcpyHostToDevice) == cudaSuccess, "upload");
    for (int sci = 0; sci < N_SCHEMES; sci++) {
        gpk_cuda_octree dt, untouched;
        memset(&untouched, 0xAB, sizeof untouched);
        dt = untouched;
        const gpk_status s = gpk_cuda_octree_build(ctx, d_xyz, 10, 1, schemes[sci], NULL, &dt, 0);
        TU_CHECK(s == GPK_EINVAL && strstr(gpk_last_error(ctx), "particle 6") != NULL,
                 "device api %s NaN: %s: %s", gpk_octree_scheme_name(schemes[sci]), gpk_status_string(s),
                 gpk_last_error(ctx));
        TU_CHECK(memcmp(&dt, &untouched, sizeof dt) == 0, "device api: tree written on failure");
        TU_CHECK(gpk_cuda_octree_build(ctx, NULL, 10, 1, schemes[sci], NULL, &dt, 0) == GPK_EINVAL,
                 "NULL d_xyz");
        TU_CHECK(gpk_cuda_octree_build(ctx, d_xyz, 10, 0, schemes[sci], NULL, &dt, 0) == GPK_EINVAL,
                 "threshold 0");
        TU_CHECK(gpk_cuda_octree_build(ctx, d_xyz, 10, 1, schemes[sci], NULL, NULL, 0) == GPK_EINVAL,
                 "NULL tree");
    }
    cudaFree(d_xyz);
    free(xyz);
}
#endif

int main(int argc, char **argv)
{
    gpk_backend backend;
    const int rc = tu_open_backend("test_octree", argc, argv, &ctx, &backend);
    if (rc >= 0) return rc;
    seed_base = tu_seed();

    names();
    generators();
    bad_input();
    one_point();
    degenerate_sets();
    matrix();
#ifdef GPK_HAVE_CUDA_OCTREE
    device_api();
#endif

    gpk_ctx_destroy(ctx);
    return tu_finish("test_octree");
}
