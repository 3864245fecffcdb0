/* The vectorised quicksorts (src/sort/vector_sort_quick.h), AVX2 and
 * AVX-512, each built for 32- and 64-bit keys, against qsort: unsigned,
 * signed and float keys of either width (u32, i32, f32; u64, i64, f64;
 * floats through their sort keys, with NaN of both signs, infinities,
 * zeros of both signs, subnormals and 1.0 among the random ones), the
 * size ladder (0, 1, 2, small primes, 7-9, 15-17, 63-65, 255-257, powers
 * of two and neighbours up to 2^20 + 7), uniform, sorted, reverse,
 * all-equal, 2, 3 and 17 distinct values, organ pipe (64-bit keys spread
 * over all 64 bits, negative ones among the signed), and an input built
 * against the pivot rule, on which the depth limit's heap sort must run
 * (its counter says so). The builds for floats and doubles compared as
 * such (gpk__avx2_sort_f32, gpk__avx512_sort_f64, ...) on floats as they
 * are, neither NaN nor -0.0 (their callers rule those out), against qsort
 * comparing floats, on the same sizes and distributions. Also
 * gpk__avx2_merge32 against a scalar merge.
 *
 * The AVX2 kernels where this processor runs AVX2. The AVX-512 ones
 * twice where they can: the library's kernels where this processor runs
 * AVX-512 (elsewhere they must refuse, keys untouched), and the same
 * sources compiled on SIMDe's portable AVX-512 (GPK_HAVE_SIMDE:
 * vector_sort_emu32.c, vector_sort_emu64.c, vector_sort_emu_f32.c,
 * vector_sort_emu_f64.c), which run on any processor (smaller sizes:
 * they are some 200 times slower), the 32-bit and doubles builds with
 * the partition compressing to memory, the others in registers
 * (cpu_compress_store). GPK_TEST_SMALL=1: emulated sizes smaller still.
 * Prints the seed, and the cases each sorter ran. Exits 77 (skipped)
 * when nothing can run. */
#include "core/test_hooks.h"
#include "sort/vector_sort_quick.h"
#include "testutil.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef GPK_HAVE_SIMDE
/* The AVX-512 kernels on SIMDe (vector_sort_emu32.c and its siblings). */
int emu_sort_level(void);
int emu_sort32(uint32_t *keys, size_t n, int is_signed);
int emu_sort64(uint64_t *keys, size_t n, int is_signed);
int emu_sort_f64(uint64_t *keys, size_t n, int is_signed);
int emu_sort_f32(uint32_t *keys, size_t n, int is_signed);
int emu_split32(uint32_t *keys, size_t n, uint32_t pivot, int is_signed, int gt, size_t *left);
int emu_split64(uint64_t *keys, size_t n, uint64_t pivot, int is_signed, int gt, size_t *left);
int emu_split_f64(uint64_t *keys, size_t n, uint64_t pivot, int is_signed, int gt, size_t *left);
int emu_split_f32(uint32_t *keys, size_t n, uint32_t pivot, int is_signed, int gt, size_t *left);
extern size_t emu_sort_fallbacks, emu_sort64_fallbacks, emu_sort_f64_fallbacks, emu_sort_f32_fallbacks;
extern void (*emu_sort_f32_sample_observer)(const uint32_t *sample, size_t m);
extern void (*emu_sort_sample_observer)(const uint32_t *sample, size_t m);
extern void (*emu_sort64_sample_observer)(const uint64_t *sample, size_t m);
extern void (*emu_sort_f64_sample_observer)(const uint64_t *sample, size_t m);
#endif

/* A sorter of keys of `bits` bits: sort32 and observer32 where bits is
 * 32, sort64 and observer64 where it is 64. The keys of a case are held
 * in an untyped buffer, bits / 8 bytes each (key_at, set_key). */
typedef struct {
    const char *name;
    int bits;
    int (*sort32)(uint32_t *keys, size_t n, int is_signed);
    int (*sort64)(uint64_t *keys, size_t n, int is_signed);
    /* its partition (gpk__avx2_split32, ...) */
    int (*split32)(uint32_t *keys, size_t n, uint32_t pivot, int is_signed, int gt, size_t *left);
    int (*split64)(uint64_t *keys, size_t n, uint64_t pivot, int is_signed, int gt, size_t *left);
    size_t *fallbacks;
    void (**observer32)(const uint32_t *sample, size_t m);
    void (**observer64)(const uint64_t *sample, size_t m);
    size_t max_n; /* the largest case but for one a type */
    int floats;   /* sorts floats or doubles as they are (gpk__avx2_sort_f64), not sort keys */
    /* the AVX-512 partition's stores (cpu_compress_store: 1 compressed to
     * memory, 0 in registers; 0 in the initializers below: the
     * processor's choice) plus one */
    int compress_store;
} sorter;

static int sort_keys(const sorter *S, void *k, size_t n, int is_signed)
{
    return S->bits == 32 ? S->sort32(k, n, is_signed) : S->sort64(k, n, is_signed);
}
static uint64_t key_at(const void *k, size_t i, int bits)
{
    return bits == 32 ? ((const uint32_t *)k)[i] : ((const uint64_t *)k)[i];
}
static void set_key(void *k, size_t i, int bits, uint64_t x)
{
    if (bits == 32) ((uint32_t *)k)[i] = (uint32_t)x;
    else ((uint64_t *)k)[i] = x;
}

static uint64_t rng;
static uint64_t step_rng(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static uint32_t next32(void) { return (uint32_t)(step_rng() >> 16); }
/* all 64 bits (xorshift64*) */
static uint64_t next64(void) { return step_rng() * 0x2545F4914F6CDD1Dull; }
static uint64_t next_key(int bits) { return bits == 32 ? next32() : next64(); }

static int cmp_u32(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}
static int cmp_i32(const void *a, const void *b)
{
    const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}
static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}
static int cmp_i64(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}
static int cmp_f32(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}
static int cmp_f64(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The float sort key of a float's (double's) bits (the CPU sort's map:
 * negative floats complemented, the others' sign bit set), so that
 * unsigned order is the floats' order with -0.0 before +0.0 and NaN by
 * its bits. */
static uint32_t float_key(uint32_t b) { return b >> 31 ? ~b : b | 0x80000000u; }
static uint64_t double_key(uint64_t b) { return b >> 63 ? ~b : b | 0x8000000000000000ull; }

/* Unsigned, signed (compared so: is_signed = 1) and float keys. */
enum { T_UNSIGNED, T_SIGNED, T_FLOAT, TYPES };
static const char *type_name(int bits, int t)
{
    static const char *names[2][TYPES] = {{"u32", "i32", "f32"}, {"u64", "i64", "f64"}};
    return names[bits == 64][t];
}
enum { D_UNIFORM, D_SORTED, D_REVERSE, D_EQUAL, D_FEW2, D_FEW3, D_FEW17, D_ORGAN, DISTS };
static const char *dist_name[] = {"uniform", "sorted", "reverse", "equal",
                                  "few2",    "few3",   "few17",   "organ pipe"};

/* The floats among the uniform keys, one in 8: quiet NaN of both signs,
 * a signalling NaN, infinities, zeros of both signs, the least
 * subnormals of both signs, 1.0. */
static const uint32_t specials32[] = {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7f800000u, 0xff800000u,
                                      0x00000000u, 0x80000000u, 0x00000001u, 0x80000001u, 0x3f800000u};
static const uint64_t specials64[] = {0x7ff8000000000000ull, 0xfff8000000000000ull, 0x7ff0000000000001ull,
                                      0x7ff0000000000000ull, 0xfff0000000000000ull, 0x0000000000000000ull,
                                      0x8000000000000000ull, 0x0000000000000001ull, 0x8000000000000001ull,
                                      0x3ff0000000000000ull};

/* The step between the sorted, reverse and organ pipe keys: 977 for
 * 32-bit keys; for 64-bit keys one that changes both halves, the
 * largest case's keys reaching bit 62 (so their doubles stay positive). */
static uint64_t order_step(int bits) { return bits == 32 ? 977u : ((uint64_t)1 << 42) + 0x9E3779B1u; }

/* The double (float) of bits x made neither NaN (its exponent's top bit
 * cleared) nor -0.0 (+0.0 instead), as gpk__avx2_sort_f64
 * (gpk__avx2_sort_f32) takes them. */
static uint64_t plain_double(uint64_t x)
{
    if ((x & ~(1ull << 63)) > 0x7ff0000000000000ull) x &= ~(1ull << 62);
    return x == 1ull << 63 ? 0 : x;
}
static uint32_t plain_float(uint32_t x)
{
    if ((x & ~(1u << 31)) > 0x7f800000u) x &= ~(1u << 30);
    return x == 1u << 31 ? 0 : x;
}

/* n keys of `bits` bits, type t and distribution d into k: for floats,
 * their sort keys (the random ones with the specials above among them),
 * or for a sorter of floats as they are (`floats`) their bits, made plain
 * (plain_float, plain_double). */
static void fill(void *k, size_t n, int bits, int t, int d, int floats)
{
    const uint64_t mask = bits == 32 ? UINT32_MAX : UINT64_MAX, step = order_step(bits);
    /* 32-bit organ pipes count by 1, as they always have */
    const uint64_t pipe_step = bits == 32 ? 1 : step;
    uint64_t few[17];
    for (int i = 0; i < 17; i++) few[i] = next_key(bits);
    for (size_t i = 0; i < n; i++) {
        uint64_t x;
        switch (d) {
        case D_UNIFORM: x = next_key(bits); break;
        case D_SORTED: x = (uint64_t)i * step; break;
        case D_REVERSE: x = (uint64_t)(n - i) * step; break;
        case D_EQUAL: x = few[0]; break;
        case D_FEW2: x = few[next32() % 2]; break;
        case D_FEW3: x = few[next32() % 3]; break;
        case D_FEW17: x = few[next32() % 17]; break;
        default: x = (uint64_t)(i < n / 2 ? i : n - i) * pipe_step; break;
        }
        /* signed: about half of them negative */
        if (t == T_SIGNED && (d == D_SORTED || d == D_REVERSE || d == D_ORGAN)) x -= (uint64_t)(n / 2) * step;
        x &= mask;
        if (t == T_FLOAT && bits == 32) {
            if (d == D_UNIFORM && next32() % 8 == 0) x = specials32[next32() % 10];
            x = floats ? plain_float((uint32_t)x) : float_key((uint32_t)x);
        } else if (t == T_FLOAT) {
            if (d == D_UNIFORM && next32() % 8 == 0) x = specials64[next32() % 10];
            x = floats ? plain_double(x) : double_key(x);
        }
        set_key(k, i, bits, x);
    }
}

/* One case: 1 if it passed. */
static int run(const sorter *S, void *k, void *ref, size_t n, int t, const char *what)
{
    const size_t w = (size_t)S->bits / 8;
    memcpy(ref, k, n * w);
    if (S->bits == 32) qsort(ref, n, w, S->floats ? cmp_f32 : t == T_SIGNED ? cmp_i32 : cmp_u32);
    else qsort(ref, n, w, S->floats ? cmp_f64 : t == T_SIGNED ? cmp_i64 : cmp_u64);
    const int rc = sort_keys(S, k, n, t == T_SIGNED);
    const size_t at = tu_first_difference(k, ref, n, w);
    TU_CHECK(rc == 0 && at == n, "%s %s %s n=%zu: rc %d, first difference at %zu", S->name,
             type_name(S->bits, t), what, n, rc, at);
    return rc == 0 && at == n;
}

/* The input built against the pivot rule (adversary below), of gas_bits
 * bits: gas keys are gas_base() + i * gas_step(), settled ones
 * rank * gas_step(); 64-bit keys thus differ in both halves. For a
 * sorter of floats (gas_floats) the gas starts at 2.0, so that every
 * key is a positive float, ordered as its bits. */
static int gas_bits, gas_floats;
static void *gas_keys;
static size_t gas_ranked, gas_first_seen;
static uint64_t gas_base(void) { return (uint64_t)1 << (gas_bits - 1 - gas_floats); }
static uint64_t gas_step(void) { return gas_bits == 32 ? 1 : ((uint64_t)1 << 32) + 1; }
static void see_key(uint64_t key)
{
    if (key < gas_base()) return;
    gas_first_seen = 1;
    const size_t at = (size_t)((key - gas_base()) / gas_step());
    if (key_at(gas_keys, at, gas_bits) >= gas_base())
        set_key(gas_keys, at, gas_bits, (uint64_t)gas_ranked++ * gas_step());
}
static void see_sample32(const uint32_t *sample, size_t m)
{
    if (gas_first_seen) return;
    for (size_t i = 0; i < m; i++) see_key(sample[i]);
}
static void see_sample64(const uint64_t *sample, size_t m)
{
    if (gas_first_seen) return;
    for (size_t i = 0; i < m; i++) see_key(sample[i]);
}

/* An input of n distinct unsigned keys on which the sort's partitions
 * each split off only a few keys, built as McIlroy's adversary does for
 * comparison sorts: every key starts as "gas" (above every settled key,
 * in their own order) and the sort runs on a copy; the gas keys in the
 * first sample that holds any (the next partition down the largest side)
 * become the least keys not settled yet, and the sort runs again.
 * Settling keys changes no comparison of the partitions before (the keys
 * compared with the earlier pivots stay above them), so each run goes
 * one partition deeper, each pivot among the least keys of its range,
 * until the depth limit's heap sort runs. 1 on success. */
static int adversary(const sorter *S, void *k, void *copy, size_t n)
{
    gas_bits = S->bits;
    gas_floats = S->floats;
    for (size_t i = 0; i < n; i++) set_key(k, i, S->bits, gas_base() + (uint64_t)i * gas_step());
    gas_keys = k;
    gas_ranked = 0;
    for (int round = 0; round < 200; round++) {
        memcpy(copy, k, n * (size_t)S->bits / 8);
        const size_t before = *S->fallbacks;
        gas_first_seen = 0;
        if (S->bits == 32) *S->observer32 = see_sample32;
        else *S->observer64 = see_sample64;
        sort_keys(S, copy, n, 0);
        if (S->bits == 32) *S->observer32 = NULL;
        else *S->observer64 = NULL;
        if (*S->fallbacks > before) return 1;
        if (!gas_first_seen) return 0;
    }
    return 0;
}

/* Key a below key b as sorter S compares them (floats, or integers
 * signed or not). */
static int key_below(const sorter *S, uint64_t a, uint64_t b, int is_signed)
{
    if (S->floats && S->bits == 32) {
        float x, y;
        const uint32_t a32 = (uint32_t)a, b32 = (uint32_t)b;
        memcpy(&x, &a32, 4);
        memcpy(&y, &b32, 4);
        return x < y;
    }
    if (S->floats) {
        double x, y;
        memcpy(&x, &a, 8);
        memcpy(&y, &b, 8);
        return x < y;
    }
    if (!is_signed) return a < b;
    return S->bits == 32 ? (int32_t)(uint32_t)a < (int32_t)(uint32_t)b : (int64_t)a < (int64_t)b;
}

/* The sorter's partition (split32, split64) on a few sizes and
 * distributions, around a drawn key, the least and the greatest, both
 * ways (gt): the keys going left all below the pivot (at most it), the
 * others not, and the same keys as before (sorted, they match). Returns
 * the cases run. */
static int split_checks(const sorter *S, void *k, void *ref, void *copy)
{
    const size_t sizes[] = {0, 1, 2, 17, 100, 257, 1000, 4099, 65537};
    const int dists[] = {D_UNIFORM, D_SORTED, D_EQUAL, D_FEW3};
    const size_t w = (size_t)S->bits / 8;
    int cases = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (size_t di = 0; di < sizeof dists / sizeof dists[0]; di++)
            for (int t = S->floats ? T_FLOAT : T_UNSIGNED; t <= (S->floats ? T_FLOAT : T_SIGNED); t++)
                for (int which = 0; which < 3; which++)
                    for (int gt = 0; gt <= 1; gt++) {
                        const size_t n = sizes[si];
                        const int sg = t == T_SIGNED;
                        fill(k, n, S->bits, t, dists[di], S->floats);
                        uint64_t p = n ? key_at(k, next32() % n, S->bits) : 7;
                        for (size_t i = 0; i < n && which; i++) {
                            const uint64_t x = key_at(k, i, S->bits);
                            if (which == 1 ? key_below(S, x, p, sg) : key_below(S, p, x, sg)) p = x;
                        }
                        memcpy(copy, k, n * w);
                        size_t left = SIZE_MAX;
                        const int rc = S->bits == 32 ? S->split32(k, n, (uint32_t)p, sg, gt, &left)
                                                     : S->split64(k, n, p, sg, gt, &left);
                        int ok = rc == 0 && left <= n;
                        for (size_t i = 0; ok && i < n; i++) {
                            const uint64_t x = key_at(k, i, S->bits);
                            const int goes_left = gt ? !key_below(S, p, x, sg) : key_below(S, x, p, sg);
                            ok = goes_left == (i < left);
                        }
                        /* the same keys: both sorted by the sorter itself, checked above */
                        if (ok) {
                            memcpy(ref, k, n * w);
                            sort_keys(S, ref, n, sg);
                            sort_keys(S, copy, n, sg);
                            ok = memcmp(ref, copy, n * w) == 0;
                        }
                        TU_CHECK(
                            ok,
                            "%s split %s %s n=%zu pivot %s gt=%d: rc %d, left %zu, keys misplaced or lost",
                            S->name, type_name(S->bits, t), dist_name[dists[di]], n,
                            which == 0       ? "drawn"
                                : which == 1 ? "least"
                                             : "greatest",
                            gt, rc, left);
                        cases++;
                    }
    return cases;
}

static void run_sorter(const sorter *S, int small)
{
    const clock_t start = clock();
    size_t sizes[96];
    int ns = 0;
    const size_t fixed[] = {0,  1,  2,  3,  5,  7,  8,   9,   11,  13,  15,  16,  17, 31,
                            32, 33, 63, 64, 65, 97, 127, 128, 129, 255, 256, 257, 263};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) sizes[ns++] = fixed[i];
    for (int b = 9; b <= 20; b++) {
        const size_t p = (size_t)1 << b;
        sizes[ns++] = p - 1;
        sizes[ns++] = p;
        sizes[ns++] = p + 1;
    }
    sizes[ns++] = ((size_t)1 << 20) + 7;
    const size_t cap = ((size_t)1 << 20) + 7, w = (size_t)S->bits / 8;
    void *k = malloc(cap * w), *ref = malloc(cap * w);
    if (!k || !ref) {
        TU_CHECK(0, "out of memory");
        free(k);
        free(ref);
        return;
    }
    int cases = 0;
    for (int t = S->floats ? T_FLOAT : 0; t < TYPES; t++)
        for (int d = 0; d < DISTS; d++)
            for (int si = 0; si < ns; si++) {
                const size_t n = sizes[si];
                /* past max_n one uniform case a type, the largest */
                if (n > S->max_n && (d != D_UNIFORM || si != ns - 1 || small)) continue;
                fill(k, n, S->bits, t, d, S->floats);
                run(S, k, ref, n, t, dist_name[d]);
                cases++;
            }
    void *copy = malloc(65537 * w);
    if (copy) cases += split_checks(S, k, ref, copy);
    TU_CHECK(copy != NULL, "out of memory");
    free(copy);
    /* the depth limit: an adversarial input, then the same keys sorted */
    const size_t adv[] = {4099, 20000};
    for (size_t i = 0; i < sizeof adv / sizeof adv[0]; i++) {
        const size_t n = adv[i];
        const int built = adversary(S, k, ref, n);
        TU_CHECK(built, "%s: no adversarial input of %zu keys (the depth limit never ran)", S->name, n);
        const size_t before = *S->fallbacks;
        run(S, k, ref, n, T_UNSIGNED, "adversarial");
        TU_CHECK(!built || *S->fallbacks > before, "%s adversarial n=%zu: the heap sort did not run", S->name,
                 n);
        printf("%s: adversarial input of %zu keys: %zu keys settled, %zu heap sorts\n", S->name, n,
               gas_ranked, *S->fallbacks - before);
        cases++;
    }
    printf("%s: %d cases, %.1f s\n", S->name, cases, (double)(clock() - start) / CLOCKS_PER_SEC);
    free(k);
    free(ref);
}

/* gpk__avx2_merge32 against a scalar merge: run lengths around the
 * register width and the padding, keys that include UINT32_MAX (the
 * padding's value) and all-equal runs, every count from a few to all. */
static void merge_checks(void)
{
    const size_t lens[] = {0, 1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 100, 1000, 4099};
    const size_t L = sizeof lens / sizeof lens[0];
    uint32_t *a = malloc(4099 * 4), *b = malloc(4099 * 4), *out = malloc(8200 * 4), *ref = malloc(8200 * 4);
    if (!a || !b || !out || !ref) {
        TU_CHECK(0, "out of memory");
        free(a), free(b), free(out), free(ref);
        return;
    }
    int cases = 0;
    for (int d = 0; d < 4; d++)
        for (size_t x = 0; x < L; x++)
            for (size_t y = 0; y < L; y++) {
                const size_t na = lens[x], nb = lens[y];
                for (size_t i = 0; i < na + nb; i++) {
                    const uint32_t r = next32();
                    /* uniform, few values near the top, all UINT32_MAX, two values */
                    const uint32_t v = d == 0 ? r
                        : d == 1              ? UINT32_MAX - (r & 3)
                        : d == 2              ? UINT32_MAX
                                              : r & 1;
                    if (i < na) a[i] = v;
                    else b[i - na] = v;
                }
                qsort(a, na, 4, cmp_u32);
                qsort(b, nb, 4, cmp_u32);
                memcpy(ref, a, na * 4);
                memcpy(ref + na, b, nb * 4);
                qsort(ref, na + nb, 4, cmp_u32);
                const size_t counts[] = {0, 1, 5, 8, 13, (na + nb) / 2, na + nb};
                for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
                    const size_t count = counts[c] > na + nb ? na + nb : counts[c];
                    out[count] = 0x5A5A5A5Au;
                    const int rc = gpk__avx2_merge32(a, na, b, nb, out, count);
                    TU_CHECK(rc == 0 && !memcmp(out, ref, count * 4) && out[count] == 0x5A5A5A5Au,
                             "avx2 merge dist %d na=%zu nb=%zu count=%zu: rc %d, wrong keys or written past",
                             d, na, nb, count, rc);
                    cases++;
                }
            }
    TU_CHECK(gpk__avx2_merge32(a, 1, b, 1, out, 3) == -1, "avx2 merge: count past both runs accepted");
    printf("avx2 merge: %d cases\n", cases);
    free(a), free(b), free(out), free(ref);
}

int main(void)
{
    const uint64_t seed = tu_seed();
    rng = seed | 1;
    const int small = getenv("GPK_TEST_SMALL") && *getenv("GPK_TEST_SMALL") == '1';
    int ran = 0;
    /* the kernels this processor runs, natively; the others must refuse */
    /* the 64-bit builds every distribution up to 2^18 + 1 (and one case a
     * type at 2^20 + 7): their qsort references dominate the test's time */
    const size_t all = ((size_t)1 << 20) + 7, all64 = ((size_t)1 << 18) + 1;
    const struct {
        sorter s;
        int (*level)(void);
        int runs_at;
        const char *isa;
    } natives[] = {
        {{.name = "avx2",
          .bits = 32,
          .sort32 = gpk__avx2_sort32,
          .split32 = gpk__avx2_split32,
          .fallbacks = &gpk__avx2_sort_fallbacks,
          .observer32 = &gpk__avx2_sort_sample_observer,
          .max_n = all},
         gpk__avx2_sort_level,
         GPK_SIMD_AVX2,
         "AVX2 (or the portable level is forced)"},
        {{.name = "avx2-64",
          .bits = 64,
          .sort64 = gpk__avx2_sort64,
          .split64 = gpk__avx2_split64,
          .fallbacks = &gpk__avx2_sort64_fallbacks,
          .observer64 = &gpk__avx2_sort64_sample_observer,
          .max_n = all64},
         gpk__avx2_sort_level,
         GPK_SIMD_AVX2,
         "AVX2 (or the portable level is forced)"},
        {{.name = "avx2-f64",
          .bits = 64,
          .sort64 = gpk__avx2_sort_f64,
          .split64 = gpk__avx2_split_f64,
          .fallbacks = &gpk__avx2_sort_f64_fallbacks,
          .observer64 = &gpk__avx2_sort_f64_sample_observer,
          .max_n = all64,
          .floats = 1},
         gpk__avx2_sort_level,
         GPK_SIMD_AVX2,
         "AVX2 (or the portable level is forced)"},
        {{.name = "avx2-f32",
          .bits = 32,
          .sort32 = gpk__avx2_sort_f32,
          .split32 = gpk__avx2_split_f32,
          .fallbacks = &gpk__avx2_sort_f32_fallbacks,
          .observer32 = &gpk__avx2_sort_f32_sample_observer,
          .max_n = all64,
          .floats = 1},
         gpk__avx2_sort_level,
         GPK_SIMD_AVX2,
         "AVX2 (or the portable level is forced)"},
        {{.name = "native",
          .bits = 32,
          .sort32 = gpk__avx512_sort32,
          .split32 = gpk__avx512_split32,
          .fallbacks = &gpk__avx512_sort_fallbacks,
          .observer32 = &gpk__avx512_sort_sample_observer,
          .max_n = all},
         gpk__avx512_sort_level,
         GPK_SIMD_AVX512,
         "AVX-512 (or a lower level is forced)"},
        {{.name = "native-64",
          .bits = 64,
          .sort64 = gpk__avx512_sort64,
          .split64 = gpk__avx512_split64,
          .fallbacks = &gpk__avx512_sort64_fallbacks,
          .observer64 = &gpk__avx512_sort64_sample_observer,
          .max_n = all64},
         gpk__avx512_sort_level,
         GPK_SIMD_AVX512,
         "AVX-512 (or a lower level is forced)"},
        {{.name = "native-f64",
          .bits = 64,
          .sort64 = gpk__avx512_sort_f64,
          .split64 = gpk__avx512_split_f64,
          .fallbacks = &gpk__avx512_sort_f64_fallbacks,
          .observer64 = &gpk__avx512_sort_f64_sample_observer,
          .max_n = all64,
          .floats = 1},
         gpk__avx512_sort_level,
         GPK_SIMD_AVX512,
         "AVX-512 (or a lower level is forced)"},
        {{.name = "native-f32",
          .bits = 32,
          .sort32 = gpk__avx512_sort_f32,
          .split32 = gpk__avx512_split_f32,
          .fallbacks = &gpk__avx512_sort_f32_fallbacks,
          .observer32 = &gpk__avx512_sort_f32_sample_observer,
          .max_n = all64,
          .floats = 1},
         gpk__avx512_sort_level,
         GPK_SIMD_AVX512,
         "AVX-512 (or a lower level is forced)"},
    };
    if (gpk__avx2_sort_level() == GPK_SIMD_AVX2) merge_checks();
    else {
        uint32_t a[1] = {1}, out[1] = {7};
        TU_CHECK(gpk__avx2_merge32(a, 1, a, 0, out, 1) == -1 && out[0] == 7,
                 "avx2 merge: ran without its instruction set");
    }
    for (size_t i = 0; i < sizeof natives / sizeof natives[0]; i++) {
        const sorter *S = &natives[i].s;
        if (natives[i].level() == natives[i].runs_at) {
            run_sorter(S, small);
            ran = 1;
            continue;
        }
        printf("%s: this processor does not run %s: not run\n", S->name, natives[i].isa);
        uint32_t k32[3] = {3, 1, 2};
        uint64_t k64[3] = {3, 1, 2};
        const int rc = S->bits == 32 ? S->sort32(k32, 3, 0) : S->sort64(k64, 3, 0);
        TU_CHECK(rc == -1 && k32[0] == 3 && k32[1] == 1 && k32[2] == 2 && k64[0] == 3 && k64[1] == 1 &&
                     k64[2] == 2,
                 "%s: ran without its instruction set (rc %d, or keys touched)", S->name, rc);
    }
#ifdef GPK_HAVE_SIMDE
    const size_t emulated_n = small ? ((size_t)1 << 14) + 1 : ((size_t)1 << 16) + 1;
    const sorter emulated[] = {
        {.name = "SIMDe",
         .bits = 32,
         .sort32 = emu_sort32,
         .split32 = emu_split32,
         .fallbacks = &emu_sort_fallbacks,
         .observer32 = &emu_sort_sample_observer,
         .max_n = emulated_n,
         .compress_store = 2},
        {.name = "SIMDe-64",
         .bits = 64,
         .sort64 = emu_sort64,
         .split64 = emu_split64,
         .fallbacks = &emu_sort64_fallbacks,
         .observer64 = &emu_sort64_sample_observer,
         .max_n = emulated_n,
         .compress_store = 1},
        {.name = "SIMDe-f64",
         .bits = 64,
         .sort64 = emu_sort_f64,
         .split64 = emu_split_f64,
         .fallbacks = &emu_sort_f64_fallbacks,
         .observer64 = &emu_sort_f64_sample_observer,
         .max_n = emulated_n,
         .floats = 1,
         .compress_store = 2},
        {.name = "SIMDe-f32",
         .bits = 32,
         .sort32 = emu_sort_f32,
         .split32 = emu_split_f32,
         .fallbacks = &emu_sort_f32_fallbacks,
         .observer32 = &emu_sort_f32_sample_observer,
         .max_n = emulated_n,
         .floats = 1,
         .compress_store = 1},
    };
    for (size_t i = 0; i < sizeof emulated / sizeof emulated[0]; i++) {
        gpk__test.cpu_compress_store = emulated[i].compress_store - 1;
        printf("%s: partition compressed %s\n", emulated[i].name,
               emulated[i].compress_store == 2 ? "to memory" : "in registers");
        run_sorter(&emulated[i], small);
    }
    gpk__test.cpu_compress_store = GPK_HOOK_UNSET;
    ran = 1;
#else
    printf("SIMDe: not found at configure time: not run\n");
#endif
    if (!ran) {
        printf("test_vector_sort: nothing to run here\n");
        return TU_SKIP;
    }
    return tu_finish("test_vector_sort");
}
