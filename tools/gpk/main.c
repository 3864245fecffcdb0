/* gpk: the command-line front end. Dispatches to one file per subcommand
 * and holds the small helpers they share (options, sizes, clocks, JSON). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime(CLOCK_MONOTONIC) */

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "io.h"

/* ---- shared helpers ------------------------------------------------------- */

void cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "gpk %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int cli_opt_value(const char *cmd, int argc, char **argv, int *i, const char *shortname,
                  const char *name, const char **val)
{
    const char *a = argv[*i];
    size_t len = strlen(name);
    if (strncmp(a, name, len) == 0 && a[len] == '=') {
        *val = a + len + 1;
        return 1;
    }
    if (strcmp(a, name) == 0 || (shortname && strcmp(a, shortname) == 0)) {
        if (*i + 1 >= argc) {
            cli_error(cmd, "option %s needs a value (see gpk %s --help)", a, cmd);
            return -1;
        }
        *i += 1;
        *val = argv[*i];
        return 1;
    }
    return 0;
}

int cli_flag(const char *arg, const char *shortname, const char *name)
{
    return strcmp(arg, name) == 0 || (shortname && strcmp(arg, shortname) == 0);
}

int cli_is_help(const char *arg) { return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0; }

int cli_parse_uint(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    if (!s || !*s || *s == '-' || *s == '+') return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || end == s) return -1;
    if (v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

int cli_parse_size(const char *s, uint64_t *out)
{
    if (!s || *s < '0' || *s > '9') return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno) return -1;
    if (*end == '^') { /* base^exponent, e.g. 2^28 */
        char *e2;
        if (end[1] < '0' || end[1] > '9') return -1;
        unsigned long long ex = strtoull(end + 1, &e2, 10);
        if (errno || *e2) return -1;
        unsigned long long r = 1;
        for (unsigned long long k = 0; k < ex; k++) {
            if (v != 0 && r > UINT64_MAX / v) return -1;
            r *= v;
        }
        *out = r;
        return 0;
    }
    unsigned shift = 0;
    switch (*end) {
    case '\0': break;
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    case 't': case 'T': shift = 40; end++; break;
    default: return -1;
    }
    if (shift && *end == 'i') end++;
    if (*end) return -1;
    if (shift && v > (UINT64_MAX >> shift)) return -1;
    *out = (uint64_t)v << shift;
    return 0;
}

const char *cli_size_str(uint64_t n, char *buf, size_t len)
{
    if (n >= 2 && (n & (n - 1)) == 0) {
        unsigned k = 0;
        while ((1ull << k) != n) k++;
        snprintf(buf, len, "2^%u", k);
    } else {
        snprintf(buf, len, "%llu", (unsigned long long)n);
    }
    return buf;
}

double cli_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cli_median(double *v, size_t n)
{
    if (n == 0) return 0.0;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void cli_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20) fprintf(f, "\\u%04x", *p);
            else fputc(*p, f);
        }
    }
    fputc('"', f);
}

gpk_status cli_ctx_create(const char *cmd, gpk_ctx **ctx, gpk_backend b, int device, int threads)
{
    gpk_ctx_opts o = GPK_CTX_OPTS_INIT;
    o.backend = b;
    o.device = device;
    o.threads = threads;
    gpk_status s = gpk_ctx_create_ex(ctx, &o);
    if (s != GPK_OK)
        cli_error(cmd, "cannot use the %s backend: %s", gpk_backend_name(b),
                  *gpk_last_error(NULL) ? gpk_last_error(NULL) : gpk_status_string(s));
    return s;
}

void cli_json_ctx_info(FILE *f, const gpk_ctx_info *info)
{
    fputs("{\"backend\": ", f);
    cli_json_str(f, gpk_backend_name(info->backend));
    fputs(", \"device\": ", f);
    cli_json_str(f, info->device_name);
    fputs(", \"platform\": ", f);
    cli_json_str(f, info->platform);
    fprintf(f, ", \"compute_units\": %u, \"memory_bytes\": %llu, \"threads\": %u}",
            info->compute_units, (unsigned long long)info->memory_bytes, info->threads);
}

const char *cli_backends_built(void)
{
    return "cpu"
#ifdef GPK_HAVE_CUDA
           " cuda"
#endif
#ifdef GPK_HAVE_OPENCL
           " opencl"
#endif
        ;
}

/* ---- dispatch -------------------------------------------------------------- */

/* "gpk bench" holds several benchmarks, one file each: `bench sort`
 * (cmd_bench.c), `bench quicksort` (cmd_bench_quick.c), `bench octree`
 * (cmd_bench_octree.c), `bench search` (cmd_bench_search.c). The split is made here so each
 * file parses only its own options. */
static int bench_dispatch(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "quicksort") == 0) return cmd_bench_quick(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "octree") == 0) return cmd_bench_octree(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "search") == 0) return cmd_bench_search(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "sort") != 0 && !cli_is_help(argv[1])) {
        cli_error("bench", "unknown benchmark '%s' (gpk bench sort, gpk bench quicksort, gpk bench octree, "
                  "gpk bench search)",
                  argv[1]);
        return CLI_USAGE;
    }
    if (argc < 2 || cli_is_help(argv[1])) {
        FILE *f = argc < 2 ? stderr : stdout;
        cmd_bench_help(f);
        fputc('\n', f);
        cmd_bench_quick_help(f);
        fputc('\n', f);
        cmd_bench_octree_help(f);
        fputc('\n', f);
        cmd_bench_search_help(f);
        return argc < 2 ? CLI_USAGE : CLI_OK;
    }
    return cmd_bench(argc, argv);
}

static void bench_help(FILE *f)
{
    cmd_bench_help(f);
    fputc('\n', f);
    cmd_bench_quick_help(f);
    fputc('\n', f);
    cmd_bench_octree_help(f);
    fputc('\n', f);
    cmd_bench_search_help(f);
}

typedef struct command {
    const char *name;
    int (*run)(int, char **);
    void (*help)(FILE *);
    const char *summary;
} command;

static const command commands[] = {
    {"sort", cmd_sort, cmd_sort_help, "sort a raw or .npy key file, or generated keys"},
    {"bench", bench_dispatch, bench_help,
     "benchmark against the peers (bench sort, bench quicksort, bench octree, bench search)"},
    {"pic", cmd_pic, cmd_pic_help, "the particle-in-cell sorting test (Helluy 2011, 4.2)"},
    {"octree", cmd_octree, cmd_octree_help, "octree of particles through a task pool (Cederman & Tsigas 2008)"},
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
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-7s %s\n", commands[i].name, commands[i].summary);
    fprintf(f,
            "  help    gpk help COMMAND: the options of a command\n"
            "\n"
            "environment: GPK_BACKEND (auto, cpu, cuda, opencl) overrides the automatic\n"
            "backend choice, GPK_DEVICE selects the device, GPK_THREADS the CPU threads.\n"
            "Exit status: 0 success, 1 failure, 2 usage error. See gpk(1) and docs/cli.md.\n");
}

static void version(void)
{
    printf("gpk %s\n", gpk_version());
    printf("backends built: %s\n", cli_backends_built());
    printf("backends usable now:");
    const gpk_backend all[] = {GPK_BACKEND_CPU, GPK_BACKEND_CUDA, GPK_BACKEND_OPENCL};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (gpk_backend_available(all[i])) printf(" %s", gpk_backend_name(all[i]));
    printf("\n");
}

static void on_fatal_signal(int sig)
{
    io_out_remove_temps();
    signal(sig, SIG_DFL);
    raise(sig);
}

int main(int argc, char **argv)
{
    /* Past a file size limit (ulimit -f) a write then fails with EFBIG, and
     * the output's temporary file is removed, instead of a kill that would
     * leave it behind. */
    signal(SIGXFSZ, SIG_IGN);
    /* Interrupted or terminated: the outputs' temporary files go (the
     * files they would replace were never touched), then the signal ends
     * the process as it would have. */
    static const int fatal[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
        struct sigaction sa, old;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal_signal;
        sigemptyset(&sa.sa_mask);
        if (sigaction(fatal[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN) sigaction(fatal[i], &sa, NULL);
    }
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
