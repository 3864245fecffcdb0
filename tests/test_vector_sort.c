/* The AVX-512 and AVX2 quicksorts of 32-bit keys
 * (src/sort/vector_sort_quick32.h) against qsort: unsigned, signed and float keys (through the float sort
 * keys: NaN, -0.0, infinities, subnormals), the size ladder (0, 1, 2,
 * small primes, 7-9, 15-17, 63-65, 255-257, powers of two and neighbours up to
 * 2^20 + 7), uniform, sorted, reverse, all-equal, 2, 3 and 17 distinct
 * values, organ pipe, and an input built against the pivot rule, on which
 * the depth limit's heap sort must run (its counter says so).
 *
 * The AVX2 kernel where this processor runs AVX2. The AVX-512 one twice
 * where it can: the library's kernel where this processor runs
 * AVX-512, and the same source compiled here on SIMDe's portable AVX-512
 * (GPK_HAVE_SIMDE), which runs on any processor (smaller sizes: it is
 * some 200 times slower). GPK_TEST_SMALL=1: emulated sizes up to 2^14.
 * Exits 77 (skipped) when neither can run. */
#include "sort/vector_sort_quick32.h"
#include "testutil.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef GPK_HAVE_SIMDE
#define GPK_AVX512_EMULATE 1
#define gpk__avx512_sort_level emu_sort_level
#define gpk__avx512_sort32 emu_sort32
#define gpk__avx512_sort_fallbacks emu_sort_fallbacks
#define gpk__avx512_sort_sample_observer emu_sort_sample_observer
int emu_sort_level(void);
int emu_sort32(uint32_t *keys, size_t n, int is_signed);
extern size_t emu_sort_fallbacks;
extern void (*emu_sort_sample_observer)(const uint32_t *sample, size_t m);
#include "../src/sort/vector_sort_avx512.c"
#undef gpk__avx512_sort_level
#undef gpk__avx512_sort32
#undef gpk__avx512_sort_fallbacks
#undef gpk__avx512_sort_sample_observer
#endif

typedef struct {
    const char *name;
    int (*sort)(uint32_t *keys, size_t n, int is_signed);
    size_t *fallbacks;
    void (**observer)(const uint32_t *sample, size_t m);
    size_t max_n; /* the largest case but for one a type */
} sorter;

static uint64_t rng;
static uint32_t next32(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

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

/* The float sort key of a float's bits (the CPU sort's map: negative
 * floats complemented, the others' sign bit set), so that unsigned order
 * is the floats' order with -0.0 before +0.0 and NaN by its bits. */
static uint32_t float_key(uint32_t b) { return b >> 31 ? ~b : b | 0x80000000u; }

enum { T_U32, T_I32, T_F32, TYPES };
static const char *type_name[] = {"u32", "i32", "f32"};
enum { D_UNIFORM, D_SORTED, D_REVERSE, D_EQUAL, D_FEW2, D_FEW3, D_FEW17, D_ORGAN, DISTS };
static const char *dist_name[] = {"uniform", "sorted", "reverse", "equal",
                                  "few2",    "few3",   "few17",   "organ pipe"};

/* n keys of type t and distribution d into k: for floats, their sort keys
 * (the random ones with NaN, infinities, zeros of both signs and
 * subnormals among them). */
static void fill(uint32_t *k, size_t n, int t, int d)
{
    uint32_t few[17];
    for (int i = 0; i < 17; i++) few[i] = next32();
    for (size_t i = 0; i < n; i++) {
        uint32_t x;
        switch (d) {
        case D_UNIFORM: x = next32(); break;
        case D_SORTED: x = (uint32_t)i * 977u; break;
        case D_REVERSE: x = (uint32_t)(n - i) * 977u; break;
        case D_EQUAL: x = few[0]; break;
        case D_FEW2: x = few[next32() % 2]; break;
        case D_FEW3: x = few[next32() % 3]; break;
        case D_FEW17: x = few[next32() % 17]; break;
        default: x = (uint32_t)(i < n / 2 ? i : n - i); break;
        }
        if (t == T_I32 && (d == D_SORTED || d == D_REVERSE || d == D_ORGAN)) x -= (uint32_t)(n / 2) * 977u;
        if (t == T_F32) {
            static const uint32_t specials[] = {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7f800000u,
                                                0xff800000u, 0x00000000u, 0x80000000u, 0x00000001u,
                                                0x80000001u, 0x3f800000u};
            if (d == D_UNIFORM && next32() % 8 == 0) x = specials[next32() % 10];
            x = float_key(x);
        }
        k[i] = x;
    }
}

/* One case: 1 if it passed. */
static int run(const sorter *S, uint32_t *k, uint32_t *ref, size_t n, int t, const char *what)
{
    memcpy(ref, k, n * 4);
    qsort(ref, n, 4, t == T_I32 ? cmp_i32 : cmp_u32);
    const int rc = S->sort(k, n, t == T_I32);
    const size_t at = tu_first_difference(k, ref, n, 4);
    TU_CHECK(rc == 0 && at == n, "%s %s %s n=%zu: rc %d, first difference at %zu", S->name, type_name[t],
             what, n, rc, at);
    return rc == 0 && at == n;
}

/* The input built against the pivot rule (adversary below). */
#define GAS 0x80000000u
static uint32_t *gas_keys;
static size_t gas_ranked, gas_first_seen;
static void see_sample(const uint32_t *sample, size_t m)
{
    if (gas_first_seen) return;
    for (size_t i = 0; i < m; i++)
        if (sample[i] >= GAS) {
            gas_first_seen = 1;
            const size_t at = sample[i] - GAS;
            if (gas_keys[at] >= GAS) gas_keys[at] = (uint32_t)gas_ranked++;
        }
}

/* An input of n distinct unsigned keys on which the sort's partitions
 * each split off only a few keys, built as McIlroy's adversary does for
 * comparison sorts: every key starts as "gas" (GAS + its index, above
 * every settled key, in their own order) and the sort runs on a copy;
 * the gas keys in the first sample that holds any (the next partition
 * down the largest side) become the least keys not settled yet, and the
 * sort runs again. Settling keys changes no comparison of the partitions
 * before (the keys compared with the earlier pivots stay above them), so
 * each run goes one partition deeper, each pivot among the least keys
 * of its range, until the depth limit's heap sort runs. 1 on success. */
static int adversary(const sorter *S, uint32_t *k, uint32_t *copy, size_t n)
{
    for (size_t i = 0; i < n; i++) k[i] = GAS + (uint32_t)i;
    gas_keys = k;
    gas_ranked = 0;
    for (int round = 0; round < 200; round++) {
        memcpy(copy, k, n * 4);
        const size_t before = *S->fallbacks;
        gas_first_seen = 0;
        *S->observer = see_sample;
        S->sort(copy, n, 0);
        *S->observer = NULL;
        if (*S->fallbacks > before) return 1;
        if (!gas_first_seen) return 0;
    }
    return 0;
}

static void run_sorter(const sorter *S, int small)
{
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
    const size_t cap = ((size_t)1 << 20) + 7;
    uint32_t *k = malloc(cap * 4), *ref = malloc(cap * 4);
    if (!k || !ref) {
        TU_CHECK(0, "out of memory");
        free(k);
        free(ref);
        return;
    }
    int cases = 0;
    for (int t = 0; t < TYPES; t++)
        for (int d = 0; d < DISTS; d++)
            for (int si = 0; si < ns; si++) {
                const size_t n = sizes[si];
                /* past max_n one uniform case a type, the largest */
                if (n > S->max_n && (d != D_UNIFORM || si != ns - 1 || small)) continue;
                fill(k, n, t, d);
                run(S, k, ref, n, t, dist_name[d]);
                cases++;
            }
    /* the depth limit: an adversarial input, then the same keys sorted */
    const size_t adv[] = {4099, 20000};
    for (size_t i = 0; i < sizeof adv / sizeof adv[0]; i++) {
        const size_t n = adv[i];
        const int built = adversary(S, k, ref, n);
        TU_CHECK(built, "%s: no adversarial input of %zu keys (the depth limit never ran)", S->name, n);
        const size_t before = *S->fallbacks;
        run(S, k, ref, n, T_U32, "adversarial");
        TU_CHECK(!built || *S->fallbacks > before, "%s adversarial n=%zu: the heap sort did not run", S->name,
                 n);
        printf("%s: adversarial input of %zu keys: %zu keys settled, %zu heap sorts\n", S->name, n,
               gas_ranked, *S->fallbacks - before);
        cases++;
    }
    printf("%s: %d cases\n", S->name, cases);
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
    const struct {
        sorter s;
        int (*level)(void);
        int runs_at;
        const char *isa;
    } natives[] = {
        {{"avx2", gpk__avx2_sort32, &gpk__avx2_sort_fallbacks, &gpk__avx2_sort_sample_observer,
          ((size_t)1 << 20) + 7},
         gpk__avx2_sort_level,
         GPK_SIMD_AVX2,
         "AVX2 (or the portable level is forced)"},
        {{"native", gpk__avx512_sort32, &gpk__avx512_sort_fallbacks, &gpk__avx512_sort_sample_observer,
          ((size_t)1 << 20) + 7},
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
        if (natives[i].level() == natives[i].runs_at) {
            run_sorter(&natives[i].s, small);
            ran = 1;
            continue;
        }
        printf("%s: this processor does not run %s: not run\n", natives[i].s.name, natives[i].isa);
        uint32_t k[3] = {3, 1, 2};
        TU_CHECK(natives[i].s.sort(k, 3, 0) == -1 && k[0] == 3, "%s: ran without its instruction set",
                 natives[i].s.name);
    }
#ifdef GPK_HAVE_SIMDE
    const sorter emulated = {"SIMDe", emu_sort32, &emu_sort_fallbacks, &emu_sort_sample_observer,
                             small ? ((size_t)1 << 14) + 1 : ((size_t)1 << 16) + 1};
    run_sorter(&emulated, small);
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
