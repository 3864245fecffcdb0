/* CPU backend: radix sort on OpenMP threads, two paths. From 2^18 keys
 * with 17 or more differing bits, the hybrid further down (one MSD pass
 * through memory, then every bucket sorted in cache). Otherwise, or when
 * the caller fixes r, the LSD sort described here.
 *
 * One parallel region does the whole sort. Each thread owns a contiguous
 * chunk; per pass it counts its chunk's digits (a private histogram), the
 * offsets are a digit-major, thread-minor scan (so equal digits keep their
 * order across threads: the sort is stable), then it scatters its chunk.
 * The scatter goes through a small per-thread buffer per digit (software
 * write-combining): full 64-byte lines are copied out instead of single
 * keys, which keeps the number of open write streams within what the
 * caches and TLB handle. The map of the keys to their sort keys (signed
 * and float keys, and every key in descending order: key_order) is fused
 * into the detection read and its inverse into the last pass's copy-out.
 *
 * Keys alone (no values, no permutation, every bit compared) take a
 * vectorised quicksort where one was built and the processor runs it
 * (vector_sort.h): the whole array on a team of one thread, two sorted
 * halves merged on a team of two (vector_keys_job says where). Equal keys
 * are equal bits, so the result is the radix sort's. Pairs and
 * permutations take it on a team of one thread where it wins, as (sort
 * key, index) composites, which keep the sort stable (vector_sort_items).
 * The radix passes stay the portable path and the reference.
 *
 * OpenMP rather than a hand-made pool: the whole sort is one fork-join
 * region with barriers, which is exactly what `omp parallel` + `omp
 * barrier` express, with no thread-pool code of our own to get wrong.
 */
#define _GNU_SOURCE /* syscall: the team barrier's futex; sched_getaffinity */
#include "radix_internal.h"
#include "radix_cpu_hooks.h"
#include "vector_sort.h"
#include "vector_sort_quick.h"

#include <omp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#ifdef __linux__
#include <linux/futex.h>
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#else
#include <sched.h>
#endif

#define WC_BYTES 64          /* one cache line per digit buffer */
#define WC_MAX_RADIX_BITS 12 /* beyond this the buffers outgrow L2: scatter directly */
/* A thread more per this many bytes of keys and values: a team costs its
 * start, its end and a barrier per pass, a few microseconds on free cores,
 * which a sort of 1 MiB and more repays (u32 2^20 on two free cores: 6 ->
 * 3 ms, docs/perf/radix.md). On a busy machine each of those waits for a
 * thread to get a core back (milliseconds); cap_by_free_cores keeps the
 * team to the cores that are free, so this floor need not guard that. */
#ifndef MIN_BYTES_PER_THREAD
#define MIN_BYTES_PER_THREAD ((size_t)1 << 20)
#endif

static atomic_int ignore_load;

void gpk__radix_cpu_ignore_load(int on)
{
    atomic_store_explicit(&ignore_load, on != 0, memory_order_relaxed);
}

#ifdef __linux__
/* Runnable threads of this process (state R in each thread's
 * /proc/self/task/TID/stat), the caller's included; 0 if unknown. */
static long own_runnable(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) return 0;
    long n = 0;
    struct dirent *e;
    char path[64], buf[512];
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        snprintf(path, sizeof path, "/proc/self/task/%.20s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t got = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[got] = 0;
        const char *r = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
        if (r && r[1] == ' ' && r[2] == 'R') n++;
    }
    closedir(d);
    return n;
}
#endif

/* The team no larger than the cores that no other process's runnable
 * thread holds now: the online CPUs less the machine's runnable threads
 * (Linux: /proc/loadavg's fourth field, "runnable/total") that are not
 * this process's (an OpenMP pool thread still spinning after an earlier
 * region is ours, and the team reuses it). A thread without a core of its
 * own holds every barrier and the team's end for the time slices it
 * waits: on two cores with one busy, two threads were slower than one
 * (docs/perf/radix.md, v13). Where the process may run on fewer CPUs than
 * are online (taskset, a container's cpuset), the team fits those CPUs,
 * and the other processes' threads are counted against them in their
 * share (rounded up): pinned to 2 of 16 cores beside one busy process,
 * two threads took 1.7x one thread's time (v20). A few small reads, for
 * sorts of milliseconds. */
int gpk__radix_cpu_team_fit(int threads, long online, long usable, long others)
{
    if (usable < online) others = (others * usable + online - 1) / online;
    const long free_cores = usable - others;
    if (free_cores < 1) return 1;
    return free_cores < threads ? (int)free_cores : threads;
}

#ifdef __linux__
/* The machine's runnable threads (/proc/loadavg's fourth field,
 * "runnable/total"), read without stdio; -1 if unknown. */
static long machine_runnable(void)
{
    const int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char buf[128];
    const ssize_t got = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (got <= 0) return -1;
    buf[got] = 0;
    const char *slash = strchr(buf, '/');
    const char *p = slash;
    while (p && p > buf && p[-1] >= '0' && p[-1] <= '9') p--;
    if (!p || p == slash) return -1;
    return strtol(p, NULL, 10);
}
#endif

/* That rule for this process now (threads while the load is ignored).
 * Every sort of a team asks it, so it reads little: the load's one line,
 * and this process's threads (a file each) only where the team would be
 * cut even if every runnable thread but the caller were another
 * process's (only then can counting ours change the answer). The online
 * CPUs are read once. Reading all of it every time cost more than 2 %
 * of a two-thread sort of 2^20 keys (docs/perf/radix.md, v24). */
static int cap_by_free_cores(int threads)
{
#ifdef __linux__
    if (threads < 2 || atomic_load_explicit(&ignore_load, memory_order_relaxed)) return threads;
    static atomic_long online_cpus;
    long online = atomic_load_explicit(&online_cpus, memory_order_relaxed);
    if (online < 1) {
        online = sysconf(_SC_NPROCESSORS_ONLN);
        if (online < 1) return threads;
        atomic_store_explicit(&online_cpus, online, memory_order_relaxed);
    }
    const long runnable = machine_runnable();
    if (runnable < 0) return threads;
    cpu_set_t mask;
    const long usable = sched_getaffinity(0, sizeof mask, &mask) == 0 && CPU_COUNT(&mask) < online
        ? CPU_COUNT(&mask)
        : online;
    /* the caller is runnable: at most runnable - 1 threads are others' */
    const int most = gpk__radix_cpu_team_fit(threads, online, usable, runnable > 1 ? runnable - 1 : 0);
    if (most == threads) return threads;
    long own = own_runnable();
    if (own < 1) own = 1; /* the caller */
    return gpk__radix_cpu_team_fit(threads, online, usable, runnable > own ? runnable - own : 0);
#else
    return threads;
#endif
}

int gpk__radix_cpu_team_cap(int threads) { return cap_by_free_cores(threads); }

#define BLOCKS_PER_THREAD 8 /* a team pass's blocks (block_lo) */
#define MIN_BLOCK_KEYS ((size_t)1 << 14)
#define HYB_MAX_BITS 11 /* MSD digits: 2^11 write-combining lines stay in L2 */

typedef struct {
    unsigned shift, bits;
} pass_plan;

/* Tuned choice when r is not given: digits of at most `tuned` bits,
 * balanced so that a b-bit range costs ceil(b/tuned) passes of (nearly)
 * equal width. */
static unsigned plan_passes_w(unsigned begin, unsigned end, unsigned radix_bits, unsigned tuned,
                              pass_plan *plan)
{
    unsigned b = end - begin, p;
    if (b == 0) return 0;
    if (radix_bits) {
        p = (b + radix_bits - 1) / radix_bits;
        for (unsigned q = 0; q < p; q++) {
            plan[q].shift = begin + q * radix_bits;
            plan[q].bits = (q + 1 < p) ? radix_bits : b - q * radix_bits;
        }
        return p;
    }
    p = (b + tuned - 1) / tuned;
    unsigned shift = begin;
    for (unsigned q = 0; q < p; q++) {
        unsigned bits = (b - (shift - begin) + (p - q) - 1) / (p - q);
        plan[q].shift = shift;
        plan[q].bits = bits;
        shift += bits;
    }
    return p;
}

static unsigned plan_passes(unsigned begin, unsigned end, unsigned radix_bits, pass_plan *plan)
{
    return plan_passes_w(begin, end, radix_bits, 8, plan);
}

/* Full write-combining lines go out with streaming stores where the
 * destination is 64-byte aligned: a line the scatter writes whole need not
 * be read into the cache first, which saves a read of the array per pass.
 * The first line of each digit (shared with the digit before) and the last
 * (partial) go through the cache as before. */
static int stream_ok(const void *p)
{
#ifdef __SSE2__
    return ((uintptr_t)p & 63) == 0;
#else
    (void)p;
    return 0;
#endif
}

static inline void stream_bytes(void *dst, const void *src, size_t bytes)
{
#ifdef __SSE2__
    for (size_t i = 0; i < bytes; i += 16)
        _mm_stream_si128((__m128i *)((char *)dst + i),
                         _mm_loadu_si128((const __m128i *)((const char *)src + i)));
#else
    memcpy(dst, src, bytes);
#endif
}

static inline void stream_fence(void)
{
#ifdef __SSE2__
    _mm_sfence();
#endif
}

/* The hybrid's first level on skewed keys (split_plan): the bucket of a
 * key is looked up by g, the top HYB_MAX_BITS bits of the range: a heavy g
 * is split by its next e bits into 2^e buckets from base on, light
 * neighbours share one bucket. Buckets stay in key order. */
typedef struct {
    uint16_t base;
    uint8_t sh, e; /* sh: shift of g's next e bits */
} split_entry;

static inline size_t split_digit(const split_entry *restrict tab, uint64_t k, unsigned shift, uint64_t mask)
{
    const split_entry t = tab[(k >> shift) & mask];
    return t.base + (size_t)((k >> t.sh) & ((1u << t.e) - 1));
}

/* The first level of 8-byte keys whose type needs mapping (floats,
 * signed; in either order), planned from a sample before the detection read
 * (first_plan_sample): the detection counts the buckets and the scatter
 * maps the keys as it reads the caller's array, so the mapped keys are
 * never written to it. A key whose bits from pshift up differ from the
 * sample's (which shared them) goes to bucket 0 (below) or `over` (above);
 * the others by the split table (bases from 1). The map: ((x ^ (flip |
 * (neg & -(x >> 63)))) - sub), then with reflect (floats in descending
 * order) gpk_key_descending64's reflection below the mapped +inf. */
typedef struct {
    split_entry tab[(size_t)1 << HYB_MAX_BITS];
    uint64_t flip, neg, sub, prefix;
    unsigned pshift, top, over;
    int reflect;
} first_plan;

static inline uint64_t first_map(const first_plan *restrict P, uint64_t x)
{
    const uint64_t m = (x ^ (P->flip | (P->neg & (0 - (x >> 63))))) - P->sub;
    return P->reflect ? gpk_key_descending64(GPK_KEY_FLOAT, m) : m;
}

static inline size_t first_digit_of(const split_entry *restrict tab, uint64_t prefix, unsigned pshift,
                                    unsigned top, size_t over, uint64_t k)
{
    const uint64_t hi = (k >> 1) >> (pshift - 1); /* pshift may be 64 */
    if (hi == prefix) {
        const split_entry t = tab[(k >> top) & (((uint64_t)1 << HYB_MAX_BITS) - 1)];
        return t.base + (size_t)((k >> t.sh) & ((1u << t.e) - 1));
    }
    return hi < prefix ? 0 : over;
}

/* The plan's fields in registers for the scatter's loop (the compiler
 * cannot tell that its stores leave them alone). */
#define FIRST_PREP()                                                                           \
    const first_plan *restrict fp = tab;                                                       \
    const uint64_t f_flip = fp->flip, f_neg = fp->neg, f_sub = fp->sub, f_prefix = fp->prefix; \
    const unsigned f_pshift = fp->pshift, f_top = fp->top;                                     \
    const size_t f_over = fp->over;                                                            \
    (void)f_prefix, (void)f_pshift, (void)f_over;

/* The scatter of one chunk for one pass, written once per (key, value)
 * shape; KT key type, VT value type, HAS_V whether values move, LOAD the
 * key as read (mapped by the first plan, or as it is), DIGIT the bucket of
 * key k (a bit field, split_digit with the table tab, or first_digit). */
#define DEFINE_SCATTER(NAME, KT, VT, HAS_V, PREP, LOAD, DIGIT)                                             \
    static void NAME(const KT *restrict src, KT *restrict dst, const VT *restrict vsrc, VT *restrict vdst, \
                     size_t lo, size_t hi, unsigned shift, KT mask, size_t *restrict off,                  \
                     unsigned char *restrict wc, unsigned radix, int iota, const void *restrict tab)       \
    {                                                                                                      \
        (void)tab;                                                                                         \
        PREP() enum { KB = WC_BYTES / sizeof(KT) };                                                        \
        if (!wc) {                                                                                         \
            for (size_t i = lo; i < hi; i++) {                                                             \
                KT k = LOAD(src[i]);                                                                       \
                size_t pos = off[DIGIT]++;                                                                 \
                dst[pos] = k;                                                                              \
                if (HAS_V) vdst[pos] = iota ? (VT)i : vsrc[i];                                             \
            }                                                                                              \
            return;                                                                                        \
        }                                                                                                  \
        KT *kbuf = (KT *)wc;                                                                               \
        VT *vbuf = (VT *)(wc + (size_t)radix * WC_BYTES);                                                  \
        unsigned *fill = (unsigned *)(wc + (size_t)radix * WC_BYTES * 3);                                  \
        unsigned *start = fill + radix; /* first slot of the line that is this digit's */                  \
        const int nt = stream_ok(dst) && (!HAS_V || stream_ok(vdst));                                      \
        for (size_t d = 0; d < radix; d++) {                                                               \
            /* Streaming: buffer lines mirror the destination's lines. */                                  \
            unsigned s = nt ? (unsigned)(off[d] % KB) : 0;                                                 \
            fill[d] = start[d] = s;                                                                        \
            off[d] -= s;                                                                                   \
        }                                                                                                  \
        for (size_t i = lo; i < hi; i++) {                                                                 \
            KT k = LOAD(src[i]);                                                                           \
            size_t d = DIGIT;                                                                              \
            unsigned f = fill[d];                                                                          \
            kbuf[d * KB + f] = k;                                                                          \
            if (HAS_V) vbuf[d * KB + f] = iota ? (VT)i : vsrc[i];                                          \
            if (++f == KB) {                                                                               \
                unsigned s = start[d];                                                                     \
                if (nt && s == 0) {                                                                        \
                    stream_bytes(dst + off[d], kbuf + d * KB, KB * sizeof(KT));                            \
                    if (HAS_V) stream_bytes(vdst + off[d], vbuf + d * KB, KB * sizeof(VT));                \
                } else {                                                                                   \
                    memcpy(dst + off[d] + s, kbuf + d * KB + s, (KB - s) * sizeof(KT));                    \
                    if (HAS_V) memcpy(vdst + off[d] + s, vbuf + d * KB + s, (KB - s) * sizeof(VT));        \
                    start[d] = 0;                                                                          \
                }                                                                                          \
                off[d] += KB;                                                                              \
                f = 0;                                                                                     \
            }                                                                                              \
            fill[d] = f;                                                                                   \
        }                                                                                                  \
        for (size_t d = 0; d < radix; d++) {                                                               \
            unsigned s = start[d];                                                                         \
            memcpy(dst + off[d] + s, kbuf + d * KB + s, (fill[d] - s) * sizeof(KT));                       \
            if (HAS_V) memcpy(vdst + off[d] + s, vbuf + d * KB + s, (fill[d] - s) * sizeof(VT));           \
            off[d] += fill[d];                                                                             \
        }                                                                                                  \
        if (nt) stream_fence();                                                                            \
    }

#define FIELD ((k >> shift) & mask)
#define SPLIT split_digit((const split_entry *)tab, k, shift, mask)
#define FIRST first_digit_of(fp->tab, f_prefix, f_pshift, f_top, f_over, k)
/* every key shares the sample's prefix (the detection found no other) */
#define FIRST_IN ((size_t)split_digit(fp->tab, k, f_top, ((uint64_t)1 << HYB_MAX_BITS) - 1))
#define AS_IS(x) (x)
#define MAPPED(x) (((x) ^ (f_flip | (f_neg & (0 - ((x) >> 63))))) - f_sub)
#define REFLECTED(x) gpk_key_descending64(GPK_KEY_FLOAT, MAPPED(x))
#define NO_PREP()
/* The scatter's three value forms (keys alone, 4- and 8-byte values) and
 * NAME, which calls the one of vw bytes (the keys-alone form passes no
 * values and no iota). PREP is the name of a function-like macro, so that
 * its commas reach DEFINE_SCATTER unsplit. */
#define DEFINE_SCATTER_FORMS(NAME, KT, PREP, LOAD, DIGIT)                                                   \
    DEFINE_SCATTER(NAME##_keys, KT, uint32_t, 0, PREP, LOAD, DIGIT)                                         \
    DEFINE_SCATTER(NAME##_v32, KT, uint32_t, 1, PREP, LOAD, DIGIT)                                          \
    DEFINE_SCATTER(NAME##_v64, KT, uint64_t, 1, PREP, LOAD, DIGIT)                                          \
    static inline void NAME(unsigned vw, const void *src, void *dst, const void *vsrc, void *vdst,          \
                            size_t lo, size_t hi, unsigned shift, KT mask, size_t *off, unsigned char *wc,  \
                            unsigned radix, int iota, const void *tab)                                      \
    {                                                                                                       \
        if (vw == 0) NAME##_keys(src, dst, NULL, NULL, lo, hi, shift, mask, off, wc, radix, 0, tab);        \
        else if (vw == 4) NAME##_v32(src, dst, vsrc, vdst, lo, hi, shift, mask, off, wc, radix, iota, tab); \
        else NAME##_v64(src, dst, vsrc, vdst, lo, hi, shift, mask, off, wc, radix, iota, tab);              \
    }
DEFINE_SCATTER_FORMS(scatter32, uint32_t, NO_PREP, AS_IS, FIELD)
DEFINE_SCATTER_FORMS(scatter64, uint64_t, NO_PREP, AS_IS, FIELD)
DEFINE_SCATTER_FORMS(split32, uint32_t, NO_PREP, AS_IS, SPLIT)
DEFINE_SCATTER_FORMS(split64, uint64_t, NO_PREP, AS_IS, SPLIT)
DEFINE_SCATTER_FORMS(first64, uint64_t, FIRST_PREP, MAPPED, FIRST)
DEFINE_SCATTER_FORMS(first_in64, uint64_t, FIRST_PREP, MAPPED, FIRST_IN)
DEFINE_SCATTER_FORMS(first64_r, uint64_t, FIRST_PREP, REFLECTED, FIRST)
DEFINE_SCATTER_FORMS(first_in64_r, uint64_t, FIRST_PREP, REFLECTED, FIRST_IN)

#undef SPLIT
#define SPLIT split_digit(tab, k, shift, mask)
#define DEFINE_COUNT(NAME, KT, DIGIT)                                                       \
    static void NAME(const KT *restrict src, size_t lo, size_t hi, unsigned shift, KT mask, \
                     size_t *restrict hist, const split_entry *restrict tab)                \
    {                                                                                       \
        for (size_t i = lo; i < hi; i++) {                                                  \
            KT k = src[i];                                                                  \
            hist[DIGIT]++;                                                                  \
        }                                                                                   \
    }
DEFINE_COUNT(count32_tab, uint32_t, SPLIT)
DEFINE_COUNT(count64_tab, uint64_t, SPLIT)
static void count32(const uint32_t *restrict src, size_t lo, size_t hi, unsigned shift, uint32_t mask,
                    size_t *restrict hist)
{
    for (size_t i = lo; i < hi; i++) hist[(src[i] >> shift) & mask]++;
}
static void count64(const uint64_t *restrict src, size_t lo, size_t hi, unsigned shift, uint64_t mask,
                    size_t *restrict hist)
{
    for (size_t i = lo; i < hi; i++) hist[(src[i] >> shift) & mask]++;
}

/* The counts of the m keys at k (of kw bytes) by their digit of `digits`
 * (a power of two) values at bit shift, into hist[0..digits). */
static void count_digits(unsigned kw, const void *k, size_t m, unsigned shift, unsigned digits,
                         size_t *restrict hist)
{
    memset(hist, 0, digits * sizeof *hist);
    if (kw == 4) count32((const uint32_t *)k, 0, m, shift, digits - 1, hist);
    else count64((const uint64_t *)k, 0, m, shift, digits - 1, hist);
}

/* Turns the counts h[0..digits) into the digits' first places (exclusive
 * prefix sums), copied to bounds where it is not NULL; returns the total. */
static size_t exclusive_scan(size_t *restrict h, size_t *restrict bounds, unsigned digits)
{
    size_t sum = 0;
    for (unsigned g = 0; g < digits; g++) {
        const size_t c = h[g];
        h[g] = sum;
        if (bounds) bounds[g] = sum;
        sum += c;
    }
    return sum;
}

/* tab: NULL, or the split table (then mask selects g, see split_digit). */
static void scatter_chunk(unsigned kw, unsigned vw, const void *src, void *dst, const void *vsrc, void *vdst,
                          size_t lo, size_t hi, unsigned shift, uint64_t mask, size_t *off, unsigned char *wc,
                          unsigned radix, int iota, const split_entry *tab)
{
    if (kw == 4) {
        uint32_t m = (uint32_t)mask;
        if (tab) split32(vw, src, dst, vsrc, vdst, lo, hi, shift, m, off, wc, radix, iota, tab);
        else scatter32(vw, src, dst, vsrc, vdst, lo, hi, shift, m, off, wc, radix, iota, NULL);
    } else if (tab) split64(vw, src, dst, vsrc, vdst, lo, hi, shift, mask, off, wc, radix, iota, tab);
    else scatter64(vw, src, dst, vsrc, vdst, lo, hi, shift, mask, off, wc, radix, iota, NULL);
}

/* The planned first level's scatter is kept out of line: otherwise gcc 12
 * inlines it into the MSD level's scatter step, and f64 normal keys sort
 * about 5 % slower (docs/architecture.md, "Function length"). */
#if defined(__GNUC__)
#define GPK_OUT_OF_LINE __attribute__((noinline))
#else
#define GPK_OUT_OF_LINE
#endif
static GPK_OUT_OF_LINE void scatter_first(unsigned vw, const void *src, void *dst, const void *vsrc,
                                          void *vdst, size_t lo, size_t hi, size_t *off, unsigned char *wc,
                                          unsigned radix, int iota, const first_plan *P, int clamp)
{
    if (P->reflect) {
        if (!clamp) first_in64_r(vw, src, dst, vsrc, vdst, lo, hi, 0, 0, off, wc, radix, iota, P);
        else first64_r(vw, src, dst, vsrc, vdst, lo, hi, 0, 0, off, wc, radix, iota, P);
    } else if (!clamp) first_in64(vw, src, dst, vsrc, vdst, lo, hi, 0, 0, off, wc, radix, iota, P);
    else first64(vw, src, dst, vsrc, vdst, lo, hi, 0, 0, off, wc, radix, iota, P);
}

/* The detection read of a planned first level: AND/OR of the mapped keys
 * and the count of its buckets; writes nothing. */
#define DEFINE_REDUCE_COUNT_FIRST(NAME, LOAD)                                                        \
    static void NAME(const first_plan *restrict P, const uint64_t *restrict k, size_t lo, size_t hi, \
                     uint64_t *and_out, uint64_t *or_out, size_t *restrict hist)                     \
    {                                                                                                \
        const void *tab = P;                                                                         \
        FIRST_PREP()                                                                                 \
        uint64_t a = ~0ull, o = 0;                                                                   \
        for (size_t i = lo; i < hi; i++) {                                                           \
            const uint64_t x = k[i], m = LOAD(x);                                                    \
            a &= m;                                                                                  \
            o |= m;                                                                                  \
            hist[first_digit_of(fp->tab, f_prefix, f_pshift, f_top, f_over, m)]++;                   \
        }                                                                                            \
        *and_out = a;                                                                                \
        *or_out = o;                                                                                 \
    }
DEFINE_REDUCE_COUNT_FIRST(reduce_count_first_mapped, MAPPED)
DEFINE_REDUCE_COUNT_FIRST(reduce_count_first_reflected, REFLECTED)

static void reduce_count_first(const first_plan *restrict P, const uint64_t *restrict k, size_t lo, size_t hi,
                               uint64_t *and_out, uint64_t *or_out, size_t *restrict hist)
{
    if (P->reflect) reduce_count_first_reflected(P, k, lo, hi, and_out, or_out, hist);
    else reduce_count_first_mapped(P, k, lo, hi, and_out, or_out, hist);
}

/* The order of the sort. The passes sort "sort keys" in ascending order:
 * the mapped keys (key_traits.h), or in descending order their descending
 * sort keys (descending.h: gpk__desc_key32/64), whose map is fused into
 * the same first read and last write as the type's own. The descending
 * map is split here into its cases so that each loop sees its own as a
 * constant: ORDER_XOR, m ^ xor_mask (integers: ~m; key_bits b: the low b
 * bits reversed); ORDER_REFLECT, floats at full width
 * (gpk_key_descending32/64: the reflection below the mapped +inf, NaNs
 * kept last). */
enum { ORDER_ASC, ORDER_XOR, ORDER_REFLECT };
typedef struct {
    gpk_type type;
    int how;
    uint64_t xor_mask;
} key_order;

static key_order order_of(const gpk_radix_job *job)
{
    key_order o = {job->key_type, ORDER_ASC, 0};
    const unsigned width = 8 * job->key_width, b = job->key_bits;
    if (!job->descending) return o;
    if (b > 0 && b < width) {
        o.how = ORDER_XOR;
        o.xor_mask = ((uint64_t)1 << b) - 1;
    } else if (gpk_key_kind(job->key_type) == GPK_KEY_FLOAT) {
        o.how = ORDER_REFLECT;
    } else {
        o.how = ORDER_XOR;
        o.xor_mask = width == 32 ? 0xFFFFFFFFull : ~0ull;
    }
    return o;
}

/* Whether the sort keys differ from the caller's keys (unsigned keys in
 * ascending order are their own). */
static int needs_mapping(const key_order *o)
{
    return o->how != ORDER_ASC || gpk_key_kind(o->type) != GPK_KEY_UNSIGNED;
}

/* Sort key of key x and back, for the order's `how` and xor mask, for
 * W-bit keys (sort_key32 / key_of_sort32, sort_key64 / key_of_sort64). */
// clang-format off
#define DEFINE_SORT_KEY_(W)                                                                        \
    static inline uint##W##_t sort_key##W(gpk_type t, int how, uint##W##_t xor_mask, uint##W##_t x) \
    {                                                                                              \
        const uint##W##_t m = gpk__map_u##W(t, x);                                                 \
        return how == ORDER_XOR ? m ^ xor_mask                                                     \
            : how == ORDER_REFLECT ? gpk_key_descending##W(GPK_KEY_FLOAT, m) : m;                  \
    }                                                                                              \
    static inline uint##W##_t key_of_sort##W(gpk_type t, int how, uint##W##_t xor_mask,            \
                                             uint##W##_t s)                                        \
    {                                                                                              \
        return gpk__unmap_u##W(t, how == ORDER_XOR ? s ^ xor_mask                                  \
                                  : how == ORDER_REFLECT ? gpk_key_descending##W(GPK_KEY_FLOAT, s) \
                                  : s);                                                            \
    }
DEFINE_SORT_KEY_(32)
DEFINE_SORT_KEY_(64)
#undef DEFINE_SORT_KEY_
// clang-format on

/* Runs the statements after TT with TT, a constant copy of the key type t,
 * so that the map functions' switch on the type folds away inside their
 * loop and the loop vectorises (with t itself the switch stays in the
 * loop). */
#define TYPE_CONST_CASE_(T, TT, ...) \
    case T: {                        \
        const gpk_type TT = T;       \
        __VA_ARGS__                  \
    } break;
#define WITH_TYPE_CONST(t, TT, ...)                    \
    do {                                               \
        switch (t) {                                   \
            TYPE_CONST_CASE_(GPK_I32, TT, __VA_ARGS__) \
            TYPE_CONST_CASE_(GPK_F32, TT, __VA_ARGS__) \
            TYPE_CONST_CASE_(GPK_I64, TT, __VA_ARGS__) \
            TYPE_CONST_CASE_(GPK_F64, TT, __VA_ARGS__) \
        default: {                                     \
            const gpk_type TT = (t);                   \
            __VA_ARGS__                                \
        } break;                                       \
        }                                              \
    } while (0)

/* The same for the order: TT the type, HH the order's `how`, both
 * constants (the reflection only for float types). */
#define WITH_HOW_CONST(t, how, HH, ...)                                          \
    do {                                                                         \
        if ((how) == ORDER_XOR) {                                                \
            const int HH = ORDER_XOR;                                            \
            __VA_ARGS__                                                          \
        } else if ((how) == ORDER_REFLECT && gpk_key_kind(t) == GPK_KEY_FLOAT) { \
            const int HH = ORDER_REFLECT;                                        \
            __VA_ARGS__                                                          \
        } else {                                                                 \
            const int HH = ORDER_ASC;                                            \
            __VA_ARGS__                                                          \
        }                                                                        \
    } while (0)
#define WITH_ORDER_CONST(o, TT, HH, ...) \
    WITH_TYPE_CONST((o)->type, TT, WITH_HOW_CONST(TT, (o)->how, HH, __VA_ARGS__);)

/* Counts bits [top_shift, top_shift + 11) of the sort keys [lo, hi) into
 * top while mapping and reducing them: the hybrid's first histogram
 * without a read of its own, valid when the detected range ends where the
 * caller guessed. Keys are read from src and, where they need mapping,
 * written mapped to dst (src itself for the in-place sort). One body per
 * key word KT, whose sort keys SORT_KEY makes. */
#define MAP_REDUCE_COUNT_WIDTH(KT, SORT_KEY)                \
    do {                                                    \
        const KT *k = src, xm = (KT)ord->xor_mask;          \
        KT *out = dst, a = (KT)~0ull, o = 0;                \
        WITH_ORDER_CONST(                                   \
            ord, tc, hc, for (size_t i = lo; i < hi; i++) { \
                KT m = SORT_KEY(tc, hc, xm, k[i]);          \
                if (write) out[i] = m;                      \
                a &= m;                                     \
                o |= m;                                     \
                top[(m >> top_shift) & top_mask]++;         \
            });                                             \
        *and_out = a;                                       \
        *or_out = o;                                        \
    } while (0)
static void map_reduce_count(const key_order *ord, unsigned kw, const void *src, void *dst, size_t lo,
                             size_t hi, uint64_t *and_out, uint64_t *or_out, size_t *restrict top,
                             unsigned top_shift)
{
    const unsigned top_mask = (1u << HYB_MAX_BITS) - 1;
    const int write = needs_mapping(ord);
    if (kw == 4) MAP_REDUCE_COUNT_WIDTH(uint32_t, sort_key32);
    else MAP_REDUCE_COUNT_WIDTH(uint64_t, sort_key64);
}

/* Maps keys from src to dst (keys that are their own sort keys: only reads
 * src) and reduces AND/OR over [lo, hi): one body per key word KT, whose
 * sort keys SORT_KEY makes (sort_key32 or sort_key64). */
#define MAP_AND_REDUCE_WIDTH(KT, SORT_KEY)                      \
    do {                                                        \
        const KT *k = src, xm = (KT)ord->xor_mask;              \
        KT *out = dst, a = (KT)~0ull, o = 0;                    \
        if (!needs_mapping(ord)) {                              \
            for (size_t i = lo; i < hi; i++) {                  \
                a &= k[i];                                      \
                o |= k[i];                                      \
            }                                                   \
        } else {                                                \
            WITH_ORDER_CONST(                                   \
                ord, tc, hc, for (size_t i = lo; i < hi; i++) { \
                    KT m = SORT_KEY(tc, hc, xm, k[i]);          \
                    out[i] = m;                                 \
                    a &= m;                                     \
                    o |= m;                                     \
                });                                             \
        }                                                       \
        *and_out = a;                                           \
        *or_out = o;                                            \
    } while (0)
static void map_and_reduce(const key_order *ord, unsigned kw, const void *src, void *dst, size_t lo,
                           size_t hi, uint64_t *and_out, uint64_t *or_out)
{
    if (kw == 4) MAP_AND_REDUCE_WIDTH(uint32_t, sort_key32);
    else MAP_AND_REDUCE_WIDTH(uint64_t, sort_key64);
}
#undef MAP_AND_REDUCE_WIDTH

/* Turns the sort keys [lo, hi) of src back into keys, into dst (dst may
 * equal src). */
static void unmap_copy(const key_order *ord, unsigned kw, const void *src, void *dst, size_t lo, size_t hi)
{
    if (kw == 4) {
        const uint32_t *s = src, xm = (uint32_t)ord->xor_mask;
        uint32_t *d = dst;
        WITH_ORDER_CONST(ord, tc, hc,
                         for (size_t i = lo; i < hi; i++) d[i] = key_of_sort32(tc, hc, xm, s[i]););
    } else {
        const uint64_t *s = src, xm = ord->xor_mask;
        uint64_t *d = dst;
        WITH_ORDER_CONST(ord, tc, hc,
                         for (size_t i = lo; i < hi; i++) d[i] = key_of_sort64(tc, hc, xm, s[i]););
    }
}

/* ---- The hybrid path: one MSD pass through memory, then every bucket
 * sorted in cache.
 *
 * An LSD sort of 32-bit keys moves every key through DRAM four times
 * (plus one histogram read per pass). The hybrid scatters once by the top
 * d bits of the detected range (d up to HYB_MAX_BITS, chosen so that an
 * average bucket is about HYB_TARGET_BYTES), out of place and stable, as
 * an LSD pass is. Each bucket is then sorted by one thread on its own:
 * read once from the scatter buffer, LSD passes ping-pong between two
 * private buffers that stay in L2, and the last pass writes the bucket to
 * its final place in the caller's array (keys alone: copied there and
 * sorted by a vectorised quicksort in cache instead, see bucket_quick).
 * Per key that is about two trips through DRAM instead of four, and the
 * per-bucket work runs at cache speed. Skewed keys (floats: a few
 * exponents hold most of them) would leave a few huge d-bit buckets, so a
 * level counts the top 11 bits of its range first and, where d-bit
 * buckets would outgrow a thread, scatters by a table instead that splits
 * heavy top values by their next bits (split_plan). A bucket still too
 * large for the private buffers is split again (by one thread, or a
 * team-wide level) or sorted by the team's LSD passes, so no input is
 * slower than before by more than the one MSD pass.
 *
 * Stable throughout: both kinds of pass keep the order of equal digits, so
 * keys, pairs and sigma come out as the reference's stable order. */
#ifndef HYB_TARGET_BYTES
#define HYB_TARGET_BYTES ((size_t)128 << 10) /* keys + values of an average bucket */
#endif
/* Below: the LSD path. One thread, u32 keys, the hybrid against LSD:
 * 2^16 0.5 / 0.5 ms, 2^18 1.9 / 2.6, 2^20 8.8 / 16.1; u32 pairs at 2^18
 * 2.9 / 2.9 (docs/perf/radix.md). */
#define HYB_MIN_KEYS ((size_t)1 << 18)
#define HYB_MIN_BITS 17 /* fewer bits: at most two LSD passes, nothing to save */
#ifndef BUCKET_DIGIT_BITS
#define BUCKET_DIGIT_BITS 11
#endif

enum { PATH_AUTO, PATH_LSD, PATH_HYBRID, PATH_CACHE };

/* A test or a measurement may force a path (gpk__test.cpu_radix_path:
 * PATH_LSD, PATH_HYBRID, PATH_CACHE); else the size and bit range decide. */
static int path_forced(void)
{
    const int p = (int)gpk__hook(gpk__test.cpu_radix_path, PATH_AUTO);
    return p == PATH_LSD || p == PATH_HYBRID || p == PATH_CACHE ? p : PATH_AUTO;
}

/* A test may make 8-byte keys that need mapping take the counted first
 * level (mapped keys written by the detection, counted again when skewed)
 * instead of the sampled plan (first_plan). */
static int sampled_first_allowed(void) { return gpk__hook(gpk__test.cpu_radix_first_count, 0) != 1; }

/* MSD digit width for n keys of `width` bytes (keys + values): the smallest
 * d that brings the average bucket under the target, within 1..HYB_MAX_BITS. */
static unsigned hyb_digit_bits(size_t n, size_t width)
{
    size_t target = HYB_TARGET_BYTES / width;
    unsigned d = 1;
    while (d < HYB_MAX_BITS && (n >> d) > target) d++;
    return d;
}

/* A wider MSD digit where it saves the buckets a pass: buckets left with
 * up to two in-cache digits of BUCKET_DIGIT_BITS, as long as they keep
 * 2^13 keys or more on average (below, per-bucket counters cost more). */
static unsigned hyb_widen(unsigned d, unsigned bits, size_t m)
{
    const unsigned two = 2 * BUCKET_DIGIT_BITS;
    if (bits > d + two && bits - two <= HYB_MAX_BITS && (m >> (bits - two)) >= ((size_t)1 << 13))
        return bits - two;
    return d;
}

/* Largest bucket one thread sorts in its private buffers: four times the
 * target, and at least twice the average when HYB_MAX_BITS cannot bring the
 * average down to the target. */
static size_t hyb_bucket_cap(size_t n, size_t width, unsigned d)
{
    size_t cap = 4 * (HYB_TARGET_BYTES / width), avg = (n >> d) + 1;
    return cap > 4 * avg ? cap : 4 * avg;
}

/* The team's barrier. OpenMP's own barriers spin for milliseconds before
 * they sleep (libgomp, unless OMP_WAIT_POLICY says otherwise), so on a
 * machine where another process holds a core, the thread that waits burns
 * the time slice that the thread it waits for needs. This one spins a few
 * microseconds, then sleeps (a futex on Linux, sched_yield elsewhere).
 * Sense by generation: the last thread in resets the count, then bumps
 * the generation (release) that the others wait on (acquire). */
#define TEAM_SPINS 2000

/* One step of a thread's spin while it waits on another: a pause, which
 * leaves the core's resources to a sibling thread. */
static inline void spin_pause(void)
{
#ifdef __SSE2__
    _mm_pause();
#endif
}

typedef struct {
    atomic_uint arrived, generation;
    atomic_uint threads; /* the team's size: each thread stores it on entry
                            (the same value), as OpenMP may give fewer
                            threads than asked (nested in a parallel region) */
} team_barrier;

static void team_barrier_init(team_barrier *b, unsigned threads)
{
    atomic_init(&b->arrived, 0);
    atomic_init(&b->generation, 0);
    atomic_init(&b->threads, threads);
}

static void team_wait(team_barrier *b)
{
    const unsigned threads = atomic_load_explicit(&b->threads, memory_order_relaxed);
    if (threads < 2) return;
    const unsigned gen = atomic_load_explicit(&b->generation, memory_order_acquire);
    if (atomic_fetch_add_explicit(&b->arrived, 1, memory_order_acq_rel) + 1 == threads) {
        atomic_store_explicit(&b->arrived, 0, memory_order_relaxed);
        atomic_fetch_add_explicit(&b->generation, 1, memory_order_release);
#ifdef __linux__
        syscall(SYS_futex, (unsigned *)&b->generation, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
#endif
        return;
    }
    for (int i = 0; i < TEAM_SPINS; i++) {
        if (atomic_load_explicit(&b->generation, memory_order_acquire) != gen) return;
        spin_pause();
    }
    while (atomic_load_explicit(&b->generation, memory_order_acquire) == gen) {
#ifdef __linux__
        syscall(SYS_futex, (unsigned *)&b->generation, FUTEX_WAIT_PRIVATE, gen, NULL, NULL, 0);
#else
        sched_yield();
#endif
    }
}

/* Shared state of one sort, as every thread of the team sees it. */
typedef struct {
    key_order ord;
    unsigned kw, vw;
    size_t n;
    void *keys, *vals;         /* the caller's arrays (vals: values or sigma) */
    void *alt_keys, *alt_vals; /* scratch of n keys and n values */
    size_t *hist;              /* blocks x radix_stride counters */
    size_t blocks;             /* a team pass's work units (see block_lo) */
    team_barrier *bar;         /* every barrier inside the team's region */
    unsigned radix_stride;
    size_t wc_bytes;
    unsigned char *wc;  /* per-thread write-combining buffers, or NULL */
    int bucket_quick;   /* the quicksort of the hybrid's buckets (bucket_quick), or 0 */
    size_t quick_bytes; /* ... for buckets up to this many bytes */
} sort_state;

/* A team pass over m keys is cut into S->blocks blocks, handed out one at
 * a time (schedule(dynamic, 1)), each with its own row of counters: a
 * thread that another process keeps off its core delays only the block it
 * holds, and the others take the rest, where fixed shares per thread
 * would make the whole team wait for the slowest share. Equal digits keep
 * their order across blocks (digit-major, block-minor offsets), whichever
 * thread scatters a block. */
static inline size_t block_lo(size_t m, size_t j, size_t blocks) { return m * j / blocks; }

/* Turns the blocks' counts of digits 0..digits-1 into their scatter
 * offsets (from base) and returns the total. */
static size_t scan_blocks(const sort_state *S, unsigned digits, size_t base, size_t *bounds)
{
    size_t sum = base;
    for (unsigned d = 0; d < digits; d++) {
        if (bounds) bounds[d] = sum;
        for (size_t j = 0; j < S->blocks; j++) {
            size_t c = S->hist[j * S->radix_stride + d];
            S->hist[j * S->radix_stride + d] = sum;
            sum += c;
        }
    }
    return sum;
}

/* LSD passes over m keys at ka (values at va) with kb / vb as the other
 * buffer, run by every thread of the team (it holds barriers). The result
 * ends in a (returns 0) or b (returns 1). first: where the first pass reads
 * the keys (ka, or the copying sort's input: ka is then written, never
 * read, before the second pass). iota: the first pass's values are the
 * source indices (sigma). */
static int lsd_team(const sort_state *S, const void *first, void *ka, void *kb, void *va, void *vb, size_t m,
                    const pass_plan *plan, unsigned passes, int iota)
{
    const int tid = omp_get_thread_num();
    const size_t B = S->blocks;
    unsigned char *my_wc = S->wc ? S->wc + (size_t)tid * S->wc_bytes : NULL;
    void *src = (void *)first, *dst = kb, *vsrc = va, *vdst = vb;
    for (unsigned q = 0; q < passes; q++) {
        const unsigned shift = plan[q].shift, digits = 1u << plan[q].bits;
        const uint64_t mask = digits - 1;
#pragma omp for schedule(dynamic, 1) nowait
        for (size_t j = 0; j < B; j++) {
            size_t *h = S->hist + j * S->radix_stride;
            memset(h, 0, digits * sizeof *h);
            if (S->kw == 4) count32(src, block_lo(m, j, B), block_lo(m, j + 1, B), shift, (uint32_t)mask, h);
            else count64(src, block_lo(m, j, B), block_lo(m, j + 1, B), shift, mask, h);
        }
        team_wait(S->bar);
#pragma omp single nowait
        scan_blocks(S, digits, 0, NULL);
        team_wait(S->bar);
#pragma omp for schedule(dynamic, 1) nowait
        for (size_t j = 0; j < B; j++)
            scatter_chunk(S->kw, S->vw, src, dst, vsrc, vdst, block_lo(m, j, B), block_lo(m, j + 1, B), shift,
                          mask, S->hist + j * S->radix_stride, my_wc, digits, iota && q == 0, NULL);
        team_wait(S->bar);
        void *t1 = src;
        src = dst;
        dst = q == 0 ? ka : t1;
        void *t2 = vsrc;
        vsrc = vdst;
        vdst = t2;
    }
    return passes > 0 && src != ka;
}

/* Brings [off, off + m) home from `from` (keys) and `vfrom` (values;
 * either may already be the caller's array) and undoes the key mapping,
 * block by block over the team (no barrier after it). */
static void finish_share(const sort_state *S, const void *from, const void *vfrom, size_t off, size_t m)
{
    const unsigned kw = S->kw, vw = S->vw;
    const size_t B = S->blocks;
#pragma omp for schedule(dynamic, 1) nowait
    for (size_t j = 0; j < B; j++) {
        const size_t lo = off + block_lo(m, j, B), hi = off + block_lo(m, j + 1, B);
        if (needs_mapping(&S->ord)) unmap_copy(&S->ord, kw, from, S->keys, lo, hi);
        else if (from != S->keys)
            memcpy((char *)S->keys + lo * kw, (const char *)from + lo * kw, (hi - lo) * kw);
        if (vw && vfrom != S->vals)
            memcpy((char *)S->vals + lo * vw, (const char *)vfrom + lo * vw, (hi - lo) * vw);
    }
}

#define DEFINE_REDUCE(NAME, KT)                                                             \
    static void NAME(const KT *restrict src, size_t m, uint64_t *and_out, uint64_t *or_out) \
    {                                                                                       \
        KT a = (KT) ~(KT)0, o = 0;                                                          \
        for (size_t i = 0; i < m; i++) {                                                    \
            a &= src[i];                                                                    \
            o |= src[i];                                                                    \
        }                                                                                   \
        *and_out = a;                                                                       \
        *or_out = o;                                                                        \
    }
DEFINE_REDUCE(reduce32, uint32_t)
DEFINE_REDUCE(reduce64, uint64_t)

/* Histograms of every pass in one read (the bucket is in cache by now:
 * the extra passes over it would cost more than the counters). */
#define DEFINE_HISTS(NAME, KT)                                                                 \
    static void NAME(const KT *restrict src, size_t m, const pass_plan *plan, unsigned passes, \
                     size_t *restrict hist)                                                    \
    {                                                                                          \
        for (unsigned q = 0; q < passes; q++)                                                  \
            memset(hist + ((size_t)q << BUCKET_DIGIT_BITS), 0, sizeof *hist << plan[q].bits);  \
        if (passes == 2) { /* the common case (32-bit keys): shifts and masks in registers */  \
            const unsigned s0 = plan[0].shift, s1 = plan[1].shift;                             \
            const KT m0 = ((KT)1 << plan[0].bits) - 1, m1 = ((KT)1 << plan[1].bits) - 1;       \
            size_t *restrict h1 = hist + ((size_t)1 << BUCKET_DIGIT_BITS);                     \
            for (size_t i = 0; i < m; i++) {                                                   \
                KT k = src[i];                                                                 \
                hist[(k >> s0) & m0]++;                                                        \
                h1[(k >> s1) & m1]++;                                                          \
            }                                                                                  \
            return;                                                                            \
        }                                                                                      \
        if (passes == 3) { /* 32-bit keys in three digits, 64-bit keys in a deep bucket */     \
            const unsigned s0 = plan[0].shift, s1 = plan[1].shift, s2 = plan[2].shift;         \
            const KT m0 = ((KT)1 << plan[0].bits) - 1, m1 = ((KT)1 << plan[1].bits) - 1;       \
            const KT m2 = ((KT)1 << plan[2].bits) - 1;                                         \
            size_t *restrict h1 = hist + ((size_t)1 << BUCKET_DIGIT_BITS);                     \
            size_t *restrict h2 = hist + ((size_t)2 << BUCKET_DIGIT_BITS);                     \
            for (size_t i = 0; i < m; i++) {                                                   \
                KT k = src[i];                                                                 \
                hist[(k >> s0) & m0]++;                                                        \
                h1[(k >> s1) & m1]++;                                                          \
                h2[(k >> s2) & m2]++;                                                          \
            }                                                                                  \
            return;                                                                            \
        }                                                                                      \
        for (size_t i = 0; i < m; i++) {                                                       \
            KT k = src[i];                                                                     \
            for (unsigned q = 0; q < passes; q++)                                              \
                hist[((size_t)q << BUCKET_DIGIT_BITS) +                                        \
                     ((k >> plan[q].shift) & (((KT)1 << plan[q].bits) - 1))]++;                \
        }                                                                                      \
    }
DEFINE_HISTS(hists32, uint32_t)
DEFINE_HISTS(hists64, uint64_t)

/* Inside a bucket. The bucket is in cache, so passes over it are cheap
 * and the cost is per key and pass: a range of up to two digits takes LSD
 * passes; a wider one (64-bit keys) an MSD pass that leaves sub-buckets of
 * about SMALL_SORT keys, each finished the same way, the smallest by
 * insertion sort. Every step is stable. */
#ifndef SMALL_SORT
#define SMALL_SORT 16
#endif
#define REC_DEPTH 8 /* MSD levels inside a bucket; deeper, LSD passes finish */
#ifndef NEARLY_MIN_KEYS
#define NEARLY_MIN_KEYS 1024 /* from here, top digits + insertion sort (sort_rec) */
#endif
/* Per-thread counters per depth: an MSD level's offsets and bounds, or the
 * LSD passes' histograms (up to 6 passes of 11 bits for 64-bit keys). */
#define REC_SLAB ((size_t)6 << BUCKET_DIGIT_BITS)

typedef struct {
    char *k, *v; /* keys and values of one region (v NULL without values) */
} span;

static span span_at(span s, size_t i, unsigned kw, unsigned vw)
{
    span r = {s.k + i * kw, s.v ? s.v + i * vw : NULL};
    return r;
}

#define DEFINE_INSERTION(NAME, KT, VT, HAS_V)                                             \
    static void NAME(KT *restrict k, VT *restrict v, size_t m)                            \
    {                                                                                     \
        for (size_t i = 1, j; i < m; i++) GPK__INSERTION_STEP(KT, VT, k, v, HAS_V, i, j); \
    }
/* As insertion, but gives up once it has moved `budget` keys (returns 0).
 * Equal keys never pass each other, so a sort that gives up leaves them in
 * their input order and a stable sort can take over from there. */
#define DEFINE_INSERTION_BOUNDED(NAME, KT, VT, HAS_V)                        \
    static int NAME(KT *restrict k, VT *restrict v, size_t m, size_t budget) \
    {                                                                        \
        for (size_t i = 1, j; i < m; i++) {                                  \
            if (k[i - 1] <= k[i]) continue;                                  \
            GPK__INSERTION_STEP(KT, VT, k, v, HAS_V, i, j);                  \
            if (i - j > budget) return 0;                                    \
            budget -= i - j;                                                 \
        }                                                                    \
        return 1;                                                            \
    }
DEFINE_INSERTION_BOUNDED(nearly64, uint64_t, uint32_t, 0)
DEFINE_INSERTION_BOUNDED(nearly64_v32, uint64_t, uint32_t, 1)
DEFINE_INSERTION_BOUNDED(nearly64_v64, uint64_t, uint64_t, 1)
DEFINE_INSERTION(insertion32, uint32_t, uint32_t, 0)
DEFINE_INSERTION(insertion32_v32, uint32_t, uint32_t, 1)
DEFINE_INSERTION(insertion32_v64, uint32_t, uint64_t, 1)
DEFINE_INSERTION(insertion64, uint64_t, uint32_t, 0)
DEFINE_INSERTION(insertion64_v32, uint64_t, uint32_t, 1)
DEFINE_INSERTION(insertion64_v64, uint64_t, uint64_t, 1)

static void insertion(unsigned kw, unsigned vw, span s, size_t m)
{
    if (kw == 4) {
        if (vw == 0) insertion32((uint32_t *)s.k, NULL, m);
        else if (vw == 4) insertion32_v32((uint32_t *)s.k, (uint32_t *)s.v, m);
        else insertion32_v64((uint32_t *)s.k, (uint64_t *)s.v, m);
    } else {
        if (vw == 0) insertion64((uint64_t *)s.k, NULL, m);
        else if (vw == 4) insertion64_v32((uint64_t *)s.k, (uint32_t *)s.v, m);
        else insertion64_v64((uint64_t *)s.k, (uint64_t *)s.v, m);
    }
}

/* 64-bit keys: insertion sort of nearly sorted keys within `budget` moves. */
static int nearly_sorted_finish(unsigned vw, span s, size_t m, size_t budget)
{
    if (vw == 0) return nearly64((uint64_t *)s.k, NULL, m, budget);
    if (vw == 4) return nearly64_v32((uint64_t *)s.k, (uint32_t *)s.v, m, budget);
    return nearly64_v64((uint64_t *)s.k, (uint64_t *)s.v, m, budget);
}

/* Whether the insertion sort after LSD passes by two digits (counts h0,
 * lower, and h1, upper, of `digits` values each over m keys) would likely
 * give up. Were the digits independent, keys sharing both digits would
 * form about m^2 * sum(p0^2) * sum(p1^2) / 2 pairs, half of them out of
 * order, each one move. Normal(0, 1) doubles at 2^16 keys predict about
 * 0.8 m moves (and take more: the digits are not independent), uniform
 * 64-bit keys 0.004 m. */
static int crowded_top(const size_t *h0, const size_t *h1, unsigned digits, size_t m)
{
    double s0 = 0, s1 = 0;
    for (unsigned g = 0; g < digits; g++) {
        s0 += (double)h0[g] * (double)h0[g];
        s1 += (double)h1[g] * (double)h1[g];
    }
    const double dm = (double)m;
    return s0 * s1 / (4 * dm * dm) > 0.25 * dm; /* predicted moves > m / 4 */
}

static void copy_span(span dst, span src, size_t m, unsigned kw, unsigned vw)
{
    if (dst.k != src.k) memcpy(dst.k, src.k, m * kw);
    if (vw && dst.v != src.v) memcpy(dst.v, src.v, m * vw);
}

/* Sorts m mapped keys at src into out. t0 and t1 are scratch regions of m
 * keys and values; src may be t0 or out (then it is overwritten). work:
 * REC_SLAB counters per remaining depth. */
static void sort_rec(unsigned kw, unsigned vw, span src, span t0, span t1, span out, size_t m, size_t *work,
                     unsigned depth)
{
    if (m <= SMALL_SORT) {
        copy_span(out, src, m, kw, vw);
        insertion(kw, vw, out, m);
        return;
    }
    uint64_t a, o;
    if (kw == 4) reduce32((const uint32_t *)src.k, m, &a, &o);
    else reduce64((const uint64_t *)src.k, m, &a, &o);
    unsigned begin, end;
    gpk__radix_range_from_masks(a, o, &begin, &end);
    pass_plan plan[64];
    /* Narrower digits for a small bucket: fewer counters to clear and scan. */
    const unsigned width = m >= 4096 ? BUCKET_DIGIT_BITS : 8;
    unsigned passes = plan_passes_w(begin, end, 0, width, plan);
    /* X takes the first pass's output, so it must not be src. */
    span X = src.k == t0.k ? t1 : t0, Y = src.k == t0.k ? t0 : t1;
    if (passes == 0) {
        copy_span(out, src, m, kw, vw);
        return;
    }
    /* MSD where LSD would take four or more passes (64-bit keys): its digit
     * shrinks with the bucket, so a sub-bucket just above SMALL_SORT costs
     * one small pass, not six. */
    if (passes <= 3 || depth + 1 >= REC_DEPTH) {
        if (kw == 4) hists32((const uint32_t *)src.k, m, plan, passes, work);
        else hists64((const uint64_t *)src.k, m, plan, passes, work);
        for (unsigned q = 0; q < passes; q++)
            exclusive_scan(work + ((size_t)q << BUCKET_DIGIT_BITS), NULL, 1u << plan[q].bits);
        /* A single pass cannot scatter onto its own source: it goes
         * through X and is copied home. */
        const int via_x = passes == 1 && src.k == out.k;
        for (unsigned q = 0; q < passes; q++) {
            const int last = q + 1 == passes && !via_x;
            span dst = last ? out : (q & 1 ? Y : X);
            scatter_chunk(kw, vw, src.k, dst.k, src.v, dst.v, 0, m, plan[q].shift,
                          ((uint64_t)1 << plan[q].bits) - 1, work + ((size_t)q << BUCKET_DIGIT_BITS), NULL,
                          1u << plan[q].bits, 0, NULL);
            src = dst;
        }
        if (via_x) copy_span(out, src, m, kw, vw);
        return;
    }
    /* A wide range (64-bit keys) in a bucket large enough: two LSD passes
     * by its top two digits leave the keys sorted but for the few that
     * share both (when the keys spread over the range), and an insertion
     * sort finishes, within m moves. Keys that crowd below the top digits
     * take the MSD way from where it gave up, or at once where the two
     * digits' counts predict more moves than that (crowded_top). */
    if (kw == 8 && m >= NEARLY_MIN_KEYS) {
        pass_plan top[2] = {{end - 2 * width, width}, {end - width, width}};
        hists64((const uint64_t *)src.k, m, top, 2, work);
        if (!crowded_top(work, work + ((size_t)1 << BUCKET_DIGIT_BITS), 1u << width, m)) {
            for (unsigned q = 0; q < 2; q++)
                exclusive_scan(work + ((size_t)q << BUCKET_DIGIT_BITS), NULL, 1u << width);
            scatter_chunk(kw, vw, src.k, X.k, src.v, X.v, 0, m, top[0].shift, ((uint64_t)1 << width) - 1,
                          work, NULL, 1u << width, 0, NULL);
            scatter_chunk(kw, vw, X.k, out.k, X.v, out.v, 0, m, top[1].shift, ((uint64_t)1 << width) - 1,
                          work + ((size_t)1 << BUCKET_DIGIT_BITS), NULL, 1u << width, 0, NULL);
            if (nearly_sorted_finish(vw, out, m, m)) return;
            src = out;
            X = t0;
            Y = t1;
        }
    }
    /* One MSD pass by the top d bits into X, then every sub-bucket. */
    unsigned d = 1;
    while (d < BUCKET_DIGIT_BITS && d < end - begin && (m >> d) > SMALL_SORT / 2) d++;
    const unsigned digits = 1u << d, shift = end - d;
    size_t *off = work, *bounds = work + digits;
    count_digits(kw, src.k, m, shift, digits, off);
    bounds[digits] = exclusive_scan(off, bounds, digits);
    scatter_chunk(kw, vw, src.k, X.k, src.v, X.v, 0, m, shift, digits - 1, off, NULL, digits, 0, NULL);
    for (unsigned g = 0; g < digits; g++) {
        size_t b0 = bounds[g], mm = bounds[g + 1] - b0;
        if (mm == 0) continue;
        span xs = span_at(X, b0, kw, vw);
        sort_rec(kw, vw, xs, xs, span_at(Y, b0, kw, vw), span_at(out, b0, kw, vw), mm, work + REC_SLAB,
                 depth + 1);
    }
}

static int quick_sort_keys(int which, void *keys, size_t n, unsigned width);

/* One thread sorts a bucket of m keys at src (values at vsrc) into kout /
 * vout and unmaps the keys: keys alone by the quicksort S->bucket_quick
 * (copied to kout, sorted there), else by sort_rec's passes through its
 * private buffers tmp[0], tmp[1] (cap keys and cap values each). src may
 * be kout itself (a bucket of a second MSD level). */
static void sort_bucket(const sort_state *S, const void *src, const void *vsrc, void *kout, void *vout,
                        size_t m, unsigned char *tmp[2], size_t cap, size_t *work)
{
    const unsigned kw = S->kw, vw = S->vw;
    if (S->bucket_quick && m * kw <= S->quick_bytes) {
        if (src != kout) memcpy(kout, src, m * kw);
        src = kout; /* if the quicksort refuses, sort_rec sorts the keys where they are */
        if (quick_sort_keys(S->bucket_quick, kout, m, kw) == 0) {
            if (needs_mapping(&S->ord)) unmap_copy(&S->ord, kw, kout, kout, 0, m);
            return;
        }
    }
    span s = {(char *)src, (char *)vsrc}, out = {kout, vout};
    span t0 = {(char *)tmp[0], vw ? (char *)tmp[0] + cap * kw : NULL};
    span t1 = {(char *)tmp[1], vw ? (char *)tmp[1] + cap * kw : NULL};
    sort_rec(kw, vw, s, t0, t1, out, m, work, 0);
    if (needs_mapping(&S->ord)) unmap_copy(&S->ord, kw, kout, kout, 0, m);
}

/* Levels of MSD passes a skewed input may take (each takes 3 or more bits,
 * so 64-bit keys need at most 22); beyond, the team's LSD passes finish. */
#define HYB_LEVELS 24
#define FIRST_MIN_KEYS 64 /* a planned first level from here (hybrid only: 2^18 unless forced) */
#define FIRST_SAMPLES ((size_t)1 << 16)

typedef struct {
    size_t cap;                /* largest bucket one thread sorts */
    size_t *bounds;            /* HYB_LEVELS x (2^HYB_MAX_BITS + 1) bucket starts */
    uint64_t *ands, *ors;      /* a cache line apart per block */
    unsigned char *per_thread; /* per thread: pass histograms, then tmp[0], tmp[1] */
    size_t lhist_bytes, tmp_bytes;
    split_entry tab[(size_t)1 << HYB_MAX_BITS]; /* the split of the level being scattered */
    const first_plan *first;                    /* level 0 planned from a sample, counted by the detection */
    unsigned first_buckets;
    int first_clamp; /* some keys lie outside the sample's prefix */
    struct {
        unsigned begin, end, digit_bits, passes;
        unsigned buckets; /* 0: digits of digit_bits bits; else the split's bucket count */
        int lsd;
        pass_plan plan[64];
    } lv[HYB_LEVELS];
} hyb_state;

/* Skewed keys (floats: a few exponents hold most keys) leave some d-bit
 * buckets far above what one thread sorts in cache, and those cost the
 * team another pass through memory each. From the counts of the top
 * HYB_MAX_BITS bits of the range (h), this plans buckets of about
 * `target` keys instead: a heavy top value g is split by its next e bits
 * (assumed even: where they are not, a bucket goes one level down as
 * before), light neighbours share a bucket. Returns the bucket count
 * (at most 2^HYB_MAX_BITS). below: bits of the range under g. */
static unsigned split_plan(const size_t *h, size_t target, unsigned below, unsigned shift,
                           unsigned max_buckets, split_entry *tab)
{
    const unsigned G = 1u << HYB_MAX_BITS, max_e = below < HYB_MAX_BITS ? below : HYB_MAX_BITS;
    for (;; target *= 2) {
        unsigned nb = 0;
        size_t run = 0; /* keys in the open shared bucket; none open when 0 */
        for (unsigned g = 0; g < G && nb <= max_buckets; g++) {
            unsigned e = 0;
            while (e < max_e && (h[g] >> e) > target) e++;
            if (e == 0 && run > 0 && run + h[g] <= target) {
                tab[g].base = (uint16_t)(nb - 1);
                run += h[g];
            } else {
                tab[g].base = (uint16_t)(nb < max_buckets ? nb : 0);
                nb += 1u << e;
                run = e == 0 ? h[g] + 1 : 0; /* + 1: open even when empty */
            }
            tab[g].e = (uint8_t)e;
            tab[g].sh = (uint8_t)(shift - e);
        }
        if (nb <= max_buckets) return nb;
    }
}

/* Per-thread counters of one solo MSD level: offsets and bounds. */
#define SOLO_DEPTH 8
#define SOLO_SLAB (((size_t)2 << HYB_MAX_BITS) + 8)

/* A bucket too big for the private buffers but small enough that the team
 * has other work: one thread splits it with its own MSD pass (through
 * memory, with its write-combining buffer) and sorts the parts, without a
 * barrier. Only the team's passes wait for each other, and on a busy
 * machine a barrier waits for the slowest thread's time slice. */
static void solo_bucket(const sort_state *S, const hyb_state *H, size_t off, size_t m, int in_keys,
                        unsigned char *tmp[2], size_t *rec_work, size_t *solo_work, unsigned depth)
{
    const unsigned kw = S->kw, vw = S->vw;
    char *cur = (char *)(in_keys ? S->keys : S->alt_keys) + off * kw;
    char *oth = (char *)(in_keys ? S->alt_keys : S->keys) + off * kw;
    char *vcur = vw ? (char *)(in_keys ? S->vals : S->alt_vals) + off * vw : NULL;
    char *voth = vw ? (char *)(in_keys ? S->alt_vals : S->vals) + off * vw : NULL;
    char *kout = (char *)S->keys + off * kw, *vout = vw ? (char *)S->vals + off * vw : NULL;
    if (m <= H->cap) {
        sort_bucket(S, cur, vcur, kout, vout, m, tmp, H->cap, rec_work);
        return;
    }
    unsigned char *wc = S->wc ? S->wc + (size_t)omp_get_thread_num() * S->wc_bytes : NULL;
    uint64_t a, o;
    if (kw == 4) reduce32((const uint32_t *)cur, m, &a, &o);
    else reduce64((const uint64_t *)cur, m, &a, &o);
    unsigned begin, end;
    gpk__radix_range_from_masks(a, o, &begin, &end);
    if (end - begin < HYB_MIN_BITS || depth + 1 >= SOLO_DEPTH) {
        /* Few bits left: LSD passes between the two regions, then home. */
        pass_plan plan[64];
        unsigned passes = plan_passes(begin, end, 0, plan);
        char *src = cur, *dst = oth, *vsrc = vcur, *vdst = voth;
        for (unsigned q = 0; q < passes; q++) {
            const unsigned digits = 1u << plan[q].bits;
            count_digits(kw, src, m, plan[q].shift, digits, solo_work);
            exclusive_scan(solo_work, NULL, digits);
            scatter_chunk(kw, vw, src, dst, vsrc, vdst, 0, m, plan[q].shift, digits - 1, solo_work, wc,
                          digits, 0, NULL);
            char *t = src;
            src = dst;
            dst = t;
            t = vsrc;
            vsrc = vdst;
            vdst = t;
        }
        if (src != kout) memcpy(kout, src, m * kw);
        if (vw && vsrc != vout) memcpy(vout, vsrc, m * vw);
        if (needs_mapping(&S->ord)) unmap_copy(&S->ord, kw, kout, kout, 0, m);
        return;
    }
    unsigned d = hyb_digit_bits(m, kw + vw);
    if (d > end - begin) d = end - begin;
    const unsigned digits = 1u << d, shift = end - d;
    size_t *cnt = solo_work, *bounds = solo_work + digits;
    count_digits(kw, cur, m, shift, digits, cnt);
    bounds[digits] = exclusive_scan(cnt, bounds, digits);
    scatter_chunk(kw, vw, cur, oth, vcur, voth, 0, m, shift, digits - 1, cnt, wc, digits, 0, NULL);
    for (unsigned g = 0; g < digits; g++) {
        size_t b0 = bounds[g], mm = bounds[g + 1] - b0;
        if (mm > 0)
            solo_bucket(S, H, off + b0, mm, !in_keys, tmp, rec_work, solo_work + SOLO_SLAB, depth + 1);
    }
}

/* How one MSD level scatters: by `digits` digits of the bits from `shift`
 * up (masked), by the split table `tab` (then digits is its bucket count),
 * or by the sampled first plan (planned: level 0 only). */
typedef struct {
    unsigned digits, shift;
    uint64_t mask;
    const split_entry *tab;
    int planned;
} level_digits;

/* Sets H->lv[level]: the level's bit range and whether it takes LSD passes
 * or one MSD digit. Level 0's range comes from the caller's detection,
 * deeper levels reduce their bucket for it (all-equal buckets then cost
 * nothing more). Every thread returns with H->lv[level] set. */
static void plan_level(const sort_state *S, hyb_state *H, unsigned level, const char *cur, size_t m,
                       unsigned begin, unsigned end)
{
    const size_t B = S->blocks;
    const unsigned kw = S->kw, vw = S->vw;
    if (level > 0) {
#pragma omp for schedule(dynamic, 1) nowait
        for (size_t j = 0; j < B; j++) {
            const size_t lo = block_lo(m, j, B), hi = block_lo(m, j + 1, B);
            if (kw == 4) reduce32((const uint32_t *)cur + lo, hi - lo, &H->ands[8 * j], &H->ors[8 * j]);
            else reduce64((const uint64_t *)cur + lo, hi - lo, &H->ands[8 * j], &H->ors[8 * j]);
        }
        team_wait(S->bar);
    }
#pragma omp single nowait
    {
        unsigned b = begin, e = end;
        if (level > 0) {
            uint64_t a = ~0ull, o = 0;
            for (size_t j = 0; j < B; j++) {
                a &= H->ands[8 * j];
                o |= H->ors[8 * j];
            }
            gpk__radix_range_from_masks(a, o, &b, &e);
        }
        H->lv[level].begin = b;
        H->lv[level].end = e;
        H->lv[level].lsd = level > 0 && (e - b < HYB_MIN_BITS || level + 1 >= HYB_LEVELS);
        if (H->lv[level].lsd) {
            H->lv[level].passes = plan_passes(b, e, 0, H->lv[level].plan);
        } else {
            unsigned d = hyb_digit_bits(m, kw + vw);
            d = d < e - b ? d : e - b;
            H->lv[level].digit_bits = hyb_widen(d, e - b, m);
        }
    }
    team_wait(S->bar);
}

/* The level's counters: block j's row of S->hist, over blocks of m keys. */
#define ROW(j) (S->hist + (j)*S->radix_stride)
#define BLOCK_LO(j) block_lo(m, (j), B)

/* More than HYB_MAX_BITS bits: counts the top HYB_MAX_BITS bits of the
 * range into the rows (unless the detection did: counted), then sees
 * whether d-bit buckets would be too skewed; if so, plans the split table
 * (H->tab, L->tab set) and counts its buckets. Either way the rows hold
 * counts on return: of the split's buckets, or of the top bits. */
static void count_top_or_split(const sort_state *S, hyb_state *H, unsigned level, const char *cur, size_t m,
                               unsigned begin, unsigned end, int counted, size_t *bounds, level_digits *L)
{
    const size_t B = S->blocks;
    const unsigned kw = S->kw, vw = S->vw, d = H->lv[level].digit_bits;
    const unsigned G = 1u << HYB_MAX_BITS, top = end - HYB_MAX_BITS;
    if (!counted) {
#pragma omp for schedule(dynamic, 1) nowait
        for (size_t j = 0; j < B; j++) {
            memset(ROW(j), 0, G * sizeof *ROW(j));
            if (kw == 4) count32((const uint32_t *)cur, BLOCK_LO(j), BLOCK_LO(j + 1), top, G - 1, ROW(j));
            else count64((const uint64_t *)cur, BLOCK_LO(j), BLOCK_LO(j + 1), top, G - 1, ROW(j));
        }
    }
    team_wait(S->bar);
#pragma omp single nowait
    {
        size_t *h = bounds, biggest = 0, run = 0; /* bounds: free until the scan */
        for (unsigned g = 0; g < G; g++) {
            h[g] = 0;
            for (size_t j = 0; j < B; j++) h[g] += ROW(j)[g];
            run += h[g];
            if ((g + 1) % (G >> d) == 0) {
                biggest = run > biggest ? run : biggest;
                run = 0;
            }
        }
        H->lv[level].buckets =
            biggest > H->cap ? split_plan(h, HYB_TARGET_BYTES / (kw + vw), top - begin, top, G, H->tab) : 0;
    }
    team_wait(S->bar);
    if (H->lv[level].buckets) {
        const split_entry *tab = H->tab;
        const unsigned digits = H->lv[level].buckets, shift = top;
        const uint64_t mask = G - 1;
        L->tab = tab;
        L->digits = digits;
        L->shift = shift;
        L->mask = mask;
#pragma omp for schedule(dynamic, 1) nowait
        for (size_t j = 0; j < B; j++) {
            memset(ROW(j), 0, digits * sizeof *ROW(j));
            if (kw == 4)
                count32_tab((const uint32_t *)cur, BLOCK_LO(j), BLOCK_LO(j + 1), shift, (uint32_t)mask,
                            ROW(j), tab);
            else count64_tab((const uint64_t *)cur, BLOCK_LO(j), BLOCK_LO(j + 1), shift, mask, ROW(j), tab);
        }
    }
}

/* Leaves each block's counts of the level's L->digits buckets in its row
 * (the team's threads may still be counting on return: the caller waits).
 * counted: the rows already hold the detection's counts of the top
 * HYB_MAX_BITS bits of the range. */
static void count_level(const sort_state *S, hyb_state *H, unsigned level, const char *cur, size_t m,
                        unsigned begin, unsigned end, int counted, size_t *bounds, level_digits *L)
{
    const size_t B = S->blocks;
    const unsigned kw = S->kw, d = H->lv[level].digit_bits;
    L->digits = 1u << d;
    L->shift = end - d;
    L->mask = L->digits - 1;
    L->tab = NULL;
    L->planned = level == 0 && H->first;
    if (L->planned) {
        L->digits = H->first_buckets;
    } else if (end - begin > HYB_MAX_BITS) {
        count_top_or_split(S, H, level, cur, m, begin, end, counted, bounds, L);
        counted = 1;
    }
    const unsigned digits = L->digits, shift = L->shift;
    const uint64_t mask = L->mask;
    if (L->tab || L->planned) {
        /* counted by the split above, or by the detection */
    } else if (counted) {
        /* The rows hold the top HYB_MAX_BITS bits of the range: fold them
         * down to d (in place: group g is read before slot g is written). */
        const unsigned k = 1u << (HYB_MAX_BITS - d);
#pragma omp for schedule(static) nowait
        for (size_t j = 0; j < B; j++) {
            size_t *h = ROW(j);
            for (unsigned g = 0; g < digits; g++) {
                size_t c = 0;
                for (unsigned i = 0; i < k; i++) c += h[g * k + i];
                h[g] = c;
            }
        }
    } else {
#pragma omp for schedule(dynamic, 1) nowait
        for (size_t j = 0; j < B; j++) {
            memset(ROW(j), 0, digits * sizeof *ROW(j));
            if (kw == 4)
                count32((const uint32_t *)cur, BLOCK_LO(j), BLOCK_LO(j + 1), shift, (uint32_t)mask, ROW(j));
            else count64((const uint64_t *)cur, BLOCK_LO(j), BLOCK_LO(j + 1), shift, mask, ROW(j));
        }
    }
}

/* From the rows' counts: the buckets' starts into bounds (bounds[digits]:
 * m), then the scatter of the level's keys (and values) from cur to oth.
 * Every thread returns after the whole scatter. */
static void scatter_level(const sort_state *S, const hyb_state *H, const level_digits *L, size_t m,
                          size_t *bounds, const char *cur, char *oth, const char *vcur, char *voth, int iota)
{
    const size_t B = S->blocks;
    const unsigned kw = S->kw, vw = S->vw, digits = L->digits;
    team_wait(S->bar);
#pragma omp single nowait
    bounds[digits] = scan_blocks(S, digits, 0, bounds);
    team_wait(S->bar);
    unsigned char *my_wc = S->wc ? S->wc + (size_t)omp_get_thread_num() * S->wc_bytes : NULL;
#pragma omp for schedule(dynamic, 1) nowait
    for (size_t j = 0; j < B; j++) {
        if (L->planned)
            scatter_first(vw, cur, oth, vcur, voth, BLOCK_LO(j), BLOCK_LO(j + 1), ROW(j), my_wc, digits, iota,
                          H->first, H->first_clamp);
        else
            scatter_chunk(kw, vw, cur, oth, vcur, voth, BLOCK_LO(j), BLOCK_LO(j + 1), L->shift, L->mask,
                          ROW(j), my_wc, digits, iota, L->tab);
    }
    team_wait(S->bar);
}
#undef ROW
#undef BLOCK_LO

static void hyb_level(const sort_state *S, hyb_state *H, unsigned level, size_t off, size_t m, int in_keys,
                      unsigned begin, unsigned end, int iota, int counted, const void *src0);

/* The level's buckets (bounds[0..digits], at offset off, in the buffer
 * other than in_keys says): a bucket goes to one thread when it fits its
 * buffers, or when it is small enough (a quarter of a thread's share of
 * this level) that the others have work meanwhile; only larger ones take
 * the team, one level down over the bits below `shift`. */
static void sort_level_buckets(const sort_state *S, hyb_state *H, unsigned level, size_t off, size_t m,
                               int in_keys, unsigned begin, unsigned shift, const size_t *bounds,
                               unsigned digits)
{
    const int T = omp_get_num_threads(), tid = omp_get_thread_num();
    unsigned char *mine = H->per_thread + (size_t)tid * (H->lhist_bytes + 2 * H->tmp_bytes);
    unsigned char *tmp[2] = {mine + H->lhist_bytes, mine + H->lhist_bytes + H->tmp_bytes};
    const size_t solo_max = m / (4 * (size_t)T) > H->cap ? m / (4 * (size_t)T) : H->cap;
    size_t *rec_work = (size_t *)mine, *solo_work = rec_work + REC_DEPTH * REC_SLAB;
#pragma omp for schedule(dynamic, 1) nowait
    for (unsigned g = 0; g < digits; g++) {
        size_t b0 = bounds[g], mm = bounds[g + 1] - b0;
        if (mm > 0 && mm <= solo_max) solo_bucket(S, H, off + b0, mm, in_keys, tmp, rec_work, solo_work, 0);
    }
    for (unsigned g = 0; g < digits; g++) {
        size_t b0 = bounds[g], mm = bounds[g + 1] - b0;
        if (mm > solo_max) hyb_level(S, H, level + 1, off + b0, mm, in_keys, begin, shift, 0, 0, NULL);
    }
}

/* One MSD level over the m keys at offset off, run by every thread of the
 * team. The keys lie in the caller's array (in_keys) or in the scatter
 * buffer; the pass moves them to the other one, buckets that fit a thread
 * are sorted from there into the caller's array, larger ones go one level
 * down. */
static void hyb_level(const sort_state *S, hyb_state *H, unsigned level, size_t off, size_t m, int in_keys,
                      unsigned begin, unsigned end, int iota, int counted, const void *src0)
{
    const unsigned kw = S->kw, vw = S->vw;
    /* src0: the copying sort's input, which level 0 reads in place of the
     * caller's (output) array. */
    char *cur = src0 ? (char *)src0 : (char *)(in_keys ? S->keys : S->alt_keys) + off * kw;
    char *oth = (char *)(in_keys ? S->alt_keys : S->keys) + off * kw;
    char *vcur = vw ? (char *)(in_keys ? S->vals : S->alt_vals) + off * vw : NULL;
    char *voth = vw ? (char *)(in_keys ? S->alt_vals : S->vals) + off * vw : NULL;

    plan_level(S, H, level, cur, m, begin, end);
    begin = H->lv[level].begin;
    end = H->lv[level].end;

    if (H->lv[level].lsd) {
        int in_b = lsd_team(S, cur, cur, oth, vcur, voth, m, H->lv[level].plan, H->lv[level].passes, 0);
        char *k = in_b ? oth : cur, *v = in_b ? voth : vcur;
        /* finish_share takes whole-array bases. */
        finish_share(S, k - off * kw, v ? v - off * vw : NULL, off, m);
        return;
    }

    size_t *bounds = H->bounds + (size_t)level * (((size_t)1 << HYB_MAX_BITS) + 1);
    level_digits L;
    count_level(S, H, level, cur, m, begin, end, counted, bounds, &L);
    scatter_level(S, H, &L, m, bounds, cur, oth, vcur, voth, iota);
    sort_level_buckets(S, H, level, off, m, !in_keys, begin, L.shift, bounds, L.digits);
}

/* As split_plan, from the sample sorted by g (g's keys from start[g] to
 * start[g + 1]): a heavy g takes the fewest next bits e (from the even
 * guess up to two more) that leave no part above the target, as far as
 * the sample shows: within a top value the keys need not spread evenly
 * (normal(0, 1): density 4.5x from one end of [1, 2) to the other). */
static unsigned first_split(const uint64_t *by_g, const size_t *start, size_t target, unsigned below,
                            unsigned shift, unsigned max_buckets, split_entry *tab)
{
    const unsigned G = 1u << HYB_MAX_BITS, max_e = below < HYB_MAX_BITS ? below : HYB_MAX_BITS;
    uint32_t part[1u << HYB_MAX_BITS];
    for (;; target *= 2) {
        unsigned nb = 0;
        size_t run = 0; /* keys in the open shared bucket; none open when 0 */
        for (unsigned g = 0; g < G && nb <= max_buckets; g++) {
            const size_t c = start[g + 1] - start[g];
            unsigned e = 0;
            while (e < max_e && (c >> e) > target) e++;
            for (const unsigned e_even = e; e > 0 && e < max_e && e < e_even + 2; e++) {
                size_t most = 0;
                memset(part, 0, sizeof *part << e);
                for (size_t i = start[g]; i < start[g + 1]; i++) {
                    const uint32_t p = ++part[(by_g[i] >> (shift - e)) & ((1u << e) - 1)];
                    most = p > most ? p : most;
                }
                if (most <= target) break;
            }
            if (e == 0 && run > 0 && run + c <= target) {
                tab[g].base = (uint16_t)(nb - 1);
                run += c;
            } else {
                tab[g].base = (uint16_t)(nb < max_buckets ? nb : 0);
                nb += 1u << e;
                run = e == 0 ? c + 1 : 0; /* + 1: open even when empty */
            }
            tab[g].e = (uint8_t)e;
            tab[g].sh = (uint8_t)(shift - e);
        }
        if (nb <= max_buckets) return nb;
    }
}

/* Plans level 0 from m mapped sample keys of n (see first_plan): the
 * sample's top HYB_MAX_BITS varying bits are counted in h (2^HYB_MAX_BITS
 * counters) and split as a skewed level is (split_plan), in buckets of
 * about HYB_TARGET_BYTES scaled to the sample, at most radix - 2 of them.
 * Returns 0 when the sample varies in too few bits to plan by. */
static int plan_first_level(first_plan *P, uint64_t *sample, size_t m, size_t n, size_t width, unsigned radix,
                            size_t *h)
{
    uint64_t a = ~0ull, o = 0;
    for (size_t i = 0; i < m; i++) {
        a &= sample[i];
        o |= sample[i];
    }
    unsigned begin, end;
    gpk__radix_range_from_masks(a, o, &begin, &end);
    if (end - begin <= HYB_MAX_BITS) return 0;
    const unsigned G = 1u << HYB_MAX_BITS, top = end - HYB_MAX_BITS;
    /* The sample by g (a counting sort into its second half; h[g]: start). */
    uint64_t *by_g = sample + m;
    memset(h, 0, (G + 1) * sizeof *h);
    for (size_t i = 0; i < m; i++) h[((sample[i] >> top) & (G - 1)) + 1]++;
    for (unsigned g = 0; g < G; g++) h[g + 1] += h[g];
    for (size_t i = 0; i < m; i++) by_g[h[(sample[i] >> top) & (G - 1)]++] = sample[i];
    for (unsigned g = G; g > 0; g--) h[g] = h[g - 1];
    h[0] = 0;
    size_t target = (size_t)((double)(HYB_TARGET_BYTES / width) * (double)m / (double)n);
    const unsigned nb = first_split(by_g, h, target ? target : 1, top - begin, top, radix - 2, P->tab);
    for (unsigned g = 0; g < G; g++) P->tab[g].base++;
    P->over = nb + 1;
    P->top = top;
    P->pshift = end;
    P->prefix = (o >> 1) >> (end - 1);
    return 1;
}

/* Sorts that fit the caches: one thread, no team (a second thread costs
 * more to start and to wait for than it would save: under a millisecond
 * of work, while a thread that another process holds off its core
 * stalls the team for its time slice), the keys mapped in one read and
 * sorted by sort_rec as a hybrid bucket is. */
#ifndef CACHE_SORT_BYTES
#define CACHE_SORT_BYTES ((size_t)1 << 20) /* keys + values: an L2 */
#endif

static int cache_sort_fits(const gpk_radix_job *job, unsigned vw)
{
    /* The detection here sees every bit: a key_bits sort (bits above b
     * ignored) and an explicit r take the LSD passes. */
    if (job->radix_bits || job->key_bits) return 0;
    const int path = path_forced();
    return path == PATH_CACHE || (path == PATH_AUTO && job->n * (job->key_width + vw) <= CACHE_SORT_BYTES);
}

static gpk_status cache_sort(gpk_ctx *ctx, const gpk_radix_job *job, unsigned vw)
{
    const size_t n = job->n;
    const unsigned kw = job->key_width;
    /* Each of the two regions: keys, then values on their own line (8-byte
     * values after an odd count of 4-byte keys must stay aligned). */
    const size_t kbytes = (n * kw + 63) & ~(size_t)63;
    const size_t region = kbytes + ((n * vw + 63) & ~(size_t)63);
    const size_t work_bytes = REC_DEPTH * REC_SLAB * sizeof(size_t);
    unsigned char *scratch = gpk__host_scratch(ctx, 2 * region + work_bytes + 64);
    if (!scratch)
        return gpk__fail(ctx, GPK_ENOMEM, "cpu sort: cannot allocate %zu bytes of scratch memory",
                         2 * region + work_bytes);
    scratch += (64 - (uintptr_t)scratch % 64) % 64;
    void *vals = job->sigma ? job->sigma : job->values;
    if (job->sigma) gpk__sigma_iota(job->sigma, job->sigma_width, 0, n);
    const void *input = job->src ? job->src : job->keys;
    uint64_t a, o;
    /* Mapped keys go to the caller's array; unmapped ones are read where they are. */
    const key_order ord = order_of(job);
    map_and_reduce(&ord, kw, input, job->keys, 0, n, &a, &o);
    const void *from = needs_mapping(&ord) ? job->keys : input;
    span src = {(char *)from, (char *)vals}, out = {job->keys, (char *)vals};
    span t0 = {(char *)scratch, vw ? (char *)scratch + kbytes : NULL};
    span t1 = {(char *)scratch + region, vw ? (char *)scratch + region + kbytes : NULL};
    sort_rec(kw, vw, src, t0, t1, out, n, (size_t *)(scratch + 2 * region), 0);
    if (needs_mapping(&ord)) unmap_copy(&ord, kw, job->keys, job->keys, 0, n);
    return GPK_OK;
}

int gpk__radix_cpu_simd_level(void) { return gpk__vector_sort_level(); }

/* Up to this many bytes, 4- and 8-byte keys alone go to the AVX-512
 * quicksort (vector_sort_quick.h) rather than vqsort, the AVX2 quicksort
 * or the radix passes: on a team of one thread the whole array, on a team
 * of two a side of one split (quick_pair_sort). On one AVX-512 core it
 * beat the radix passes from 2^10 to 2^24 keys, by 1.8-3.3x on uniform
 * keys (docs/perf/radix.md, v20, v21), and with its 32-register network
 * it beats vqsort beyond the caches too: u32 2^20-2^24 0.95-0.96x numpy
 * against 0.86-0.89x, f32 0.99-1.06x against 0.83-0.93x, f64 0.82-0.92x
 * against 0.74-0.78x; u64 0.90-0.94x against 0.95-0.96x, within the
 * two runs' spread (v23). The test hook cpu_avx512_sort_bytes overrides
 * it. */
#ifndef AVX512_SORT_BYTES
#define AVX512_SORT_BYTES SIZE_MAX
#endif

size_t gpk__radix_cpu_avx512_bytes(void)
{
    if (gpk__avx512_sort_level() != GPK_SIMD_AVX512) return 0;
    const long long forced = gpk__hook(gpk__test.cpu_avx512_sort_bytes, -1);
    return forced < 0 ? AVX512_SORT_BYTES : (size_t)forced;
}

/* Up to this many bytes, 4- and 8-byte keys alone that the AVX-512
 * quicksort does not take go to the AVX2 quicksort (vector_sort_quick.h;
 * but where radix_wins), at the AVX2 level, or without Highway at any
 * level that has AVX2 (where vqsort's AVX-512 code is built in, it keeps
 * those keys at the AVX-512 level): the whole array on a team of one
 * thread, a side of one split on a team of two. On one AVX2 core it
 * beats vqsort's AVX2 code on 4-byte keys from 2^12 to 2^24
 * keys (u32 2^20 5.5 against 6.0 ms, 2^24 114 against 120) and the radix
 * passes at every size (docs/perf/radix.md, v19-v21). The test hook
 * cpu_avx2_sort_bytes overrides it. */
#ifndef AVX2_SORT_BYTES
#define AVX2_SORT_BYTES SIZE_MAX
#endif

size_t gpk__radix_cpu_avx2_bytes(void)
{
    if (gpk__avx2_sort_level() != GPK_SIMD_AVX2) return 0;
#ifdef GPK_HAVE_VECTOR_SORT
    if (gpk__vector_sort_level() == GPK_SIMD_AVX512) return 0;
#endif
    const long long forced = gpk__hook(gpk__test.cpu_avx2_sort_bytes, -1);
    return forced < 0 ? AVX2_SORT_BYTES : (size_t)forced;
}

const char *gpk_cpu_sort_simd(void)
{
#ifdef GPK_HAVE_VECTOR_SORT
    return gpk__simd_level_name(gpk__vector_sort_level());
#else
    return gpk__radix_cpu_avx512_bytes() > 0 ? "avx512 (without Highway)"
        : gpk__radix_cpu_avx2_bytes() > 0    ? "avx2 (without Highway)"
                                             : "portable (without Highway)";
#endif
}

/* Whether the job's keys look narrow: integers (their sort keys differ
 * from them in the sign bit at most), at least QUICK_NARROW_MIN of
 * them, whose sample of 512 keys at equal strides differs in the low
 * QUICK_NARROW_BITS bits only, without being all equal. The radix passes
 * sort such keys in at most three passes, faster than the AVX2 quicksort
 * (u32 2^16, values below 1024: 0.22 against 0.37 ms, docs/perf/radix.md),
 * which in turn finishes all-equal keys in one partition. A sample that
 * misjudges costs time, never correctness. */
#define QUICK_NARROW_MIN 2048
#define QUICK_NARROW_BITS 24
static int narrow_ints(const gpk_radix_job *job)
{
    if (gpk_key_kind(job->key_type) == GPK_KEY_FLOAT || job->n < QUICK_NARROW_MIN) return 0;
    const void *k = job->src ? job->src : job->keys;
    const size_t stride = job->n / 512;
    uint64_t differ = 0;
    for (size_t i = 0; i < 512; i++)
        differ |= job->key_width == 4
            ? (uint64_t)(((const uint32_t *)k)[i * stride] ^ ((const uint32_t *)k)[0])
            : ((const uint64_t *)k)[i * stride] ^ ((const uint64_t *)k)[0];
    return differ != 0 && !(differ >> QUICK_NARROW_BITS);
}

static int sample_crowded(const key_order *ord, const uint64_t *k, size_t n);

/* Whether the radix passes sort the job's keys faster than a quicksort,
 * by a sample (one thread, AVX2, docs/perf/radix.md, v22):
 * - narrow integers (narrow_ints) in cache: u64 2^16, values below 1024,
 *   0.22 against 0.54 ms; beyond the cache the quicksort wins (2^20: 5.2
 *   against 11.2 ms);
 * - 8-byte keys whose top digits spread (not sample_crowded) in cache
 *   (u64 uniform 2^16: 0.37 against 0.70 ms), and beyond it where they
 *   are unsigned integers, which the first pass scatters fastest (2^20:
 *   10.8 against 13.1 ms; i64 16.2 against 12.8).
 * Floats, their exponents crowding the top digits, go to the quicksort. */
static int radix_wins(const gpk_radix_job *job)
{
    const int in_cache = job->n * job->key_width <= CACHE_SORT_BYTES;
    if (narrow_ints(job)) return in_cache;
    if (job->key_width == 4) return 0;
    const key_order ord = order_of(job);
    if (sample_crowded(&ord, (const uint64_t *)(job->src ? job->src : job->keys), job->n)) return 0;
    return in_cache || gpk_key_kind(job->key_type) == GPK_KEY_UNSIGNED;
}

/* Which vectorised quicksort takes the job on a team of one thread (on a
 * team of two, a side each: quick_pair_sort): 4- or 8-byte keys alone,
 * every bit compared, no path forced; the AVX-512 one (QUICK_AVX512) up to
 * gpk__radix_cpu_avx512_bytes of them, else the AVX2 one (QUICK_AVX2) up
 * to gpk__radix_cpu_avx2_bytes but where the radix passes win
 * (radix_wins); 0: neither. A limit set by a test hook takes every
 * input. */
enum { QUICK_AVX2 = 1, QUICK_AVX512 = 2 };
static int quick_keys_job(const gpk_radix_job *job)
{
    if (job->values || job->sigma || job->radix_bits || job->key_bits || path_forced() != PATH_AUTO ||
        (job->key_width != 4 && job->key_width != 8))
        return 0;
    const size_t bytes = job->n * job->key_width;
    const int which = bytes <= gpk__radix_cpu_avx512_bytes() ? QUICK_AVX512
        : bytes <= gpk__radix_cpu_avx2_bytes()               ? QUICK_AVX2
                                                             : 0;
    /* the AVX-512 quicksort wins everywhere it is asked to */
    if (which != QUICK_AVX2) return which;
    const int hooked = gpk__hook(gpk__test.cpu_avx512_sort_bytes, -1) >= 0 ||
        gpk__hook(gpk__test.cpu_avx2_sort_bytes, -1) >= 0;
    return !hooked && radix_wins(job) ? 0 : which;
}

static void reverse_keys(unsigned kw, const void *src, void *dst, size_t n);

/* A sorter of keys alone, as gpk__vector_sort (vector_sort.h): keys[0, n)
 * of `width` bytes in place, signed or unsigned, descending or not; 0, or
 * -1 with the keys untouched. */
typedef int (*keys_sorter)(void *keys, size_t n, unsigned width, int is_signed, int descending);

/* The job sorted by `sort` on this thread: integers as they are (the
 * signed ones compared as signed, a descending order as the sorter's),
 * floats mapped to their sort keys and back. 0, or -1 with the caller's
 * keys as they were (the copying sort's output then holds anything). */
static int sort_keys_by(const gpk_radix_job *job, keys_sorter sort)
{
    const size_t n = job->n;
    const unsigned kw = job->key_width;
    const int kind = gpk_key_kind(job->key_type);
    if (kind != GPK_KEY_FLOAT) {
        if (job->src) memcpy(job->keys, job->src, n * kw);
        return sort(job->keys, n, kw, kind == GPK_KEY_SIGNED, job->descending);
    }
    const key_order ord = order_of(job);
    uint64_t a, o;
    map_and_reduce(&ord, kw, job->src ? job->src : job->keys, job->keys, 0, n, &a, &o);
    const int rc = sort(job->keys, n, kw, 0, 0);
    unmap_copy(&ord, kw, job->keys, job->keys, 0, n);
    return rc;
}

/* The vectorised quicksorts as keys_sorters: a descending order sorted
 * ascending, then reversed (with every bit compared, equal keys are
 * identical bits). */
static int quick_then_reverse(int (*sort32)(uint32_t *, size_t, int), int (*sort64)(uint64_t *, size_t, int),
                              void *keys, size_t n, unsigned width, int is_signed, int descending)
{
    if ((width == 4 ? sort32((uint32_t *)keys, n, is_signed) : sort64((uint64_t *)keys, n, is_signed)) != 0)
        return -1;
    if (descending) reverse_keys(width, keys, keys, n);
    return 0;
}
static int quick_avx2(void *keys, size_t n, unsigned width, int is_signed, int descending)
{
    return quick_then_reverse(gpk__avx2_sort32, gpk__avx2_sort64, keys, n, width, is_signed, descending);
}
static int quick_avx512(void *keys, size_t n, unsigned width, int is_signed, int descending)
{
    return quick_then_reverse(gpk__avx512_sort32, gpk__avx512_sort64, keys, n, width, is_signed, descending);
}

/* The quicksort quick_keys_job chose (not 0). */
static keys_sorter quick_sorter(int which) { return which == QUICK_AVX512 ? quick_avx512 : quick_avx2; }

/* keys[0, n) of `width` bytes sorted as unsigned integers, ascending, by
 * the quicksort `which`: 0, or -1 with the keys untouched. */
static int quick_sort_keys(int which, void *keys, size_t n, unsigned width)
{
    return quick_sorter(which)(keys, n, width, 0, 0);
}

/* Which quicksort sorts the hybrid's buckets (sort_bucket), and up to how
 * many bytes a bucket (*bytes): keys alone with every bit compared, where
 * equal keys are identical bits and stability is moot. The buckets hold
 * sort keys, so the quicksort takes them as unsigned integers. 0 where
 * the buckets keep sort_rec's passes. Per key and thread, read from the
 * scatter buffer and written home, on 16 AVX-512 cores: 5.0-5.3 ns
 * against sort_rec's 10.5-11.4 (buckets of 2^17 u32 keys), 9 against 20
 * (2^16 u64 keys); at AVX2, 4-byte keys only, since there sort_rec sorts
 * 8-byte buckets faster (docs/perf/radix.md, v25). */
static int bucket_quick(const gpk_radix_job *job, unsigned vw, size_t *bytes)
{
    *bytes = 0;
    if (vw || job->key_bits || job->radix_bits || (job->key_width != 4 && job->key_width != 8)) return 0;
    if ((*bytes = gpk__radix_cpu_avx512_bytes()) > 0) return QUICK_AVX512;
    if (job->key_width == 4 && (*bytes = gpk__radix_cpu_avx2_bytes()) > 0) return QUICK_AVX2;
    return 0;
}

/* Whether the floats (kw 4) or doubles (kw 8) k[0, n) (their bits) hold
 * neither NaN nor -0.0, the two whose order as floats is not their sort
 * keys': read in blocks the compiler vectorises, stopping at the first
 * block with either. */
#define DEFINE_PLAIN_(W, INF)                                                                        \
    static int plain_floats##W(const uint##W##_t *k, size_t n)                                       \
    {                                                                                                \
        const uint##W##_t inf = INF, neg_zero = (uint##W##_t)1 << (W - 1);                           \
        for (size_t i = 0; i < n; i += 256) {                                                        \
            const size_t end = n - i < 256 ? n : i + 256;                                            \
            int odd = 0;                                                                             \
            for (size_t j = i; j < end; j++) odd |= ((k[j] & ~neg_zero) > inf) | (k[j] == neg_zero); \
            if (odd) return 0;                                                                       \
        }                                                                                            \
        return 1;                                                                                    \
    }
DEFINE_PLAIN_(32, 0x7F800000u)
DEFINE_PLAIN_(64, 0x7FF0000000000000u)
static int plain_floats(unsigned kw, const void *k, size_t n)
{
    return kw == 4 ? plain_floats32(k, n) : plain_floats64(k, n);
}

/* The floats (kw 4) or doubles of keys[0, n) sorted as such by the
 * quicksort `which`; 0, or -1 (keys untouched) where it refuses. */
static int quick_floats(int which, unsigned kw, void *keys, size_t n)
{
    if (kw == 4) return (which == QUICK_AVX512 ? gpk__avx512_sort_f32 : gpk__avx2_sort_f32)(keys, n, 0);
    return (which == QUICK_AVX512 ? gpk__avx512_sort_f64 : gpk__avx2_sort_f64)(keys, n, 0);
}

/* The job sorted on this thread by the quicksort quick_keys_job chose
 * (not 0), as sort_keys_by; floats and doubles that plain_floats passes
 * compared as such, unmapped (gpk__avx2_sort_f64 and its siblings: at
 * AVX2, f64 normal(0, 1) 2^16 0.58 against 0.73 ms as sort keys;
 * docs/perf/radix.md, v22). */
static int sort_quick(const gpk_radix_job *job, int which)
{
    const size_t n = job->n;
    const unsigned kw = job->key_width;
    const void *input = job->src ? job->src : job->keys;
    if (gpk_key_kind(job->key_type) == GPK_KEY_FLOAT && plain_floats(kw, input, n)) {
        if (job->src) memcpy(job->keys, job->src, n * kw);
        if (quick_floats(which, kw, job->keys, n) == 0) {
            if (job->descending) reverse_keys(kw, job->keys, job->keys, n);
            return 0;
        }
    }
    return sort_keys_by(job, quick_sorter(which));
}

/* The level (vector_sort.h) of the vectorised sorter for the job, or
 * GPK_SIMD_PORTABLE (0) where the radix sort keeps it: keys alone, every
 * bit compared, no path forced. At AVX2 the sorter beats the radix sort
 * only on 4-byte keys beyond the cache (docs/perf/radix.md, v15: u32
 * 2^20 3.7 against 4.6 ms, u64 2^20 9.2 against 5.6, u32 2^16 0.19
 * against 0.17), at AVX-512 on every size and width but uniform 8-byte
 * keys in cache (sample_crowded). */
static int vector_keys_job(const gpk_radix_job *job)
{
    if (job->values || job->sigma || job->radix_bits || job->key_bits || path_forced() != PATH_AUTO)
        return GPK_SIMD_PORTABLE;
    const int level = gpk__vector_sort_level();
    if (level == GPK_SIMD_AVX2 && (job->key_width != 4 || job->n * job->key_width <= CACHE_SORT_BYTES))
        return GPK_SIMD_PORTABLE;
    return level;
}

/* Up to this many bytes of keys (floats: twice as many) a team of two
 * sorts halves with the vectorised sorter (or the AVX-512 quicksort) and
 * merges them; above, the radix team's passes. On two hardware threads of
 * one core (the development machine) two vector sorts run at about the
 * speed of one, while the radix passes' latencies overlap: u32 2^23 21.8
 * against 21.1 ms, 2^24 48 against 39; f32 2^23 19.2 against 26.7; f64
 * 2^24 127 against 83 (docs/perf/radix.md, v15). The test hook
 * cpu_vector_pair_bytes overrides it. */
#ifndef VECTOR_PAIR_BYTES
#define VECTOR_PAIR_BYTES ((size_t)32 << 20)
#endif

/* The limit for the job: every size where a quicksort splits the keys
 * (quick_pair_sort) at AVX-512 (two real cores of an AVX-512 host, u32
 * 2^24: 1.16x numpy against the radix team's 0.77x; docs/perf/radix.md,
 * v20), or at AVX2 for 4-byte keys (this container's two vCPUs, u32 2^25
 * 170 against 231 ms; 8-byte keys there lost to the radix team beyond
 * VECTOR_PAIR_BYTES: i64 2^25 575 against 491; v22). */
static size_t vector_pair_bytes(const gpk_radix_job *job, int split_every_size)
{
    const long long forced = gpk__hook(gpk__test.cpu_vector_pair_bytes, -1);
    if (forced < 0 && split_every_size) return SIZE_MAX;
    const size_t bytes = forced < 0 ? VECTOR_PAIR_BYTES : (size_t)forced;
    return gpk_key_kind(job->key_type) == GPK_KEY_FLOAT ? 2 * bytes : bytes;
}

/* The job (vector_keys_job) sorted by the vectorised sorter on this
 * thread. */
static int vector_sort_keys(const gpk_radix_job *job) { return sort_keys_by(job, gpk__vector_sort); }

/* Whether the job's keys carry values or a permutation (pairs, argsort,
 * records through their (key, index) pairs) that the vectorised sorter
 * may take as (sort key, index) composites in 64 bits (vector_sort_items):
 * every bit compared, no path forced, at AVX-512. vqsort's 128-bit items
 * sort 4-5 times slower than its 64-bit ones (docs/perf/radix.md, v16:
 * 2^20 u64 4.0 ms, uint128_t 19.8, K64V64 20.4), slower than the radix
 * sort, so 8-byte keys go there only where their range is narrow. */
static int vector_items_job(const gpk_radix_job *job)
{
    if ((!job->values && !job->sigma) || job->src || job->radix_bits || job->key_bits ||
        path_forced() != PATH_AUTO || job->n > UINT32_MAX)
        return 0;
    return gpk__vector_sort_level() == GPK_SIMD_AVX512;
}

/* Bits of x (0 for 0). */
static unsigned bit_length(uint64_t x)
{
    unsigned b = 0;
    while (b < 64 && x >> b) b++;
    return b;
}

/* The job (vector_items_job) by the vectorised sorter on this thread, as
 * u64 composites (sort key - the least sort key) << ib | index, ib the
 * index's bits: 4-byte keys always fit, 8-byte keys where their range
 * leaves ib bits (a 256-key sample first, then all keys). The composites
 * are distinct, and equal keys order by index: the sort is stable. The
 * keys come back from the top bits, the permutation from the low ones;
 * values are gathered by index from a copy. 0, or -1 with the caller's
 * arrays as they were (the radix sort takes the job). */
static int vector_sort_items(gpk_ctx *ctx, const gpk_radix_job *job)
{
    const size_t n = job->n;
    const unsigned kw = job->key_width, vw = job->values ? job->value_width : 0;
    const unsigned ib = kw == 4 ? 32 : bit_length(n - 1); /* n <= 2^32: at most 32 */
    const key_order ord = order_of(job);
    const uint32_t xm32 = (uint32_t)ord.xor_mask;
    const uint64_t xm64 = ord.xor_mask;
    uint64_t least = 0;
    if (kw == 8) {
        const uint64_t *k = (const uint64_t *)job->keys;
        const size_t m = n < 256 ? n : 256, stride = n / m;
        uint64_t lo = ~0ull, hi = 0;
        WITH_ORDER_CONST(
            &ord, tc, hc, for (size_t i = 0; i < m; i++) {
                const uint64_t s = sort_key64(tc, hc, xm64, k[i * stride]);
                lo = s < lo ? s : lo;
                hi = s > hi ? s : hi;
            });
        if (bit_length(hi - lo) + ib > 64) return -1;
        WITH_ORDER_CONST(
            &ord, tc, hc, for (size_t i = 0; i < n; i++) {
                const uint64_t s = sort_key64(tc, hc, xm64, k[i]);
                lo = s < lo ? s : lo;
                hi = s > hi ? s : hi;
            });
        if (bit_length(hi - lo) + ib > 64) return -1;
        least = lo;
    }
    const size_t cbytes = (n * 8 + 63) & ~(size_t)63;
    unsigned char *scratch = gpk__host_scratch(ctx, cbytes + n * vw + 64);
    if (!scratch) return -1;
    scratch += (64 - (uintptr_t)scratch % 64) % 64;
    uint64_t *c = (uint64_t *)scratch;
    if (kw == 4) {
        const uint32_t *k = (const uint32_t *)job->keys;
        WITH_ORDER_CONST(&ord, tc, hc,
                         for (size_t i = 0; i < n; i++) c[i] =
                             (uint64_t)sort_key32(tc, hc, xm32, k[i]) << 32 | i;);
    } else {
        const uint64_t *k = (const uint64_t *)job->keys;
        WITH_ORDER_CONST(&ord, tc, hc,
                         for (size_t i = 0; i < n; i++) c[i] =
                             (sort_key64(tc, hc, xm64, k[i]) - least) << ib | i;);
    }
    if (gpk__vector_sort_items(c, n) != 0) return -1;

    const uint64_t index_mask = ((uint64_t)1 << ib) - 1;
    if (kw == 4) {
        uint32_t *k = (uint32_t *)job->keys;
        WITH_ORDER_CONST(&ord, tc, hc,
                         for (size_t j = 0; j < n; j++) k[j] =
                             key_of_sort32(tc, hc, xm32, (uint32_t)(c[j] >> 32)););
    } else {
        uint64_t *k = (uint64_t *)job->keys;
        WITH_ORDER_CONST(&ord, tc, hc,
                         for (size_t j = 0; j < n; j++) k[j] =
                             key_of_sort64(tc, hc, xm64, (c[j] >> ib) + least););
    }
    if (job->sigma && job->sigma_width == 4) {
        for (size_t j = 0; j < n; j++) ((uint32_t *)job->sigma)[j] = (uint32_t)(c[j] & index_mask);
    } else if (job->sigma) {
        for (size_t j = 0; j < n; j++) ((uint64_t *)job->sigma)[j] = c[j] & index_mask;
    } else {
        unsigned char *copy = scratch + cbytes;
        memcpy(copy, job->values, n * vw);
        if (vw == 4)
            for (size_t j = 0; j < n; j++)
                ((uint32_t *)job->values)[j] = ((const uint32_t *)copy)[c[j] & index_mask];
        else
            for (size_t j = 0; j < n; j++)
                ((uint64_t *)job->values)[j] = ((const uint64_t *)copy)[c[j] & index_mask];
    }
    return 0;
}

/* Up to this many bytes of values the gather by index (vector_sort_items)
 * reads them from the caches; beyond, its random reads from memory cost
 * more than the radix sort moving them (docs/perf/radix.md, v16: u32
 * pairs, 1 thread, CPU ms, vector / radix: 2^18 1.19 / 1.53, 2^20 7.8 /
 * 8.3, 2^21 17.8 / 16.7, 2^24 208 / 110). */
#ifndef VECTOR_GATHER_BYTES
#define VECTOR_GATHER_BYTES ((size_t)4 << 20)
#endif

/* Whether vector_sort_items beats the radix sort on one thread for the
 * job (vector_items_job), as measured (docs/perf/radix.md, v16, CPU ms,
 * vector / radix): permutations up to 2^22 keys (u32 2^16 0.249 / 0.271,
 * 2^22 27.9 / 34.6, 2^24 122 / 114; narrow u64 2^22 29.8 / 36.6, 2^24
 * 145 / 143), and of 4-byte floats at every size (their radix passes pay
 * the map: f32 2^24 120 / 139); values and 8-byte keys beyond the cache
 * only (the cache sort's passes are as fast there), values while the
 * gather reads them from the caches. On two threads and more the radix
 * team's passes scale where one vqsort cannot: the radix sort takes the
 * job. */
static int vector_items_wins(const gpk_radix_job *job)
{
    const size_t n = job->n;
    const unsigned vw = job->values ? job->value_width : 0, kw = job->key_width;
    if (job->sigma && kw == 4 && (n <= ((size_t)1 << 22) || gpk_key_kind(job->key_type) == GPK_KEY_FLOAT))
        return 1;
    if (n * (kw + (job->sigma ? job->sigma_width : vw)) <= CACHE_SORT_BYTES) return 0;
    return vw ? n * vw <= VECTOR_GATHER_BYTES : n <= ((size_t)1 << 22);
}

/* Whether 8-byte keys in cache go to the vectorised sorter rather than
 * the radix sort's in-cache path: where the top HYB_MAX_BITS bits of the
 * bit range crowd (in a sample, the most common value holds more than an
 * eighth of it), as floats of both signs do (a few exponents under the
 * sign bit), the radix sort's top digits sort little and its finish takes
 * more passes; elsewhere its 11-bit passes beat the sorter's partitions
 * (docs/perf/radix.md, v15: 2^16 keys, f64 normal(0, 1) 0.31 ms radix,
 * 0.22 vector; u64 uniform 0.16 radix, 0.20 vector). */
#define CROWD_SAMPLES 256
static int sample_crowded(const key_order *ord, const uint64_t *k, size_t n)
{
    const size_t m = n < CROWD_SAMPLES ? n : CROWD_SAMPLES, stride = n / m;
    const uint64_t xm = ord->xor_mask;
    uint64_t s[CROWD_SAMPLES], a = ~0ull, o = 0;
    WITH_ORDER_CONST(
        ord, tc, hc, for (size_t i = 0; i < m; i++) {
            s[i] = sort_key64(tc, hc, xm, k[i * stride]);
            a &= s[i];
            o |= s[i];
        });
    unsigned begin, end;
    gpk__radix_range_from_masks(a, o, &begin, &end);
    if (end - begin <= HYB_MAX_BITS) return 0;
    uint16_t count[(size_t)1 << HYB_MAX_BITS];
    memset(count, 0, sizeof count);
    size_t most = 0;
    for (size_t i = 0; i < m; i++) {
        const unsigned c = ++count[(s[i] >> (end - HYB_MAX_BITS)) & ((1u << HYB_MAX_BITS) - 1)];
        if (c > most) most = c;
    }
    return most * 8 > m;
}

/* Merges of two sorted runs a (na keys) and b (nb) of W-bit sort keys,
 * b right after a in memory with a key's room after b (read, never
 * used). merge_rank: how many of the k smallest keys come from a (ties
 * from a first), by bisection. merge_span: keys [k0, k1) of the merged
 * order into out[0, k1 - k0), unmapped, as MERGE_LANES merges in lock
 * step, each from its own rank on: one merge's next key depends on its
 * last comparison (a load, a compare and an add in a chain), independent
 * ones overlap. No branch on the keys, which are random (a branch would
 * miss half the time). */
#define MERGE_LANES 4
// clang-format off
/* One key of lane c's merge into its place s (inside merge_span). */
#define MERGE_STEP_(W, c, s)                                                                          \
    do {                                                                                              \
        const uint##W##_t x = a[ic[c]], y = b[jc[c]];                                                 \
        const size_t take_b = (size_t)(jc[c] < j[c + 1]) & ((size_t)(ic[c] >= i[c + 1]) | (size_t)(y < x)); \
        oc[c][s] = key_of_sort##W(tc, hc, xm, take_b ? y : x);                                        \
        jc[c] += take_b;                                                                              \
        ic[c] += 1 - take_b;                                                                          \
    } while (0)
#define DEFINE_MERGE_(W)                                                                              \
    static size_t merge_rank##W(const uint##W##_t *a, size_t na, const uint##W##_t *b, size_t nb,    \
                                size_t k)                                                             \
    {                                                                                                 \
        size_t lo = k > nb ? k - nb : 0, hi = k < na ? k : na;                                        \
        while (lo < hi) {                                                                             \
            const size_t i = lo + (hi - lo) / 2, j = k - i;                                           \
            if (j > 0 && b[j - 1] >= a[i]) lo = i + 1;                                                \
            else hi = i;                                                                              \
        }                                                                                             \
        return lo;                                                                                    \
    }                                                                                                 \
    static void merge_span##W(const key_order *ord, const uint##W##_t *a, size_t na,                 \
                              const uint##W##_t *b, size_t nb, size_t k0, size_t k1, uint##W##_t *out) \
    {                                                                                                 \
        const uint##W##_t xm = (uint##W##_t)ord->xor_mask;                                           \
        size_t i[MERGE_LANES + 1], j[MERGE_LANES + 1], k[MERGE_LANES + 1];                            \
        for (int c = 0; c <= MERGE_LANES; c++) {                                                      \
            k[c] = k0 + (k1 - k0) * (size_t)c / MERGE_LANES;                                          \
            i[c] = merge_rank##W(a, na, b, nb, k[c]);                                                 \
            j[c] = k[c] - i[c];                                                                       \
        }                                                                                             \
        const size_t step = (k1 - k0) / MERGE_LANES; /* the shortest lane's keys */                    \
        WITH_ORDER_CONST(ord, tc, hc, {                                                               \
            size_t ic[MERGE_LANES], jc[MERGE_LANES];                                                  \
            uint##W##_t *oc[MERGE_LANES];                                                             \
            for (int c = 0; c < MERGE_LANES; c++) {                                                   \
                ic[c] = i[c];                                                                         \
                jc[c] = j[c];                                                                         \
                oc[c] = out + (k[c] - k0);                                                            \
            }                                                                                         \
            for (size_t s = 0; s < step; s++)                                                         \
                for (int c = 0; c < MERGE_LANES; c++) {                                               \
                    MERGE_STEP_(W, c, s);                                                             \
                }                                                                                     \
            for (int c = 0; c < MERGE_LANES; c++)                                                     \
                for (size_t s = step; s < k[c + 1] - k[c]; s++) {                                     \
                    MERGE_STEP_(W, c, s);                                                             \
                }                                                                                     \
        });                                                                                           \
    }
DEFINE_MERGE_(32)
DEFINE_MERGE_(64)
#undef DEFINE_MERGE_
#undef MERGE_STEP_
// clang-format on

/* merge_span32 in AVX2 registers (gpk__avx2_merge32), a chunk of the
 * output at a time, each chunk's start found by merge_rank32 and its keys
 * unmapped while they are in the cache. 0 (nothing written: the first
 * chunk refused) where the processor or a forced level does not run AVX2. */
#define MERGE_CHUNK ((size_t)1 << 15)
static int merge_span_avx2(const key_order *ord, const uint32_t *a, size_t na, const uint32_t *b, size_t nb,
                           size_t k0, size_t k1, uint32_t *out)
{
    for (size_t c0 = k0; c0 < k1; c0 += MERGE_CHUNK) {
        const size_t c1 = k1 - c0 < MERGE_CHUNK ? k1 : c0 + MERGE_CHUNK;
        const size_t i = merge_rank32(a, na, b, nb, c0), j = c0 - i;
        if (gpk__avx2_merge32(a + i, na - i, b + j, nb - j, out + (c0 - k0), c1 - c0) != 0) return 0;
        if (needs_mapping(ord)) unmap_copy(ord, 4, out, out, c0 - k0, c1 - k0);
    }
    return 1;
}

static int cmp_u32(const void *x, const void *y)
{
    const uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}
static int cmp_u64(const void *x, const void *y)
{
    const uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* The job (vector_keys_job) on a team of two: each thread maps its half of
 * the keys into the scratch, sorts it there with the vector sorter
 * (ascending, unsigned: the keys mapped), and, after one barrier, merges its half of
 * the merged order into the caller's array, unmapping it: 4-byte keys in
 * AVX2 registers where the processor has them (merge_span_avx2: about a
 * third of the scalar merge's time a key), else merge_span. Per key: a
 * copy, a sort of n/2 and a merge, against the radix team's MSD pass and
 * bucket passes. 0, or -1 with nothing done (no scratch). */
static int vector_pair_sort(gpk_ctx *ctx, const gpk_radix_job *job)
{
    const size_t n = job->n, half = n / 2;
    const unsigned kw = job->key_width;
    unsigned char *scratch = gpk__host_scratch(ctx, n * kw + 128); /* + a key read after b */
    if (!scratch) return -1;
    scratch += (64 - (uintptr_t)scratch % 64) % 64;
    const key_order ord = order_of(job);
    const void *input = job->src ? job->src : job->keys;
    team_barrier bar;
    team_barrier_init(&bar, 2);
#pragma omp parallel num_threads(2)
    {
        const int tid = omp_get_thread_num(), T = omp_get_num_threads();
        /* A team granted fewer threads: this one does both halves. */
        for (int part = tid; part < 2; part += T) {
            const size_t lo = part ? half : 0, hi = part ? n : half;
            uint64_t a, o;
            if (needs_mapping(&ord)) map_and_reduce(&ord, kw, input, scratch, lo, hi, &a, &o);
            else memcpy(scratch + lo * kw, (const char *)input + lo * kw, (hi - lo) * kw);
            if (gpk__vector_sort(scratch + lo * kw, hi - lo, kw, 0, 0) != 0)
                qsort(scratch + lo * kw, hi - lo, kw, kw == 4 ? cmp_u32 : cmp_u64);
        }
        if (T > 1) {
            atomic_store_explicit(&bar.threads, (unsigned)T, memory_order_relaxed);
            team_wait(&bar);
        }
        const size_t k0 = n * (size_t)tid / (size_t)T, k1 = n * (size_t)(tid + 1) / (size_t)T;
        if (kw == 4) {
            const uint32_t *k = (const uint32_t *)scratch;
            uint32_t *out = (uint32_t *)job->keys + k0;
            if (!merge_span_avx2(&ord, k, half, k + half, n - half, k0, k1, out))
                merge_span32(&ord, k, half, k + half, n - half, k0, k1, out);
        } else {
            const uint64_t *k = (const uint64_t *)scratch;
            merge_span64(&ord, k, half, k + half, n - half, k0, k1, (uint64_t *)job->keys + k0);
        }
    }
    return 0;
}

/* How a team of two compares the keys it splits (quick_pair_sort): as
 * integers, signed or not, as they are (ascending integers); as floats
 * or doubles as they are (ascending, neither NaN nor -0.0:
 * plain_floats); else (descending orders, floats with either) as the
 * unsigned sort keys they are mapped to in place and back. */
enum { PAIR_INTEGERS, PAIR_FLOATS, PAIR_MAPPED };
typedef struct {
    int which, how, is_signed;
    unsigned kw;
} pair_order;

static int cmp_i32(const void *x, const void *y)
{
    const int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}
static int cmp_i64(const void *x, const void *y)
{
    const int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}
static int cmp_f32(const void *x, const void *y)
{
    const float a = *(const float *)x, b = *(const float *)y;
    return (a > b) - (a < b);
}
static int cmp_f64(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}
/* qsort's comparator for the order, where a quicksort refuses (a level
 * forced lower meanwhile, in tests). */
static int (*pair_cmp(const pair_order *o))(const void *, const void *)
{
    if (o->how == PAIR_FLOATS) return o->kw == 4 ? cmp_f32 : cmp_f64;
    if (o->is_signed) return o->kw == 4 ? cmp_i32 : cmp_i64;
    return o->kw == 4 ? cmp_u32 : cmp_u64;
}

/* keys[0, n) sorted in the order o by its quicksort (qsort if that
 * refuses). */
static void pair_sort(const pair_order *o, void *keys, size_t n)
{
    const int rc = o->how == PAIR_FLOATS ? quick_floats(o->which, o->kw, keys, n)
                                         : quick_sorter(o->which)(keys, n, o->kw, o->is_signed, 0);
    if (rc != 0) qsort(keys, n, o->kw, pair_cmp(o));
}

/* keys[0, n) partitioned in the order o around the key whose bits are
 * pivot (gt: keys equal to it go left), the keys going left counted to
 * *left, by the quicksort's own partition; where that refuses, sorted
 * (pair_sort) and counted. */
static void pair_split(const pair_order *o, void *keys, size_t n, uint64_t pivot, int gt, size_t *left)
{
    const int f = o->how == PAIR_FLOATS, s = o->is_signed, avx512 = o->which == QUICK_AVX512;
    int rc;
    if (o->kw == 4) {
        int (*split)(uint32_t *, size_t, uint32_t, int, int, size_t *) = f
            ? (avx512 ? gpk__avx512_split_f32 : gpk__avx2_split_f32)
            : (avx512 ? gpk__avx512_split32 : gpk__avx2_split32);
        rc = split(keys, n, (uint32_t)pivot, s, gt, left);
    } else {
        int (*split)(uint64_t *, size_t, uint64_t, int, int, size_t *) = f
            ? (avx512 ? gpk__avx512_split_f64 : gpk__avx2_split_f64)
            : (avx512 ? gpk__avx512_split64 : gpk__avx2_split64);
        rc = split(keys, n, pivot, s, gt, left);
    }
    if (rc == 0) return;
    pair_sort(o, keys, n);
    const uint32_t p32 = (uint32_t)pivot;
    const void *p = o->kw == 4 ? (const void *)&p32 : (const void *)&pivot;
    int (*cmp)(const void *, const void *) = pair_cmp(o);
    size_t i = 0;
    while (i < n && (gt ? cmp((char *)keys + i * o->kw, p) <= 0 : cmp((char *)keys + i * o->kw, p) < 0)) i++;
    *left = i;
}

/* keys x[0, m) and y[0, m) of kw bytes exchanged (loops the compiler
 * vectorises). */
static void swap_keys(unsigned kw, void *x, void *y, size_t m)
{
    if (kw == 4) {
        uint32_t *restrict a = x, *restrict b = y;
        for (size_t i = 0; i < m; i++) {
            const uint32_t t = a[i];
            a[i] = b[i];
            b[i] = t;
        }
    } else {
        uint64_t *restrict a = x, *restrict b = y;
        for (size_t i = 0; i < m; i++) {
            const uint64_t t = a[i];
            a[i] = b[i];
            b[i] = t;
        }
    }
}

/* The pivot of quick_pair_sort: the median of at most `most` of the n
 * keys at equal strides, in the order o; *gt = 1 where it is also their
 * least (so that its copies go left, and the left side is not empty). */
#define PAIR_SAMPLE 1024
#define PIECE_SAMPLE 256
static uint64_t pair_pivot(const pair_order *o, const void *keys, size_t n, size_t most, int *gt)
{
    uint64_t sample[PAIR_SAMPLE]; /* kw bytes a key */
    const size_t m = n < most ? n : most, stride = n / m;
    for (size_t i = 0; i < m; i++)
        memcpy((char *)sample + i * o->kw, (const char *)keys + i * stride * o->kw, o->kw);
    pair_sort(o, sample, m);
    uint64_t median = 0, least = 0;
    memcpy(&median, (char *)sample + m / 2 * o->kw, o->kw);
    memcpy(&least, sample, o->kw);
    *gt = median == least; /* as bits: no two keys of another order are equal */
    return median;
}

/* The pieces a team of two sorts after its split (quick_pair_sort): a
 * stack of ranges a thread, which it pushes and pops at the top and the
 * other thread steals from at the bottom (the oldest, largest piece), so
 * that a thread that loses its core for a while delays only the piece it
 * holds. One lock; a push or pop is a few stores. unsorted: the keys not
 * yet in a sorted piece (the team is done at 0). */
#define PIECES_MAX 128
#define PIECE_MIN ((size_t)1 << 14)
typedef struct {
    size_t lo[2][PIECES_MAX], hi[2][PIECES_MAX];
    int bottom[2], top[2];
    omp_lock_t lock;
    atomic_size_t unsorted;
} piece_pool;

static atomic_size_t pieces_stolen;
size_t gpk__radix_cpu_pieces_stolen(void)
{
    return atomic_load_explicit(&pieces_stolen, memory_order_relaxed);
}

/* [lo, hi) onto thread t's stack: 1, or 0 where it is full. */
static int push_piece(piece_pool *P, int t, size_t lo, size_t hi)
{
    omp_set_lock(&P->lock);
    const int room = P->top[t] < PIECES_MAX;
    if (room) {
        P->lo[t][P->top[t]] = lo;
        P->hi[t][P->top[t]] = hi;
        P->top[t]++;
    }
    omp_unset_lock(&P->lock);
    return room;
}

/* A piece for thread t: its own newest, else the other's oldest; 0 if
 * both stacks are empty. */
static int take_piece(piece_pool *P, int t, size_t *lo, size_t *hi)
{
    int got = 1;
    omp_set_lock(&P->lock);
    if (P->top[t] > P->bottom[t]) {
        P->top[t]--;
        *lo = P->lo[t][P->top[t]];
        *hi = P->hi[t][P->top[t]];
    } else if (P->top[1 - t] > P->bottom[1 - t]) {
        const int o = 1 - t;
        *lo = P->lo[o][P->bottom[o]];
        *hi = P->hi[o][P->bottom[o]];
        P->bottom[o]++;
        atomic_fetch_add_explicit(&pieces_stolen, 1, memory_order_relaxed);
    } else {
        got = 0;
    }
    for (int i = 0; i < 2; i++)
        if (P->top[i] == P->bottom[i]) P->top[i] = P->bottom[i] = 0;
    omp_unset_lock(&P->lock);
    return got;
}

/* keys[lo, hi) sorted by thread t: split around a sampled pivot by the
 * quicksort's partition while longer than `leaf`, the larger part of each
 * split pushed for either thread to take (sorted here if the stack is
 * full), the rest sorted by the quicksort and unmapped where o maps. */
static void sort_piece(const pair_order *o, const key_order *ord, piece_pool *P, int t, char *keys, size_t lo,
                       size_t hi, size_t leaf)
{
    const unsigned kw = o->kw;
    while (hi - lo > leaf) {
        int gt;
        const uint64_t pivot = pair_pivot(o, keys + lo * kw, hi - lo, PIECE_SAMPLE, &gt);
        size_t left;
        pair_split(o, keys + lo * kw, hi - lo, pivot, gt, &left);
        if (left == 0 || left == hi - lo) break; /* one side: the quicksort takes it whole */
        const size_t mid = lo + left;
        if (mid - lo > hi - mid) {
            if (!push_piece(P, t, lo, mid)) sort_piece(o, ord, P, t, keys, lo, mid, SIZE_MAX);
            lo = mid;
        } else {
            if (!push_piece(P, t, mid, hi)) sort_piece(o, ord, P, t, keys, mid, hi, SIZE_MAX);
            hi = mid;
        }
    }
    pair_sort(o, keys + lo * kw, hi - lo);
    if (o->how == PAIR_MAPPED) unmap_copy(ord, kw, keys, keys, lo, hi);
    atomic_fetch_sub_explicit(&P->unsorted, hi - lo, memory_order_acq_rel);
}

/* The job (quick_keys_job chose `which`) on a team of two, without a
 * merge: each thread brings its half of the keys into the caller's array
 * (mapped to sort keys only where pair_order says so) and, after the
 * pivot is drawn (pair_pivot), partitions it with the quicksort's own
 * partition; the keys that went right in the first half and left in the
 * second are exchanged (at most half the keys), so that every key below
 * the pivot comes first; then each side is a piece of its thread's
 * (piece_pool), split further while longer than a 32nd of the keys, and
 * either thread sorts (and unmaps) pieces, its own first, until none is
 * left: a thread that loses its core delays its piece, not its side. Per
 * key: one partition level that the sides' sorts then need less, and
 * part of an exchange, against vector_pair_sort's copy into the scratch
 * and merge pass. Allocates nothing. */
static void quick_pair_sort(const gpk_radix_job *job, int which)
{
    const size_t n = job->n, half = n / 2;
    const unsigned kw = job->key_width;
    const key_order ord = order_of(job);
    const int kind = gpk_key_kind(job->key_type);
    const pair_order o = {which,
                          job->descending             ? PAIR_MAPPED
                              : kind == GPK_KEY_FLOAT ? PAIR_FLOATS
                                                      : PAIR_INTEGERS,
                          !job->descending && kind == GPK_KEY_SIGNED, kw};
    const char *input = job->src ? job->src : job->keys;
    char *keys = job->keys;
    size_t left[2] = {0, 0};
    int plain[2] = {1, 1};
    uint64_t pivot = 0;
    int gt = 0;
    team_barrier bar;
    team_barrier_init(&bar, 2);
    /* pieces of at most 1/32 of the keys (and at least PIECE_MIN): a
     * thread that stalls leaves the other most of its side */
    const size_t leaf = n / 32 > PIECE_MIN ? n / 32 : PIECE_MIN;
    piece_pool pool;
    pool.bottom[0] = pool.bottom[1] = pool.top[0] = pool.top[1] = 0;
    omp_init_lock(&pool.lock);
    atomic_init(&pool.unsorted, n);
#pragma omp parallel num_threads(2)
    {
        const int tid = omp_get_thread_num(), T = omp_get_num_threads();
        /* a team granted fewer threads: this one does both parts of each step */
        atomic_store_explicit(&bar.threads, (unsigned)T, memory_order_relaxed);
        if (o.how == PAIR_FLOATS) {
            for (int part = tid; part < 2; part += T) {
                const size_t lo = part ? half : 0, hi = part ? n : half;
                plain[part] = plain_floats(kw, input + lo * kw, hi - lo);
            }
            team_wait(&bar);
        }
        /* floats with NaN or -0.0 in either half: both mapped */
        pair_order mine = o;
        if (o.how == PAIR_FLOATS && !(plain[0] && plain[1])) mine.how = PAIR_MAPPED;
        for (int part = tid; part < 2; part += T) {
            const size_t lo = part ? half : 0, hi = part ? n : half;
            uint64_t all_and, all_or;
            if (mine.how == PAIR_MAPPED) map_and_reduce(&ord, kw, input, keys, lo, hi, &all_and, &all_or);
            else if (job->src) memcpy(keys + lo * kw, input + lo * kw, (hi - lo) * kw);
        }
        team_wait(&bar);
        if (tid == 0) pivot = pair_pivot(&mine, keys, n, PAIR_SAMPLE, &gt);
        team_wait(&bar);
        for (int part = tid; part < 2; part += T) {
            const size_t lo = part ? half : 0, hi = part ? n : half;
            pair_split(&mine, keys + lo * kw, hi - lo, pivot, gt, &left[part]);
        }
        team_wait(&bar);
        /* [left0, half) went right, [half, half + left1) left: the first
         * m of the one exchanged with the last m of the other */
        const size_t a = left[0], b = left[1], m = half - a < b ? half - a : b;
        const size_t m0 = m * (size_t)tid / (size_t)T, m1 = m * (size_t)(tid + 1) / (size_t)T;
        swap_keys(kw, keys + (a + m0) * kw, keys + (half + b - m + m0) * kw, m1 - m0);
        team_wait(&bar);
        /* each side a piece of its thread's, shared from there on */
        for (int part = tid; part < 2; part += T)
            if (!push_piece(&pool, tid, part ? a + b : 0, part ? n : a + b))
                sort_piece(&mine, &ord, &pool, tid, keys, part ? a + b : 0, part ? n : a + b, SIZE_MAX);
        const long long stall_ms = gpk__hook(gpk__test.cpu_pair_stall_ms, 0);
        if (tid == 1 && stall_ms > 0) {
            const struct timespec pause_for = {(time_t)(stall_ms / 1000), (long)(stall_ms % 1000) * 1000000L};
            nanosleep(&pause_for, NULL);
        }
        for (unsigned idle = 0;;) {
            size_t lo, hi;
            if (take_piece(&pool, tid, &lo, &hi)) {
                sort_piece(&mine, &ord, &pool, tid, keys, lo, hi, leaf);
                idle = 0;
            } else if (atomic_load_explicit(&pool.unsorted, memory_order_acquire) == 0) {
                break;
            } else if (++idle < TEAM_SPINS) { /* the other splits or sorts its last piece: as team_wait */
                spin_pause();
            } else {
                sched_yield();
            }
        }
    }
    omp_destroy_lock(&pool.lock);
}

/* The choices of one sort, made before anything is allocated, and the
 * scratch's layout that follows from them. */
typedef struct {
    size_t n;
    unsigned kw, vw;
    int with_sigma, forced, may_hybrid, use_wc, plan_first, threads;
    unsigned radix; /* counters per block row */
    size_t cap, samples, blocks;
    /* The scratch, in this order: keys, values, histogram rows, ands and
     * ors, wc buffers, hybrid bounds, per-thread buffers, the sample. */
    size_t keys_bytes, vals_bytes, hist_bytes, wc_bytes, bounds_bytes, lhist_bytes, tmp_bytes, total;
} sort_plan;

/* What the team's threads decide once and all read (shared in the
 * parallel region). */
typedef struct {
    int planned, hybrid;
    unsigned passes, range_begin, range_end;
    pass_plan plan[64];
} team_choice;

/* Threads for n keys and values of `width` bytes: one per
 * bytes_per_thread, at most the context's and the free cores. */
static int team_size(const gpk_ctx *ctx, size_t n, size_t width, size_t bytes_per_thread)
{
    const size_t want = n / (bytes_per_thread / width) + 1;
    int threads = ctx->threads < (int)want ? ctx->threads : (int)want;
    if (threads < 1) threads = 1;
    return cap_by_free_cores(threads);
}

static void plan_sort(const gpk_ctx *ctx, const gpk_radix_job *job, sort_plan *p)
{
    const size_t n = job->n;
    const unsigned kw = job->key_width;
    const int with_sigma = job->sigma != NULL;
    const unsigned vw = with_sigma ? job->sigma_width : job->value_width;
    const int forced = path_forced();
    /* The hybrid chooses its own digits, so an explicit r keeps the LSD
     * passes the caller asked for. */
    const int may_hybrid = job->radix_bits == 0 && forced != PATH_LSD &&
        (job->key_bits == 0 || job->key_bits >= HYB_MIN_BITS || forced == PATH_HYBRID) &&
        (n >= HYB_MIN_KEYS || forced == PATH_HYBRID);
    const unsigned max_radix_bits = job->radix_bits ? job->radix_bits : 8;
    const unsigned stride_bits = may_hybrid && HYB_MAX_BITS > max_radix_bits ? HYB_MAX_BITS : max_radix_bits;
    const unsigned radix = 1u << stride_bits;
    const int use_wc = stride_bits <= WC_MAX_RADIX_BITS;
    const unsigned hyb_d = hyb_digit_bits(n, kw + vw);
    const size_t cap = may_hybrid ? hyb_bucket_cap(n, kw + vw, hyb_d) : 0;

    /* 8-byte keys of the types that need mapping (signed, float, in
     * either order): level 0 planned from a sample (see first_plan), so the
     * keys are mapped as level 0 reads them. Unsigned keys in descending
     * order keep their ascending sort's counted level (the mapped keys
     * written by the detection): faster on uniform keys than the planned
     * one (docs/perf/segmented.md, "Descending order of the plain sorts"). */
    const int plan_first = may_hybrid && kw == 8 && gpk_key_kind(job->key_type) != GPK_KEY_UNSIGNED &&
        job->key_bits == 0 && n >= FIRST_MIN_KEYS && sampled_first_allowed();
    const size_t samples = plan_first ? (n / 16 < FIRST_SAMPLES ? n / 16 : FIRST_SAMPLES) : 0;

    const int threads = team_size(ctx, n, kw + vw, MIN_BYTES_PER_THREAD);
    size_t blocks = threads == 1 ? 1 : (size_t)threads * BLOCKS_PER_THREAD;
    if (threads > 1 && blocks > n / MIN_BLOCK_KEYS) blocks = n / MIN_BLOCK_KEYS;
    if (blocks < (size_t)threads) blocks = (size_t)threads;

    /* Per digit: a line of keys, the matching values (up to twice as wide
     * when 4-byte keys carry 8-byte values), and the fill count. */
    size_t wc_bytes = use_wc ? (size_t)radix * (WC_BYTES * 3 + 2 * sizeof(unsigned)) : 0;
    size_t hist_bytes = blocks * radix * sizeof(size_t);
    size_t keys_bytes = (n * kw + 63) & ~(size_t)63, vals_bytes = (n * vw + 63) & ~(size_t)63;
    /* Hybrid: bucket bounds per level, per-thread pass histograms and two
     * private buffers of cap keys and cap values each. */
    size_t bounds_bytes = may_hybrid
        ? ((HYB_LEVELS * (((size_t)1 << HYB_MAX_BITS) + 1) * sizeof(size_t) + 63) & ~(size_t)63)
        : 0;
    size_t lhist_bytes = may_hybrid ? (REC_DEPTH * REC_SLAB + SOLO_DEPTH * SOLO_SLAB) * sizeof(size_t) : 0;
    size_t tmp_bytes = may_hybrid ? (cap * (kw + vw) + 63) & ~(size_t)63 : 0;
    /* + 64: the scratch is aligned to a line so that the scatter can stream. */
    size_t total = 64 + keys_bytes + vals_bytes + hist_bytes + 2 * 64 * blocks + (size_t)threads * wc_bytes +
        bounds_bytes + (size_t)threads * (lhist_bytes + 2 * tmp_bytes) + 2 * samples * sizeof(uint64_t);
    if (n > ((size_t)-1) / 32) total = (size_t)-1; /* (size_t)-1: too large to allocate */

    p->n = n;
    p->kw = kw;
    p->vw = vw;
    p->with_sigma = with_sigma;
    p->forced = forced;
    p->may_hybrid = may_hybrid;
    p->use_wc = use_wc;
    p->plan_first = plan_first;
    p->threads = threads;
    p->radix = radix;
    p->cap = cap;
    p->samples = samples;
    p->blocks = blocks;
    p->keys_bytes = keys_bytes;
    p->vals_bytes = vals_bytes;
    p->hist_bytes = hist_bytes;
    p->wc_bytes = wc_bytes;
    p->bounds_bytes = bounds_bytes;
    p->lhist_bytes = lhist_bytes;
    p->tmp_bytes = tmp_bytes;
    p->total = total;
}

/* Points the shared state into the (line-aligned) scratch, in the order
 * sort_plan lists, and returns where the sample goes. */
static uint64_t *lay_out_scratch(const sort_plan *p, const gpk_radix_job *job, unsigned char *scratch,
                                 team_barrier *bar, sort_state *S, hyb_state *H)
{
    S->ord = order_of(job);
    S->kw = p->kw;
    S->vw = p->vw;
    S->n = p->n;
    S->keys = job->keys;
    S->vals = p->with_sigma ? (void *)job->sigma : job->values;
    S->alt_keys = scratch;
    S->alt_vals = p->vw ? scratch + p->keys_bytes : NULL;
    S->hist = (size_t *)(scratch + p->keys_bytes + p->vals_bytes);
    S->radix_stride = p->radix;
    S->blocks = p->blocks;
    team_barrier_init(bar, 0);
    S->bar = bar;
    S->wc_bytes = p->wc_bytes;
    S->bucket_quick = bucket_quick(job, p->vw, &S->quick_bytes);
    uint64_t *ands = (uint64_t *)((unsigned char *)S->hist + p->hist_bytes);
    uint64_t *ors = ands + 8 * p->blocks; /* a cache line apart per block */
    S->wc = p->use_wc ? (unsigned char *)(ors + 8 * p->blocks) : NULL;
    H->cap = p->cap;
    H->bounds = (size_t *)((unsigned char *)(ors + 8 * p->blocks) + (size_t)p->threads * p->wc_bytes);
    H->per_thread = (unsigned char *)H->bounds + p->bounds_bytes;
    H->ands = ands;
    H->ors = ors;
    H->lhist_bytes = p->lhist_bytes;
    H->tmp_bytes = p->tmp_bytes;
    H->first = NULL;
    H->first_buckets = 0;
    return (uint64_t *)(H->per_thread + (size_t)p->threads * (p->lhist_bytes + 2 * p->tmp_bytes));
}

/* The detection read, block by block (see block_lo): the ands and ors of
 * the keys (mapped as they are read, into the caller's array), and where
 * a count comes free, the rows' counts of the first level's buckets
 * (planned) or of the top HYB_MAX_BITS bits below top_shift. */
static void detect_keys(const sort_state *S, const hyb_state *H, const gpk_radix_job *job,
                        const first_plan *P, int planned, int top_shift, const void *input)
{
    const size_t n = S->n, blocks = S->blocks;
#pragma omp for schedule(dynamic, 1) nowait
    for (size_t j = 0; j < blocks; j++) {
        const size_t blo = block_lo(n, j, blocks), bhi = block_lo(n, j + 1, blocks);
        size_t *row = S->hist + j * S->radix_stride;
        if (planned) {
            memset(row, 0, (P->over + 1) * sizeof *row);
            reduce_count_first(P, input, blo, bhi, &H->ands[8 * j], &H->ors[8 * j], row);
        } else if (top_shift >= 0) {
            memset(row, 0, ((size_t)1 << HYB_MAX_BITS) * sizeof *row);
            map_reduce_count(&S->ord, S->kw, input, job->keys, blo, bhi, &H->ands[8 * j], &H->ors[8 * j], row,
                             (unsigned)top_shift);
        } else {
            map_and_reduce(&S->ord, S->kw, input, job->keys, blo, bhi, &H->ands[8 * j], &H->ors[8 * j]);
        }
    }
}

/* One thread, after the detection: the keys' bit range and the path (the
 * hybrid, or plan_passes' LSD passes) into C; with a planned first level,
 * its buckets into H. */
static void choose_path(const sort_plan *p, const gpk_radix_job *job, const sort_state *S, hyb_state *H,
                        const first_plan *P, team_choice *C)
{
    unsigned begin = 0, end = job->key_bits;
    if (job->key_bits == 0) {
        uint64_t a = ~0ull, o = 0;
        for (size_t j = 0; j < p->blocks; j++) {
            a &= H->ands[8 * j];
            o |= H->ors[8 * j];
        }
        gpk__radix_range_from_masks(a, o, &begin, &end);
    }
    C->range_begin = begin;
    C->range_end = end;
    C->hybrid = p->may_hybrid && end > begin && (end - begin >= HYB_MIN_BITS || p->forced == PATH_HYBRID);
    if (!C->hybrid) C->passes = plan_passes(begin, end, job->radix_bits, C->plan);
    if (C->hybrid && C->planned) {
        H->first = P;
        H->first_buckets = P->over + 1;
        H->first_clamp = 0;
        for (size_t j = 0; j < p->blocks; j++)
            H->first_clamp |= S->hist[j * p->radix] || S->hist[j * p->radix + P->over];
    }
}

/* The whole sort, run by every thread of the team: the sample (plan_first),
 * the detection read, the path's choice, then the hybrid's levels or the
 * LSD passes. */
static void team_sort(const sort_plan *p, const gpk_radix_job *job, sort_state *S, hyb_state *H,
                      first_plan *P, uint64_t *sample, team_choice *C)
{
    const size_t n = p->n, samples = p->samples;
    const unsigned kw = p->kw;
    const int T = omp_get_num_threads();
    const int tid = omp_get_thread_num();
    atomic_store_explicit(&S->bar->threads, (unsigned)T, memory_order_relaxed);
    const size_t lo = n * (size_t)tid / (size_t)T, hi = n * (size_t)(tid + 1) / (size_t)T;

    /* The hybrid's first digit is the top of the detected range; guessing
     * that the range reaches the key's top bit (or key_bits) lets the
     * detection read count it too. A wrong guess only costs the count. */
    const unsigned end_guess = job->key_bits ? job->key_bits : 8 * kw;
    const int top_shift = p->may_hybrid && end_guess >= HYB_MIN_BITS ? (int)(end_guess - HYB_MAX_BITS) : -1;

    /* The copying sort (job->src): the detection reads the input and
     * writes the mapped keys to the output, where the passes go on as in
     * place; keys that need no mapping are left where they are, and the
     * first pass reads them from the input. */
    const void *input = job->src ? job->src : job->keys;
    const void *first = needs_mapping(&S->ord) ? job->keys : input;

    if (p->plan_first) {
        for (size_t j = samples * (size_t)tid / (size_t)T; j < samples * (size_t)(tid + 1) / (size_t)T; j++)
            sample[j] = first_map(P, ((const uint64_t *)input)[j * (n / samples)]);
        team_wait(S->bar);
#pragma omp single nowait
        C->planned = plan_first_level(P, sample, samples, n, kw + p->vw, p->radix, H->bounds);
        team_wait(S->bar);
    }
    detect_keys(S, H, job, P, C->planned, top_shift, input);
    team_wait(S->bar);
#pragma omp single nowait
    choose_path(p, job, S, H, P, C);
    team_wait(S->bar);

    if (C->planned && !C->hybrid) { /* too few bits after all: the LSD passes need the keys mapped */
        uint64_t a, o;
        map_and_reduce(&S->ord, kw, input, job->keys, lo, hi, &a, &o);
        team_wait(S->bar);
    }
    if (C->hybrid) {
        hyb_level(S, H, 0, 0, n, 1, C->range_begin, C->range_end, p->with_sigma,
                  !C->planned && top_shift >= 0 && C->range_end == end_guess, C->planned ? input : first);
    } else {
        const void *from = C->planned ? job->keys : first;
        int in_b = lsd_team(S, from, S->keys, S->alt_keys, S->vals, S->alt_vals, n, C->plan, C->passes,
                            p->with_sigma);
        finish_share(S, in_b ? S->alt_keys : C->passes ? S->keys : from, in_b ? S->alt_vals : S->vals, 0, n);
        if (p->with_sigma && C->passes == 0) gpk__sigma_iota(job->sigma, job->sigma_width, lo, hi);
    }
}

/* ---- Presorted inputs --------------------------------------------------------------
 * Sort keys already in the sort's order need no work: for keys alone, and
 * with values or a permutation too (the identity is the stable order).
 * Keys alone in the reverse order need one reversal, since with every bit
 * compared equal sort keys are equal keys. Each order is one read of the
 * keys that stops at the first block out of that order, so other inputs
 * pay a block or two. */
#define PRESORTED_BLOCK 1024 /* keys compared branch-free between the checks */
#define PRESORTED_BYTES_PER_THREAD ((size_t)8 << 20)

/* Whether the keys [lo, hi) are in the sort's order (reverse: its
 * reverse), the pair (lo - 1, lo) included when lo > 0: one body per key
 * word KT, whose sort keys SORT_KEY makes. */
#define IN_ORDER_WIDTH(KT, SORT_KEY)                                                                 \
    do {                                                                                             \
        const KT *k = keys, xm = (KT)ord->xor_mask;                                                  \
        WITH_ORDER_CONST(                                                                            \
            ord, tc, hc, for (size_t i = lo ? lo : 1; i < hi && holds;) {                            \
                const size_t end = hi - i < PRESORTED_BLOCK ? hi : i + PRESORTED_BLOCK;              \
                unsigned out_of_order = 0;                                                           \
                if (reverse)                                                                         \
                    for (; i < end; i++)                                                             \
                        out_of_order |= SORT_KEY(tc, hc, xm, k[i - 1]) < SORT_KEY(tc, hc, xm, k[i]); \
                else                                                                                 \
                    for (; i < end; i++)                                                             \
                        out_of_order |= SORT_KEY(tc, hc, xm, k[i - 1]) > SORT_KEY(tc, hc, xm, k[i]); \
                holds = !out_of_order;                                                               \
            });                                                                                      \
    } while (0)
GPK_ALSO_AVX2 static int in_order_share(const key_order *ord, unsigned kw, const void *keys, size_t lo,
                                        size_t hi, int reverse)
{
    int holds = 1;
    if (kw == 4) IN_ORDER_WIDTH(uint32_t, sort_key32);
    else IN_ORDER_WIDTH(uint64_t, sort_key64);
    return holds;
}
#undef IN_ORDER_WIDTH

/* Whether the job's input keys are in the sort's order (reverse: its
 * reverse): `threads` threads, each reading its share. */
static int in_order(const gpk_radix_job *job, int threads, int reverse)
{
    const key_order ord = order_of(job);
    const void *keys = job->src ? job->src : job->keys;
    const size_t n = job->n;
    if (threads < 2) return in_order_share(&ord, job->key_width, keys, 0, n, reverse);
    int holds = 1;
#pragma omp parallel num_threads(threads) reduction(& : holds)
    {
        const size_t t = (size_t)omp_get_thread_num(), T = (size_t)omp_get_num_threads();
        holds = in_order_share(&ord, job->key_width, keys, n * t / T, n * (t + 1) / T, reverse);
    }
    return holds;
}

/* Reverses the n keys of width kw from src into dst (dst may equal src):
 * one body per key word KT. */
#define REVERSE_WIDTH(KT)                                \
    do {                                                 \
        const KT *s = src;                               \
        KT *d = dst;                                     \
        for (size_t i = 0, j = n - 1; i < j; i++, j--) { \
            const KT x = s[i], y = s[j];                 \
            d[i] = y;                                    \
            d[j] = x;                                    \
        }                                                \
        if (n % 2) d[n / 2] = s[n / 2];                  \
    } while (0)
static void reverse_keys(unsigned kw, const void *src, void *dst, size_t n)
{
    if (kw == 4) REVERSE_WIDTH(uint32_t);
    else REVERSE_WIDTH(uint64_t);
}
#undef REVERSE_WIDTH

/* The job done without sorting where its input is presorted: 1, or 0
 * with nothing touched. Every bit compared and no path forced (the tests
 * force paths to reach the sorts themselves on sorted inputs). */
static int sort_presorted(gpk_ctx *ctx, const gpk_radix_job *job)
{
    if ((job->key_bits && job->key_bits < 8 * job->key_width) || path_forced() != PATH_AUTO ||
        !gpk__hook(gpk__test.cpu_presorted, 1))
        return 0;
    /* a thread per PRESORTED_BYTES_PER_THREAD of keys, counted once for both orders */
    const int threads = team_size(ctx, job->n, job->key_width, PRESORTED_BYTES_PER_THREAD);
    if (in_order(job, threads, 0)) {
        if (job->src) memcpy(job->keys, job->src, job->n * job->key_width);
        if (job->sigma) gpk__sigma_iota(job->sigma, job->sigma_width, 0, job->n);
    } else if (!job->values && !job->sigma && in_order(job, threads, 1)) {
        reverse_keys(job->key_width, job->src ? job->src : job->keys, job->keys, job->n);
    } else {
        return 0;
    }
    ctx->last_sort_path = "radix-presorted";
    return 1;
}

gpk_status gpk__radix_sort_cpu(gpk_ctx *ctx, const gpk_radix_job *job)
{
    if (sort_presorted(ctx, job)) return GPK_OK;
    const int quick = quick_keys_job(job);
    const char *quick_path = quick == QUICK_AVX512 ? "radix-vector-avx512" : "radix-vector-avx2";
    if (quick && job->n * job->key_width <= CACHE_SORT_BYTES && sort_quick(job, quick) == 0) {
        ctx->last_sort_path = quick_path;
        return GPK_OK;
    }
    const int vector = vector_keys_job(job);
    /* In cache (at AVX-512 only: vector_keys_job), 8-byte keys by a sample. */
    if (vector && job->n * job->key_width <= CACHE_SORT_BYTES) {
        const key_order ord = order_of(job);
        const void *input = job->src ? job->src : job->keys;
        if ((job->key_width == 4 || sample_crowded(&ord, input, job->n)) && vector_sort_keys(job) == 0) {
            ctx->last_sort_path = "radix-vector";
            return GPK_OK;
        }
    }
    /* Pairs and permutations (vector_items_wins says where) on a team of
     * one thread: in cache always, above where plan_sort finds one. */
    const unsigned item_width = job->sigma ? job->sigma_width : job->value_width;
    const int in_cache = cache_sort_fits(job, item_width);
    sort_plan p;
    if (!in_cache) plan_sort(ctx, job, &p);
    if (vector_items_job(job) && vector_items_wins(job) && (in_cache || p.threads == 1) &&
        vector_sort_items(ctx, job) == 0) {
        ctx->last_sort_path = "radix-vector";
        return GPK_OK;
    }
    if (in_cache) return cache_sort(ctx, job, item_width);
    if (quick && p.threads == 1 && sort_quick(job, quick) == 0) {
        ctx->last_sort_path = quick_path;
        return GPK_OK;
    }
    /* A team of two: split in two by the quicksort that takes the keys,
     * each side sorted by one thread; else halves sorted by the vector
     * sorter, then merged. */
    if (quick && p.threads == 2 &&
        job->n * job->key_width <= vector_pair_bytes(job, quick == QUICK_AVX512 || job->key_width == 4)) {
        quick_pair_sort(job, quick);
        ctx->last_sort_path = quick_path;
        return GPK_OK;
    }
    if (vector && p.threads == 2 && job->n * job->key_width <= vector_pair_bytes(job, 0) &&
        vector_pair_sort(ctx, job) == 0) {
        ctx->last_sort_path = "radix-vector";
        return GPK_OK;
    }
    if (vector && p.threads == 1 && vector_sort_keys(job) == 0) {
        ctx->last_sort_path = "radix-vector";
        return GPK_OK;
    }

    /* Everything is allocated before the caller's data is touched, so a
     * failure leaves it as it was. The scratch stays with the context. */
    unsigned char *scratch = p.total == (size_t)-1 ? NULL : gpk__host_scratch(ctx, p.total);
    if (scratch) scratch += (64 - (uintptr_t)scratch % 64) % 64;
    if (!scratch)
        return gpk__fail(ctx, GPK_ENOMEM, "cpu sort: cannot allocate %zu bytes of scratch memory",
                         p.n * (p.kw + p.vw));
    sort_state S;
    team_barrier bar;
    hyb_state H;
    uint64_t *sample = lay_out_scratch(&p, job, scratch, &bar, &S, &H);
    first_plan P;
    if (p.plan_first) {
        /* gpk_key_map64 as a twiddle. The sort keys of the descending
         * order: the integers' (an XOR: key_bits is 0 here) folds into its
         * flip, the floats' reflection comes after it. */
        const int kind = gpk_key_kind(job->key_type), is_float = kind == GPK_KEY_FLOAT;
        P.flip = kind == GPK_KEY_UNSIGNED ? 0 : GPK_KEY_SIGN64;
        P.neg = is_float ? ~GPK_KEY_SIGN64 : 0;
        P.sub = is_float ? GPK_KEY_ROT64 : 0;
        P.reflect = S.ord.how == ORDER_REFLECT;
        if (S.ord.how == ORDER_XOR) P.flip ^= S.ord.xor_mask;
    }
    team_choice C;
    C.planned = 0;
    C.passes = 0;
    C.hybrid = 0;
    C.range_begin = C.range_end = 0;

#pragma omp parallel num_threads(p.threads)
    team_sort(&p, job, &S, &H, &P, sample, &C);

    return GPK_OK;
}
