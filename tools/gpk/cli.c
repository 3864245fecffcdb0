/* gpk CLI: the small helpers the subcommands share (options, sizes, clocks,
 * JSON); linked into gpk and into the bench program gpk-bench. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime(CLOCK_MONOTONIC), isatty, fileno, execv, readlink */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* ---- shared helpers ------------------------------------------------------- */

static int progress_shown; /* a progress line is on the terminal */

void cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    cli_progress_end();
    fprintf(stderr, "gpk %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int cli_exec_beside(const char *cmd, char **argv, const char *program, const char *prefix, const char *hint)
{
    char self[4096];
    const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 32);
    if (len <= 0) {
        cli_error(cmd, "%scannot find this program's directory: %s", prefix, strerror(errno));
        return CLI_FAIL;
    }
    self[len] = '\0';
    char *slash = strrchr(self, '/');
    strcpy(slash ? slash + 1 : self, program);
    argv[0] = self;
    execv(self, argv);
    cli_error(cmd, "%scannot run %s: %s (%s)", prefix, self, strerror(errno), hint);
    return CLI_FAIL;
}

int cli_opt_value(const char *cmd, int argc, char **argv, int *i, const char *shortname, const char *name,
                  const char **val)
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

int cli_output_flag(const char *arg, int *check, int *json, int *quiet)
{
    int *dst = cli_flag(arg, NULL, "--check") ? check
        : cli_flag(arg, NULL, "--json")       ? json
        : cli_flag(arg, "-q", "--quiet")      ? quiet
                                              : NULL;
    if (dst) *dst = 1;
    return dst != NULL;
}

int cli_opt_uint_of(const char *cmd, int argc, char **argv, int *i, const cli_uint_opt *opts, size_t count,
                    uint64_t *v)
{
    return cli_opt_uint_hinted(cmd, argc, argv, i, opts, NULL, count, v);
}

int cli_opt_uint_hinted(const char *cmd, int argc, char **argv, int *i, const cli_uint_opt *opts,
                        const char *const *hints, size_t count, uint64_t *v)
{
    for (size_t k = 0; k < count; k++) {
        const char *val;
        const int m = cli_opt_value(cmd, argc, argv, i, NULL, opts[k].name, &val);
        if (m < 0) return -1;
        if (m == 0) continue;
        if (cli_parse_uint(val, opts[k].lo, opts[k].hi, v) != 0) {
            if (!hints)
                cli_error(cmd, "bad value '%s' for %s (expected %llu..%llu)", val, opts[k].name,
                          (unsigned long long)opts[k].lo, (unsigned long long)opts[k].hi);
            else if (*hints[k]) cli_error(cmd, "bad %s '%s' (%s)", opts[k].name, val, hints[k]);
            else cli_error(cmd, "bad %s '%s'", opts[k].name, val);
            return -1;
        }
        return (int)k;
    }
    return -2;
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
    case 'k':
    case 'K':
        shift = 10;
        end++;
        break;
    case 'm':
    case 'M':
        shift = 20;
        end++;
        break;
    case 'g':
    case 'G':
        shift = 30;
        end++;
        break;
    case 't':
    case 'T':
        shift = 40;
        end++;
        break;
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

void *cli_scratch_get(cli_scratch *s, size_t bytes)
{
    if (bytes == 0) return NULL;
    void *p = s->n < (int)(sizeof s->buf / sizeof s->buf[0]) ? malloc(bytes) : NULL;
    if (p) s->buf[s->n++] = p;
    else s->failed = 1;
    return p;
}

void cli_scratch_free(cli_scratch *s)
{
    while (s->n > 0) free(s->buf[--s->n]);
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
    if (s != GPK_OK) {
        /* GPK_BACKEND replaces AUTO: name the backend that failed */
        const char *env = getenv("GPK_BACKEND");
        gpk_backend eb;
        const int from_env = b == GPK_BACKEND_AUTO && env && *env && gpk_backend_parse(env, &eb) == GPK_OK &&
            eb != GPK_BACKEND_AUTO;
        cli_error(cmd, "cannot use the %s backend%s%s%s: %s", gpk_backend_name(from_env ? eb : b),
                  from_env ? " (GPK_BACKEND=" : "", from_env ? env : "", from_env ? ")" : "",
                  cli_backend_reason(gpk_backend_name(from_env ? eb : b),
                                     *gpk_last_error(NULL) ? gpk_last_error(NULL) : gpk_status_string(s)));
        return s;
    }
    /* More threads than the library takes (4 a core) are cut: said, so
     * that a sweep over --threads does not measure the same count twice
     * unknowingly. */
    long asked = threads;
    const char *src = "--threads";
    if (asked <= 0 && getenv("GPK_THREADS") && *getenv("GPK_THREADS")) {
        asked = strtol(getenv("GPK_THREADS"), NULL, 10);
        src = "GPK_THREADS";
    }
    gpk_ctx_info info;
    if (asked > 0 && gpk_ctx_info_get(*ctx, &info) == GPK_OK && info.threads > 0 &&
        (unsigned long)asked > info.threads)
        fprintf(stderr, "gpk %s: %s %ld is more than %u cores take (4 threads a core): %u threads\n", cmd,
                src, asked, info.threads / 4 ? info.threads / 4 : 1, info.threads);
    return s;
}

const char *cli_backend_reason(const char *backend, const char *msg)
{
    /* the library's message may start with the backend's name already
     * ("CUDA backend: not built in ..."): not said twice */
    const size_t l = strlen(backend);
    if (strncasecmp(msg, backend, l) == 0 && strncmp(msg + l, " backend: ", 10) == 0) return msg + l + 10;
    if (strncasecmp(msg, backend, l) == 0 && strncmp(msg + l, ": ", 2) == 0) return msg + l + 2;
    return msg;
}

int cli_stderr_is_tty(void)
{
    static int tty = -1;
    if (tty < 0) tty = isatty(fileno(stderr));
    return tty;
}

void cli_progress(const char *cmd, const char *fmt, ...)
{
    if (!cli_stderr_is_tty()) return;
    va_list ap;
    fprintf(stderr, "\rgpk %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\033[K", stderr); /* the rest of a longer previous line */
    fflush(stderr);
    progress_shown = 1;
}

void cli_progress_end(void)
{
    if (!progress_shown) return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
    progress_shown = 0;
}

void cli_json_ctx_info(FILE *f, const gpk_ctx_info *info)
{
    fputs("{\"backend\": ", f);
    cli_json_str(f, gpk_backend_name(info->backend));
    fputs(", \"device\": ", f);
    cli_json_str(f, info->device_name);
    fputs(", \"platform\": ", f);
    cli_json_str(f, info->platform);
    fprintf(f, ", \"compute_units\": %u, \"memory_bytes\": %llu, \"threads\": %u}", info->compute_units,
            (unsigned long long)info->memory_bytes, info->threads);
}

/* The library's backend names joined by sep into buf (with "auto" first
 * when with_auto; only those built in when built_only). */
static const char *backend_list(char *buf, size_t len, const char *sep, int with_auto, int built_only)
{
    size_t used = (size_t)snprintf(buf, len, "%s", with_auto ? "auto" : "");
    for (int i = 0; i < gpk_backend_count() && used < len; i++) {
        const gpk_backend b = gpk_backend_at(i);
        if (built_only && !gpk_backend_built(b)) continue;
        used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? sep : "", gpk_backend_name(b));
    }
    return buf;
}

const char *cli_backends_built(void)
{
    static char buf[256];
    return backend_list(buf, sizeof buf, " ", 0, 1);
}

const char *cli_backend_choices(void)
{
    static char buf[256];
    return backend_list(buf, sizeof buf, ", ", 1, 0);
}

int cli_opt_type(const char *cmd, int argc, char **argv, int *i, const char *name, const char *what,
                 gpk_type *dst)
{
    const char *val;
    int m = cli_opt_value(cmd, argc, argv, i, NULL, name, &val);
    if (m <= 0) return m;
    if (gpk_type_parse(val, dst) != GPK_OK) {
        cli_error(cmd, "unknown %s '%s' (u32 i32 f32 u64 i64 f64)", what, val);
        return -1;
    }
    return 1;
}

int cli_opt_backend(const char *cmd, int argc, char **argv, int *i, gpk_backend *dst)
{
    const char *val;
    int m = cli_opt_value(cmd, argc, argv, i, NULL, "--backend", &val);
    if (m <= 0) return m;
    if (gpk_backend_parse(val, dst) != GPK_OK) {
        cli_error(cmd, "unknown backend '%s' (%s)", val, cli_backend_choices());
        return -1;
    }
    return 1;
}

void cli_check_stdout_at_exit(void)
{
    const int had_error = ferror(stdout);
    errno = 0;
    if (fflush(stdout) != 0 || had_error) {
        const int saved = errno;
        fprintf(stderr, "gpk: cannot write to stdout: %s\n", saved ? strerror(saved) : "write error");
        _exit(CLI_FAIL);
    }
}
