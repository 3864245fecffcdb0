/* TSP local search at scale (neighbourhood "or2opt"): 2-opt and
 * Or-opt (segments of 1 to 3 cities) over the K nearest neighbours of each
 * city, with don't-look bits, on an array tour; an iterated local search
 * (ILS) with segment-swap ("double-bridge") kicks on top.
 *
 * Memory is O(n K) whatever n: the tour, its inverse, the best tour, the
 * neighbour lists with their distances, a queue. Nothing is n x n, so a
 * coordinate instance above GPK_TSP_MATRIX_MAX computes its distances on
 * the fly and still runs in a few megabytes per 100 000 cities.
 *
 * The tour is an array; a 2-opt move reverses the shorter of the two paths
 * it could reverse (the cycle is the same either way), so it costs at most
 * n / 2 swaps and far less on average with neighbour lists. An Or-opt move
 * is two or three such 2-opt moves. Each 2-opt move is given by its two
 * removed edges, (a, b) and (c, d) with b after a and d after c in the
 * tour's current reading direction; move2 works out that direction from
 * the array, so a reversal of the complement (which flips the direction)
 * does not disturb the moves that follow.
 *
 * The ILS keeps the best tour; a kick and the descent after it log the
 * positions they touch, so a rejected kick is undone (and an accepted one
 * committed) in time proportional to what changed, not to n. */
#include "search_run.h"

#include "gpk/gen.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* ---- neighbour lists ---- */

typedef struct {
    double d2;
    uint32_t c;
} cand;

/* Keeps the k best (smallest d2, then smallest city) in a sorted array. */
static void cand_push(cand *best, uint32_t *cnt, uint32_t k, double d2, uint32_t c)
{
    uint32_t m = *cnt;
    if (m == k && (d2 > best[m - 1].d2 || (d2 == best[m - 1].d2 && c > best[m - 1].c))) return;
    if (m < k) m++;
    uint32_t i = m - 1;
    while (i > 0 && (best[i - 1].d2 > d2 || (best[i - 1].d2 == d2 && best[i - 1].c > c))) {
        best[i] = best[i - 1];
        i--;
    }
    best[i].d2 = d2;
    best[i].c = c;
    *cnt = m;
}

/* Orders a list by the instance's distance (ties: the city), which for the
 * rounded Euclidean kinds can merge candidates the grid told apart. */
static void sort_by_dist(const gpk_tsp *t, uint32_t a, uint32_t *nb, int32_t *nd, uint32_t k)
{
    for (uint32_t i = 0; i < k; i++) nd[i] = gpk_tsp_dist(t, a, nb[i]);
    for (uint32_t i = 1; i < k; i++) {
        uint32_t c = nb[i];
        int32_t d = nd[i];
        uint32_t j = i;
        while (j > 0 && (nd[j - 1] > d || (nd[j - 1] == d && nb[j - 1] > c))) {
            nb[j] = nb[j - 1];
            nd[j] = nd[j - 1];
            j--;
        }
        nb[j] = c;
        nd[j] = d;
    }
}

/* Quadrant neighbours: the nearest QUAD cities in each of the four
 * quadrants around a city are always in its list (the rest are the
 * nearest overall). On clustered instances the k nearest all lie in the
 * city's own cluster, and no move could ever join two clusters well: p654
 * stayed 6% above optimal with nearest-only lists. */
#define QUAD 2u

/* The quadrant of the offset (dx, dy), half-open so that each offset has
 * one (a city on top of another counts in quadrant 0). */
static int quadrant(double dx, double dy)
{
    if (dx > 0 && dy >= 0) return 0;
    if (dx <= 0 && dy > 0) return 1;
    if (dx < 0 && dy <= 0) return 2;
    if (dx >= 0 && dy < 0) return 3;
    return 0;
}

/* What the neighbour-list builders read and write: the instance, the grid
 * (NULL for all pairs), k, and the lists nb and nd (k per city). */
typedef struct {
    const gpk_tsp *t;
    const struct city_grid *g;
    uint32_t k;
    uint32_t *nb;
    int32_t *nd;
} nb_job;

/* Fills the lists of the i-th city a builder visits; best: scratch for
 * the candidates. */
typedef void (*nb_one_fn)(const nb_job *j, uint32_t i, cand *best);

/* Runs one(j, i, scratch) for every city index i on the threads (from n =
 * `every` cities, in chunks of `chunk`), `scratch` candidates per thread,
 * looking for a stop once every `every` cities. On a stop the lists are
 * left unfinished and GPK_EAGAIN_STOP comes back. */
static gpk_status neighbours_each(const nb_job *j, nb_one_fn one, size_t scratch, int threads, uint32_t every,
                                  uint32_t chunk, const gpk__search_cfg *stop)
{
    volatile int halt = 0; /* the stop came: the lists are left unfinished */
    const uint32_t n = j->t->n;
    int ok = 1;
#pragma omp parallel num_threads(threads) if (threads > 1 && n >= every)
    {
        cand *best = malloc(scratch * sizeof *best);
        if (!best) {
#pragma omp atomic write
            ok = 0;
        }
#pragma omp for schedule(dynamic, chunk)
        for (int64_t i = 0; i < (int64_t)n; i++) {
            if (!best || halt) continue;
            if (stop && i % every == 0 && gpk__search_should_stop(stop)) halt = 1;
            one(j, (uint32_t)i, best);
        }
        free(best);
    }
    if (!ok) return GPK_ENOMEM;
    return halt ? GPK_EAGAIN_STOP : GPK_OK;
}

/* City a's k nearest over every other city: GEO and EXPLICIT distances are
 * not monotone in the coordinates, so every pair is looked at (O(n^2), the
 * rows in parallel). */
static void nearest_of_all(const nb_job *j, uint32_t a, cand *best)
{
    const uint32_t n = j->t->n, k = j->k;
    uint32_t cnt = 0;
    for (uint32_t c = 0; c < n; c++)
        if (c != a) cand_push(best, &cnt, k, (double)gpk_tsp_dist(j->t, a, c), c);
    for (uint32_t i = 0; i < k; i++) j->nb[(size_t)a * k + i] = best[i].c;
    sort_by_dist(j->t, a, j->nb + (size_t)a * k, j->nd + (size_t)a * k, k);
}

/* A uniform grid over the cities' bounding box. Invariants: cell c holds
 * the cities order[start[c] .. start[c + 1]), cellof[i] is city i's cell
 * (row-major, gx cells a row), and (px[q], py[q]) are the coordinates of
 * city order[q]. */
typedef struct city_grid {
    double cell; /* the side of a cell */
    uint32_t gx, gy;
    uint32_t *start; /* gx * gy + 1 offsets into order */
    uint32_t *order; /* the cities in cell order */
    uint32_t *cellof;
    double *px, *py;
    void *block; /* the arrays' one allocation */
} city_grid;

/* The cities' bounding box: x in [x0, x1], y in [y0, y1]. */
static void bounding_box(const gpk_tsp *t, double *x0, double *x1, double *y0, double *y1)
{
    double a0 = t->x[0], a1 = t->x[0], b0 = t->y[0], b1 = t->y[0];
    for (uint32_t i = 1; i < t->n; i++) {
        a0 = fmin(a0, t->x[i]);
        a1 = fmax(a1, t->x[i]);
        b0 = fmin(b0, t->y[i]);
        b1 = fmax(b1, t->y[i]);
    }
    *x0 = a0, *x1 = a1, *y0 = b0, *y1 = b1;
}

/* Sizes the grid at about 2 cities per cell over the bounding box, and
 * counting-sorts the cities into the cells. On GPK_ENOMEM nothing is left
 * allocated. */
static gpk_status city_grid_build(const gpk_tsp *t, city_grid *g)
{
    const uint32_t n = t->n;
    memset(g, 0, sizeof *g);
    double x0, x1, y0, y1;
    bounding_box(t, &x0, &x1, &y0, &y1);
    /* About 2 cities per cell over the bounding box. */
    const double w = fmax(x1 - x0, 1e-9), h = fmax(y1 - y0, 1e-9);
    double cell = sqrt(w * h * 2.0 / n);
    if (!(cell > 0)) cell = 1.0;
    uint32_t gx = (uint32_t)fmin(w / cell + 1, 65536), gy = (uint32_t)fmin(h / cell + 1, 65536);
    while ((uint64_t)gx * gy > 4ull * n + 16) { /* flat boxes: keep the cell count O(n) */
        cell *= 1.5;
        gx = (uint32_t)fmin(w / cell + 1, 65536);
        gy = (uint32_t)fmin(h / cell + 1, 65536);
    }
    g->cell = cell;
    g->gx = gx;
    g->gy = gy;
    const size_t cells = (size_t)gx * gy;
    gpk__part p[] = {GPK__PART(g->start, cells + 1), GPK__PART(g->order, n), GPK__PART(g->cellof, n),
                     GPK__PART(g->px, n), GPK__PART(g->py, n)};
    g->block = gpk__alloc_parts(p, sizeof p / sizeof *p, 1); /* start: zeroed counts */
    uint32_t *fill = malloc(cells * sizeof *fill);
    if (!g->block || !fill) {
        free(fill);
        free(g->block);
        return GPK_ENOMEM;
    }
    g->start = p[0].at, g->order = p[1].at, g->cellof = p[2].at, g->px = p[3].at, g->py = p[4].at;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t cx = (uint32_t)((t->x[i] - x0) / cell), cy = (uint32_t)((t->y[i] - y0) / cell);
        if (cx >= gx) cx = gx - 1;
        if (cy >= gy) cy = gy - 1;
        g->cellof[i] = cy * gx + cx;
        g->start[g->cellof[i] + 1]++;
    }
    for (size_t c = 0; c < cells; c++) g->start[c + 1] += g->start[c];
    memcpy(fill, g->start, cells * sizeof *fill);
    for (uint32_t i = 0; i < n; i++) g->order[fill[g->cellof[i]]++] = i;
    free(fill);
    /* The coordinates in cell order: a ring scan then reads memory in
     * sequence instead of one cache miss per city, which made the build
     * grow faster than n beyond a few hundred thousand cities. */
    for (uint32_t q = 0; q < n; q++) {
        g->px[q] = t->x[g->order[q]];
        g->py[q] = t->y[g->order[q]];
    }
    return GPK_OK;
}

/* City a's list: its quadrant picks first (when k leaves room for the
 * nearest others too), then the nearest others up to k, no city twice. */
static void merge_quadrant_picks(const cand *best, uint32_t cnt, const cand *quad, const uint32_t qcnt[4],
                                 uint32_t k, uint32_t *l)
{
    uint32_t m = 0;
    if (k >= 4 * QUAD + 2)
        for (int q = 0; q < 4; q++)
            for (uint32_t i = 0; i < qcnt[q]; i++) l[m++] = quad[q * QUAD + i].c;
    for (uint32_t i = 0; i < cnt && m < k; i++) {
        uint32_t j = 0;
        while (j < m && l[j] != best[i].c) j++;
        if (j == m) l[m++] = best[i].c;
    }
}

/* The k nearest and the quadrant neighbours of city order[ai] from the
 * grid, searched in growing square rings until the ring is farther than
 * the k-th candidate and the last of each quadrant's. */
static void nearest_from_grid(const nb_job *j, uint32_t ai, cand *best)
{
    const city_grid *g = j->g;
    const uint32_t k = j->k, gx = g->gx, gy = g->gy;
    const double cell = g->cell;
    const uint32_t *start = g->start, *order = g->order, *cellof = g->cellof;
    const double *px = g->px, *py = g->py;
    uint32_t *nb = j->nb;
    int32_t *nd = j->nd;
    const gpk_tsp *t = j->t;
    const uint32_t a = order[ai]; /* cities in cell order, as the coordinates (city_grid_build) */
    const double ax = px[ai], ay = py[ai];
    cand *quad = best + k; /* QUAD nearest in each quadrant */
    uint32_t qcnt[4] = {0, 0, 0, 0};
    const int64_t cx = cellof[a] % gx, cy = cellof[a] / gx;
    uint32_t cnt = 0;
    for (int64_t r = 0;; r++) {
        /* Every city outside the rings searched so far lies at least
         * r * cell - (offset in the cell) away: r - 1 whole cells.
         * A quadrant with no city at all keeps the search going to
         * the grid's end: that happens to the few cities on the
         * staircase of the instance's corners. */
        const double reach = (double)(r - 1) * cell, reach2 = reach > 0 ? reach * reach : 0.0;
        if (cnt == k && reach2 > best[k - 1].d2) {
            int q = 0;
            while (q < 4 && qcnt[q] == QUAD && reach2 > quad[q * QUAD + QUAD - 1].d2) q++;
            if (q == 4) break;
        }
        if (r > (int64_t)gx && r > (int64_t)gy) break;
        for (int64_t yy = cy - r; yy <= cy + r; yy++) {
            if (yy < 0 || yy >= (int64_t)gy) continue;
            const int edge = yy == cy - r || yy == cy + r;
            for (int64_t xx = cx - r; xx <= cx + r; xx += edge ? 1 : 2 * r) {
                if (xx >= 0 && xx < (int64_t)gx) {
                    const size_t c = (size_t)yy * gx + (size_t)xx;
                    for (uint32_t q = start[c]; q < start[c + 1]; q++) {
                        const uint32_t b = order[q];
                        if (b == a) continue;
                        const double dx = px[q] - ax, dy = py[q] - ay, d2 = dx * dx + dy * dy;
                        cand_push(best, &cnt, k, d2, b);
                        const int qd = quadrant(dx, dy);
                        cand_push(quad + qd * QUAD, &qcnt[qd], QUAD, d2, b);
                    }
                }
                if (r == 0) break;
            }
        }
    }
    uint32_t *l = nb + (size_t)a * k;
    merge_quadrant_picks(best, cnt, quad, qcnt, k, l);
    sort_by_dist(t, a, l, nd + (size_t)a * k, k);
}

/* EUC_2D, CEIL_2D and ATT distances grow with the Euclidean distance of the
 * coordinates, so the k nearest (and the quadrant neighbours) come from a
 * uniform grid of about two cities per cell, searched in growing square
 * rings until the ring is farther than the k-th candidate: O(n k) on
 * spread-out instances, plus a counting sort of the cities into cells. GEO
 * and EXPLICIT distances are not monotone in the coordinates: every pair is
 * looked at (O(n^2), the rows in parallel); such instances carry their
 * matrix below GPK_TSP_MATRIX_MAX anyway. */
gpk_status gpk__tsp_neighbours(const gpk_tsp *t, uint32_t k, int threads, const gpk__search_cfg *stop,
                               uint32_t *nb, int32_t *nd)
{
    if (k == 0 || k >= t->n) return GPK_EINVAL;
    const int grid =
        t->x && (t->weight == GPK_TSP_EUC_2D || t->weight == GPK_TSP_CEIL_2D || t->weight == GPK_TSP_ATT);
    nb_job j = {t, NULL, k, nb, nd};
    if (!grid) return neighbours_each(&j, nearest_of_all, k, threads, 256, 16, stop);
    city_grid g;
    const gpk_status s = city_grid_build(t, &g);
    if (s != GPK_OK) return s;
    j.g = &g;
    const gpk_status r =
        neighbours_each(&j, nearest_from_grid, (size_t)k + 4 * QUAD, threads, 4096, 256, stop);
    free(g.block);
    return r;
}

/* ---- the array tour ---- */

static inline uint32_t nxt(const gpk__tour *T, uint32_t c)
{
    const uint32_t p = T->pos[c] + 1;
    return T->t[p == T->n ? 0 : p];
}

static inline uint32_t prv(const gpk__tour *T, uint32_t c)
{
    const uint32_t p = T->pos[c];
    return T->t[p == 0 ? T->n - 1 : p - 1];
}

static inline void touch(gpk__tour *T, uint32_t p)
{
    if (!T->log) return;
    if (T->nlog < T->cap) T->log[T->nlog++] = p;
    else T->overflow = 1;
}

/* Reverses the tour between positions i and j (inclusive, going forward,
 * wrapping), or the complementary path when that one is shorter: the
 * cycle is the same either way, only the reading direction differs. */
static void reverse_path(gpk__tour *T, uint32_t i, uint32_t j)
{
    const uint32_t n = T->n;
    uint32_t len = (j >= i ? j - i : j + n - i) + 1;
    if (2 * (uint64_t)len > n) {
        const uint32_t ni = j + 1 == n ? 0 : j + 1, nj = i == 0 ? n - 1 : i - 1;
        i = ni;
        j = nj;
        len = n - len;
    }
    uint32_t *t = T->t, *pos = T->pos;
    T->work += len / 2;
    for (uint32_t s = 0; s < len / 2; s++) {
        const uint32_t ci = t[i], cj = t[j];
        t[i] = cj;
        t[j] = ci;
        pos[cj] = i;
        pos[ci] = j;
        touch(T, i);
        touch(T, j);
        i = i + 1 == n ? 0 : i + 1;
        j = j == 0 ? n - 1 : j - 1;
    }
}

void gpk__tour_move2(gpk__tour *T, uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    (void)d;
    if (nxt(T, a) == b) reverse_path(T, T->pos[b], T->pos[c]);
    else reverse_path(T, T->pos[c], T->pos[b]);
}

void gpk__tour_or_move(gpk__tour *T, uint32_t s1, uint32_t s2, uint32_t x, uint32_t y, int rev)
{
    const uint32_t p = prv(T, s1), q = nxt(T, s2);
    gpk__tour_move2(T, p, s1, x, y);            /* p x .. q s2 .. s1 y */
    gpk__tour_move2(T, p, x, q, s2);            /* p q .. x s2 .. s1 y */
    if (!rev) gpk__tour_move2(T, x, s2, s1, y); /* p q .. x s1 .. s2 y */
}

int64_t gpk__tour_or_delta(const gpk_tsp *t, const gpk__tour *T, uint32_t s1, uint32_t s2, uint32_t x,
                           uint32_t y, int rev)
{
    const uint32_t p = prv(T, s1), q = nxt(T, s2);
    const int64_t removed = (int64_t)gpk_tsp_dist(t, p, s1) + gpk_tsp_dist(t, s2, q) + gpk_tsp_dist(t, x, y);
    const int64_t added = (int64_t)gpk_tsp_dist(t, p, q) +
        (rev ? (int64_t)gpk_tsp_dist(t, x, s2) + gpk_tsp_dist(t, s1, y)
             : (int64_t)gpk_tsp_dist(t, x, s1) + gpk_tsp_dist(t, s2, y));
    return added - removed;
}

uint32_t gpk__tour_next(const gpk__tour *T, uint32_t c) { return nxt(T, c); }
uint32_t gpk__tour_prev(const gpk__tour *T, uint32_t c) { return prv(T, c); }

/* ---- the descent ---- */

#define MAX_REVERSAL GPK__TSP_LS_MAX_REVERSAL

/* The cities reversed (on the shorter side) by a move whose path runs
 * from city `from` to city `to`. */
static inline uint32_t span(const gpk__tour *T, uint32_t from, uint32_t to)
{
    const uint32_t n = T->n, len = (T->pos[to] + n - T->pos[from]) % n + 1;
    return len < n - len ? len : n - len;
}

typedef struct {
    const gpk__search_cfg *cfg;
    const gpk_tsp *tsp;
    uint32_t n, k;
    const uint32_t *nb; /* n x k, nearest first */
    const int32_t *nd;  /* their distances */
    gpk__tour T;
    uint32_t *best;  /* the best tour (ILS) */
    uint32_t *queue; /* FIFO of cities whose don't-look bit is off */
    uint8_t *inq;
    void *block; /* the arrays' one allocation (ls_init) */
    uint32_t qhead, qlen;
    int64_t cost;
    uint64_t moves, evaluated, kicks;
    gpk_rng rng;
    int stopped;
    int batch;             /* the first descent batched: 1 on the GPU, 2 on the host (tests) */
    gpk__tsp_ls_cuda *gpu; /* batch 1 */
    const gpk__search_backend *gpu_scans;
    uint64_t gpu_evaluated;
    gpk_status gpu_status; /* a failed GPU call: the descent went on on the CPU */
    gpk__tally *tally;     /* multistart: every run's counts for the reports (or NULL) */
    uint32_t run;
} ls;

static inline int32_t D(const ls *L, uint32_t a, uint32_t b) { return gpk_tsp_dist(L->tsp, a, b); }

static void push(ls *L, uint32_t c)
{
    if (L->inq[c]) return;
    L->inq[c] = 1;
    uint32_t at = L->qhead + L->qlen;
    if (at >= L->n) at -= L->n;
    L->queue[at] = c;
    L->qlen++;
}

/* Queues the cities whose tour neighbours a move changed. */
static void push_all(ls *L, const uint32_t *cities, unsigned count)
{
    for (unsigned i = 0; i < count; i++) push(L, cities[i]);
}

static uint32_t pop(ls *L)
{
    const uint32_t c = L->queue[L->qhead];
    L->qhead = L->qhead + 1 == L->n ? 0 : L->qhead + 1;
    L->qlen--;
    L->inq[c] = 0;
    return c;
}

/* The first improving 2-opt move from city a over its neighbour list, in
 * either direction along the tour; applied. 1 when one was found. */
static int try_two_opt(ls *L, uint32_t a)
{
    const uint32_t *nb = L->nb + (size_t)a * L->k;
    const int32_t *nd = L->nd + (size_t)a * L->k;
    for (int dir = 0; dir < 2; dir++) {
        const uint32_t b = dir ? prv(&L->T, a) : nxt(&L->T, a);
        const int32_t dab = D(L, a, b);
        for (uint32_t i = 0; i < L->k; i++) {
            const uint32_t c = nb[i];
            const int32_t dac = nd[i];
            if (dac >= dab) break; /* no gain left: the new edge (a, c) is already as long */
            const uint32_t d = dir ? prv(&L->T, c) : nxt(&L->T, c);
            if (c == b || d == a) continue;
            L->evaluated++;
            const int64_t delta = (int64_t)dac + D(L, b, d) - dab - D(L, c, d);
            if (delta < 0 && (L->n <= 2 * MAX_REVERSAL || span(&L->T, b, c) <= MAX_REVERSAL)) {
                if (dir) gpk__tour_move2(&L->T, b, a, d, c);
                else gpk__tour_move2(&L->T, a, b, c, d);
                L->cost += delta;
                push_all(L, (const uint32_t[]){a, b, c, d}, 4);
                return 1;
            }
        }
    }
    return 0;
}

/* The first improving Or-opt move of a segment of 1 to 3 cities that
 * starts or ends at a, to between a neighbour c of a and one of c's tour
 * neighbours, either way round; applied. */
static int try_or_opt(ls *L, uint32_t a)
{
    const uint32_t *nb = L->nb + (size_t)a * L->k;
    const int32_t *nd = L->nd + (size_t)a * L->k;
    gpk__tour *T = &L->T;
    for (uint32_t len = 1; len <= 3; len++) {
        if (L->n < len + 3) break;
        for (int end = 0; end < 2; end++) {
            if (len == 1 && end) break; /* a one-city segment starts and ends at a */
            uint32_t s1 = a, s2 = a, mid = a;
            for (uint32_t m = 1; m < len; m++) {
                if (end) s1 = prv(T, s1);
                else s2 = nxt(T, s2);
                if (m == 1) mid = end ? s1 : s2;
            }
            const uint32_t p = prv(T, s1), q = nxt(T, s2);
            const int64_t g0 = (int64_t)D(L, p, s1) + D(L, s2, q) - D(L, p, q);
            if (g0 <= 0) continue;
            for (uint32_t i = 0; i < L->k; i++) {
                const uint32_t c = nb[i];
                if (nd[i] >= g0) break; /* the gain criterion: the new edge at a must cost less */
                if (c == s1 || c == s2 || c == mid) continue;
                for (int side = 0; side < 2; side++) {
                    const uint32_t x = side ? prv(T, c) : c, y = side ? c : nxt(T, c);
                    if (x == s1 || x == s2 || x == mid || y == s1 || y == s2 || y == mid || y == p) continue;
                    const int64_t dxy = D(L, x, y);
                    for (int rev = 0; rev < 2; rev++) {
                        L->evaluated++;
                        const int64_t add =
                            rev ? (int64_t)D(L, x, s2) + D(L, s1, y) : (int64_t)D(L, x, s1) + D(L, s2, y);
                        const int64_t delta = add - dxy - g0;
                        if (delta < 0 && (L->n <= 2 * MAX_REVERSAL || span(T, s1, x) <= MAX_REVERSAL)) {
                            gpk__tour_or_move(T, s1, s2, x, y, rev);
                            L->cost += delta;
                            push_all(L, (const uint32_t[]){p, q, s1, s2, x, y}, 6);
                            return 1;
                        }
                    }
                }
            }
        }
    }
    return 0;
}

/* ---- the batched descent (the GPU's shape) ----
 * Every queued city's best move is evaluated at once (on the GPU, or with
 * gpk__tsp_ls_best_move on the host for the tests), on the same tour; the
 * host then applies the improving ones, best first. The moves were found
 * on the tour before any of them was applied, so each is checked again on
 * the current tour before it is made: its removed edges must still be
 * there with the orientation it needs, and its delta is recomputed from
 * the cities. Moves whose edges lie in disjoint parts of the tour pass the
 * check unchanged (their deltas add up); the others are dropped when their
 * edges are gone or no longer improve, and their city is queued again.
 * Every move made is exact, so the tour stays a permutation and the cost
 * stays the tour's length. */

#define LS_FN static inline
typedef const gpk_tsp *ls_dist_ctx;
static inline int32_t ls_dist(ls_dist_ctx t, uint32_t a, uint32_t b) { return gpk_tsp_dist(t, a, b); }
#include "tsp_ls_move_inline.h"

gpk__ls_move gpk__tsp_ls_best_move(const gpk_tsp *tsp, const uint32_t *nbs, const int32_t *nds, uint32_t k,
                                   const uint32_t *t, const uint32_t *pos, uint32_t a)
{
    return ls_best_move(tsp, tsp->n, nbs, nds, k, t, pos, a);
}

/* A move spelled out in cities on the tour it was found on: 2-opt removes
 * (u[0], u[1]) and (u[2], u[3]), u[1] after u[0] and u[3] after u[2] in one
 * reading direction; Or-opt moves the path u[0] .. u[1] (len cities,
 * forward) between u[2] and u[3] = the city after u[2]. */
typedef struct {
    int64_t d;
    uint32_t a, u[4];
    uint8_t or_opt, len, rev;
} spelled;

static void spell(const ls *L, uint32_t a, const gpk__ls_move *m, spelled *s)
{
    const gpk__tour *T = &L->T;
    const uint32_t k = L->k;
    s->d = m->d;
    s->a = a;
    if (m->code < 2 * k) {
        const uint32_t dir = m->code / k, c = L->nb[(size_t)a * k + m->code % k];
        s->or_opt = 0;
        s->u[0] = a;
        s->u[1] = dir ? prv(T, a) : nxt(T, a);
        s->u[2] = c;
        s->u[3] = dir ? prv(T, c) : nxt(T, c);
        return;
    }
    uint32_t r = m->code - 2 * k;
    const uint32_t rev = r & 1, side = (r >> 1) & 1;
    r >>= 2;
    const uint32_t i = r % k, seg = r / k;
    const uint32_t len = seg == 0 ? 1 : 2 + (seg - 1) / 2, end = seg == 0 ? 0 : (seg - 1) % 2;
    uint32_t s1 = a, s2 = a;
    for (uint32_t j = 1; j < len; j++) {
        if (end) s1 = prv(T, s1);
        else s2 = nxt(T, s2);
    }
    const uint32_t c = L->nb[(size_t)a * k + i];
    s->or_opt = 1;
    s->len = (uint8_t)len;
    s->rev = (uint8_t)rev;
    s->u[0] = s1;
    s->u[1] = s2;
    s->u[2] = side ? prv(T, c) : c;
    s->u[3] = side ? c : nxt(T, c);
}

static int spelled_cmp(const void *x, const void *y)
{
    const spelled *p = x, *q = y;
    return p->d < q->d ? -1 : p->d > q->d ? 1 : (p->a > q->a) - (p->a < q->a);
}

/* Makes s on the current tour when it still applies and improves: 1 if made. */
static int apply_spelled(ls *L, const spelled *s)
{
    gpk__tour *T = &L->T;
    const int bound = L->n > 2 * MAX_REVERSAL;
    if (!s->or_opt) {
        const uint32_t a = s->u[0], b = s->u[1], c = s->u[2], d = s->u[3];
        if (!((nxt(T, a) == b && nxt(T, c) == d) || (prv(T, a) == b && prv(T, c) == d))) return 0;
        const int64_t delta = (int64_t)D(L, a, c) + D(L, b, d) - D(L, a, b) - D(L, c, d);
        if (delta >= 0 || (bound && span(T, nxt(T, a) == b ? b : c, nxt(T, a) == b ? c : b) > MAX_REVERSAL))
            return 0;
        gpk__tour_move2(T, a, b, c, d);
        L->cost += delta;
        push_all(L, (const uint32_t[]){a, b, c, d}, 4);
        return 1;
    }
    /* The path and the edge in the reading direction they had; after other
     * moves the tour may read them backwards: the same move, mirrored. */
    uint32_t s1 = s->u[0], s2 = s->u[1], x = s->u[2], y = s->u[3], seg[3], w = s1;
    int fwd = 1;
    for (int pass = 0; pass < 2; pass++) {
        fwd = pass == 0;
        w = s1;
        seg[0] = s1;
        for (uint32_t j = 1; j < s->len; j++) seg[j] = w = fwd ? nxt(T, w) : prv(T, w);
        if (w == s2 && (fwd ? nxt(T, x) : prv(T, x)) == y) break;
        if (pass == 1) return 0;
    }
    if (!fwd) {
        const uint32_t t1 = s1, t2 = x;
        s1 = s2;
        s2 = t1;
        x = y;
        y = t2;
    }
    const uint32_t p = prv(T, s1);
    for (uint32_t j = 0; j < s->len; j++)
        if (x == seg[j] || y == seg[j]) return 0;
    if (y == p) return 0;
    const int64_t delta = gpk__tour_or_delta(L->tsp, T, s1, s2, x, y, s->rev);
    if (delta >= 0 || (bound && span(T, s1, x) > MAX_REVERSAL)) return 0;
    const uint32_t q = nxt(T, s2);
    gpk__tour_or_move(T, s1, s2, x, y, s->rev);
    L->cost += delta;
    push_all(L, (const uint32_t[]){p, q, s1, s2, x, y}, 6);
    return 1;
}

/* Below this many queued cities a batch costs more in latency than the
 * CPU's own descent. */
#define BATCH_MIN 1024u

static int descend(ls *L, uint64_t move_limit);

/* One batch: the best move of each of the count cities, evaluated on the
 * current tour, then made best first where they still apply. The number
 * of improving moves found, or -1 when the GPU failed (L->gpu_status). */
static int64_t batch_round(ls *L, uint32_t *cities, uint32_t count, gpk__ls_move *moves, spelled *sp)
{
    if (L->batch == 1) {
        const gpk_status st = L->gpu_scans->tsp_ls_eval(L->gpu, L->T.t, cities, count, moves);
        if (st != GPK_OK) {
            L->gpu_status = st;
            return -1;
        }
    } else {
        /* On the host a batch of a million cities takes a second: the
         * clock is read as it goes. */
        volatile int halt = 0;
#pragma omp parallel for num_threads(L->cfg->threads) schedule(static, 256) if (L->cfg->threads > 1)
        for (int64_t i = 0; i < (int64_t)count; i++) {
            if (halt) continue;
            if ((i & 4095) == 4095 && gpk__search_should_stop(L->cfg)) halt = 1;
            moves[i] = gpk__tsp_ls_best_move(L->tsp, L->nb, L->nd, L->k, L->T.t, L->T.pos, cities[i]);
        }
        if (halt) {
            L->stopped = 1;
            return 0;
        }
    }
    uint32_t m = 0;
    for (uint32_t i = 0; i < count; i++) {
        if (L->batch == 1) L->gpu_evaluated += moves[i].evaluated;
        L->evaluated += moves[i].evaluated;
        if (moves[i].d < 0) spell(L, cities[i], &moves[i], &sp[m++]);
    }
    qsort(sp, m, sizeof *sp, spelled_cmp);
    for (uint32_t i = 0; i < m; i++) {
        if (apply_spelled(L, &sp[i])) L->moves++;
        else push(L, sp[i].a);
        if ((i & 255) == 255 && gpk__search_should_stop(L->cfg)) {
            L->stopped = 1;
            break;
        }
    }
    return m;
}

/* Batches of the queued cities while the queue is long, the CPU descent
 * when it is short; then a batch over every city (a sweep), since a city
 * whose neighbours' tour edges changed is not queued again (the don't-look
 * bits' blind spot; here more so than in the sequential descent, as a batch
 * changes many edges at once). The descent ends when a sweep finds no
 * improving move: the tour is then a local optimum of the whole
 * neighbourhood, which the sequential descent does not promise. On a GPU
 * failure the CPU descent goes on from the same tour. */
static void batch_descend(ls *L)
{
    const uint32_t n = L->n;
    uint32_t *cities = malloc((size_t)n * sizeof *cities);
    gpk__ls_move *moves = malloc((size_t)n * sizeof *moves);
    spelled *sp = malloc((size_t)n * sizeof *sp);
    while (cities && moves && sp && !L->stopped) {
        if (gpk__search_should_stop(L->cfg)) {
            L->stopped = 1;
            break;
        }
        uint32_t count;
        int sweep = 0;
        if (L->qlen >= BATCH_MIN) {
            count = L->qlen;
            for (uint32_t i = 0; i < count; i++) cities[i] = pop(L);
        } else {
            descend(L, 0);
            if (L->stopped) break;
            count = n;
            for (uint32_t i = 0; i < n; i++) cities[i] = L->T.t[i];
            sweep = 1;
        }
        const int64_t found = batch_round(L, cities, count, moves, sp);
        if (found < 0) {
            for (uint32_t i = 0; i < count; i++) push(L, cities[i]);
            break;
        }
        if (sweep && found == 0) break;
    }
    free(cities);
    free(moves);
    free(sp);
}

/* Runs until no city has an improving move (1), the move limit (0) or a
 * stop (0, L->stopped). */
static int descend(ls *L, uint64_t move_limit)
{
    if (L->stopped) return 0;
    const int timed = L->cfg->deadline > 0 || L->cfg->cancel;
    uint32_t since = 0;
    uint64_t work = L->T.work;
    while (L->qlen) {
        /* Every 256 cities, or sooner when reversals were long (on a large
         * instance one 2-opt move may swap half a million cities). */
        if (timed && (++since == 256 || L->T.work - work > (1u << 20))) {
            since = 0;
            work = L->T.work;
            if (gpk__search_should_stop(L->cfg)) {
                L->stopped = 1;
                return 0;
            }
        }
        if (move_limit && L->moves >= move_limit) return 0;
        const uint32_t a = pop(L);
        if (try_two_opt(L, a) || try_or_opt(L, a)) L->moves++;
    }
    return 1;
}

/* Uniform in [0, bound), bound >= 1. */
static uint64_t below(gpk_rng *r, uint64_t bound)
{
    const uint64_t lim = UINT64_MAX - UINT64_MAX % bound;
    uint64_t x;
    do x = gpk_rng_next(r);
    while (x >= lim);
    return x % bound;
}

/* The kick: two adjacent segments of 1 to 50 cities at a random place swap
 * places (A B C D -> A C B D, the double bridge with its fourth part the
 * rest of the tour). Kept local so that the descent after it repairs a
 * small region, which is what makes thousands of kicks a second possible
 * on large instances. */
static void kick(ls *L)
{
    const uint32_t n = L->n;
    uint32_t lmax = (n - 2) / 3;
    if (lmax > 50) lmax = 50;
    if (lmax < 1) lmax = 1;
    const uint32_t l1 = 1 + (uint32_t)below(&L->rng, lmax), l2 = 1 + (uint32_t)below(&L->rng, lmax);
    const uint32_t i = (uint32_t)below(&L->rng, n); /* B starts after position i */
    uint32_t *t = L->T.t, *pos = L->T.pos;
    /* B = t[i+1 .. i+l1], C = the next l2: rotate the window left by l1. */
    uint32_t tmp[100];
    for (uint32_t m = 0; m < l1 + l2; m++) tmp[m] = t[(i + 1 + m) % n];
    const uint32_t a = t[i], d = t[(i + 1 + l1 + l2) % n];
    const int64_t before = (int64_t)D(L, a, tmp[0]) + D(L, tmp[l1 - 1], tmp[l1]) + D(L, tmp[l1 + l2 - 1], d);
    const int64_t after = (int64_t)D(L, a, tmp[l1]) + D(L, tmp[l1 + l2 - 1], tmp[0]) + D(L, tmp[l1 - 1], d);
    for (uint32_t m = 0; m < l1 + l2; m++) {
        const uint32_t p = (i + 1 + m) % n, c = tmp[(m + l1) % (l1 + l2)];
        t[p] = c;
        pos[c] = p;
        touch(&L->T, p);
    }
    L->cost += after - before;
    push(L, a);
    push(L, d);
    push(L, tmp[0]);
    push(L, tmp[l1 - 1]);
    push(L, tmp[l1]);
    push(L, tmp[l1 + l2 - 1]);
}

/* Position of (x, y) on a Hilbert curve over a 2^16 x 2^16 grid. */
static uint64_t hilbert(uint32_t x, uint32_t y)
{
    uint64_t d = 0;
    for (uint32_t s = 1u << 15; s > 0; s >>= 1) {
        const uint32_t rx = (x & s) > 0, ry = (y & s) > 0;
        d += (uint64_t)s * s * ((3 * rx) ^ ry);
        if (ry == 0) { /* rotate the quadrant */
            if (rx == 1) {
                x = s - 1 - (x & (s - 1));
                y = s - 1 - (y & (s - 1));
            }
            const uint32_t t = x;
            x = y;
            y = t;
        }
        x &= s - 1;
        y &= s - 1;
    }
    return d;
}

typedef struct {
    uint64_t key;
    uint32_t c;
} keyed;

static int keyed_cmp(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key ? 1 : (x->c > y->c) - (x->c < y->c);
}

/* The start tour without a given one: the cities in Hilbert-curve order
 * where the kind has planar coordinates (about 25% above optimal on uniform
 * instances, O(n log n)), so that the first descent makes local moves; a
 * random tour from a random start is a long way from any good tour and
 * its 2-opt moves reverse half the tour, O(n^2) in all at 100 000 cities.
 * GEO and EXPLICIT: a random tour (their instances are small). 0, or -1
 * when out of memory. */
static int planar(const gpk_tsp *t) { return t->x && t->weight != GPK_TSP_GEO; }

static int start_tour(const gpk_tsp *t, uint32_t *tour, gpk_rng *rng)
{
    const uint32_t n = t->n;
    if (planar(t)) {
        keyed *k = malloc((size_t)n * sizeof *k);
        if (!k) return -1;
        double x0, x1, y0, y1;
        bounding_box(t, &x0, &x1, &y0, &y1);
        const double span = fmax(fmax(x1 - x0, y1 - y0), 1e-30), sc = 65535.0 / span;
        for (uint32_t i = 0; i < n; i++) {
            k[i].key = hilbert((uint32_t)((t->x[i] - x0) * sc), (uint32_t)((t->y[i] - y0) * sc));
            k[i].c = i;
        }
        qsort(k, n, sizeof *k, keyed_cmp);
        for (uint32_t i = 0; i < n; i++) tour[i] = k[i].c;
        free(k);
        return 0;
    }
    for (uint32_t i = 0; i < n; i++) tour[i] = i;
    for (uint32_t i = n - 1; i > 0; i--) {
        const uint32_t r = (uint32_t)below(rng, (uint64_t)i + 1), x = tour[i];
        tour[i] = tour[r];
        tour[r] = x;
    }
    return 0;
}

static int ls_init(ls *L, const gpk__search_cfg *c, const uint32_t *nb, const int32_t *nd, uint32_t k,
                   uint64_t seed, const uint32_t *start, int ils)
{
    memset(L, 0, sizeof *L);
    const uint32_t n = c->n;
    L->cfg = c;
    L->tsp = c->tsp;
    L->n = n;
    L->k = k;
    L->nb = nb;
    L->nd = nd;
    L->T.n = n;
    /* The best tour and the log of written positions only for an ILS (a
     * NULL log: touch records nothing). */
    L->T.cap = ils ? (n < 4096 ? 4096 : n) : 0;
    gpk__part p[] = {GPK__PART(L->T.t, n), GPK__PART(L->T.pos, n),          GPK__PART(L->queue, n),
                     GPK__PART(L->inq, n), GPK__PART(L->best, ils ? n : 0), GPK__PART(L->T.log, L->T.cap)};
    L->block = gpk__alloc_parts(p, sizeof p / sizeof *p, 1); /* inq: zeroed flags */
    if (!L->block) return -1;
    L->T.t = p[0].at, L->T.pos = p[1].at, L->queue = p[2].at, L->inq = p[3].at, L->best = p[4].at;
    L->T.log = p[5].at;
    gpk_rng_seed(&L->rng, seed);
    if (start) memcpy(L->T.t, start, (size_t)n * sizeof *L->T.t);
    else if (start_tour(c->tsp, L->T.t, &L->rng) != 0) return -1;
    for (uint32_t i = 0; i < n; i++) L->T.pos[L->T.t[i]] = i;
    L->cost = gpk_tsp_tour_length(c->tsp, L->T.t);
    for (uint32_t i = 0; i < n; i++) push(L, L->T.t[i]);
    return 0;
}

static void report(ls *L, int64_t best, double t0, int me)
{
    const gpk__search_cfg *c = L->cfg;
    if (!c->progress) return;
    const uint64_t it = L->kicks ? L->kicks : L->moves;
    gpk__tally_put(L->tally, L->run, it, L->evaluated, best);
    if (!me || it % c->progress_every) return;
    gpk_search_progress p = {it, L->cost, best, L->evaluated, (omp_get_wtime() - t0) * 1e3};
    gpk__tally_sum(L->tally, &p);
    c->progress(&p, c->user);
}

/* The ILS from the loaded tour: descend, then kick and descend again,
 * keeping the new tour when it is no longer than the best (ties accepted:
 * plateaus are crossed), else going back to the best. */
static void ils_run(ls *L, uint64_t kicks, double t0, int me)
{
    gpk__tour *T = &L->T;
    T->nlog = 0;
    T->overflow = 0;
    if (L->batch) batch_descend(L);
    descend(L, 0);
    T->nlog = 0;
    T->overflow = 0;
    memcpy(L->best, T->t, (size_t)L->n * sizeof *L->best);
    int64_t best = L->cost;
    while (!L->stopped && (kicks == 0 || L->kicks < kicks)) {
        if (gpk__search_should_stop(L->cfg)) {
            L->stopped = 1;
            break;
        }
        T->nlog = 0;
        T->overflow = 0;
        kick(L);
        descend(L, 0);
        L->kicks++;
        /* A descent cut short by a stop is still a valid tour: it is judged
         * like any other. */
        if (L->cost <= best) {
            if (T->overflow) memcpy(L->best, T->t, (size_t)L->n * sizeof *L->best);
            else
                for (size_t m = 0; m < T->nlog; m++) L->best[T->log[m]] = T->t[T->log[m]];
            best = L->cost;
        } else {
            if (T->overflow) {
                memcpy(T->t, L->best, (size_t)L->n * sizeof *T->t);
                for (uint32_t i = 0; i < L->n; i++) T->pos[T->t[i]] = i;
            } else {
                for (size_t m = 0; m < T->nlog; m++) {
                    const uint32_t p = T->log[m];
                    T->t[p] = L->best[p];
                    T->pos[T->t[p]] = p;
                }
            }
            L->cost = best;
            while (L->qlen) pop(L); /* a stop may leave cities queued */
        }
        report(L, best, t0, me);
    }
    L->cost = best;
}

/* One search (hill climbing: a descent; else an ILS) of run r, written to
 * sol; *best its length. 0, or -1 when out of memory. */
typedef struct {
    int batch; /* the first descent batched: 1 on the GPU (gpu), 2 on the host */
    gpk__tsp_ls_cuda *gpu;
    const gpk__search_backend *gpu_scans; /* gpu's entry points */
    uint64_t gpu_evaluated;
    gpk_status gpu_status;
} batching;

static int one_run(const gpk__search_cfg *c, const uint32_t *nb, const int32_t *nd, uint32_t k, uint64_t seed,
                   const uint32_t *start, double t0, int me, uint32_t *sol, int64_t *best, uint64_t *moves,
                   uint64_t *evaluated, int *stopped, int *local_opt, batching *bt, gpk__tally *tally,
                   uint32_t run)
{
    const int hc = c->algo == GPK_SEARCH_HC_BEST || c->algo == GPK_SEARCH_HC_FIRST;
    ls L;
    if (ls_init(&L, c, nb, nd, k, seed, start, !hc) != 0) {
        free(L.block);
        return -1;
    }
    L.stopped = *stopped; /* set: the lists are unfinished, no move may use them */
    L.tally = tally;
    L.run = run;
    if (bt) {
        L.batch = bt->batch;
        L.gpu = bt->gpu;
        L.gpu_scans = bt->gpu_scans;
    }
    if (hc && L.batch && c->iters == 0) batch_descend(&L);
    if (hc) {
        *local_opt = descend(&L, c->iters);
        *moves = L.moves;
        memcpy(sol, L.T.t, (size_t)c->n * sizeof *sol);
    } else {
        ils_run(&L, c->kicks, t0, me);
        *moves = L.kicks;
        memcpy(sol, L.best, (size_t)c->n * sizeof *sol);
    }
    *best = L.cost;
    *evaluated = L.evaluated;
    *stopped = L.stopped;
    if (bt) {
        bt->gpu_evaluated = L.gpu_evaluated;
        bt->gpu_status = L.gpu_status;
    }
    free(L.block);
    return 0;
}

/* GPK_TSP_LS_BATCH: "gpu" (from any size on a CUDA context), "host", "off";
 * unset: the GPU on a CUDA context from GPK__TSP_LS_GPU_MIN cities. When the
 * GPU session cannot open (its message stays on the context) the CPU runs. */
static void open_batching(gpk_ctx *ctx, const gpk__search_cfg *c, const uint32_t *nb, const int32_t *nd,
                          uint32_t k, batching *bt)
{
    const char *env = getenv("GPK_TSP_LS_BATCH");
    const int forced_gpu = env && !strcmp(env, "gpu");
    if (env && !strcmp(env, "host")) {
        bt->batch = 2;
        return;
    }
    if (env && !strcmp(env, "off")) return;
    bt->gpu_scans = gpk__search_backend_of(ctx->backend);
    if (bt->gpu_scans && (forced_gpu || c->n >= GPK__TSP_LS_GPU_MIN) &&
        bt->gpu_scans->tsp_ls_open(ctx, c->tsp, nb, nd, k, &bt->gpu) == GPK_OK)
        bt->batch = 1;
}

gpk_status gpk__tsp_ls(gpk_ctx *ctx, const gpk__search_cfg *c, gpk_search_result *r)
{
    const double t0 = omp_get_wtime();
    const uint32_t n = c->n;
    const uint32_t k = n - 1 < GPK__TSP_LS_K ? n - 1 : GPK__TSP_LS_K;
    /* The Hilbert-curve start, sorted once for every run (a second per
     * million cities on a loaded machine). */
    uint32_t *curve = NULL;
    if (planar(c->tsp) && (!c->start || c->algo == GPK_SEARCH_MULTISTART)) {
        curve = malloc((size_t)n * sizeof *curve);
        if (!curve || start_tour(c->tsp, curve, NULL) != 0) {
            free(curve);
            return gpk__fail(ctx, GPK_ENOMEM, "gpk_search_run: out of memory for the start tour (n = %u)", n);
        }
    }
    uint32_t *nb = malloc((size_t)n * k * sizeof *nb);
    int32_t *nd = malloc((size_t)n * k * sizeof *nd);
    const gpk_status ns = nb && nd ? gpk__tsp_neighbours(c->tsp, k, c->threads, c, nb, nd) : GPK_ENOMEM;
    if (ns != GPK_OK && ns != GPK_EAGAIN_STOP) {
        free(curve);
        free(nb);
        free(nd);
        return gpk__fail(ctx, GPK_ENOMEM, "gpk_search_run: out of memory for the neighbour lists (n = %u)",
                         n);
    }
    /* Stopped while building the lists (a short limit on millions of
     * cities): the start tour is the result, no move is made. */
    const int stopped_early = ns == GPK_EAGAIN_STOP;
    /* Multistart: independent runs on the threads, run s seeded from the
     * seed and s (run 0 from the start tour), the best kept (ties: the
     * lowest run), so the result depends on `starts`, not on the threads. */
    const uint32_t runs = c->algo == GPK_SEARCH_MULTISTART ? c->starts : 1;
    uint32_t *sols = malloc((size_t)runs * n * sizeof *sols);
    int64_t *bests = malloc(runs * sizeof *bests);
    uint64_t *moves = calloc(runs, sizeof *moves), *evals = calloc(runs, sizeof *evals);
    int *stops = calloc(runs, sizeof *stops), *lopt = calloc(runs, sizeof *lopt),
        *bad = calloc(runs, sizeof *bad);
    gpk_status st = GPK_OK;
    if (!sols || !bests || !moves || !evals || !stops || !lopt || !bad) {
        st = gpk__fail(ctx, GPK_ENOMEM, "gpk_search_run: out of memory for %u runs (n = %u)", runs, n);
        goto done;
    }
    /* One run (hc, tabu, its): its first descent, from a tour far from a
     * local optimum, batched on the GPU of a CUDA context for large n. */
    batching bt = {.batch = 0, .gpu = NULL, .gpu_scans = NULL, .gpu_evaluated = 0, .gpu_status = GPK_OK};
    if (runs == 1 && !stopped_early) open_batching(ctx, c, nb, nd, k, &bt);
    const int threads = runs == 1 ? 1 : c->threads < (int)runs ? c->threads : (int)runs;
    gpk__tally tally;
    memset(&tally, 0, sizeof tally);
    const int tallied = runs > 1 && c->progress && gpk__tally_init(&tally, runs) == 0;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1)
    for (int64_t s = 0; s < (int64_t)runs; s++) {
        /* multistart run s as every multistart seeds it (also with one start,
         * so that gpk_search_run_multi and the MPI multistart agree) */
        const uint64_t seed =
            c->algo == GPK_SEARCH_MULTISTART ? gpk__splitmix64(c->seed + (uint64_t)s) : c->seed;
        stops[s] = stopped_early;
        bad[s] = one_run(c, nb, nd, k, seed, s == 0 && c->start ? c->start : curve, t0,
                         omp_get_thread_num() == 0, sols + (size_t)s * n, &bests[s], &moves[s], &evals[s],
                         &stops[s], &lopt[s], runs == 1 ? &bt : NULL, tallied ? &tally : NULL, (uint32_t)s);
    }
    gpk__tally_free(&tally);
    if (bt.gpu) bt.gpu_scans->tsp_ls_close(bt.gpu);
    r->gpu_evaluated = bt.gpu_evaluated;
    uint32_t best = 0;
    for (uint32_t s = 0; s < runs; s++) {
        if (bad[s]) {
            st = gpk__fail(ctx, GPK_ENOMEM, "gpk_search_run: out of memory in run %u (n = %u)", s, n);
            goto done;
        }
        r->iterations += moves[s];
        r->evaluated += evals[s];
        if (stops[s]) r->stopped = GPK_SEARCH_TIME_LIMIT;
        if (bests[s] < bests[best]) best = s;
    }
    r->best = bests[best];
    r->local_optimum = lopt[best];
    memcpy(r->solution, sols + (size_t)best * n, (size_t)n * sizeof *r->solution);
done:
    free(curve);
    free(nb);
    free(nd);
    free(sols);
    free(bests);
    free(moves);
    free(evals);
    free(stops);
    free(lopt);
    free(bad);
    return st;
}
