/* gpk CLI: declarations shared by main.c and the subcommand files.
 *
 * Exit codes: 0 success, 1 runtime failure (a file, a device, a failed
 * check), 2 usage error (unknown option, bad value, missing argument).
 * Every message goes to stderr prefixed with "gpk CMD: ".
 */
#ifndef GPK_CLI_H
#define GPK_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gpk/gpk.h"

#define CLI_OK 0
#define CLI_FAIL 1
#define CLI_USAGE 2

/* Subcommands: argv[0] is the subcommand name. */
int cmd_sort(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_pic(int argc, char **argv);
int cmd_info(int argc, char **argv);
void cmd_sort_help(FILE *f);
/* gpk sort on records (cmd_sort_records.c), from cmd_sort. */
int cmd_sort_records(int argc, char **argv);
/* gpk sort --mpi (cmd_sort_mpi.c, built with MPI), from cmd_sort. */
int cmd_sort_mpi(int argc, char **argv);
void cmd_sort_records_help(FILE *f);
void cmd_bench_help(FILE *f);
void cmd_pic_help(FILE *f);
void cmd_info_help(FILE *f);
/* The benchmarks (bench/, the program gpk-bench): gpk bench quicksort
 * (cmd_bench_quick.c); bench/main.c routes "bench quicksort" there and
 * "bench sort" to cmd_bench. */
int cmd_bench_quick(int argc, char **argv);
void cmd_bench_quick_help(FILE *f);
/* gpk octree (cmd_octree.c) and gpk bench octree (cmd_bench_octree.c). */
int cmd_octree(int argc, char **argv);
void cmd_octree_help(FILE *f);
int cmd_bench_octree(int argc, char **argv);
void cmd_bench_octree_help(FILE *f);
/* gpk qap, gpk tsp, gpk ppp: local search (cmd_search.c). */
int cmd_qap(int argc, char **argv);
int cmd_tsp(int argc, char **argv);
int cmd_ppp(int argc, char **argv);
void cmd_qap_help(FILE *f);
void cmd_tsp_help(FILE *f);
void cmd_ppp_help(FILE *f);
/* gpk bench search: Luong et al. 2009, Tables 1-4 and ITS quality (cmd_bench_search.c). */
int cmd_bench_search(int argc, char **argv);
void cmd_bench_search_help(FILE *f);
struct gpk_octree;
/* NULL when the tree keeps gpk_octree_build's promises, else a message in buf. */
const char *cli_octree_check(const struct gpk_octree *t, unsigned threshold, char *buf, size_t len);

/* Best-known values of the shared instances (cmd_search.c): `name` looked up
 * in the file `table` next to the instance file `path`, lines "name SEP
 * value [SEP kind]"; have = 0 when the table or the name is missing. */
typedef struct cli_best_known {
    int have;
    int64_t value;
    char kind[8];     /* OPT or BKS */
    char source[160]; /* "TABLE:LINE" the value came from, or "" */
    char note[224];   /* why a table beside the instance was passed over (not a regular file, a value
                         out of range), or "" (tools/gpk/best_known.h) */
} cli_best_known;
cli_best_known cli_find_best_known(const char *path, const char *table, char sep, const char *name,
                                   const char *default_kind);
struct gpk_search_problem;
struct gpk_search_result;
/* NULL when r is a solution of the problem's size whose full evaluation is
 * r->best, else why (in buf or a constant). */
const char *cli_check_search_result(const struct gpk_search_problem *pb, const struct gpk_search_result *r,
                                    uint32_t n, char *buf, size_t len);

/* "gpk CMD: message\n" on stderr. */
void cli_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Runs the program `program` that stands in this program's directory with
 * argv (argv[0] replaced); returns CLI_FAIL, after a message (each begins
 * with prefix; the failure to run ends with "(hint)"), only when it could
 * not run it. */
int cli_exec_beside(const char *cmd, char **argv, const char *program, const char *prefix, const char *hint);

/* Option matching. cli_opt_value matches argv[*i] against a long option
 * that takes a value ("--name value" or "--name=value") or its short alias
 * ("-o value"; short may be NULL). Returns 1 with *val set (and *i moved
 * past a separate value), 0 when argv[*i] is something else, -1 after
 * printing an error when the value is missing. */
int cli_opt_value(const char *cmd, int argc, char **argv, int *i, const char *shortname, const char *name,
                  const char **val);
/* The typed options every command spells alike, matched as cli_opt_value
 * does (1 set, 0 another argument, -1 after the error): a key or value
 * type ("unknown WHAT 'x' (u32 i32 f32 u64 i64 f64)") and --backend. */
int cli_opt_type(const char *cmd, int argc, char **argv, int *i, const char *name, const char *what,
                 gpk_type *dst);
int cli_opt_backend(const char *cmd, int argc, char **argv, int *i, gpk_backend *dst);
/* 1 when argv[i] is the flag (long name or short alias), else 0. */
int cli_flag(const char *arg, const char *shortname, const char *name);
/* The output flags every sort command takes (--check, --json, -q/--quiet):
 * 1 when arg is one of them, which is then set in *check, *json or *quiet. */
int cli_output_flag(const char *arg, int *check, int *json, int *quiet);
/* A table of numeric options, each with its range. When argv[*i] is one of
 * them: its index in the table, with its checked value in *v; -1 after a
 * message (no value, or one out of range); -2 when it is none of them. */
typedef struct cli_uint_opt {
    const char *name;
    uint64_t lo, hi;
} cli_uint_opt;
int cli_opt_uint_of(const char *cmd, int argc, char **argv, int *i, const cli_uint_opt *opts, size_t count,
                    uint64_t *v);
/* cli_opt_uint_of with a hint per option (hints[k] for opts[k]) in the
 * message on a bad value: "bad NAME 'V' (hint)", or "bad NAME 'V'" when
 * the hint is "". */
int cli_opt_uint_hinted(const char *cmd, int argc, char **argv, int *i, const cli_uint_opt *opts,
                        const char *const *hints, size_t count, uint64_t *v);
/* 1 when arg is --help or -h. */
int cli_is_help(const char *arg);

/* Sizes: "1048576", "2^20", "1k" (= 1024), "256M" (= 256 * 2^20), "1G";
 * binary suffixes, as the paper's "8M" = 2^23. "Ki", "Mi", "Gi" are also
 * taken. Returns 0 on success, -1 on a malformed or overflowing value. */
int cli_parse_size(const char *s, uint64_t *out);
/* A plain unsigned integer within [lo, hi]. */
int cli_parse_uint(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
/* Formats n as "2^k" when n is a power of two, else in decimal. */
const char *cli_size_str(uint64_t n, char *buf, size_t len);

/* Monotonic wall clock in milliseconds. */
double cli_now_ms(void);
/* Median of v[0..n) (sorts v in place). */
double cli_median(double *v, size_t n);

/* The buffers of a check, freed together: cli_scratch_get returns one of
 * `bytes` (NULL for 0 bytes; NULL with failed set when out of memory),
 * cli_scratch_free frees every one. Start from {0}. */
typedef struct cli_scratch {
    void *buf[4];
    int n;
    int failed;
} cli_scratch;
void *cli_scratch_get(cli_scratch *s, size_t bytes);
void cli_scratch_free(cli_scratch *s);

/* JSON helpers: a quoted, escaped string. */
void cli_json_str(FILE *f, const char *s);

/* Creates a context for backend b with the given device (-1 = default) and
 * CPU thread count (0 = all); prints the library's message on failure. */
gpk_status cli_ctx_create(const char *cmd, gpk_ctx **ctx, gpk_backend b, int device, int threads);

/* A progress line on a terminal: "gpk CMD: ..." rewritten in place on
 * stderr, nothing when stderr is not a terminal (logs keep only results).
 * cli_progress_end clears it before the next message. */
void cli_progress(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void cli_progress_end(void);

/* For atexit in main: when what was printed on stdout (--json, --help,
 * gpk info) could not all be written (a full disk, a closed pipe), says so
 * on stderr and ends the process with CLI_FAIL instead of success. */
void cli_check_stdout_at_exit(void);

/* msg, a library error about backend (a name such as "cuda"), without the
 * backend's name in front when it has one: for messages that name it. */
const char *cli_backend_reason(const char *backend, const char *msg);
int cli_stderr_is_tty(void);

/* Writes one backend's gpk_ctx_info as a JSON object. */
void cli_json_ctx_info(FILE *f, const gpk_ctx_info *info);

/* The backends built into the library, e.g. "cpu cuda opencl", and every
 * backend it knows with auto, "auto, cpu, cuda, opencl" (from the
 * library's list, gpk_backend_at: a new backend needs no change here). */
const char *cli_backends_built(void);
const char *cli_backend_choices(void);

#endif
