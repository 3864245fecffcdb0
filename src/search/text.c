/* The tokenizer of the instance readers: whitespace-separated tokens over a
 * memory buffer that need not be '\0'-terminated, with line numbers for the
 * messages and range-checked number parsing. Shared by the TSPLIB reader
 * (and open to the QAPLIB one). */
#include "search_internal.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

void gpk__text_init(gpk__text *t, const char *text, size_t len, const char *name)
{
    t->p = text;
    t->end = text + len;
    t->name = name ? name : "(memory)";
    t->line = 1;
    t->tline = 1;
}

static void skip_space(gpk__text *t)
{
    while (t->p < t->end && is_space(*t->p)) {
        if (*t->p == '\n') t->line++;
        t->p++;
    }
}

int gpk__text_next(gpk__text *t, const char **tok, size_t *len)
{
    skip_space(t);
    if (t->p >= t->end) {
        t->tline = t->line;
        return 0;
    }
    const char *s = t->p;
    while (t->p < t->end && !is_space(*t->p)) t->p++;
    *tok = s;
    *len = (size_t)(t->p - s);
    t->tline = t->line;
    return 1;
}

int gpk__text_peek(gpk__text *t, const char **tok, size_t *len)
{
    /* Skipping whitespace is harmless: the next call would do it anyway. */
    skip_space(t);
    t->tline = t->line;
    if (t->p >= t->end) return 0;
    const char *e = t->p;
    while (e < t->end && !is_space(*e)) e++;
    *tok = t->p;
    *len = (size_t)(e - t->p);
    return 1;
}

void gpk__text_rest_of_line(gpk__text *t, const char **s, size_t *len)
{
    const char *b = t->p;
    while (t->p < t->end && *t->p != '\n') t->p++;
    const char *e = t->p;
    if (t->p < t->end) { /* consume the '\n' */
        t->p++;
        t->line++;
    }
    while (b < e && is_space(*b)) b++;
    while (e > b && is_space(e[-1])) e--;
    *s = b;
    *len = (size_t)(e - b);
}

int gpk__text_key(gpk__text *t, const char **key, size_t *len)
{
    const char *tok;
    size_t n;
    if (!gpk__text_next(t, &tok, &n)) return 0;
    const char *colon = memchr(tok, ':', n);
    if (colon && colon != tok) {
        n = (size_t)(colon - tok);
        t->p = colon; /* same line: the token holds no newline */
    }
    *key = tok;
    *len = n;
    return 1;
}

void gpk__text_skip_colon(gpk__text *t)
{
    while (t->p < t->end && is_space(*t->p) && *t->p != '\n') t->p++;
    if (t->p < t->end && *t->p == ':') t->p++;
}

void gpk__text_value(gpk__text *t, const char **s, size_t *len)
{
    gpk__text_skip_colon(t);
    gpk__text_rest_of_line(t, s, len);
}

int gpk__text_at_end(gpk__text *t)
{
    skip_space(t);
    return t->p >= t->end;
}

int gpk__tok_is(const char *tok, size_t len, const char *word)
{
    size_t n = strlen(word);
    return n == len && memcmp(tok, word, n) == 0;
}

int gpk__tok_i64(const char *tok, size_t len, int64_t lo, int64_t hi, int64_t *out)
{
    size_t i = 0;
    int neg = 0;
    if (i < len && (tok[i] == '+' || tok[i] == '-')) neg = tok[i++] == '-';
    if (i == len) return -1;
    /* Accumulate the magnitude as unsigned, saturating, so that any number
     * of digits is handled without overflow. */
    uint64_t mag = 0;
    int over = 0;
    for (; i < len; i++) {
        if (tok[i] < '0' || tok[i] > '9') return -1;
        unsigned d = (unsigned)(tok[i] - '0');
        if (mag > (UINT64_MAX - d) / 10) over = 1;
        else mag = mag * 10 + d;
    }
    if (over) return 1;
    int64_t v;
    if (neg) {
        if (mag > (uint64_t)INT64_MAX + 1) return 1;
        v = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
    } else {
        if (mag > (uint64_t)INT64_MAX) return 1;
        v = (int64_t)mag;
    }
    if (v < lo || v > hi) return 1;
    *out = v;
    return 0;
}

int gpk__tok_f64(const char *tok, size_t len, double *out)
{
    /* Check the shape by hand first: strtod alone would also take "inf",
     * "nan", hexadecimal and leading blanks, and needs a terminated copy. */
    char buf[80];
    size_t i = 0, digits = 0;
    if (len == 0 || len >= sizeof buf) return -1;
    if (tok[i] == '+' || tok[i] == '-') i++;
    for (; i < len && tok[i] >= '0' && tok[i] <= '9'; i++) digits++;
    if (i < len && tok[i] == '.')
        for (i++; i < len && tok[i] >= '0' && tok[i] <= '9'; i++) digits++;
    if (digits == 0) return -1;
    if (i < len && (tok[i] == 'e' || tok[i] == 'E')) {
        i++;
        if (i < len && (tok[i] == '+' || tok[i] == '-')) i++;
        size_t ed = 0;
        for (; i < len && tok[i] >= '0' && tok[i] <= '9'; i++) ed++;
        if (ed == 0) return -1;
    }
    if (i != len) return -1;
    memcpy(buf, tok, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (end != buf + len || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

const char *gpk__tok_show(const char *tok, size_t len, char buf[40])
{
    size_t n = len > 32 ? 32 : len, k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)tok[i];
        buf[k++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    if (len > n) {
        buf[k++] = '.';
        buf[k++] = '.';
        buf[k++] = '.';
    }
    buf[k] = '\0';
    return buf;
}

gpk_status gpk__text_fail(const gpk__text *t, gpk_status s, const char *fmt, ...)
{
    char what[GPK_ERRLEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return gpk__fail(NULL, s, "%s:%lu: %s", t->name, t->tline, what);
}

gpk_status gpk__load_text(const char *path,
                          gpk_status (*parse)(const char *text, size_t len, const char *path, void *out),
                          void *out)
{
    char *text;
    size_t len;
    gpk_status s = gpk__read_file(path, &text, &len);
    if (s != GPK_OK) return s;
    s = parse(text, len, path, out);
    free(text);
    return s;
}

gpk_status gpk__read_file(const char *path, char **text, size_t *len)
{
    *text = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return gpk__fail(NULL, GPK_EIO, "%s: cannot open: %s", path, strerror(errno));
    /* Grow by doubling rather than trusting ftell: pipes and special files
     * have no size. An endless one (/dev/zero, a producer that never stops)
     * ends at GPK_MAX_INPUT bytes (default: the memory the process may use) with a
     * message, instead of in the out-of-memory killer. */
    const uint64_t host = gpk__host_memory_bytes(); /* the container's limit where smaller */
    size_t limit = host && host < SIZE_MAX ? (size_t)host : SIZE_MAX;
    const char *env = getenv("GPK_MAX_INPUT");
    if (env && *env && env[0] != '-') {
        char *end;
        errno = 0;
        const unsigned long long v = strtoull(env, &end, 10);
        if (!errno && !*end) limit = v < SIZE_MAX ? (size_t)v : SIZE_MAX;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        return gpk__fail(NULL, GPK_ENOMEM, "%s: out of memory", path);
    }
    for (;;) {
        if (n >= limit) {
            free(buf);
            fclose(f);
            return gpk__fail(NULL, GPK_EIO,
                             "%s: more than %zu bytes, the input limit (GPK_MAX_INPUT; an endless "
                             "source such as /dev/zero?)",
                             path, limit);
        }
        if (n == cap) {
            if (cap > SIZE_MAX / 2) {
                free(buf);
                fclose(f);
                return gpk__fail(NULL, GPK_ENOMEM, "%s: file too large", path);
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                fclose(f);
                return gpk__fail(NULL, GPK_ENOMEM, "%s: out of memory", path);
            }
            buf = nb;
            cap *= 2;
        }
        errno = 0;
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    const int err = ferror(f), why = errno;
    fclose(f);
    if (err) {
        free(buf);
        /* the cause, e.g. "Is a directory" for a directory named as the instance */
        return gpk__fail(NULL, GPK_EIO, "%s: read error: %s", path, why ? strerror(why) : "unknown cause");
    }
    *text = buf;
    *len = n;
    return GPK_OK;
}

void gpk__base_name(const char *path, char *out, size_t cap)
{
    const char *b = path;
    for (const char *c = path; *c; c++)
        if (*c == '/' || *c == '\\') b = c + 1;
    size_t n = strlen(b);
    const char *dot = strrchr(b, '.');
    if (dot && dot != b) n = (size_t)(dot - b);
    if (n >= cap) n = cap - 1;
    memcpy(out, b, n);
    out[n] = '\0';
}
