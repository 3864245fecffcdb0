/* The permuted perceptron problem (data README, include/gpk/search.h).
 *
 * Instance "m-n-seed": one gpk_rng (xoshiro256** seeded by splitmix64 from
 * seed, include/gpk/gen.h) gives a stream of bits, each 64-bit output used
 * from its least significant bit up; a 1 bit is +1, a 0 bit -1. The first n
 * bits are the secret V[0..n), the next m*n bits are A row by row
 * (A[i][j] = bit n + i*n + j). Then every row with (A V)_i < 0 is negated
 * and H counts the values (A V)_i. Only integer operations on the
 * generator's outputs are involved, so every machine builds the same bits.
 *
 * Evaluations need the histogram of Y = A v' over -n..n; they count it in a
 * stack array of 2n + 1 int32 counters, hence the limit on n (16 KiB of
 * stack at most). */
#include "../core/internal.h"
#include "gpk/gen.h"
#include "gpk/search.h"
#include "problem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PPP_MAX_N 2047u

void gpk_ppp_free(gpk_ppp *p)
{
    if (!p) return;
    free(p->a);
    free(p->secret);
    free(p->hist);
    memset(p, 0, sizeof *p);
}

/* The bit stream of the header comment. */
typedef struct bitstream {
    gpk_rng rng;
    uint64_t word;
    unsigned left;
} bitstream;

static int8_t next_sign(bitstream *bs)
{
    if (bs->left == 0) {
        bs->word = gpk_rng_next(&bs->rng);
        bs->left = 64;
    }
    int8_t v = (bs->word & 1) ? 1 : -1;
    bs->word >>= 1;
    bs->left--;
    return v;
}

gpk_status gpk_ppp_generate(uint32_t m, uint32_t n, uint64_t seed, gpk_ppp *out)
{
    if (!out) return gpk__fail(NULL, GPK_EINVAL, "gpk_ppp_generate: out is NULL");
    memset(out, 0, sizeof *out);
    if (n == 0 || n % 2 == 0)
        return gpk__fail(NULL, GPK_EINVAL,
                         "gpk_ppp_generate: n = %u must be odd (so that no (A V)_i is 0) and >= 1", n);
    if (n > PPP_MAX_N)
        return gpk__fail(NULL, GPK_EINVAL, "gpk_ppp_generate: n = %u exceeds the limit %u", n, PPP_MAX_N);
    if (m == 0 || m > INT32_MAX) /* the histogram counters are int32 */
        return gpk__fail(NULL, GPK_EINVAL, "gpk_ppp_generate: m = %u must be in 1..%d", m, INT32_MAX);
    if ((uint64_t)m * n > SIZE_MAX / 2)
        return gpk__fail(NULL, GPK_ENOMEM, "gpk_ppp_generate: %u x %u matrix too large", m, n);

    gpk_ppp p;
    memset(&p, 0, sizeof p);
    p.m = m;
    p.n = n;
    p.seed = seed;
    p.a = malloc((size_t)m * n);
    p.secret = malloc(n);
    p.hist = calloc((size_t)n + 1, sizeof *p.hist);
    if (!p.a || !p.secret || !p.hist) {
        gpk_ppp_free(&p);
        return gpk__fail(NULL, GPK_ENOMEM, "gpk_ppp_generate: no memory for a %u x %u instance", m, n);
    }
    bitstream bs;
    gpk_rng_seed(&bs.rng, seed);
    bs.left = 0;
    bs.word = 0;
    for (uint32_t j = 0; j < n; j++) p.secret[j] = next_sign(&bs);
    for (uint32_t i = 0; i < m; i++) {
        int8_t *row = p.a + (size_t)i * n;
        int32_t y = 0;
        for (uint32_t j = 0; j < n; j++) {
            row[j] = next_sign(&bs);
            y += row[j] * p.secret[j];
        }
        if (y < 0) { /* n odd: y != 0 */
            for (uint32_t j = 0; j < n; j++) row[j] = (int8_t)-row[j];
            y = -y;
        }
        p.hist[y]++;
    }
    *out = p;
    return GPK_OK;
}

void gpk_ppp_product(const gpk_ppp *p, const int8_t *v, int32_t *y)
{
    const size_t n = p->n;
    for (size_t i = 0; i < p->m; i++) {
        const int8_t *row = p->a + i * n;
        int32_t s = 0;
        for (size_t j = 0; j < n; j++) s += row[j] * v[j];
        y[i] = s;
    }
}

/* 30 (|y| - y): 60 |y| for negative y, 0 otherwise. */
static int64_t penalty(int32_t y) { return y < 0 ? -60 * (int64_t)y : 0; }

/* c[v + n] = H'(Y)[v] - H[v] for v in -n..n: the signed histogram gap. */
static void gap_histogram(const gpk_ppp *p, const int32_t *y, int32_t *c)
{
    const int32_t n = (int32_t)p->n;
    memset(c, 0, (2 * (size_t)n + 1) * sizeof *c);
    for (size_t i = 0; i < p->m; i++) c[y[i] + n]++;
    for (int32_t v = 0; v <= n; v++) c[v + n] -= (int32_t)p->hist[v];
}

static int64_t gap_sum(const int32_t *c, uint32_t n)
{
    int64_t s = 0;
    for (size_t v = 0; v <= 2 * (size_t)n; v++) s += c[v] < 0 ? -(int64_t)c[v] : c[v];
    return s;
}

int64_t gpk_ppp_fitness(const gpk_ppp *p, const int32_t *y)
{
    int32_t c[2 * PPP_MAX_N + 1];
    if (p->n > PPP_MAX_N) return INT64_MAX; /* not made by gpk_ppp_generate */
    int64_t f = 0;
    for (size_t i = 0; i < p->m; i++) f += penalty(y[i]);
    gap_histogram(p, y, c);
    return f + gap_sum(c, p->n);
}

/* Flipping v[j] moves y_i by -2 a_ij v_j. The penalty change is summed row
 * by row; the histogram term is the gap sum after moving every row's count
 * minus the gap sum before, O(m + n) with no allocation. */
int64_t gpk_ppp_flip_delta(const gpk_ppp *p, const int32_t *y, const int8_t *v, uint32_t j)
{
    int32_t c[2 * PPP_MAX_N + 1];
    if (p->n > PPP_MAX_N) return INT64_MAX;
    const int32_t n = (int32_t)p->n;
    gap_histogram(p, y, c);
    int64_t d = -gap_sum(c, p->n);
    const int8_t *col = p->a + j;
    const int32_t vj = v[j];
    for (size_t i = 0; i < p->m; i++) {
        int32_t y2 = y[i] - 2 * col[i * (size_t)n] * vj;
        d += penalty(y2) - penalty(y[i]);
        c[y[i] + n]--;
        c[y2 + n]++;
    }
    return d + gap_sum(c, p->n);
}

int64_t gpk_ppp_flip2_delta(const gpk_ppp *p, const int32_t *y, const int8_t *v, uint32_t j, uint32_t k)
{
    int32_t c[2 * PPP_MAX_N + 1];
    if (p->n > PPP_MAX_N) return INT64_MAX;
    const int32_t n = (int32_t)p->n;
    gap_histogram(p, y, c);
    int64_t d = -gap_sum(c, p->n);
    const int32_t vj = v[j], vk = v[k];
    for (size_t i = 0; i < p->m; i++) {
        const int8_t *row = p->a + i * (size_t)n;
        int32_t y2 = y[i] - 2 * row[j] * vj - 2 * row[k] * vk;
        d += penalty(y2) - penalty(y[i]);
        c[y[i] + n]--;
        c[y2 + n]++;
    }
    return d + gap_sum(c, p->n);
}

void gpk_ppp_apply_flip(const gpk_ppp *p, int32_t *y, int8_t *v, uint32_t j)
{
    const size_t n = p->n;
    const int32_t vj = v[j];
    for (size_t i = 0; i < p->m; i++) y[i] -= 2 * p->a[i * n + j] * vj;
    v[j] = (int8_t)-vj;
}

/* ---- the problem contract (problem.h) ---- */

static gpk_status ppp_describe(const gpk_search_problem *pb, gpk_search_problem_info *info,
                               uint64_t *fingerprint, const char **why)
{
    const gpk_ppp *p = pb->ppp;
    if (!p) return *why = "PPP problem with a NULL ppp instance", GPK_EINVAL;
    if (!p->a || !p->hist || p->m == 0) return *why = "PPP instance not generated (no matrix)", GPK_EINVAL;
    info->n = p->n;
    snprintf(info->name, sizeof info->name, "%u-%u-%llu", p->m, p->n, (unsigned long long)p->seed);
    if (!fingerprint) return GPK_OK;
    uint64_t h = 0x6a09e667f3bcc908ull ^ (uint64_t)GPK_PROBLEM_PPP;
    h ^= (uint64_t)p->m << 32;
    h = gpk__fingerprint(h, p->a, (size_t)p->m * p->n);
    *fingerprint = gpk__fingerprint(h, p->hist, ((size_t)p->n + 1) * sizeof *p->hist);
    return GPK_OK;
}

/* The fitness of v given as 0 (-1) / 1 (+1) bits. */
static gpk_status ppp_cost(const gpk_search_problem *pb, const uint32_t *solution, int64_t *cost)
{
    const gpk_ppp *p = pb->ppp;
    int8_t *v = malloc(p->n);
    int32_t *y = malloc((size_t)p->m * sizeof *y);
    gpk_status st = GPK_ENOMEM;
    if (v && y) {
        for (uint32_t i = 0; i < p->n; i++) v[i] = solution[i] ? 1 : -1;
        gpk_ppp_product(p, v, y);
        *cost = gpk_ppp_fitness(p, y);
        st = GPK_OK;
    }
    free(v);
    free(y);
    return st;
}

static gpk_search_algo ppp_auto_algo(gpk_neighbourhood nb)
{
    (void)nb;
    return GPK_SEARCH_ITS;
}

/* 1-flip: n / 4, 2-flip: n / 10, at least 2 (search.c, default_tenure,
 * says why). */
static uint32_t ppp_default_tenure(gpk_neighbourhood nb, uint32_t n)
{
    const uint32_t t = nb == GPK_NB_FLIP1 ? n / 4 : n / 10;
    return t < 2 ? 2 : t;
}

const gpk__problem_ops gpk__ppp_ops = {
    .kind = GPK_PROBLEM_PPP,
    .name = "PPP",
    .command = "ppp",
    .n_min = 2,
    .binary = 1,
    .zero_solves = 1, /* the fitness is >= 0 and 0 solves the instance */
    .default_nb = GPK_NB_FLIP1,
    .paper_nb = GPK_NB_FLIP1,
    .nbs = GPK__NB_BIT(GPK_NB_FLIP1) | GPK__NB_BIT(GPK_NB_FLIP2),
    .nb_list = "flip1 or flip2",
    .auto_seconds = 0.0,
    .auto_algo = ppp_auto_algo,
    .describe = ppp_describe,
    .cost = ppp_cost,
    .default_tenure = ppp_default_tenure,
    .default_global_iters = gpk__paper_global_iters,
    .tenure_draw = NULL,
};
