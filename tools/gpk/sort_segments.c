/* gpk sort --rows / --segments / --descending (sort_segments.h). */
#include "sort_segments.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "io.h"

void sort_seg_help(FILE *f)
{
    fputs("  --rows N            sort each of N equal rows of the keys on its own (n / N keys each,\n"
          "                      N must divide n): gpk_sort_segmented_*\n"
          "  --segments FILE     sort each segment on its own: FILE holds S + 1 offsets (raw u64, or\n"
          "                      .npy of any integer type), 0 first and n last, never decreasing;\n"
          "                      segment i is [off[i], off[i+1]). --perm writes each segment's own\n"
          "                      permutation (argsort along the rows)\n"
          "  --descending        descending order (stable; NaNs last), of the plain sort (any\n"
          "                      --algo) or with --rows or --segments of the segmented one\n",
          f);
}

int sort_seg_parse(const char *cmd, int argc, char **argv, int *i, sort_seg_args *s)
{
    const char *val;
    int m;
    if (cli_flag(argv[*i], NULL, "--descending")) {
        s->descending = 1;
        return 1;
    }
    if ((m = cli_opt_value(cmd, argc, argv, i, NULL, "--rows", &val)) != 0) {
        if (m < 0) return -1;
        if (cli_parse_size(val, &s->rows) != 0 || s->rows == 0) {
            cli_error(cmd, "bad value '%s' for --rows (a count of at least 1)", val);
            return -1;
        }
        s->on = 1;
        return 1;
    }
    if ((m = cli_opt_value(cmd, argc, argv, i, NULL, "--segments", &val)) != 0) {
        if (m < 0) return -1;
        s->file = val;
        s->on = 1;
        return 1;
    }
    return 0;
}

int sort_seg_check_opts(const char *cmd, const sort_seg_args *s, const gpk_radix_opts *ro,
                        int have_ro_tunables)
{
    if (!s->on) return 0;
    if (s->rows && s->file) {
        cli_error(cmd, "--rows and --segments: give one of them");
        return -1;
    }
    if (have_ro_tunables || (ro->algorithm != GPK_SORT_AUTO && ro->algorithm != GPK_SORT_RADIX)) {
        cli_error(cmd,
                  "--rows and --segments run the segmented sort, which takes no --algo, "
                  "--key-bits, --radix-bits, --items, --groups or --scan-split");
        return -1;
    }
    return 0;
}

int sort_seg_prepare(const char *cmd, sort_seg_args *s, size_t n)
{
    memset(&s->segs, 0, sizeof s->segs);
    if (s->rows) {
        if (n % s->rows != 0) {
            cli_error(cmd, "--rows %llu does not divide the %zu keys", (unsigned long long)s->rows, n);
            return -1;
        }
        s->segs.count = (size_t)s->rows;
        s->segs.length = n / s->rows;
        return 0;
    }
    io_array off = {0};
    char err[600];
    const gpk_type raw = GPK_U64;
    /* a raw file is u64; a .npy says its own type */
    FILE *probe = fopen(s->file, "rb");
    unsigned char magic[6] = {0};
    const int npy = probe && fread(magic, 1, 6, probe) == 6 && memcmp(magic, "\x93NUMPY", 6) == 0;
    if (probe) fclose(probe);
    if (io_read(s->file, npy ? NULL : &raw, &off, err, sizeof err) != 0) {
        cli_error(cmd, "--segments: %s", err);
        return -1;
    }
    if (off.type == GPK_F32 || off.type == GPK_F64 || off.n < 1) {
        cli_error(cmd, "--segments %s: %s", s->file,
                  off.n < 1 ? "holds no offsets (S + 1 of them, 0 first)" : "offsets must be integers");
        io_array_free(&off);
        return -1;
    }
    const size_t count = off.n - 1;
    s->offsets = malloc(off.n * sizeof(uint64_t));
    s->ends = malloc((count ? count : 1) * sizeof(uint64_t));
    if (!s->offsets || !s->ends) {
        cli_error(cmd, "--segments: out of memory for %zu offsets", off.n);
        io_array_free(&off);
        return -1;
    }
    for (size_t i = 0; i < off.n; i++) {
        int64_t x;
        switch (off.type) {
        case GPK_U32: x = ((const uint32_t *)off.data)[i]; break;
        case GPK_I32: x = ((const int32_t *)off.data)[i]; break;
        case GPK_I64: x = ((const int64_t *)off.data)[i]; break;
        default: {
            const uint64_t u = ((const uint64_t *)off.data)[i];
            x = u > (uint64_t)INT64_MAX ? -1 : (int64_t)u;
        }
        }
        if (x < 0 || (i == 0 && x != 0) || (i > 0 && (uint64_t)x < s->offsets[i - 1]) ||
            (i + 1 == off.n && (uint64_t)x != n)) {
            cli_error(cmd,
                      "--segments %s: offset %zu is %lld; the offsets must start at 0, never decrease and "
                      "end at the %zu keys",
                      s->file, i, (long long)x, n);
            io_array_free(&off);
            return -1;
        }
        s->offsets[i] = (uint64_t)x;
    }
    io_array_free(&off);
    for (size_t i = 0; i < count; i++) s->ends[i] = s->offsets[i + 1];
    s->segs.count = count;
    s->segs.begin = s->offsets;
    s->segs.end = s->ends;
    return 0;
}

gpk_status sort_seg_run(gpk_ctx *ctx, const sort_seg_args *s, gpk_type t, void *keys, gpk_type value_type,
                        void *values, uint32_t *sigma, size_t n)
{
    gpk_segmented_opts o = GPK_SEGMENTED_OPTS_INIT;
    o.descending = s->descending;
    if (values) return gpk_sort_segmented_pairs(ctx, t, keys, value_type, values, n, &s->segs, &o);
    if (sigma) return gpk_sort_segmented_perm(ctx, t, keys, sigma, n, &s->segs, &o);
    return gpk_sort_segmented_keys(ctx, t, keys, n, &s->segs, &o);
}

int sort_seg_verify(const sort_seg_args *s, gpk_type t, const void *orig_keys, const void *keys, size_t vw,
                    const void *orig_vals, const void *vals, const uint32_t *sigma, size_t n, char *why,
                    size_t why_len)
{
    const size_t kw = gpk_type_size(t), nb = n ? n : 1;
    cli_scratch sc = {0};
    void *rk = cli_scratch_get(&sc, nb * kw), *rv = cli_scratch_get(&sc, nb * vw);
    uint32_t *rs = cli_scratch_get(&sc, sigma ? nb * 4 : 0);
    int ok = 0;
    if (sc.failed) {
        snprintf(why, why_len, "out of memory for the reference");
        goto done;
    }
    memcpy(rk, orig_keys, n * kw);
    if (vw) memcpy(rv, orig_vals, n * vw);
    const gpk_status st = gpk_sort_segmented_reference(t, rk, vw, rv, rs, n, &s->segs, s->descending);
    if (st != GPK_OK) {
        snprintf(why, why_len, "the reference failed: %s", gpk_status_string(st));
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        if (memcmp((const char *)keys + i * kw, (const char *)rk + i * kw, kw) != 0) {
            snprintf(why, why_len, "key %zu differs from the reference's", i);
            goto done;
        }
    if (vw && memcmp(vals, rv, n * vw) != 0) {
        snprintf(why, why_len, "the values differ from the reference's");
        goto done;
    }
    if (sigma && memcmp(sigma, rs, n * 4) != 0) {
        snprintf(why, why_len, "the permutation differs from the reference's");
        goto done;
    }
    ok = 1;
done:
    cli_scratch_free(&sc);
    return ok;
}

void sort_seg_free(sort_seg_args *s)
{
    free(s->offsets);
    free(s->ends);
    s->offsets = s->ends = NULL;
}
