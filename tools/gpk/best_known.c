/* Best-known values beside an instance (best-known.csv, bestSolutions.txt):
 * files the user did not name, so read only when they are what they claim
 * to be (a regular file of a sensible size) and every value checked. */
#define _POSIX_C_SOURCE 200809L /* fdopen, O_CLOEXEC */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "best_known.h"

/* A table or solution file beside the instance is at most this large (the
 * shared data's are a few KB). */
#define BESIDE_MAX_BYTES (64u << 20)

FILE *cli_open_beside(const char *file, char *why, size_t len)
{
    *why = '\0';
    /* O_NONBLOCK: opening a FIFO must not wait for a writer */
    const int fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return NULL; /* missing: no table, no message */
    struct stat st;
    const int have_stat = fstat(fd, &st) == 0;
    if (!have_stat || !S_ISREG(st.st_mode) || st.st_size > (off_t)BESIDE_MAX_BYTES) {
        snprintf(why, len, "%s: %s: ignored", file,
                 !have_stat                ? strerror(errno)
                     : S_ISREG(st.st_mode) ? "larger than 64 MiB"
                     : S_ISDIR(st.st_mode) ? "a directory"
                                           : "not a regular file");
        close(fd);
        return NULL;
    }
    /* back to blocking reads (a regular file never blocks anyway) */
    const int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    FILE *f = fdopen(fd, "r");
    if (!f) {
        snprintf(why, len, "%s: %s", file, strerror(errno));
        close(fd);
    }
    return f;
}

static int same_name(const char *a, const char *b, size_t blen, int fold)
{
    if (strlen(a) != blen) return 0;
    for (size_t i = 0; i < blen; i++) {
        char x = a[i], y = b[i];
        if (fold) {
            if (x >= 'A' && x <= 'Z') x = (char)(x - 'A' + 'a');
            if (y >= 'A' && y <= 'Z') y = (char)(y - 'A' + 'a');
        }
        if (x != y) return 0;
    }
    return 1;
}

void cli_read_best_known(FILE *f, const char *label, char sep, const char *name, const char *default_kind,
                         cli_best_known *bk)
{
    memset(bk, 0, sizeof *bk);
    if (!name || !*name) return;
    char line[512];
    unsigned long lineno = 0;
    int in_line = 0; /* the rest of a line longer than the buffer */
    while (fgets(line, sizeof line, f)) {
        const size_t got = strlen(line);
        const int whole = got > 0 && line[got - 1] == '\n';
        if (in_line) {
            in_line = !whole;
            continue;
        }
        lineno++;
        in_line = !whole && !feof(f);
        if (in_line) continue; /* longer than any name and value: not a table line */
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        char *k = p;
        while (*p && *p != sep && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n') p++;
        size_t klen = (size_t)(p - k);
        while (*p == ' ' || *p == '\t') p++;
        if (klen == 0 || *p != sep) continue;
        p++;
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p) continue;
        const int exact = same_name(name, k, klen, 0);
        if (!exact && !same_name(name, k, klen, 1)) continue;
        if (errno == ERANGE) {
            snprintf(bk->note, sizeof bk->note, "%s:%lu: the value for %s is out of range: ignored", label,
                     lineno, name);
            continue;
        }
        p = end;
        while (*p == ' ' || *p == '\t') p++;
        char kind[8] = "";
        if (*p == sep) {
            p++;
            while (*p == ' ' || *p == '\t') p++;
            size_t n = 0;
            while (p[n] && p[n] != '\r' && p[n] != '\n' && p[n] != ' ' && n + 1 < sizeof kind) n++;
            memcpy(kind, p, n);
            kind[n] = '\0';
        }
        if (exact || !bk->have) {
            bk->have = 1;
            bk->value = v;
            snprintf(bk->kind, sizeof bk->kind, "%s", *kind ? kind : default_kind);
            snprintf(bk->source, sizeof bk->source, "%s:%lu", label, lineno);
            if (exact) break;
        }
    }
}

cli_best_known cli_find_best_known(const char *path, const char *table, char sep, const char *name,
                                   const char *default_kind)
{
    cli_best_known bk;
    memset(&bk, 0, sizeof bk);
    if (!name || !*name) return bk;
    const char *slash = strrchr(path, '/');
    size_t dlen = slash ? (size_t)(slash - path) + 1 : 0;
    char *file = malloc(dlen + strlen(table) + 1);
    if (!file) return bk;
    memcpy(file, path, dlen);
    strcpy(file + dlen, table);
    char why[sizeof bk.note];
    FILE *f = cli_open_beside(file, why, sizeof why);
    if (!f) {
        snprintf(bk.note, sizeof bk.note, "%s", why);
        free(file);
        return bk;
    }
    cli_read_best_known(f, file, sep, name, default_kind, &bk);
    if (ferror(f) && !bk.have) snprintf(bk.note, sizeof bk.note, "%s: read error", file);
    fclose(f);
    free(file);
    return bk;
}

int cli_reference_plausible(const cli_best_known *bk, int64_t best)
{
    if (!bk->have) return 0;
    /* nothing is shorter than an optimum; and a result at less than half a
     * reference says the reference is not this instance's (a huge value
     * gave "gap -100.000 %") */
    if (best < bk->value && strcmp(bk->kind, "OPT") == 0) return 0;
    if (bk->value > 0 && best >= 0 && (double)best < 0.5 * (double)bk->value) return 0;
    return 1;
}
