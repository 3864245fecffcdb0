/* TSPLIB95 symmetric TSP instances: the reader, the distances of the
 * TSPLIB95 documentation, tour lengths and the 2-opt and swap deltas.
 *
 * Distances are precomputed into an n x n matrix when n <= matrix_max
 * (GPK_TSP_MATRIX_MAX through the public entry points): a lookup is much
 * cheaper than a square root or the GEO trigonometry, and the matrix of
 * the largest instance below the limit still fits in memory. Larger
 * coordinate instances keep only the coordinates and compute each distance
 * on demand with the very same function that fills the matrix, so both
 * paths give identical values. */
#include "problem.h"
#include "search_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Coordinates beyond this magnitude are rejected: with |x|, |y| <= 5e8 the
 * largest Euclidean distance, sqrt(2) * 1e9, still fits an int32_t, so the
 * double-to-int conversions below are always defined. */
#define COORD_MAX 5e8

typedef enum {
    FMT_NONE,
    FMT_FUNCTION,
    FMT_FULL_MATRIX,
    FMT_UPPER_ROW,      /* == LOWER_COL for a symmetric matrix */
    FMT_LOWER_ROW,      /* == UPPER_COL */
    FMT_UPPER_DIAG_ROW, /* == LOWER_DIAG_COL */
    FMT_LOWER_DIAG_ROW  /* == UPPER_DIAG_COL */
} weight_format;

/* TSPLIB95's nint: round half up, as its reference code ((int)(x + 0.5)). */
static int32_t nint(double x) { return (int32_t)(x + 0.5); }

/* The GEO conversion of "DDD.MM" (degrees, then minutes as the fraction)
 * to radians. TSPLIB95 writes deg = nint(x), but its FAQ and every solver
 * that reproduces the published optima (Concorde, LKH) truncate toward zero:
 * with nint, 38.24 would give 38 degrees but 38.54 would give 39 and a
 * negative minute part. PI is the documentation's 3.141592, not M_PI. */
static double geo_radians(double v)
{
    const double PI = 3.141592;
    double deg = trunc(v);
    double min = v - deg;
    return PI * (deg + 5.0 * min / 3.0) / 180.0;
}

/* A GEO coordinate DDD.MM within +-limit degrees, its minutes below 60. */
static int geo_in_range(double v, double limit)
{
    const double deg = trunc(v), min = fabs(v - deg);
    return fabs(v) <= limit && min < 0.6;
}

/* 1 (and what is wrong) when (lat, lon) is no GEO position: a latitude
 * beyond +-90 degrees, a longitude beyond +-180, 60 minutes or more. */
static int geo_bad(double lat, double lon, char *what, size_t len)
{
    const int bad_lat = !geo_in_range(lat, 90.0);
    if (!bad_lat && geo_in_range(lon, 180.0)) return 0;
    snprintf(what, len, "GEO %s %.10g is not DDD.MM within -%d .. %d degrees (minutes below 60)",
             bad_lat ? "latitude" : "longitude", bad_lat ? lat : lon, bad_lat ? 90 : 180, bad_lat ? 90 : 180);
    return 1;
}

static int32_t coord_dist(const gpk_tsp *t, uint32_t i, uint32_t j)
{
    /* The formulas are not meant for i == j (GEO would give 1). */
    if (i == j) return 0;
    double xd = t->x[i] - t->x[j], yd = t->y[i] - t->y[j];
    switch (t->weight) {
    case GPK_TSP_EUC_2D: return nint(sqrt(xd * xd + yd * yd));
    case GPK_TSP_CEIL_2D: return (int32_t)ceil(sqrt(xd * xd + yd * yd));
    case GPK_TSP_ATT: {
        /* Pseudo-Euclidean: round, then go one up when rounding went down. */
        double r = sqrt((xd * xd + yd * yd) / 10.0);
        int32_t k = nint(r);
        return (double)k < r ? k + 1 : k;
    }
    case GPK_TSP_GEO: {
        const double RRR = 6378.388;
        double lat_i = geo_radians(t->x[i]), lon_i = geo_radians(t->y[i]);
        double lat_j = geo_radians(t->x[j]), lon_j = geo_radians(t->y[j]);
        double q1 = cos(lon_i - lon_j);
        double q2 = cos(lat_i - lat_j);
        double q3 = cos(lat_i + lat_j);
        double c = 0.5 * ((1.0 + q1) * q2 - (1.0 - q1) * q3);
        /* Rounding can push c an ulp past +-1, where acos is NaN and the
         * conversion undefined; the clamp changes no in-range value. */
        if (c > 1.0) c = 1.0;
        if (c < -1.0) c = -1.0;
        return (int32_t)(RRR * acos(c) + 1.0);
    }
    case GPK_TSP_EXPLICIT: break;
    }
    return 0; /* EXPLICIT always has its matrix */
}

int32_t gpk_tsp_dist(const gpk_tsp *t, uint32_t i, uint32_t j)
{
    if (t->matrix) return t->matrix[(size_t)i * t->n + j];
    return coord_dist(t, i, j);
}

int64_t gpk_tsp_tour_length(const gpk_tsp *t, const uint32_t *tour)
{
    int64_t len = 0;
    for (uint32_t k = 0; k + 1 < t->n; k++) len += gpk_tsp_dist(t, tour[k], tour[k + 1]);
    if (t->n > 1) len += gpk_tsp_dist(t, tour[t->n - 1], tour[0]);
    return len;
}

int64_t gpk_tsp_two_opt_delta(const gpk_tsp *t, const uint32_t *tour, uint32_t i, uint32_t j)
{
    /* Edges (a,b) and (c,d) become (a,c) and (b,d). The formula also holds
     * for j == i + 1 (nothing changes) and for i == 0, j == n - 1 (d == a:
     * the same cycle backwards), both giving 0 by symmetry. */
    uint32_t n = t->n;
    if (n < 4) return 0; /* every tour of <= 3 cities has the same length */
    uint32_t a = tour[i], b = tour[i + 1], c = tour[j], d = tour[j + 1 == n ? 0 : j + 1];
    return (int64_t)gpk_tsp_dist(t, a, c) + gpk_tsp_dist(t, b, d) - gpk_tsp_dist(t, a, b) -
        gpk_tsp_dist(t, c, d);
}

int64_t gpk_tsp_swap_delta(const gpk_tsp *t, const uint32_t *tour, uint32_t i, uint32_t j)
{
    uint32_t n = t->n;
    if (n < 4 || i == j) return 0;
    if (i > j) {
        uint32_t s = i;
        i = j;
        j = s;
    }
    uint32_t pi = tour[i == 0 ? n - 1 : i - 1], ci = tour[i], ni = tour[i + 1];
    uint32_t pj = tour[j - 1], cj = tour[j], nj = tour[j + 1 == n ? 0 : j + 1];
    if (j == i + 1) {
        /* pi ci cj nj -> pi cj ci nj: the middle edge stays. */
        return (int64_t)gpk_tsp_dist(t, pi, cj) + gpk_tsp_dist(t, ci, nj) - gpk_tsp_dist(t, pi, ci) -
            gpk_tsp_dist(t, cj, nj);
    }
    if (i == 0 && j == n - 1) {
        /* Neighbours across the wrap: pj cj ci ni -> pj ci cj ni. */
        return (int64_t)gpk_tsp_dist(t, pj, ci) + gpk_tsp_dist(t, cj, ni) - gpk_tsp_dist(t, pj, cj) -
            gpk_tsp_dist(t, ci, ni);
    }
    /* Apart: four edges change. When j == i + 2 (ni == pj) the edges
     * through the shared neighbour cancel by symmetry, as they should. */
    return (int64_t)gpk_tsp_dist(t, pi, cj) + gpk_tsp_dist(t, cj, ni) + gpk_tsp_dist(t, pj, ci) +
        gpk_tsp_dist(t, ci, nj) - gpk_tsp_dist(t, pi, ci) - gpk_tsp_dist(t, ci, ni) -
        gpk_tsp_dist(t, pj, cj) - gpk_tsp_dist(t, cj, nj);
}

void gpk_tsp_free(gpk_tsp *t)
{
    if (!t) return;
    free(t->x);
    free(t->y);
    free(t->matrix);
    free(t->fixed);
    memset(t, 0, sizeof *t);
}

/* ---- the reader ---- */

/* Each data token takes at least one byte and a separator: a buffer of r
 * bytes holds at most (r + 1) / 2 of them. Checking this before allocating
 * keeps a lying DIMENSION from requesting gigabytes (fuzzers find that at
 * once) and reports truncation where the section starts. */
static int room_for(const gpk__text *t, uint64_t tokens)
{
    uint64_t r = (uint64_t)(t->end - t->p);
    return tokens <= (r + 1) / 2;
}

static gpk_status expect_num(gpk__text *t, const char *what, const char *section, int64_t lo, int64_t hi,
                             int64_t *v)
{
    const char *tok;
    size_t len;
    char show[40];
    if (!gpk__text_next(t, &tok, &len))
        return gpk__text_fail(t, GPK_EFORMAT, "%s ends early: %s expected", section, what);
    int r = gpk__tok_i64(tok, len, lo, hi, v);
    if (r < 0)
        return gpk__text_fail(t, GPK_EFORMAT, "%s: %s expected, got '%s'", section, what,
                              gpk__tok_show(tok, len, show));
    if (r > 0)
        return gpk__text_fail(t, GPK_EFORMAT, "%s: %s '%s' out of range %lld..%lld", section, what,
                              gpk__tok_show(tok, len, show), (long long)lo, (long long)hi);
    return GPK_OK;
}

static gpk_status expect_coord(gpk__text *t, const char *section, double *v)
{
    const char *tok;
    size_t len;
    char show[40];
    if (!gpk__text_next(t, &tok, &len))
        return gpk__text_fail(t, GPK_EFORMAT, "%s ends early: coordinate expected", section);
    if (gpk__tok_f64(tok, len, v) != 0)
        return gpk__text_fail(t, GPK_EFORMAT, "%s: coordinate expected, got '%s'", section,
                              gpk__tok_show(tok, len, show));
    if (fabs(*v) > COORD_MAX)
        return gpk__text_fail(t, GPK_EFORMAT, "%s: coordinate '%s' beyond +-5e8", section,
                              gpk__tok_show(tok, len, show));
    return GPK_OK;
}

/* "id x y" lines, n of them, every id in 1..n once. x, y NULL: validate and
 * skip (DISPLAY_DATA_SECTION). */
static gpk_status read_nodes(gpk__text *t, uint32_t n, const char *section, int geo, double *x, double *y)
{
    if (!room_for(t, 3 * (uint64_t)n))
        return gpk__text_fail(t, GPK_EFORMAT, "%s: truncated, DIMENSION %u needs %llu numbers", section, n,
                              3ull * n);
    unsigned char *seen = calloc(n, 1);
    if (!seen) return gpk__fail(NULL, GPK_ENOMEM, "%s: out of memory", t->name);
    gpk_status st = GPK_OK;
    for (uint32_t k = 0; k < n && st == GPK_OK; k++) {
        int64_t id;
        double cx, cy;
        if ((st = expect_num(t, "node number", section, 1, n, &id)) != GPK_OK) break;
        if (seen[id - 1]) {
            st = gpk__text_fail(t, GPK_EFORMAT, "%s: node %lld given twice", section, (long long)id);
            break;
        }
        seen[id - 1] = 1;
        if ((st = expect_coord(t, section, &cx)) != GPK_OK) break;
        if ((st = expect_coord(t, section, &cy)) != GPK_OK) break;
        char what[160];
        if (geo && geo_bad(cx, cy, what, sizeof what)) {
            st = gpk__text_fail(t, GPK_EFORMAT, "%s: node %lld: %s", section, (long long)id, what);
            break;
        }
        if (x) {
            x[id - 1] = cx;
            y[id - 1] = cy;
        }
    }
    free(seen);
    return st;
}

static gpk_status read_weights(gpk__text *t, uint32_t n, weight_format fmt, int32_t *m)
{
    const char *sec = "EDGE_WEIGHT_SECTION";
    uint64_t nn = (uint64_t)n;
    uint64_t need = fmt == FMT_FULL_MATRIX             ? nn * nn
        : fmt == FMT_UPPER_ROW || fmt == FMT_LOWER_ROW ? nn * (nn - 1) / 2
                                                       : nn * (nn + 1) / 2;
    if (!room_for(t, need))
        return gpk__text_fail(t, GPK_EFORMAT, "%s: truncated, DIMENSION %u needs %llu numbers", sec, n,
                              (unsigned long long)need);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t lo = 0, hi = n; /* columns j of row i, [lo, hi) */
        switch (fmt) {
        case FMT_UPPER_ROW: lo = i + 1; break;
        case FMT_LOWER_ROW: hi = i; break;
        case FMT_UPPER_DIAG_ROW: lo = i; break;
        case FMT_LOWER_DIAG_ROW: hi = i + 1; break;
        default: break;
        }
        for (uint32_t j = lo; j < hi; j++) {
            int64_t v;
            gpk_status st = expect_num(t, "distance", sec, 0, INT32_MAX, &v);
            if (st != GPK_OK) return st;
            m[(size_t)i * n + j] = (int32_t)v;
            if (fmt != FMT_FULL_MATRIX) m[(size_t)j * n + i] = (int32_t)v;
        }
    }
    if (fmt == FMT_FULL_MATRIX) {
        /* The deltas rely on d(a,b) == d(b,a): an asymmetric matrix is an
         * ATSP instance, which this reader does not take. */
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = i + 1; j < n; j++)
                if (m[(size_t)i * n + j] != m[(size_t)j * n + i])
                    return gpk__text_fail(t, GPK_EFORMAT,
                                          "FULL_MATRIX not symmetric: d(%u,%u) = %d, d(%u,%u) = %d", i + 1,
                                          j + 1, m[(size_t)i * n + j], j + 1, i + 1, m[(size_t)j * n + i]);
    }
    return GPK_OK;
}

/* The cities that fixed edges name, numbered in order of appearance (an
 * open-addressing hash from city to number) with a union-find root and a
 * degree each: sized by the edges read, never by DIMENSION, so a DIMENSION
 * far beyond the file costs nothing (a fuzzer's 1844674404 with one edge
 * asked for 7 GB when these were arrays over every city). */
typedef struct fixed_cities {
    uint32_t *key, *num; /* hash slots: city (UINT32_MAX: empty) and its number */
    size_t slots, count;
    uint32_t *root; /* by number */
    unsigned char *deg;
} fixed_cities;

/* *id = the number of city (a new one if unseen); non-zero: out of memory. */
static int fixed_city(fixed_cities *c, uint32_t city, uint32_t *id)
{
    if (2 * (c->count + 1) > c->slots) {
        const size_t slots = c->slots ? 2 * c->slots : 64;
        uint32_t *key = malloc(slots * sizeof *key), *num = malloc(slots * sizeof *num);
        uint32_t *root = realloc(c->root, slots / 2 * sizeof *root);
        if (root) c->root = root;
        unsigned char *deg = realloc(c->deg, slots / 2);
        if (deg) c->deg = deg;
        if (!key || !num || !root || !deg) {
            free(key), free(num);
            return -1;
        }
        memset(key, 0xff, slots * sizeof *key);
        for (size_t i = 0; i < c->slots; i++) {
            if (c->key[i] == UINT32_MAX) continue;
            size_t j = (c->key[i] * 2654435761u) & (slots - 1);
            while (key[j] != UINT32_MAX) j = (j + 1) & (slots - 1);
            key[j] = c->key[i], num[j] = c->num[i];
        }
        free(c->key), free(c->num);
        c->key = key, c->num = num, c->slots = slots;
    }
    size_t i = (city * 2654435761u) & (c->slots - 1);
    while (c->key[i] != UINT32_MAX && c->key[i] != city) i = (i + 1) & (c->slots - 1);
    if (c->key[i] == UINT32_MAX) {
        c->key[i] = city, c->num[i] = (uint32_t)c->count;
        c->root[c->count] = (uint32_t)c->count, c->deg[c->count] = 0;
        c->count++;
    }
    *id = c->num[i];
    return 0;
}

/* FIXED_EDGES_SECTION: pairs of nodes ended by -1, edges every solution
 * must contain (TSPLIB95); kept 0-based in out->fixed. They must fit in a
 * tour: no city on three of them, no cycle short of all n cities. */
static gpk_status read_fixed_edges(gpk__text *t, uint32_t n, gpk_tsp *out)
{
    size_t cap = 0;
    fixed_cities cities = {NULL, NULL, 0, 0, NULL, NULL};
    gpk_status st = GPK_OK;
    for (;;) {
        int64_t a, b;
        if ((st = expect_num(t, "node number or -1", "FIXED_EDGES_SECTION", -1, n, &a)) != GPK_OK) break;
        if (a == -1) break;
        if (a == 0) {
            st = gpk__text_fail(t, GPK_EFORMAT, "FIXED_EDGES_SECTION: node 0");
            break;
        }
        if ((st = expect_num(t, "node number", "FIXED_EDGES_SECTION", 1, n, &b)) != GPK_OK) break;
        const uint32_t ca = (uint32_t)a - 1, cb = (uint32_t)b - 1;
        uint32_t u, v;
        if (fixed_city(&cities, ca, &u) || fixed_city(&cities, cb, &v)) {
            st = gpk__fail(NULL, GPK_ENOMEM, "FIXED_EDGES_SECTION: out of memory");
            break;
        }
        if (u == v || ++cities.deg[u] > 2 || ++cities.deg[v] > 2) {
            st = gpk__text_fail(t, GPK_EFORMAT, "FIXED_EDGES_SECTION: edge %u %u %s", ca + 1, cb + 1,
                                u == v ? "is a loop" : "puts a city on three fixed edges");
            break;
        }
        if (out->nfixed == cap) {
            cap = cap ? 2 * cap : 8;
            uint32_t *f = realloc(out->fixed, cap * 2 * sizeof *f);
            if (!f) {
                st = gpk__fail(NULL, GPK_ENOMEM, "FIXED_EDGES_SECTION: out of memory");
                break;
            }
            out->fixed = f;
        }
        out->fixed[2 * out->nfixed] = ca;
        out->fixed[2 * out->nfixed + 1] = cb;
        out->nfixed++;
        uint32_t *root = cities.root;
        while (root[u] != u) u = root[u] = root[root[u]];
        while (root[v] != v) v = root[v] = root[root[v]];
        if (u == v && out->nfixed != n) {
            st = gpk__text_fail(t, GPK_EFORMAT,
                                "FIXED_EDGES_SECTION: edge %lld %lld closes a cycle of fewer than %u cities",
                                (long long)a, (long long)b, n);
            break;
        }
        root[u] = v;
    }
    free(cities.key), free(cities.num), free(cities.root), free(cities.deg);
    return st;
}

static int value_is(const char *v, size_t len, const char *word) { return gpk__tok_is(v, len, word); }

/* What the reader has seen of an instance so far. */
typedef struct tsp_seen {
    uint32_t n; /* DIMENSION (0: not yet) */
    int type, coords, weights, display, fixed;
    weight_format fmt;
} tsp_seen;

/* DIMENSION's value. */
static gpk_status read_dimension(gpk__text *t, const char *val, size_t vlen, tsp_seen *s)
{
    char show[40];
    int64_t v;
    if (s->n) return gpk__text_fail(t, GPK_EFORMAT, "DIMENSION given twice");
    if (gpk__tok_i64(val, vlen, 0, UINT32_MAX, &v) != 0)
        return gpk__text_fail(t, GPK_EFORMAT, "DIMENSION '%s' is not a count",
                              gpk__tok_show(val, vlen, show));
    if (v < 4)
        return gpk__text_fail(t, GPK_EFORMAT, "DIMENSION %lld: a TSP needs at least 4 cities", (long long)v);
    s->n = (uint32_t)v;
    return GPK_OK;
}

/* EDGE_WEIGHT_TYPE's value. */
static gpk_status read_weight_type(gpk__text *t, const char *val, size_t vlen, tsp_seen *s, gpk_tsp *out)
{
    char show[40];
    if (s->type) return gpk__text_fail(t, GPK_EFORMAT, "EDGE_WEIGHT_TYPE given twice");
    if (value_is(val, vlen, "EUC_2D")) out->weight = GPK_TSP_EUC_2D;
    else if (value_is(val, vlen, "CEIL_2D")) out->weight = GPK_TSP_CEIL_2D;
    else if (value_is(val, vlen, "ATT")) out->weight = GPK_TSP_ATT;
    else if (value_is(val, vlen, "GEO")) out->weight = GPK_TSP_GEO;
    else if (value_is(val, vlen, "EXPLICIT")) out->weight = GPK_TSP_EXPLICIT;
    else
        return gpk__text_fail(t, GPK_EFORMAT,
                              "EDGE_WEIGHT_TYPE '%s' not supported (EUC_2D, CEIL_2D, ATT, GEO, EXPLICIT)",
                              gpk__tok_show(val, vlen, show));
    s->type = 1;
    return GPK_OK;
}

/* EDGE_WEIGHT_FORMAT's value. */
static gpk_status read_weight_format(gpk__text *t, const char *val, size_t vlen, tsp_seen *s)
{
    char show[40];
    if (s->fmt != FMT_NONE) return gpk__text_fail(t, GPK_EFORMAT, "EDGE_WEIGHT_FORMAT given twice");
    if (value_is(val, vlen, "FUNCTION")) s->fmt = FMT_FUNCTION;
    else if (value_is(val, vlen, "FULL_MATRIX")) s->fmt = FMT_FULL_MATRIX;
    else if (value_is(val, vlen, "UPPER_ROW") || value_is(val, vlen, "LOWER_COL")) s->fmt = FMT_UPPER_ROW;
    else if (value_is(val, vlen, "LOWER_ROW") || value_is(val, vlen, "UPPER_COL")) s->fmt = FMT_LOWER_ROW;
    else if (value_is(val, vlen, "UPPER_DIAG_ROW") || value_is(val, vlen, "LOWER_DIAG_COL"))
        s->fmt = FMT_UPPER_DIAG_ROW;
    else if (value_is(val, vlen, "LOWER_DIAG_ROW") || value_is(val, vlen, "UPPER_DIAG_COL"))
        s->fmt = FMT_LOWER_DIAG_ROW;
    else
        return gpk__text_fail(t, GPK_EFORMAT, "EDGE_WEIGHT_FORMAT '%s' not supported",
                              gpk__tok_show(val, vlen, show));
    return GPK_OK;
}

/* A "KEY : VALUE" line: its status; NOT_HEADER when key is no header
 * keyword. */
#define NOT_HEADER ((gpk_status)-101)
static gpk_status read_header(gpk__text *t, const char *key, size_t klen, tsp_seen *s, gpk_tsp *out)
{
    const char *val;
    size_t vlen;
    char show[40];
    if (gpk__tok_is(key, klen, "NAME") || gpk__tok_is(key, klen, "COMMENT") ||
        gpk__tok_is(key, klen, "CAPACITY") || gpk__tok_is(key, klen, "DISPLAY_DATA_TYPE") ||
        gpk__tok_is(key, klen, "EDGE_DATA_FORMAT")) {
        gpk__text_value(t, &val, &vlen);
        return GPK_OK;
    }
    if (gpk__tok_is(key, klen, "TYPE")) {
        gpk__text_value(t, &val, &vlen);
        /* si1032 writes "TSP (M.~Hofmeister)": the first word decides. */
        if (vlen < 3 || memcmp(val, "TSP", 3) != 0 || (vlen > 3 && val[3] != ' ' && val[3] != '\t'))
            return gpk__text_fail(t, GPK_EFORMAT, "TYPE '%s' is not TSP", gpk__tok_show(val, vlen, show));
        return GPK_OK;
    }
    if (gpk__tok_is(key, klen, "DIMENSION")) {
        gpk__text_value(t, &val, &vlen);
        return read_dimension(t, val, vlen, s);
    }
    if (gpk__tok_is(key, klen, "EDGE_WEIGHT_TYPE")) {
        gpk__text_value(t, &val, &vlen);
        return read_weight_type(t, val, vlen, s, out);
    }
    if (gpk__tok_is(key, klen, "EDGE_WEIGHT_FORMAT")) {
        gpk__text_value(t, &val, &vlen);
        return read_weight_format(t, val, vlen, s);
    }
    if (gpk__tok_is(key, klen, "NODE_COORD_TYPE")) {
        gpk__text_value(t, &val, &vlen);
        if (!value_is(val, vlen, "TWOD_COORDS") && !value_is(val, vlen, "NO_COORDS"))
            return gpk__text_fail(t, GPK_EFORMAT, "NODE_COORD_TYPE '%s' not supported (2D only)",
                                  gpk__tok_show(val, vlen, show));
        return GPK_OK;
    }
    return NOT_HEADER;
}

/* NODE_COORD_SECTION. */
static gpk_status read_coord_section(gpk__text *t, const char *label, tsp_seen *s, gpk_tsp *out)
{
    const uint32_t n = s->n;
    if (s->coords) return gpk__text_fail(t, GPK_EFORMAT, "NODE_COORD_SECTION given twice");
    /* Room first: a lying DIMENSION must not size the arrays. */
    if (!room_for(t, 3 * (uint64_t)n))
        return gpk__text_fail(t, GPK_EFORMAT,
                              "NODE_COORD_SECTION: truncated, DIMENSION %u needs %llu numbers", n, 3ull * n);
    out->x = malloc((size_t)n * sizeof *out->x);
    out->y = malloc((size_t)n * sizeof *out->y);
    if (!out->x || !out->y) return gpk__fail(NULL, GPK_ENOMEM, "%s: out of memory for %u cities", label, n);
    const gpk_status st =
        read_nodes(t, n, "NODE_COORD_SECTION", s->type && out->weight == GPK_TSP_GEO, out->x, out->y);
    s->coords = st == GPK_OK;
    return st;
}

/* EDGE_WEIGHT_SECTION. */
static gpk_status read_weight_section(gpk__text *t, const char *label, tsp_seen *s, gpk_tsp *out)
{
    const uint32_t n = s->n;
    if (s->weights) return gpk__text_fail(t, GPK_EFORMAT, "EDGE_WEIGHT_SECTION given twice");
    if (!s->type || out->weight != GPK_TSP_EXPLICIT)
        return gpk__text_fail(t, GPK_EFORMAT, "EDGE_WEIGHT_SECTION without EDGE_WEIGHT_TYPE EXPLICIT");
    if (s->fmt == FMT_NONE || s->fmt == FMT_FUNCTION)
        return gpk__text_fail(t, GPK_EFORMAT, "EDGE_WEIGHT_SECTION without a matrix EDGE_WEIGHT_FORMAT");
    /* Check the room first so that a huge DIMENSION fails as a
     * truncated file, not as an n x n allocation. */
    uint64_t nn = n;
    if (!room_for(t, s->fmt == FMT_FULL_MATRIX ? nn * nn : nn * (nn - 1) / 2))
        return gpk__text_fail(t, GPK_EFORMAT, "EDGE_WEIGHT_SECTION: truncated for DIMENSION %u", n);
    if (nn * nn > SIZE_MAX / sizeof *out->matrix)
        return gpk__fail(NULL, GPK_ENOMEM, "%s: %u x %u matrix too large", label, n, n);
    out->matrix = calloc((size_t)nn * nn, sizeof *out->matrix);
    if (!out->matrix)
        return gpk__fail(NULL, GPK_ENOMEM, "%s: out of memory for a %u x %u matrix", label, n, n);
    const gpk_status st = read_weights(t, n, s->fmt, out->matrix);
    s->weights = st == GPK_OK;
    return st;
}

/* One of the four sections, after its keyword. */
static gpk_status read_section(gpk__text *t, const char *key, size_t klen, const char *label, tsp_seen *s,
                               gpk_tsp *out)
{
    gpk__text_skip_colon(t);
    if (!s->n) return gpk__text_fail(t, GPK_EFORMAT, "%.*s before DIMENSION", (int)klen, key);
    if (key[0] == 'N') return read_coord_section(t, label, s, out);
    if (key[0] == 'E') return read_weight_section(t, label, s, out);
    gpk_status st;
    if (key[0] == 'D') {
        if (s->display) return gpk__text_fail(t, GPK_EFORMAT, "DISPLAY_DATA_SECTION given twice");
        st = read_nodes(t, s->n, "DISPLAY_DATA_SECTION", 0, NULL, NULL);
        s->display = st == GPK_OK;
        return st;
    }
    if (s->fixed) return gpk__text_fail(t, GPK_EFORMAT, "FIXED_EDGES_SECTION given twice");
    st = read_fixed_edges(t, s->n, out);
    s->fixed = st == GPK_OK;
    return st;
}

/* After the last keyword: missing pieces (reported at the end of the
 * file), late GEO checks and the distance matrix. */
static gpk_status finish_instance(gpk__text *t, const char *label, uint32_t matrix_max, const tsp_seen *s,
                                  gpk_tsp *out)
{
    const uint32_t n = s->n;
    t->tline = t->line;
    if (!n) return gpk__text_fail(t, GPK_EFORMAT, "no DIMENSION");
    if (!s->type) return gpk__text_fail(t, GPK_EFORMAT, "no EDGE_WEIGHT_TYPE");
    out->n = n;
    if (out->weight == GPK_TSP_EXPLICIT) {
        if (!s->weights) return gpk__text_fail(t, GPK_EFORMAT, "no EDGE_WEIGHT_SECTION");
        /* Coordinates of an EXPLICIT instance only serve display. */
        free(out->x);
        free(out->y);
        out->x = out->y = NULL;
        return GPK_OK;
    }
    if (!s->coords) return gpk__text_fail(t, GPK_EFORMAT, "no NODE_COORD_SECTION");
    /* GEO given after the section (the section checked them otherwise) */
    if (out->weight == GPK_TSP_GEO) {
        for (uint32_t i = 0; i < n; i++) {
            char what[160];
            if (geo_bad(out->x[i], out->y[i], what, sizeof what))
                return gpk__text_fail(t, GPK_EFORMAT, "NODE_COORD_SECTION: node %u: %s", i + 1, what);
        }
    }
    if (n > matrix_max) return GPK_OK;
    size_t nn = (size_t)n * n;
    out->matrix = malloc(nn * sizeof *out->matrix);
    if (!out->matrix)
        return gpk__fail(NULL, GPK_ENOMEM, "%s: out of memory for a %u x %u matrix", label, n, n);
    for (uint32_t i = 0; i < n; i++) {
        out->matrix[(size_t)i * n + i] = 0;
        for (uint32_t j = i + 1; j < n; j++) {
            int32_t d = coord_dist(out, i, j);
            out->matrix[(size_t)i * n + j] = d;
            out->matrix[(size_t)j * n + i] = d;
        }
    }
    return GPK_OK;
}

static gpk_status parse_core(const char *text, size_t len, const char *label, const char *name,
                             uint32_t matrix_max, gpk_tsp *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", name ? name : "");
    gpk__text t;
    gpk__text_init(&t, text, len, label);
    tsp_seen s;
    memset(&s, 0, sizeof s);
    s.fmt = FMT_NONE;
    gpk_status st = GPK_OK;
    const char *key;
    size_t klen;
    char show[40];
    while (st == GPK_OK && gpk__text_key(&t, &key, &klen)) {
        if (gpk__tok_is(key, klen, "EOF")) break;
        st = read_header(&t, key, klen, &s, out);
        if (st != NOT_HEADER) continue;
        if (gpk__tok_is(key, klen, "NODE_COORD_SECTION") || gpk__tok_is(key, klen, "EDGE_WEIGHT_SECTION") ||
            gpk__tok_is(key, klen, "DISPLAY_DATA_SECTION") || gpk__tok_is(key, klen, "FIXED_EDGES_SECTION"))
            st = read_section(&t, key, klen, label, &s, out);
        else
            st = gpk__text_fail(&t, GPK_EFORMAT, "unknown keyword '%s'%s", gpk__tok_show(key, klen, show),
                                key[0] >= '0' && key[0] <= '9' ? " (more data than DIMENSION?)" : "");
    }
    if (st == GPK_OK) st = finish_instance(&t, label, matrix_max, &s, out);
    if (st != GPK_OK) gpk_tsp_free(out);
    return st;
}

gpk_status gpk__tsp_parse_ex(const char *text, size_t len, const char *name, uint32_t matrix_max,
                             gpk_tsp *out)
{
    if (!out) return gpk__fail(NULL, GPK_EINVAL, "gpk_tsp_parse: out is NULL");
    if (!text && len) {
        memset(out, 0, sizeof *out);
        return gpk__fail(NULL, GPK_EINVAL, "gpk_tsp_parse: text is NULL");
    }
    return parse_core(text ? text : "", len, name ? name : "(memory)", name ? name : "", matrix_max, out);
}

gpk_status gpk_tsp_parse(const char *text, size_t len, const char *name, gpk_tsp *out)
{
    return gpk__tsp_parse_ex(text, len, name, GPK_TSP_MATRIX_MAX, out);
}

/* The instance in a file's text, named after the file. */
static gpk_status tsp_parse_file(const char *text, size_t len, const char *path, void *out)
{
    char base[64];
    gpk__base_name(path, base, sizeof base);
    return parse_core(text, len, path, base, GPK_TSP_MATRIX_MAX, (gpk_tsp *)out);
}

gpk_status gpk_tsp_load(const char *path, gpk_tsp *out)
{
    if (!out) return gpk__fail(NULL, GPK_EINVAL, "gpk_tsp_load: out is NULL");
    memset(out, 0, sizeof *out);
    if (!path) return gpk__fail(NULL, GPK_EINVAL, "gpk_tsp_load: path is NULL");
    return gpk__load_text(path, tsp_parse_file, out);
}

/* ---- tours ---- */

static gpk_status parse_tour(const char *text, size_t len, const char *label, uint32_t *n_out,
                             uint32_t **tour_out)
{
    gpk__text t;
    gpk__text_init(&t, text, len, label);
    const char *key, *val, *tok;
    size_t klen, vlen, tlen;
    char show[40];
    uint32_t dim = 0, count = 0, cap = 0;
    uint32_t *tour = NULL;
    unsigned char *seen = NULL;
    gpk_status st = GPK_OK;
    int have_section = 0;

    while (!have_section && gpk__text_key(&t, &key, &klen)) {
        if (gpk__tok_is(key, klen, "EOF")) break;
        if (gpk__tok_is(key, klen, "NAME") || gpk__tok_is(key, klen, "COMMENT") ||
            gpk__tok_is(key, klen, "TYPE")) {
            gpk__text_value(&t, &val, &vlen);
        } else if (gpk__tok_is(key, klen, "DIMENSION")) {
            gpk__text_value(&t, &val, &vlen);
            int64_t v;
            if (gpk__tok_i64(val, vlen, 1, UINT32_MAX, &v) != 0)
                return gpk__text_fail(&t, GPK_EFORMAT, "DIMENSION '%s' is not a count",
                                      gpk__tok_show(val, vlen, show));
            dim = (uint32_t)v;
        } else if (gpk__tok_is(key, klen, "TOUR_SECTION")) {
            gpk__text_skip_colon(&t);
            have_section = 1;
        } else {
            return gpk__text_fail(&t, GPK_EFORMAT, "unknown keyword '%s'", gpk__tok_show(key, klen, show));
        }
    }
    if (!have_section) {
        t.tline = t.line;
        return gpk__text_fail(&t, GPK_EFORMAT, "no TOUR_SECTION");
    }
    if (dim && !room_for(&t, dim))
        return gpk__text_fail(&t, GPK_EFORMAT, "TOUR_SECTION: truncated, DIMENSION %u", dim);
    /* Cities until -1, EOF or the end of the file. */
    while (gpk__text_next(&t, &tok, &tlen)) {
        if (gpk__tok_is(tok, tlen, "EOF")) break;
        int64_t v;
        int r = gpk__tok_i64(tok, tlen, -1, dim ? dim : UINT32_MAX, &v);
        if (r < 0 || v == 0) {
            st = gpk__text_fail(&t, GPK_EFORMAT, "TOUR_SECTION: city number expected, got '%s'",
                                gpk__tok_show(tok, tlen, show));
            goto fail;
        }
        if (r > 0) {
            st = gpk__text_fail(&t, GPK_EFORMAT, "TOUR_SECTION: city '%s' out of range 1..%u",
                                gpk__tok_show(tok, tlen, show), dim ? dim : UINT32_MAX);
            goto fail;
        }
        if (v == -1) break;
        if (dim && count == dim) {
            st = gpk__text_fail(&t, GPK_EFORMAT, "TOUR_SECTION: more than DIMENSION %u cities", dim);
            goto fail;
        }
        if (count == cap) {
            uint32_t nc = dim ? dim : (cap ? (cap > UINT32_MAX / 2 ? UINT32_MAX : cap * 2) : 1024);
            uint32_t *nt = realloc(tour, (size_t)nc * sizeof *nt);
            if (!nt) {
                st = gpk__fail(NULL, GPK_ENOMEM, "%s: out of memory", label);
                goto fail;
            }
            tour = nt;
            cap = nc;
        }
        tour[count++] = (uint32_t)(v - 1);
    }
    if (dim && count != dim) {
        st = gpk__text_fail(&t, GPK_EFORMAT, "TOUR_SECTION: %u cities, DIMENSION says %u", count, dim);
        goto fail;
    }
    if (count == 0) {
        st = gpk__text_fail(&t, GPK_EFORMAT, "TOUR_SECTION: empty tour");
        goto fail;
    }
    seen = calloc(count, 1);
    if (!seen) {
        st = gpk__fail(NULL, GPK_ENOMEM, "%s: out of memory", label);
        goto fail;
    }
    for (uint32_t k = 0; k < count; k++) {
        if (tour[k] >= count || seen[tour[k]]) {
            st = gpk__text_fail(&t, GPK_EFORMAT, "TOUR_SECTION: not a permutation of 1..%u (city %u)", count,
                                tour[k] + 1);
            goto fail;
        }
        seen[tour[k]] = 1;
    }
    free(seen);
    *n_out = count;
    *tour_out = tour;
    return GPK_OK;

fail:
    free(seen);
    free(tour);
    return st;
}

typedef struct tour_out {
    uint32_t *n;
    uint32_t **tour;
} tour_out;

static gpk_status parse_tour_file(const char *text, size_t len, const char *path, void *out)
{
    const tour_out *o = (const tour_out *)out;
    return parse_tour(text, len, path, o->n, o->tour);
}

gpk_status gpk_tsp_load_tour(const char *path, uint32_t *n, uint32_t **tour)
{
    if (!path || !n || !tour) return gpk__fail(NULL, GPK_EINVAL, "gpk_tsp_load_tour: NULL argument");
    *n = 0;
    *tour = NULL;
    tour_out out = {n, tour};
    return gpk__load_text(path, parse_tour_file, &out);
}

/* ---- the problem contract (problem.h) ---- */

static gpk_status tsp_describe(const gpk_search_problem *pb, gpk_search_problem_info *info,
                               uint64_t *fingerprint, const char **why)
{
    const gpk_tsp *t = pb->tsp;
    if (!t) return *why = "TSP problem with a NULL tsp instance", GPK_EINVAL;
    if (!t->matrix && (!t->x || !t->y))
        return *why = "TSP instance without coordinates or matrix", GPK_EINVAL;
    info->n = t->n;
    snprintf(info->name, sizeof info->name, "%s", t->name);
    if (!fingerprint) return GPK_OK;
    uint64_t h = 0x6a09e667f3bcc908ull ^ (uint64_t)GPK_PROBLEM_TSP;
    h ^= (uint64_t)t->weight << 40;
    if (t->x && t->y) {
        h = gpk__fingerprint(h, t->x, (size_t)t->n * sizeof *t->x);
        h = gpk__fingerprint(h, t->y, (size_t)t->n * sizeof *t->y);
    } else {
        h = gpk__fingerprint(h, t->matrix, (size_t)t->n * t->n * sizeof *t->matrix);
    }
    *fingerprint = h;
    return GPK_OK;
}

static gpk_status tsp_cost(const gpk_search_problem *pb, const uint32_t *solution, int64_t *cost)
{
    *cost = gpk_tsp_tour_length(pb->tsp, solution);
    return GPK_OK;
}

/* or2opt: a multistart of iterated local searches over the threads; the
 * other neighbourhoods: the iterated tabu search. */
static gpk_search_algo tsp_auto_algo(gpk_neighbourhood nb)
{
    return nb == GPK_NB_OR_OPT ? GPK_SEARCH_MULTISTART : GPK_SEARCH_ITS;
}

/* 2-opt: n / 2 (at least 5) on the (i, j) pair; swap: 2n (search.c,
 * default_tenure, says why). */
static uint32_t tsp_default_tenure(gpk_neighbourhood nb, uint32_t n)
{
    const uint32_t t = nb == GPK_NB_TWO_OPT ? (n / 2 < 5 ? 5 : n / 2) : 2 * n;
    return t < 2 ? 2 : t;
}

const gpk__problem_ops gpk__tsp_ops = {
    .kind = GPK_PROBLEM_TSP,
    .name = "TSP",
    .command = "tsp",
    .n_min = 3, /* a tour; below 4 cities every tour has the same length, the search just stops */
    .binary = 0,
    .zero_solves = 0,
    .default_nb = GPK_NB_OR_OPT,
    .paper_nb = GPK_NB_TWO_OPT,
    .nbs = GPK__NB_BIT(GPK_NB_SWAP) | GPK__NB_BIT(GPK_NB_TWO_OPT) | GPK__NB_BIT(GPK_NB_OR_OPT),
    .nb_list = "swap, 2opt or or2opt",
    .auto_seconds = GPK_SEARCH_TSP_DEFAULT_SECONDS,
    .auto_algo = tsp_auto_algo,
    .describe = tsp_describe,
    .cost = tsp_cost,
    .default_tenure = tsp_default_tenure,
    .default_global_iters = gpk__paper_global_iters,
    .tenure_draw = NULL,
};
