/* gpk sort's segmented mode: --rows N, --segments FILE, --descending. The
 * options parse here, and the sort and its --check run here, so that
 * cmd_sort.c only hands them over. */
#ifndef GPK_CLI_SORT_SEGMENTS_H
#define GPK_CLI_SORT_SEGMENTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gpk/sort.h"

typedef struct sort_seg_args {
    int on;            /* --rows or --segments given */
    uint64_t rows;     /* --rows N: N rows of n / N keys (0: not given) */
    const char *file;  /* --segments FILE: S + 1 offsets (u64 raw, or .npy of an integer type) */
    int descending;    /* --descending */
    gpk_segments segs; /* filled by sort_seg_prepare */
    uint64_t *offsets; /* the file's offsets, owned */
    uint64_t *ends;    /* segs.end (offsets + 1 would alias; a copy keeps segs plain) */
} sort_seg_args;

/* Matches one of the options at argv[*i]: 1 taken, 0 not ours, -1 after a
 * usage error. */
int sort_seg_parse(const char *cmd, int argc, char **argv, int *i, sort_seg_args *s);
/* The help lines of the options. */
void sort_seg_help(FILE *f);
/* Checks the options against the others of the command (nonzero: a usage
 * error, reported) and, once the keys are read (n of them), builds the
 * segments: the rows must divide n; the file's offsets must start at 0,
 * never decrease and end at n. 0 on success, else reported. */
int sort_seg_check_opts(const char *cmd, const sort_seg_args *s, const gpk_radix_opts *ro,
                        int have_ro_tunables);
int sort_seg_prepare(const char *cmd, sort_seg_args *s, size_t n);
/* The sort: keys with values (vw 4 or 8: value_type), or sigma (per
 * segment), or keys alone. */
gpk_status sort_seg_run(gpk_ctx *ctx, const sort_seg_args *s, gpk_type t, void *keys, gpk_type value_type,
                        void *values, uint32_t *sigma, size_t n);
/* --check: the result against gpk_sort_segmented_reference of the input.
 * 1 when it matches, else 0 with why. */
int sort_seg_verify(const sort_seg_args *s, gpk_type t, const void *orig_keys, const void *keys, size_t vw,
                    const void *orig_vals, const void *vals, const uint32_t *sigma, size_t n, char *why,
                    size_t why_len);
void sort_seg_free(sort_seg_args *s);

#endif
