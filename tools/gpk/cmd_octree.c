/* gpk octree: build one octree (Cederman & Tsigas 2008, Section 5) and
 * report time, tasks, depth and leaves; optionally check it and draw a
 * slice of it as SVG. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gpk/octree.h"
#include "io.h"

#define OCTREE_BYTES_PER_PARTICLE 72.0 /* the host memory of a build and its check, with a margin */

void cmd_octree_help(FILE *f)
{
    fprintf(f,
            "usage: gpk octree [--dist D] [--n N] [--threshold T] [--scheme S] [options]\n"
            "\n"
            "Builds an octree of N generated particles (Cederman & Tsigas 2008, Section 5):\n"
            "a task is an octant and its particles; a worker splits it into eight, moves the\n"
            "particles of each octant together and pushes the octants holding more than T\n"
            "particles as new tasks, through one of the four task pools, or (morton) from\n"
            "Morton codes sorted by gpk's radix sort. Prints the build time (median of\n"
            "--reps), tasks created, depth, leaves and nodes, and checks the tree: every\n"
            "particle in exactly one leaf, inside its leaf's box, leaves within the\n"
            "threshold unless at the maximum depth (21).\n"
            "\n"
            "  --dist D       uniform (default), tube (the paper's Figure 1), plummer (clustered)\n"
            "  --n N          particles (default 500000; 2^20, 1M accepted)\n"
            "  --threshold T  most particles in a leaf (default 20, the paper's)\n"
            "  --scheme S     steal (default), static, queue (= blocking), lockfree, morton\n"
            "  --victim V     steal: random (default) or rr (round-robin, the paper's)\n"
            "  --capacity C   tasks one queue / deque holds (default: the library's)\n"
            "  --threads T    workers (CPU backend; default: all cores)\n"
            "  --blocks B     CUDA pool schemes: thread blocks of the persistent kernel\n"
            "                 (default: as many as are resident)\n"
            "  --block-threads T  CUDA pool schemes: threads per block (default 64)\n"
            "  --grid-split G CUDA pool schemes: tasks above G particles are split by the\n"
            "                 whole grid first (default 65536; 'pool': none, as in the paper)\n"
            "  --backend B    auto (default), cpu, cuda\n"
            "  --device D     CUDA device index\n"
            "  --seed S       particle generator seed (default 1)\n"
            "  --reps R       builds timed, median reported (default 1)\n"
            "  --svg FILE     draw the leaf boxes and particles of the slice through the middle\n"
            "                 of the root cube (z within one smallest-leaf height) as SVG\n"
            "  --json         print the result as JSON on stdout\n");
}

/* Checks what gpk_octree_build promises; returns NULL or a message. */
const char *cli_octree_check(const gpk_octree *t, unsigned threshold, char *buf, size_t len)
{
    if (t->n == 0) return t->n_nodes == 0 ? NULL : "an empty input has nodes";
    unsigned char *seen = calloc(t->n, 1);
    if (!seen) return "out of host memory for the check";
    size_t covered = 0, leaves = 0;
    const char *why = NULL;
    for (size_t k = 0; k < t->n_nodes && !why; k++) {
        const gpk_octree_node *nd = &t->nodes[k];
        if (!nd->leaf) continue;
        leaves++;
        if ((size_t)nd->first + nd->count > t->n) {
            snprintf(buf, len, "leaf %zu covers particles past n", k);
            why = buf;
            break;
        }
        if (nd->count > threshold && nd->depth < GPK_OCTREE_MAX_DEPTH) {
            snprintf(buf, len, "leaf %zu holds %u particles above the threshold at depth %u", k, nd->count,
                     nd->depth);
            why = buf;
            break;
        }
        for (uint32_t i = nd->first; i < nd->first + nd->count; i++) {
            if (seen[i]) {
                snprintf(buf, len, "particle slot %u is in two leaves", i);
                why = buf;
                break;
            }
            seen[i] = 1;
            covered++;
            for (int a = 0; a < 3; a++) {
                const float x = t->xyz[3 * (size_t)i + a];
                if (!(x >= nd->lo[a] && x <= nd->hi[a])) {
                    snprintf(buf, len, "particle slot %u (input %u) lies outside its leaf %zu on axis %d", i,
                             t->perm[i], k, a);
                    why = buf;
                    break;
                }
            }
            if (why) break;
        }
    }
    if (!why && covered != t->n) {
        snprintf(buf, len, "leaves cover %zu of %zu particles", covered, t->n);
        why = buf;
    }
    if (!why && leaves != t->leaves) {
        snprintf(buf, len, "the tree says %zu leaves, the nodes have %zu", t->leaves, leaves);
        why = buf;
    }
    free(seen);
    return why;
}

/* The slice z in [z0 - h/2, z0 + h/2] through the middle of the root cube,
 * h the height of the deepest leaf crossing it: leaf boxes (x, y) and the
 * particles in them, y pointing up. */
static int octree_svg(const char *path, const gpk_octree *t, char *err, size_t len)
{
    io_out out;
    if (io_out_open(&out, path, err, len) != 0) return -1;
    FILE *f = out.f;
    const gpk_octree_node *root = t->n_nodes ? &t->nodes[0] : NULL;
    const double lo0 = root ? root->lo[0] : 0, lo1 = root ? root->lo[1] : 0;
    const double side = root ? fmax(root->hi[0] - root->lo[0], 1e-30) : 1;
    const double z0 = root ? 0.5 * (root->lo[2] + root->hi[2]) : 0;
    double h = side;
    for (size_t k = 0; k < t->n_nodes; k++) {
        const gpk_octree_node *nd = &t->nodes[k];
        if (nd->leaf && nd->lo[2] <= z0 && z0 <= nd->hi[2]) h = fmin(h, nd->hi[2] - nd->lo[2]);
    }
    const double px = 800.0 / side;
    fprintf(
        f,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"840\" height=\"880\" viewBox=\"-20 -60 840 "
        "880\">\n"
        "<text x=\"0\" y=\"-35\" font-family=\"sans-serif\" font-size=\"16\">gpk octree: %zu particles, "
        "%zu leaves, depth %u</text>\n"
        "<text x=\"0\" y=\"-14\" font-family=\"sans-serif\" font-size=\"12\">slice z = %.6g +- %.3g: leaf "
        "boxes (x, y) and their particles</text>\n"
        "<rect x=\"0\" y=\"0\" width=\"800\" height=\"800\" fill=\"white\" stroke=\"black\"/>\n",
        t->n, t->leaves, t->depth, z0, h / 2);
    size_t points = 0;
    for (size_t k = 0; k < t->n_nodes; k++) {
        const gpk_octree_node *nd = &t->nodes[k];
        if (!nd->leaf || nd->hi[2] < z0 - h / 2 || nd->lo[2] > z0 + h / 2) continue;
        const double x = (nd->lo[0] - lo0) * px, w = (nd->hi[0] - nd->lo[0]) * px;
        const double y = 800 - (nd->hi[1] - lo1) * px, hh = (nd->hi[1] - nd->lo[1]) * px;
        fprintf(f,
                "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"none\" "
                "stroke=\"#3060a0\" stroke-width=\"0.5\"/>\n",
                x, y, w, hh);
        for (uint32_t i = nd->first; i < nd->first + nd->count && points < 50000; i++) {
            const float *p = &t->xyz[3 * (size_t)i];
            if (p[2] < z0 - h / 2 || p[2] > z0 + h / 2) continue;
            fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"0.8\" fill=\"#c03020\"/>\n", (p[0] - lo0) * px,
                    800 - (p[1] - lo1) * px);
            points++;
        }
    }
    fprintf(f, "</svg>\n");
    return io_out_commit(&out, err, len);
}

/* gpk octree's options. */
typedef struct octree_args {
    gpk_particle_dist dist;
    uint64_t n, threshold, seed, reps, blocks, block_threads, grid_split;
    gpk_octree_scheme scheme;
    gpk_octree_opts oo;
    gpk_backend backend;
    int device, threads, json, have_victim;
    const char *svg;
} octree_args;

/* The options whose value is a name: each reader sets its fields and
 * says whether it knew the name. */
static int read_dist(const char *v, octree_args *o) { return gpk_particle_dist_parse(v, &o->dist) == GPK_OK; }
static int read_scheme(const char *v, octree_args *o)
{
    return gpk_octree_scheme_parse(v, &o->scheme) == GPK_OK;
}
static int read_victim(const char *v, octree_args *o)
{
    const int rr = strcmp(v, "rr") == 0 || strcmp(v, "round-robin") == 0;
    o->have_victim = 1;
    o->oo.pool.victim = rr ? GPK_POOL_VICTIM_ROUND_ROBIN : GPK_POOL_VICTIM_RANDOM;
    return rr || strcmp(v, "random") == 0;
}
static const struct named_opt {
    const char *name, *choices;
    int (*read)(const char *v, octree_args *o);
} named_opts[] = {{"--dist", "uniform, tube, plummer", read_dist},
                  {"--scheme", "steal, static, queue, lockfree, morton", read_scheme},
                  {"--victim", "rr, random", read_victim}};

/* As cli_opt_value: 1 when argv[*i] is one of named_opts and its value
 * was read, 0 when it is none of them, -1 after the error. */
static int named_option(const char *cmd, int argc, char **argv, int *i, octree_args *o)
{
    for (size_t k = 0; k < sizeof named_opts / sizeof named_opts[0]; k++) {
        const char *val;
        const int m = cli_opt_value(cmd, argc, argv, i, NULL, named_opts[k].name, &val);
        if (m == 0) continue;
        if (m > 0 && named_opts[k].read(val, o)) return 1;
        if (m > 0) cli_error(cmd, "unknown %s '%s' (%s)", named_opts[k].name, val, named_opts[k].choices);
        return -1;
    }
    return 0;
}

/* 0; 1 after --help; -1 on a usage error (said). */
static int parse_octree_args(const char *cmd, int argc, char **argv, octree_args *o)
{
    const octree_args defaults = {
        GPK_PARTICLES_UNIFORM, 500000,           20, 1, 1, 0, 0,   0, GPK_OCTREE_STEAL,
        GPK_OCTREE_OPTS_INIT,  GPK_BACKEND_AUTO, -1, 0, 0, 0, NULL};
    *o = defaults;
    static const cli_uint_opt nums[] = {{"--threshold", 1, UINT32_MAX},
                                        {"--threads", 0, 1 << 16},
                                        {"--blocks", 1, 1 << 20},
                                        {"--block-threads", 1, 1024},
                                        {"--device", 0, 1 << 20},
                                        {"--seed", 0, UINT64_MAX},
                                        {"--reps", 1, 1000}};
    static const char *const hints[] = {"1 or more", "", "", "1 to 1024", "", "", "1 to 1000"};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        int m;
        if (cli_is_help(a)) {
            cmd_octree_help(stdout);
            return 1;
        }
        uint64_t v;
        const int k = cli_opt_uint_hinted(cmd, argc, argv, &i, nums, hints, sizeof nums / sizeof nums[0], &v);
        if (k == -1) return -1;
        switch (k) {
        case 0: o->threshold = v; continue;
        case 1: o->threads = (int)v; continue;
        case 2: o->blocks = v; continue;
        case 3: o->block_threads = v; continue;
        case 4: o->device = (int)v; continue;
        case 5: o->seed = v; continue;
        case 6: o->reps = v; continue;
        }
        const int named = named_option(cmd, argc, argv, &i, o);
        if (named < 0) return -1;
        if (named > 0) continue;
        if (cli_flag(a, NULL, "--json")) {
            o->json = 1;
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--n", &val)) != 0) {
            if (m < 0) return -1;
            if (cli_parse_size(val, &o->n) != 0 || o->n > UINT32_MAX) {
                cli_error(cmd, "bad --n '%s' (a count below 2^32, e.g. 500000, 1M, 2^24)", val);
                return -1;
            }
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--capacity", &val)) != 0) {
            if (m < 0) return -1;
            if (cli_parse_size(val, &v) != 0 || v == 0) {
                cli_error(cmd, "bad --capacity '%s' (1 or more tasks)", val);
                return -1;
            }
            o->oo.pool.capacity = (size_t)v;
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--grid-split", &val)) != 0) {
            if (m < 0) return -1;
            if (strcmp(val, "pool") == 0) o->grid_split = UINT32_MAX;
            else if (cli_parse_uint(val, 1, UINT32_MAX, &o->grid_split) != 0) {
                cli_error(cmd, "bad --grid-split '%s' (a particle count, or pool)", val);
                return -1;
            }
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--backend", &val)) != 0) {
            if (m < 0) return -1;
            if (gpk_backend_parse(val, &o->backend) != GPK_OK || o->backend == GPK_BACKEND_OPENCL) {
                /* an OpenCL context would build on CPU threads: refused, not ignored */
                cli_error(cmd, "%s backend '%s' for the octree (auto, cpu, cuda)",
                          o->backend == GPK_BACKEND_OPENCL ? "no" : "unknown", val);
                return -1;
            }
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--svg", &val)) != 0) {
            if (m < 0) return -1;
            o->svg = val;
        } else {
            cli_error(cmd, "unknown option or argument '%s' (see gpk octree --help)", a);
            return -1;
        }
    }
    if (o->svg) {
        /* Checked before the build, not after it. */
        const char *outs[1] = {o->svg}, *roles[1] = {"--svg"};
        char err[600];
        if (io_check_outputs(outs, roles, NULL, 1, NULL, NULL, 0, err, sizeof err) != 0) {
            cli_error(cmd, "%s", err);
            return -1;
        }
    }
    if (o->have_victim && o->scheme != GPK_OCTREE_STEAL) {
        cli_error(cmd, "--victim chooses whom a thief robs: only for --scheme steal, not %s",
                  gpk_octree_scheme_name(o->scheme));
        return -1;
    }
    if (o->oo.pool.capacity && o->scheme == GPK_OCTREE_MORTON) {
        cli_error(cmd, "--capacity sizes the task pool's queues: --scheme morton has no pool");
        return -1;
    }
#ifndef GPK_HAVE_CUDA_OCTREE
    if (o->blocks || o->block_threads || o->grid_split) {
        /* The pools run on host threads in this build; a silently ignored
         * --blocks would make a sweep measure nothing. */
        cli_error(cmd,
                  "--blocks, --block-threads, --grid-split: this build has no CUDA task pools (configure "
                  "with -DGPK_WITH_CUDA_OCTREE=ON); the pools run on CPU threads (--threads)");
        return -1;
    }
#endif

    return 0;
}

/* The summary line on stderr and, with --json, the JSON record. */
static void octree_report(const octree_args *o, const gpk_ctx_info *info, const gpk_octree *tree, double ms,
                          const char *bad)
{
    /* the device time exists on CUDA only, the pool's on the pool schemes only */
    char parts[96] = "";
    const int on_device = info->backend == GPK_BACKEND_CUDA, pooled = o->scheme != GPK_OCTREE_MORTON;
    if (on_device && pooled)
        snprintf(parts, sizeof parts, " (%.3f ms on the device, %.3f ms in the pool)", tree->device_ms,
                 tree->pool_ms);
    else if (on_device) snprintf(parts, sizeof parts, " (%.3f ms on the device)", tree->device_ms);
    else if (pooled) snprintf(parts, sizeof parts, " (%.3f ms in the pool)", tree->pool_ms);
    cli_progress_end();
    fprintf(stderr,
            "gpk octree: %s (%s), %s, n=%llu, threshold %llu, scheme %s: %.3f ms%s, %llu tasks, depth %u, "
            "%zu leaves, %zu nodes; check %s\n",
            gpk_backend_name(info->backend), info->device_name, gpk_particle_dist_name(o->dist),
            (unsigned long long)o->n, (unsigned long long)o->threshold, gpk_octree_scheme_name(o->scheme), ms,
            parts, (unsigned long long)tree->tasks, tree->depth, tree->leaves, tree->n_nodes,
            bad ? "FAILED" : "ok");
    if (o->json) {
        printf("{\"command\": \"octree\", \"gpk_version\": ");
        cli_json_str(stdout, gpk_version());
        printf(", \"backend\": ");
        cli_json_ctx_info(stdout, info);
        printf(", \"dist\": ");
        cli_json_str(stdout, gpk_particle_dist_name(o->dist));
        printf(", \"scheme\": ");
        cli_json_str(stdout, gpk_octree_scheme_name(o->scheme));
        printf(", \"n\": %llu, \"threshold\": %llu, \"seed\": %llu, \"reps\": %llu, \"ms\": %.6f, "
               "\"device_ms\": %.6f, \"pool_ms\": %.6f, \"tasks\": %llu, \"depth\": %u, \"leaves\": %zu, "
               "\"nodes\": %zu, \"check\": %s}\n",
               (unsigned long long)o->n, (unsigned long long)o->threshold, (unsigned long long)o->seed,
               (unsigned long long)o->reps, ms, tree->device_ms, tree->pool_ms,
               (unsigned long long)tree->tasks, tree->depth, tree->leaves, tree->n_nodes,
               bad ? "\"failed\"" : "\"ok\"");
    }
}

int cmd_octree(int argc, char **argv)
{
    const char *cmd = "octree";
    octree_args o;
    const int pr = parse_octree_args(cmd, argc, argv, &o);
    if (pr > 0) return CLI_OK;
    if (pr < 0) return CLI_USAGE;
    gpk_ctx *ctx = NULL;
    if (cli_ctx_create(cmd, &ctx, o.backend, o.device, o.threads) != GPK_OK) return CLI_FAIL;
    gpk_ctx_info info;
    gpk_ctx_info_get(ctx, &info);
    if (info.backend == GPK_BACKEND_CPU && o.device >= 0) {
        cli_error(cmd, "--device selects a CUDA device; the cpu backend has none");
        gpk_ctx_destroy(ctx);
        return CLI_USAGE;
    }
#ifdef GPK_HAVE_CUDA_OCTREE
    if ((o.blocks || o.block_threads || o.grid_split) &&
        (info.backend != GPK_BACKEND_CUDA || o.scheme == GPK_OCTREE_MORTON)) {
        cli_error(cmd,
                  "--blocks, --block-threads, --grid-split: only for the pool schemes on the cuda backend "
                  "(not the %s backend, not morton)",
                  gpk_backend_name(info.backend));
        gpk_ctx_destroy(ctx);
        return CLI_USAGE;
    }
    o.oo.blocks = (unsigned)o.blocks;
    o.oo.threads = (unsigned)o.block_threads;
    o.oo.grid_split = (unsigned)o.grid_split;
#endif
    {
        /* Measured on the CPU: 4M particles peak at 66 bytes each (the
         * coordinates, the tree, the check; a GPU holds the tree itself,
         * the host at least the coordinates); refused before the first
         * page, not by the out-of-memory killer halfway. */
        const char *what;
        const uint64_t limit = io_memory_limit(&what);
        const double need =
            (double)o.n * (info.backend == GPK_BACKEND_CPU ? OCTREE_BYTES_PER_PARTICLE : 12.0);
        if (need > (double)limit) {
            cli_error(cmd, "%llu particles need about %.2f GiB; the process may use %.2f GiB (%s)",
                      (unsigned long long)o.n, need / 1073741824.0, (double)limit / 1073741824.0, what);
            gpk_ctx_destroy(ctx);
            return CLI_FAIL;
        }
    }
    float *xyz = malloc((size_t)(o.n ? o.n : 1) * 3 * sizeof *xyz);
    double *times = malloc((size_t)o.reps * sizeof *times);
    if (!xyz || !times) {
        cli_error(cmd, "out of host memory for %llu particles", (unsigned long long)o.n);
        free(xyz);
        free(times);
        gpk_ctx_destroy(ctx);
        return CLI_FAIL;
    }
    int rc = CLI_OK;
    gpk_status s = gpk_particles_generate(o.dist, xyz, (size_t)o.n, o.seed);
    if (s != GPK_OK) {
        cli_error(cmd, "particle generator: %s", gpk_status_string(s));
        rc = CLI_FAIL;
    }
    gpk_octree tree;
    memset(&tree, 0, sizeof tree);
    for (uint64_t r = 0; r < o.reps && rc == CLI_OK; r++) {
        if (r) gpk_octree_free(&tree);
        memset(&tree, 0, sizeof tree);
        cli_progress(cmd, "building the octree of %llu particles (%llu of %llu)", (unsigned long long)o.n,
                     (unsigned long long)r + 1, (unsigned long long)o.reps);
        const double t0 = cli_now_ms();
        s = gpk_octree_build(ctx, xyz, (size_t)o.n, (unsigned)o.threshold, o.scheme, &o.oo, &tree);
        times[r] = cli_now_ms() - t0;
        if (s != GPK_OK) {
            cli_error(cmd, "%s", gpk_last_error(ctx));
            rc = CLI_FAIL;
        }
    }
    char why[256];
    const char *bad = NULL;
    if (rc == CLI_OK) {
        const double ms = cli_median(times, (size_t)o.reps);
        bad = cli_octree_check(&tree, (unsigned)o.threshold, why, sizeof why);
        octree_report(&o, &info, &tree, ms, bad);
        if (bad) {
            cli_error(cmd, "check FAILED: %s", bad);
            rc = CLI_FAIL;
        }
        char err[600];
        if (rc == CLI_OK && o.svg && octree_svg(o.svg, &tree, err, sizeof err) != 0) {
            cli_error(cmd, "%s", err);
            rc = CLI_FAIL;
        }
    }
    gpk_octree_free(&tree);
    free(xyz);
    free(times);
    gpk_ctx_destroy(ctx);
    return rc;
}
