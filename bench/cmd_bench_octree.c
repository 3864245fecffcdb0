/* gpk bench octree: Cederman & Tsigas 2008, Figures 2-5, on the backends of
 * this build: time against N for every scheme and the Morton builder, the
 * workers sweep (the CPU's counterpart of the paper's threads x blocks
 * grid), task counts per distribution, and the pools' raw task rate. Every
 * tree is checked, and its leaves compared with the Morton builder's. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "io.h"
#include "gpk/octree.h"

#define BO_MAX_LIST 32

typedef struct {
    uint64_t n[BO_MAX_LIST];
    int nn;
    gpk_particle_dist dist[4];
    int ndist;
    gpk_octree_scheme scheme[6];
    int nscheme;
    uint64_t threads[BO_MAX_LIST];
    int nthreads;
    uint64_t blocks[BO_MAX_LIST]; /* CUDA pool schemes: blocks (0: resident maximum) */
    int nblocks;
    uint64_t block_threads[BO_MAX_LIST]; /* CUDA pool schemes: threads per block (0: 64) */
    int nblock_threads;
    uint64_t grid_split[BO_MAX_LIST]; /* CUDA pool schemes: opts.grid_split (0: default) */
    int ngrid_split;
    uint64_t threshold, seed, reps;
    gpk_pool_victim victim;
    gpk_backend backend;
    int device;
    int pools; /* also the pools' task rate */
    const char *json;
} bo_config;

/* One configuration of a point (scheme, grid): its builds' times and what
 * its first build gave. */
typedef struct {
    gpk_octree_scheme scheme;
    gpk_octree_opts opts;
    int skip; /* a repeat of Morton under another grid */
    gpk_status status;
    const char *verdict; /* NULL: ok */
    char why[256];
    double *times, *dev_times, *pool_times; /* per repetition */
    uint64_t tasks;
    unsigned depth;
    size_t leaves, nodes;
} bo_run;

void cmd_bench_octree_help(FILE *f)
{
    fprintf(f,
            "usage: gpk bench octree [options]\n"
            "\n"
            "Reproduces Cederman & Tsigas 2008, Figures 2-5: octree partitioning time against\n"
            "N for the four task pools (static list, blocking queue, lock-free queue, work\n"
            "stealing) and the Morton-code builder (gpk's radix sort), over a workers sweep\n"
            "(the CPU's counterpart of the paper's threads x blocks grid), with the tasks\n"
            "each build created. Every tree is checked and its leaves compared with the\n"
            "Morton builder's (FAIL rows, exit status 1).\n"
            "\n"
            "  --n LIST          particles (default 100k,200k,500k,1M,2M,4M,8M,16M)\n"
            "  --dists LIST      uniform,tube (default), plummer\n"
            "  --schemes LIST    static,queue,lockfree,steal,morton (default: all)\n"
            "  --threads LIST    workers (default: all cores); several values: a sweep\n"
            "  --threshold T     leaf size (default 20, the paper's)\n"
            "  --victim V        steal: random (default) or rr (round-robin, the paper's)\n"
            "  --reps R          builds per point, median reported (default 3)\n"
            "  --seed S          particle seed (default 1)\n"
            "  --pools           also each pool's task rate: a tree of 2^22 tasks with\n"
            "                    trivial work, tasks per second\n"
            "  --backend B       cpu (default) or cuda (built with -DGPK_WITH_CUDA_OCTREE=ON:\n"
            "                    every scheme on the GPU; otherwise Morton on the GPU's radix\n"
            "                    sort and the pools on host threads)\n"
            "  --blocks LIST     CUDA pool schemes: thread blocks (default: as many as are\n"
            "                    resident); with --block-threads LIST the paper's threads x\n"
            "                    blocks grid (Figures 2-3). CUDA octree builds only\n"
            "  --block-threads LIST  CUDA pool schemes: threads per block (default 64)\n"
            "  --grid-split LIST CUDA pool schemes: tasks above this many particles are split\n"
            "                    by the whole grid before the pool starts (default 65536;\n"
            "                    'pool': none, every task in the pool as in the paper)\n"
            "  --device D        CUDA device index\n"
            "  --json FILE       write the machine, the configuration and every row\n");
}

static int bo_list_sizes(const char *cmd, const char *s, uint64_t *out, int *count, uint64_t lo, uint64_t hi)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", s);
    *count = 0;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        uint64_t v;
        if (*count >= BO_MAX_LIST || cli_parse_size(tok, &v) != 0 || v < lo || v > hi) {
            cli_error(cmd, "bad list entry '%s'", tok);
            return -1;
        }
        out[(*count)++] = v;
    }
    return *count ? 0 : -1;
}

/* A task of the pool-rate test: a node of a complete binary tree. */
typedef struct {
    uint32_t depth;
    uint32_t id;
} bo_task;

static gpk_status bo_spawn(gpk_pool_worker *w, const void *task, void *user)
{
    const bo_task *t = task;
    const uint32_t max_depth = *(const uint32_t *)user;
    if (t->depth >= max_depth) return GPK_OK;
    for (uint32_t c = 0; c < 2; c++) {
        const bo_task child = {t->depth + 1, 2 * t->id + c};
        gpk_status s = gpk_pool_push(w, &child);
        if (s != GPK_OK) return s;
    }
    return GPK_OK;
}

/* Leaves in particle order (first), as (first, count, lo[3]) per leaf: two
 * builders must agree on these (octree.h). */
typedef struct {
    uint32_t first, count;
    float lo[3];
} bo_leaf;

static int bo_leaf_cmp(const void *x, const void *y)
{
    const bo_leaf *a = x, *b = y;
    return a->first < b->first ? -1 : a->first > b->first;
}

static bo_leaf *bo_leaves(const gpk_octree *t)
{
    bo_leaf *l = malloc((t->leaves ? t->leaves : 1) * sizeof *l);
    if (!l) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < t->n_nodes && k < t->leaves; i++)
        if (t->nodes[i].leaf) {
            l[k].first = t->nodes[i].first;
            l[k].count = t->nodes[i].count;
            memcpy(l[k].lo, t->nodes[i].lo, sizeof l[k].lo);
            k++;
        }
    qsort(l, k, sizeof *l, bo_leaf_cmp);
    return l;
}

static int bo_compare(const gpk_octree *a, const gpk_octree *b, char *why, size_t len)
{
    if (a->leaves != b->leaves || a->n != b->n) {
        snprintf(why, len, "%zu leaves against the Morton builder's %zu", a->leaves, b->leaves);
        return 0;
    }
    bo_leaf *la = bo_leaves(a), *lb = bo_leaves(b);
    int ok = la && lb;
    if (!ok) snprintf(why, len, "out of host memory for the comparison");
    for (size_t k = 0; ok && k < a->leaves; k++)
        if (la[k].first != lb[k].first || la[k].count != lb[k].count ||
            memcmp(la[k].lo, lb[k].lo, sizeof la[k].lo) != 0) {
            snprintf(why, len, "leaf %zu (particles %u..) differs from the Morton builder's", k, la[k].first);
            ok = 0;
        }
    free(la);
    free(lb);
    return ok;
}

/* The configuration: 0; 1 after --help; -1 on a usage error (said). */
static int bo_parse(const char *cmd, int argc, char **argv, bo_config *c)
{
    memset(c, 0, sizeof *c);
    const uint64_t default_n[] = {100000, 200000, 500000, 1u << 20, 2u << 20, 4u << 20, 8u << 20, 16u << 20};
    memcpy(c->n, default_n, sizeof default_n);
    c->nn = 8;
    c->dist[0] = GPK_PARTICLES_UNIFORM;
    c->dist[1] = GPK_PARTICLES_TUBE;
    c->ndist = 2;
    const gpk_octree_scheme all[] = {GPK_OCTREE_STATIC, GPK_OCTREE_BLOCKING, GPK_OCTREE_LOCKFREE,
                                     GPK_OCTREE_STEAL, GPK_OCTREE_MORTON};
    memcpy(c->scheme, all, sizeof all);
    c->nscheme = 5;
    c->threads[0] = 0;
    c->nthreads = 1;
    c->blocks[0] = 0;
    c->nblocks = 1;
    c->block_threads[0] = 0;
    c->nblock_threads = 1;
    c->grid_split[0] = 0;
    c->ngrid_split = 1;
    c->threshold = 20;
    c->seed = 1;
    c->reps = 3;
    c->victim = GPK_POOL_VICTIM_RANDOM;
    c->backend = GPK_BACKEND_CPU;
    c->device = -1;
    /* argv[0] is "bench", argv[1] "octree" */
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        int m;
        if (cli_is_help(a)) {
            cmd_bench_octree_help(stdout);
            return 1;
        }
        if (cli_flag(a, NULL, "--pools")) {
            c->pools = 1;
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--n", &val)) != 0) {
            if (m < 0 || bo_list_sizes(cmd, val, c->n, &c->nn, 1, UINT32_MAX) != 0) return -1;
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--threads", &val)) != 0) {
            if (m < 0 || bo_list_sizes(cmd, val, c->threads, &c->nthreads, 1, 1 << 16) != 0) return -1;
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--blocks", &val)) != 0) {
            if (m < 0 || bo_list_sizes(cmd, val, c->blocks, &c->nblocks, 1, 1 << 20) != 0) return -1;
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--grid-split", &val)) != 0) {
            if (m < 0) return -1;
            char buf[1024], list[1024] = "";
            snprintf(buf, sizeof buf, "%s", val);
            /* 'pool' stands for UINT32_MAX: no task is split by the grid */
            for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ","))
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", *list ? "," : "",
                         strcmp(tok, "pool") == 0 ? "4294967295" : tok);
            if (bo_list_sizes(cmd, list, c->grid_split, &c->ngrid_split, 1, UINT32_MAX) != 0) return -1;
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--block-threads", &val)) != 0) {
            if (m < 0 || bo_list_sizes(cmd, val, c->block_threads, &c->nblock_threads, 1, 1024) != 0)
                return -1;
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--dists", &val)) != 0) {
            if (m < 0) return -1;
            char buf[256];
            snprintf(buf, sizeof buf, "%s", val);
            c->ndist = 0;
            for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
                if (c->ndist >= 4 || gpk_particle_dist_parse(tok, &c->dist[c->ndist]) != GPK_OK) {
                    cli_error(cmd, "unknown distribution '%s' (uniform, tube, plummer)", tok);
                    return -1;
                }
                c->ndist++;
            }
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--schemes", &val)) != 0) {
            if (m < 0) return -1;
            char buf[256];
            snprintf(buf, sizeof buf, "%s", val);
            c->nscheme = 0;
            for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
                if (c->nscheme >= 6 || gpk_octree_scheme_parse(tok, &c->scheme[c->nscheme]) != GPK_OK) {
                    cli_error(cmd, "unknown scheme '%s' (static, queue, lockfree, steal, morton)", tok);
                    return -1;
                }
                c->nscheme++;
            }
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--threshold", &val)) != 0) {
            if (m < 0 || cli_parse_uint(val, 1, UINT32_MAX, &c->threshold) != 0) {
                cli_error(cmd, "bad --threshold");
                return -1;
            }
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--victim", &val)) != 0) {
            if (m < 0) return -1;
            if (strcmp(val, "rr") == 0) c->victim = GPK_POOL_VICTIM_ROUND_ROBIN;
            else if (strcmp(val, "random") == 0) c->victim = GPK_POOL_VICTIM_RANDOM;
            else {
                cli_error(cmd, "unknown --victim '%s' (rr, random)", val);
                return -1;
            }
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--reps", &val)) != 0) {
            if (m < 0 || cli_parse_uint(val, 1, 1000, &c->reps) != 0) {
                cli_error(cmd, "bad --reps");
                return -1;
            }
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--seed", &val)) != 0) {
            if (m < 0 || cli_parse_uint(val, 0, UINT64_MAX, &c->seed) != 0) {
                cli_error(cmd, "bad --seed");
                return -1;
            }
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--backend", &val)) != 0) {
            if (m < 0 || gpk_backend_parse(val, &c->backend) != GPK_OK) {
                cli_error(cmd, "unknown backend");
                return -1;
            }
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--device", &val)) != 0) {
            uint64_t v;
            if (m < 0 || cli_parse_uint(val, 0, 1 << 20, &v) != 0) {
                cli_error(cmd, "bad --device");
                return -1;
            }
            c->device = (int)v;
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--json", &val)) != 0) {
            if (m < 0) return -1;
            c->json = val;
        } else {
            cli_error(cmd, "unknown option '%s' (see gpk bench octree --help)", a);
            return -1;
        }
    }
    return 0;
}

/* One point (distribution, size, workers): every configuration c->reps
 * times, interleaved, each row printed and written to jf. The rows that
 * failed. */
static int bo_point(const char *cmd, const bo_config *c, gpk_ctx *ctx, const gpk_ctx_info *info, int grid,
                    const float *xyz, size_t n, int d, int t, const gpk_octree *ref, int have_ref, FILE *jf,
                    int *rows)
{
    int fails = 0;
    if (c->threads[t]) gpk_ctx_set_threads(ctx, (int)c->threads[t]);
    gpk_ctx_info ti;
    gpk_ctx_info_get(ctx, &ti);
    /* every scheme, and for the pool schemes every (block threads, blocks, grid split) */
    const int per_scheme = c->nblock_threads * c->nblocks * c->ngrid_split;
    const int nconf = c->nscheme * per_scheme;
    bo_run *runs = calloc((size_t)nconf, sizeof *runs);
    double *all = malloc((size_t)nconf * 3 * (size_t)c->reps * sizeof *all);
    if (!runs || !all) {
        cli_error(cmd, "out of host memory");
        free(runs);
        free(all);
        return 1;
    }
    for (int it = 0; it < nconf; it++) {
        bo_run *u = &runs[it];
        const int sc = it / per_scheme;
        const int bt = it % per_scheme / (c->nblocks * c->ngrid_split);
        const int bl = it % (c->nblocks * c->ngrid_split) / c->ngrid_split, gs = it % c->ngrid_split;
        u->skip = c->scheme[sc] == GPK_OCTREE_MORTON && (bt || bl || gs); /* no blocks to vary */
        u->scheme = c->scheme[sc];
        u->opts = (gpk_octree_opts)GPK_OCTREE_OPTS_INIT;
        u->opts.pool.victim = c->victim;
        u->opts.pool.seed = c->seed;
        if (c->scheme[sc] != GPK_OCTREE_MORTON) {
            u->opts.blocks = (unsigned)c->blocks[bl];
            u->opts.threads = (unsigned)c->block_threads[bt];
            u->opts.grid_split = (unsigned)c->grid_split[gs];
        }
        u->times = all + (size_t)it * 3 * c->reps;
        u->dev_times = u->times + c->reps;
        u->pool_times = u->dev_times + c->reps;
    }
    /* Repetitions interleaved (every configuration once, then again), so that a
     * drift of the machine over the run touches every configuration alike. The
     * first build of each is checked; every build must succeed. */
    for (uint64_t r = 0; r < c->reps; r++) {
        for (int it = 0; it < nconf; it++) {
            bo_run *u = &runs[it];
            if (u->skip || u->status != GPK_OK) continue;
            gpk_octree tree;
            memset(&tree, 0, sizeof tree);
            const double t0 = cli_now_ms();
            u->status = gpk_octree_build(ctx, xyz, n, (unsigned)c->threshold, u->scheme, &u->opts, &tree);
            u->times[r] = cli_now_ms() - t0;
            u->dev_times[r] = tree.device_ms;
            u->pool_times[r] = tree.pool_ms;
            if (u->status != GPK_OK) {
                snprintf(u->why, sizeof u->why, "%s", gpk_last_error(ctx));
            } else if (r == 0) {
                const char *bad = cli_octree_check(&tree, (unsigned)c->threshold, u->why, sizeof u->why);
                if (bad) u->verdict = "FAIL";
                else if (!have_ref) {
                    snprintf(u->why, sizeof u->why, "no Morton tree to compare with");
                    u->verdict = "FAIL";
                } else if (!bo_compare(&tree, ref, u->why, sizeof u->why)) {
                    u->verdict = "FAIL";
                }
                u->tasks = tree.tasks;
                u->depth = tree.depth;
                u->leaves = tree.leaves;
                u->nodes = tree.n_nodes;
            }
            gpk_octree_free(&tree);
        }
    }
    for (int it = 0; it < nconf; it++) {
        bo_run *u = &runs[it];
        if (u->skip) continue;
        const char *verdict = u->verdict ? u->verdict : "ok";
        double ms = 0, dev_ms = 0, pool_ms = 0;
        if (u->status != GPK_OK) {
            verdict = "ERROR";
        } else {
            ms = cli_median(u->times, (size_t)c->reps);
            dev_ms = cli_median(u->dev_times, (size_t)c->reps);
            pool_ms = cli_median(u->pool_times, (size_t)c->reps);
        }
        if (strcmp(verdict, "ok") != 0) fails++;
        char where[64] = "";
        if (grid && u->scheme != GPK_OCTREE_MORTON)
            snprintf(where, sizeof where, " [blocks %u, threads %u, grid split %u]", u->opts.blocks,
                     u->opts.threads, u->opts.grid_split);
        printf("%-7s %-8s %10zu %-9s %7u %11.3f %9.3f %9.3f %9llu %6u %9zu %8.2f  %s%s%s%s\n",
               gpk_backend_name(info->backend), gpk_particle_dist_name(c->dist[d]), n,
               gpk_octree_scheme_name(u->scheme), ti.threads, ms, dev_ms, pool_ms,
               (unsigned long long)u->tasks, u->depth, u->leaves, ms > 0 ? n / ms / 1e3 : 0.0, verdict,
               *u->why ? ": " : "", u->why, where);
        fflush(stdout);
        if (jf) {
            fprintf(jf,
                    "%s\n {\"dist\": \"%s\", \"n\": %zu, \"scheme\": \"%s\", \"workers\": %u, "
                    "\"blocks\": %u, \"block_threads\": %u, \"grid_split\": %u, "
                    "\"ms\": %.6f, \"device_ms\": %.6f, \"pool_ms\": %.6f, \"tasks\": %llu, \"depth\": %u, "
                    "\"leaves\": %zu, \"nodes\": %zu, \"check\": \"%s\"}",
                    *rows ? "," : "", gpk_particle_dist_name(c->dist[d]), n,
                    gpk_octree_scheme_name(u->scheme), ti.threads, u->opts.blocks, u->opts.threads,
                    u->opts.grid_split, ms, dev_ms, pool_ms, (unsigned long long)u->tasks, u->depth,
                    u->leaves, u->nodes, verdict);
        }
        (*rows)++;
    }
    free(runs);
    free(all);
    return fails;
}

/* --pools: each pool's task rate on a complete binary tree of 2^22 - 1
 * tasks, printed and written to jf. The rows that failed. */
static int bo_pools(const bo_config *c, gpk_ctx *ctx, FILE *jf)
{
    int fails = 0;
    /* 2^22 - 1 tasks: a complete binary tree of depth 21 */
    const uint32_t depth = 21;
    const uint64_t expect = (1ull << (depth + 1)) - 1;
    printf("\n%-9s %-7s %12s %11s %14s %10s  %s\n", "pool", "workers", "tasks", "ms", "tasks/s", "steals",
           "check");
    for (int t = 0; t < c->nthreads; t++) {
        if (c->threads[t]) gpk_ctx_set_threads(ctx, (int)c->threads[t]);
        for (int p = 0; p < GPK_POOL_SCHEMES; p++) {
            gpk_pool_opts po = GPK_POOL_OPTS_INIT;
            po.victim = c->victim;
            po.capacity = (size_t)1 << 23;
            gpk_pool_stats st;
            memset(&st, 0, sizeof st);
            const bo_task root = {0, 1};
            gpk_status s = gpk_pool_run(ctx, (gpk_pool_scheme)p, &root, 1, sizeof root, bo_spawn,
                                        (void *)&depth, &po, &st);
            const int ok = s == GPK_OK && st.tasks == expect;
            if (!ok) fails++;
            printf("%-9s %7u %12llu %11.3f %14.0f %10llu  %s%s%s\n", gpk_pool_scheme_name((gpk_pool_scheme)p),
                   st.workers, (unsigned long long)st.tasks, st.ms, st.ms > 0 ? st.tasks / st.ms * 1e3 : 0.0,
                   (unsigned long long)st.steals, ok ? "ok" : "FAIL", s != GPK_OK ? ": " : "",
                   s != GPK_OK ? gpk_last_error(ctx) : "");
            if (jf)
                fprintf(jf,
                        "%s\n {\"pool\": \"%s\", \"workers\": %u, \"tasks\": %llu, \"ms\": %.6f, "
                        "\"steals\": %llu, \"check\": \"%s\"}",
                        (t || p) ? "," : "", gpk_pool_scheme_name((gpk_pool_scheme)p), st.workers,
                        (unsigned long long)st.tasks, st.ms, (unsigned long long)st.steals,
                        ok ? "ok" : "FAIL");
        }
    }
    return fails;
}

int cmd_bench_octree(int argc, char **argv)
{
    const char *cmd = "bench octree";
    bo_config c;
    const int pr = bo_parse(cmd, argc, argv, &c);
    if (pr > 0) return CLI_OK;
    if (pr < 0) return CLI_USAGE;
    if (c.device >= 0 && c.backend == GPK_BACKEND_CPU) {
        cli_error(cmd, "--device selects a CUDA device; the cpu backend has none");
        return CLI_USAGE;
    }
    /* a threads x blocks grid of the CUDA pools */
    const int grid = c.nblocks > 1 || c.blocks[0] || c.nblock_threads > 1 || c.block_threads[0] ||
        c.ngrid_split > 1 || c.grid_split[0];
#ifndef GPK_HAVE_CUDA_OCTREE
    if (grid) {
        cli_error(
            cmd,
            "--blocks, --block-threads, --grid-split: this build has no CUDA task pools (configure with "
            "-DGPK_WITH_CUDA_OCTREE=ON)");
        return CLI_USAGE;
    }
#endif
    gpk_ctx *ctx = NULL;
    if (cli_ctx_create(cmd, &ctx, c.backend, c.device, 0) != GPK_OK) return CLI_FAIL;
    gpk_ctx_info info;
    gpk_ctx_info_get(ctx, &info);
    if (grid && info.backend != GPK_BACKEND_CUDA) {
        cli_error(cmd, "--blocks, --block-threads, --grid-split: only on the CUDA backend");
        gpk_ctx_destroy(ctx);
        return CLI_USAGE;
    }
    FILE *jf = NULL;
    io_out jout;
    char jerr[600];
    if (c.json) {
        jf = io_out_open(&jout, c.json, jerr, sizeof jerr) == 0 ? jout.f : NULL;
        if (!jf) {
            cli_error(cmd, "%s", jerr);
            gpk_ctx_destroy(ctx);
            return CLI_FAIL;
        }
        fprintf(jf, "{\"command\": \"bench octree\", \"gpk_version\": ");
        cli_json_str(jf, gpk_version());
        fprintf(jf, ", \"backend\": ");
        cli_json_ctx_info(jf, &info);
        fprintf(jf, ", \"threshold\": %llu, \"seed\": %llu, \"reps\": %llu, \"victim\": \"%s\", \"rows\": [",
                (unsigned long long)c.threshold, (unsigned long long)c.seed, (unsigned long long)c.reps,
                c.victim == GPK_POOL_VICTIM_RANDOM ? "random" : "rr");
    }
    int rows = 0, fails = 0;
    /* dev_ms: CUDA, the build on the device alone (gpk_octree.device_ms: what
     * gpk_cuda_octree_build takes on device-resident particles) */
    /* pool_ms: the pool's run alone (gpk_octree.pool_ms), a part of dev_ms on CUDA */
    printf("%-7s %-8s %10s %-9s %7s %11s %9s %9s %9s %6s %9s %8s  %s\n", "backend", "dist", "n", "scheme",
           "workers", "ms", "dev_ms", "pool_ms", "tasks", "depth", "leaves", "Mpart/s", "check");
    uint64_t max_n = 0;
    for (int k = 0; k < c.nn; k++)
        if (c.n[k] > max_n) max_n = c.n[k];
    float *xyz = malloc((size_t)max_n * 3 * sizeof *xyz);
    if (!xyz) {
        cli_error(cmd, "out of host memory");
        fails++;
    }
    for (int d = 0; d < c.ndist && !fails; d++) {
        for (int k = 0; k < c.nn; k++) {
            const size_t n = (size_t)c.n[k];
            if (gpk_particles_generate(c.dist[d], xyz, n, c.seed) != GPK_OK) {
                cli_error(cmd, "particle generator failed");
                fails++;
                break;
            }
            gpk_octree ref;
            memset(&ref, 0, sizeof ref);
            int have_ref =
                gpk_octree_build(ctx, xyz, n, (unsigned)c.threshold, GPK_OCTREE_MORTON, NULL, &ref) == GPK_OK;
            for (int t = 0; t < c.nthreads; t++)
                fails += bo_point(cmd, &c, ctx, &info, grid, xyz, n, d, t, &ref, have_ref, jf, &rows);
            gpk_octree_free(&ref);
        }
    }
    if (jf) fprintf(jf, "\n], \"pools\": [");
    if (c.pools && !fails) fails += bo_pools(&c, ctx, jf);
    if (jf) {
        fprintf(jf, "\n]}\n");
        if (io_out_commit(&jout, jerr, sizeof jerr) != 0) {
            cli_error(cmd, "%s", jerr);
            fails++;
        }
    }
    free(xyz);
    gpk_ctx_destroy(ctx);
    return fails ? CLI_FAIL : CLI_OK;
}
