/* The part of the vectorised quicksorts that neither the instruction set
 * nor the key width changes (vector_sort_avx2.c, vector_sort_avx512.c,
 * each built for 32- and 64-bit keys and for doubles): the pivot rule,
 * the recursion, its depth limit and the heap sort past it, the entry
 * point and the split (one partition). Included once by each
 * kernel's file, at its end, after it has defined (where it builds the
 * kernel; the last five always):
 *   INLINE, TARGET  its function attributes;
 *   QUICK_SAMPLE    the pivot's sample from QUICK_SAMPLE_FROM keys on (64
 *                   or 256; 64 keys from 4096 to there; a file may leave
 *                   QUICK_SAMPLE_FROM at 4096);
 *   SMALL_REGS      the most registers its network sorts (16 or 32), and
 *   SMALL_MAX       the keys they hold, the largest range it sorts;
 *   less(a, b, s)   a below b;
 *   QUICK_VEC     its register type;
 *   sort_sample(sample, r, s), partition(keys, n, pivot, s, gt, &lo, &hi),
 *   sort_small_r(keys, n, r, s)  (see either file);
 *   SAMPLE_OBSERVER  its sample observer (vector_sort_quick.h);
 *   QUICK_KEY        the key type (uint32_t or uint64_t), QUICK_KEY_BITS
 *                    its bits;
 *   QUICK_ENTRY      the entry's name (int f(QUICK_KEY *, size_t, int));
 *   QUICK_SPLIT      the name of its one partition (int f(QUICK_KEY *,
 *                    size_t, QUICK_KEY, int, int, size_t *));
 *   QUICK_LEVEL      its level function's name (int f(void), defined
 *                      by the file where the kernel is built);
 *   QUICK_ISA        the level at which the kernel runs;
 *   QUICK_FALLBACKS  its size_t counter of heap sorts, for the tests;
 *   QUICK_KERNEL     defined where the file builds the kernel; elsewhere
 *                      (neither x86-64 nor a GNU compiler) this defines a
 *                      level of portable and an entry that refuses, so
 *                      the kernel is never chosen.
 * s = 1 compares the keys as signed integers, 0 as unsigned. */

#ifdef QUICK_KERNEL

/* The median of a sample of keys[0, n) (n > SMALL_MAX): 16 keys at equal
 * strides, 64 from 4096 keys on, QUICK_SAMPLE from QUICK_SAMPLE_FROM on,
 * sorted by sort_sample; *flat: whether the sample's keys are all
 * equal. */
#ifndef QUICK_SAMPLE_FROM
#define QUICK_SAMPLE_FROM 4096
#endif
INLINE QUICK_KEY pivot_of(const QUICK_KEY *keys, size_t n, int s, int *flat)
{
    QUICK_KEY sample[QUICK_SAMPLE];
    const size_t m = n >= QUICK_SAMPLE_FROM ? QUICK_SAMPLE : n >= 4096 ? 64 : 16, stride = n / m;
    for (size_t i = 0; i < m; i++) sample[i] = keys[i * stride + stride / 2];
    if (SAMPLE_OBSERVER) SAMPLE_OBSERVER(sample, m);
    if (m == 16) sort_sample(sample, 16 / QUICK_LANES, s);
    else if (m == 64) sort_sample(sample, 64 / QUICK_LANES, s);
    else sort_sample(sample, QUICK_SAMPLE / QUICK_LANES, s);
    *flat = sample[0] == sample[m - 1];
    return sample[m / 2];
}

/* keys[0, n) (n <= SMALL_MAX) sorted by sort_small_r in the fewest
 * registers that hold them. */
INLINE void sort_small(QUICK_KEY *keys, size_t n, int s)
{
    const size_t lanes = QUICK_LANES;
    if (n <= lanes) sort_small_r(keys, n, 1, s);
    else if (n <= 2 * lanes) sort_small_r(keys, n, 2, s);
    else if (n <= 4 * lanes) sort_small_r(keys, n, 4, s);
    else if (n <= 8 * lanes) sort_small_r(keys, n, 8, s);
#if SMALL_REGS == 32
    else if (n <= 16 * lanes) sort_small_r(keys, n, 16, s);
    else sort_small_r(keys, n, 32, s);
#else
    else sort_small_r(keys, n, 16, s);
#endif
}
__attribute__((noinline)) TARGET static void sort_small_u(QUICK_KEY *keys, size_t n)
{
    sort_small(keys, n, 0);
}
__attribute__((noinline)) TARGET static void sort_small_i(QUICK_KEY *keys, size_t n)
{
    sort_small(keys, n, 1);
}

/* The heap sort a range falls back to past the depth limit. */
static void sift_down(QUICK_KEY *k, size_t i, size_t n, int s)
{
    const QUICK_KEY x = k[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && less(k[c], k[c + 1], s)) c++;
        if (!less(x, k[c], s)) break;
        k[i] = k[c];
        i = c;
    }
    k[i] = x;
}
static void heap_sort(QUICK_KEY *k, size_t n, int s)
{
    for (size_t i = n / 2; i-- > 0;) sift_down(k, i, n, s);
    for (size_t end = n; end > 1; end--) {
        const QUICK_KEY t = k[0];
        k[0] = k[end - 1];
        k[end - 1] = t;
        sift_down(k, 0, end - 1, s);
    }
}

/* Whether keys[0, n) all equal p: a read, where the partition would
 * write every key. Blocks of 64 keys are XOR-ed with p and OR-ed (a loop
 * the compiler vectorises), stopping at the first block with another key,
 * so an input that only samples flat costs little. */
INLINE int all_equal(const QUICK_KEY *keys, size_t n, QUICK_KEY p)
{
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        QUICK_KEY d = 0;
        for (int j = 0; j < 64; j++) d |= keys[i + j] ^ p;
        if (d) return 0;
    }
    QUICK_KEY d = 0;
    for (; i < n; i++) d |= keys[i] ^ p;
    return d == 0;
}

TARGET static void sort_rec_u(QUICK_KEY *keys, size_t n, unsigned depth);
TARGET static void sort_rec_i(QUICK_KEY *keys, size_t n, unsigned depth);

/* keys[0, n) sorted: partitions while more than SMALL_MAX keys are left,
 * recursing into the smaller side and looping on the larger. Every
 * partition finishes at least one key (the pivot's copies when it is the
 * least key, all keys when they are equal). */
INLINE void sort_rec(QUICK_KEY *keys, size_t n, unsigned depth, int s)
{
    while (n > SMALL_MAX) {
        if (depth == 0) {
            __atomic_fetch_add(&QUICK_FALLBACKS, 1, __ATOMIC_RELAXED);
            heap_sort(keys, n, s);
            return;
        }
        depth--;
        int flat;
        const QUICK_KEY p = pivot_of(keys, n, s, &flat);
        if (flat && all_equal(keys, n, p)) return;
        QUICK_KEY lo, hi;
        const size_t split = partition(keys, n, p, s, 0, &lo, &hi);
        if (lo == hi) return;
        if (split == 0) { /* p is the least key: its copies go left, done */
            const size_t eq = partition(keys, n, p, s, 1, &lo, &hi);
            keys += eq;
            n -= eq;
            continue;
        }
        QUICK_KEY *right = keys + split;
        size_t nr = hi == p ? 0 : n - split; /* keys at least p, all p: done */
        size_t nl = split;
        if (nl < nr) {
            if (s) sort_rec_i(keys, nl, depth);
            else sort_rec_u(keys, nl, depth);
            keys = right;
            n = nr;
        } else {
            if (s) sort_rec_i(right, nr, depth);
            else sort_rec_u(right, nr, depth);
            n = nl;
        }
    }
    if (n > 1) {
        if (s) sort_small_i(keys, n);
        else sort_small_u(keys, n);
    }
}
TARGET static void sort_rec_u(QUICK_KEY *keys, size_t n, unsigned depth) { sort_rec(keys, n, depth, 0); }
TARGET static void sort_rec_i(QUICK_KEY *keys, size_t n, unsigned depth) { sort_rec(keys, n, depth, 1); }

/* keys[0, n) partitioned around p, the keys going left counted to *left:
 * the kernel's partition, or a scalar one for ranges too short for it. */
INLINE void split(QUICK_KEY *keys, size_t n, QUICK_KEY p, int s, int gt, size_t *left)
{
    if (n > SMALL_MAX) {
        QUICK_KEY lo, hi;
        *left = partition(keys, n, p, s, gt, &lo, &hi);
        return;
    }
    size_t i = 0, j = n;
    for (;;) {
        while (i < j && (gt ? !less(p, keys[i], s) : less(keys[i], p, s))) i++;
        while (i < j && !(gt ? !less(p, keys[j - 1], s) : less(keys[j - 1], p, s))) j--;
        if (i == j) break;
        const QUICK_KEY t = keys[i];
        keys[i] = keys[j - 1];
        keys[j - 1] = t;
    }
    *left = i;
}
TARGET static void split_u(QUICK_KEY *keys, size_t n, QUICK_KEY p, int gt, size_t *left)
{
    split(keys, n, p, 0, gt, left);
}
TARGET static void split_i(QUICK_KEY *keys, size_t n, QUICK_KEY p, int gt, size_t *left)
{
    split(keys, n, p, 1, gt, left);
}

int QUICK_SPLIT(QUICK_KEY *keys, size_t n, QUICK_KEY pivot, int is_signed, int gt, size_t *left)
{
    if (QUICK_LEVEL() != QUICK_ISA) return -1;
    if (is_signed) split_i(keys, n, pivot, gt, left);
    else split_u(keys, n, pivot, gt, left);
    return 0;
}

/* Past 2 log2(n) partitions a range is heap-sorted: no input is quadratic. */
int QUICK_ENTRY(QUICK_KEY *keys, size_t n, int is_signed)
{
    if (QUICK_LEVEL() != QUICK_ISA) return -1;
    unsigned depth = 0;
    for (size_t m = n; m > 1; m /= 2) depth += 2;
    if (is_signed) sort_rec_i(keys, n, depth);
    else sort_rec_u(keys, n, depth);
    return 0;
}

#else

#if QUICK_KEY_BITS == 32 && !defined(QUICK_FLOATS) /* one level function for every build */
int QUICK_LEVEL(void) { return GPK_SIMD_PORTABLE; }
#endif
int QUICK_ENTRY(QUICK_KEY *keys, size_t n, int is_signed)
{
    (void)keys, (void)n, (void)is_signed;
    return -1;
}
int QUICK_SPLIT(QUICK_KEY *keys, size_t n, QUICK_KEY pivot, int is_signed, int gt, size_t *left)
{
    (void)keys, (void)n, (void)pivot, (void)is_signed, (void)gt, (void)left;
    return -1;
}

#endif
