/* Internals of the local-search problem layer: a small line-aware tokenizer
 * over a memory buffer for the instance readers, and hooks the tests use. */
#ifndef GPK_SEARCH_INTERNAL_H
#define GPK_SEARCH_INTERNAL_H

#include "../core/internal.h"
#include "gpk/search.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A cursor over text[0 .. len): the buffer need not end with '\0' and may
 * hold any byte (fuzz inputs do). Tokens are runs of non-whitespace;
 * whitespace is ' ', '\t', '\r', '\v', '\f' and '\n', which counts lines. */
typedef struct gpk__text {
    const char *p, *end;
    const char *name;    /* labels the messages: "NAME:LINE: what" */
    unsigned long line;  /* line of p, 1-based */
    unsigned long tline; /* line of the last token returned */
} gpk__text;

void gpk__text_init(gpk__text *t, const char *text, size_t len, const char *name);
/* Skips whitespace (newlines included), returns 1 with the next token in
 * *tok / *len and t->tline set, or 0 at the end of the buffer. */
int gpk__text_next(gpk__text *t, const char **tok, size_t *len);
/* The next token without consuming it (t->tline is set to its line). */
int gpk__text_peek(gpk__text *t, const char **tok, size_t *len);
/* The rest of the current line with blanks trimmed at both ends (possibly
 * empty); the cursor moves to the start of the next line. */
void gpk__text_rest_of_line(gpk__text *t, const char **s, size_t *len);
/* Header lines "KEY : VALUE", "KEY: VALUE", "KEY:VALUE" or a lone "KEY":
 * text_key returns the next token cut before any ':' (0 at the end of the
 * buffer), leaving the cursor on the colon; text_value then gives the rest
 * of that line after an optional ':', trimmed (possibly empty), and moves to
 * the next line; text_skip_colon skips blanks and one ':' on the current
 * line (after a section keyword written "KEY_SECTION :"). */
int gpk__text_key(gpk__text *t, const char **key, size_t *len);
void gpk__text_value(gpk__text *t, const char **s, size_t *len);
void gpk__text_skip_colon(gpk__text *t);
/* Skips blanks and line breaks; returns 1 when the buffer is exhausted. */
int gpk__text_at_end(gpk__text *t);

/* Token equality with a C string. */
int gpk__tok_is(const char *tok, size_t len, const char *word);
/* Decimal integer ("[+-]digits") in [lo, hi]; 0 on success, -1 when the
 * token is not an integer, 1 when it is out of range. */
int gpk__tok_i64(const char *tok, size_t len, int64_t lo, int64_t hi, int64_t *out);
/* Finite decimal floating-point number ("12", "-3.5", "5.512e+02"); no
 * hexadecimal, inf or nan. 0 on success, -1 when not a number. Parsed by
 * strtod, so it assumes the "C" locale's decimal point. */
int gpk__tok_f64(const char *tok, size_t len, double *out);

/* Records "NAME:LINE: what" (LINE = the last token's line) and returns s. */
gpk_status gpk__text_fail(const gpk__text *t, gpk_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Shows a token in a message: at most 32 bytes, non-printables as '?'. */
const char *gpk__tok_show(const char *tok, size_t len, char buf[40]);

/* Reads a whole file into a malloc'd buffer (GPK_EIO, GPK_ENOMEM). */
gpk_status gpk__read_file(const char *path, char **text, size_t *len);
/* Reads the file at path whole and hands its text to parse, which fills
 * out; the status of the read, else the parser's. */
gpk_status gpk__load_text(const char *path,
                          gpk_status (*parse)(const char *text, size_t len, const char *path, void *out),
                          void *out);
/* The file name of path without directory and last extension, in out. */
void gpk__base_name(const char *path, char *out, size_t cap);

/* gpk_tsp_parse with the matrix limit as a parameter: matrix_max = 0 builds
 * coordinate instances without the matrix, so that tests can hold the
 * on-the-fly distances against the precomputed ones. */
gpk_status gpk__tsp_parse_ex(const char *text, size_t len, const char *name, uint32_t matrix_max,
                             gpk_tsp *out);

#ifdef __cplusplus
}
#endif
#endif
