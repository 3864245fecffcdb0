/* gpk: the command-line front end. Dispatches to one file per subcommand.
 * The benchmarks (`gpk bench ...`, `gpk pic`) live in the separate program
 * gpk-bench (bench/), built beside gpk: they link the peers (CUB, thrust,
 * GNU parallel) and the library's internal timing hooks, which the installed
 * gpk must not carry, so gpk runs that program instead. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "io.h"

/* ---- the bench program ------------------------------------------------------ */

static const char bench_list[] =
    "usage: gpk bench BENCHMARK [OPTIONS]   (gpk bench BENCHMARK --help for its options)\n"
    "\n"
    "  sort       radix sort against the peers (CUB, std::sort, GNU parallel, qsort)\n"
    "  quicksort  quicksort and radix sort against their peers, Manca et al. (2015) figures 12-15\n"
    "  octree     octree builds through the task pools, Cederman & Tsigas (2008) figures 2-5\n"
    "  search     local search, Luong et al. (2009) tables 1-5\n"
    "  multi      the multi-GPU sort: the same keys on 1 GPU and spread over K (CUDA)\n"
    "  segmented  segmented sorts: many sorts at once against a loop of sorts (CPU) or CUB (CUDA)\n"
    "\n"
    "gpk bench --help prints every option of every benchmark.\n";

/* Runs gpk-bench from gpk's own directory with gpk's arguments (argv[0]
 * replaced); returns only on failure. */
static int run_bench_program(const char *cmd, char **argv)
{
    return cli_exec_beside(cmd, argv, "gpk-bench", "",
                           "the benchmarks are the program gpk-bench, built beside gpk in the build tree and "
                           "not installed by default");
}

static int bench_forward(int argc, char **argv)
{
    if (argc < 2) {
        fputs(bench_list, stderr);
        return CLI_USAGE;
    }
    return run_bench_program("bench", argv - 1);
}

static int pic_forward(int argc, char **argv) { return run_bench_program("pic", argv - 1); }

/* ---- dispatch -------------------------------------------------------------- */

typedef struct command {
    const char *name;
    int (*run)(int, char **);
    void (*help)(FILE *); /* NULL: the help is the bench program's */
    const char *summary;
} command;

static const command commands[] = {
    {"sort", cmd_sort, cmd_sort_help, "sort a raw or .npy key file, or generated keys"},
    {"bench", bench_forward, NULL,
     "benchmark against the peers (bench sort, bench quicksort, bench octree, bench search, bench multi)"},
    {"pic", pic_forward, NULL, "the particle-in-cell sorting test (Helluy 2011, 4.2)"},
    {"octree", cmd_octree, cmd_octree_help,
     "octree of particles through a task pool (Cederman & Tsigas 2008)"},
    {"qap", cmd_qap, cmd_qap_help, "quadratic assignment by parallel local search (Luong et al. 2009)"},
    {"tsp", cmd_tsp, cmd_tsp_help, "travelling salesman (TSPLIB) by parallel local search"},
    {"ppp", cmd_ppp, cmd_ppp_help, "permuted perceptron problem by parallel local search"},
    {"info", cmd_info, cmd_info_help, "show the backends and their devices"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static const command *find_command(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0) return &commands[i];
    return NULL;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gpk [--help] [--version] COMMAND [ARGS]\n"
            "\n"
            "gpk, the GPU parallel kit: portable radix sort on CPU, CUDA and OpenCL,\n"
            "quicksort on CPU and CUDA, task pools and octrees.\n"
            "\n"
            "commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++) fprintf(f, "  %-7s %s\n", commands[i].name, commands[i].summary);
    fprintf(f,
            "  help    gpk help COMMAND: the options of a command\n"
            "\n"
            "environment: GPK_BACKEND (%s) overrides the automatic\n"
            "backend choice, GPK_DEVICE selects the device, GPK_THREADS the CPU threads.\n"
            "Exit status: 0 success, 1 failure, 2 usage error. See gpk(1) and docs/cli.md.\n",
            cli_backend_choices());
}

static void version(void)
{
    printf("gpk %s\n", gpk_version());
    printf("backends built: %s\n", cli_backends_built());
    printf("backends usable now:");
    for (int i = 0; i < gpk_backend_count(); i++)
        if (gpk_backend_available(gpk_backend_at(i))) printf(" %s", gpk_backend_name(gpk_backend_at(i)));
    printf("\n");
}

int main(int argc, char **argv)
{
    io_out_cleanup_on_signals();
    atexit(cli_check_stdout_at_exit);
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    const char *a = argv[1];
    if (cli_is_help(a)) {
        usage(stdout);
        return CLI_OK;
    }
    if (strcmp(a, "--version") == 0 || strcmp(a, "-V") == 0) {
        version();
        return CLI_OK;
    }
    if (strcmp(a, "help") == 0) {
        if (argc < 3) {
            usage(stdout);
            return CLI_OK;
        }
        const command *c = find_command(argv[2]);
        if (!c) {
            fprintf(stderr, "gpk: unknown command '%s' (try gpk --help)\n", argv[2]);
            return CLI_USAGE;
        }
        if (!c->help) {
            char *args[] = {argv[0], argv[2], "--help", NULL};
            return run_bench_program(c->name, args);
        }
        c->help(stdout);
        return CLI_OK;
    }
    if (a[0] == '-') {
        fprintf(stderr, "gpk: unknown option '%s' (try gpk --help)\n", a);
        return CLI_USAGE;
    }
    const command *c = find_command(a);
    if (!c) {
        fprintf(stderr, "gpk: unknown command '%s' (try gpk --help)\n", a);
        return CLI_USAGE;
    }
    return c->run(argc - 1, argv + 1);
}
