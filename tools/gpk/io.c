/* Raw and .npy array files (see io.h). Every fopen, fread, fwrite and
 * fclose is checked; large transfers go in chunks so that a failure is
 * reported with the byte offset where it happened. */
#define _GNU_SOURCE /* O_TMPFILE, linkat, fallocate; mkstemp, realpath, fsync, fileno */
#include "io.h"

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define IO_CHUNK ((size_t)64 << 20)      /* bytes per fread / fwrite call */
#define NPY_MAX_HEADER ((size_t)1 << 20) /* refuse absurd header lengths from bad files */

static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

static void set_err(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static int host_is_little_endian(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

static int is_stdio(const char *path) { return strcmp(path, "-") == 0; }

static const char *display_name(const char *path) { return is_stdio(path) ? "<stdin>" : path; }

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

io_format io_output_format(const char *path, io_format fallback)
{
    return ends_with(path, ".npy") ? IO_NPY : fallback;
}

void io_array_free(io_array *a)
{
    if (!a) return;
    free(a->data);
    a->data = NULL;
    a->n = 0;
}

/* Reads up to len bytes in chunks; returns the count read (short only at
 * end of file or on an error, which the caller tells apart with ferror). */
static size_t read_full(FILE *f, void *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        size_t want = len - done < IO_CHUNK ? len - done : IO_CHUNK;
        size_t got = fread((unsigned char *)buf + done, 1, want, f);
        done += got;
        if (got < want) break;
    }
    return done;
}

/* ---- .npy header ------------------------------------------------------------ */

typedef struct cursor {
    const char *p, *end;
} cursor;

static void skip_ws(cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

static int accept_char(cursor *c, char ch)
{
    skip_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* A Python string literal without escapes ('...' or "..."). */
static int parse_pystr(cursor *c, char *buf, size_t len)
{
    skip_ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return -1;
    char q = *c->p++;
    size_t k = 0;
    while (c->p < c->end && *c->p != q) {
        /* no escapes, and no NUL: '<u4\0junk' must not read as <u4 */
        if (*c->p == '\\' || *c->p == '\0' || k + 1 >= len) return -1;
        buf[k++] = *c->p++;
    }
    if (c->p >= c->end) return -1;
    c->p++;
    buf[k] = '\0';
    return 0;
}

static int accept_word(cursor *c, const char *w)
{
    skip_ws(c);
    size_t l = strlen(w);
    if ((size_t)(c->end - c->p) >= l && strncmp(c->p, w, l) == 0) {
        c->p += l;
        return 1;
    }
    return 0;
}

/* A tuple of non-negative integers: (), (N,), (N, M), ... */
static int parse_shape(cursor *c, uint64_t *dims, int maxdims, int *ndims)
{
    if (!accept_char(c, '(')) return -1;
    *ndims = 0;
    for (;;) {
        if (accept_char(c, ')')) return 0;
        skip_ws(c);
        if (c->p >= c->end || *c->p < '0' || *c->p > '9') return -1;
        uint64_t v = 0;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
            unsigned d = (unsigned)(*c->p - '0');
            if (v > (UINT64_MAX - d) / 10) return -1;
            v = v * 10 + d;
            c->p++;
        }
        if (c->p < c->end && *c->p == 'L') c->p++; /* Python 2 longs */
        if (*ndims >= maxdims) return -1;
        dims[(*ndims)++] = v;
        if (!accept_char(c, ',')) {
            if (accept_char(c, ')')) return 0;
            return -1;
        }
    }
}

/* NumPy's little-endian descr of a key type, "<u4" for u32: the kind is
 * the first letter of gpk_type_name, then the bytes. */
static int descr_to_type(const char *d, gpk_type *t)
{
    if (d[0] != '<' || !strchr("uif", d[1]) || d[1] == '\0' || !strchr("48", d[2]) || d[2] == '\0' ||
        d[3] != '\0')
        return -1;
    char name[8];
    snprintf(name, sizeof name, "%c%d", d[1], 8 * (d[2] - '0'));
    return gpk_type_parse(name, t) == GPK_OK ? 0 : -1;
}

static void type_to_descr(gpk_type t, char descr[8])
{
    snprintf(descr, 8, "<%c%zu", gpk_type_name(t)[0], gpk_type_size(t));
}

/* Parses the header dict; the file position is at the header length field. */
static int read_npy_header(FILE *f, const char *name, gpk_type *type, uint64_t *n, char *err, size_t errlen)
{
    unsigned char ver[2], lenbuf[4];
    if (read_full(f, ver, 2) != 2) goto truncated;
    size_t lenbytes = ver[0] == 1 ? 2 : (ver[0] == 2 || ver[0] == 3) ? 4 : 0;
    if (!lenbytes) {
        set_err(err, errlen, "%s: unsupported .npy format version %u.%u", name, ver[0], ver[1]);
        return -1;
    }
    if (read_full(f, lenbuf, lenbytes) != lenbytes) goto truncated;
    size_t hlen = lenbuf[0] | (size_t)lenbuf[1] << 8;
    if (lenbytes == 4) hlen |= (size_t)lenbuf[2] << 16 | (size_t)lenbuf[3] << 24;
    if (hlen == 0 || hlen > NPY_MAX_HEADER) {
        set_err(err, errlen, "%s: implausible .npy header length %zu", name, hlen);
        return -1;
    }
    char *h = malloc(hlen);
    if (!h) {
        set_err(err, errlen, "%s: out of memory reading the .npy header", name);
        return -1;
    }
    if (read_full(f, h, hlen) != hlen) {
        free(h);
        goto truncated;
    }

    cursor c = {h, h + hlen};
    char descr[64] = "", key[32];
    int have_descr = 0, have_order = 0, have_shape = 0, fortran = 0, ndims = 0;
    uint64_t dims[32];
    int bad = !accept_char(&c, '{');
    while (!bad && !accept_char(&c, '}')) {
        if (parse_pystr(&c, key, sizeof key) != 0 || !accept_char(&c, ':')) {
            bad = 1;
            break;
        }
        if (strcmp(key, "descr") == 0) {
            skip_ws(&c);
            if (c.p < c.end && *c.p == '[') {
                set_err(err, errlen,
                        "%s: a structured .npy holds records: sort them by a "
                        "field with --key NAME",
                        name);
                free(h);
                return -1;
            }
            bad = parse_pystr(&c, descr, sizeof descr) != 0;
            have_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0) {
            if (accept_word(&c, "True")) fortran = 1;
            else if (accept_word(&c, "False")) fortran = 0;
            else bad = 1;
            have_order = 1;
        } else if (strcmp(key, "shape") == 0) {
            bad = parse_shape(&c, dims, 32, &ndims) != 0;
            have_shape = 1;
        } else {
            bad = 1;
        }
        if (!bad && !accept_char(&c, ',')) {
            bad = !accept_char(&c, '}');
            break;
        }
    }
    free(h);
    if (bad || !have_descr || !have_order || !have_shape) {
        set_err(err, errlen,
                "%s: malformed .npy header (expected a dict with descr, "
                "fortran_order and shape)",
                name);
        return -1;
    }
    if (descr_to_type(descr, type) != 0) {
        if (descr[0] == '>')
            set_err(err, errlen,
                    "%s: big-endian dtype '%s' is not supported "
                    "(convert with arr.astype(arr.dtype.newbyteorder('<')))",
                    name, descr);
        else
            set_err(err, errlen,
                    "%s: dtype '%s' is not supported (gpk takes <u4 <i4 <f4 "
                    "<u8 <i8 <f8)",
                    name, descr);
        return -1;
    }
    if (fortran) {
        set_err(err, errlen,
                "%s: Fortran-ordered .npy arrays are not supported "
                "(save with np.ascontiguousarray)",
                name);
        return -1;
    }
    if (ndims != 1) {
        set_err(err, errlen,
                "%s: the array has %d dimensions; gpk sorts 1-D arrays "
                "(flatten it with arr.ravel())",
                name, ndims);
        return -1;
    }
    *n = dims[0];
    return 0;

truncated:
    if (ferror(f)) set_err(err, errlen, "%s: read error in the .npy header: %s", name, strerror(errno));
    else set_err(err, errlen, "%s: truncated .npy header", name);
    return -1;
}

/* ---- reading ------------------------------------------------------------------ */

uint64_t io_memory_limit(const char **what)
{
    /* the container's limit, not the machine's: a process of a control
     * group that passes it is killed without a word */
    int from_cgroup = 0;
    const uint64_t limit = gpk_host_memory_limit(&from_cgroup);
    if (what) *what = from_cgroup ? "the memory limit of its control group" : "the machine's memory";
    return limit ? limit : UINT64_MAX;
}

/* The most bytes read from a pipe or device (and from a regular file that
 * reports no size, as /proc files do): GPK_MAX_INPUT when set, else half
 * the memory the process may use (io_memory_limit: the machine's, or its
 * control group's), room for the data and the sort's copy of it, so that
 * an endless source (/dev/zero, a producer that never stops) ends in a
 * message instead of the out-of-memory killer. */
static size_t stream_limit(void)
{
    const char *env = getenv("GPK_MAX_INPUT");
    if (env && *env) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(env, &end, 10);
        if (errno == 0 && *end == '\0' && env[0] != '-') return v < SIZE_MAX ? (size_t)v : SIZE_MAX;
    }
    const uint64_t half = io_memory_limit(NULL) / 2;
    return half < SIZE_MAX ? (size_t)half : SIZE_MAX;
}

/* Bytes left in a regular file from the stream's position; -1 when f is a
 * pipe, a device or a terminal. */
static int regular_remaining(FILE *f, uint64_t *rem)
{
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) return -1;
    long pos = ftell(f);
    if (pos < 0) return -1;
    *rem = (uint64_t)st.st_size > (uint64_t)pos ? (uint64_t)st.st_size - (uint64_t)pos : 0;
    return 0;
}

/* Reads up to `most` bytes after the `got` bytes of head, growing the
 * buffer from `cap` as data arrives, so that nothing is allocated for data
 * that does not come. Returns the malloc'd buffer (length in *len), or
 * NULL with err set on a read error or out of memory. */
static unsigned char *read_grow(FILE *f, const char *name, const unsigned char *head, size_t got, size_t cap,
                                size_t most, size_t *len, char *err, size_t errlen)
{
    if (cap < got + 1) cap = got + 1;
    if (cap > most && most >= got) cap = most > 0 ? most : 1;
    unsigned char *buf = malloc(cap);
    if (!buf) {
        set_err(err, errlen, "%s: out of memory for %zu bytes", name, cap);
        return NULL;
    }
    if (got) memcpy(buf, head, got);
    size_t n = got;
    for (;;) {
        size_t want = (cap < most ? cap : most) - n;
        size_t r = read_full(f, buf + n, want);
        n += r;
        if (r < want || n >= most) break; /* end of file, an error, or enough */
        size_t ncap = cap > SIZE_MAX / 2 ? SIZE_MAX : cap * 2;
        if (ncap > most) ncap = most;
        unsigned char *nb = realloc(buf, ncap);
        if (!nb) {
            set_err(err, errlen, "%s: out of memory for %zu bytes", name, ncap);
            free(buf);
            return NULL;
        }
        buf = nb;
        cap = ncap;
    }
    if (ferror(f)) {
        set_err(err, errlen, "%s: read error after %zu bytes: %s", name, n, strerror(errno));
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

static int read_npy_body(FILE *f, const char *name, gpk_type type, uint64_t n, io_array *out, char *err,
                         size_t errlen)
{
    size_t w = gpk_type_size(type);
    if (n > SIZE_MAX / w) {
        set_err(err, errlen, "%s: shape (%llu,) is too large for this machine", name, (unsigned long long)n);
        return -1;
    }
    size_t bytes = (size_t)n * w;
    /* The header's shape is only a claim: a regular file is held to its
     * size before anything is allocated, a pipe to the data that comes. */
    uint64_t rem;
    const int regular = regular_remaining(f, &rem) == 0 && rem > 0;
    if (regular && rem < bytes) {
        set_err(err, errlen,
                "%s: truncated .npy: the header declares %llu elements of %s "
                "(%zu bytes) but only %llu bytes follow",
                name, (unsigned long long)n, gpk_type_name(type), bytes, (unsigned long long)rem);
        return -1;
    }
    if (regular && rem > bytes) {
        set_err(err, errlen,
                "%s: mismatched .npy: more data follows the %llu elements of %s "
                "that the header declares",
                name, (unsigned long long)n, gpk_type_name(type));
        return -1;
    }
    if (!regular && bytes > stream_limit()) {
        set_err(err, errlen,
                "%s: the .npy header declares %zu bytes, more than the %zu that gpk "
                "reads from a pipe or device (GPK_MAX_INPUT; write it to a file)",
                name, bytes, stream_limit());
        return -1;
    }
    size_t got = 0;
    unsigned char *data =
        read_grow(f, name, NULL, 0, regular ? bytes : (size_t)1 << 20, bytes, &got, err, errlen);
    if (!data) return -1;
    if (got < bytes) {
        set_err(err, errlen,
                "%s: truncated .npy: the header declares %llu elements of %s "
                "(%zu bytes) but only %zu bytes follow",
                name, (unsigned long long)n, gpk_type_name(type), bytes, got);
        free(data);
        return -1;
    }
    if (fgetc(f) != EOF) {
        set_err(err, errlen,
                "%s: mismatched .npy: more data follows the %llu elements of %s "
                "that the header declares",
                name, (unsigned long long)n, gpk_type_name(type));
        free(data);
        return -1;
    }
    if (ferror(f)) {
        set_err(err, errlen, "%s: read error: %s", name, strerror(errno));
        free(data);
        return -1;
    }
    out->type = type;
    out->n = (size_t)n;
    out->data = data;
    out->format = IO_NPY;
    return 0;
}

/* Raw data: `head` holds the first `got` bytes already read. Reads to the
 * end of the file: a regular file gives the size up front, a pipe or a
 * device grows the buffer up to stream_limit. */
static int read_raw_body(FILE *f, const char *name, gpk_type type, const unsigned char *head, size_t got,
                         io_array *out, char *err, size_t errlen)
{
    uint64_t rem = 0;
    const int regular = regular_remaining(f, &rem) == 0 && rem > 0;
    const size_t limit = stream_limit();
    size_t most = limit, cap = (size_t)1 << 20;
    if (regular) {
        if (rem > SIZE_MAX - got - 1) {
            set_err(err, errlen, "%s: file too large", name);
            return -1;
        }
        /* One byte more than the size tells a file that grew meanwhile. */
        cap = most = got + (size_t)rem + 1;
    }
    size_t len = 0;
    unsigned char *buf = read_grow(f, name, head, got, cap, most, &len, err, errlen);
    if (!buf) return -1;
    if (len >= most && !regular) {
        set_err(err, errlen,
                "%s: more than %zu bytes from a pipe or device, gpk's limit "
                "(GPK_MAX_INPUT; an endless source such as /dev/zero?)",
                name, limit);
        free(buf);
        return -1;
    }
    if (len >= most) {
        set_err(err, errlen, "%s: the file grew while it was read", name);
        free(buf);
        return -1;
    }
    size_t w = gpk_type_size(type);
    if (len % w != 0) {
        set_err(err, errlen,
                "%s: %zu bytes is not a whole number of %s elements (%zu bytes "
                "each): wrong --type or a truncated file?",
                name, len, gpk_type_name(type), w);
        free(buf);
        return -1;
    }
    out->type = type;
    out->n = len / w;
    out->data = buf;
    out->format = IO_RAW;
    return 0;
}

int io_read_stream(FILE *f, const char *name, int want_npy, const gpk_type *type_opt, io_array *out,
                   char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!host_is_little_endian()) {
        set_err(err, errlen, "%s: gpk files are little-endian and this host is not", name);
        return -1;
    }
    unsigned char head[6];
    size_t got = read_full(f, head, sizeof head);
    int rc = -1;
    if (ferror(f)) {
        set_err(err, errlen, "%s: read error: %s", name, strerror(errno));
    } else if (got == sizeof head && memcmp(head, npy_magic, sizeof head) == 0) {
        gpk_type t;
        uint64_t n;
        if (read_npy_header(f, name, &t, &n, err, errlen) == 0) {
            if (type_opt && *type_opt != t)
                set_err(err, errlen, "%s: the .npy holds %s but --type %s was given", name, gpk_type_name(t),
                        gpk_type_name(*type_opt));
            else rc = read_npy_body(f, name, t, n, out, err, errlen);
        }
    } else if (want_npy) {
        set_err(err, errlen, "%s: not a .npy file (no \\x93NUMPY magic at the start)", name);
    } else if (!type_opt) {
        set_err(err, errlen,
                "%s: raw binary input needs --type (u32 i32 f32 u64 i64 f64), "
                "or give a .npy file",
                name);
    } else {
        rc = read_raw_body(f, name, *type_opt, head, got, out, err, errlen);
    }
    return rc;
}

int io_read(const char *path, const gpk_type *type_opt, io_array *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const char *name = display_name(path);
    FILE *f = is_stdio(path) ? stdin : fopen(path, "rb");
    if (!f) {
        set_err(err, errlen, "cannot open %s: %s", name, strerror(errno));
        return -1;
    }
    int rc = io_read_stream(f, name, ends_with(path, ".npy"), type_opt, out, err, errlen);
    if (f != stdin) fclose(f); /* read-only: nothing to lose on close */
    return rc;
}

/* A whole file (or stdin) as bytes, for the record formats, held to the
 * same limits as io_read: a regular file to its size, a pipe or a device
 * to stream_limit. */
unsigned char *io_read_bytes(const char *path, size_t *len, char *err, size_t errlen)
{
    const char *name = display_name(path);
    FILE *f = is_stdio(path) ? stdin : fopen(path, "rb");
    if (!f) {
        set_err(err, errlen, "cannot open %s: %s", name, strerror(errno));
        return NULL;
    }
    uint64_t rem = 0;
    const int regular = regular_remaining(f, &rem) == 0 && rem > 0;
    const size_t limit = stream_limit();
    size_t most = limit, cap = (size_t)1 << 20, n = 0;
    if (regular && rem > SIZE_MAX - 2) {
        set_err(err, errlen, "%s: file too large", name);
        if (f != stdin) fclose(f);
        return NULL;
    }
    /* One byte more than the size tells a file that grew meanwhile. */
    if (regular) cap = most = (size_t)rem + 1;
    unsigned char *buf = read_grow(f, name, NULL, 0, cap, most, &n, err, errlen);
    if (f != stdin) fclose(f);
    if (!buf) return NULL;
    if (n >= most) {
        if (regular) set_err(err, errlen, "%s: the file grew while it was read", name);
        else
            set_err(err, errlen,
                    "%s: more than %zu bytes from a pipe or device, gpk's limit "
                    "(GPK_MAX_INPUT; an endless source such as /dev/zero?)",
                    name, limit);
        free(buf);
        return NULL;
    }
    /* n < capacity: one byte after the data, so that a parser's numbers
     * stop there at the latest. */
    buf[n] = 0;
    *len = n;
    return buf;
}

/* ---- the structured .npy header ------------------------------------------------
 * NumPy writes {'descr': [('a', '<u4'), ('b', '<f8', (3,))], 'fortran_order':
 * False, 'shape': (n,), }. Fields are packed in order (padding shows as
 * fields named ''), so the record size is the sum of the field sizes. */

/* 1 when the text at p (ending at e) starts with w */
static int rec_at(const char *p, const char *e, const char *w)
{
    size_t l = strlen(w);
    return (size_t)(e - p) >= l && memcmp(p, w, l) == 0;
}

static const char *rec_skip(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\n')) p++;
    return p;
}

/* A quoted string into buf; returns the position after it or NULL. */
static const char *rec_pystr(const char *p, const char *e, char *buf, size_t len)
{
    p = rec_skip(p, e);
    if (p >= e || (*p != '\'' && *p != '"')) return NULL;
    char q = *p++;
    size_t k = 0;
    while (p < e && *p != q) {
        /* no NUL (a C string would end early: '<u4\0junk' read as <u4) */
        if (k + 1 >= len || *p == '\0') return NULL;
        buf[k++] = *p++;
    }
    buf[k] = '\0';
    return p < e ? p + 1 : NULL;
}

/* Decimal digits at p (before e) into *v: the position after them, or
 * NULL when there are none or they pass 2^64. Bounded by e, unlike
 * strtoull, which reads on to the first non-digit past the header. */
static const char *rec_uint(const char *p, const char *e, uint64_t *v)
{
    const char *start = p;
    uint64_t x = 0;
    for (; p < e && *p >= '0' && *p <= '9'; p++) {
        const unsigned d = (unsigned)(*p - '0');
        if (x > (UINT64_MAX - d) / 10) return NULL;
        x = x * 10 + d;
    }
    if (p == start) return NULL;
    *v = x;
    return p;
}

/* Size in bytes of a scalar dtype string such as '<u4', '|V8', 'S10', '<f8'. */
static int dtype_size(const char *d, uint64_t *size)
{
    if (*d == '<' || *d == '>' || *d == '|' || *d == '=') d++;
    char kind = *d++;
    if (!strchr("biufcVSUmM?", kind)) return -1;
    uint64_t s = 0;
    if (kind == '?' && *d == '\0') s = 1;
    for (; *d; d++) {
        if (*d < '0' || *d > '9' || s > 1000000) return -1;
        s = s * 10 + (uint64_t)(*d - '0');
    }
    if (kind == 'U') s *= 4;
    if (s == 0) return -1;
    *size = s;
    return 0;
}

int io_parse_npy_records(const unsigned char *buf, size_t len, const char *name, const char *key,
                         io_npy_records *r, char *err, size_t errlen)
{
    if (len < 10 || memcmp(buf, "\x93NUMPY", 6) != 0) {
        snprintf(err, errlen, "%s: --key needs a structured .npy (no \\x93NUMPY magic)", name);
        return -1;
    }
    size_t lb = buf[6] == 1 ? 2 : 4, hl = buf[8] | (size_t)buf[9] << 8;
    if (lb == 4) hl = len < 12 ? SIZE_MAX : hl | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
    if (hl > len - 8 - lb) {
        snprintf(err, errlen, "%s: truncated .npy header", name);
        return -1;
    }
    r->header = 8 + lb + hl;
    const char *p = (const char *)buf + 8 + lb, *e = (const char *)buf + r->header;
    const char *d = NULL, *s = NULL, *o = NULL;
    for (const char *c = p; c < e; c++) {
        /* descr comes first and shape last: a field may be named 'shape' */
        if (!d && rec_at(c, e, "'descr'")) d = c + 7;
        if (rec_at(c, e, "'shape'")) s = c + 7;
        if (rec_at(c, e, "'fortran_order'")) o = c + 15;
    }
    if (!d || !s || !o) {
        snprintf(err, errlen, "%s: malformed .npy header (expected descr, fortran_order and shape)", name);
        return -1;
    }
    o = rec_skip(o, e);
    if (o < e && *o == ':') o = rec_skip(o + 1, e);
    if (!rec_at(o, e, "False")) {
        snprintf(err, errlen, "%s: Fortran-ordered .npy arrays are not supported", name);
        return -1;
    }
    s = rec_skip(s, e);
    if (s < e && *s == ':') s = rec_skip(s + 1, e);
    const char *end;
    if (s >= e || *s != '(') goto bad_shape;
    s = rec_skip(s + 1, e);
    if (!(end = rec_uint(s, e, &r->n))) goto bad_shape;
    s = rec_skip(end, e);
    if (s < e && *s == ',') s = rec_skip(s + 1, e);
    if (s >= e || *s != ')') goto bad_shape;

    d = rec_skip(d, e);
    if (d < e && *d == ':') d = rec_skip(d + 1, e);
    if (d >= e || *d != '[') {
        snprintf(err, errlen, "%s: not a structured .npy (its dtype has no fields); --key names a field",
                 name);
        return -1;
    }
    d++;
    uint64_t at = 0;
    int found = 0;
    char fname[128], ftype[32], known[400] = "";
    char names[256][128]; /* more named fields than a 256-byte record has bytes: refused */
    int nnames = 0;
    for (;;) {
        d = rec_skip(d, e);
        if (d < e && *d == ']') break;
        if (d >= e || *d != '(') goto bad_descr;
        if (!(d = rec_pystr(d + 1, e, fname, sizeof fname))) goto bad_descr;
        /* names are unique (NumPy refuses the dtype otherwise); '' marks
         * padding and may repeat */
        if (fname[0]) {
            if (nnames == sizeof names / sizeof names[0]) goto bad_descr;
            for (int i = 0; i < nnames; i++)
                if (strcmp(names[i], fname) == 0) {
                    snprintf(err, errlen, "%s: the structured dtype names field '%s' twice", name, fname);
                    return -1;
                }
            memcpy(names[nnames++], fname, sizeof fname);
        }
        d = rec_skip(d, e);
        if (d >= e || *d != ',') goto bad_descr;
        d = rec_skip(d + 1, e);
        if (d < e && *d == '[') {
            snprintf(err, errlen, "%s: field '%s' is itself structured; gpk sorts by a scalar field", name,
                     fname);
            return -1;
        }
        if (!(d = rec_pystr(d, e, ftype, sizeof ftype))) goto bad_descr;
        uint64_t fsize, count = 1;
        if (dtype_size(ftype, &fsize) != 0) goto bad_descr;
        d = rec_skip(d, e);
        if (d < e && *d == ',') { /* a subarray shape, (3,) or (2, 4) */
            d = rec_skip(d + 1, e);
            if (d >= e || *d != '(') goto bad_descr;
            d++;
            for (;;) {
                d = rec_skip(d, e);
                if (d < e && *d == ')') break;
                uint64_t k;
                /* the product, not only each factor, is held to the
                 * record size: factors of 2^16 multiply to 2^64, which is 0 */
                if (!(end = rec_uint(d, e, &k)) || k > 1000000 || (k && count > ((uint64_t)1 << 20) / k))
                    goto bad_descr;
                count *= k;
                d = rec_skip(end, e);
                if (d < e && *d == ',') d++;
            }
            d = rec_skip(d + 1, e);
        }
        if (d >= e || *d != ')') goto bad_descr;
        d = rec_skip(d + 1, e);
        if (d < e && *d == ',') d++;
        if (strcmp(fname, key) == 0) {
            gpk_type t;
            const char *tn = strcmp(ftype, "<u4") == 0 ? "u32"
                : strcmp(ftype, "<i4") == 0            ? "i32"
                : strcmp(ftype, "<f4") == 0            ? "f32"
                : strcmp(ftype, "<u8") == 0            ? "u64"
                : strcmp(ftype, "<i8") == 0            ? "i64"
                : strcmp(ftype, "<f8") == 0            ? "f64"
                                                       : NULL;
            if (!tn || count != 1 || gpk_type_parse(tn, &t) != GPK_OK) {
                snprintf(err, errlen, "%s: field '%s' has dtype '%s'%s; gpk sorts by <u4 <i4 <f4 <u8 <i8 <f8",
                         name, fname, ftype, count != 1 ? " with a shape" : "");
                return -1;
            }
            r->ktype = t;
            r->offset = at;
            found = 1;
        } else if (fname[0] && strlen(known) + strlen(fname) + 3 < sizeof known) {
            strcat(known, known[0] ? ", " : "");
            strcat(known, fname);
        }
        at += fsize * count;
        if (at > 1u << 20) goto bad_descr;
    }
    if (!found) {
        snprintf(err, errlen, "%s: no field '%s' (fields: %s)", name, key, known);
        return -1;
    }
    if (at > 256) {
        snprintf(err, errlen, "%s: records of %llu bytes; gpk sorts records of up to 256 bytes", name,
                 (unsigned long long)at);
        return -1;
    }
    r->size = at;
    if (r->n > (len - r->header) / r->size || (len - r->header) != r->n * r->size) {
        snprintf(err, errlen, "%s: the header declares %llu records of %llu bytes but %zu data bytes follow",
                 name, (unsigned long long)r->n, (unsigned long long)r->size, len - r->header);
        return -1;
    }
    return 0;
bad_shape:
    snprintf(err, errlen, "%s: the array is not 1-D; gpk sorts a 1-D array of records", name);
    return -1;
bad_descr:
    snprintf(err, errlen, "%s: malformed or unsupported structured dtype in the .npy header", name);
    return -1;
}

/* ---- safe output files ------------------------------------------------------------- */

static char *dup_str(const char *s)
{
    char *d = malloc(strlen(s) + 1);
    if (d) strcpy(d, s);
    return d;
}

/* The directory part of path ("." when there is none), malloc'd. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return dup_str(".");
    if (slash == path) return dup_str("/");
    char *d = malloc((size_t)(slash - path) + 1);
    if (d) {
        memcpy(d, path, (size_t)(slash - path));
        d[slash - path] = '\0';
    }
    return d;
}

/* The temporary files open now, for io_out_remove_temps in a signal
 * handler: a slot is set once the file exists and cleared before its name
 * is freed. */
#define IO_MAX_TEMPS 16
static char *volatile live_temps[IO_MAX_TEMPS];

static void temp_register(char *tmp)
{
    for (int i = 0; i < IO_MAX_TEMPS; i++)
        if (!live_temps[i]) {
            live_temps[i] = tmp;
            return;
        }
}

static void temp_forget(const char *tmp)
{
    for (int i = 0; i < IO_MAX_TEMPS; i++)
        if (tmp && live_temps[i] == tmp) live_temps[i] = NULL;
}

void io_out_remove_temps(void)
{
    for (int i = 0; i < IO_MAX_TEMPS; i++) {
        char *t = live_temps[i];
        if (t) unlink(t);
    }
}

static int stderr_tty; /* a progress line may be there to clear */

static void on_fatal_signal(int sig)
{
    io_out_remove_temps();
    /* Said, so that a stopped run is not taken for a finished one (the
     * exit status says it too); not for SIGPIPE, whose reader is gone. */
    if (sig != SIGPIPE) {
        const char *name = sig == SIGINT ? "SIGINT"
            : sig == SIGTERM             ? "SIGTERM"
            : sig == SIGHUP              ? "SIGHUP"
            : sig == SIGQUIT             ? "SIGQUIT"
            : sig == SIGUSR1             ? "SIGUSR1"
            : sig == SIGUSR2             ? "SIGUSR2"
            : sig == SIGALRM             ? "SIGALRM"
                                         : "a signal";
        const char *clear = stderr_tty ? "\r\033[K" : "";
        ssize_t w = write(2, clear, strlen(clear));
        w = write(2, "gpk: stopped by ", 16);
        w = write(2, name, strlen(name));
        w = write(2, "\n", 1);
        (void)w;
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

void io_out_cleanup_on_signals(void)
{
    stderr_tty = isatty(2);
    signal(SIGXFSZ, SIG_IGN);
    /* every signal whose default ends the process: where the temporary
     * file has a name (no O_TMPFILE), it is removed first */
    static const int fatal[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM};
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
        struct sigaction sa, old;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal_signal;
        sigemptyset(&sa.sa_mask);
        if (sigaction(fatal[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN) sigaction(fatal[i], &sa, NULL);
    }
}

static void out_clear(io_out *o)
{
    temp_forget(o->tmp);
    free(o->target);
    free(o->tmp);
    memset(o, 0, sizeof *o);
}

/* The name of the temporary file beside target (a path): ".BASE.gpk-"
 * and six characters to fill, in target's directory, the base cut so that
 * the name fits NAME_MAX whatever the length of the target's. malloc'd. */
static char *temp_name(const char *target)
{
    char *dir = dir_of(target);
    const char *base = strrchr(target, '/');
    base = base ? base + 1 : target;
    size_t blen = strlen(base);
    const size_t room = NAME_MAX - strlen("..gpk-XXXXXX");
    if (blen > room) blen = room;
    char *t = dir ? malloc(strlen(dir) + blen + 16) : NULL;
    if (t) sprintf(t, "%s/.%.*s.gpk-XXXXXX", dir, (int)blen, base);
    free(dir);
    return t;
}

/* Fills the XXXXXX at the end of name with fresh characters. */
static void temp_fill(char *name)
{
    static const char set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    static unsigned long long state;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    state ^= (unsigned long long)ts.tv_nsec * 0x9E3779B97F4A7C15ull ^ (unsigned long long)getpid() << 32;
    char *x = name + strlen(name) - 6;
    for (int i = 0; i < 6; i++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = set[(state >> 33) % (sizeof set - 1)];
    }
}

/* A file with no name in dir (O_TMPFILE), that io_out_commit can give a
 * name (linkat through /proc/self/fd): a run killed by any signal, even
 * SIGKILL, then leaves nothing behind. -1 where the file system or the
 * kernel has no O_TMPFILE, or /proc is missing. */
static int open_anonymous(const char *dir, mode_t mode)
{
#ifdef O_TMPFILE
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, mode); /* read too: io_out_map maps it shared */
    if (fd < 0) return -1;
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    if (access(proc, F_OK) != 0) {
        close(fd);
        return -1;
    }
    return fd;
#else
    (void)dir;
    (void)mode;
    return -1;
#endif
}

/* Gives the anonymous file of o a temporary name (o->tmp) beside its
 * target, to be renamed over it. */
static int name_anonymous(io_out *o)
{
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fileno(o->f));
    for (int attempt = 0; attempt < 100; attempt++) {
        temp_fill(o->tmp);
        if (linkat(AT_FDCWD, proc, AT_FDCWD, o->tmp, AT_SYMLINK_FOLLOW) == 0) {
            o->anon = 0;
            temp_register(o->tmp);
            return 0;
        }
        if (errno != EEXIST) return -1;
    }
    return -1;
}

/* The checks of io_out_open that do not depend on the file's kind: a name
 * that cannot be (ELOOP, ENAMETOOLONG, EACCES on the way) fails here. */
static int stat_output(const char *path, struct stat *st, int *exists, char *err, size_t errlen)
{
    *exists = stat(path, st) == 0; /* follows a symlink to what it names */
    if (!*exists && errno != ENOENT) {
        set_err(err, errlen, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

static int out_open(io_out *o, const char *path, int named, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    if (is_stdio(path)) {
        o->f = stdout;
        o->name = "<stdout>";
        return 0;
    }
    o->name = path;
    struct stat st;
    int exists;
    if (stat_output(path, &st, &exists, err, errlen) != 0) return -1;
    if (exists && S_ISDIR(st.st_mode)) {
        set_err(err, errlen, "cannot write %s: it is a directory", path);
        return -1;
    }
    struct stat lst;
    const int dangling = !exists && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode);
    if ((exists && !S_ISREG(st.st_mode)) || dangling) {
        /* A pipe or a device: there is nothing to replace atomically, and
         * it is not ours to remove. A link to nothing yet: writing through
         * it creates its target, and the link stays. */
        o->f = fopen(path, "wb");
        if (!o->f) {
            set_err(err, errlen, "cannot open %s: %s", path, strerror(errno));
            return -1;
        }
        return 0;
    }
    if (exists && access(path, W_OK) != 0) { /* as opening it for writing would have said */
        set_err(err, errlen, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    if (exists && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        char *real = realpath(path, NULL);
        o->target = real ? dup_str(real) : NULL;
        free(real);
    } else {
        o->target = dup_str(path);
    }
    o->tmp = o->target ? temp_name(o->target) : NULL;
    char *dir = o->target ? dir_of(o->target) : NULL;
    if (!o->tmp || !dir) {
        free(dir);
        out_clear(o);
        set_err(err, errlen, "%s: out of memory", path);
        return -1;
    }
    /* The result gets the mode (and owner) an existing file had, else what
     * creating it would have given. */
    mode_t mode;
    if (exists) {
        mode = st.st_mode & 07777;
    } else {
        const mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    /* GPK_TEST_NAMED_TEMP: the named file as where there is no O_TMPFILE,
     * for the tests of that path */
    int fd = named || getenv("GPK_TEST_NAMED_TEMP") ? -1 : open_anonymous(dir, 0600);
    free(dir);
    if (fd >= 0) {
        o->anon = 1;
    } else {
        fd = mkstemp(o->tmp);
        if (fd < 0) {
            set_err(err, errlen, "cannot create a temporary file beside %s: %s", path, strerror(errno));
            out_clear(o);
            return -1;
        }
        temp_register(o->tmp);
    }
    /* The owner before the mode: a change of owner clears set-id bits.
     * Only the superuser may give the file to another user; a group the
     * user is in is kept too, and failing both is no error (the file is
     * the user's, as a new one would be). */
    if (exists && fchown(fd, st.st_uid, st.st_gid) != 0 && fchown(fd, (uid_t)-1, st.st_gid) != 0) {
        /* kept as the user's own */
    }
    if (fchmod(fd, mode) != 0 || !(o->f = fdopen(fd, "wb"))) {
        set_err(err, errlen, "cannot write %s: %s", o->anon ? path : o->tmp, strerror(errno));
        close(fd);
        if (!o->anon) unlink(o->tmp);
        out_clear(o);
        return -1;
    }
    return 0;
}

int io_out_open(io_out *o, const char *path, char *err, size_t errlen)
{
    return out_open(o, path, 0, err, errlen);
}

int io_out_open_named(io_out *o, const char *path, char *err, size_t errlen)
{
    return out_open(o, path, 1, err, errlen);
}

void io_out_abort(io_out *o)
{
    if (o->f && o->f != stdout) fclose(o->f);
    if (o->f && o->f == stdout) fflush(stdout);
    if (o->tmp && !o->anon) unlink(o->tmp);
    out_clear(o);
}

int io_out_commit(io_out *o, char *err, size_t errlen)
{
    if (!o->f) {
        set_err(err, errlen, "internal error: output not open");
        return -1;
    }
    const char *name = o->name;
    int ok = !ferror(o->f) && fflush(o->f) == 0;
    int saved = errno;
    /* A regular file must be on disk before it replaces the old one; pipes
     * and terminals cannot be synced (EINVAL), which is no error. */
    if (ok && o->tmp && fsync(fileno(o->f)) != 0) {
        ok = 0;
        saved = errno;
    }
    if (ok && o->anon && name_anonymous(o) != 0) {
        ok = 0;
        saved = errno;
    }
    if (o->f != stdout && fclose(o->f) != 0 && ok) { /* a full disk often shows only here */
        ok = 0;
        saved = errno;
    }
    o->f = NULL;
    if (ok && o->tmp && rename(o->tmp, o->target) != 0) {
        ok = 0;
        saved = errno;
    }
    if (!ok) {
        set_err(err, errlen, "cannot write %s: %s", name, strerror(saved ? saved : EIO));
        io_out_abort(o);
        return -1;
    }
    if (o->tmp) {
        /* The rename itself is durable once the directory is synced. */
        char *dir = dir_of(o->target);
        int dfd = dir ? open(dir, O_RDONLY) : -1;
        if (dfd >= 0) {
            fsync(dfd);
            close(dfd);
        }
        free(dir);
    }
    out_clear(o);
    return 0;
}

/* A name for comparing paths: the real path of an existing file, else the
 * real path of its directory plus the last component; NULL when the
 * directory does not exist. */
static char *canonical(const char *path)
{
    char *real = realpath(path, NULL);
    if (real) return real;
    char *dir = dir_of(path);
    char *rdir = dir ? realpath(dir, NULL) : NULL;
    free(dir);
    if (!rdir) return NULL;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char *c = malloc(strlen(rdir) + strlen(base) + 2);
    if (c) sprintf(c, "%s/%s", rdir, base);
    free(rdir);
    return c;
}

/* 1 when a and b are the same file: the same name, or two names (links)
 * of one existing file. */
static int same_file(const char *a, const char *b)
{
    if (is_stdio(a) || is_stdio(b)) return is_stdio(a) && is_stdio(b);
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char *ca = canonical(a), *cb = canonical(b);
    int same = ca && cb ? strcmp(ca, cb) == 0 : strcmp(a, b) == 0;
    free(ca);
    free(cb);
    return same;
}

/* The file a dangling symbolic link names (writing through the link
 * creates it), malloc'd; NULL when path is no such link. */
static char *link_target(const char *path)
{
    struct stat lst;
    char buf[PATH_MAX];
    if (lstat(path, &lst) != 0 || !S_ISLNK(lst.st_mode)) return NULL;
    const ssize_t l = readlink(path, buf, sizeof buf - 1);
    if (l <= 0) return NULL;
    buf[l] = '\0';
    if (buf[0] == '/') return dup_str(buf);
    char *dir = dir_of(path);
    char *t = dir ? malloc(strlen(dir) + (size_t)l + 2) : NULL;
    if (t) sprintf(t, "%s/%s", dir, buf);
    free(dir);
    return t;
}

/* 0 when a file can be created beside target now: a temporary file is
 * made (nameless where the file system allows) and removed again, so that
 * a directory that refuses files (/proc, a read-only mount, a full inode
 * table) or a name too long for its temporary is found before any work. */
static int probe_create(const char *target, const char *dir)
{
    int fd = open_anonymous(dir, 0600);
    if (fd >= 0) {
        close(fd);
        return 0;
    }
    char *tmp = temp_name(target);
    if (!tmp) {
        errno = ENOMEM;
        return -1;
    }
    fd = mkstemp(tmp);
    if (fd >= 0) {
        close(fd);
        unlink(tmp);
    }
    const int saved = errno;
    free(tmp);
    errno = saved;
    return fd >= 0 ? 0 : -1;
}

static int check_writable(const char *path, const char *role, char *err, size_t errlen)
{
    if (is_stdio(path)) return 0;
    if (!*path) {
        set_err(err, errlen, "%s: empty file name", role);
        return -1;
    }
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            set_err(err, errlen, "%s %s: is a directory", role, path);
            return -1;
        }
        /* A read-only file stays protected, though the rename could
         * replace it. */
        if (access(path, W_OK) != 0) {
            set_err(err, errlen, "%s %s: not writable: %s", role, path, strerror(errno));
            return -1;
        }
        if (S_ISCHR(st.st_mode)) {
            /* A device is written in place: one that refuses every write
             * (/dev/full) refuses an empty one too. */
            const int fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
            const int bad = fd < 0 || write(fd, "", 0) < 0;
            const int saved = errno;
            if (fd >= 0) close(fd);
            if (bad) {
                set_err(err, errlen, "%s %s: cannot write: %s", role, path, strerror(saved));
                return -1;
            }
        }
        if (!S_ISREG(st.st_mode)) return 0;
    } else if (errno != ENOENT) {
        /* a loop of links, a name too long, a component that is no directory */
        set_err(err, errlen, "%s %s: %s", role, path, strerror(errno));
        return -1;
    }
    /* A regular file is replaced through a temporary file in its
     * directory (a symlink's target's), which must exist and be writable;
     * a dangling link's target is created in its directory. */
    char *target = realpath(path, NULL);
    if (!target) target = link_target(path);
    if (!target) target = dup_str(path);
    char *dir = target ? dir_of(target) : NULL;
    if (!dir) {
        free(target);
        set_err(err, errlen, "%s %s: out of memory", role, path);
        return -1;
    }
    int rc = 0;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        set_err(err, errlen, "%s %s: the directory %s does not exist", role, path, dir);
        rc = -1;
    } else if (access(dir, W_OK | X_OK) != 0 || probe_create(target, dir) != 0) {
        set_err(err, errlen, "%s %s: cannot create files in %s: %s", role, path, dir, strerror(errno));
        rc = -1;
    }
    free(dir);
    free(target);
    return rc;
}

int io_check_outputs(const char *const *outs, const char *const *out_roles, const int *own, size_t nout,
                     const char *const *ins, const char *const *in_roles, size_t nin, char *err,
                     size_t errlen)
{
    for (size_t i = 0; i < nout; i++) {
        if (!outs[i]) continue;
        if (check_writable(outs[i], out_roles[i], err, errlen) != 0) return -1;
        for (size_t j = 0; j < i; j++)
            if (outs[j] && same_file(outs[i], outs[j])) {
                set_err(err, errlen, "%s %s and %s %s are the same file: each output needs its own",
                        out_roles[j], outs[j], out_roles[i], outs[i]);
                return -1;
            }
        for (size_t j = 0; j < nin; j++)
            if ((!own || own[i] != (int)j) && ins[j] && !is_stdio(ins[j]) && !is_stdio(outs[i]) &&
                same_file(outs[i], ins[j])) {
                set_err(err, errlen, "%s %s is the input %s: each output needs its own file", out_roles[i],
                        outs[i], in_roles[j]);
                return -1;
            }
    }
    return 0;
}

/* ---- writing -------------------------------------------------------------------- */

static int write_full(FILE *f, const void *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        size_t want = len - done < IO_CHUNK ? len - done : IO_CHUNK;
        if (fwrite((const unsigned char *)buf + done, 1, want, f) != want) return -1;
        done += want;
    }
    return 0;
}

static int write_header(FILE *f, io_format fmt, gpk_type t, size_t n);

int io_write_array(io_out *o, io_format fmt, gpk_type t, const void *data, size_t n, char *err, size_t errlen)
{
    if (!host_is_little_endian()) {
        set_err(err, errlen, "%s: gpk files are little-endian and this host is not", o->name);
        return -1;
    }
    int ok = write_header(o->f, fmt, t, n) == 0;
    if (ok) ok = write_full(o->f, data, n * gpk_type_size(t)) == 0;
    if (!ok) {
        set_err(err, errlen, "cannot write %s: %s", o->name, strerror(errno));
        return -1;
    }
    return 0;
}

static int write_header(FILE *f, io_format fmt, gpk_type t, size_t n)
{
    int ok = 1;
    if (fmt == IO_NPY) {
        /* Version 1.0 header, padded with spaces so the data starts on a
         * 64-byte boundary, as NumPy writes it. */
        char dict[160], descr[8];
        type_to_descr(t, descr);
        int dl = snprintf(dict, sizeof dict,
                          "{'descr': '%s', 'fortran_order': False, "
                          "'shape': (%zu,), }",
                          descr, n);
        size_t total = 10 + (size_t)dl + 1;
        size_t pad = (64 - total % 64) % 64;
        size_t hlen = (size_t)dl + pad + 1;
        unsigned char pre[10];
        memcpy(pre, npy_magic, 6);
        pre[6] = 1;
        pre[7] = 0;
        pre[8] = (unsigned char)(hlen & 0xff);
        pre[9] = (unsigned char)(hlen >> 8);
        char spaces[64];
        memset(spaces, ' ', sizeof spaces);
        ok = write_full(f, pre, sizeof pre) == 0 && write_full(f, dict, (size_t)dl) == 0 &&
            write_full(f, spaces, pad) == 0 && write_full(f, "\n", 1) == 0;
    }
    return ok ? 0 : -1;
}

int io_write(const char *path, io_format fmt, gpk_type t, const void *data, size_t n, char *err,
             size_t errlen)
{
    io_out o;
    if (io_out_open(&o, path, err, errlen) != 0) return -1;
    if (io_write_array(&o, fmt, t, data, n, err, errlen) != 0) {
        io_out_abort(&o);
        return -1;
    }
    return io_out_commit(&o, err, errlen);
}

/* ---- mapped arrays (issue 16: sorts larger than memory allows twice) ---------------- */

int io_probe(const char *path, const gpk_type *type_opt, io_array *out, long long *offset)
{
    memset(out, 0, sizeof *out);
    struct stat st;
    if (is_stdio(path) || stat(path, &st) != 0 || !S_ISREG(st.st_mode) || !host_is_little_endian()) return 1;
    FILE *f = fopen(path, "rb");
    if (!f) return 1;
    unsigned char head[6];
    char err[8];
    int rc = 1;
    if (read_full(f, head, sizeof head) == sizeof head && memcmp(head, npy_magic, sizeof head) == 0) {
        gpk_type t;
        uint64_t n;
        if (read_npy_header(f, path, &t, &n, err, sizeof err) == 0 && (!type_opt || *type_opt == t)) {
            const long pos = ftell(f);
            if (pos > 0 && n <= (uint64_t)st.st_size / gpk_type_size(t) &&
                (uint64_t)st.st_size == (uint64_t)pos + n * gpk_type_size(t)) {
                out->type = t;
                out->n = (size_t)n;
                out->format = IO_NPY;
                *offset = pos;
                rc = 0;
            }
        }
    } else if (!ends_with(path, ".npy") && type_opt && (uint64_t)st.st_size % gpk_type_size(*type_opt) == 0) {
        out->type = *type_opt;
        out->n = (size_t)((uint64_t)st.st_size / gpk_type_size(*type_opt));
        out->format = IO_RAW;
        *offset = 0;
        rc = 0;
    }
    fclose(f);
    return rc;
}

typedef struct read_part {
    int fd, workers, index;
    long long offset; /* of the data in the file */
    char *dst;
    size_t len;
    long long bad_at; /* first byte this worker could not read, or -1 */
    int bad_errno;
} read_part;

/* Worker `index` reads chunks index, index + workers, ... */
static void *read_worker(void *arg)
{
    read_part *p = arg;
    for (size_t from = (size_t)p->index * IO_CHUNK; from < p->len; from += (size_t)p->workers * IO_CHUNK) {
        const size_t want = p->len - from < IO_CHUNK ? p->len - from : IO_CHUNK;
        for (size_t got = 0; got < want;) {
            const ssize_t r =
                pread(p->fd, p->dst + from + got, want - got, (off_t)(p->offset + (long long)(from + got)));
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) {
                p->bad_at = (long long)(from + got);
                p->bad_errno = r < 0 ? errno : 0;
                return NULL;
            }
            got += (size_t)r;
        }
    }
    return NULL;
}

int io_read_into(const char *path, long long offset, void *dst, size_t len, char *err, size_t errlen)
{
    const int fd = open(path, O_RDONLY);
    if (fd < 0) {
        set_err(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    /* several threads: one reads a page-cached file at a few GB/s */
    enum { MAX_READERS = 16 };
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int workers = cpus > 1 ? (cpus < MAX_READERS ? (int)cpus : MAX_READERS) : 1;
    read_part part[MAX_READERS];
    pthread_t tid[MAX_READERS];
    int started[MAX_READERS] = {0};
    for (int w = 0; w < workers; w++) {
        part[w] = (read_part){fd, workers, w, offset, dst, len, -1, 0};
        started[w] = w > 0 && pthread_create(&tid[w], NULL, read_worker, &part[w]) == 0;
    }
    for (int w = 0; w < workers; w++) /* what no thread took, this one reads */
        if (!started[w]) read_worker(&part[w]);
    long long bad_at = -1;
    int bad_errno = 0;
    for (int w = 0; w < workers; w++) {
        if (started[w]) pthread_join(tid[w], NULL);
        if (part[w].bad_at >= 0 && (bad_at < 0 || part[w].bad_at < bad_at)) {
            bad_at = part[w].bad_at;
            bad_errno = part[w].bad_errno;
        }
    }
    close(fd);
    if (bad_at >= 0) {
        if (bad_errno == EFAULT) /* the destination, not the file: a mapped output without room */
            set_err(err, errlen,
                    "cannot fill the output at byte %lld of the data read from %s: its "
                    "pages cannot be written (a full disk?)",
                    bad_at, path);
        else
            set_err(err, errlen, "%s: read error at byte %lld: %s", path, offset + bad_at,
                    bad_errno ? strerror(bad_errno) : "the file is shorter than it was");
        return -1;
    }
    return 0;
}

int io_out_map(io_out *o, io_format fmt, gpk_type t, size_t n, io_map *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    if (!o->tmp || n == 0 || !host_is_little_endian()) return 1;
    if (write_header(o->f, fmt, t, n) != 0 || fflush(o->f) != 0) {
        set_err(err, errlen, "cannot write %s: %s", o->name, strerror(errno));
        return -1;
    }
    const long hdr = ftell(o->f);
    const size_t len = (size_t)hdr + n * gpk_type_size(t);
    const int fd = fileno(o->f);
    if (hdr < 0 || ftruncate(fd, (off_t)len) != 0) {
        set_err(err, errlen, "cannot write %s (%zu bytes): %s", o->name, len, strerror(errno));
        return -1;
    }
    /* The blocks are taken now: a mapping of a sparse file on a full disk
     * fails only when a page is first written (a read into it says "Bad
     * address", a store kills the process). A file system without
     * fallocate keeps the sparse file. */
    if (fallocate(fd, 0, 0, (off_t)len) != 0 && errno != EOPNOTSUPP && errno != ENOSYS && errno != EINVAL) {
        set_err(err, errlen, "cannot write %s (%zu bytes): %s", o->name, len, strerror(errno));
        return -1;
    }
    void *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        set_err(err, errlen, "cannot map %s (%zu bytes): %s", o->name, len, strerror(errno));
        return -1;
    }
    m->base = base;
    m->len = len;
    m->data = (char *)base + hdr;
    return 0;
}

int io_out_unmap(io_map *m, char *err, size_t errlen)
{
    int rc = 0;
    if (m->base && munmap(m->base, m->len) != 0) {
        set_err(err, errlen, "cannot unmap the output: %s", strerror(errno));
        rc = -1;
    }
    memset(m, 0, sizeof *m);
    return rc;
}
