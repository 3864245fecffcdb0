/* Quadratic assignment problem: the QAPLIB reader, full and incremental
 * evaluation (include/gpk/search.h).
 *
 * Costs are exact int64_t. The reader keeps every entry within int32 and
 * rejects instances where n^2 * max|A| * max|B| exceeds 2^60: the cost is at
 * most that product, a swap delta at most twice it, and Taillard's update
 * adds terms of at most 32 max|A| max|B| to a delta, so no intermediate
 * value of this file can overflow for an accepted instance. */
#include "problem.h"
#include "search_internal.h"
#include "search_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Beyond this the two matrices alone take 2 * 8 * n^2 = 4 GiB or more. */
#define QAP_MAX_N 16384u
#define QAP_VALUE_MAX 2147483647

void gpk_qap_free(gpk_qap *q)
{
    if (!q) return;
    free(q->a);
    free(q->b);
    memset(q, 0, sizeof *q);
}

/* Reads count integers into m; the message says which matrix ran short. */
static gpk_status read_matrix(gpk__text *t, int64_t *m, uint64_t count, uint32_t n, const char *which,
                              int64_t *maxabs)
{
    char show[40];
    for (uint64_t k = 0; k < count; k++) {
        const char *tok;
        size_t len;
        if (!gpk__text_next(t, &tok, &len))
            return gpk__text_fail(t, GPK_EFORMAT, "truncated: matrix %s has %llu of its %u x %u entries",
                                  which, (unsigned long long)k, n, n);
        int64_t v;
        int r = gpk__tok_i64(tok, len, -(int64_t)QAP_VALUE_MAX, QAP_VALUE_MAX, &v);
        if (r < 0)
            return gpk__text_fail(t, GPK_EFORMAT, "matrix %s: '%s' is not an integer", which,
                                  gpk__tok_show(tok, len, show));
        if (r > 0)
            return gpk__text_fail(t, GPK_EFORMAT, "matrix %s: %s is outside [-%d, %d]", which,
                                  gpk__tok_show(tok, len, show), QAP_VALUE_MAX, QAP_VALUE_MAX);
        m[k] = v;
        if ((v < 0 ? -v : v) > *maxabs) *maxabs = v < 0 ? -v : v;
    }
    return GPK_OK;
}

gpk_status gpk_qap_parse(const char *text, size_t len, const char *name, gpk_qap *out)
{
    if (!out) return gpk__fail(NULL, GPK_EINVAL, "gpk_qap_parse: out is NULL");
    memset(out, 0, sizeof *out);
    if (!text && len) return gpk__fail(NULL, GPK_EINVAL, "gpk_qap_parse: text is NULL");
    if (!name) name = "<memory>";

    gpk__text t;
    gpk__text_init(&t, text ? text : "", len, name);
    char show[40];
    const char *tok;
    size_t tlen;
    if (!gpk__text_next(&t, &tok, &tlen))
        return gpk__text_fail(&t, GPK_EFORMAT, "truncated: empty file, expected the size n");
    int64_t n64;
    int r = gpk__tok_i64(tok, tlen, INT64_MIN, INT64_MAX, &n64);
    if (r != 0)
        return gpk__text_fail(&t, GPK_EFORMAT, "the size n: '%s' is not an integer",
                              gpk__tok_show(tok, tlen, show));
    if (n64 < 2) return gpk__text_fail(&t, GPK_EFORMAT, "n = %lld: at least 2 needed", (long long)n64);
    if (n64 > (int64_t)QAP_MAX_N)
        return gpk__text_fail(&t, GPK_EFORMAT, "n = %lld: too large (at most %u)", (long long)n64, QAP_MAX_N);
    uint32_t n = (uint32_t)n64;
    uint64_t nn = (uint64_t)n * n;
    /* Every number takes a digit and a separator: a text too short for the
     * 2 n^2 numbers is truncated. Said before allocating when the matrices
     * would be large (a forged n in a tiny file); small ones are read, so
     * that the message points at the line where the text stops. */
    size_t rest = (size_t)(t.end - t.p);
    if (n > 256 && (uint64_t)rest + 1 < 4 * nn)
        return gpk__text_fail(&t, GPK_EFORMAT,
                              "truncated: n = %u needs 2 x %u x %u numbers, only %zu bytes follow", n, n, n,
                              rest);

    gpk_qap q;
    memset(&q, 0, sizeof q);
    q.n = n;
    q.a = malloc(nn * sizeof *q.a);
    q.b = malloc(nn * sizeof *q.b);
    if (!q.a || !q.b) {
        gpk_qap_free(&q);
        return gpk__fail(NULL, GPK_ENOMEM, "%s: no memory for two %u x %u matrices", name, n, n);
    }
    int64_t max_a = 0, max_b = 0;
    gpk_status s = read_matrix(&t, q.a, nn, n, "A", &max_a);
    if (s == GPK_OK) s = read_matrix(&t, q.b, nn, n, "B", &max_b);
    if (s == GPK_OK && gpk__text_next(&t, &tok, &tlen)) {
        /* Some files (car10*) carry a third matrix, a linear term this
         * model has no place for: name the case. */
        gpk__text probe = t;
        const char *tk;
        size_t tl;
        uint64_t more = 1;
        while (more <= nn && gpk__text_next(&probe, &tk, &tl)) more++;
        s = gpk__text_fail(&t, GPK_EFORMAT, "trailing garbage '%s' after the 2 x %u x %u numbers%s",
                           gpk__tok_show(tok, tlen, show), n, n,
                           more == nn ? " (a third n x n matrix? linear terms are not supported)" : "");
    }
    /* Overflow guard (see the top of the file), exact: max_a * max_b < 2^62. */
    if (s == GPK_OK && max_a && max_b && nn > ((uint64_t)1 << 60) / ((uint64_t)max_a * (uint64_t)max_b))
        s = gpk__text_fail(&t, GPK_EFORMAT,
                           "entries too large: n^2 max|A| max|B| = %u^2 x %lld x %lld exceeds 2^60, "
                           "costs could overflow 64 bits",
                           n, (long long)max_a, (long long)max_b);
    if (s != GPK_OK) {
        gpk_qap_free(&q);
        return s;
    }
    gpk__base_name(name, q.name, sizeof q.name);
    *out = q;
    return GPK_OK;
}

static gpk_status qap_parse_text(const char *text, size_t len, const char *path, void *out)
{
    return gpk_qap_parse(text, len, path, (gpk_qap *)out);
}

gpk_status gpk_qap_load(const char *path, gpk_qap *out)
{
    if (!out) return gpk__fail(NULL, GPK_EINVAL, "gpk_qap_load: out is NULL");
    memset(out, 0, sizeof *out);
    if (!path) return gpk__fail(NULL, GPK_EINVAL, "gpk_qap_load: path is NULL");
    return gpk__load_text(path, qap_parse_text, out);
}

int64_t gpk_qap_cost(const gpk_qap *q, const uint32_t *p)
{
    const size_t n = q->n;
    int64_t c = 0;
    for (size_t i = 0; i < n; i++) {
        const int64_t *ai = q->a + i * n;
        const int64_t *bi = q->b + (size_t)p[i] * n;
        for (size_t j = 0; j < n; j++) c += ai[j] * bi[p[j]];
    }
    return c;
}

/* Exchanging p[r] and p[s] changes only the terms with i or j in {r, s}:
 *   (a_rr - a_ss)(b[ps][ps] - b[pr][pr]) + (a_rs - a_sr)(b[ps][pr] - b[pr][ps])
 *   + sum_{k != r,s} (a_kr - a_ks)(b[pk][ps] - b[pk][pr])
 *                  + (a_rk - a_sk)(b[ps][pk] - b[pr][pk])
 * with pr = p[r], ps = p[s]: column r and row r of A meet the old and new
 * locations, no symmetry assumed (Taillard 1991, eq. for asymmetric A, B). */
int64_t gpk_qap_swap_delta(const gpk_qap *q, const uint32_t *p, uint32_t r, uint32_t s)
{
    const size_t n = q->n;
    const int64_t *a = q->a, *b = q->b;
    const size_t pr = p[r], ps = p[s];
    const int64_t *ar = a + (size_t)r * n, *as = a + (size_t)s * n;
    const int64_t *bpr = b + pr * n, *bps = b + ps * n;
    int64_t d = (ar[r] - as[s]) * (bps[ps] - bpr[pr]) + (ar[s] - as[r]) * (bps[pr] - bpr[ps]);
    for (size_t k = 0; k < n; k++) {
        if (k == r || k == s) continue;
        const size_t pk = p[k];
        const int64_t *ak = a + k * n, *bpk = b + pk * n;
        d += (ak[r] - ak[s]) * (bpk[ps] - bpk[pr]) + (ar[k] - as[k]) * (bps[pk] - bpr[pk]);
    }
    return d;
}

/* Taillard, "Robust taboo search for the quadratic assignment problem"
 * (1991): with pi' the permutation after exchanging r and s, and u, v both
 * outside {r, s},
 *   D(pi', u, v) = D(pi, u, v)
 *     + (a_ru - a_rv + a_sv - a_su)(b[s'][u'] - b[s'][v'] + b[r'][v'] - b[r'][u'])
 *     + (a_ur - a_vr + a_vs - a_us)(b[u'][s'] - b[v'][s'] + b[v'][r'] - b[u'][r'])
 * where x' = pi'(x). Derivation: in the sum of gpk_qap_swap_delta for (u, v)
 * only the k = r and k = s terms see the move; their change is the above,
 * the first product from the (a_ku - a_kv) terms and the second from the
 * (a_uk - a_vk) ones. It holds for asymmetric A and B; the tests hold it
 * against fresh deltas. Pairs touching r or s are recomputed in O(n). */
void gpk__qap_delta_update_row(const gpk_qap *q, const uint32_t *p_after, int64_t *delta, uint32_t r,
                               uint32_t s, size_t u)
{
    const size_t n = q->n;
    int64_t *du = delta + u * n;
    if (u == r || u == s) {
        for (size_t v = u + 1; v < n; v++) du[v] = gpk_qap_swap_delta(q, p_after, (uint32_t)u, (uint32_t)v);
        return;
    }
    const int64_t *a = q->a, *b = q->b;
    const size_t rp = p_after[r], sp = p_after[s], up = p_after[u];
    const int64_t *ar = a + (size_t)r * n, *as = a + (size_t)s * n, *au = a + u * n;
    const int64_t *brp = b + rp * n, *bsp = b + sp * n, *bup = b + up * n;
    for (size_t v = u + 1; v < n; v++) {
        if (v == r || v == s) {
            du[v] = gpk_qap_swap_delta(q, p_after, (uint32_t)u, (uint32_t)v);
            continue;
        }
        const size_t vp = p_after[v];
        const int64_t *av = a + v * n, *bvp = b + vp * n;
        du[v] += (ar[u] - ar[v] + as[v] - as[u]) * (bsp[up] - bsp[vp] + brp[vp] - brp[up]) +
            (au[r] - av[r] + av[s] - au[s]) * (bup[sp] - bvp[sp] + bvp[rp] - bup[rp]);
    }
}

void gpk_qap_delta_update(const gpk_qap *q, const uint32_t *p_after, int64_t *delta, uint32_t r, uint32_t s)
{
    for (size_t u = 0; u + 1 < q->n; u++) gpk__qap_delta_update_row(q, p_after, delta, r, s, u);
}

/* QAPLIB .sln: the first non-blank line holds "n cost"; a few published
 * files hold only "cost" there (nug27, nug28, nug30), and then n is the
 * count of the numbers that follow. Then the 1-based permutation. */
gpk_status gpk_qap_load_solution(const char *path, uint32_t *n_out, int64_t *cost_out, uint32_t **p_out)
{
    if (!path || !n_out || !cost_out || !p_out)
        return gpk__fail(NULL, GPK_EINVAL, "gpk_qap_load_solution: NULL argument");
    *p_out = NULL;
    char *text;
    size_t len;
    gpk_status s = gpk__read_file(path, &text, &len);
    if (s != GPK_OK) return s;

    gpk__text t, head;
    gpk__text_init(&t, text, len, path);
    char show[40];
    const char *tok, *line;
    size_t tlen, llen;
    uint32_t *p = NULL;
    unsigned char *seen = NULL;
    int64_t v[3];
    int count = 0;
    if (gpk__text_at_end(&t)) {
        s = gpk__text_fail(&t, GPK_EFORMAT, "truncated: empty file, expected \"n cost\"");
        goto done;
    }
    unsigned long first_line = t.line;
    gpk__text_rest_of_line(&t, &line, &llen);
    gpk__text_init(&head, line, llen, path);
    head.line = first_line;
    while (gpk__text_next(&head, &tok, &tlen)) {
        if (count == 2 || gpk__tok_i64(tok, tlen, INT64_MIN, INT64_MAX, &v[count]) != 0) {
            s = gpk__text_fail(&head, GPK_EFORMAT, "first line: '%s' where \"n cost\" was expected",
                               gpk__tok_show(tok, tlen, show));
            goto done;
        }
        count++;
    }
    int64_t n64, cost;
    if (count == 2) {
        n64 = v[0];
        cost = v[1];
    } else {
        /* Cost alone: count the numbers that follow. */
        cost = v[0];
        gpk__text probe = t;
        n64 = 0;
        while (gpk__text_next(&probe, &tok, &tlen)) n64++;
    }
    if (n64 < 1 || n64 > (int64_t)UINT32_MAX) {
        s = gpk__text_fail(&head, GPK_EFORMAT, "n = %lld is not a permutation size", (long long)n64);
        goto done;
    }
    uint32_t n = (uint32_t)n64;
    if ((uint64_t)(t.end - t.p) + 1 < 2 * (uint64_t)n) {
        s = gpk__text_fail(&head, GPK_EFORMAT, "truncated: n = %u numbers cannot follow in %zu bytes", n,
                           (size_t)(t.end - t.p));
        goto done;
    }
    p = malloc((size_t)n * sizeof *p);
    seen = calloc(n, 1);
    if (!p || !seen) {
        s = gpk__fail(NULL, GPK_ENOMEM, "%s: no memory for a permutation of %u", path, n);
        goto done;
    }
    for (uint32_t i = 0; i < n; i++) {
        int64_t x;
        if (!gpk__text_next(&t, &tok, &tlen)) {
            s = gpk__text_fail(&t, GPK_EFORMAT, "truncated: the permutation has %u of its %u entries", i, n);
            goto done;
        }
        int r = gpk__tok_i64(tok, tlen, 1, n, &x);
        if (r != 0) {
            s = gpk__text_fail(&t, GPK_EFORMAT, "permutation: '%s' is not an integer in 1..%u",
                               gpk__tok_show(tok, tlen, show), n);
            goto done;
        }
        if (seen[x - 1]) {
            s = gpk__text_fail(&t, GPK_EFORMAT, "permutation: %lld appears twice", (long long)x);
            goto done;
        }
        seen[x - 1] = 1;
        p[i] = (uint32_t)(x - 1);
    }
    if (gpk__text_next(&t, &tok, &tlen)) {
        s = gpk__text_fail(&t, GPK_EFORMAT, "trailing garbage '%s' after the %u-entry permutation",
                           gpk__tok_show(tok, tlen, show), n);
        goto done;
    }
    *n_out = n;
    *cost_out = cost;
    *p_out = p;
    p = NULL;
done:
    free(p);
    free(seen);
    free(text);
    return s;
}

/* ---- the problem contract (problem.h) ---- */

/* From this n a QAP tabu move draws its tenure from n/2 + 6n u^3 (below:
 * 2n +- 10 %). */
#define QAP_LONG_N 20u

static gpk_status qap_describe(const gpk_search_problem *pb, gpk_search_problem_info *info,
                               uint64_t *fingerprint, const char **why)
{
    const gpk_qap *q = pb->qap;
    if (!q) return *why = "QAP problem with a NULL qap instance", GPK_EINVAL;
    if (!q->a || !q->b) return *why = "QAP instance without matrices", GPK_EINVAL;
    info->n = q->n;
    snprintf(info->name, sizeof info->name, "%s", q->name);
    if (!fingerprint) return GPK_OK;
    uint64_t h = 0x6a09e667f3bcc908ull ^ (uint64_t)GPK_PROBLEM_QAP;
    h = gpk__fingerprint(h, q->a, (size_t)q->n * q->n * sizeof *q->a);
    *fingerprint = gpk__fingerprint(h, q->b, (size_t)q->n * q->n * sizeof *q->b);
    return GPK_OK;
}

static gpk_status qap_cost(const gpk_search_problem *pb, const uint32_t *solution, int64_t *cost)
{
    *cost = gpk_qap_cost(pb->qap, solution);
    return GPK_OK;
}

static gpk_search_algo qap_auto_algo(gpk_neighbourhood nb)
{
    (void)nb;
    return GPK_SEARCH_ITS;
}

/* 2n: the centre or mean of the draw (qap_tenure_draw). */
static uint32_t qap_default_tenure(gpk_neighbourhood nb, uint32_t n)
{
    (void)nb;
    return 2 * n < 2 ? 2 : 2 * n;
}

/* 100 rounds for the ITS, the paper's 10 otherwise (search.c,
 * gpk_search_default_global_iters, says why). */
static uint32_t qap_default_global_iters(gpk_search_algo algo, uint32_t n)
{
    (void)n;
    return algo == GPK_SEARCH_ITS ? 100 : 10;
}

/* Each move draws its tenure (search.c, default_tenure, says why): from
 * n = 20 n/2 + 6n u^3, below 2n +- 10 %. */
static void qap_tenure_draw(uint32_t n, uint32_t *tenure, uint32_t *spread, uint32_t *cube)
{
    if (n >= QAP_LONG_N) {
        *tenure = n / 2;
        *cube = 6 * n;
    } else {
        *spread = *tenure / 10;
    }
}

const gpk__problem_ops gpk__qap_ops = {
    .kind = GPK_PROBLEM_QAP,
    .name = "QAP",
    .command = "qap",
    .n_min = 2,
    .binary = 0,
    .zero_solves = 0,
    .default_nb = GPK_NB_SWAP,
    .paper_nb = GPK_NB_SWAP,
    .nbs = GPK__NB_BIT(GPK_NB_SWAP),
    .nb_list = "swap",
    .auto_seconds = 0.0,
    .auto_algo = qap_auto_algo,
    .describe = qap_describe,
    .cost = qap_cost,
    .default_tenure = qap_default_tenure,
    .default_global_iters = qap_default_global_iters,
    .tenure_draw = qap_tenure_draw,
};
