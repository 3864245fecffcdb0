/* gpk qap, gpk tsp, gpk ppp: parallel local search (Luong, Melab & Talbi
 * 2009) from the command line. One front end for the three problems: read
 * or generate the instance, run gpk_search_run with a progress line on
 * stderr, check the result against the problem's own evaluation, report
 * the gap to the best-known value found next to the instance file, and
 * write the solution in the problem's usual format. */
#define _POSIX_C_SOURCE 200809L /* sigaction, isatty, fileno */
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "best_known.h"
#include "cli.h"
#include "gpk/gen.h"
#include "gpk/search.h"
#include "io.h"
#include "mpi_cli.h"
#ifdef GPK_HAVE_MPI
#include "gpk/mpi.h"
#endif

/* ---- help ------------------------------------------------------------------------ */

static void common_help(FILE *f)
{
    fprintf(f,
            "  --algo A       auto (default: the best real-use search: tsp multistart over\n"
            "                 --nb or2opt for 10 s; qap, ppp its), its (iterated tabu search),\n"
            "                 tabu, hc (best improvement), hc-first (first improvement),\n"
            "                 multistart (one its per thread, the best kept)\n"
            "  --paper        the paper's reproduction (Luong, Melab & Talbi 2009): its, 10 x\n"
            "                 1000 tabu iterations, the whole neighbourhood (tsp: 2opt)\n"
            "  --iters N      hc: most moves (default: until a local optimum); tabu: iterations\n"
            "                 (default 10000); its, multistart: tabu iterations per global\n"
            "                 iteration (default 1000)\n"
            "  --global N     its, multistart: global iterations (default 10; a QAP its:\n"
            "                 100)\n"
            "  --tenure T     tabu, its, multistart: iterations a move stays tabu\n"
            "                 (default: the library's per problem)\n"
            "  --starts S     multistart: independent searches (default: the threads; with\n"
            "                 --gpus or --backend cuda: the GPUs)\n"
            "  --backend B    auto (default: cuda when this build has the GPU search and a\n"
            "                 CUDA device is usable, else cpu), cpu, cuda: the GPU evaluates\n"
            "                 each iteration's whole neighbourhood, one thread per neighbour\n"
            "                 (hc, tabu, its; hc-first is sequential and runs on the CPU)\n"
            "  --eval MODE    cuda: ours (default: the best admissible move chosen on the GPU,\n"
            "                 one move copied back), paper (every delta copied to the host and\n"
            "                 chosen there, the paper's mode); same result either way\n"
            "  --gpus K       multistart on K GPUs (the paper's Algorithm 2): one CPU thread\n"
            "                 per GPU, each driving device i; runs = --starts (default K), run\n"
            "                 r seeded from the seed and r; the best run is kept (ties: the\n"
            "                 lowest r), so the result does not depend on K. Implies cuda\n"
            "  --threads T    CPU threads evaluating the neighbourhood (default: all cores)\n"
            "  --mpi          under mpirun: the runs spread over the ranks (gpk_mpi_search_\n"
            "                 multistart): runs = --starts (default: one per context of all\n"
            "                 ranks), run r seeded as on one host, so the result is the one\n"
            "                 host's for the same --starts. Each rank: with cuda --gpus K GPUs\n"
            "                 (default 1) from device local-rank x K; on the CPU --threads T\n"
            "                 (default: the cores over the ranks of the node), multistart as\n"
            "                 T one-thread searches. --starts works with every --algo. Rank 0\n"
            "                 prints and writes --out; a signal to any rank stops all\n"
            "  --mpi-timeout S  with --mpi: a rank that waits S seconds (default 300) for a\n"
            "                 silent rank (stopped, hung) names it and ends the job; 0: wait\n"
            "                 forever. Ranks still searching are never silent\n"
            "  --time-limit S stop after S seconds (decimals allowed) with the best so far;\n"
            "                 a budget: without --iters / --global, tabu, its and multistart\n"
            "                 search until it (hc stops at its local optimum);\n"
            "                 SIGINT / SIGTERM also stop the search: the summary is printed,\n"
            "                 --out written, and the exit status is 130 / 143\n"
            "  --best-known V the reference value for the gap (default: the table beside the\n"
            "                 instance, else the optimal solution file beside it)\n"
            "  --out FILE     write the best solution (format below)\n"
            "  --json         print the result as JSON on stdout\n"
            "  -q, --quiet    no progress and no summary line on stderr\n");
}

void cmd_qap_help(FILE *f)
{
    fprintf(f,
            "usage: gpk qap FILE.dat [--algo A] [--iters N] [--seed S] [--out FILE.sln] [options]\n"
            "\n"
            "Quadratic assignment: minimises sum_ij A[i][j] * B[p[i]][p[j]] over the\n"
            "permutations p of a QAPLIB instance by local search in the swap neighbourhood,\n"
            "the whole neighbourhood evaluated in parallel each iteration. The gap is given\n"
            "against best-known.csv in FILE's directory when it names the instance.\n"
            "\n"
            "  --nb NB        swap (the only one, and the default)\n"
            "  --seed S       start solution and random choices (default 1)\n"
            "  --init FILE    start from the permutation of a QAPLIB .sln file\n"
            "  --eval FILE    print the cost of the .sln permutation (no search); --eval ours\n"
            "                 or paper is the CUDA mode below\n"
            "  --qap-delta D  CPU scan: table (default: Taillard's delta table, O(1) per\n"
            "                 neighbour, O(n^2) update per move) or formula (the O(n) swap delta\n"
            "                 per neighbour, as the GPU evaluates); same result either way\n");
    common_help(f);
    fprintf(f, "\n--out writes QAPLIB .sln: \"n cost\", then the 1-based permutation.\n");
}

void cmd_tsp_help(FILE *f)
{
    fprintf(f,
            "usage: gpk tsp FILE.tsp [--algo A] [--nb or2opt|2opt|swap] [--seed S] [--out FILE.tour]\n"
            "               [--svg FILE.svg] [options]\n"
            "\n"
            "Symmetric travelling salesman (TSPLIB95): minimises the closed tour length by\n"
            "local search, the whole neighbourhood evaluated in parallel each iteration. The\n"
            "gap is given against bestSolutions.txt in FILE's directory when it names the\n"
            "instance, else against NAME.opt.tour beside it.\n"
            "\n"
            "  --nb NB        or2opt (default: 2-opt and Or-opt over the 10 nearest neighbours,\n"
            "                 don't-look bits, O(n) memory; hc descends, tabu and its run an\n"
            "                 iterated local search with double-bridge kicks, multistart one\n"
            "                 per thread; from 20000 cities with a CUDA device the descent's\n"
            "                 moves are evaluated on the GPU, many applied per batch), 2opt\n"
            "                 (the paper's: reverse a segment, whole neighbourhood), swap\n"
            "                 (exchange two cities)\n"
            "  --seed S       start tour and random choices (default 1)\n"
            "  --init FILE    start from the tour of a TSPLIB .tour file\n"
            "  --eval FILE    print the length of the .tour (no search); --eval ours or\n"
            "                 paper is the CUDA mode below\n"
            "  --svg FILE     draw the tour (not for EXPLICIT instances: no coordinates)\n"
            "  --random N     instead of FILE: N cities uniform over [0, 10^6)^2 (EUC_2D) from\n"
            "                 --seed; the gap is to the estimate 0.7124 sqrt(N A) (kind EST)\n");
    common_help(f);
    fprintf(f, "\n--out writes a TSPLIB .tour: TOUR_SECTION with the 1-based cities, -1, EOF.\n");
}

void cmd_ppp_help(FILE *f)
{
    fprintf(f,
            "usage: gpk ppp --m M --n N [--seed S] [--algo A] [--nb flip1|flip2] [options]\n"
            "\n"
            "Permuted perceptron: the instance m-n-seed is generated (an m x n +-1 matrix A\n"
            "and a secret V, rows negated so that A V >= 0); the search looks for a V' with\n"
            "fitness 30 * sum_i (|Y_i| - Y_i) + sum_j |H[j] - H'(Y)[j]| = 0, Y = A V'.\n"
            "\n"
            "  --m M          rows (1 or more)\n"
            "  --n N          columns, odd\n"
            "  --seed S       the instance m-n-seed, and the search's seed (default 1)\n"
            "  --search-seed S  another seed for the search alone, same instance\n"
            "  --nb NB        flip1 (default: Hamming distance 1), flip2 (distance 2)\n");
    common_help(f);
    fprintf(f, "\n--out writes the n bits of V' on one line: 1 for +1, 0 for -1.\n");
}

/* ---- best-known values ------------------------------------------------------------- */

/* The gap in percent, when it means something (a positive best known, or
 * the best known reached; never against a reference the result shows to
 * be wrong: below an optimum, or more than twice the result). */
static int gap_of(const cli_best_known *bk, int64_t best, double *gap)
{
    if (!bk->have || !cli_reference_plausible(bk, best)) return 0;
    if (bk->value > 0) {
        *gap = 100.0 * (double)(best - bk->value) / (double)bk->value;
        return 1;
    }
    if (best == bk->value) {
        *gap = 0.0;
        return 1;
    }
    return 0;
}

/* ---- progress ------------------------------------------------------------------------ */

typedef struct progress_state {
    const char *cmd;
    const cli_best_known *bk;
    double last_ms;  /* when the last line was printed */
    const char *tag; /* backend, mode, GPUs: "cpu 16 threads", "cuda ours, 2 GPUs" */
    int tty;         /* stderr is a terminal: one line rewritten in place */
    int open_line;   /* a rewritten line is on the terminal, not ended */
    double budget;   /* iterations the reports count up to (0: unknown), per reporting run */
    double runs;     /* runs the reporting thread does one after the other */
    double limit_s;  /* --time-limit (0: none) */
    int warned;
    int64_t shift;     /* added to the search's costs: the true tour length (FIXED_EDGES_SECTION) */
    int64_t ref_shift; /* taken from the length for the gap: the fixed edges */
    uint64_t pace_it;  /* the first report past iteration 0, where the pace is measured from */
    double pace_ms;
    double predicted; /* the duration predicted (s), 0: none */
} progress_state;

/* Ends a rewritten progress line before anything else goes to stderr. */
static void progress_end(progress_state *st)
{
    if (st->open_line) fputc('\n', stderr);
    st->open_line = 0;
}

/* At most about once a second: the library calls back every iteration (an
 * iteration of a large TSP takes seconds, one of a small PPP microseconds),
 * the clock decides what is printed. On a terminal the line rewrites
 * itself; into a file or a pipe each report is a line of its own. */
static void on_progress(const gpk_search_progress *p, void *user)
{
    progress_state *st = user;
    /* The budget's duration, from the pace of a tenth of a second after
     * the first iteration (which can take long: the first descent of an
     * or2opt search, a table set-up, while the kicks after it take
     * microseconds): a run the user did not mean to last long is worth a
     * word early. With a time limit the limit bounds it: no word. */
    if (!st->warned && st->budget > 0 && st->limit_s == 0 && p->iteration > 0) {
        if (st->pace_it == 0) {
            st->pace_it = p->iteration;
            st->pace_ms = p->ms;
        } else if (p->iteration > st->pace_it && p->ms - st->pace_ms >= 100.0) {
            st->warned = 1;
            const double per = (p->ms - st->pace_ms) / (double)(p->iteration - st->pace_it);
            const double total = st->budget * st->runs;
            const double predicted =
                (p->ms + per * (total > (double)p->iteration ? total - (double)p->iteration : 0)) * 1e-3;
            st->predicted = predicted;
            if (predicted > 60.0) {
                progress_end(st);
                fprintf(stderr,
                        "gpk %s: warning: this budget is predicted to take about %.0f s%s (--time-limit "
                        "bounds it; Ctrl-C stops with the best so far)\n",
                        st->cmd, predicted,
                        predicted > 86400      ? " (days)"
                            : predicted > 3600 ? " (hours)"
                                               : "");
            }
        }
    }
    if (p->ms - st->last_ms < 1000.0) return;
    st->last_ms = p->ms;
    char gap[48] = "";
    double g;
    if (gap_of(st->bk, p->best + st->shift - st->ref_shift, &g))
        snprintf(gap, sizeof gap, " (gap %.3f%%)", g);
    const double rate = p->ms > 0 ? (double)p->evaluated / (p->ms * 1e-3) : 0.0;
    fprintf(stderr, "%sgpk %s [%s]: iteration %llu: current %lld, best %lld%s, %.3g moves/s, %.1f s%s",
            st->tty ? "\r" : "", st->cmd, st->tag, (unsigned long long)p->iteration,
            (long long)(p->current + st->shift), (long long)(p->best + st->shift), gap, rate, p->ms * 1e-3,
            st->tty ? "\033[K" : "\n");
    if (st->tty) fflush(stderr);
    st->open_line = st->tty;
}

/* ---- stopping on a signal ------------------------------------------------------------------ */

/* Set by the handler (the signal number), read by the search through
 * opts.cancel: the search ends soon after, with the best so far. */
static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig) { stop_signal = sig; }

/* on: the search's handler; off: the handlers that were there before
 * (main's, which removes the temporary files of an output being written
 * when a second signal comes). */
static void catch_stop_signals(int on)
{
    static struct sigaction saved[2];
    static int have_saved;
    static const int sigs[2] = {SIGINT, SIGTERM};
    for (int k = 0; k < 2; k++) {
        if (on) {
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = on_stop_signal;
            sigemptyset(&sa.sa_mask);
            sigaction(sigs[k], &sa, &saved[k]);
        } else if (have_saved) {
            sigaction(sigs[k], &saved[k], NULL);
        }
    }
    have_saved = on;
}

/* ---- output files ---------------------------------------------------------------------- */

static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc((unsigned char)*s >= 0x20 ? *s : '?', f);
        }
    }
}

/* The file being written: open_out starts it through the safe writer
 * (io.h), finish_file commits it, so that a failed run leaves any older
 * file of that name as it was. */
static io_out out_file;

static int finish_file(const char *cmd, const char *path, FILE *f)
{
    char err[600];
    if (io_out_commit(&out_file, err, sizeof err) != 0) {
        cli_error(cmd, "%s", err);
        return -1;
    }
    return 0;
}

static FILE *open_out(const char *cmd, const char *path)
{
    char err[600];
    if (io_out_open(&out_file, path, err, sizeof err) != 0) {
        cli_error(cmd, "%s", err);
        return NULL;
    }
    return out_file.f;
}

static int write_sln(const char *cmd, const char *path, const gpk_search_result *r)
{
    FILE *f = open_out(cmd, path);
    if (!f) return -1;
    fprintf(f, "%u %lld\n", r->n, (long long)r->best);
    for (uint32_t i = 0; i < r->n; i++)
        fprintf(f, "%u%c", r->solution[i] + 1, i + 1 == r->n || i % 20 == 19 ? '\n' : ' ');
    return finish_file(cmd, path, f);
}

static int write_tour(const char *cmd, const char *path, const gpk_tsp *t, const gpk_search_result *r,
                      const char *how)
{
    FILE *f = open_out(cmd, path);
    if (!f) return -1;
    fprintf(f, "NAME : %s.tour\nCOMMENT : Length %lld (%s)\nTYPE : TOUR\nDIMENSION : %u\nTOUR_SECTION\n",
            t->name, (long long)r->best, how, r->n);
    for (uint32_t i = 0; i < r->n; i++) fprintf(f, "%u\n", r->solution[i] + 1);
    fprintf(f, "-1\nEOF\n");
    return finish_file(cmd, path, f);
}

static int write_bits(const char *cmd, const char *path, const gpk_search_result *r)
{
    FILE *f = open_out(cmd, path);
    if (!f) return -1;
    for (uint32_t i = 0; i < r->n; i++) fputc(r->solution[i] ? '1' : '0', f);
    fputc('\n', f);
    return finish_file(cmd, path, f);
}

/* The tour as a closed polyline over the cities, scaled into an 800 x 800
 * square, north (y) up. GEO coordinates are (latitude, longitude): the
 * longitude goes across. */
static int write_tour_svg(const char *cmd, const char *path, const gpk_tsp *t, const gpk_search_result *r,
                          const char *title)
{
    FILE *f = open_out(cmd, path);
    if (!f) return -1;
    const int geo = t->weight == GPK_TSP_GEO;
    const double *hx = geo ? t->y : t->x, *vy = geo ? t->x : t->y;
    double x0 = hx[0], x1 = hx[0], y0 = vy[0], y1 = vy[0];
    for (uint32_t i = 1; i < t->n; i++) {
        x0 = fmin(x0, hx[i]);
        x1 = fmax(x1, hx[i]);
        y0 = fmin(y0, vy[i]);
        y1 = fmax(y1, vy[i]);
    }
    const double span = fmax(fmax(x1 - x0, y1 - y0), 1e-30), s = 800.0 / span;
    const double r_dot = t->n <= 200 ? 3.0 : t->n <= 5000 ? 1.5 : 0.6;
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"840\" height=\"860\" viewBox=\"-20 -40 840 "
            "860\">\n<text x=\"0\" y=\"-15\" font-family=\"sans-serif\" font-size=\"14\">");
    xml_text(f, title);
    fprintf(f,
            "</text>\n<rect x=\"-20\" y=\"-40\" width=\"840\" height=\"860\" fill=\"none\"/>\n"
            "<polygon fill=\"none\" stroke=\"#3060a0\" stroke-width=\"%.2f\" points=\"",
            t->n <= 5000 ? 1.0 : 0.4);
    for (uint32_t i = 0; i < r->n; i++) {
        const uint32_t c = r->solution[i];
        fprintf(f, "%s%.2f,%.2f", i ? " " : "", (hx[c] - x0) * s, 800.0 - (vy[c] - y0) * s);
    }
    fprintf(f, "\"/>\n");
    for (uint32_t c = 0; c < t->n; c++)
        fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"%.1f\" fill=\"#c03020\"/>\n", (hx[c] - x0) * s,
                800.0 - (vy[c] - y0) * s, r_dot);
    fprintf(f, "</svg>\n");
    return finish_file(cmd, path, f);
}

/* ---- the check --------------------------------------------------------------------------- */

/* The result must be a permutation (or bits) whose value, by the problem's
 * own full evaluation, is the reported best: a search that drifts from its
 * incremental deltas would otherwise report a cost it never reached. */
const char *cli_check_search_result(const gpk_search_problem *pb, const gpk_search_result *r, uint32_t n,
                                    char *buf, size_t len)
{
    if (r->n != n || !r->solution) return "the result has the wrong size";
    const gpk_status cs = gpk_search_problem_check_solution(pb, r->solution);
    if (cs == GPK_ENOMEM) return "out of host memory for the check";
    if (cs != GPK_OK) {
        snprintf(buf, len, "the result: %s", gpk_last_error(NULL));
        return buf;
    }
    int64_t value;
    if (gpk_search_problem_cost(pb, r->solution, &value) != GPK_OK) return "out of host memory for the check";
    if (value != r->best) {
        snprintf(buf, len, "the search reports %lld, the solution evaluates to %lld", (long long)r->best,
                 (long long)value);
        return buf;
    }
    return NULL;
}

/* ---- solutions given on the command line --------------------------------------------------- */

/* path's directory + name + ext, in a malloc'd string (NULL: no memory). */
static char *beside(const char *path, const char *name, const char *ext)
{
    const char *slash = strrchr(path, '/');
    const size_t dlen = slash ? (size_t)(slash - path) + 1 : 0;
    char *f = malloc(dlen + strlen(name) + strlen(ext) + 1);
    if (!f) return NULL;
    memcpy(f, path, dlen);
    strcpy(f + dlen, name);
    strcat(f + dlen, ext);
    return f;
}

/* A problem's solution file: *m entries in *sol (0-based, malloc'd). */
typedef gpk_status (*solution_reader)(const char *cmd, const gpk_search_problem *pb, const char *path,
                                      uint32_t n, int quiet, uint32_t *m, uint32_t **sol);

static gpk_status tsp_read_solution(const char *cmd, const gpk_search_problem *pb, const char *path,
                                    uint32_t n, int quiet, uint32_t *m, uint32_t **sol)
{
    (void)cmd, (void)pb, (void)n, (void)quiet;
    return gpk_tsp_load_tour(path, m, sol);
}

/* Some published .sln files (nug12 .. nug25) list the inverse permutation,
 * location -> facility: when the file's cost is that of the inverse and
 * not of the permutation as read, the inverse is taken (and said). */
static gpk_status qap_read_solution(const char *cmd, const gpk_search_problem *pb, const char *path,
                                    uint32_t n, int quiet, uint32_t *m, uint32_t **sol)
{
    int64_t cost;
    gpk_status s = gpk_qap_load_solution(path, m, &cost, sol);
    if (s != GPK_OK || *m != n || gpk_qap_cost(pb->qap, *sol) == cost) return s;
    uint32_t *inv = malloc((size_t)n * sizeof *inv);
    if (!inv) return GPK_OK;
    for (uint32_t i = 0; i < n; i++) inv[(*sol)[i]] = i;
    if (gpk_qap_cost(pb->qap, inv) != cost) {
        free(inv);
        return GPK_OK;
    }
    if (!quiet)
        fprintf(stderr, "gpk %s: %s lists location -> facility (its cost is the inverse's): inverted\n", cmd,
                path);
    free(*sol);
    *sol = inv;
    return GPK_OK;
}

/* Reads a solution of the problem (a tour, a permutation) for an instance
 * of n `noun`; NULL after a message when the file is unreadable or of
 * another size. */
static uint32_t *load_solution(const char *cmd, const gpk_search_problem *pb, solution_reader read,
                               const char *noun, const char *path, uint32_t n, int quiet)
{
    uint32_t m = 0, *sol = NULL;
    gpk_status s = read(cmd, pb, path, n, quiet, &m, &sol);
    if (s != GPK_OK) {
        if (!quiet) cli_error(cmd, "%s", gpk_last_error(NULL));
        return NULL;
    }
    if (m != n) {
        if (!quiet) cli_error(cmd, "%s: %u %s, the instance has %u", path, m, noun, n);
        free(sol);
        return NULL;
    }
    return sol;
}

static int64_t solution_cost(const gpk_search_problem *pb, const uint32_t *sol)
{
    int64_t cost = 0;
    gpk_search_problem_cost(pb, sol, &cost); /* a tour or permutation: no memory needed */
    return cost;
}

/* ---- FIXED_EDGES_SECTION (TSPLIB's linhp318) ---------------------------------------------
 * Every tour must contain the fixed edges, and TSPLIB's value for linhp318
 * (41345) is the Hamiltonian path that the tour becomes without them: the
 * optimal tour through the fixed edge 1-214, less that edge's 3869. So:
 *  - the search runs on a copy of the instance (EXPLICIT, the same matrix)
 *    where each fixed edge is shorter by M = n * (longest edge) + 1: a tour
 *    with more fixed edges is then shorter than any with fewer, every
 *    search and neighbourhood unchanged; search cost + M * nfixed is the
 *    length of a tour that holds them all;
 *  - the reported length is the tour's true length, fixed edges included;
 *  - the gap compares the length less the fixed edges with the reference,
 *    and is not given for a tour that misses one. */
static uint32_t fixed_in_tour(const gpk_tsp *t, const uint32_t *tour)
{
    uint32_t *pos = malloc((size_t)t->n * sizeof *pos), have = 0;
    if (!pos) return 0;
    for (uint32_t i = 0; i < t->n; i++) pos[tour[i]] = i;
    for (uint32_t e = 0; e < t->nfixed; e++) {
        const uint32_t pa = pos[t->fixed[2 * e]], pb = pos[t->fixed[2 * e + 1]];
        const uint32_t gap = pa > pb ? pa - pb : pb - pa;
        have += gap == 1 || gap == t->n - 1;
    }
    free(pos);
    return have;
}

static int64_t fixed_length(const gpk_tsp *t)
{
    int64_t f = 0;
    for (uint32_t e = 0; e < t->nfixed; e++) f += gpk_tsp_dist(t, t->fixed[2 * e], t->fixed[2 * e + 1]);
    return f;
}

/* The value the reference counts for a tour of length len: len less the
 * fixed edges when the tour holds them all; 0 (no gap) when it misses one. */
static int reference_value(const gpk_tsp *t, const uint32_t *tour, int64_t len, int64_t *value)
{
    *value = len;
    if (!t || !t->nfixed) return 1;
    if (fixed_in_tour(t, tour) != t->nfixed) return 0;
    *value = len - fixed_length(t);
    return 1;
}

/* The search copy (see above); 0 when it cannot be made (no matrix above
 * GPK_TSP_MATRIX_MAX cities, or out of memory): the edges are then not
 * enforced. */
static int fixed_search_copy(const gpk_tsp *t, gpk_tsp *out, int64_t *shift)
{
    memset(out, 0, sizeof *out);
    if (!t->matrix) return 0;
    const size_t nn = (size_t)t->n * t->n;
    int32_t longest = 0;
    for (size_t k = 0; k < nn; k++)
        if (t->matrix[k] > longest) longest = t->matrix[k];
    /* n * longest + 1 where it fits; else as much as int32 takes (then
     * only the check after the search tells) */
    int64_t m = (int64_t)t->n * longest + 1;
    if (m > (int64_t)INT32_MAX - longest) m = (int64_t)INT32_MAX - longest;
    out->matrix = malloc(nn * sizeof *out->matrix);
    if (!out->matrix) return 0;
    memcpy(out->matrix, t->matrix, nn * sizeof *out->matrix);
    for (uint32_t e = 0; e < t->nfixed; e++) {
        const uint32_t a = t->fixed[2 * e], b = t->fixed[2 * e + 1];
        out->matrix[(size_t)a * t->n + b] = (int32_t)(t->matrix[(size_t)a * t->n + b] - m);
        out->matrix[(size_t)b * t->n + a] = (int32_t)(t->matrix[(size_t)b * t->n + a] - m);
    }
    out->n = t->n;
    out->weight = GPK_TSP_EXPLICIT;
    snprintf(out->name, sizeof out->name, "%s", t->name);
    *shift = m * t->nfixed;
    return 1;
}

/* The instance "randN-SEED": n cities uniform over [0, RANDOM_SIDE)^2 with
 * integer coordinates, EUC_2D, from the seed; read through the TSPLIB
 * reader, so that it gets the same matrix rule as a file. */
#define RANDOM_SIDE 1000000.0
static gpk_status random_tsp(uint32_t n, uint64_t seed, gpk_tsp *t)
{
    const size_t cap = (size_t)n * 32 + 256;
    char *text = malloc(cap);
    if (!text) return GPK_ENOMEM;
    char name[64];
    snprintf(name, sizeof name, "rand%u-%llu", n, (unsigned long long)seed);
    size_t len = (size_t)snprintf(text, cap,
                                  "NAME : %s\nTYPE : TSP\nDIMENSION : %u\nEDGE_WEIGHT_TYPE : EUC_2D\n"
                                  "NODE_COORD_SECTION\n",
                                  name, n);
    gpk_rng r;
    gpk_rng_seed(&r, seed);
    for (uint32_t i = 0; i < n; i++) {
        const unsigned long x = (unsigned long)(gpk_rng_uniform(&r) * RANDOM_SIDE),
                            y = (unsigned long)(gpk_rng_uniform(&r) * RANDOM_SIDE);
        len += (size_t)snprintf(text + len, cap - len, "%u %lu %lu\n", i + 1, x, y);
    }
    len += (size_t)snprintf(text + len, cap - len, "EOF\n");
    gpk_status s = gpk_tsp_parse(text, len, name, t);
    free(text);
    return s;
}

/* ---- --mpi ------------------------------------------------------------------------------- */

#ifdef GPK_HAVE_MPI
static const cli_mpi *mpi_run; /* set while a command runs under --mpi */
#endif

static int this_rank(void)
{
#ifdef GPK_HAVE_MPI
    if (mpi_run) return mpi_run->rank;
#endif
    return 0;
}

static int rank_count(void)
{
#ifdef GPK_HAVE_MPI
    if (mpi_run) return mpi_run->size;
#endif
    return 1;
}

/* Under --mpi every rank meets here once at `what`: 1 when all went on
 * (rank 0 names a rank that did not). Without --mpi: ok. */
static int ranks_agree(const char *cmd, int ok, const char *what)
{
#ifdef GPK_HAVE_MPI
    if (mpi_run) return cli_mpi_all_ok(cmd, mpi_run, ok, what);
#endif
    return ok;
}

/* ---- the problems the commands know ---------------------------------------------------
 * The library's table (src/search/problem.h) answers the name, the
 * neighbourhoods, the check and the evaluation; what only the command
 * knows of a problem is here: its help, its options, its solution files
 * and its output. */

enum {
    CLI_OPT_FILE = 1,      /* an instance file; --init, --eval FILE, --best-known */
    CLI_OPT_GENERATED = 2, /* a generated instance: --m, --n, --search-seed */
    CLI_OPT_RANDOM = 4,    /* --random N */
    CLI_OPT_QAP_DELTA = 8, /* --qap-delta */
    CLI_OPT_SVG = 16       /* --svg */
};

typedef struct search_state search_state;

typedef struct cli_problem {
    gpk_problem_kind kind;
    void (*help)(FILE *f);
    unsigned opts;           /* CLI_OPT_* */
    const char *nb_allowed;  /* --nb's message */
    int solved_at_zero;      /* cost 0 solves it: "solved", no reference check */
    const char *value_word;  /* --eval's report: "cost", "length" */
    const char *noun;        /* what n counts: "facilities", "cities" */
    const char *beside_ext;  /* the reference solution beside the instance (NULL: none) */
    const char *beside_kind; /* and its kind: "BKS", "OPT" */
    solution_reader read_solution;
    int (*load)(search_state *st);  /* the instance into st: 0, or the exit status after a message */
    int (*write)(search_state *st); /* --out: 0, or -1 after a message */
} cli_problem;

typedef struct search_args {
    const char *file, *out, *svg, *init, *eval_file;
    double time_limit;
    uint64_t random_n; /* tsp --random N (0: a file) */
    int64_t best_known;
    int have_best_known;
    gpk_search_opts so;
    int algo_set, nb_set, quiet, json, threads, paper;
    int default_limit; /* the time limit is the default's (auto on a TSP), not --time-limit */
    uint64_t iters, global, tenure, starts, seed, search_seed, m, n;
    int have_iters, have_global, have_tenure, have_starts, have_search_seed, have_m, have_n;
    uint64_t gpus;
    int have_gpus, have_eval, have_qap_delta;
    int mpi;
    gpk_backend backend;
} search_args;

/* One run of a command: the arguments, the instance, the contexts, the
 * result. Zeroed at the start; search_free releases what is set. */
struct search_state {
    const char *cmd;
    const cli_problem *prob;
    search_args a;
    gpk_qap qap;
    gpk_tsp tsp, tsp_search; /* tsp_search: the FIXED_EDGES_SECTION copy the search runs on */
    gpk_ppp ppp;
    int64_t fixed_shift;
    int fixed_enforced;
    gpk_search_problem pb;
    char instance[96];
    uint32_t n;
    cli_best_known bk;
    uint32_t *init_sol;
    gpk_ctx *ctx;
    gpk_ctx **gctx; /* --gpus / multistart on CUDA / --mpi: one context per GPU or start */
    int ngpu;
    int use_gpu, multi;
    int mpi_contexts; /* --mpi: the contexts of all ranks */
    gpk_ctx_info info;
    gpk_search_result res;
#ifdef GPK_HAVE_MPI
    gpk_mpi_search_run *mpi_runs; /* --mpi: every run's record */
#endif
    char tag[160];
    progress_state ps;
};

static int parse_u64(const char *cmd, const char *opt, const char *val, uint64_t lo, uint64_t hi,
                     uint64_t *out, const char *what)
{
    if (cli_parse_uint(val, lo, hi, out) != 0) {
        cli_error(cmd, "bad %s '%s' (%s)", opt, val, what);
        return -1;
    }
    return 0;
}

/* What the option parsers return besides an exit status. */
#define ARG_TAKEN (-1) /* the argument was the parser's: go on */
#define ARG_OTHER (-2) /* not the parser's */

/* The search's options, the same for every problem. */
static int parse_search_option(const char *cmd, const cli_problem *pr, int argc, char **argv, int *i,
                               search_args *a)
{
    static const cli_uint_opt nums[] = {{"--iters", 0, UINT64_MAX},  {"--global", 1, UINT32_MAX},
                                        {"--tenure", 1, UINT32_MAX}, {"--starts", 1, UINT32_MAX},
                                        {"--seed", 0, UINT64_MAX},   {"--threads", 0, 1 << 16},
                                        {"--gpus", 1, 1 << 10}};
    static const char *const hints[] = {
        "a count, 0 for the default", "1 or more",       "1 or more", "1 or more",
        "an unsigned integer",        "0 for all cores", "1 or more"};
    uint64_t v;
    switch (cli_opt_uint_hinted(cmd, argc, argv, i, nums, hints, sizeof nums / sizeof nums[0], &v)) {
    case -1: return CLI_USAGE;
    case 0: a->iters = v, a->have_iters = 1; return ARG_TAKEN;
    case 1: a->global = v, a->have_global = 1; return ARG_TAKEN;
    case 2: a->tenure = v, a->have_tenure = 1; return ARG_TAKEN;
    case 3: a->starts = v, a->have_starts = 1; return ARG_TAKEN;
    case 4: a->seed = v; return ARG_TAKEN;
    case 5: a->threads = (int)v; return ARG_TAKEN;
    case 6: a->gpus = v, a->have_gpus = 1; return ARG_TAKEN;
    }
    const char *arg = argv[*i], *val = NULL;
    int m;
    if (cli_flag(arg, NULL, "--json")) {
        a->json = 1;
    } else if (cli_flag(arg, NULL, "--paper")) {
        a->paper = 1;
    } else if (cli_flag(arg, NULL, "--mpi")) {
#ifndef GPK_HAVE_MPI
        cli_error(cmd,
                  "--mpi: this gpk was built without MPI (gpk-mpi is built beside gpk when MPI is "
                  "found at build time: GPK_WITH_MPI)");
        return CLI_USAGE;
#endif
        a->mpi = 1;
#ifdef GPK_HAVE_MPI
    } else if ((m = cli_opt_value(cmd, argc, argv, i, NULL, "--mpi-timeout", &val)) != 0) {
        double t; /* set at MPI's start (cli_mpi_init), checked here */
        if (m < 0) return CLI_USAGE;
        if (cli_mpi_timeout_value(val, &t) != 0) {
            cli_error(cmd, "bad value '%s' for --mpi-timeout (seconds, 0 to 1e6; 0: no bound)", val);
            return CLI_USAGE;
        }
#endif
    } else if (cli_flag(arg, "-q", "--quiet")) {
        a->quiet = 1;
    } else if ((m = cli_opt_value(cmd, argc, argv, i, NULL, "--algo", &val)) != 0) {
        if (m < 0) return CLI_USAGE;
        if (gpk_search_algo_parse(val, &a->so.algo) != GPK_OK) {
            cli_error(cmd, "unknown --algo '%s' (auto, hc, hc-first, tabu, its, multistart)", val);
            return CLI_USAGE;
        }
        a->algo_set = 1;
    } else if ((m = cli_opt_value(cmd, argc, argv, i, NULL, "--nb", &val)) != 0) {
        if (m < 0) return CLI_USAGE;
        gpk_neighbourhood nb;
        if (gpk_neighbourhood_parse(val, &nb) != GPK_OK || nb == GPK_NB_DEFAULT ||
            !gpk_search_nb_applies(pr->kind, nb)) {
            cli_error(cmd, "--nb '%s' is not a neighbourhood of gpk %s (%s)", val, cmd, pr->nb_allowed);
            return CLI_USAGE;
        }
        a->so.nb = nb;
        a->nb_set = 1;
    } else if ((m = cli_opt_value(cmd, argc, argv, i, NULL, "--backend", &val)) != 0) {
        if (m < 0) return CLI_USAGE;
        if (gpk_backend_parse(val, &a->backend) != GPK_OK || a->backend == GPK_BACKEND_OPENCL) {
            cli_error(cmd, "%s backend '%s' for the search (auto, cpu, cuda)",
                      a->backend == GPK_BACKEND_OPENCL ? "no" : "unknown", val);
            return CLI_USAGE;
        }
    } else if ((m = cli_opt_value(cmd, argc, argv, i, NULL, "--eval", &val)) != 0) {
        if (m < 0) return CLI_USAGE;
        /* ours / paper: the CUDA mode; anything else a solution to evaluate. */
        FILE *probe = NULL;
        if (gpk_search_eval_parse(val, &a->so.eval) == GPK_OK) {
            a->have_eval = 1;
        } else if ((pr->opts & CLI_OPT_FILE) && (probe = fopen(val, "r")) != NULL) {
            fclose(probe);
            a->eval_file = val;
        } else {
            cli_error(cmd, "unknown --eval '%s' (ours, paper%s)", val,
                      pr->opts & CLI_OPT_FILE ? ", or a solution file to evaluate" : "");
            return CLI_USAGE;
        }
    } else if ((m = cli_opt_value(cmd, argc, argv, i, NULL, "--time-limit", &val)) != 0) {
        char *end;
        if (m < 0) return CLI_USAGE;
        a->time_limit = strtod(val, &end);
        if (end == val || *end || !(a->time_limit > 0) || a->time_limit > 1e9) {
            cli_error(cmd, "bad --time-limit '%s' (seconds, more than 0)", val);
            return CLI_USAGE;
        }
    } else if ((m = cli_opt_value(cmd, argc, argv, i, "-o", "--out", &val)) != 0) {
        if (m < 0) return CLI_USAGE;
        a->out = val;
    } else {
        return ARG_OTHER;
    }
    return ARG_TAKEN;
}

/* The options and the instance argument of some problems only (cli_problem.opts). */
static int parse_problem_option(const char *cmd, const cli_problem *pr, int argc, char **argv, int *i,
                                search_args *a)
{
    const char *arg = argv[*i], *val = NULL;
    const unsigned o = pr->opts;
    int m;
    if ((o & CLI_OPT_GENERATED) &&
        (m = cli_opt_value(cmd, argc, argv, i, NULL, "--search-seed", &val)) != 0) {
        if (m < 0 ||
            parse_u64(cmd, "--search-seed", val, 0, UINT64_MAX, &a->search_seed, "an unsigned integer") != 0)
            return CLI_USAGE;
        a->have_search_seed = 1;
    } else if ((o & CLI_OPT_GENERATED) && (m = cli_opt_value(cmd, argc, argv, i, NULL, "--m", &val)) != 0) {
        if (m < 0 || parse_u64(cmd, "--m", val, 1, UINT32_MAX, &a->m, "rows, 1 or more") != 0)
            return CLI_USAGE;
        a->have_m = 1;
    } else if ((o & CLI_OPT_GENERATED) && (m = cli_opt_value(cmd, argc, argv, i, NULL, "--n", &val)) != 0) {
        if (m < 0 || parse_u64(cmd, "--n", val, 1, UINT32_MAX, &a->n, "columns, odd") != 0) return CLI_USAGE;
        if (a->n % 2 == 0) {
            cli_error(cmd, "bad --n '%s': n must be odd (no (A V)_i may be 0)", val);
            return CLI_USAGE;
        }
        a->have_n = 1;
    } else if ((o & CLI_OPT_RANDOM) && (m = cli_opt_value(cmd, argc, argv, i, NULL, "--random", &val)) != 0) {
        if (m < 0 || cli_parse_size(val, &a->random_n) != 0 || a->random_n < 4 || a->random_n > (1u << 26)) {
            cli_error(cmd, "bad --random '%s' (cities, 4 .. 2^26)", val);
            return CLI_USAGE;
        }
    } else if ((o & CLI_OPT_FILE) && (m = cli_opt_value(cmd, argc, argv, i, NULL, "--init", &val)) != 0) {
        if (m < 0) return CLI_USAGE;
        a->init = val;
    } else if ((o & CLI_OPT_FILE) &&
               (m = cli_opt_value(cmd, argc, argv, i, NULL, "--best-known", &val)) != 0) {
        char *end;
        if (m < 0) return CLI_USAGE;
        long long v = strtoll(val, &end, 10);
        if (end == val || *end) {
            cli_error(cmd, "bad --best-known '%s' (an integer cost)", val);
            return CLI_USAGE;
        }
        a->best_known = v;
        a->have_best_known = 1;
    } else if ((o & CLI_OPT_QAP_DELTA) &&
               (m = cli_opt_value(cmd, argc, argv, i, NULL, "--qap-delta", &val)) != 0) {
        if (m < 0) return CLI_USAGE;
        if (strcmp(val, "table") == 0) a->so.qap_delta = GPK_QAP_DELTA_TABLE;
        else if (strcmp(val, "formula") == 0) a->so.qap_delta = GPK_QAP_DELTA_FORMULA;
        else {
            cli_error(cmd, "unknown --qap-delta '%s' (table, formula)", val);
            return CLI_USAGE;
        }
        a->have_qap_delta = 1;
    } else if ((o & CLI_OPT_SVG) && (m = cli_opt_value(cmd, argc, argv, i, NULL, "--svg", &val)) != 0) {
        if (m < 0) return CLI_USAGE;
        a->svg = val;
    } else if ((o & CLI_OPT_FILE) && arg[0] != '-' && !a->file) {
        a->file = arg;
    } else if ((o & CLI_OPT_FILE) && arg[0] != '-') {
        cli_error(cmd, "one instance file only: '%s' and '%s'", a->file, arg);
        return CLI_USAGE;
    } else {
        return ARG_OTHER;
    }
    return ARG_TAKEN;
}

/* The instance arguments, --paper, and the defaults resolved as the
 * library resolves them. -1 to go on, else the exit status. */
static int resolve_args(const char *cmd, const cli_problem *pr, search_args *a)
{
    if (a->random_n && a->file) {
        cli_error(cmd, "--random generates the instance: no instance file ('%s')", a->file);
        return CLI_USAGE;
    }
    if (a->random_n && (a->init || a->eval_file)) {
        cli_error(cmd, "--init and --eval need an instance file, not --random");
        return CLI_USAGE;
    }
    if ((pr->opts & CLI_OPT_FILE) && !a->file && !a->random_n) {
        cli_error(cmd, "no instance file (gpk %s FILE; see gpk %s --help)", cmd, cmd);
        return CLI_USAGE;
    }
    if ((pr->opts & CLI_OPT_GENERATED) && (!a->have_m || !a->have_n)) {
        cli_error(cmd, "the instance needs --m and --n (e.g. --m 73 --n 73)");
        return CLI_USAGE;
    }
    /* --paper: the paper's reproduction (Luong, Melab & Talbi 2009): its,
     * 10 x 1000 tabu iterations, the full neighbourhood (TSP: 2-opt). */
    if (a->paper) {
        if (a->algo_set || a->nb_set) {
            cli_error(cmd, "--paper sets --algo its and the paper's neighbourhood: drop --%s",
                      a->algo_set ? "algo" : "nb");
            return CLI_USAGE;
        }
        a->so.algo = GPK_SEARCH_ITS;
        a->so.nb = gpk_search_paper_nb(pr->kind);
        if (!a->have_global) a->global = 10;
        if (!a->have_iters) a->iters = 1000;
    }
    /* The defaults resolved here as the library resolves them, so that what
     * is checked and reported is what runs (auto: TSP multistart over
     * or2opt for 10 s, QAP and PPP its). */
    a->so.iters = a->iters;
    a->so.global_iters = (uint32_t)a->global;
    a->so.time_limit = a->time_limit;
    gpk_search_opts_resolve(pr->kind, &a->so);
    a->default_limit = a->time_limit == 0 && a->so.time_limit > 0;
    a->time_limit = a->so.time_limit;
    return -1;
}

/* Options the chosen backend and algorithm would not read are refused:
 * an ignored --tenure would make a parameter sweep measure nothing. -1 to
 * go on, else the exit status. */
static int check_args(const char *cmd, search_args *a)
{
    /* Refused rather than ignored: a run asked for K GPUs must not quietly
     * measure the CPU. */
    if (a->have_gpus && a->backend == GPK_BACKEND_CPU) {
        cli_error(cmd, "--gpus is for the CUDA backend, not --backend cpu (--threads sets the CPU threads)");
        return CLI_USAGE;
    }
    if (a->have_gpus) a->backend = GPK_BACKEND_CUDA;
#ifndef GPK_HAVE_CUDA_SEARCH
    if (a->backend == GPK_BACKEND_CUDA) {
        cli_error(cmd,
                  "%s: the GPU search is not in this build (it needs CUDA and -DGPK_WITH_CUDA_SEARCH=ON); "
                  "--backend cpu",
                  a->have_gpus ? "--gpus" : "--backend cuda");
        return CLI_USAGE;
    }
#endif
    const gpk_search_algo al = a->so.algo;
    if (a->backend == GPK_BACKEND_CUDA && al == GPK_SEARCH_HC_FIRST && a->so.nb != GPK_NB_OR_OPT) {
        cli_error(cmd, "--algo hc-first scans one neighbour at a time: it runs on the CPU (--backend cpu)");
        return CLI_USAGE;
    }
    if (a->have_eval && a->backend == GPK_BACKEND_CPU) {
        cli_error(cmd, "--eval is for the CUDA backend, not --backend cpu");
        return CLI_USAGE;
    }
    const int hc = al == GPK_SEARCH_HC_BEST || al == GPK_SEARCH_HC_FIRST;
    if (a->so.nb == GPK_NB_OR_OPT) {
        if (a->have_tenure) {
            cli_error(cmd, "--tenure: --nb or2opt runs an iterated local search, no tabu list");
            return CLI_USAGE;
        }
    }
    const int iterated = al == GPK_SEARCH_ITS || al == GPK_SEARCH_MULTISTART;
    if (a->have_tenure && hc) {
        cli_error(cmd, "--tenure is for tabu, its and multistart, not --algo %s", gpk_search_algo_name(al));
        return CLI_USAGE;
    }
    if (a->have_global && !iterated) {
        cli_error(cmd, "--global is for its and multistart, not --algo %s", gpk_search_algo_name(al));
        return CLI_USAGE;
    }
    if (a->have_starts && al != GPK_SEARCH_MULTISTART && !a->have_gpus && !a->mpi) {
        cli_error(cmd, "--starts is for --algo multistart, --gpus or --mpi, not --algo %s alone",
                  gpk_search_algo_name(al));
        return CLI_USAGE;
    }
    if (a->mpi && a->eval_file) {
        cli_error(cmd, "--eval %s evaluates a solution: no search to spread over ranks (drop --mpi)",
                  a->eval_file);
        return CLI_USAGE;
    }
    /* The outputs are checked now, not after a search of minutes. */
    const char *outs[2] = {a->out, a->svg}, *out_roles[2] = {"--out", "--svg"};
    const char *ins[1] = {a->file}, *in_roles[1] = {"(instance)"};
    char err[600];
    if (this_rank() == 0 &&
        io_check_outputs(outs, out_roles, NULL, 2, ins, in_roles, 1, err, sizeof err) != 0) {
        cli_error(cmd, "%s", err);
        return CLI_USAGE;
    }
    return -1;
}

/* Returns -1 to go on, else the exit status. */
static int parse_args(const char *cmd, const cli_problem *pr, int argc, char **argv, search_args *a)
{
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            if (this_rank() == 0) pr->help(stdout);
            return CLI_OK;
        }
        int rc = parse_search_option(cmd, pr, argc, argv, &i, a);
        if (rc == ARG_OTHER) rc = parse_problem_option(cmd, pr, argc, argv, &i, a);
        if (rc == ARG_OTHER) {
            cli_error(cmd, "unknown option or argument '%s' (see gpk %s --help)", argv[i], cmd);
            return CLI_USAGE;
        }
        if (rc != ARG_TAKEN) return rc;
    }
    const int rc = resolve_args(cmd, pr, a);
    return rc >= 0 ? rc : check_args(cmd, a);
}

/* ---- the instance -------------------------------------------------------------------------- */

/* A reader's failure: said, and the ranks told. */
static int load_failed(search_state *st)
{
    cli_error(st->cmd, "%s", gpk_last_error(NULL));
    ranks_agree(st->cmd, 0, "reading the instance");
    return CLI_FAIL;
}

static int qap_load(search_state *st)
{
    if (gpk_qap_load(st->a.file, &st->qap) != GPK_OK) return load_failed(st);
    st->pb.qap = &st->qap;
    st->n = st->qap.n;
    snprintf(st->instance, sizeof st->instance, "%s", st->qap.name);
    st->bk = cli_find_best_known(st->a.file, "best-known.csv", ',', st->qap.name, "BKS");
    return 0;
}

static int tsp_load(search_state *st)
{
    const search_args *a = &st->a;
    gpk_tsp *tsp = &st->tsp;
    const gpk_status s =
        a->random_n ? random_tsp((uint32_t)a->random_n, a->seed, tsp) : gpk_tsp_load(a->file, tsp);
    if (s != GPK_OK) return load_failed(st);
    if (a->svg && (!tsp->x || !tsp->y)) {
        cli_error(st->cmd, "--svg: %s has EXPLICIT distances and no coordinates to draw", a->file);
        ranks_agree(st->cmd, 0, "reading the instance");
        return CLI_USAGE;
    }
    st->pb.tsp = tsp;
    st->n = tsp->n;
    snprintf(st->instance, sizeof st->instance, "%s", tsp->name);
    if (a->random_n) {
        /* Beardwood-Halton-Hammersley: the optimal tour of n uniform
         * cities in area A tends to 0.7124 sqrt(n A) (kind EST: the gap
         * is to an estimate, and can go negative). */
        st->bk.have = 1;
        st->bk.value = (int64_t)llround(0.7124 * sqrt((double)st->n * RANDOM_SIDE * RANDOM_SIDE));
        snprintf(st->bk.kind, sizeof st->bk.kind, "EST");
        return 0;
    }
    /* bestSolutions.txt holds optimal tour lengths. */
    st->bk = cli_find_best_known(a->file, "bestSolutions.txt", ':', tsp->name, "OPT");
    return 0;
}

static int ppp_load(search_state *st)
{
    const search_args *a = &st->a;
    if (gpk_ppp_generate((uint32_t)a->m, (uint32_t)a->n, a->seed, &st->ppp) != GPK_OK) return load_failed(st);
    st->pb.ppp = &st->ppp;
    st->n = st->ppp.n;
    snprintf(st->instance, sizeof st->instance, "%llu-%llu-%llu", (unsigned long long)a->m,
             (unsigned long long)a->n, (unsigned long long)a->seed);
    /* Fitness 0 solves every instance: the secret V reaches it. */
    st->bk.have = 1;
    st->bk.value = 0;
    snprintf(st->bk.kind, sizeof st->bk.kind, "OPT");
    return 0;
}

/* ---- the solution written (--out) ---------------------------------------------------------- */

static int qap_write(search_state *st) { return write_sln(st->cmd, st->a.out, &st->res); }

static int tsp_write(search_state *st)
{
    char how[96];
    snprintf(how, sizeof how, "gpk tsp %s/%s seed %llu", gpk_search_algo_name(st->a.so.algo),
             gpk_neighbourhood_name(st->a.so.nb), (unsigned long long)st->a.so.seed);
    return write_tour(st->cmd, st->a.out, &st->tsp, &st->res, how);
}

static int ppp_write(search_state *st) { return write_bits(st->cmd, st->a.out, &st->res); }

/* ---- the table ------------------------------------------------------------------------------ */

static const cli_problem cli_problems[] = {
    {GPK_PROBLEM_QAP, cmd_qap_help, CLI_OPT_FILE | CLI_OPT_QAP_DELTA, "swap", 0, "cost", "facilities", ".sln",
     "BKS", qap_read_solution, qap_load, qap_write},
    {GPK_PROBLEM_TSP, cmd_tsp_help, CLI_OPT_FILE | CLI_OPT_RANDOM | CLI_OPT_SVG, "2opt, swap, or2opt", 0,
     "length", "cities", ".opt.tour", "OPT", tsp_read_solution, tsp_load, tsp_write},
    {GPK_PROBLEM_PPP, cmd_ppp_help, CLI_OPT_GENERATED, "flip1, flip2", 1, NULL, NULL, NULL, NULL, NULL,
     ppp_load, ppp_write},
};

static const cli_problem *cli_problem_of(gpk_problem_kind kind)
{
    for (size_t i = 0; i < sizeof cli_problems / sizeof *cli_problems; i++)
        if (cli_problems[i].kind == kind) return &cli_problems[i];
    return NULL;
}

/* ---- the command ------------------------------------------------------------------------- */

static uint32_t *load_solution_of(const search_state *st, const char *path, int quiet)
{
    return load_solution(st->cmd, &st->pb, st->prob->read_solution, st->prob->noun, path, st->n, quiet);
}

/* The reference: --best-known, else the table, else the optimal tour /
 * the solution file beside the instance (evaluated here, not trusted). */
static void find_reference(search_state *st)
{
    cli_best_known *bk = &st->bk;
    if (st->a.have_best_known) {
        memset(bk, 0, sizeof *bk);
        bk->have = 1;
        bk->value = st->a.best_known;
        snprintf(bk->kind, sizeof bk->kind, "given");
    } else if (!bk->have && st->prob->beside_ext) {
        char *f = beside(st->a.file, st->instance, st->prob->beside_ext);
        char why[sizeof bk->note] = "";
        FILE *probe = f ? cli_open_beside(f, why, sizeof why) : NULL;
        if (!probe && *why && !*bk->note) snprintf(bk->note, sizeof bk->note, "%s", why);
        if (probe) {
            fclose(probe);
            uint32_t *sol = load_solution_of(st, f, 1);
            if (sol && reference_value(st->pb.tsp, sol, solution_cost(&st->pb, sol), &bk->value)) {
                bk->have = 1;
                snprintf(bk->kind, sizeof bk->kind, "%s", st->prob->beside_kind);
                free(sol);
            }
        }
        free(f);
    }
    if (*bk->note && !st->a.quiet && this_rank() == 0)
        fprintf(stderr, "gpk %s: warning: %s\n", st->cmd, bk->note);
}

/* --eval FILE: the solution's value and gap, no search. */
static int eval_solution_file(search_state *st)
{
    const search_args *a = &st->a;
    const cli_best_known *bk = &st->bk;
    const gpk_tsp *tsp = &st->tsp;
    uint32_t *sol = load_solution_of(st, a->eval_file, 0);
    if (!sol) return CLI_FAIL;
    const int64_t cost = solution_cost(&st->pb, sol);
    double g = 0.0;
    int64_t ref_cost;
    const int all_fixed = reference_value(st->pb.tsp, sol, cost, &ref_cost);
    const int hg = all_fixed && gap_of(bk, ref_cost, &g);
    if (a->json) {
        printf("{\"command\": \"%s\", \"instance\": ", st->cmd);
        cli_json_str(stdout, st->instance);
        printf(", \"n\": %u, \"solution\": ", st->n);
        cli_json_str(stdout, a->eval_file);
        printf(", \"cost\": %lld", (long long)cost);
        if (bk->have) printf(", \"best_known\": %lld", (long long)bk->value);
        else printf(", \"best_known\": null");
        if (hg) printf(", \"gap_percent\": %.6f}\n", g);
        else printf(", \"gap_percent\": null}\n");
    } else {
        printf("%s %s: %s %lld", st->instance, a->eval_file, st->prob->value_word, (long long)cost);
        if (hg && tsp->nfixed)
            printf(" (path without the %u fixed edge%s %lld: %s %lld, gap %.3f%%)", tsp->nfixed,
                   tsp->nfixed > 1 ? "s" : "", (long long)ref_cost, bk->kind, (long long)bk->value, g);
        else if (hg) printf(" (%s %lld, gap %.3f%%)", bk->kind, (long long)bk->value, g);
        else if (!all_fixed) printf(" (the tour lacks FIXED_EDGES_SECTION edges: no gap)");
        printf("\n");
    }
    free(sol);
    return CLI_OK;
}

/* FIXED_EDGES_SECTION: the search runs on the copy that enforces them. */
static void enforce_fixed_edges(search_state *st)
{
    if (!st->tsp.nfixed) return;
    st->fixed_enforced = fixed_search_copy(&st->tsp, &st->tsp_search, &st->fixed_shift);
    if (st->fixed_enforced) st->pb.tsp = &st->tsp_search;
    else if (!st->a.quiet && this_rank() == 0)
        fprintf(stderr,
                "gpk %s: warning: %s: the %u FIXED_EDGES_SECTION edges are not enforced (no distance "
                "matrix above %u cities); no gap unless the tour holds them\n",
                st->cmd, st->instance, st->tsp.nfixed, GPK_TSP_MATRIX_MAX);
}

/* The backend: cuda when asked (--backend cuda, --gpus), or for auto when
 * this build has the GPU search and a device is usable; else the CPU
 * (GPK_BACKEND=cuda in the environment does not turn a search with no
 * usable GPU into an error). */
static void choose_backend(search_state *st)
{
    const search_args *a = &st->a;
    st->use_gpu = a->backend == GPK_BACKEND_CUDA;
#ifdef GPK_HAVE_CUDA_SEARCH
    if (a->backend == GPK_BACKEND_AUTO && a->so.algo != GPK_SEARCH_HC_FIRST && a->so.nb != GPK_NB_OR_OPT &&
        gpk_backend_available(GPK_BACKEND_CUDA))
        st->use_gpu = 1;
    /* or2opt: the GPU evaluates the descent's moves of one run from
     * GPK_TSP_OR_OPT_GPU_MIN cities; multistart runs on the CPU threads. */
    if (a->backend == GPK_BACKEND_AUTO && a->so.nb == GPK_NB_OR_OPT && a->so.algo != GPK_SEARCH_MULTISTART &&
        st->pb.tsp && st->pb.tsp->n >= GPK_TSP_OR_OPT_GPU_MIN && gpk_backend_available(GPK_BACKEND_CUDA))
        st->use_gpu = 1;
#endif
    st->multi = !a->mpi && st->use_gpu &&
        (a->have_gpus || (a->so.algo == GPK_SEARCH_MULTISTART && a->so.nb != GPK_NB_OR_OPT));
}

#ifdef GPK_HAVE_MPI
/* --mpi: this rank's contexts: K GPUs from device local-rank x K, or the
 * CPU: T one-thread contexts for multistart (its starts run side by side,
 * as on one host), else one of T threads. */
static int open_mpi_contexts(search_state *st)
{
    const search_args *a = &st->a;
    const char *cmd = st->cmd;
    int per_rank, threads = a->threads;
    if (st->use_gpu) {
        per_rank = a->have_gpus ? (int)a->gpus : 1;
    } else {
        if (!threads) {
            const char *env = getenv("GPK_THREADS");
            const long cores = sysconf(_SC_NPROCESSORS_ONLN);
            threads = env && *env && atoi(env) > 0 ? atoi(env)
                : cores / mpi_run->local_size > 1  ? (int)(cores / mpi_run->local_size)
                                                   : 1;
        }
        per_rank = a->so.algo == GPK_SEARCH_MULTISTART ? threads : 1;
    }
    st->gctx = calloc((size_t)per_rank, sizeof *st->gctx);
    int made = st->gctx != NULL;
    if (!st->gctx) cli_error(cmd, "out of host memory");
    for (int g = 0; made && g < per_rank; g++) {
        gpk_ctx_opts co = GPK_CTX_OPTS_INIT;
        co.backend = st->use_gpu ? GPK_BACKEND_CUDA : GPK_BACKEND_CPU;
        /* round robin over the node's GPUs where its ranks need more */
        const int gpus = st->use_gpu ? gpk_device_count(GPK_BACKEND_CUDA) : 0;
        co.device = st->use_gpu ? (mpi_run->local_rank * per_rank + g) % (gpus > 0 ? gpus : 1 << 30) : -1;
        co.threads = st->use_gpu ? a->threads : per_rank > 1 ? 1 : threads;
        gpk_status cs = gpk_ctx_create_ex(&st->gctx[g], &co);
        if (cs != GPK_OK) {
            st->gctx[g] = NULL;
            const char *why = *gpk_last_error(NULL) ? gpk_last_error(NULL) : gpk_status_string(cs);
            if (st->use_gpu)
                cli_error(cmd, "rank %d (local rank %d of %d, %d GPU%s each): cannot use CUDA device %d: %s",
                          mpi_run->rank, mpi_run->local_rank, mpi_run->local_size, per_rank,
                          per_rank > 1 ? "s" : "", co.device, why);
            else cli_error(cmd, "rank %d: cannot create a CPU context: %s", mpi_run->rank, why);
            made = 0;
        }
        st->ngpu = g + 1;
    }
    if (!ranks_agree(cmd, made, "creating its contexts")) return CLI_FAIL;
    st->ngpu = per_rank;
    st->ctx = st->gctx[0];
    st->mpi_contexts = cli_mpi_sum(per_rank);
    return CLI_OK;
}
#endif

/* --gpus / a multistart on CUDA: one context per GPU. */
static int open_gpu_contexts(search_state *st)
{
    const search_args *a = &st->a;
    st->ngpu = a->have_gpus ? (int)a->gpus : 1;
    st->gctx = calloc((size_t)st->ngpu, sizeof *st->gctx);
    if (!st->gctx) {
        cli_error(st->cmd, "out of host memory");
        return CLI_FAIL;
    }
    for (int g = 0; g < st->ngpu; g++) {
        gpk_ctx_opts co = GPK_CTX_OPTS_INIT;
        co.backend = GPK_BACKEND_CUDA;
        co.device = g;
        co.threads = a->threads;
        gpk_status cs = gpk_ctx_create_ex(&st->gctx[g], &co);
        if (cs != GPK_OK) {
            st->gctx[g] = NULL;
            if (a->have_gpus)
                cli_error(st->cmd, "--gpus %d: cannot use CUDA device %d: %s", st->ngpu, g,
                          *gpk_last_error(NULL) ? gpk_last_error(NULL) : gpk_status_string(cs));
            else
                cli_error(st->cmd, "cannot use the cuda backend: %s",
                          *gpk_last_error(NULL) ? gpk_last_error(NULL) : gpk_status_string(cs));
            return CLI_FAIL;
        }
    }
    st->ctx = st->gctx[0];
    return CLI_OK;
}

/* The contexts the search runs on, and the tag its reports carry. */
static int open_contexts(search_state *st)
{
    const search_args *a = &st->a;
    int rc = CLI_OK;
#ifdef GPK_HAVE_MPI
    if (a->mpi) rc = open_mpi_contexts(st);
    else
#endif
        if (st->multi)
        rc = open_gpu_contexts(st);
    else if (st->use_gpu) {
        gpk_ctx_opts co = GPK_CTX_OPTS_INIT;
        co.backend = GPK_BACKEND_CUDA;
        co.threads = a->threads;
        gpk_status cs = gpk_ctx_create_ex(&st->ctx, &co);
        if (cs != GPK_OK) {
            st->ctx = NULL;
            if (a->backend == GPK_BACKEND_CUDA) {
                cli_error(st->cmd, "cannot use the cuda backend: %s",
                          *gpk_last_error(NULL) ? gpk_last_error(NULL) : gpk_status_string(cs));
                return CLI_FAIL;
            }
            st->use_gpu = 0; /* auto: the CPU */
        }
    }
    if (rc != CLI_OK) return rc;
    if (!st->ctx && cli_ctx_create(st->cmd, &st->ctx, GPK_BACKEND_CPU, -1, a->threads) != GPK_OK)
        return CLI_FAIL;
    gpk_ctx_info_get(st->ctx, &st->info);
    const char *formula = a->so.qap_delta == GPK_QAP_DELTA_FORMULA ? " formula" : "";
    if (a->mpi && st->use_gpu)
        snprintf(st->tag, sizeof st->tag, "cuda %s, %d ranks, %d GPU%s in all",
                 gpk_search_eval_name(a->so.eval), rank_count(), st->mpi_contexts,
                 st->mpi_contexts > 1 ? "s" : "");
    else if (a->mpi)
        snprintf(st->tag, sizeof st->tag, "cpu%s, %d ranks x %u threads", formula, rank_count(),
                 st->ngpu > 1 ? (unsigned)st->ngpu : st->info.threads);
    else if (st->use_gpu)
        snprintf(st->tag, sizeof st->tag, "cuda %s, %d GPU%s", gpk_search_eval_name(a->so.eval),
                 st->multi ? st->ngpu : 1, st->multi && st->ngpu > 1 ? "s" : "");
    else snprintf(st->tag, sizeof st->tag, "cpu%s, %u threads", formula, st->info.threads);
    return CLI_OK;
}

/* The options the library gets, and what the progress reports count to. */
static void set_search_opts(search_state *st)
{
    search_args *a = &st->a;
    progress_state *ps = &st->ps;
    a->so.iters = a->iters;
    a->so.global_iters = (uint32_t)a->global;
    a->so.tenure = (uint32_t)a->tenure;
    a->so.starts = (uint32_t)a->starts;
    a->so.seed = a->have_search_seed ? a->search_seed : a->seed;
    a->so.time_limit = a->time_limit;
    a->so.cancel = &stop_signal;
    if (a->quiet || this_rank() != 0) return;
    a->so.progress = on_progress;
    a->so.user = ps;
    a->so.progress_every = 1; /* on_progress keeps time */
    /* What the reports count to, for the duration warning: tabu
     * iterations (or ILS kicks) of the runs the calling thread reports
     * on. A multistart on the CPU reports the totals of all its runs;
     * over GPUs and ranks, the runs of the first context. */
    const double it = a->iters ? (double)a->iters : a->so.algo == GPK_SEARCH_TABU ? 10000.0 : 1000.0;
    const double gl = a->global ? (double)a->global
                                : (double)gpk_search_default_global_iters(st->prob->kind, a->so.algo, st->n);
    if (a->so.algo == GPK_SEARCH_TABU) ps->budget = it;
    else if (a->so.algo == GPK_SEARCH_ITS || a->so.algo == GPK_SEARCH_MULTISTART) ps->budget = it * gl;
    if (a->mpi) {
        /* rank 0's first context runs run 0, run C, run 2C ... */
        const double starts = a->starts ? (double)a->starts : st->mpi_contexts;
        ps->runs = ceil(starts / (st->mpi_contexts < 1 ? 1 : st->mpi_contexts));
    } else if (st->multi) {
        const double starts = a->starts ? (double)a->starts : st->ngpu;
        ps->runs = ceil(starts / (st->ngpu < 1 ? 1 : st->ngpu));
    } else if (a->so.algo == GPK_SEARCH_MULTISTART) {
        ps->budget *= a->starts ? (double)a->starts : (double)st->info.threads;
    }
    /* a time limit and no count: the search runs until the limit */
    if (a->time_limit > 0 && !a->iters && (a->so.algo == GPK_SEARCH_TABU || !a->global)) ps->budget = 0;
}

/* The search itself, on one context, several, or over the ranks. */
static int run_search(search_state *st)
{
    gpk_status s;
    stop_signal = 0;
    catch_stop_signals(1);
#ifdef GPK_HAVE_MPI
    if (st->a.mpi)
        s = gpk_mpi_search_multistart(MPI_COMM_WORLD, st->gctx, st->ngpu, &st->pb, &st->a.so, &st->res,
                                      &st->mpi_runs);
    else
#endif
        s = st->multi ? gpk_search_run_multi(st->gctx, st->ngpu, &st->pb, &st->a.so, &st->res)
                      : gpk_search_run(st->ctx, &st->pb, &st->a.so, &st->res);
    catch_stop_signals(0);
    progress_end(&st->ps);
#ifdef GPK_HAVE_MPI
    if (st->a.mpi && s == GPK_EIO) { /* a rank went silent: no agreeing any more */
        char lost[700];
        snprintf(lost, sizeof lost, "%s: %s", st->instance, gpk_last_error(st->ctx));
        cli_mpi_lost(st->cmd, lost);
    }
#endif
    if (s != GPK_OK) {
        /* --mpi: every rank has the same message, naming the rank at fault */
        if (this_rank() == 0)
            cli_error(st->cmd, "%s: %s", st->instance,
                      *gpk_last_error(st->ctx) ? gpk_last_error(st->ctx) : gpk_status_string(s));
        return CLI_FAIL;
    }
    return CLI_OK;
}

/* What report_text and report_json print besides the result. */
typedef struct search_outcome {
    const char *bad; /* the check's failure, or NULL */
    uint32_t fixed_have;
    int64_t ref_best; /* the value the gap compares (reference_value) */
    int have_gap;
    double gap, rate;
} search_outcome;

static void report_text(const search_state *st, const search_outcome *o)
{
    const search_args *a = &st->a;
    const char *cmd = st->cmd;
    const gpk_search_result *res = &st->res;
    const cli_best_known *bk = &st->bk;
    char gaps[96] = "";
    const int64_t ref_best = o->ref_best;
    if (st->prob->solved_at_zero) snprintf(gaps, sizeof gaps, res->best == 0 ? " (solved)" : " (not solved)");
    else if (o->have_gap && st->tsp.nfixed)
        snprintf(gaps, sizeof gaps, " (path without the %u fixed edge%s %lld: %s %lld, gap %.3f%%)",
                 st->tsp.nfixed, st->tsp.nfixed > 1 ? "s" : "", (long long)ref_best, bk->kind,
                 (long long)bk->value, o->gap);
    else if (o->have_gap)
        snprintf(gaps, sizeof gaps, " (%s %lld, gap %.3f%%)", bk->kind, (long long)bk->value, o->gap);
    fprintf(stderr,
            "gpk %s: %s n=%u, %s/%s, seed %llu: best %lld%s; %llu iterations, %llu moves evaluated in "
            "%.1f ms (%.3g moves/s), %s (%s); check %s\n",
            cmd, st->instance, st->n, gpk_search_algo_name(a->so.algo), gpk_neighbourhood_name(a->so.nb),
            (unsigned long long)a->so.seed, (long long)res->best, gaps, (unsigned long long)res->iterations,
            (unsigned long long)res->evaluated, res->ms, o->rate, st->tag, st->info.device_name,
            o->bad ? "FAILED" : "ok");
    if (st->multi)
        fprintf(stderr, "gpk %s: %u runs on %d GPU%s, the best from run %u\n", cmd, res->runs, st->ngpu,
                st->ngpu > 1 ? "s" : "", res->best_run);
#ifdef GPK_HAVE_MPI
    if (a->mpi)
        fprintf(stderr, "gpk %s: %u runs on %d rank%s, %d %s, the best from run %u on rank %d\n", cmd,
                res->runs, rank_count(), rank_count() > 1 ? "s" : "", st->mpi_contexts,
                st->use_gpu ? (st->mpi_contexts > 1 ? "GPUs" : "GPU") : "at a time", res->best_run,
                st->mpi_runs ? st->mpi_runs[res->best_run].rank : 0);
#endif
    if (res->stopped == GPK_SEARCH_TIME_LIMIT)
        fprintf(stderr, "gpk %s: stopped at the time limit (%g s%s)\n", cmd, a->time_limit,
                a->default_limit ? ", the default: --time-limit sets another" : "");
    else if (res->stopped == GPK_SEARCH_CANCELLED)
        fprintf(stderr, "gpk %s: stopped by %s\n", cmd, stop_signal == SIGTERM ? "SIGTERM" : "SIGINT");
}

static void report_json(const search_state *st, const search_outcome *o)
{
    const search_args *a = &st->a;
    const gpk_search_result *res = &st->res;
    const cli_best_known *bk = &st->bk;
    const int use_gpu = st->use_gpu;
    printf("{\"command\": \"%s\", \"gpk_version\": ", st->cmd);
    cli_json_str(stdout, gpk_version());
    printf(", \"backend\": ");
    cli_json_ctx_info(stdout, &st->info);
    printf(", \"instance\": ");
    cli_json_str(stdout, st->instance);
    if (a->file) {
        printf(", \"file\": ");
        cli_json_str(stdout, a->file);
    }
    if (st->prob->opts & CLI_OPT_GENERATED)
        printf(", \"m\": %llu, \"instance_seed\": %llu", (unsigned long long)a->m,
               (unsigned long long)a->seed);
    printf(", \"n\": %u, \"algo\": \"%s\", \"nb\": \"%s\", \"seed\": %llu, \"iters\": %llu, \"global\": %u, "
           "\"tenure\": %u, \"starts\": %u, \"best\": %lld",
           st->n, gpk_search_algo_name(a->so.algo), gpk_neighbourhood_name(a->so.nb),
           (unsigned long long)a->so.seed, (unsigned long long)a->so.iters, a->so.global_iters, a->so.tenure,
           a->so.starts, (long long)res->best);
    if (bk->have) {
        printf(", \"best_known\": %lld, \"best_known_kind\": ", (long long)bk->value);
        cli_json_str(stdout, bk->kind);
    } else {
        printf(", \"best_known\": null, \"best_known_kind\": null");
    }
    if (o->have_gap) printf(", \"gap_percent\": %.6f", o->gap);
    else printf(", \"gap_percent\": null");
    if (st->prob->solved_at_zero) printf(", \"solved\": %s", res->best == 0 ? "true" : "false");
    if (st->tsp.nfixed)
        printf(", \"fixed_edges\": %u, \"fixed_edges_in_tour\": %u, \"fixed_edges_length\": %lld, "
               "\"fixed_edges_enforced\": %s",
               st->tsp.nfixed, o->fixed_have, (long long)fixed_length(&st->tsp),
               st->fixed_enforced ? "true" : "false");
    printf(", \"iterations\": %llu, \"evaluated\": %llu, \"ms\": %.6f, \"moves_per_s\": %.6g",
           (unsigned long long)res->iterations, (unsigned long long)res->evaluated, res->ms, o->rate);
    printf(", \"search_backend\": \"%s\", \"eval\": %s%s%s, \"gpus\": %d, \"qap_delta\": %s, "
           "\"gpu_evaluated\": %llu, \"runs\": %u, \"best_run\": %u",
           use_gpu ? "cuda" : "cpu", use_gpu ? "\"" : "", use_gpu ? gpk_search_eval_name(a->so.eval) : "null",
           use_gpu ? "\"" : "",
           use_gpu ? (a->mpi          ? st->mpi_contexts
                          : st->multi ? st->ngpu
                                      : 1)
                   : 0,
           !(st->prob->opts & CLI_OPT_QAP_DELTA)          ? "null"
               : use_gpu                                  ? "\"formula\""
               : a->so.qap_delta == GPK_QAP_DELTA_FORMULA ? "\"formula\""
                                                          : "\"table\"",
           (unsigned long long)res->gpu_evaluated, res->runs, res->best_run);
    if (a->so.algo == GPK_SEARCH_HC_BEST || a->so.algo == GPK_SEARCH_HC_FIRST)
        printf(", \"local_optimum\": %s", res->local_optimum ? "true" : "false");
#ifdef GPK_HAVE_MPI
    if (a->mpi)
        printf(", \"mpi_ranks\": %d, \"contexts\": %d, \"best_rank\": %d", rank_count(), st->mpi_contexts,
               st->mpi_runs ? st->mpi_runs[res->best_run].rank : 0);
#endif
    printf(", \"time_limit\": ");
    if (a->time_limit > 0) printf("%g", a->time_limit);
    else printf("null");
    printf(", \"stopped\": %s",
           res->stopped == GPK_SEARCH_TIME_LIMIT      ? "\"time-limit\""
               : res->stopped == GPK_SEARCH_CANCELLED ? "\"signal\""
                                                      : "null");
    printf(", \"check\": %s}\n", o->bad ? "\"failed\"" : "\"ok\"");
}

/* Rank 0 after a search: the check, the reports and the files. */
static int finish_search(search_state *st)
{
    const search_args *a = &st->a;
    const char *cmd = st->cmd;
    gpk_search_result *res = &st->res;
    int rc = CLI_OK;
    /* A CUDA failure mid-run sends the search back to the CPU scan (same
     * result, another speed): said, and an error when cuda was asked for.
     * or2opt: the GPU evaluates the descents' batches of one run from
     * GPK_TSP_OR_OPT_GPU_MIN cities, the CPU the rest by design: short when
     * it evaluated nothing there. */
    const int or_gpu = a->so.nb == GPK_NB_OR_OPT && a->so.algo != GPK_SEARCH_MULTISTART && !st->multi &&
        st->pb.tsp && st->pb.tsp->n >= GPK_TSP_OR_OPT_GPU_MIN;
    const int gpu_short = st->use_gpu &&
        (a->so.nb == GPK_NB_OR_OPT ? or_gpu && res->gpu_evaluated == 0 : res->gpu_evaluated < res->evaluated);
    if (gpu_short) {
        cli_error(cmd, "%s: the GPU evaluated %llu of the %llu neighbours, the CPU the rest: %s",
                  st->instance, (unsigned long long)res->gpu_evaluated, (unsigned long long)res->evaluated,
                  *gpk_last_error(st->ctx) ? gpk_last_error(st->ctx) : "(no message)");
        if (a->backend == GPK_BACKEND_CUDA) rc = CLI_FAIL;
    }
    search_outcome o = {NULL, 0, 0, 0, 0.0, 0.0};
    char why[160];
    o.bad = cli_check_search_result(&st->pb, res, st->n, why, sizeof why);
    /* FIXED_EDGES_SECTION: the true length, and the gap of the path the
     * reference counts (see reference_value) */
    if (st->tsp.nfixed) {
        if (!o.bad) res->best = gpk_tsp_tour_length(&st->tsp, res->solution);
        o.fixed_have = fixed_in_tour(&st->tsp, res->solution);
        if (o.fixed_have != st->tsp.nfixed && !a->quiet)
            fprintf(stderr, "gpk %s: %s: the tour holds %u of the %u FIXED_EDGES_SECTION edges: no gap\n",
                    cmd, st->instance, o.fixed_have, st->tsp.nfixed);
    }
    o.have_gap = reference_value(&st->tsp, res->solution, res->best, &o.ref_best) &&
        gap_of(&st->bk, o.ref_best, &o.gap);
    const int64_t ref_best = o.ref_best;
    o.rate = res->ms > 0 ? (double)res->evaluated / (res->ms * 1e-3) : 0.0;
    const cli_best_known *bk = &st->bk;
    if (!a->quiet && !o.bad && bk->have && !o.have_gap && !st->prob->solved_at_zero &&
        !cli_reference_plausible(bk, ref_best))
        fprintf(stderr,
                "gpk %s: warning: the reference %lld (%s%s%s) cannot be %s's %s: %s %lld; no gap given\n",
                cmd, (long long)bk->value, bk->kind, *bk->source ? ", " : "", bk->source, st->instance,
                strcmp(bk->kind, "OPT") == 0 ? "optimum" : "best known",
                ref_best < bk->value ? "the search found" : "more than twice", (long long)ref_best);
    if (!a->quiet) report_text(st, &o);
    if (a->json) report_json(st, &o);
    if (o.bad) {
        cli_error(cmd, "check FAILED: %s", o.bad);
        return CLI_FAIL;
    }
    if (a->out && st->prob->write(st) != 0) rc = CLI_FAIL;
    /* Interrupted: the best so far was reported and written; the status
     * says how it ended, as a shell expects of a signalled program. */
    if (rc == CLI_OK && res->stopped == GPK_SEARCH_CANCELLED)
        rc = 128 + (stop_signal ? (int)stop_signal : SIGINT);
    if (a->svg && (rc == CLI_OK || res->stopped == GPK_SEARCH_CANCELLED)) {
        char title[192];
        snprintf(title, sizeof title, "gpk tsp: %s, %u cities, length %lld, %s/%s seed %llu", st->instance,
                 st->n, (long long)res->best, gpk_search_algo_name(a->so.algo),
                 gpk_neighbourhood_name(a->so.nb), (unsigned long long)a->so.seed);
        if (write_tour_svg(cmd, a->svg, &st->tsp, res, title) != 0) rc = CLI_FAIL;
    }
    return rc;
}

static void search_free(search_state *st)
{
#ifdef GPK_HAVE_MPI
    free(st->mpi_runs);
#endif
    free(st->init_sol);
    gpk_search_result_free(&st->res);
    if (st->gctx) {
        for (int g = 0; g < st->ngpu; g++)
            if (st->gctx[g]) gpk_ctx_destroy(st->gctx[g]);
        free(st->gctx);
    } else if (st->ctx) {
        gpk_ctx_destroy(st->ctx);
    }
    gpk_qap_free(&st->qap);
    gpk_tsp_free(&st->tsp);
    gpk_tsp_free(&st->tsp_search);
    gpk_ppp_free(&st->ppp);
}

/* The arguments (the ranks parse alike: rank 0 tells); -1 to go on, else
 * the exit status. */
static int search_parse(search_state *st, int argc, char **argv)
{
    search_args *a = &st->a;
    gpk_search_opts init = GPK_SEARCH_OPTS_INIT; /* auto: the best real-use search (--paper: the paper's) */
    a->so = init;
    a->seed = 1;
    a->backend = GPK_BACKEND_AUTO;
#ifdef GPK_HAVE_MPI
    if (mpi_run) cli_mpi_mute(mpi_run, 1);
#endif
    int rc = parse_args(st->cmd, st->prob, argc, argv, a);
#ifdef GPK_HAVE_MPI
    if (mpi_run) {
        cli_mpi_mute(mpi_run, 0);
        rc = cli_mpi_max(rc); /* only rank 0 checks the outputs */
    }
#endif
    return rc;
}

/* The instance, its reference, --eval or --init; -1 to go on, else the
 * exit status. */
static int search_prepare(search_state *st)
{
    st->pb.kind = st->prob->kind;
    int rc = st->prob->load(st);
    if (rc != 0) return rc;
    find_reference(st);
    if (st->a.eval_file) return eval_solution_file(st);
    if (st->a.init) {
        st->init_sol = load_solution_of(st, st->a.init, 0);
        if (!st->init_sol) {
            ranks_agree(st->cmd, 0, "reading the instance");
            return CLI_FAIL;
        }
        st->a.so.start = st->init_sol;
    }
    if (!ranks_agree(st->cmd, 1, "reading the instance")) return CLI_FAIL;
    enforce_fixed_edges(st);
    return -1;
}

static int search_main(gpk_problem_kind kind, int argc, char **argv)
{
    search_state *st = calloc(1, sizeof *st);
    const cli_problem *prob = cli_problem_of(kind);
    if (!st || !prob) {
        free(st);
        cli_error(gpk_problem_name(kind), !st ? "out of host memory" : "no command for this problem");
        return CLI_FAIL;
    }
    st->cmd = gpk_problem_name(kind);
    st->prob = prob;
    int rc = search_parse(st, argc, argv);
    if (rc < 0) rc = search_prepare(st);
    if (rc < 0) {
        progress_state ps = {
            st->cmd, &st->bk, 0.0, st->tag, isatty(fileno(stderr)), 0, 0.0, 1.0, st->a.time_limit, 0, 0,
            0,       0,       0.0, 0.0};
        ps.shift = st->fixed_shift;
        ps.ref_shift = st->tsp.nfixed ? fixed_length(&st->tsp) : 0;
        st->ps = ps;
        choose_backend(st);
        rc = open_contexts(st);
        if (rc == CLI_OK) {
            set_search_opts(st);
            rc = run_search(st);
        }
        /* rank 0 reports and writes; the others end as it does */
        if (rc == CLI_OK && this_rank() != 0 && st->res.stopped == GPK_SEARCH_CANCELLED)
            rc = 128 + (stop_signal ? (int)stop_signal : SIGINT);
        else if (rc == CLI_OK && this_rank() == 0) rc = finish_search(st);
    }
    search_free(st);
    free(st);
    return rc;
}

/* --mpi: in gpk-mpi, MPI around the command (rank 0 reports); gpk hands
 * the whole command to gpk-mpi. Without --mpi no MPI call. */
static int search_entry(gpk_problem_kind kind, int argc, char **argv)
{
#if defined(GPK_MPI_PROGRAM) && !defined(GPK_HAVE_MPI)
    if (cli_mpi_requested(argc, argv))
        return cli_mpi_forward(gpk_problem_name(kind),
                               argv - 1); /* gpk's own argv, as main passed argv + 1 */
#endif
#ifdef GPK_HAVE_MPI
    if (cli_mpi_requested(argc, argv)) {
        cli_mpi mp;
        if (cli_mpi_init(gpk_problem_name(kind), &argc, &argv, &mp) != 0) return CLI_FAIL;
        mpi_run = &mp;
        const int rc = search_main(kind, argc, argv);
        mpi_run = NULL;
        return cli_mpi_finalize(rc);
    }
#endif
    return search_main(kind, argc, argv);
}

int cmd_qap(int argc, char **argv) { return search_entry(GPK_PROBLEM_QAP, argc, argv); }
int cmd_tsp(int argc, char **argv) { return search_entry(GPK_PROBLEM_TSP, argc, argv); }
int cmd_ppp(int argc, char **argv) { return search_entry(GPK_PROBLEM_PPP, argc, argv); }
