/* CPU backend: parallel quicksort on OpenMP threads (introsort style).
 *
 * Keys are mapped in place to the order-preserving unsigned form of
 * radix_internal.h (so the order is exactly the radix sort's: -0 before +0,
 * NaNs last), sorted as plain unsigned integers, and mapped back.
 *
 * Partition. The paper splits a sequence into < P, = P and > P. Here the
 * = P class is handled the way it matters for speed: a segment knows a
 * lower bound lb of its keys (the pivot of the partition that made it, if
 * it was a right part); when a new pivot equals lb, the segment is split
 * into <= P (all equal: done) and > P, else into < P and >= P. Runs of
 * equal keys thus leave after one pass, and zero-entropy or few-distinct
 * inputs cost O(n log k). The partition loop is Lomuto's without branches
 * (the comparison result moves the boundary), which on random keys beats
 * a branchy Hoare loop that mispredicts about every other element.
 *
 * Pivots: the median of three or, for larger segments, the pseudo-median
 * of nine keys at scattered positions. A depth budget of 2 log2(n) bounds
 * the damage of adversarial inputs (median-of-3 killers): past it a segment
 * switches to the paper's GPU pivot, the midpoint of its smallest and
 * largest mapped key, which halves the key range per level, so the depth
 * is bounded by the key width and the sort stays O(n * bits), never
 * quadratic.
 *
 * Parallelism. The top of the sort is where a task split is weakest (one
 * thread partitions all n keys alone), so segments larger than
 * PAR_SPLIT_MIN are partitioned by all threads together, the paper's way:
 * each thread counts its tile's < P, = P and > P keys, a scan gives every
 * thread its output offsets, and each writes its tile's keys (and values)
 * into a scratch copy, equal keys between the two sides; the copy is then
 * copied back. Below that, OpenMP tasks take the smaller side of each
 * split while the larger side goes on in the same task. Segments of up to
 * INSERTION_MAX keys are finished by insertion sort.
 *
 * Input that is already sorted, or reversed, is recognised in one pass
 * and costs no more than that.
 *
 * Pairs are packed into one array of (mapped key, value) structs in
 * scratch memory, sorted, and unpacked. Sorting the caller's two arrays in
 * place was measured 2-6x slower at 2^24 pairs: the two arrays are usually
 * a multiple of 4 KiB apart, so every swap's loads and stores alias in the
 * caches (4K aliasing); one array of structs has no such partner and
 * touches one cache line per element instead of two.
 *
 * Records are sorted as (mapped key, index) structs and then gathered into
 * a scratch copy and copied back, so a record moves once, not once per
 * partition level.
 */
#include "quick_internal.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Tuning constants (overridable at compile time for measurements). */
#ifndef INSERTION_MAX
#define INSERTION_MAX 24
#endif
#ifndef TASK_MIN
#define TASK_MIN 16384 /* smaller side above this becomes a task */
#endif
#ifndef PAR_SPLIT_MIN
#define PAR_SPLIT_MIN (1u << 20) /* segments above this are partitioned by all threads */
#endif
#ifndef DEPTH_FACTOR
#define DEPTH_FACTOR 2 /* splits allowed per log2(n) before midpoint mode */
#endif
#define NINTHER_MIN 128

static unsigned ilog2(size_t n)
{
    unsigned l = 0;
    while (n >>= 1) l++;
    return l;
}

/* Element shapes: bare mapped keys, or (mapped key, value) structs. */
typedef struct {
    uint32_t k, v;
} kv32_32;
typedef struct {
    uint64_t v;
    uint32_t k;
} kv32_64;
typedef struct {
    uint64_t k;
    uint32_t v;
} kv64_32;
typedef struct {
    uint64_t k, v;
} kv64_64;
#define KEY_SELF(e) (e)
#define KEY_K(e) ((e).k)

/* Everything below is written once per shape: ET the element type, KT
 * its key type, KEY(e) the key of element e. */
#define DEFINE_QUICK(SUF, ET, KT, KEY)                                                                   \
    static void insertion_##SUF(ET *restrict a, size_t n)                                                \
    {                                                                                                    \
        for (size_t i = 1; i < n; i++) {                                                                 \
            ET x = a[i];                                                                                 \
            KT xk = KEY(x);                                                                              \
            size_t j = i;                                                                                \
            while (j > 0 && xk < KEY(a[j - 1])) {                                                        \
                a[j] = a[j - 1];                                                                         \
                j--;                                                                                     \
            }                                                                                            \
            a[j] = x;                                                                                    \
        }                                                                                                \
    }                                                                                                    \
                                                                                                         \
    static KT med3_##SUF(KT a, KT b, KT c)                                                               \
    {                                                                                                    \
        KT lo = a < b ? a : b, hi = a < b ? b : a;                                                       \
        return c < lo ? lo : (c > hi ? hi : c);                                                          \
    }                                                                                                    \
                                                                                                         \
    static KT pivot_##SUF(const ET *a, size_t n)                                                         \
    {                                                                                                    \
        if (n < NINTHER_MIN) return med3_##SUF(KEY(a[0]), KEY(a[n / 2]), KEY(a[n - 1]));                 \
        /* Nine keys at scattered positions (a Weyl sequence seeded by n),                        \
         * not equal steps: patterned inputs (organ pipes, median-of-3                            \
         * killers, what a previous partition left) are then not sampled in                       \
         * step with their pattern. */      \
        uint64_t w = (uint64_t)n * 0xD1B54A32D192ED03ull;                                                \
        KT x[9];                                                                                         \
        for (int i = 0; i < 9; i++) {                                                                    \
            w += 0x9E3779B97F4A7C15ull;                                                                  \
            x[i] = KEY(a[(size_t)(w % n)]);                                                              \
        }                                                                                                \
        return med3_##SUF(med3_##SUF(x[0], x[1], x[2]), med3_##SUF(x[3], x[4], x[5]),                    \
                          med3_##SUF(x[6], x[7], x[8]));                                                 \
    }                                                                                                    \
                                                                                                         \
    /* [0, m) gets the keys < p (le = 0) or <= p (le = 1); returns m.                             \
     * Branchless Lomuto: [m, i) holds keys on the right side, so the                             \
     * swap is harmless when x stays right, and the comparison only moves                         \
     * the boundary. */      \
    static size_t partition_##SUF(ET *restrict a, size_t n, KT p, int le)                                \
    {                                                                                                    \
        size_t m = 0;                                                                                    \
        if (le) {                                                                                        \
            for (size_t i = 0; i < n; i++) {                                                             \
                ET x = a[i];                                                                             \
                a[i] = a[m];                                                                             \
                a[m] = x;                                                                                \
                m += (KEY(x) <= p);                                                                      \
            }                                                                                            \
        } else {                                                                                         \
            for (size_t i = 0; i < n; i++) {                                                             \
                ET x = a[i];                                                                             \
                a[i] = a[m];                                                                             \
                a[m] = x;                                                                                \
                m += (KEY(x) < p);                                                                       \
            }                                                                                            \
        }                                                                                                \
        return m;                                                                                        \
    }                                                                                                    \
                                                                                                         \
    /* Midpoint mode (depth budget spent): keys lie in [lo, hi]; split at the                     \
     * middle of the range, so the range halves per level. */      \
    static void midsort_##SUF(ET *a, size_t n, KT lo, KT hi, int par)                                    \
    {                                                                                                    \
        while (n > INSERTION_MAX && lo < hi) {                                                           \
            KT p = lo + (hi - lo) / 2;                                                                   \
            size_t m = partition_##SUF(a, n, p, 1);                                                      \
            if (par && m > TASK_MIN && n - m > TASK_MIN) {                                               \
                _Pragma("omp task firstprivate(a, m, lo, p)") midsort_##SUF(a, m, lo, p, 1);             \
            } else {                                                                                     \
                midsort_##SUF(a, m, lo, p, par);                                                         \
            }                                                                                            \
            a += m;                                                                                      \
            n -= m;                                                                                      \
            lo = p + 1;                                                                                  \
        }                                                                                                \
        if (lo < hi) insertion_##SUF(a, n);                                                              \
    }                                                                                                    \
                                                                                                         \
    static void midsort_start_##SUF(ET *a, size_t n, int par)                                            \
    {                                                                                                    \
        KT lo = KEY(a[0]), hi = KEY(a[0]);                                                               \
        for (size_t i = 1; i < n; i++) {                                                                 \
            KT x = KEY(a[i]);                                                                            \
            lo = x < lo ? x : lo;                                                                        \
            hi = x > hi ? x : hi;                                                                        \
        }                                                                                                \
        midsort_##SUF(a, n, lo, hi, par);                                                                \
    }                                                                                                    \
                                                                                                         \
    /* Sorts a[0, n). has_lb: every key is >= lb. budget: splits left before                      \
     * midpoint mode. par: inside a parallel region (tasks). */      \
    static void qs_##SUF(ET *a, size_t n, unsigned budget, int has_lb, KT lb, int par)                   \
    {                                                                                                    \
        while (n > INSERTION_MAX) {                                                                      \
            if (budget == 0) {                                                                           \
                midsort_start_##SUF(a, n, par);                                                          \
                return;                                                                                  \
            }                                                                                            \
            budget--;                                                                                    \
            KT p = pivot_##SUF(a, n);                                                                    \
            if (has_lb && p == lb) {                                                                     \
                /* p is the smallest key: the <= p side is all equal, done. */                           \
                size_t m = partition_##SUF(a, n, p, 1);                                                  \
                a += m;                                                                                  \
                n -= m;                                                                                  \
                continue;                                                                                \
            }                                                                                            \
            size_t m = partition_##SUF(a, n, p, 0);                                                      \
            /* Left [0, m): keys < p, same lower bound; right: keys >= p. */                             \
            ET *r = a + m;                                                                               \
            size_t rn = n - m;                                                                           \
            if (par && m > TASK_MIN && rn > TASK_MIN) {                                                  \
                if (m < rn) {                                                                            \
                    _Pragma("omp task firstprivate(a, m, budget, has_lb, lb)")                           \
                        qs_##SUF(a, m, budget, has_lb, lb, 1);                                           \
                    a = r;                                                                               \
                    n = rn;                                                                              \
                    has_lb = 1;                                                                          \
                    lb = p;                                                                              \
                } else {                                                                                 \
                    _Pragma("omp task firstprivate(r, rn, budget, p)") qs_##SUF(r, rn, budget, 1, p, 1); \
                    n = m;                                                                               \
                }                                                                                        \
            } else if (m < rn) {                                                                         \
                qs_##SUF(a, m, budget, has_lb, lb, par);                                                 \
                a = r;                                                                                   \
                n = rn;                                                                                  \
                has_lb = 1;                                                                              \
                lb = p;                                                                                  \
            } else {                                                                                     \
                qs_##SUF(r, rn, budget, 1, p, par);                                                      \
                n = m;                                                                                   \
            }                                                                                            \
        }                                                                                                \
        insertion_##SUF(a, n);                                                                           \
    }                                                                                                    \
                                                                                                         \
    static void sort_##SUF(void *a, size_t n, unsigned budget, int has_lb, uint64_t lb, int par)         \
    {                                                                                                    \
        qs_##SUF(a, n, budget, has_lb, (KT)lb, par);                                                     \
    }                                                                                                    \
    static uint64_t key_##SUF(const void *a, size_t i) { return KEY(((const ET *)a)[i]); }               \
                                                                                                         \
    /* The cooperative partition's two passes over one tile [lo, hi). */                                 \
    static void count3_##SUF(const void *va, size_t lo, size_t hi, uint64_t p64, size_t *c)              \
    {                                                                                                    \
        const ET *a = va;                                                                                \
        const KT p = (KT)p64;                                                                            \
        size_t lt = 0, eq = 0;                                                                           \
        for (size_t i = lo; i < hi; i++) {                                                               \
            lt += KEY(a[i]) < p;                                                                         \
            eq += KEY(a[i]) == p;                                                                        \
        }                                                                                                \
        c[0] = lt;                                                                                       \
        c[1] = eq;                                                                                       \
        c[2] = (hi - lo) - lt - eq;                                                                      \
    }                                                                                                    \
    static void scatter3_##SUF(const void *va, void *vt, size_t lo, size_t hi, uint64_t p64, size_t *o)  \
    {                                                                                                    \
        const ET *restrict a = va;                                                                       \
        ET *restrict t = vt;                                                                             \
        const KT p = (KT)p64;                                                                            \
        size_t o0 = o[0], o1 = o[1], o2 = o[2];                                                          \
        for (size_t i = lo; i < hi; i++) {                                                               \
            KT x = KEY(a[i]);                                                                            \
            size_t to;                                                                                   \
            if (x < p) to = o0++;                                                                        \
            else if (x == p) to = o1++;                                                                  \
            else to = o2++;                                                                              \
            t[to] = a[i];                                                                                \
        }                                                                                                \
        o[0] = o0;                                                                                       \
        o[1] = o1;                                                                                       \
        o[2] = o2;                                                                                       \
    }

DEFINE_QUICK(k32, uint32_t, uint32_t, KEY_SELF)
DEFINE_QUICK(k64, uint64_t, uint64_t, KEY_SELF)
DEFINE_QUICK(k32v32, kv32_32, uint32_t, KEY_K)
DEFINE_QUICK(k32v64, kv32_64, uint32_t, KEY_K)
DEFINE_QUICK(k64v32, kv64_32, uint64_t, KEY_K)
DEFINE_QUICK(k64v64, kv64_64, uint64_t, KEY_K)

typedef struct {
    size_t es; /* element size */
    void (*sort)(void *a, size_t n, unsigned budget, int has_lb, uint64_t lb, int par);
    uint64_t (*key)(const void *a, size_t i);
    void (*count3)(const void *a, size_t lo, size_t hi, uint64_t p, size_t *c);
    void (*scatter3)(const void *a, void *t, size_t lo, size_t hi, uint64_t p, size_t *o);
} shape;

#define SHAPE(SUF, ET)                                                  \
    {                                                                   \
        sizeof(ET), sort_##SUF, key_##SUF, count3_##SUF, scatter3_##SUF \
    }
static const shape shapes[6] = {SHAPE(k32, uint32_t),   SHAPE(k64, uint64_t),   SHAPE(k32v32, kv32_32),
                                SHAPE(k32v64, kv32_64), SHAPE(k64v32, kv64_32), SHAPE(k64v64, kv64_64)};

static const shape *shape_of(unsigned kw, unsigned vw)
{
    if (vw == 0) return &shapes[kw == 4 ? 0 : 1];
    if (kw == 4) return &shapes[vw == 4 ? 2 : 3];
    return &shapes[vw == 4 ? 4 : 5];
}

/* The pivot of a large segment: the median of 31 keys at scattered
 * positions (a Weyl sequence, not equal steps, so that periodic inputs
 * such as the paper's bucket and staggered ones are not sampled in step
 * with their period). A bad pivot here costs a pass over many keys. */
static uint64_t big_pivot(const shape *sh, const void *a, size_t off, size_t n)
{
    enum { S = 31 };
    uint64_t smp[S], pos = 0x2545F4914F6CDD1Dull;
    for (int i = 0; i < S; i++) {
        pos += 0x9E3779B97F4A7C15ull;
        uint64_t x = sh->key(a, off + (size_t)(pos % n));
        int j = i;
        while (j > 0 && x < smp[j - 1]) {
            smp[j] = smp[j - 1];
            j--;
        }
        smp[j] = x;
    }
    return smp[S / 2];
}

/* ---- the cooperative partition of large segments --------------------------------- */

typedef struct {
    size_t off, n;
    uint64_t p;  /* pivot */
    uint64_t lb; /* lower bound of the keys, valid when has_lb */
    int has_lb;
} segment;

/* Bounds of the cooperative phase: at most MAX_BIG segments per level and
 * MAX_LEVELS levels (so a run of bad pivots cannot make it quadratic: the
 * task phase's depth budget takes over), hence at most
 * 2 * MAX_BIG * MAX_LEVELS + 1 segments for the tasks. */
#define MAX_BIG 64
#define MAX_LEVELS 6
#define MAX_TODO (2 * MAX_BIG * MAX_LEVELS + 2)

/* Partitions the segments big[0..nbig) with all threads into < p, = p,
 * > p, the paper's way, level after level while segments are large, and
 * leaves the rest in todo for the task phase. Runs inside the parallel
 * region; every thread calls it. cnt: 3 * MAX_BIG * T counters; tmp: a
 * scratch copy of n elements. */
static void cooperative_split(const shape *sh, void *a, void *tmp, size_t n, segment *big, int *nbig,
                              segment *todo, int *ntodo, size_t *cnt, int *level)
{
    const int T = omp_get_num_threads(), tid = omp_get_thread_num();
    const size_t es = sh->es;
    while (*nbig > 0) {
        const int nb = *nbig;
        /* Each big segment is cut into T tiles, one per thread. */
        for (int s = 0; s < nb; s++) {
            const segment *g = &big[s];
            size_t lo = g->off + g->n * (size_t)tid / (size_t)T;
            size_t hi = g->off + g->n * (size_t)(tid + 1) / (size_t)T;
            sh->count3(a, lo, hi, g->p, cnt + 3 * ((size_t)s * T + tid));
        }
#pragma omp barrier
#pragma omp single
        {
            /* Offsets: per segment, all < first (thread order), then =, then >. */
            for (int s = 0; s < nb; s++) {
                size_t tot[3] = {0, 0, 0};
                for (int t = 0; t < T; t++)
                    for (int c = 0; c < 3; c++) tot[c] += cnt[3 * ((size_t)s * T + t) + c];
                size_t base[3] = {big[s].off, big[s].off + tot[0], big[s].off + tot[0] + tot[1]};
                for (int t = 0; t < T; t++)
                    for (int c = 0; c < 3; c++) {
                        size_t x = cnt[3 * ((size_t)s * T + t) + c];
                        cnt[3 * ((size_t)s * T + t) + c] = base[c];
                        base[c] += x;
                    }
            }
        }
        for (int s = 0; s < nb; s++) {
            const segment *g = &big[s];
            size_t lo = g->off + g->n * (size_t)tid / (size_t)T;
            size_t hi = g->off + g->n * (size_t)(tid + 1) / (size_t)T;
            sh->scatter3(a, tmp, lo, hi, g->p, cnt + 3 * ((size_t)s * T + tid));
        }
#pragma omp barrier
        /* Copy back: every thread its share of each big segment. */
        for (int s = 0; s < nb; s++) {
            const segment *g = &big[s];
            size_t lo = g->off + g->n * (size_t)tid / (size_t)T;
            size_t hi = g->off + g->n * (size_t)(tid + 1) / (size_t)T;
            memcpy((char *)a + lo * es, (char *)tmp + lo * es, (hi - lo) * es);
        }
#pragma omp barrier
#pragma omp single
        {
            /* The < and > parts become new segments; the = part is done. */
            segment next[MAX_BIG];
            int nn = 0;
            for (int s = 0; s < nb; s++) {
                const segment g = big[s];
                /* The last thread's advanced offsets are the ends of the
                 * < and = parts. */
                size_t lt_end = cnt[3 * ((size_t)s * T + (T - 1)) + 0];
                size_t eq_end = cnt[3 * ((size_t)s * T + (T - 1)) + 1];
                segment parts[2] = {{g.off, lt_end - g.off, 0, g.lb, g.has_lb},
                                    {eq_end, g.off + g.n - eq_end, 0, g.p, 1}};
                for (int h = 0; h < 2; h++) {
                    segment q = parts[h];
                    if (q.n < 2) continue;
                    /* Cooperation pays until there are about 2T segments
                     * for the tasks to share. */
                    if (q.n > PAR_SPLIT_MIN && q.n > n / (2 * (size_t)T) && nn < MAX_BIG &&
                        *level + 1 < MAX_LEVELS) {
                        q.p = big_pivot(sh, a, q.off, q.n);
                        next[nn++] = q;
                    } else {
                        todo[(*ntodo)++] = q;
                    }
                }
            }
            memcpy(big, next, (size_t)nn * sizeof *next);
            *nbig = nn;
            ++*level;
        } /* implicit barrier */
    }
}

/* 1: keys non-decreasing, -1: non-increasing, 0: neither. One pass that
 * random data leaves after a few keys; sorted and reversed input (common
 * in practice, and the paper's "sorted" distribution) then costs one pass
 * instead of a full sort. */
#define DEFINE_MONOTONE(NAME, KT)                       \
    static int NAME(const KT *a, size_t n)              \
    {                                                   \
        int up = 1, down = 1;                           \
        for (size_t i = 1; i < n && (up | down); i++) { \
            up &= a[i - 1] <= a[i];                     \
            down &= a[i - 1] >= a[i];                   \
        }                                               \
        return up ? 1 : (down ? -1 : 0);                \
    }
DEFINE_MONOTONE(monotone32, uint32_t)
DEFINE_MONOTONE(monotone64, uint64_t)

static int monotone(const shape *sh, const void *a, size_t n)
{
    /* Bare keys, the common case, without a call per key. */
    if (sh == &shapes[0]) return monotone32(a, n);
    if (sh == &shapes[1]) return monotone64(a, n);
    int up = 1, down = 1;
    uint64_t prev = sh->key(a, 0);
    for (size_t i = 1; i < n && (up | down); i++) {
        uint64_t x = sh->key(a, i);
        up &= prev <= x;
        down &= prev >= x;
        prev = x;
    }
    return up ? 1 : (down ? -1 : 0);
}

static void reverse(void *a, size_t w, size_t n)
{
    unsigned char *p = a, t[16];
    for (size_t i = 0, j = n - 1; i < j; i++, j--) {
        memcpy(t, p + i * w, w);
        memcpy(p + i * w, p + j * w, w);
        memcpy(p + j * w, t, w);
    }
}

/* Sorts the n elements of a with `threads` threads; tmp (n elements, or
 * NULL: no cooperative phase), cnt and segs are scratch. */
static void sort_elements(const shape *sh, void *a, size_t n, int threads, void *tmp, size_t *cnt,
                          segment *segs)
{
    const unsigned budget = DEPTH_FACTOR * ilog2(n) + 2;
    const int order = monotone(sh, a, n);
    if (order == 1) return;
    if (order == -1) { /* equal keys change order: quicksort is not stable */
        reverse(a, sh->es, n);
        return;
    }
    if (threads <= 1) {
        sh->sort(a, n, budget, 0, 0, 0);
        return;
    }
    segment *big = segs, *todo = segs + MAX_BIG;
    int nbig = 0, ntodo = 0, level = 0;
    if (tmp && n > PAR_SPLIT_MIN) {
        segment g = {0, n, 0, 0, 0};
        g.p = big_pivot(sh, a, 0, n);
        big[nbig++] = g;
    } else {
        todo[ntodo++] = (segment){0, n, 0, 0, 0};
    }
#pragma omp parallel num_threads(threads)
    {
        cooperative_split(sh, a, tmp, n, big, &nbig, todo, &ntodo, cnt, &level);
#pragma omp single
        {
            for (int s = 0; s < ntodo; s++) {
                segment q = todo[s];
                char *qa = (char *)a + q.off * sh->es;
#pragma omp task firstprivate(q, qa)
                sh->sort(qa, q.n, budget, q.has_lb, q.lb, 1);
            }
        }
    }
}

/* ---- entry -------------------------------------------------------------------------- */

static uint64_t load_mapped(gpk_type t, unsigned kw, const unsigned char *src)
{
    if (kw == 4) {
        uint32_t x;
        memcpy(&x, src, 4);
        return gpk__map_u32(t, x);
    }
    uint64_t x;
    memcpy(&x, src, 8);
    return gpk__map_u64(t, x);
}

static void store_unmapped(gpk_type t, unsigned kw, unsigned char *dst, uint64_t m)
{
    if (kw == 4) {
        uint32_t x = gpk__unmap_u32(t, (uint32_t)m);
        memcpy(dst, &x, 4);
    } else {
        uint64_t x = gpk__unmap_u64(t, m);
        memcpy(dst, &x, 8);
    }
}

/* Element i of a (key, value) struct array: the key and the value fields. */
static void put_pair(const shape *sh, void *a, size_t i, uint64_t k, uint64_t v)
{
    switch (sh - shapes) {
    case 2:
        ((kv32_32 *)a)[i].k = (uint32_t)k;
        ((kv32_32 *)a)[i].v = (uint32_t)v;
        break;
    case 3:
        ((kv32_64 *)a)[i].k = (uint32_t)k;
        ((kv32_64 *)a)[i].v = v;
        break;
    case 4:
        ((kv64_32 *)a)[i].k = k;
        ((kv64_32 *)a)[i].v = (uint32_t)v;
        break;
    default:
        ((kv64_64 *)a)[i].k = k;
        ((kv64_64 *)a)[i].v = v;
        break;
    }
}

static uint64_t value_at(const shape *sh, const void *a, size_t i)
{
    switch (sh - shapes) {
    case 2: return ((const kv32_32 *)a)[i].v;
    case 3: return ((const kv32_64 *)a)[i].v;
    case 4: return ((const kv64_32 *)a)[i].v;
    default: return ((const kv64_64 *)a)[i].v;
    }
}

static uint64_t load_value(unsigned vw, const unsigned char *src)
{
    if (vw == 4) {
        uint32_t x;
        memcpy(&x, src, 4);
        return x;
    }
    uint64_t x;
    memcpy(&x, src, 8);
    return x;
}

gpk_status gpk__quick_sort_cpu(gpk_ctx *ctx, const gpk_quick_job *job)
{
    const size_t n = job->n;
    const unsigned kw = job->key_width;
    const gpk_type t = job->key_type;
    const int records = job->stride != job->key_width || job->key_offset != 0;
    const int idx64 = records && n > UINT32_MAX;
    const unsigned vw = records ? (idx64 ? 8u : 4u) : job->value_width;
    const shape *sh = shape_of(kw, vw);
    const int in_place = !records && vw == 0;               /* bare keys are sorted where they are */
    const int mapped = gpk_key_kind(t) != GPK_KEY_UNSIGNED; /* unsigned keys need no pass in or out */
    int threads = ctx->threads;
    if (n < 65536) threads = 1;

    /* Scratch, all taken before the caller's data is touched: the packed
     * elements (pairs, records), the cooperative partition's copy, its
     * counters and segment lists, and for records the gathered copy. */
    const size_t ebytes = (n * sh->es + 63) & ~(size_t)63;
    const int coop = threads > 1 && n > PAR_SPLIT_MIN;
    size_t total = (in_place ? 0 : ebytes) + (coop ? ebytes : 0) +
        (size_t)3 * MAX_BIG * (size_t)threads * sizeof(size_t) + (MAX_BIG + MAX_TODO) * sizeof(segment);
    if (records) total += n * job->stride;
    unsigned char *scratch = gpk__host_scratch(ctx, total);
    if (!scratch)
        return gpk__fail(ctx, GPK_ENOMEM, "cpu quicksort: cannot allocate %zu bytes of scratch memory",
                         total);
    unsigned char *p = scratch;
    void *elems = job->base, *tmp = NULL;
    if (!in_place) {
        elems = p;
        p += ebytes;
    }
    if (coop) {
        tmp = p;
        p += ebytes;
    }
    size_t *cnt = (size_t *)p;
    p += (size_t)3 * MAX_BIG * (size_t)threads * sizeof(size_t);
    segment *segs = (segment *)p;
    p += (MAX_BIG + MAX_TODO) * sizeof(segment);
    unsigned char *gathered = p; /* records only */

    unsigned char *base = job->base;
    const size_t stride = job->stride, off = job->key_offset;
    const ptrdiff_t nn = (ptrdiff_t)n;
    /* In: map the keys (in place, or packed with their values / indices). */
    if (!in_place || mapped) {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (ptrdiff_t i = 0; i < nn; i++) {
            uint64_t k = load_mapped(t, kw, base + (size_t)i * stride + off);
            if (in_place) {
                if (kw == 4) ((uint32_t *)elems)[i] = (uint32_t)k;
                else ((uint64_t *)elems)[i] = k;
            } else {
                uint64_t v = records ? (uint64_t)i
                                     : load_value(vw, (const unsigned char *)job->values + (size_t)i * vw);
                put_pair(sh, elems, (size_t)i, k, v);
            }
        }
    }

    sort_elements(sh, elems, n, threads, tmp, cnt, segs);

    /* Out: unmap the keys (in place, or unpacked), or gather the records. */
    if (records) {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (ptrdiff_t j = 0; j < nn; j++) {
            size_t from = (size_t)value_at(sh, elems, (size_t)j);
            memcpy(gathered + (size_t)j * stride, base + from * stride, stride);
        }
        memcpy(base, gathered, n * stride);
        return GPK_OK;
    }
    if (in_place && !mapped) return GPK_OK;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (ptrdiff_t i = 0; i < nn; i++) {
        store_unmapped(t, kw, base + (size_t)i * kw, sh->key(elems, (size_t)i));
        if (!in_place) {
            uint64_t v = value_at(sh, elems, (size_t)i);
            unsigned char *dst = (unsigned char *)job->values + (size_t)i * vw;
            if (vw == 4) {
                uint32_t x = (uint32_t)v;
                memcpy(dst, &x, 4);
            } else memcpy(dst, &v, 8);
        }
    }
    return GPK_OK;
}
