/* gpk sort on records: a structured .npy sorted by one named field, or raw
 * fixed-size records sorted by a key at a byte offset, through
 * gpk_sort_records. cmd_sort hands over when a record option is given. */
#define _POSIX_C_SOURCE 200809L /* fileno, fstat, mkstemp */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "io.h"
#include "gpk/sort.h"

void cmd_sort_records_help(FILE *f)
{
    fprintf(f,
            "records (gpk sort IN --key NAME, or gpk sort IN --record-size S --key-offset K\n"
            "--key-type T): sorts whole records by one key with gpk_sort_records.\n"
            "  --key NAME          IN is a structured .npy (1-D, C order); sort by its field\n"
            "                      NAME (<u4 <i4 <f4 <u8 <i8 <f8). OUT is a .npy of the same dtype\n"
            "  --record-size S     IN is raw records of S bytes (1..256) ...\n"
            "  --key-offset K      ... whose key starts at byte K (default 0) ...\n"
            "  --key-type T        ... and has type T: u32 i32 f32 u64 i64 f64. OUT is raw\n"
            "  with -o OUT, --algo, --backend, --device, --threads, --check, --json, -q as for\n"
            "  keys. The radix sort keeps records with equal keys in input order.\n");
}

typedef struct rec_args {
    const char *in, *out, *key;
    uint64_t size, offset;
    int have_size, have_offset, have_ktype;
    gpk_type ktype;
    gpk_sort_opts so;
    gpk_backend backend;
    int device, threads, check, json, quiet;
} rec_args;

static int parse(int argc, char **argv, rec_args *a)
{
    const char *cmd = "sort";
    gpk_sort_opts so = GPK_SORT_OPTS_INIT;
    memset(a, 0, sizeof *a);
    a->so = so;
    a->backend = GPK_BACKEND_AUTO;
    a->device = -1;
    static const cli_uint_opt nums[] = {{"--record-size", 1, 256},
                                        {"--key-offset", 0, 255},
                                        {"--device", 0, 1u << 20},
                                        {"--threads", 0, 1u << 20}};
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *val = NULL;
        uint64_t v;
        int m;
        if (cli_output_flag(arg, &a->check, &a->json, &a->quiet)) continue;
        const int k = cli_opt_uint_of(cmd, argc, argv, &i, nums, sizeof nums / sizeof nums[0], &v);
        if (k == -1) return -1;
        switch (k) {
        case 0:
            a->size = v;
            a->have_size = 1;
            continue;
        case 1:
            a->offset = v;
            a->have_offset = 1;
            continue;
        case 2: a->device = (int)v; continue;
        case 3: a->threads = (int)v; continue;
        }
        if ((m = cli_opt_value(cmd, argc, argv, &i, "-o", "--output", &val)) != 0) {
            if (m < 0) return -1;
            a->out = val;
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--key", &val)) != 0) {
            if (m < 0) return -1;
            a->key = val;
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--key-type", &val)) != 0) {
            if (m < 0) return -1;
            if (gpk_type_parse(val, &a->ktype) != GPK_OK) {
                cli_error(cmd, "unknown key type '%s' (u32 i32 f32 u64 i64 f64)", val);
                return -1;
            }
            a->have_ktype = 1;
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--algo", &val)) != 0) {
            if (m < 0) return -1;
            if (gpk_sort_algo_parse(val, &a->so.algorithm) != GPK_OK) {
                cli_error(cmd, "unknown algorithm '%s' (auto, radix, quick, quick-recursive)", val);
                return -1;
            }
        } else if ((m = cli_opt_backend(cmd, argc, argv, &i, &a->backend)) != 0) {
            if (m < 0) return -1;
        } else if (arg[0] == '-' && arg[1] != '\0') {
            cli_error(cmd,
                      "option '%s' does not apply to records (they take -o, --key or "
                      "--record-size/--key-offset/--key-type, --algo, --backend, --device, "
                      "--threads, --check, --json, -q)",
                      arg);
            return -1;
        } else if (a->in) {
            cli_error(cmd, "more than one input file ('%s' and '%s')", a->in, arg);
            return -1;
        } else {
            a->in = arg;
        }
    }
    if (!a->in) {
        cli_error(cmd,
                  "records need an input file (a structured .npy with --key, or raw with "
                  "--record-size)");
        return -1;
    }
    if (a->key && (a->have_size || a->have_offset || a->have_ktype)) {
        cli_error(cmd,
                  "--key names a field of a structured .npy; --record-size, --key-offset and "
                  "--key-type describe raw records: give one or the other");
        return -1;
    }
    if (!a->key && !a->have_size) {
        cli_error(cmd, "raw records need --record-size (and --key-type, --key-offset)");
        return -1;
    }
    if (!a->key && !a->have_ktype) {
        cli_error(cmd, "raw records need --key-type (u32 i32 f32 u64 i64 f64)");
        return -1;
    }
    if (!a->key && a->offset + gpk_type_size(a->ktype) > a->size) {
        cli_error(cmd, "a %s key at byte %llu does not fit a record of %llu bytes", gpk_type_name(a->ktype),
                  (unsigned long long)a->offset, (unsigned long long)a->size);
        return -1;
    }
    if (a->json && a->out && strcmp(a->out, "-") == 0) {
        cli_error(cmd, "--json and an output to '-' would both write to stdout");
        return -1;
    }
    /* Checked before the sort; sorting a file in place with -o is fine. */
    const char *outs[1] = {a->out}, *out_roles[1] = {"-o"}, *ins[1] = {a->in}, *in_roles[1] = {"(records)"};
    const int own[1] = {0};
    char err[600];
    if (io_check_outputs(outs, out_roles, own, 1, ins, in_roles, 1, err, sizeof err) != 0) {
        cli_error(cmd, "%s", err);
        return -1;
    }
    return 0;
}

/* ---- output ---------------------------------------------------------------------- */

/* The header, then the sorted records, through the safe writer: a failed
 * write leaves the user's previous file as it was. */
static int write_out(const char *path, const void *a, size_t alen, const void *b, size_t blen, char *err,
                     size_t errlen)
{
    io_out o;
    if (io_out_open(&o, path, err, errlen) != 0) return -1;
    if (fwrite(a, 1, alen, o.f) != alen || fwrite(b, 1, blen, o.f) != blen) {
        snprintf(err, errlen, "cannot write %s: %s", o.name, strerror(errno));
        io_out_abort(&o);
        return -1;
    }
    return io_out_commit(&o, err, errlen);
}

/* ---- the check -------------------------------------------------------------------- */

static size_t g_size; /* record size for cmp_record (qsort has no context) */
static int cmp_record(const void *x, const void *y) { return memcmp(x, y, g_size); }

/* The records are the input's, ordered as the reference orders their keys;
 * stable: exactly the reference's order, else equal keys' records may come
 * in any order (compared as multisets). */
static int check_records(const unsigned char *orig, const unsigned char *got, size_t n, size_t size,
                         size_t off, gpk_type t, int stable, char *why, size_t whylen)
{
    size_t kw = gpk_type_size(t), nb = n ? n : 1;
    cli_scratch sc = {0};
    unsigned char *keys = cli_scratch_get(&sc, nb * kw), *run_a = cli_scratch_get(&sc, nb * size),
                  *run_b = cli_scratch_get(&sc, nb * size);
    uint32_t *sig = cli_scratch_get(&sc, nb * sizeof *sig);
    int ok = 0;
    if (sc.failed) {
        snprintf(why, whylen, "out of memory for the check");
        goto done;
    }
    for (size_t i = 0; i < n; i++) memcpy(keys + i * kw, orig + i * size + off, kw);
    if (gpk_sort_reference(t, keys, 0, NULL, sig, n, 0) != GPK_OK) {
        snprintf(why, whylen, "the reference sort failed");
        goto done;
    }
    for (size_t s = 0, e; s < n; s = e) {
        for (e = s + 1; e < n && memcmp(keys + e * kw, keys + s * kw, kw) == 0; e++) {}
        for (size_t j = s; j < e; j++) {
            if (memcmp(got + j * size + off, keys + j * kw, kw) != 0) {
                snprintf(why, whylen, "the key of record %zu differs from the reference", j);
                goto done;
            }
            memcpy(run_a + (j - s) * size, got + j * size, size);
            memcpy(run_b + (j - s) * size, orig + (size_t)sig[j] * size, size);
        }
        if (!stable && e - s > 1) {
            g_size = size;
            qsort(run_a, e - s, size, cmp_record);
            qsort(run_b, e - s, size, cmp_record);
        }
        if (memcmp(run_a, run_b, (e - s) * size) != 0) {
            snprintf(why, whylen, "records %zu..%zu are not the input's records of those keys%s", s, e - 1,
                     stable ? " in input order" : "");
            goto done;
        }
    }
    ok = 1;
done:
    cli_scratch_free(&sc);
    return ok;
}

int cmd_sort_records(int argc, char **argv)
{
    const char *cmd = "sort";
    rec_args a;
    if (parse(argc, argv, &a) != 0) return CLI_USAGE;
    char err[600], why[300] = "";
    int rc = CLI_FAIL;
    gpk_ctx *ctx = NULL;
    unsigned char *orig = NULL;
    size_t len = 0;
    if (!a.quiet) cli_progress(cmd, "reading %s", a.in);
    unsigned char *buf = io_read_bytes(a.in, &len, err, sizeof err);
    if (!buf) {
        cli_error(cmd, "%s", err);
        return CLI_FAIL;
    }
    io_npy_records r = {0, 0, a.size, a.offset, a.ktype};
    if (a.key) {
        if (io_parse_npy_records(buf, len, a.in, a.key, &r, err, sizeof err) != 0) {
            cli_error(cmd, "%s", err);
            goto done;
        }
    } else if (len >= 6 && memcmp(buf, "\x93NUMPY", 6) == 0) {
        cli_error(cmd, "%s is a .npy: sort its records by a field with --key NAME", a.in);
        rc = CLI_USAGE;
        goto done;
    } else if (len % r.size != 0) {
        cli_error(cmd, "%s: %zu bytes is not a whole number of %llu-byte records", a.in, len,
                  (unsigned long long)r.size);
        goto done;
    } else {
        r.n = len / r.size;
    }
    unsigned char *recs = buf + r.header;
    const size_t n = (size_t)r.n, size = (size_t)r.size;
    if (a.check && !(orig = malloc(n * size + 1))) {
        cli_error(cmd, "out of memory for a copy of the input (--check)");
        goto done;
    }
    if (orig) memcpy(orig, recs, n * size);
    if (cli_ctx_create(cmd, &ctx, a.backend, a.device, a.threads) != GPK_OK) goto done;
    gpk_ctx_info info;
    gpk_ctx_info_get(ctx, &info);
    if (!a.quiet) cli_progress(cmd, "sorting %zu records on %s", n, gpk_backend_name(info.backend));
    double t0 = cli_now_ms();
    gpk_status s = gpk_sort_records(ctx, recs, n, size, (size_t)r.offset, r.ktype, &a.so);
    double ms = cli_now_ms() - t0;
    if (s != GPK_OK) {
        cli_error(cmd, "sorting %zu records on %s failed: %s", n, gpk_backend_name(info.backend),
                  gpk_last_error(ctx));
        goto done;
    }
    const gpk_sort_algo ran = gpk_last_sort_algo(ctx);
    const char *check = "not run";
    if (a.check && !a.quiet) cli_progress(cmd, "checking against the reference");
    if (a.check)
        check = check_records(orig, recs, n, size, (size_t)r.offset, r.ktype, ran == GPK_SORT_RADIX, why,
                              sizeof why)
            ? "ok"
            : "FAILED";
    if (strcmp(check, "FAILED") != 0 && a.out &&
        write_out(a.out, buf, r.header, recs, n * size, err, sizeof err) != 0) {
        cli_error(cmd, "%s", err);
        goto done;
    }
    cli_progress_end();
    if (!a.quiet) {
        fprintf(stderr, "gpk sort: %s (%s), %s: %zu records of %zu bytes by a %s key at byte %llu in %.3f ms",
                gpk_backend_name(info.backend), info.device_name, gpk_sort_algo_name(ran), n, size,
                gpk_type_name(r.ktype), (unsigned long long)r.offset, ms);
        if (a.check) fprintf(stderr, ", check %s", check);
        fputc('\n', stderr);
    }
    if (a.json) {
        printf("{\"command\": \"sort\", \"gpk_version\": ");
        cli_json_str(stdout, gpk_version());
        printf(", \"backend\": ");
        cli_json_ctx_info(stdout, &info);
        printf(", \"input\": ");
        cli_json_str(stdout, a.in);
        printf(", \"mode\": \"records\", \"n\": %zu, \"record_size\": %zu, \"key_offset\": %llu, "
               "\"key_type\": \"%s\"",
               n, size, (unsigned long long)r.offset, gpk_type_name(r.ktype));
        if (a.key) {
            printf(", \"key\": ");
            cli_json_str(stdout, a.key);
        }
        printf(", \"algorithm_asked\": \"%s\", \"algorithm\": \"%s\", \"ms\": %.6f, \"check\": \"%s\"",
               gpk_sort_algo_name(a.so.algorithm), gpk_sort_algo_name(ran), ms, check);
        if (why[0]) {
            printf(", \"check_error\": ");
            cli_json_str(stdout, why);
        }
        printf("}\n");
    }
    if (strcmp(check, "FAILED") == 0) {
        cli_error(cmd, "check FAILED: %s", why);
        goto done;
    }
    rc = CLI_OK;
done:
    free(buf);
    free(orig);
    gpk_ctx_destroy(ctx);
    return rc;
}
