/* Example (task pools): count the nodes of an implicit binary tree, where
 * each task pushes its two children, through each of the four pools. A
 * task is a small struct copied into the pool; the work function may push.
 *   usage: pool [DEPTH] */
#include <gpk/gpk.h>
#include <gpk/pool.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct task {
    unsigned depth;
} task;

typedef struct count {
    unsigned max_depth;
    atomic_ullong visited; /* workers run concurrently */
} count;

static gpk_status visit(gpk_pool_worker *w, const void *p, void *user)
{
    const task *t = p;
    count *c = user;
    atomic_fetch_add_explicit(&c->visited, 1, memory_order_relaxed);
    if (t->depth == c->max_depth) return GPK_OK;
    task child = {t->depth + 1};
    gpk_status s = gpk_pool_push(w, &child);
    return s != GPK_OK ? s : gpk_pool_push(w, &child);
}

int main(int argc, char **argv)
{
    unsigned depth = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 16;
    gpk_ctx *ctx;
    if (gpk_ctx_create(&ctx, GPK_BACKEND_CPU) != GPK_OK) {
        fprintf(stderr, "pool: %s\n", gpk_last_error(NULL));
        return 1;
    }
    const unsigned long long want = (2ull << depth) - 1; /* nodes of a full tree */
    int ok = 1;
    for (int sc = 0; sc < GPK_POOL_SCHEMES; sc++) {
        count c = {depth, 0};
        task root = {0};
        gpk_pool_stats st;
        gpk_status s = gpk_pool_run(ctx, (gpk_pool_scheme)sc, &root, 1, sizeof root, visit, &c, NULL, &st);
        if (s != GPK_OK) {
            fprintf(stderr, "pool %s: %s\n", gpk_pool_scheme_name((gpk_pool_scheme)sc), gpk_last_error(ctx));
            ok = 0;
            continue;
        }
        const unsigned long long got = atomic_load(&c.visited);
        printf("pool %-8s: %llu tasks on %u workers in %.2f ms (%s)\n",
               gpk_pool_scheme_name((gpk_pool_scheme)sc), got, st.workers, st.ms,
               got == want && st.tasks == want ? "ok" : "WRONG COUNT");
        ok &= got == want && st.tasks == want;
    }
    gpk_ctx_destroy(ctx);
    return ok ? 0 : 1;
}
