/* gpk-bench: the benchmark program. `gpk bench ...` and `gpk pic ...` run
 * it with their arguments, so it takes the same command line as gpk
 * (gpk-bench bench sort ..., gpk-bench pic ...). Built beside gpk, not
 * installed by default: it links the peers (CUB, thrust, GNU parallel) and
 * the library's bench hooks (src/hooks/bench_hooks.h). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "bench_hooks.h"
#include "io.h"

/* Each benchmark is one file and parses only its own options:
 * `bench sort` (cmd_bench.c), `bench quicksort` (cmd_bench_quick.c),
 * `bench octree` (cmd_bench_octree.c), `bench search` (cmd_bench_search.c). */
/* bench/cmd_bench_multi.c: the multi-GPU sort (issue 17) */
int cmd_bench_multi(int argc, char **argv);
void cmd_bench_multi_help(FILE *f);
/* bench/cmd_bench_segmented.c: segmented and batched sorts */
int cmd_bench_segmented(int argc, char **argv);
void cmd_bench_segmented_help(FILE *f);

static void bench_help(FILE *f)
{
    cmd_bench_help(f);
    fputc('\n', f);
    cmd_bench_quick_help(f);
    fputc('\n', f);
    cmd_bench_octree_help(f);
    fputc('\n', f);
    cmd_bench_search_help(f);
    fputc('\n', f);
    cmd_bench_multi_help(f);
    fputc('\n', f);
    cmd_bench_segmented_help(f);
}

static int bench_dispatch(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "quicksort") == 0) return cmd_bench_quick(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "octree") == 0) return cmd_bench_octree(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "search") == 0) return cmd_bench_search(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "multi") == 0) return cmd_bench_multi(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "segmented") == 0) return cmd_bench_segmented(argc, argv);
    if (argc >= 2 && cli_is_help(argv[1])) {
        bench_help(stdout);
        return CLI_OK;
    }
    if (argc < 2 || strcmp(argv[1], "sort") != 0) {
        cli_error("bench",
                  "unknown benchmark '%s' (gpk bench sort, gpk bench quicksort, gpk bench octree, "
                  "gpk bench search, gpk bench multi, gpk bench segmented)",
                  argc < 2 ? "" : argv[1]);
        return CLI_USAGE;
    }
    return cmd_bench(argc, argv);
}

/* --hook NAME=VALUE, anywhere on the line and repeatable, forces a path of
 * the library for a measurement (a test hook of src/core/test_hooks.h, e.g.
 * --hook opencl_vendor=0); the options are taken out of argv. */
static int take_hooks(int *argc, char **argv)
{
    int out = 0;
    for (int i = 0; i < *argc; i++) {
        if (strcmp(argv[i], "--hook") != 0) {
            argv[out++] = argv[i];
            continue;
        }
        char *arg = i + 1 < *argc ? argv[++i] : NULL, *eq = arg ? strchr(arg, '=') : NULL;
        if (!eq) {
            cli_error("bench", "--hook takes NAME=VALUE");
            return CLI_USAGE;
        }
        *eq = '\0';
        if (gpk__test_set(arg, eq + 1) != 0) {
            cli_error("bench", "--hook %s=%s: no such hook or value (src/core/test_hooks.h)", arg, eq + 1);
            return CLI_USAGE;
        }
    }
    *argc = out;
    argv[out] = NULL;
    return CLI_OK;
}

int main(int argc, char **argv)
{
    io_out_cleanup_on_signals(); /* the --json files' temporaries */
    const int hooks = take_hooks(&argc, argv);
    if (hooks != CLI_OK) return hooks;
    if (argc >= 2 && strcmp(argv[1], "bench") == 0) return bench_dispatch(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "pic") == 0) return cmd_pic(argc - 1, argv + 1);
    fprintf(stderr,
            "usage: gpk-bench bench BENCHMARK [OPTIONS] | gpk-bench pic [OPTIONS]\n"
            "(the benchmark program behind gpk bench and gpk pic; see gpk bench --help)\n");
    return CLI_USAGE;
}
