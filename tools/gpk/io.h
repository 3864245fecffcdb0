/* Array files for the CLI: raw little-endian binary and NumPy .npy (v1-v3).
 *
 * Accepted .npy arrays: 1-D, C order, little-endian dtype <u4 <i4 <f4 <u8
 * <i8 <f8; anything else is refused with a message naming the file. The
 * data must be exactly shape[0] * itemsize bytes: a short file is
 * "truncated", a long one "mismatched". "-" means stdin / stdout.
 */
#ifndef GPK_CLI_IO_H
#define GPK_CLI_IO_H

#include <stddef.h>

#include "gpk/gpk.h"

typedef enum io_format { IO_RAW = 0, IO_NPY = 1 } io_format;

typedef struct io_array {
    gpk_type type;
    size_t n;
    void *data;       /* malloc'd, n * gpk_type_size(type) bytes (may be NULL when n == 0) */
    io_format format; /* the format it was read in */
} io_array;

/* Reads path. The format comes from the content: the .npy magic selects
 * .npy (a name ending in .npy without the magic is an error), anything else
 * is raw and needs *type_opt. With .npy, a given *type_opt must match the
 * header. On failure returns non-zero, fills err (naming the file) and
 * leaves *out empty. */
int io_read(const char *path, const gpk_type *type_opt, io_array *out, char *err, size_t errlen);

/* Writes n elements of type t to path in format fmt. On failure returns
 * non-zero, fills err and removes the partly written file. */
int io_write(const char *path, io_format fmt, gpk_type t, const void *data, size_t n, char *err,
             size_t errlen);

/* The output format: .npy when path ends in ".npy", else `fallback`. */
io_format io_output_format(const char *path, io_format fallback);

void io_array_free(io_array *a);

#endif
