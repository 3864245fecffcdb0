/* Tests of the local-search problem layer (include/gpk/search.h): the swap
 * index bijection, QAP, PPP, TSP. Usage: test_search DATA_DIR, DATA_DIR
 * holding qaplib/ and tsplib/ (../shared/data); without it the instance
 * checks are skipped and the rest still runs. */
#include "gpk/search.h"
#include "gpk/gen.h"
#include "testutil.h"

#include <dirent.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

static gpk_rng rng;

static uint64_t below(uint64_t n) { return gpk_rng_next(&rng) % n; }

static void shuffle(uint32_t *p, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) p[i] = i;
    for (uint32_t i = n; i > 1; i--) {
        uint32_t k = (uint32_t)below(i), t = p[i - 1];
        p[i - 1] = p[k];
        p[k] = t;
    }
}

/* ---------------------------------------------------------------- bijection */

static void bijection_tests(void)
{
    /* Every index of every n in 2..2000 against the paper's order, walked
     * alongside: (0,1), (0,2), ..., (0,n-1), (1,2), ... */
    uint64_t bad_pair = 0, bad_index = 0, total = 0;
    for (uint64_t n = 2; n <= 2000; n++) {
        uint64_t m = n * (n - 1) / 2;
        uint32_t ei = 0, ej = 1;
        for (uint64_t k = 0; k < m; k++) {
            uint32_t i, j;
            gpk_swap_index_to_pair(n, k, &i, &j);
            if (i != ei || j != ej) {
                if (bad_pair++ < 5)
                    TU_CHECK(0, "n %llu k %llu -> (%u,%u), expected (%u,%u)", (unsigned long long)n,
                             (unsigned long long)k, i, j, ei, ej);
            }
            if (gpk_swap_pair_to_index(n, ei, ej) != k) {
                if (bad_index++ < 5)
                    TU_CHECK(0, "n %llu (%u,%u) -> %llu, expected %llu", (unsigned long long)n, ei, ej,
                             (unsigned long long)gpk_swap_pair_to_index(n, ei, ej), (unsigned long long)k);
            }
            if (++ej == n) {
                ei++;
                ej = ei + 1;
            }
            total++;
        }
    }
    TU_CHECK(bad_pair == 0 && bad_index == 0, "%llu / %llu wrong over %llu indices",
             (unsigned long long)bad_pair, (unsigned long long)bad_index, (unsigned long long)total);
    printf("bijection: %llu indices of n = 2..2000 in the paper's order\n", (unsigned long long)total);

    /* The paper's example (figure 7): n = 6, (2, 3) <-> 9. */
    uint32_t i, j;
    gpk_swap_index_to_pair(6, 9, &i, &j);
    TU_CHECK(i == 2 && j == 3 && gpk_swap_pair_to_index(6, 2, 3) == 9, "paper example: (%u,%u)", i, j);
    TU_CHECK(gpk_swap_pair_to_index(6, 3, 2) == 9, "unordered pair");

    /* Near 2^32: m close to 2^63, where 8X + 1 and floating point fail. */
    const uint64_t big[] = {4294967295ull, 4294967294ull, 4294967291ull, 3037000500ull,
                            2147483648ull, 65537ull,      92682ull};
    for (size_t b = 0; b < sizeof big / sizeof big[0]; b++) {
        uint64_t n = big[b], m = n * (n - 1) / 2;
        uint64_t ks[40];
        size_t nk = 0;
        ks[nk++] = 0;
        ks[nk++] = 1;
        ks[nk++] = n - 2;
        ks[nk++] = n - 1;
        ks[nk++] = m - 1;
        ks[nk++] = m - 2;
        ks[nk++] = m - 3;
        ks[nk++] = m / 2;
        while (nk < 40) ks[nk++] = gpk_rng_next(&rng) % m;
        for (size_t t = 0; t < nk; t++) {
            uint64_t k = ks[t];
            gpk_swap_index_to_pair(n, k, &i, &j);
            TU_CHECK(i < j && j < n && gpk_swap_pair_to_index(n, i, j) == k,
                     "n %llu k %llu -> (%u,%u) -> %llu", (unsigned long long)n, (unsigned long long)k, i, j,
                     (unsigned long long)gpk_swap_pair_to_index(n, i, j));
            if (k + 1 < m) { /* the successor in the paper's order */
                uint32_t i2, j2;
                gpk_swap_index_to_pair(n, k + 1, &i2, &j2);
                int next_ok = (j + 1 < n) ? (i2 == i && j2 == j + 1) : (i2 == i + 1 && j2 == i + 2);
                TU_CHECK(next_ok, "n %llu successor of (%u,%u) is (%u,%u)", (unsigned long long)n, i, j, i2,
                         j2);
            }
        }
        gpk_swap_index_to_pair(n, m - 1, &i, &j);
        TU_CHECK(i == n - 2 && j == n - 1, "n %llu last index -> (%u,%u)", (unsigned long long)n, i, j);
        gpk_swap_index_to_pair(n, n - 2, &i, &j);
        TU_CHECK(i == 0 && j == n - 1, "n %llu index n-2 -> (%u,%u)", (unsigned long long)n, i, j);
        for (int t = 0; t < 40; t++) { /* random pairs the other way */
            uint32_t a = (uint32_t)below(n - 1);
            uint32_t c = a + 1 + (uint32_t)below(n - 1 - a);
            uint64_t k = gpk_swap_pair_to_index(n, a, c);
            gpk_swap_index_to_pair(n, k, &i, &j);
            TU_CHECK(k < m && i == a && j == c, "n %llu (%u,%u) -> %llu -> (%u,%u)", (unsigned long long)n, a,
                     c, (unsigned long long)k, i, j);
        }
    }
}

/* ---------------------------------------------------------------------- QAP */

static int qap_symmetric(const gpk_qap *q)
{
    for (uint32_t i = 0; i < q->n; i++)
        for (uint32_t j = 0; j < i; j++)
            if (q->a[i * q->n + j] != q->a[j * q->n + i] || q->b[i * q->n + j] != q->b[j * q->n + i])
                return 0;
    return 1;
}

/* Random permutations, then swaps: delta == cost difference. */
static void qap_check_deltas(const gpk_qap *q, int moves)
{
    uint32_t n = q->n;
    uint32_t *p = malloc(n * sizeof *p);
    if (!p) return;
    int bad = 0;
    for (int round = 0; round < 3; round++) {
        shuffle(p, n);
        int64_t cost = gpk_qap_cost(q, p);
        for (int t = 0; t < moves; t++) {
            uint32_t r = (uint32_t)below(n), s = (uint32_t)below(n - 1);
            if (s >= r) s++;
            int64_t d = gpk_qap_swap_delta(q, p, r, s);
            uint32_t x = p[r];
            p[r] = p[s];
            p[s] = x;
            int64_t c2 = gpk_qap_cost(q, p);
            if (c2 - cost != d && bad++ < 3)
                TU_CHECK(0, "%s: swap (%u,%u) delta %lld, re-evaluation %lld", q->name, r, s, (long long)d,
                         (long long)(c2 - cost));
            cost = c2;
        }
    }
    TU_CHECK(bad == 0, "%s: %d wrong swap deltas", q->name, bad);
    free(p);
}

/* Taillard's table after a sequence of moves == fresh deltas. */
static void qap_check_delta_update(const gpk_qap *q, int moves)
{
    uint32_t n = q->n;
    uint32_t *p = malloc(n * sizeof *p);
    int64_t *delta = malloc((size_t)n * n * sizeof *delta);
    if (!p || !delta) {
        free(p);
        free(delta);
        return;
    }
    shuffle(p, n);
    for (uint32_t u = 0; u < n; u++)
        for (uint32_t v = u + 1; v < n; v++) delta[u * n + v] = gpk_qap_swap_delta(q, p, u, v);
    int64_t cost = gpk_qap_cost(q, p);
    long bad = 0;
    for (int t = 0; t < moves; t++) {
        uint32_t r = (uint32_t)below(n), s = (uint32_t)below(n - 1);
        if (s >= r) s++;
        uint32_t lo = r < s ? r : s, hi = r < s ? s : r;
        cost += delta[lo * n + hi];
        uint32_t x = p[r];
        p[r] = p[s];
        p[s] = x;
        gpk_qap_delta_update(q, p, delta, r, s);
        TU_CHECK(cost == gpk_qap_cost(q, p), "%s: tracked cost %lld, true %lld", q->name, (long long)cost,
                 (long long)gpk_qap_cost(q, p));
        for (uint32_t u = 0; u < n; u++)
            for (uint32_t v = u + 1; v < n; v++) {
                int64_t want = gpk_qap_swap_delta(q, p, u, v);
                if (delta[u * n + v] != want && bad++ < 3)
                    TU_CHECK(0, "%s: move %d (%u,%u): table (%u,%u) = %lld, fresh %lld", q->name, t, r, s, u,
                             v, (long long)delta[u * n + v], (long long)want);
            }
    }
    TU_CHECK(bad == 0, "%s: %ld wrong table entries after updates", q->name, bad);
    free(p);
    free(delta);
}

/* A random instance through the parser: asymmetric, negative entries,
 * rows wrapped at random. */
static int qap_random(uint32_t n, int64_t range, gpk_qap *q)
{
    size_t cap = 64 + (size_t)n * n * 2 * 24;
    char *text = malloc(cap);
    if (!text) return 0;
    size_t len = (size_t)snprintf(text, cap, "%u\n", n);
    for (uint64_t k = 0; k < 2 * (uint64_t)n * n; k++) {
        long long v = (long long)below(2 * (uint64_t)range + 1) - range;
        len += (size_t)snprintf(text + len, cap - len, "%lld%s", v, below(5) == 0 ? "\n" : " \t");
    }
    gpk_status s = gpk_qap_parse(text, len, "random.dat", q);
    TU_CHECK(s == GPK_OK, "random instance n %u: %s", n, gpk_last_error(NULL));
    free(text);
    return s == GPK_OK;
}

static void qap_parse_error(const char *text, const char *name, const char *want_line, const char *what)
{
    gpk_qap q;
    gpk_status s = gpk_qap_parse(text, strlen(text), name, &q);
    const char *msg = gpk_last_error(NULL);
    TU_CHECK(s == GPK_EFORMAT, "%s: status %d for %s", name, (int)s, what);
    TU_CHECK(msg && strstr(msg, want_line) && strstr(msg, what), "%s: message '%s' lacks '%s' / '%s'", name,
             msg ? msg : "(null)", want_line, what);
    TU_CHECK(q.a == NULL && q.b == NULL && q.n == 0, "%s: output not cleared", name);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static char *copy_str(const char *s)
{
    char *c = malloc(strlen(s) + 1);
    if (c) strcpy(c, s);
    return c;
}

static int cmp_str(const void *x, const void *y) { return strcmp(*(char *const *)x, *(char *const *)y); }

static void qap_instance_tests(const char *data_dir)
{
    char dir[1024], path[1200];
    snprintf(dir, sizeof dir, "%s/qaplib", data_dir);
    DIR *d = opendir(dir);
    if (!d) {
        printf("data not found: QAP instance checks skipped (%s)\n", dir);
        return;
    }
    char *names[1024];
    size_t count = 0;
    struct dirent *e;
    while ((e = readdir(d)) && count < 1024) /* NAME.dat_p.dat files are AMPL data, not QAPLIB's format. */
        if (ends_with(e->d_name, ".dat") && !strstr(e->d_name, ".dat_p")) {
            if (!(names[count] = copy_str(e->d_name))) break;
            count++;
        }
    closedir(d);
    qsort(names, count, sizeof names[0], cmp_str);

    int loaded = 0, rejected = 0, sln_inverse = 0, with_sln = 0, sln_bad = 0, asym_deltas = 0,
        sym_updates = 0, asym_updates = 0;
    for (size_t f = 0; f < count; f++) {
        gpk_qap q;
        snprintf(path, sizeof path, "%s/%s", dir, names[f]);
        gpk_status s = gpk_qap_load(path, &q);
        size_t base = strlen(names[f]) - 4;
        char sln[1200];
        struct stat st;
        snprintf(sln, sizeof sln, "%s/%.*s.sln", dir, (int)base, names[f]);
        int has_sln = stat(sln, &st) == 0;
        if (s != GPK_OK) {
            /* Every instance with a published solution must load; others
             * may be outside the format (car10*: a third, linear-term
             * matrix) and must then be refused with a located message. */
            const char *msg = gpk_last_error(NULL);
            TU_CHECK(!has_sln && s == GPK_EFORMAT && strstr(msg, path), "%s: %d %s", path, (int)s, msg);
            if (rejected++ < 3) printf("  refused: %s\n", msg);
            continue;
        }
        loaded++;
        TU_CHECK(strlen(q.name) == base && strncmp(q.name, names[f], base) == 0, "name %s for %s", q.name,
                 names[f]);
        if (has_sln) {
            snprintf(path, sizeof path, "%s", sln);
            uint32_t n;
            int64_t cost;
            uint32_t *p;
            s = gpk_qap_load_solution(path, &n, &cost, &p);
            if (s != GPK_OK) {
                /* A few published .sln files hold no permutation (kra30a:
                 * "??"); the reader must say so, with the file's name. */
                const char *msg = gpk_last_error(NULL);
                TU_CHECK(s == GPK_EFORMAT && strstr(msg, path), "%s: status %d '%s'", path, (int)s, msg);
                printf("  %s: no usable solution: %s\n", names[f], msg);
                sln_bad++;
            } else {
                with_sln++;
                TU_CHECK(n == q.n, "%s: solution n %u, instance n %u", path, n, q.n);
                if (n == q.n && gpk_qap_cost(&q, p) != cost) {
                    /* Some published files (nug12 .. nug25) list the
                     * inverse permutation, location -> facility: accepted
                     * only when the inverse gives the cost exactly, and
                     * listed. */
                    uint32_t *inv = malloc(n * sizeof *inv);
                    if (inv) {
                        for (uint32_t i = 0; i < n; i++) inv[p[i]] = i;
                        int64_t ic = gpk_qap_cost(&q, inv);
                        TU_CHECK(ic == cost,
                                 "%s: cost of the .sln permutation %lld (inverse %lld), file says %lld",
                                 q.name, (long long)gpk_qap_cost(&q, p), (long long)ic, (long long)cost);
                        if (ic == cost) {
                            printf("  %s.sln lists the inverse permutation (QAPLIB data quirk)\n", q.name);
                            sln_inverse++;
                        }
                        free(inv);
                    }
                }
                free(p);
            }
        }
        int sym = qap_symmetric(&q);
        if (q.n <= 64) qap_check_deltas(&q, 60);
        if (!sym && q.n <= 64) asym_deltas++;
        /* Taillard's table on a few of each kind (O(moves n^3) to check). */
        if (q.n <= 40 && (sym ? sym_updates < 3 : asym_updates < 4)) {
            qap_check_delta_update(&q, 30);
            if (sym) sym_updates++;
            else asym_updates++;
        }
        gpk_qap_free(&q);
    }
    for (size_t f = 0; f < count; f++) free(names[f]);
    printf("qaplib: %d instances loaded, %d refused, %d solutions checked (%d inverse), %d .sln unusable; "
           "deltas on %d asymmetric; "
           "Taillard table on %d symmetric + %d asymmetric\n",
           loaded, rejected, with_sln, sln_inverse, sln_bad, asym_deltas, sym_updates, asym_updates);
    TU_CHECK(loaded > 0 && with_sln > sln_bad && with_sln - sln_inverse > sln_inverse,
             "too few instances checked");
}

static void qap_tests(const char *data_dir)
{
    /* Random asymmetric instances with negative entries. */
    for (int t = 0; t < 40; t++) {
        gpk_qap q;
        uint32_t n = 2 + (uint32_t)below(14);
        if (!qap_random(n, t % 2 ? 50 : 3, &q)) continue;
        TU_CHECK(strcmp(q.name, "random") == 0, "name %s", q.name);
        qap_check_deltas(&q, 100);
        qap_check_delta_update(&q, 40);
        gpk_qap_free(&q);
    }

    /* A wrapped, free-form file parses. */
    gpk_qap q;
    const char *ok = "  2 1\n 2 3\r\n4\n\n5 6 7 8 \n";
    TU_CHECK(gpk_qap_parse(ok, strlen(ok), "dir/ok.dat", &q) == GPK_OK, "wrapped: %s", gpk_last_error(NULL));
    if (q.a) {
        uint32_t id[2] = {0, 1}, sw[2] = {1, 0};
        TU_CHECK(strcmp(q.name, "ok") == 0 && q.a[3] == 4 && q.b[0] == 5, "wrapped content");
        /* 1*5 + 2*6 + 3*7 + 4*8 = 70; swapped: 1*8 + 2*7 + 3*6 + 4*5 = 60. */
        TU_CHECK(gpk_qap_cost(&q, id) == 70 && gpk_qap_cost(&q, sw) == 60, "tiny costs");
        TU_CHECK(gpk_qap_swap_delta(&q, id, 0, 1) == -10, "tiny delta");
        gpk_qap_free(&q);
    }

    /* Errors: name and line in the message. */
    qap_parse_error("3\n1 2 3\n4 5 6\n7 8 9\n1 2\n", "trunc.dat",
                    "trunc.dat:6:", "truncated"); /* the line where the text ends */
    qap_parse_error("2\n1 2\n3 x4\n", "nonnum.dat", "nonnum.dat:3:", "not an integer");
    qap_parse_error("2\n1 2\n3 4\n5 6\n7 8.5\n", "float.dat", "float.dat:5:", "not an integer");
    qap_parse_error("1\n5\n5\n", "one.dat", "one.dat:1:", "at least 2");
    qap_parse_error("\n\n0\n", "zero.dat", "zero.dat:3:", "at least 2");
    qap_parse_error("-4\n", "neg.dat", "neg.dat:1:", "at least 2");
    qap_parse_error("2\n1 2\n3 4\n5 6\n7 8\n9\n", "extra.dat", "extra.dat:6:", "trailing garbage");
    qap_parse_error("2\n1 2\n3 4\n5 6\n7 8\n#\n", "junk.dat", "junk.dat:6:", "trailing garbage");
    qap_parse_error("3 1 2 3 4 5 6 7 8 9 1 2 3 4 5 6 7 8", "short.dat", "short.dat:1:", "truncated");
    qap_parse_error("", "empty.dat", "empty.dat:1:", "truncated");
    qap_parse_error("4000000000\n1 2\n", "huge.dat", "huge.dat:1:", "too large");
    qap_parse_error("30000\n1 2\n", "big.dat", "big.dat:1:", "too large");
    qap_parse_error("2000\n1 2\n", "forged.dat", "forged.dat:1:", "truncated");
    qap_parse_error("2\n1 2\n3 4\n5 6\n7 99999999999\n", "range.dat", "range.dat:5:", "outside");

    gpk_status s = gpk_qap_load("/nonexistent/dir/x.dat", &q);
    TU_CHECK(s == GPK_EIO && strstr(gpk_last_error(NULL), "/nonexistent/dir/x.dat"), "missing file: %d %s",
             (int)s, gpk_last_error(NULL));
    uint32_t n, *p;
    int64_t cost;
    s = gpk_qap_load_solution("/nonexistent/dir/x.sln", &n, &cost, &p);
    TU_CHECK(s == GPK_EIO, "missing solution: %d", (int)s);

    if (data_dir) qap_instance_tests(data_dir);
}

/* ---------------------------------------------------------------------- PPP */

static int64_t ppp_eval(const gpk_ppp *p, const int8_t *v, int32_t *y)
{
    gpk_ppp_product(p, v, y);
    return gpk_ppp_fitness(p, y);
}

static void ppp_tests(void)
{
    gpk_ppp a, b, c;
    const uint32_t sizes[][2] = {{73, 73}, {101, 117}, {1, 1}, {3, 5}, {601, 401}};
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        uint32_t m = sizes[z][0], n = sizes[z][1];
        uint64_t seed = gpk_rng_next(&rng);
        TU_CHECK(gpk_ppp_generate(m, n, seed, &a) == GPK_OK, "%u-%u: %s", m, n, gpk_last_error(NULL));
        TU_CHECK(gpk_ppp_generate(m, n, seed, &b) == GPK_OK, "%u-%u again", m, n);
        TU_CHECK(gpk_ppp_generate(m, n, seed + 1, &c) == GPK_OK, "%u-%u other seed", m, n);
        if (!a.a || !b.a || !c.a) return;
        TU_CHECK(a.m == m && a.n == n && a.seed == seed, "fields");
        TU_CHECK(memcmp(a.a, b.a, (size_t)m * n) == 0 && memcmp(a.secret, b.secret, n) == 0 &&
                     memcmp(a.hist, b.hist, (n + 1) * sizeof *a.hist) == 0,
                 "%u-%u-%llu differs between two generations", m, n, (unsigned long long)seed);
        if ((uint64_t)m * n > 64)
            TU_CHECK(memcmp(a.a, c.a, (size_t)m * n) != 0, "seeds %llu and +1 give the same A",
                     (unsigned long long)seed);

        /* The documented construction, rebuilt here from gpk_rng alone. */
        gpk_rng r;
        gpk_rng_seed(&r, seed);
        uint64_t word = 0;
        unsigned left = 0;
        int same = 1;
        uint32_t *hist = calloc(n + 1, sizeof *hist);
        int8_t *row = malloc(n);
        if (!hist || !row) return;
        for (uint64_t bit = 0; bit < (uint64_t)n * (m + 1); bit++) {
            if (!left) {
                word = gpk_rng_next(&r);
                left = 64;
            }
            int8_t sgn = (word & 1) ? 1 : -1;
            word >>= 1;
            left--;
            if (bit < n) {
                same &= a.secret[bit] == sgn;
                continue;
            }
            uint64_t i = (bit - n) / n, j = (bit - n) % n;
            row[j] = sgn;
            if (j == n - 1) {
                int32_t y = 0;
                for (uint32_t t = 0; t < n; t++) y += row[t] * a.secret[t];
                int neg = y < 0;
                for (uint32_t t = 0; t < n; t++) same &= a.a[i * n + t] == (neg ? -row[t] : row[t]);
                hist[neg ? -y : y]++;
            }
        }
        TU_CHECK(same && memcmp(hist, a.hist, (n + 1) * sizeof *hist) == 0,
                 "%u-%u: instance differs from the documented bit stream", m, n);
        free(hist);
        free(row);

        int32_t *y = malloc(m * sizeof *y), *y2 = malloc(m * sizeof *y2);
        int8_t *v = malloc(n);
        if (!y || !y2 || !v) return;
        TU_CHECK(ppp_eval(&a, a.secret, y) == 0, "%u-%u: the secret has fitness %lld", m, n,
                 (long long)gpk_ppp_fitness(&a, y));
        for (uint32_t i = 0; i < m; i++) TU_CHECK(y[i] > 0, "row %u: (A V) = %d", i, y[i]);

        int bad = 0, positive = 1;
        for (int round = 0; round < 5; round++) {
            for (uint32_t j = 0; j < n; j++) v[j] = below(2) ? 1 : -1;
            int64_t f = ppp_eval(&a, v, y);
            if (n > 20 && memcmp(v, a.secret, n) != 0) positive &= f > 0;
            for (int t = 0; t < 100; t++) {
                uint32_t j = (uint32_t)below(n);
                int64_t d = gpk_ppp_flip_delta(&a, y, v, j);
                gpk_ppp_apply_flip(&a, y, v, j);
                int64_t f2 = ppp_eval(&a, v, y2);
                if ((f2 - f != d || memcmp(y, y2, m * sizeof *y) != 0) && bad++ < 3)
                    TU_CHECK(0, "%u-%u flip %u: delta %lld, re-evaluation %lld", m, n, j, (long long)d,
                             (long long)(f2 - f));
                f = f2;
                if (n < 2) continue;
                uint32_t k = (uint32_t)below(n - 1);
                if (k >= j) k++;
                d = gpk_ppp_flip2_delta(&a, y, v, j, k);
                gpk_ppp_apply_flip(&a, y, v, j);
                gpk_ppp_apply_flip(&a, y, v, k);
                f2 = ppp_eval(&a, v, y2);
                if ((f2 - f != d || memcmp(y, y2, m * sizeof *y) != 0) && bad++ < 3)
                    TU_CHECK(0, "%u-%u flip (%u,%u): delta %lld, re-evaluation %lld", m, n, j, k,
                             (long long)d, (long long)(f2 - f));
                f = f2;
            }
        }
        TU_CHECK(bad == 0, "%u-%u: %d wrong flip deltas", m, n, bad);
        TU_CHECK(positive, "%u-%u: a random V has fitness 0", m, n);
        free(y);
        free(y2);
        free(v);
        gpk_ppp_free(&a);
        gpk_ppp_free(&b);
        gpk_ppp_free(&c);
    }

    const uint32_t bad_n[] = {0, 2, 100, 4097, 1u << 31};
    for (size_t t = 0; t < sizeof bad_n / sizeof bad_n[0]; t++) {
        gpk_status s = gpk_ppp_generate(10, bad_n[t], 1, &a);
        TU_CHECK(s == GPK_EINVAL && a.a == NULL && strstr(gpk_last_error(NULL), "n = "), "n = %u: %d '%s'",
                 bad_n[t], (int)s, gpk_last_error(NULL));
    }
    TU_CHECK(gpk_ppp_generate(0, 11, 1, &a) == GPK_EINVAL, "m = 0 accepted");
}

/* ---------------------------------------------------------------------- TSP */

/* gpk__tsp_parse_ex: the on-the-fly path on instances below the matrix limit. */
#include "search/search_internal.h"

/* xorshift64*: the tests' own generator, seeded by tu_seed. */
static uint64_t tsp_rng_state = 88172645463325252ull;
static uint64_t tsp_rand(void)
{
    tsp_rng_state ^= tsp_rng_state >> 12;
    tsp_rng_state ^= tsp_rng_state << 25;
    tsp_rng_state ^= tsp_rng_state >> 27;
    return tsp_rng_state * 2685821657736338717ull;
}
static uint32_t tsp_below(uint32_t n) { return (uint32_t)(tsp_rand() % n); }

static char *tsp_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 20, n = 0, got;
    char *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) free(buf);
            buf = nb;
        }
    }
    fclose(f);
    *len = n;
    return buf;
}

/* Random moves on a random tour: each delta must equal the change of the
 * full length. Positions are drawn so that adjacent pairs and the
 * wrap-around pair (0, n-1) come up often. */
static void tsp_check_deltas(const gpk_tsp *t, int moves)
{
    uint32_t n = t->n;
    uint32_t *tour = malloc(n * sizeof *tour);
    if (!tour) {
        TU_CHECK(0, "out of memory");
        return;
    }
    for (uint32_t k = 0; k < n; k++) tour[k] = k;
    for (uint32_t k = n - 1; k > 0; k--) {
        uint32_t r = tsp_below(k + 1), s = tour[k];
        tour[k] = tour[r];
        tour[r] = s;
    }
    int64_t len = gpk_tsp_tour_length(t, tour);
    int bad2 = 0, bads = 0;
    for (int m = 0; m < moves; m++) {
        uint32_t i, j;
        switch (m % 5) {
        case 0:
            i = 0;
            j = n - 1;
            break; /* wrap-around */
        case 1:
            i = tsp_below(n - 1);
            j = i + 1;
            break; /* adjacent */
        case 2:
            i = tsp_below(n - 2);
            j = i + 2;
            break; /* one apart */
        default:
            i = tsp_below(n);
            do j = tsp_below(n);
            while (j == i);
        }
        if (m & 1) { /* swap, in either argument order */
            int64_t d = gpk_tsp_swap_delta(t, tour, i, j);
            uint32_t s = tour[i];
            tour[i] = tour[j];
            tour[j] = s;
            int64_t nl = gpk_tsp_tour_length(t, tour);
            if (nl != len + d && bads++ < 5)
                TU_CHECK(0, "%s: swap(%u,%u) delta %lld, re-evaluation %lld", t->name, i, j, (long long)d,
                         (long long)(nl - len));
            len = nl;
        } else {
            if (i > j) {
                uint32_t s = i;
                i = j;
                j = s;
            }
            int64_t d = gpk_tsp_two_opt_delta(t, tour, i, j);
            for (uint32_t a = i + 1, b = j; a < b; a++, b--) {
                uint32_t s = tour[a];
                tour[a] = tour[b];
                tour[b] = s;
            }
            int64_t nl = gpk_tsp_tour_length(t, tour);
            if (nl != len + d && bad2++ < 5)
                TU_CHECK(0, "%s: 2-opt(%u,%u) delta %lld, re-evaluation %lld", t->name, i, j, (long long)d,
                         (long long)(nl - len));
            len = nl;
        }
    }
    TU_CHECK(bad2 == 0 && bads == 0, "%s: %d 2-opt and %d swap deltas wrong of %d moves", t->name, bad2, bads,
             moves);
    free(tour);
}

/* Every distance of the on-the-fly path (no matrix) against the matrix. */
static void tsp_check_on_the_fly(const char *text, size_t len, const char *name)
{
    gpk_tsp a, b;
    gpk_status sa = gpk__tsp_parse_ex(text, len, name, GPK_TSP_MATRIX_MAX, &a);
    gpk_status sb = gpk__tsp_parse_ex(text, len, name, 0, &b);
    TU_CHECK(sa == GPK_OK && sb == GPK_OK, "%s: parse: %s", name, gpk_last_error(NULL));
    if (sa != GPK_OK || sb != GPK_OK) {
        gpk_tsp_free(&a);
        gpk_tsp_free(&b);
        return;
    }
    TU_CHECK(a.matrix != NULL && b.matrix == NULL, "%s: matrix presence", name);
    uint64_t diff = 0;
    for (uint32_t i = 0; i < a.n; i++)
        for (uint32_t j = 0; j < a.n; j++) diff += gpk_tsp_dist(&a, i, j) != gpk_tsp_dist(&b, i, j);
    TU_CHECK(diff == 0, "%s: %llu distances differ between matrix and on-the-fly", name,
             (unsigned long long)diff);
    printf("  on-the-fly == matrix on %s (n = %u, %llu pairs)\n", name, a.n, (unsigned long long)a.n * a.n);
    tsp_check_deltas(&b, 2000);
    gpk_tsp_free(&a);
    gpk_tsp_free(&b);
}

/* A parse that must fail with GPK_EFORMAT and a message naming the buffer
 * and the line. */
/* A random GEO coordinate DDD.MM within +-limit degrees (minutes 0..59). */
static double tsp_geo_value(uint32_t limit)
{
    const double v = (double)tsp_below(limit) + (double)tsp_below(60) / 100;
    return tsp_below(2) ? -v : v;
}

static void tsp_expect_error(const char *text, const char *label, int line, const char *needle)
{
    gpk_tsp t;
    gpk_status s = gpk_tsp_parse(text, strlen(text), label, &t);
    const char *msg = gpk_last_error(NULL);
    char where[96];
    snprintf(where, sizeof where, "%s:%d: ", label, line);
    TU_CHECK(s == GPK_EFORMAT, "%s: status %d, expected GPK_EFORMAT", label, (int)s);
    TU_CHECK(strstr(msg, where) == msg, "%s: message '%s' does not start with '%s'", label, msg, where);
    TU_CHECK(strstr(msg, needle) != NULL, "%s: message '%s' lacks '%s'", label, msg, needle);
    TU_CHECK(t.matrix == NULL && t.x == NULL && t.n == 0, "%s: output not cleared", label);
}

static void tsp_memory_tests(void)
{
    gpk_tsp t;
    /* EUC_2D with a half-way case: nint rounds 0.5 up. */
    const char *euc = "NAME: m\nTYPE: TSP\nDIMENSION: 4\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n"
                      "1 0 0\n2 3 4\n3 3.5 4\n4 0 8\nEOF\n";
    TU_CHECK(gpk_tsp_parse(euc, strlen(euc), "euc", &t) == GPK_OK, "euc: %s", gpk_last_error(NULL));
    TU_CHECK(t.n == 4 && t.weight == GPK_TSP_EUC_2D && t.matrix, "euc: header");
    TU_CHECK(gpk_tsp_dist(&t, 0, 1) == 5 && gpk_tsp_dist(&t, 1, 2) == 1 && gpk_tsp_dist(&t, 0, 3) == 8 &&
                 gpk_tsp_dist(&t, 1, 3) == 5 && gpk_tsp_dist(&t, 2, 2) == 0,
             "euc distances");
    uint32_t id[4] = {0, 1, 2, 3};
    TU_CHECK(gpk_tsp_tour_length(&t, id) == 5 + 1 + 5 + 8, "euc tour length %lld",
             (long long)gpk_tsp_tour_length(&t, id));
    gpk_tsp_free(&t);
    /* CEIL_2D and ATT (sqrt(10) = 3.16: nint 3 < r, so 4; exactly 10 stays 10). Header variants. */
    const char *ceil2 = "NAME : c\nDIMENSION :4\nEDGE_WEIGHT_TYPE:CEIL_2D\nNODE_COORD_SECTION\n1 0 0\n2 1 1\n"
                        "3 2 2\n4 0 3\n";
    TU_CHECK(gpk_tsp_parse(ceil2, strlen(ceil2), "ceil", &t) == GPK_OK, "ceil: %s", gpk_last_error(NULL));
    TU_CHECK(gpk_tsp_dist(&t, 0, 1) == 2 && gpk_tsp_dist(&t, 0, 3) == 3, "ceil distances");
    gpk_tsp_free(&t);
    const char *att = "NAME: a\nTYPE : TSP\nDIMENSION: 4\nEDGE_WEIGHT_TYPE: ATT\nNODE_COORD_SECTION\n"
                      "4 0 0\n3 10 0\n2 10 30\n1 20 30\n EOF\n";
    TU_CHECK(gpk_tsp_parse(att, strlen(att), "att", &t) == GPK_OK, "att: %s", gpk_last_error(NULL));
    TU_CHECK(gpk_tsp_dist(&t, 3, 2) == 4 && gpk_tsp_dist(&t, 3, 1) == 10, "att distances %d %d",
             gpk_tsp_dist(&t, 3, 2), gpk_tsp_dist(&t, 3, 1));
    gpk_tsp_free(&t);
    /* GEO truncates degrees: 0.59 is 0 degrees 59 minutes, one minute (1.86
     * km, so 2) from 1.00; rounding to 1 degree would give 77. */
    const char *geo = "NAME: g\nDIMENSION: 4\nEDGE_WEIGHT_TYPE: GEO\nEDGE_WEIGHT_FORMAT: FUNCTION\n"
                      "NODE_COORD_SECTION\n1 0.59 0\n2 1.00 0\n3 -0.59 0\n4 -1.0 0\n";
    TU_CHECK(gpk_tsp_parse(geo, strlen(geo), "geo", &t) == GPK_OK, "geo: %s", gpk_last_error(NULL));
    TU_CHECK(gpk_tsp_dist(&t, 0, 1) == 2 && gpk_tsp_dist(&t, 2, 3) == 2, "geo distances %d %d",
             gpk_tsp_dist(&t, 0, 1), gpk_tsp_dist(&t, 2, 3));
    gpk_tsp_free(&t);

    /* EXPLICIT: one random symmetric 7 x 7 matrix written in every format. */
    enum { N = 7 };
    int32_t m[N][N];
    for (int i = 0; i < N; i++) {
        m[i][i] = 0;
        for (int j = i + 1; j < N; j++) m[i][j] = m[j][i] = (int32_t)tsp_below(1000);
    }
    const char *fmts[] = {"FULL_MATRIX",    "UPPER_ROW", "LOWER_ROW",     "UPPER_DIAG_ROW",
                          "LOWER_DIAG_ROW", "LOWER_COL", "UPPER_DIAG_COL"};
    for (int f = 0; f < 7; f++) {
        char buf[4096];
        int k =
            snprintf(buf, sizeof buf,
                     "NAME: e\nTYPE: TSP\nDIMENSION: %d\nEDGE_WEIGHT_TYPE: EXPLICIT\nEDGE_WEIGHT_FORMAT: %s\n"
                     "EDGE_WEIGHT_SECTION\n",
                     N, fmts[f]);
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < N; j++) {
                int keep = f == 0 || ((f == 1 || f == 5) && j > i) || (f == 2 && j < i) ||
                    (f == 3 && j >= i) || ((f == 4 || f == 6) && j <= i);
                if (keep) k += snprintf(buf + k, sizeof buf - (size_t)k, " %d", m[i][j]);
            }
            k += snprintf(buf + k, sizeof buf - (size_t)k, "\n");
        }
        snprintf(buf + k, sizeof buf - (size_t)k,
                 "DISPLAY_DATA_SECTION\n1 1 1\n2 2 2\n3 3 3\n4 4 4\n5 5 5\n"
                 "6 6 6\n7 7 7\nEOF\n");
        gpk_status s = gpk_tsp_parse(buf, strlen(buf), fmts[f], &t);
        TU_CHECK(s == GPK_OK, "%s: %s", fmts[f], gpk_last_error(NULL));
        if (s != GPK_OK) continue;
        int bad = 0;
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++) bad += gpk_tsp_dist(&t, (uint32_t)i, (uint32_t)j) != m[i][j];
        TU_CHECK(bad == 0 && t.x == NULL, "%s: %d distances wrong", fmts[f], bad);
        tsp_check_deltas(&t, 3000);
        gpk_tsp_free(&t);
    }

    /* Random coordinate instances of every type, with and without the
     * matrix: deltas against re-evaluation. */
    const char *types[] = {"EUC_2D", "CEIL_2D", "ATT", "GEO"};
    for (int ty = 0; ty < 4; ty++) {
        size_t cap = 64 * 1024;
        char *buf = malloc(cap);
        if (!buf) continue;
        uint32_t n = 4 + tsp_below(150);
        int k = snprintf(buf, cap, "NAME: r\nDIMENSION: %u\nEDGE_WEIGHT_TYPE: %s\nNODE_COORD_SECTION\n", n,
                         types[ty]);
        for (uint32_t i = 0; i < n; i++)
            k += snprintf(buf + k, cap - (size_t)k, "%u %.2f %.2f\n", i + 1,
                          ty == 3 ? tsp_geo_value(90) : (double)tsp_below(1000000) / 100,
                          ty == 3 ? tsp_geo_value(180) : (double)tsp_below(1000000) / 100);
        char label[32];
        snprintf(label, sizeof label, "random-%s", types[ty]);
        tsp_check_on_the_fly(buf, (size_t)k, label);
        TU_CHECK(gpk_tsp_parse(buf, (size_t)k, label, &t) == GPK_OK, "%s", gpk_last_error(NULL));
        tsp_check_deltas(&t, 3000);
        gpk_tsp_free(&t);
        free(buf);
    }

    /* Errors: status, "NAME:LINE: " and what. */
    const char *head = "NAME: x\nTYPE: TSP\nDIMENSION: 5\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n";
    char buf[1024];
    snprintf(buf, sizeof buf, "%s1 0 0\n2 1 1\n3 2 2\n", head);
    tsp_expect_error(buf, "truncated", 5, "truncated");
    snprintf(buf, sizeof buf, "%s1 0 0\n2 1 1\n3 2 2\n4 3 3\nEOF\n", head);
    tsp_expect_error(buf, "short-by-one", 10, "got 'EOF'");
    snprintf(buf, sizeof buf, "%s1 0 0\n2 1 1\n3 2 2\n4 3 3\n5 4 4\n6 5 5\nEOF\n", head);
    tsp_expect_error(buf, "too-many", 11, "DIMENSION");
    snprintf(buf, sizeof buf, "%s1 0 0\n2 1 1\n3 2 2\n4 3 3\n5 4 4\nEOF\nxxxxxxxxxxxxxxxxxxxxxxxxx\n", head);
    TU_CHECK(gpk_tsp_parse(buf, strlen(buf), "ok", &t) == GPK_OK, "valid file: %s", gpk_last_error(NULL));
    gpk_tsp_free(&t);
    snprintf(buf, sizeof buf, "%s1 0 0\n2 1 1\n3 2 x2\n4 3 3\n5 4 4\nEOF\n", head);
    tsp_expect_error(buf, "non-number", 8, "x2");
    snprintf(buf, sizeof buf, "%s1 0 0\n2 1 1\n3 2 2\n3 3 3\n5 4 4\nEOF\n", head);
    tsp_expect_error(buf, "duplicate", 9, "twice");
    snprintf(buf, sizeof buf, "%s1 0 0\n2 1 1\n3 2 nan\n4 3 3\n5 4 4\nEOF\n", head);
    tsp_expect_error(buf, "nan", 8, "nan");
    tsp_expect_error("NAME: x\nDIMENSION: 5\nEDGE_WEIGHT_TYPE: EUC_3D\nNODE_COORD_SECTION\n", "unknown-type",
                     3, "EUC_3D");
    /* GEO positions out of range: a latitude beyond 90, a longitude beyond
     * 180, 60 minutes; also when EDGE_WEIGHT_TYPE follows the section (then
     * the last line is named). The edges stay inside. */
    const char *geo_head = "NAME: g\nDIMENSION: 4\nEDGE_WEIGHT_TYPE: GEO\nNODE_COORD_SECTION\n";
    snprintf(buf, sizeof buf, "%s1 10 10\n2 91.00 0\n3 0 0\n4 1 1\nEOF\n", geo_head);
    tsp_expect_error(buf, "geo-lat", 6, "node 2: GEO latitude 91");
    snprintf(buf, sizeof buf, "%s1 10 10\n2 -10 -180.01\n3 0 0\n4 1 1\nEOF\n", geo_head);
    tsp_expect_error(buf, "geo-lon", 6, "GEO longitude -180.01");
    snprintf(buf, sizeof buf, "%s1 10 10\n2 0 0\n3 45.60 0\n4 1 1\nEOF\n", geo_head);
    tsp_expect_error(buf, "geo-minutes", 7, "latitude 45.6");
    tsp_expect_error("NAME: g\nDIMENSION: 4\nNODE_COORD_SECTION\n1 10 10\n2 0 0\n3 0 0\n4 1 1000\n"
                     "EDGE_WEIGHT_TYPE: GEO\nEOF\n",
                     "geo-late", 9, "node 4: GEO longitude 1000");
    snprintf(buf, sizeof buf, "%s1 90.00 180.00\n2 -90.00 -180.00\n3 0.59 -0.59\n4 1 1\nEOF\n", geo_head);
    TU_CHECK(gpk_tsp_parse(buf, strlen(buf), "geo-edges", &t) == GPK_OK, "GEO at the edges: %s",
             gpk_last_error(NULL));
    gpk_tsp_free(&t);
    tsp_expect_error("NAME: x\nDIMENSION: 5\nEDGE_WEIGHT_TYPE: EXPLICIT\nEDGE_WEIGHT_FORMAT: LOWER_SQUARE\n",
                     "unknown-format", 4, "LOWER_SQUARE");
    tsp_expect_error(
        "NAME: x\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 0 0\n2 1 1\n3 2 2\n", "three",
        2, "at least 4");
    tsp_expect_error("NAME: x\nDIMENSION: 5\nEDGE_WEIGHT_TYPE: EUC_2D\nEOF\n", "no-coords", 4,
                     "NODE_COORD_SECTION");
    tsp_expect_error("NAME: x\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 0 0\n", "no-dim", 3,
                     "DIMENSION");
    tsp_expect_error("NAME: x\nTYPE: ATSP\nDIMENSION: 5\n", "atsp", 2, "ATSP");
    tsp_expect_error("NAME: x\nDIMENSION: 4\nEDGE_WEIGHT_TYPE: EXPLICIT\nEDGE_WEIGHT_FORMAT: FULL_MATRIX\n"
                     "EDGE_WEIGHT_SECTION\n0 1 2 3\n1 0 2 3\n2 2 0 3\n3 3 4 0\nEOF\n",
                     "asymmetric", 9, "symmetric");
    tsp_expect_error("NAME: x\nDIMENSION: 4\nEDGE_WEIGHT_TYPE: EXPLICIT\nEDGE_WEIGHT_FORMAT: UPPER_ROW\n"
                     "EDGE_WEIGHT_SECTION\n1 2 3\n4 5\n",
                     "explicit-truncated", 8, "ends early");
    tsp_expect_error(
        "NAME: x\nDIMENSION: 4000000000\nEDGE_WEIGHT_TYPE: EXPLICIT\nEDGE_WEIGHT_FORMAT: UPPER_ROW\n"
        "EDGE_WEIGHT_SECTION\n1 2 3\n4 5\n6\n",
        "huge", 5, "truncated");
    TU_CHECK(gpk_tsp_load("/nonexistent/dir/x.tsp", &t) == GPK_EIO, "missing file: GPK_EIO");
    uint32_t tn, *tour;
    TU_CHECK(gpk_tsp_load_tour("/nonexistent/dir/x.tour", &tn, &tour) == GPK_EIO, "missing tour: GPK_EIO");
}

struct tsp_best {
    char name[64];
    int64_t len;
};

static void tsp_data_tests(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/tsplib/bestSolutions.txt", dir);
    FILE *f = fopen(path, "r");
    if (!f) {
        printf("data not found: instance checks skipped\n");
        return;
    }
    struct tsp_best best[512];
    int nbest = 0;
    char line[256];
    while (fgets(line, sizeof line, f) && nbest < 512) {
        long long v;
        if (sscanf(line, "%63s : %lld", best[nbest].name, &v) == 2) best[nbest++].len = v;
    }
    fclose(f);
    TU_CHECK(nbest > 50, "bestSolutions.txt: %d entries", nbest);

    snprintf(path, sizeof path, "%s/tsplib", dir);
    DIR *d = opendir(path);
    TU_CHECK(d != NULL, "cannot list %s", path);
    if (!d) return;
    int loaded = 0, failed = 0, tours = 0, big = 0;
    int done_type[5] = {0};
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t L = strlen(e->d_name);
        if (L > 4 && strcmp(e->d_name + L - 4, ".tsp") == 0) {
            gpk_tsp t;
            snprintf(path, sizeof path, "%s/tsplib/%s", dir, e->d_name);
            gpk_status s = gpk_tsp_load(path, &t);
            TU_CHECK(s == GPK_OK, "%s: %s", e->d_name, gpk_last_error(NULL));
            if (s != GPK_OK) {
                failed++;
                continue;
            }
            loaded++;
            TU_CHECK((t.matrix == NULL) == (t.n > GPK_TSP_MATRIX_MAX && t.weight != GPK_TSP_EXPLICIT),
                     "%s: matrix presence for n = %u", t.name, t.n);
            if (t.n > GPK_TSP_MATRIX_MAX) {
                big++;
                printf("  %s: n = %u, distances on the fly\n", t.name, t.n);
            }
            /* Deltas on the small instances (and dsj1000ceil, the smallest
             * CEIL_2D): every type and format shows up. */
            if (t.n <= 600 || (t.weight == GPK_TSP_CEIL_2D && t.n <= 1000)) {
                tsp_check_deltas(&t, 1000);
                done_type[t.weight]++;
            }
            gpk_tsp_free(&t);
        } else if (L > 9 && strcmp(e->d_name + L - 9, ".opt.tour") == 0) {
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)(L - 9), e->d_name);
            int64_t want = -1;
            for (int k = 0; k < nbest; k++)
                if (strcmp(best[k].name, name) == 0) want = best[k].len;
            TU_CHECK(want >= 0, "%s: not in bestSolutions.txt", name);
            gpk_tsp t;
            uint32_t n, *tour;
            snprintf(path, sizeof path, "%s/tsplib/%s.tsp", dir, name);
            gpk_status s = gpk_tsp_load(path, &t);
            TU_CHECK(s == GPK_OK, "%s: %s", path, gpk_last_error(NULL));
            if (s != GPK_OK) continue;
            snprintf(path, sizeof path, "%s/tsplib/%s", dir, e->d_name);
            s = gpk_tsp_load_tour(path, &n, &tour);
            TU_CHECK(s == GPK_OK, "%s: %s", path, gpk_last_error(NULL));
            if (s == GPK_OK) {
                TU_CHECK(n == t.n, "%s: tour of %u cities, instance %u", name, n, t.n);
                if (n == t.n) {
                    int64_t len = gpk_tsp_tour_length(&t, tour);
                    TU_CHECK(len == want, "%s: optimal tour length %lld, bestSolutions.txt %lld", name,
                             (long long)len, (long long)want);
                    tours += len == want;
                }
                free(tour);
            }
            gpk_tsp_free(&t);
        }
    }
    closedir(d);
    printf("  %d .tsp files loaded (%d failed, %d with n > %u on the fly), %d optimal tours == "
           "bestSolutions.txt\n",
           loaded, failed, big, GPK_TSP_MATRIX_MAX, tours);
    for (int ty = 0; ty < 5; ty++) TU_CHECK(done_type[ty] > 0, "no instance of weight type %d checked", ty);

    /* The on-the-fly path on real instances of each coordinate type. */
    const char *otf[] = {"pr2392", "dsj1000ceil", "att532", "ulysses22"};
    for (int k = 0; k < 4; k++) {
        size_t len;
        snprintf(path, sizeof path, "%s/tsplib/%s.tsp", dir, otf[k]);
        char *text = tsp_slurp(path, &len);
        if (!text) continue;
        tsp_check_on_the_fly(text, len, otf[k]);
        free(text);
    }
}

/* FIXED_EDGES_SECTION: kept 0-based; a loop, a city on three edges or a
 * cycle short of the tour is refused at its line; all n edges of one tour
 * are accepted. */
static void tsp_fixed_edges_tests(void)
{
    const char *coords = "NODE_COORD_SECTION\n1 0 0\n2 10 0\n3 20 0\n4 20 10\n5 10 10\n6 0 10\nEOF\n";
    char buf[512];
    gpk_tsp t;
    snprintf(buf, sizeof buf,
             "NAME: f\nDIMENSION: 6\nEDGE_WEIGHT_TYPE: EUC_2D\nFIXED_EDGES_SECTION\n1 4\n5 2\n-1\n%s",
             coords);
    gpk_status s = gpk_tsp_parse(buf, strlen(buf), "fixed", &t);
    TU_CHECK(s == GPK_OK, "fixed edges: %s", gpk_last_error(NULL));
    if (s == GPK_OK) {
        TU_CHECK(t.nfixed == 2 && t.fixed && t.fixed[0] == 0 && t.fixed[1] == 3 && t.fixed[2] == 4 &&
                     t.fixed[3] == 1,
                 "fixed edges: nfixed %u, read wrong", t.nfixed);
        gpk_tsp_free(&t);
        TU_CHECK(t.fixed == NULL && t.nfixed == 0, "gpk_tsp_free leaves the fixed edges");
    }
    snprintf(buf, sizeof buf, "NAME: f\nDIMENSION: 6\nEDGE_WEIGHT_TYPE: EUC_2D\n%s", coords);
    s = gpk_tsp_parse(buf, strlen(buf), "nofixed", &t);
    TU_CHECK(s == GPK_OK && t.nfixed == 0 && t.fixed == NULL, "no FIXED_EDGES_SECTION: nfixed %u", t.nfixed);
    gpk_tsp_free(&t);
    /* the six edges of the tour 1 2 3 4 5 6: accepted */
    snprintf(buf, sizeof buf,
             "NAME: f\nDIMENSION: 6\nEDGE_WEIGHT_TYPE: EUC_2D\nFIXED_EDGES_SECTION\n1 2\n2 3\n3 4\n4 5\n5 "
             "6\n6 1\n-1\n%s",
             coords);
    s = gpk_tsp_parse(buf, strlen(buf), "fulltour", &t);
    TU_CHECK(s == GPK_OK && t.nfixed == 6, "fixed edges forming the whole tour: status %d, nfixed %u", (int)s,
             t.nfixed);
    gpk_tsp_free(&t);
    const struct {
        const char *edges;
        int line;
        const char *needle;
    } bad[] = {{"3 3\n", 5, "is a loop"},
               {"1 2\n1 3\n1 4\n", 7, "three fixed edges"},
               {"1 2\n2 3\n3 1\n", 7, "closes a cycle"},
               {"1 7\n", 5, "out of range"}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        snprintf(buf, sizeof buf,
                 "NAME: f\nDIMENSION: 6\nEDGE_WEIGHT_TYPE: EUC_2D\nFIXED_EDGES_SECTION\n%s-1\n%s",
                 bad[k].edges, coords);
        tsp_expect_error(buf, "badfixed", bad[k].line, bad[k].needle);
    }
    /* A DIMENSION far beyond the file with fixed edges before the data (the
     * fuzzer's case, DIMENSION 1844674404 asked for 7 GB): the edges are
     * checked in memory of their own size, the truncated coordinates fail.
     * 400 million cities would have taken 2 GB of union-find. */
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    const char *huge = "NAME: h\nDIMENSION: 400000000\nEDGE_WEIGHT_TYPE: EUC_2D\nFIXED_EDGES_SECTION\n"
                       "1 400000000\n2 399999999\n400000000 2\n-1\nNODE_COORD_SECTION\n1 0 0\n";
    tsp_expect_error(huge, "hugefixed", 9, "truncated");
    getrusage(RUSAGE_SELF, &after);
    TU_CHECK(after.ru_maxrss - before.ru_maxrss < 64 * 1024,
             "fixed edges of a DIMENSION 400000000 file: peak memory "
             "grew by %ld KB",
             after.ru_maxrss - before.ru_maxrss);
}

static void tsp_tests(const char *data_dir)
{
    /* Seeded from the program's generator, so GPK_TEST_SEED replays it. */
    tsp_rng_state = gpk_rng_next(&rng) | 1;
    tsp_memory_tests();
    tsp_fixed_edges_tests();
    if (data_dir) tsp_data_tests(data_dir); /* main said "data not found" otherwise */
}

int main(int argc, char **argv)
{
    gpk_rng_seed(&rng, tu_seed());
    const char *data_dir = argc > 1 ? argv[1] : NULL;
    struct stat st;
    if (!data_dir || stat(data_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        printf("data not found: instance checks skipped\n");
        data_dir = NULL;
    }
    bijection_tests();
    qap_tests(data_dir);
    ppp_tests();
    tsp_tests(data_dir);
    return tu_finish("test_search");
}
