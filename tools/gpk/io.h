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
#include <stdint.h>
#include <stdio.h>

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

/* io_read's work on an open stream (left open): name is for messages,
 * want_npy says the name promised a .npy. For tests and fuzzing. */
int io_read_stream(FILE *f, const char *name, int want_npy, const gpk_type *type_opt, io_array *out,
                   char *err, size_t errlen);

/* The whole of path ("-": stdin) as bytes, malloc'd, with a zero byte
 * after the *len bytes of data; a pipe or a device is read up to
 * GPK_MAX_INPUT (default: half of io_memory_limit). NULL with err set on
 * failure. */
unsigned char *io_read_bytes(const char *path, size_t *len, char *err, size_t errlen);

/* A structured .npy (records) in memory: buf holds len bytes of the file.
 * io_parse_npy_records finds the field `key` in the header's dtype and
 * fills *r (header, n, size, offset, ktype: the key is one of the six
 * scalar types), holding the shape to the data that follows; on failure
 * returns non-zero with err naming `name`. For gpk sort --key and fuzzing. */
typedef struct io_npy_records {
    size_t header; /* bytes before the data */
    uint64_t n, size, offset;
    gpk_type ktype;
} io_npy_records;
int io_parse_npy_records(const unsigned char *buf, size_t len, const char *name, const char *key,
                         io_npy_records *r, char *err, size_t errlen);

/* The bytes of memory this process may use: the machine's, or less where
 * its control group (cgroup v2 memory.max, v1 memory.limit_in_bytes, of
 * its group and every ancestor) sets a limit. *what (may be NULL) names
 * the one that applies, for messages. */
uint64_t io_memory_limit(const char **what);

/* Writes n elements of type t to path in format fmt through io_out_open /
 * io_out_commit: on failure returns non-zero, fills err, and the file the
 * user named is as it was. */
int io_write(const char *path, io_format fmt, gpk_type t, const void *data, size_t n, char *err,
             size_t errlen);

/* The output format: .npy when path ends in ".npy", else `fallback`. */
io_format io_output_format(const char *path, io_format fallback);

void io_array_free(io_array *a);

/* Safe output files. A regular file (or a new name) is written to a
 * temporary file in the same directory, then fsync'ed and renamed over the
 * target by io_out_commit, so a failed or killed run leaves the old file
 * intact; a symbolic link is followed and its target replaced, the link
 * kept. The temporary file has no name until io_out_commit gives it one
 * just before the rename (O_TMPFILE, where the file system has it), so
 * that even SIGKILL leaves nothing; elsewhere it is ".NAME.gpk-XXXXXX"
 * from the start. A replaced file's mode, owner and group are kept (the
 * owner where the user may give it: the superuser). "-" (stdout), pipes
 * and devices are written in place. Only the temporary file is ever
 * removed: never a path the user named.
 *
 *   io_out o;
 *   if (io_out_open(&o, path, err, len) != 0) ... fail;
 *   fprintf(o.f, ...);
 *   if (io_out_commit(&o, err, len) != 0) ... fail;   (or io_out_abort(&o))
 */
typedef struct io_out {
    FILE *f;          /* write here between open and commit / abort */
    const char *name; /* the path as named, or "<stdout>", for messages */
    char *target;     /* the file renamed over (a symlink's target); NULL when direct */
    char *tmp;        /* the temporary file's name; NULL when direct */
    int anon;         /* the temporary file has no name yet (tmp is the one it will get) */
} io_out;

/* On failure *o is empty (o->f == NULL) and err says why. */
int io_out_open(io_out *o, const char *path, char *err, size_t errlen);
/* As io_out_open, with a temporary file that has its name (o->tmp) from the
 * start, for other processes to open (gpk sort --mpi's ranks). */
int io_out_open_named(io_out *o, const char *path, char *err, size_t errlen);
/* Flushes, syncs, closes and renames; on any failure removes the temporary
 * file and fills err. *o is empty afterwards either way. */
int io_out_commit(io_out *o, char *err, size_t errlen);
/* Closes and removes the temporary file, leaving the target untouched (a
 * direct output keeps what was written). Safe on an empty *o. */
void io_out_abort(io_out *o);

/* Removes every temporary file that is open now; async-signal-safe, for a
 * handler of SIGINT / SIGTERM (main.c installs one; a command with its own
 * handler calls this from it). */
void io_out_remove_temps(void);

/* For a program's main: SIGXFSZ ignored (past ulimit -f a write fails
 * with EFBIG and the temporary file goes, instead of a kill leaving it),
 * and SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGUSR1, SIGUSR2 and
 * SIGALRM (unless ignored) remove the temporary files, say which signal
 * stopped gpk (not SIGPIPE), then end the process as they would have. */
void io_out_cleanup_on_signals(void);

/* Writes the array (with a .npy header when fmt says so) to an open
 * output without committing it, so that several outputs can all be
 * written before any replaces its file. */
int io_write_array(io_out *o, io_format fmt, gpk_type t, const void *data, size_t n, char *err,
                   size_t errlen);

/* Checks before any work that the outputs can be written and do not
 * collide: each directory exists and is writable, no output is a
 * directory, no two outputs name the same file ("-" counts as one file),
 * and no output is an input of another role ("-" as an input is stdin,
 * which an output "-" does not clash with). own[i] is the index in ins of
 * the input that output i may replace (a sort in place: the temporary file
 * makes that safe), or -1; own may be NULL. Roles name the options in the
 * message ("-o", "--perm"). NULL paths are skipped. Returns 0 or -1 with
 * err. */
int io_check_outputs(const char *const *outs, const char *const *out_roles, const int *own, size_t nout,
                     const char *const *ins, const char *const *in_roles, size_t nin, char *err,
                     size_t errlen);

/* Arrays too large to hold twice (issue 16): `gpk sort` maps its output
 * file and reads the input straight into it, then sorts it there.
 *
 * io_probe: when path is a regular file whose header (.npy) or size (raw,
 * with *type_opt) io_read would accept, fills out->type, out->n and
 * out->format (data stays NULL), *offset (where the data starts) and
 * returns 0; otherwise 1, and io_read then says what is wrong. */
int io_probe(const char *path, const gpk_type *type_opt, io_array *out, long long *offset);
/* Reads len bytes of path from offset into dst, on several threads. */
int io_read_into(const char *path, long long offset, void *dst, size_t len, char *err, size_t errlen);

typedef struct io_map {
    void *base, *data; /* the mapping, and the array in it (after the header) */
    size_t len;
} io_map;
/* On an output opened with io_out_open that goes to a temporary file:
 * writes the header of n elements of type t in format fmt, sizes the file
 * for the data and maps it writable at m->data. 1 when the output cannot be
 * mapped (stdout, a pipe or device, n == 0): write it the usual way; -1
 * with err on failure. io_out_unmap before io_out_commit or io_out_abort. */
int io_out_map(io_out *o, io_format fmt, gpk_type t, size_t n, io_map *m, char *err, size_t errlen);
int io_out_unmap(io_map *m, char *err, size_t errlen);

#endif
