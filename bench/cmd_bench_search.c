/* gpk bench search: Luong, Melab & Talbi 2009, Tables 1-5 (speed, multi-GPU
 * multistart) and the quality of the iterated tabu search.
 *
 * The speed table times a fixed number of tabu iterations on one CPU
 * thread, on all of them, and on the GPU in the paper's evaluation mode
 * (every delta to the host) and in ours (the move chosen on the GPU), with
 * the acceleration factors. For QAP the CPU's default is Taillard's O(1)
 * delta table, the GPU evaluates the O(n) swap delta per neighbour: the
 * table also has the 1-thread CPU with that same formula (the paper's
 * comparison), and the factors are taken against it. The multistart table
 * (--gpus LIST) runs the same S independent searches on K = 1, 2, 4 ...
 * GPUs, one host thread per GPU, and gives the speed-up over one GPU. The
 * evaluation-rate table (--eval-rate) times the GPU's whole 2-opt
 * neighbourhood evaluation alone on large TSP instances. The quality table
 * runs the paper's ITS budget (10 x 1000) over several seeds and gives the
 * gap to the best-known value. Every run is checked: the reported best must
 * equal the problem's full evaluation of the returned solution, every
 * column must return the same result (search.h: same seed, same result on
 * any thread count and backend), the GPU runs must have evaluated every
 * neighbour on the GPU, and the evaluation-rate moves must equal a CPU
 * scan's. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "io.h"
#include "gpk/gen.h"
#include "gpk/search.h"
#ifdef GPK_HAVE_CUDA_SEARCH
#include "bench_hooks.h" /* the evaluation-rate table times the GPU evaluation alone */
#endif

#define BS_MAX_INST 64

/* The defaults load and run in seconds: QAPLIB tai*a sizes of Table 1,
 * TSPLIB sizes of Table 4 (2-opt, the library's default neighbourhood),
 * PPP sizes of Tables 2-3. Names missing from --data are skipped with a
 * note, so the default works on a partial data set. */
static const char *const bs_default_instances =
    "tai30a,tai50a,tai100a,tai256c,pr439,pr1002,73-73,101-117,73-73:flip2";

void cmd_bench_search_help(FILE *f)
{
    fprintf(f,
            "usage: gpk bench search [options]\n"
            "\n"
            "Reproduces Luong, Melab & Talbi 2009: the speed of the local search (Tables\n"
            "1-4: the whole neighbourhood evaluated each iteration, the best admissible move\n"
            "applied) on 1 CPU thread, on all of them and on the GPU in the paper's mode\n"
            "(every delta copied to the host) and ours (the move chosen on the GPU), with\n"
            "the acceleration factors; QAP also on 1 CPU thread with the GPU's O(n) delta\n"
            "formula instead of Taillard's table (the factors use it). --gpus: the\n"
            "multistart table (Table 5); --eval-rate: 2-opt evaluations per second on the\n"
            "GPU; --quality: the paper's iterated tabu search (10 x 1000 iterations)\n"
            "against the best-known values. Every run is checked by full re-evaluation and\n"
            "every column must find the same result (FAIL rows, exit status 1). GPU\n"
            "columns need a CUDA device and this build's GPU search; else they say n/a.\n"
            "\n"
            "  --instances LIST  comma-separated; each a file (.dat QAPLIB, .tsp TSPLIB), a\n"
            "                    name looked up in --data (tai30a -> DATA/qaplib/tai30a.dat,\n"
            "                    pr439 -> DATA/tsplib/pr439.tsp) or a PPP size M-N\n"
            "                    (instance M-N-1); \":NB\" picks the neighbourhood (pr439:swap,\n"
            "                    73-73:flip2). Default:\n"
            "                    %s\n"
            "  --data DIR        instance directory (default $GPK_DATA, else ../shared/data)\n"
            "  --threads T       the all-threads column (default: all cores)\n"
            "  --iters N         speed table: tabu iterations per run (default 100)\n"
            "  --reps R          speed table: runs per point, median reported (default 3)\n"
            "  --quality         also the quality table: ITS per seed, on the GPU if there\n"
            "                    is one (the same result as the CPU's), else all threads\n"
            "  --seeds N         quality table: seeds 1..N (default 10)\n"
            "  --its-iters N     quality table: tabu iterations per global iteration\n"
            "                    (default 1000, the paper's)\n"
            "  --global N        quality table: global iterations (default 10, the paper's)\n"
            "  --no-gpu          no GPU columns\n"
            "  --gpus LIST       multistart table: K GPUs for each K of LIST (e.g. 1,2,4), the\n"
            "                    same S = max(LIST) tabu searches each time, one host thread\n"
            "                    per GPU; K above the devices present: skipped with a note\n"
            "  --multi NAME      multistart table: the instance (default tai256c)\n"
            "  --multi-iters N   multistart table: tabu iterations per search (default 1000)\n"
            "  --eval-rate LIST  TSP instances (names or .tsp files) for the 2-opt\n"
            "                    evaluation-rate table: the GPU's whole-neighbourhood\n"
            "                    evaluation (ours) timed alone from random tours, each chosen\n"
            "                    move checked against a CPU scan (e.g.\n"
            "                    pr2392,fnl4461,rl5915,pla33810)\n"
            "  --eval-seconds S  evaluation-rate table: time per instance (default 1)\n"
            "  --json FILE       write the machine, the configuration and every row\n",
            bs_default_instances);
}

/* ---- best-known values (the same files and rules as gpk qap / gpk tsp) ---- */

/* ---- instances ---- */

typedef struct {
    char label[96]; /* as printed: name, with ":nb" when not the default */
    char name[64];
    gpk_search_problem pb;
    gpk_qap qap;
    gpk_tsp tsp;
    gpk_ppp ppp;
    gpk_neighbourhood nb;
    uint32_t n;
    cli_best_known bk;
} bs_inst;

static void bs_inst_free(bs_inst *in)
{
    gpk_qap_free(&in->qap);
    gpk_tsp_free(&in->tsp);
    gpk_ppp_free(&in->ppp);
}

/* Bounded copy of a C string; memcpy rather than snprintf because the
 * source and destination are fields of one struct, which GCC's -Wrestrict
 * cannot tell apart. */
static void bs_copy(char *dst, size_t size, const char *src)
{
    size_t n = strlen(src);
    if (n >= size) n = size - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static int bs_ends(const char *s, const char *suffix)
{
    const size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int bs_exists(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f) fclose(f);
    return f != NULL;
}

/* Resolves and loads one token. Returns 0 loaded, 1 skipped (a name not
 * found in --data: a note, not an error, so the default list works on a
 * partial data set), CLI_USAGE for a malformed token, CLI_FAIL when a file
 * that exists does not load. */
static int bs_load(const char *cmd, const char *token, const char *data, bs_inst *in)
{
    memset(in, 0, sizeof *in);
    char spec[512];
    snprintf(spec, sizeof spec, "%s", token);
    char *colon = strrchr(spec, ':');
    in->nb = GPK_NB_DEFAULT;
    if (colon) {
        *colon = '\0';
        if (gpk_neighbourhood_parse(colon + 1, &in->nb) != GPK_OK) {
            cli_error(cmd, "'%s': unknown neighbourhood '%s' (swap, 2opt, flip1, flip2)", token, colon + 1);
            return CLI_USAGE;
        }
    }
    unsigned long long m = 0, n = 0;
    int used = 0;
    char path[1024];
    gpk_problem_kind kind;
    if (sscanf(spec, "%llu-%llu%n", &m, &n, &used) == 2 && spec[used] == '\0') {
        if (m < 1 || n < 1 || n % 2 == 0 || m > UINT32_MAX || n > UINT32_MAX) {
            cli_error(cmd, "'%s': a PPP size is M-N with M >= 1 and N odd", token);
            return CLI_USAGE;
        }
        kind = GPK_PROBLEM_PPP;
    } else if (strchr(spec, '/') || bs_ends(spec, ".dat") || bs_ends(spec, ".tsp")) {
        snprintf(path, sizeof path, "%s", spec);
        kind = bs_ends(spec, ".tsp") ? GPK_PROBLEM_TSP : GPK_PROBLEM_QAP;
    } else {
        snprintf(path, sizeof path, "%s/qaplib/%s.dat", data, spec);
        kind = GPK_PROBLEM_QAP;
        if (!bs_exists(path)) {
            snprintf(path, sizeof path, "%s/tsplib/%s.tsp", data, spec);
            kind = GPK_PROBLEM_TSP;
        }
        if (!bs_exists(path)) {
            fprintf(stderr, "gpk %s: note: '%s' is in neither %s/qaplib nor %s/tsplib: skipped\n", cmd, spec,
                    data, data);
            return 1;
        }
    }
    /* a neighbourhood the problem does not have is a usage error, as in gpk qap/tsp/ppp */
    const gpk_neighbourhood nb = in->nb;
    /* or2opt has no neighbourhood to time move by move */
    if (!gpk_search_nb_applies(kind, nb) || nb == GPK_NB_OR_OPT) {
        cli_error(cmd, "'%s': not a neighbourhood of this problem", token);
        return CLI_USAGE;
    }
    const gpk_neighbourhood dflt = gpk_search_paper_nb(kind); /* the paper's tables */
    in->nb = nb != GPK_NB_DEFAULT ? nb : dflt;
    in->pb.kind = kind;
    gpk_status s;
    if (kind == GPK_PROBLEM_QAP) {
        s = gpk_qap_load(path, &in->qap);
        if (s == GPK_OK) {
            in->pb.qap = &in->qap;
            in->n = in->qap.n;
            bs_copy(in->name, sizeof in->name, in->qap.name);
            in->bk = cli_find_best_known(path, "best-known.csv", ',', in->qap.name, "BKS");
        }
    } else if (kind == GPK_PROBLEM_TSP) {
        s = gpk_tsp_load(path, &in->tsp);
        if (s == GPK_OK) {
            in->pb.tsp = &in->tsp;
            in->n = in->tsp.n;
            bs_copy(in->name, sizeof in->name, in->tsp.name);
            in->bk = cli_find_best_known(path, "bestSolutions.txt", ':', in->tsp.name, "OPT");
        }
    } else {
        s = gpk_ppp_generate((uint32_t)m, (uint32_t)n, 1, &in->ppp);
        if (s == GPK_OK) {
            in->pb.ppp = &in->ppp;
            in->n = in->ppp.n;
            snprintf(in->name, sizeof in->name, "%llu-%llu-1", m, n);
            /* fitness 0 solves every instance: the secret reaches it */
            in->bk.have = 1;
            snprintf(in->bk.kind, sizeof in->bk.kind, "OPT");
        }
    }
    if (s != GPK_OK) {
        cli_error(cmd, "%s", gpk_last_error(NULL));
        bs_inst_free(in);
        return CLI_FAIL;
    }
    char name[sizeof in->name]; /* a copy, for -Wrestrict as in bs_copy */
    memcpy(name, in->name, sizeof name);
    if (in->nb == dflt) snprintf(in->label, sizeof in->label, "%s", name);
    else snprintf(in->label, sizeof in->label, "%s:%s", name, gpk_neighbourhood_name(in->nb));
    return 0;
}

static const char *bs_check(const bs_inst *in, const gpk_search_result *r, char *buf, size_t len)
{
    return cli_check_search_result(&in->pb, r, in->n, buf, len);
}

/* One checked run; returns the verdict ("ok", "FAIL", "ERROR") with why. */
static const char *bs_run(gpk_ctx *ctx, const bs_inst *in, const gpk_search_opts *o, gpk_search_result *r,
                          double *wall_ms, char *why, size_t len)
{
    memset(r, 0, sizeof *r);
    const double t0 = cli_now_ms();
    const gpk_status s = gpk_search_run(ctx, &in->pb, o, r);
    *wall_ms = cli_now_ms() - t0;
    if (s != GPK_OK) {
        snprintf(why, len, "%s", *gpk_last_error(ctx) ? gpk_last_error(ctx) : gpk_status_string(s));
        return "ERROR";
    }
    const char *bad = bs_check(in, r, why, len);
    if (bad) {
        if (bad != why) snprintf(why, len, "%s", bad);
        return "FAIL";
    }
    return "ok";
}

static double bs_gap(const cli_best_known *bk, int64_t v)
{
    return bk->value > 0 ? 100.0 * (double)(v - bk->value) / (double)bk->value : 0.0;
}

/* One timed column of the speed table. */
typedef struct {
    double ms;      /* median */
    double ms_iter; /* steady state: (median - a 1-iteration run) / (iters - 1) */
    int64_t best;
    uint64_t evaluated, gpu_evaluated;
    int ran;             /* 0: n/a */
    const char *verdict; /* "ok", "FAIL", "ERROR" */
    char why[256];
    uint32_t *sol; /* the first run's solution (compared across columns) */
} bs_col;

static void bs_time_col(gpk_ctx *ctx, const bs_inst *in, const gpk_search_opts *o, uint64_t reps,
                        double *times, int gpu, bs_col *c)
{
    c->ran = 1;
    c->verdict = "ok";
    c->why[0] = '\0';
    for (uint64_t r = 0; r < reps && strcmp(c->verdict, "ok") == 0; r++) {
        gpk_search_result res;
        c->verdict = bs_run(ctx, in, o, &res, &times[r], c->why, sizeof c->why);
        if (strcmp(c->verdict, "ok") == 0) {
            c->best = res.best;
            c->evaluated = res.evaluated;
            c->gpu_evaluated = res.gpu_evaluated;
            if (!c->sol && res.solution) {
                c->sol = res.solution;
                res.solution = NULL;
            }
            if (gpu && res.gpu_evaluated != res.evaluated) {
                snprintf(c->why, sizeof c->why, "the GPU evaluated %llu of %llu neighbours: %s",
                         (unsigned long long)res.gpu_evaluated, (unsigned long long)res.evaluated,
                         gpk_last_error(ctx));
                c->verdict = "FAIL";
            }
        }
        gpk_search_result_free(&res);
    }
    if (strcmp(c->verdict, "ok") != 0) return;
    c->ms = cli_median(times, (size_t)reps);
    c->ms_iter = c->ms;
    if (o->iters < 2) return;
    /* The set-up (the start solution, Taillard's table, the GPU session and
     * its uploads) is in every run: a 1-iteration run (the faster of 2)
     * measures it, and the difference gives the cost of the iterations. */
    gpk_search_opts o1 = *o;
    o1.iters = 1;
    double t1 = 0;
    for (int r = 0; r < 2; r++) {
        gpk_search_result res;
        double t;
        char why[200];
        const char *v = bs_run(ctx, in, &o1, &res, &t, why, sizeof why);
        gpk_search_result_free(&res);
        if (strcmp(v, "ok") != 0) {
            c->verdict = v;
            snprintf(c->why, sizeof c->why, "1-iteration run: %s", why);
            return;
        }
        if (r == 0 || t < t1) t1 = t;
    }
    c->ms_iter = c->ms > t1 ? (c->ms - t1) / (double)(o->iters - 1) : c->ms / (double)o->iters;
}

static void bs_json_num(FILE *f, const char *key, int have, double v)
{
    if (have) fprintf(f, ", \"%s\": %.6g", key, v);
    else fprintf(f, ", \"%s\": null", key);
}

#ifdef GPK_HAVE_CUDA_SEARCH
/* The evaluation-rate row of one TSP instance: random tours (seeded), the
 * whole 2-opt neighbourhood evaluated by the GPU session (OURS: the move
 * reduced on the GPU, 32 bytes back) as many times as fit in `seconds`;
 * the first evaluation of each tour is checked against a CPU scan of the
 * same neighbourhood (gpk_tsp_two_opt_delta, the minimum of (delta, k)). */
static const char *bs_eval_rate(gpk_ctx *gctx, const gpk_tsp *t, double seconds, int *path, uint64_t *evals,
                                double *ms, char *why, size_t len)
{
    *evals = 0;
    *ms = 0;
    gpk__bench_tsp_eval *g = NULL;
    if (gpk__bench_tsp_eval_open(gctx, t, &g, path) != GPK_OK) {
        snprintf(why, len, "%s", gpk_last_error(gctx));
        return "ERROR";
    }
    const uint32_t n = t->n;
    const uint64_t size = (uint64_t)n * (n - 1) / 2;
    uint32_t *tour = malloc(n * sizeof *tour);
    const char *verdict = "ok";
    if (!tour) {
        gpk__bench_tsp_eval_close(g);
        snprintf(why, len, "out of host memory");
        return "ERROR";
    }
    gpk_rng rng;
    gpk_rng_seed(&rng, 1);
    double spent = 0;
    for (int tr = 0; tr < 3 && strcmp(verdict, "ok") == 0; tr++) {
        for (uint32_t i = 0; i < n; i++) tour[i] = i;
        for (uint32_t i = n - 1; i > 0; i--) {
            uint32_t r = (uint32_t)(gpk_rng_next(&rng) % ((uint64_t)i + 1)), x = tour[i];
            tour[i] = tour[r];
            tour[r] = x;
        }
        int64_t ad;
        uint64_t ak;
        /* the first call uploads the tour: checked, not timed */
        if (gpk__bench_tsp_eval_best(g, tour, &ad, &ak) != GPK_OK) {
            snprintf(why, len, "%s", gpk_last_error(gctx));
            verdict = "ERROR";
            break;
        }
        int64_t cd = INT64_MAX;
        uint64_t ck = UINT64_MAX;
        const int64_t nn = (int64_t)n;
#pragma omp parallel
        {
            int64_t bd = INT64_MAX;
            uint64_t bk = UINT64_MAX;
#pragma omp for schedule(dynamic, 16)
            for (int64_t i = 0; i < nn - 1; i++) {
                uint64_t k = gpk_swap_pair_to_index(n, (uint32_t)i, (uint32_t)i + 1);
                for (uint32_t j = (uint32_t)i + 1; j < n; j++, k++) {
                    const int64_t d = gpk_tsp_two_opt_delta(t, tour, (uint32_t)i, j);
                    if (d < bd || (d == bd && k < bk)) bd = d, bk = k;
                }
            }
#pragma omp critical(bs_eval_rate)
            if (bd < cd || (bd == cd && bk < ck)) cd = bd, ck = bk;
        }
        if (ad != cd || ak != ck) {
            snprintf(why, len, "tour %d: the GPU's best move (%lld, %llu), the CPU's (%lld, %llu)", tr,
                     (long long)ad, (unsigned long long)ak, (long long)cd, (unsigned long long)ck);
            verdict = "FAIL";
            break;
        }
        const double budget = seconds * 1e3 / 3.0, t0 = cli_now_ms();
        uint64_t calls = 0;
        double now = t0;
        do {
            if (gpk__bench_tsp_eval_best(g, tour, &ad, &ak) != GPK_OK) {
                snprintf(why, len, "%s", gpk_last_error(gctx));
                verdict = "ERROR";
                break;
            }
            calls++;
            now = cli_now_ms();
        } while (now - t0 < budget || calls < 3);
        if (strcmp(verdict, "ok") == 0 && (ad != cd || ak != ck)) {
            snprintf(why, len, "tour %d: a repeated evaluation chose (%lld, %llu)", tr, (long long)ad,
                     (unsigned long long)ak);
            verdict = "FAIL";
        }
        *evals += calls * size;
        spent += now - t0;
    }
    *ms = spent;
    free(tour);
    gpk__bench_tsp_eval_close(g);
    return verdict;
}
#endif

/* ---- the command ---- */

/* The options of gpk bench search. */
typedef struct {
    const char *instances, *json, *gpus_list, *multi_name, *eval_list, *data;
    uint64_t threads, iters, reps, seeds, its_iters, global, multi_iters, eval_seconds;
    int quality, no_gpu;
    int gpus[16], ngpus, max_gpus; /* --gpus LIST */
} bs_opts;

/* What the tables share: the contexts, the JSON file, the failures. */
typedef struct {
    const char *cmd;
    const bs_opts *op;
    gpk_ctx *ctx, *gctx; /* the CPU; the GPU (NULL: none) */
    gpk_ctx_info info, ginfo;
    int all; /* the CPU context's threads */
    const char *no_gpu_why;
    FILE *jf;      /* --json (NULL: none) */
    double *times; /* reps entries */
    int fails;
} bs_env;

/* --gpus LIST into op; 0, or CLI_USAGE after a message. */
static int bs_parse_gpus(const char *cmd, bs_opts *op)
{
    char gl[256];
    snprintf(gl, sizeof gl, "%s", op->gpus_list);
    for (char *tok = strtok(gl, ","); tok; tok = strtok(NULL, ",")) {
        uint64_t v;
        if (op->ngpus == 16 || cli_parse_uint(tok, 1, 1024, &v) != 0) {
            cli_error(cmd, "bad --gpus '%s' (up to 16 counts, each 1 or more: 1,2,4)", op->gpus_list);
            return CLI_USAGE;
        }
        op->gpus[op->ngpus++] = (int)v;
        if ((int)v > op->max_gpus) op->max_gpus = (int)v;
    }
    if (op->ngpus == 0) {
        cli_error(cmd, "--gpus: an empty list");
        return CLI_USAGE;
    }
    return 0;
}

/* The numeric options: name, target, lo, hi. 1 taken, 0 not one of them,
 * -1 after a message. */
static int bs_parse_number(const char *cmd, int argc, char **argv, int *i, bs_opts *op)
{
    static const char *const names[] = {"--threads",   "--iters",  "--reps",        "--seeds",
                                        "--its-iters", "--global", "--multi-iters", "--eval-seconds"};
    uint64_t *const targets[] = {&op->threads,   &op->iters,  &op->reps,        &op->seeds,
                                 &op->its_iters, &op->global, &op->multi_iters, &op->eval_seconds};
    const uint64_t lo[] = {1, 1, 1, 1, 1, 1, 1, 1};
    const uint64_t hi[] = {1 << 16, UINT64_MAX, 1000, 100000, UINT64_MAX, UINT32_MAX, UINT64_MAX, 3600};
    const int nopts = (int)(sizeof names / sizeof *names);
    const char *val = NULL;
    int k = 0;
    for (; k < nopts; k++) {
        const int m = cli_opt_value(cmd, argc, argv, i, NULL, names[k], &val);
        if (m < 0) return -1;
        if (m > 0) break;
    }
    if (k == nopts) return 0;
    if (cli_parse_uint(val, lo[k], hi[k], targets[k]) != 0) {
        cli_error(cmd, "bad %s '%s' (an integer, 1 or more)", names[k], val);
        return -1;
    }
    return 1;
}

/* -1 to go on, else the exit status. */
static int bs_parse_args(const char *cmd, int argc, char **argv, bs_opts *op)
{
    /* argv[0] is "bench", argv[1] "search" */
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        int m;
        if (cli_is_help(a)) {
            cmd_bench_search_help(stdout);
            return CLI_OK;
        }
        if (cli_flag(a, NULL, "--quality")) {
            op->quality = 1;
        } else if (cli_flag(a, NULL, "--no-gpu")) {
            op->no_gpu = 1;
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--instances", &val)) != 0) {
            if (m < 0) return CLI_USAGE;
            if (!*val) {
                cli_error(cmd, "--instances: an empty list");
                return CLI_USAGE;
            }
            op->instances = val;
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--data", &val)) != 0) {
            if (m < 0) return CLI_USAGE;
            op->data = val;
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--json", &val)) != 0) {
            if (m < 0) return CLI_USAGE;
            op->json = val;
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--gpus", &val)) != 0) {
            if (m < 0) return CLI_USAGE;
            op->gpus_list = val;
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--multi", &val)) != 0) {
            if (m < 0) return CLI_USAGE;
            op->multi_name = val;
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--eval-rate", &val)) != 0) {
            if (m < 0) return CLI_USAGE;
            op->eval_list = val;
        } else {
            const int r = bs_parse_number(cmd, argc, argv, &i, op);
            if (r < 0) return CLI_USAGE;
            if (r == 0) {
                cli_error(cmd, "unknown option '%s' (see gpk bench search --help)", a);
                return CLI_USAGE;
            }
        }
    }
    if (op->gpus_list && bs_parse_gpus(cmd, op) != 0) return CLI_USAGE;
    return -1;
}

/* Loads every instance first: a bad token is reported before any timing.
 * CLI_OK, or the exit status after a message (none left loaded). */
static int bs_load_all(const char *cmd, const bs_opts *op, bs_inst *inst, int *ninst)
{
    int rc = CLI_OK;
    char list[4096];
    snprintf(list, sizeof list, "%s", op->instances);
    *ninst = 0;
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        if (*ninst >= BS_MAX_INST) {
            cli_error(cmd, "--instances: more than %d", BS_MAX_INST);
            rc = CLI_USAGE;
            break;
        }
        const int r = bs_load(cmd, tok, op->data, &inst[*ninst]);
        if (r == 0) (*ninst)++;
        else if (r != 1) {
            rc = r;
            break;
        }
    }
    if (rc == CLI_OK && *ninst == 0) {
        cli_error(cmd, "no instance found (--data %s; or give files with --instances)", op->data);
        rc = CLI_FAIL;
    }
    if (rc != CLI_OK) {
        for (int k = 0; k < *ninst; k++) bs_inst_free(&inst[k]);
        *ninst = 0;
    }
    return rc;
}

/* The GPU: this build's GPU search and a usable device. */
static void bs_open_gpu(bs_env *e)
{
    memset(&e->ginfo, 0, sizeof e->ginfo);
    e->no_gpu_why = "--no-gpu";
#ifdef GPK_HAVE_CUDA_SEARCH
    if (!e->op->no_gpu) {
        e->no_gpu_why = "no CUDA device";
        if (gpk_backend_available(GPK_BACKEND_CUDA)) {
            gpk_ctx_opts co = GPK_CTX_OPTS_INIT;
            co.backend = GPK_BACKEND_CUDA;
            co.threads = 1; /* the host side of a GPU search is sequential */
            if (gpk_ctx_create_ex(&e->gctx, &co) == GPK_OK) gpk_ctx_info_get(e->gctx, &e->ginfo);
            else e->gctx = NULL, e->no_gpu_why = "the CUDA context failed";
        }
    }
#else
    if (!e->op->no_gpu) e->no_gpu_why = "not in this build";
#endif
    if (e->gctx) printf("GPU: %s (%u SMs)\n", e->ginfo.device_name, e->ginfo.compute_units);
    else printf("GPU columns: n/a (%s)\n", e->no_gpu_why);
}

/* Opens --json and writes its head; 0, or -1 after a message. */
static int bs_json_open(bs_env *e, io_out *jout)
{
    char jerr[600];
    e->jf = io_out_open(jout, e->op->json, jerr, sizeof jerr) == 0 ? jout->f : NULL;
    if (!e->jf) {
        cli_error(e->cmd, "%s", jerr);
        return -1;
    }
    FILE *jf = e->jf;
    fprintf(jf, "{\"command\": \"bench search\", \"gpk_version\": ");
    cli_json_str(jf, gpk_version());
    fprintf(jf, ", \"backend\": ");
    cli_json_ctx_info(jf, &e->info);
    fprintf(jf, ", \"threads\": %d, \"iters\": %llu, \"reps\": %llu, \"gpu\": ", e->all,
            (unsigned long long)e->op->iters, (unsigned long long)e->op->reps);
    if (e->gctx) cli_json_ctx_info(jf, &e->ginfo);
    else fprintf(jf, "null");
    fprintf(jf, ", \"speed\": [");
    return 0;
}

/* ---- speed: Tables 1-4 ---- */

/* Every column of a row: the same result. "ok", or the verdict with why. */
static const char *bs_same_columns(const bs_inst *in, const bs_col *col, char *why, size_t len)
{
    for (int c = 0; c < 5; c++) {
        if (!col[c].ran) continue;
        if (strcmp(col[c].verdict, "ok") != 0) {
            snprintf(why, len, "column %d: %s", c, col[c].why);
            return col[c].verdict;
        }
        if (col[c].best != col[0].best || col[c].evaluated != col[0].evaluated ||
            (col[c].sol && col[0].sol && memcmp(col[c].sol, col[0].sol, in->n * sizeof *col[0].sol) != 0)) {
            snprintf(why, len, "column %d found %lld, CPU-1 %lld (the search is deterministic)", c,
                     (long long)col[c].best, (long long)col[0].best);
            return "FAIL";
        }
    }
    return "ok";
}

/* The JSON record of one speed row. */
static void bs_speed_json(const bs_env *e, const bs_inst *in, const bs_col *col, const double *rate,
                          uint64_t nsize, uint64_t evaluated, int same, const double *acc,
                          const char *verdict, int rows)
{
    FILE *jf = e->jf;
    fprintf(jf, "%s\n {\"instance\": ", rows ? "," : "");
    cli_json_str(jf, in->label);
    fprintf(jf, ", \"n\": %u, \"nb\": \"%s\", \"neighbours\": %llu, \"evaluated\": %llu", in->n,
            gpk_neighbourhood_name(in->nb), (unsigned long long)nsize, (unsigned long long)evaluated);
    static const char *const keys[5] = {"cpu1", "cpu1_formula", "cpu_all", "gpu_paper", "gpu_ours"};
    for (int c = 0; c < 5; c++) {
        char key[48];
        const int have = col[c].ran && strcmp(col[c].verdict, "ok") == 0;
        snprintf(key, sizeof key, "%s_ms", keys[c]);
        bs_json_num(jf, key, have, col[c].ms);
        snprintf(key, sizeof key, "%s_ms_per_iter", keys[c]);
        bs_json_num(jf, key, have, col[c].ms_iter);
        snprintf(key, sizeof key, "%s_moves_per_s", keys[c]);
        bs_json_num(jf, key, have && rate[c] > 0, rate[c] * 1e6);
    }
    fprintf(jf, ", \"cpu_all_threads\": %d, \"same_formula_column\": \"%s\"", e->all,
            same ? "cpu1_formula" : "cpu1");
    bs_json_num(jf, "accel_ours_vs_cpu1_same_formula", acc[0] > 0, acc[0]);
    bs_json_num(jf, "accel_ours_vs_cpu_all", acc[1] > 0, acc[1]);
    bs_json_num(jf, "accel_paper_vs_cpu1_same_formula", acc[2] > 0, acc[2]);
    bs_json_num(jf, "accel_ours_vs_cpu1_default", acc[0] > 0,
                col[4].ms_iter > 0 ? col[0].ms_iter / col[4].ms_iter : 0);
    fprintf(jf, ", \"acceleration\": %.6f, \"best\": %lld, \"check\": \"%s\"}",
            col[2].ms > 0 ? col[0].ms / col[2].ms : 0.0, (long long)col[0].best, verdict);
}

/* One instance's row of the speed table. */
static void bs_speed_row(bs_env *e, const bs_inst *in, int rows)
{
    const uint64_t iters = e->op->iters;
    gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
    o.algo = GPK_SEARCH_TABU;
    o.nb = in->nb;
    o.iters = iters;
    o.seed = 1;
    /* columns: 0 CPU-1, 1 CPU-1f (QAP), 2 CPU-all, 3 GPU paper, 4 GPU ours */
    bs_col col[5];
    memset(col, 0, sizeof col);
    const int qap = in->pb.kind == GPK_PROBLEM_QAP; /* the only problem with a second CPU formula */
    for (int c = 0; c < 5; c++) {
        gpk_search_opts oc = o;
        if (c == 1 && !qap) continue;
        if (c >= 3 && !e->gctx) continue;
        if (c == 1) oc.qap_delta = GPK_QAP_DELTA_FORMULA;
        if (c == 3) oc.eval = GPK_SEARCH_EVAL_PAPER;
        if (c < 3) gpk_ctx_set_threads(e->ctx, c == 2 ? e->all : 1);
        bs_time_col(c >= 3 ? e->gctx : e->ctx, in, &oc, e->op->reps, e->times, c >= 3, &col[c]);
    }
    char why[300] = "";
    const char *verdict = bs_same_columns(in, col, why, sizeof why);
    if (strcmp(verdict, "ok") != 0) e->fails++;
    const uint64_t evaluated = col[0].evaluated;
    /* the neighbourhood's size: moves evaluated per iteration */
    const uint64_t nsize = iters ? evaluated / iters : 0;
    const int same = qap ? 1 : 0; /* the same-formula 1-thread column */
    /* rates and accelerations from the steady-state cost of an iteration */
    double rate[5], acc[3] = {0, 0, 0}; /* ours / CPU-1 same formula, ours / CPU-all, paper / CPU-1 */
    for (int c = 0; c < 5; c++)
        rate[c] = col[c].ran && col[c].ms_iter > 0 ? (double)nsize / col[c].ms_iter / 1e3 : 0.0;
    if (col[4].ran && col[4].ms_iter > 0) {
        acc[0] = col[same].ms_iter / col[4].ms_iter;
        acc[1] = col[2].ms_iter / col[4].ms_iter;
    }
    if (col[3].ran && col[3].ms_iter > 0) acc[2] = col[same].ms_iter / col[3].ms_iter;
    char cs[5][16];
    for (int c = 0; c < 5; c++) {
        if (col[c].ran && strcmp(col[c].verdict, "ok") == 0) snprintf(cs[c], sizeof cs[c], "%.3f", col[c].ms);
        else snprintf(cs[c], sizeof cs[c], "%s", col[c].ran ? "-" : "n/a");
    }
    char g1[16] = "n/a", g2[16] = "n/a", g3[16] = "n/a", rg[16] = "n/a";
    if (acc[0] > 0) snprintf(g1, sizeof g1, "%.1fx", acc[0]);
    if (acc[1] > 0) snprintf(g2, sizeof g2, "%.1fx", acc[1]);
    if (acc[2] > 0) snprintf(g3, sizeof g3, "%.1fx", acc[2]);
    if (rate[4] > 0) snprintf(rg, sizeof rg, "%.1f", rate[4]);
    printf("%-16s %6u %-6s %11llu %10s %10s %10s %10s %10s %9.2f %9.2f %9s %8s %8s %8s  %s%s%s\n", in->label,
           in->n, gpk_neighbourhood_name(in->nb), (unsigned long long)nsize, cs[0], cs[1], cs[2], cs[3],
           cs[4], rate[0], rate[2], rg, g1, g2, g3, verdict, *why ? ": " : "", why);
    fflush(stdout);
    if (e->jf) bs_speed_json(e, in, col, rate, nsize, evaluated, same, acc, verdict, rows);
    for (int c = 0; c < 5; c++) free(col[c].sol);
}

static void bs_speed_table(bs_env *e, const bs_inst *inst, int ninst)
{
    const int all = e->all;
    printf(
        "Speed: %llu tabu iterations (seed 1), ms per run (set-up included), median of %llu runs; CPU-1 = 1\n"
        "thread, CPU-%d = %d threads (QAP: Taillard's O(1) delta table), CPU-1f = 1 thread with the GPU's "
        "O(n)\n"
        "QAP swap delta; GPU-paper: every delta to the host, GPU-ours: the move chosen on the GPU. Moves/s "
        "and\n"
        "accelerations from the cost of an iteration (a run less a 1-iteration run): GPU-ours over CPU-1 "
        "with\n"
        "the same formula (QAP: CPU-1f), over CPU-%d, and GPU-paper over CPU-1 with the same formula.\n",
        (unsigned long long)e->op->iters, (unsigned long long)e->op->reps, all, all, all);
    char hcpu[32], hx[32];
    snprintf(hcpu, sizeof hcpu, "CPU-%d", all);
    snprintf(hx, sizeof hx, "x/CPU-%d", all);
    printf("%-16s %6s %-6s %11s %10s %10s %10s %10s %10s %9s %9s %9s %8s %8s %8s  %s\n", "instance", "n",
           "nb", "neighbours", "CPU-1", "CPU-1f", hcpu, "GPU-paper", "GPU-ours", "Mm/s 1", "Mm/s all",
           "Mm/s GPU", "x/CPU-1", hx, "paper x", "check");
    for (int k = 0, rows = 0; k < ninst && !e->fails; k++, rows++) bs_speed_row(e, &inst[k], rows);
    gpk_ctx_set_threads(e->ctx, all);
    if (e->jf) fprintf(e->jf, "\n]");
}

/* ---- multistart on 1, 2, 4 ... GPUs (the paper's Table 5) ---- */

/* The row of K GPUs; *ms1, *best1, *have1: the 1-GPU reference. */
static void bs_multi_row(bs_env *e, const bs_inst *mi, gpk_ctx **mctx, int K, double *ms1, int64_t *best1,
                         int *have1, int *mrows)
{
    const bs_opts *op = e->op;
    gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
    o.algo = GPK_SEARCH_TABU;
    o.nb = mi->nb;
    o.iters = op->multi_iters;
    o.seed = 1;
    o.starts = (uint32_t)op->max_gpus;
    gpk_search_result res;
    memset(&res, 0, sizeof res);
    char why[256] = "";
    const char *verdict = "ok";
    const double t0 = cli_now_ms();
    const gpk_status st = gpk_search_run_multi(mctx, K, &mi->pb, &o, &res);
    const double ms = cli_now_ms() - t0;
    if (st != GPK_OK) {
        snprintf(why, sizeof why, "%s", gpk_last_error(mctx[0]));
        verdict = "ERROR";
    } else {
        const char *bad = bs_check(mi, &res, why, sizeof why);
        if (bad) {
            if (bad != why) snprintf(why, sizeof why, "%s", bad);
            verdict = "FAIL";
        } else if (res.gpu_evaluated != res.evaluated) {
            snprintf(why, sizeof why, "not every neighbour on the GPU");
            verdict = "FAIL";
        } else if (*have1 && res.best != *best1) {
            snprintf(why, sizeof why, "best %lld, on 1 GPU %lld (the runs are the same)", (long long)res.best,
                     (long long)*best1);
            verdict = "FAIL";
        }
    }
    if (strcmp(verdict, "ok") != 0) e->fails++;
    else if (!*have1 || K == 1) {
        if (K == 1) *ms1 = ms;
        *best1 = res.best;
        *have1 = 1;
    }
    char sp[16] = "-";
    if (*ms1 > 0 && strcmp(verdict, "ok") == 0) snprintf(sp, sizeof sp, "%.2fx", *ms1 / ms);
    printf("%-8d %12.1f %10s %9d %14lld %5u  %s%s%s\n", K, ms, sp, op->max_gpus, (long long)res.best,
           res.best_run, verdict, *why ? ": " : "", why);
    fflush(stdout);
    if (e->jf) {
        fprintf(e->jf, "%s\n {\"gpus\": %d, \"ms\": %.6f", (*mrows)++ ? "," : "", K, ms);
        bs_json_num(e->jf, "speedup_vs_1gpu", *ms1 > 0 && strcmp(verdict, "ok") == 0, *ms1 / ms);
        fprintf(e->jf, ", \"best\": %lld, \"best_run\": %u, \"evaluated\": %llu, \"check\": \"%s\"}",
                (long long)res.best, res.best_run, (unsigned long long)res.evaluated, verdict);
    }
    gpk_search_result_free(&res);
}

static void bs_multi_table(bs_env *e)
{
    const bs_opts *op = e->op;
    FILE *jf = e->jf;
    if (jf) fprintf(jf, ", \"multistart\": ");
    if (!op->ngpus || e->fails) {
        if (jf) fprintf(jf, "null");
        return;
    }
    bs_inst mi;
    const int lr = bs_load(e->cmd, op->multi_name, op->data, &mi);
    printf("\nMultistart: %d tabu searches of %llu iterations on %s, one host thread per GPU (Algorithm 2)\n",
           op->max_gpus, (unsigned long long)op->multi_iters, op->multi_name);
    if (lr != 0) {
        printf("  skipped: %s not loaded\n", op->multi_name);
        if (jf) fprintf(jf, "null");
        if (lr != 1) e->fails++;
        return;
    }
    gpk_ctx *mctx[1024];
    int have = 0;
#ifdef GPK_HAVE_CUDA_SEARCH
    for (; !op->no_gpu && have < op->max_gpus; have++) {
        gpk_ctx_opts co = GPK_CTX_OPTS_INIT;
        co.backend = GPK_BACKEND_CUDA;
        co.device = have;
        co.threads = 1;
        if (gpk_ctx_create_ex(&mctx[have], &co) != GPK_OK) break;
    }
#endif
    printf("%-8s %12s %10s %9s %14s %5s  %s\n", "GPUs", "ms", "speed-up", "searches", "best", "run", "check");
    if (jf)
        fprintf(jf, "{\"instance\": \"%s\", \"searches\": %d, \"iters\": %llu, \"devices\": %d, \"rows\": [",
                mi.label, op->max_gpus, (unsigned long long)op->multi_iters, have);
    double ms1 = 0;
    int64_t best1 = 0;
    int have1 = 0, mrows = 0;
    for (int q = 0; q < op->ngpus; q++) {
        const int K = op->gpus[q];
        if (K > have) {
            printf("%-8d %12s %10s %9d %14s %5s  skipped: %d GPU%s present\n", K, "-", "-", op->max_gpus, "-",
                   "-", have, have == 1 ? "" : "s");
            if (jf)
                fprintf(jf, "%s\n {\"gpus\": %d, \"skipped\": \"%d GPUs present\"}", mrows++ ? "," : "", K,
                        have);
            continue;
        }
        bs_multi_row(e, &mi, mctx, K, &ms1, &best1, &have1, &mrows);
    }
    if (have < op->max_gpus)
        printf("  note: %d CUDA device%s usable: rows with more GPUs are skipped\n", have,
               have == 1 ? "" : "s");
    if (jf) fprintf(jf, "\n]}");
    for (int g = 0; g < have; g++) gpk_ctx_destroy(mctx[g]);
    bs_inst_free(&mi);
}

/* ---- the GPU's 2-opt evaluation rate ---- */

/* One instance's row; erows counts the JSON records. */
static void bs_eval_row(bs_env *e, const char *tok, int *erows)
{
    FILE *jf = e->jf;
    bs_inst ei;
    const int lr = bs_load(e->cmd, tok, e->op->data, &ei);
    if (lr != 0) {
        if (lr != 1) e->fails++;
        return;
    }
    if (ei.pb.kind != GPK_PROBLEM_TSP) { /* the table measures the 2-opt kernel */
        printf("%-16s skipped: not a TSP instance\n", ei.label);
        bs_inst_free(&ei);
        return;
    }
    const uint64_t size = (uint64_t)ei.n * (ei.n - 1) / 2;
    if (!e->gctx) {
        printf("%-16s %7u %14llu %-22s %12s %12s %14s  n/a (%s)\n", ei.label, ei.n, (unsigned long long)size,
               "-", "-", "-", "-", e->no_gpu_why);
        if (jf) {
            fprintf(jf, "%s\n {\"instance\": ", (*erows)++ ? "," : "");
            cli_json_str(jf, ei.label);
            fprintf(jf, ", \"n\": %u, \"skipped\": ", ei.n);
            cli_json_str(jf, e->no_gpu_why);
            fprintf(jf, "}");
        }
        bs_inst_free(&ei);
        return;
    }
#ifdef GPK_HAVE_CUDA_SEARCH
    char why[256] = "";
    uint64_t evals = 0;
    double ms = 0;
    int path = 0;
    const char *verdict =
        bs_eval_rate(e->gctx, &ei.tsp, (double)e->op->eval_seconds, &path, &evals, &ms, why, sizeof why);
    if (strcmp(verdict, "ok") != 0) e->fails++;
    const double rate = ms > 0 ? (double)evals / (ms * 1e-3) : 0.0;
    const char *how = path == 2 ? "float+guard, tiled" : ei.tsp.matrix ? "matrix" : "double, on the fly";
    printf("%-16s %7u %14llu %-22s %12llu %12.4f %14.4g  %s%s%s\n", ei.label, ei.n, (unsigned long long)size,
           how, (unsigned long long)evals, evals ? ms / ((double)evals / (double)size) : 0.0, rate, verdict,
           *why ? ": " : "", why);
    fflush(stdout);
    if (jf) {
        fprintf(jf, "%s\n {\"instance\": ", (*erows)++ ? "," : "");
        cli_json_str(jf, ei.label);
        fprintf(jf,
                ", \"n\": %u, \"neighbours\": %llu, \"path\": \"%s\", \"evaluations\": %llu, \"ms\": %.6f, "
                "\"evals_per_s\": %.6g, \"check\": \"%s\"}",
                ei.n, (unsigned long long)size, how, (unsigned long long)evals, ms, rate, verdict);
    }
#endif
    bs_inst_free(&ei);
}

static void bs_eval_table(bs_env *e)
{
    const bs_opts *op = e->op;
    FILE *jf = e->jf;
    if (jf) fprintf(jf, ", \"eval_rate\": ");
    if (!op->eval_list || e->fails) {
        if (jf) fprintf(jf, "null");
        return;
    }
    printf(
        "\n2-opt evaluation rate on the GPU (ours: whole neighbourhood, move reduced on the GPU), %llu s per "
        "instance, 3 random tours, each move checked against a CPU scan\n",
        (unsigned long long)op->eval_seconds);
    printf("%-16s %7s %14s %-22s %12s %12s %14s  %s\n", "instance", "n", "neighbours", "distances", "evals",
           "ms/eval", "evals/s", "check");
    if (jf) fprintf(jf, "[");
    char el[1024];
    snprintf(el, sizeof el, "%s", op->eval_list);
    int erows = 0;
    for (char *tok = strtok(el, ","); tok; tok = strtok(NULL, ",")) bs_eval_row(e, tok, &erows);
    if (jf) fprintf(jf, "\n]");
}

/* ---- quality: the paper's ITS budget over seeds ---- */

static void bs_quality_row(bs_env *e, gpk_ctx *qctx, const bs_inst *in, int qrows)
{
    const bs_opts *op = e->op;
    FILE *jf = e->jf;
    gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
    o.algo = GPK_SEARCH_ITS;
    o.nb = in->nb;
    o.iters = op->its_iters;
    o.global_iters = (uint32_t)op->global;
    int64_t best = INT64_MAX;
    double sum = 0, ms = 0;
    uint64_t hits = 0, done = 0;
    const char *verdict = "ok";
    char why[256] = "";
    for (uint64_t sd = 1; sd <= op->seeds; sd++) {
        o.seed = sd;
        gpk_search_result res;
        double wall;
        verdict = bs_run(qctx, in, &o, &res, &wall, why, sizeof why);
        if (strcmp(verdict, "ok") == 0) {
            if (res.best < best) best = res.best;
            sum += (double)res.best;
            ms += wall;
            done++;
            if (in->bk.have && res.best <= in->bk.value) hits++;
            /* below a proven optimum: the check or the table is wrong */
            if (in->bk.have && res.best < in->bk.value && strcmp(in->bk.kind, "OPT") == 0) {
                snprintf(why, sizeof why, "seed %llu: %lld below the optimum %lld", (unsigned long long)sd,
                         (long long)res.best, (long long)in->bk.value);
                verdict = "FAIL";
            }
        }
        gpk_search_result_free(&res);
        if (strcmp(verdict, "ok") != 0) break;
    }
    if (strcmp(verdict, "ok") != 0) e->fails++;
    const double mean = done ? sum / (double)done : 0.0;
    const int gaps = in->bk.have && in->bk.value > 0 && done;
    char bks[24] = "-", gb[16] = "-", gm[16] = "-";
    if (in->bk.have) snprintf(bks, sizeof bks, "%lld", (long long)in->bk.value);
    if (gaps) {
        snprintf(gb, sizeof gb, "%.3f%%", bs_gap(&in->bk, best));
        snprintf(gm, sizeof gm, "%.3f%%", 100.0 * (mean - (double)in->bk.value) / (double)in->bk.value);
    }
    printf("%-16s %6u %-6s %12s %-4s %12lld %14.1f %9s %9s %3llu/%-2llu %9.3f  %s%s%s\n", in->label, in->n,
           gpk_neighbourhood_name(in->nb), bks, in->bk.have ? in->bk.kind : "", done ? (long long)best : 0,
           mean, gb, gm, (unsigned long long)hits, (unsigned long long)op->seeds,
           done ? ms / (double)done * 1e-3 : 0.0, verdict, *why ? ": " : "", why);
    fflush(stdout);
    if (!jf) return;
    fprintf(jf, "%s\n {\"instance\": ", qrows ? "," : "");
    cli_json_str(jf, in->label);
    fprintf(jf, ", \"n\": %u, \"nb\": \"%s\", \"runs\": %llu, \"best\": %lld, \"mean\": %.6f", in->n,
            gpk_neighbourhood_name(in->nb), (unsigned long long)done, done ? (long long)best : 0, mean);
    if (in->bk.have) {
        fprintf(jf, ", \"best_known\": %lld, \"best_known_kind\": ", (long long)in->bk.value);
        cli_json_str(jf, in->bk.kind);
    } else {
        fprintf(jf, ", \"best_known\": null, \"best_known_kind\": null");
    }
    if (gaps)
        fprintf(jf, ", \"gap_best_percent\": %.6f, \"gap_mean_percent\": %.6f", bs_gap(&in->bk, best),
                100.0 * (mean - (double)in->bk.value) / (double)in->bk.value);
    else fprintf(jf, ", \"gap_best_percent\": null, \"gap_mean_percent\": null");
    fprintf(jf, ", \"hits\": %llu, \"ms_per_run\": %.6f, \"check\": \"%s\"}", (unsigned long long)hits,
            done ? ms / (double)done : 0.0, verdict);
}

static void bs_quality_table(bs_env *e, const bs_inst *inst, int ninst)
{
    const bs_opts *op = e->op;
    FILE *jf = e->jf;
    if (jf) fprintf(jf, ", \"quality\": ");
    if (!op->quality || e->fails) {
        if (jf) fprintf(jf, "null");
        return;
    }
    if (jf)
        fprintf(jf, "{\"seeds\": %llu, \"iters\": %llu, \"global\": %llu, \"rows\": [",
                (unsigned long long)op->seeds, (unsigned long long)op->its_iters,
                (unsigned long long)op->global);
    /* on the GPU when there is one: the same moves as the CPU's (tested), sooner */
    gpk_ctx *qctx = e->gctx ? e->gctx : e->ctx;
    if (e->gctx)
        printf("\nQuality: iterated tabu search %llu x %llu, seeds 1..%llu, on the GPU (ours)\n",
               (unsigned long long)op->global, (unsigned long long)op->its_iters,
               (unsigned long long)op->seeds);
    else
        printf("\nQuality: iterated tabu search %llu x %llu, seeds 1..%llu, %d threads\n",
               (unsigned long long)op->global, (unsigned long long)op->its_iters,
               (unsigned long long)op->seeds, e->all);
    printf("%-16s %6s %-6s %12s %-4s %12s %14s %9s %9s %6s %9s  %s\n", "instance", "n", "nb", "best-known",
           "", "best", "mean", "gap best", "gap mean", "hits", "s/run", "check");
    for (int k = 0; k < ninst; k++) bs_quality_row(e, qctx, &inst[k], k);
    if (jf) fprintf(jf, "\n]}");
}

int cmd_bench_search(int argc, char **argv)
{
    bs_opts op = {bs_default_instances,
                  NULL,
                  NULL,
                  "tai256c",
                  NULL,
                  getenv("GPK_DATA"),
                  0,
                  100,
                  3,
                  10,
                  1000,
                  10,
                  1000,
                  1,
                  0,
                  0,
                  {0},
                  0,
                  0};
    if (!op.data || !*op.data) op.data = "../shared/data";
    bs_env e;
    memset(&e, 0, sizeof e);
    e.cmd = "bench search";
    e.op = &op;
    int rc = bs_parse_args(e.cmd, argc, argv, &op);
    if (rc >= 0) return rc;
    static bs_inst inst[BS_MAX_INST];
    int ninst = 0;
    rc = bs_load_all(e.cmd, &op, inst, &ninst);
    if (rc != CLI_OK) return rc;
    if (cli_ctx_create(e.cmd, &e.ctx, GPK_BACKEND_CPU, -1, (int)op.threads) != GPK_OK) {
        for (int k = 0; k < ninst; k++) bs_inst_free(&inst[k]);
        return CLI_FAIL;
    }
    gpk_ctx_info_get(e.ctx, &e.info);
    e.all = (int)e.info.threads;
    bs_open_gpu(&e);
    io_out jout;
    if (op.json && bs_json_open(&e, &jout) != 0) {
        if (e.gctx) gpk_ctx_destroy(e.gctx);
        gpk_ctx_destroy(e.ctx);
        for (int k = 0; k < ninst; k++) bs_inst_free(&inst[k]);
        return CLI_FAIL;
    }
    e.times = malloc((size_t)op.reps * sizeof *e.times);
    if (!e.times) {
        cli_error(e.cmd, "out of host memory");
        e.fails++;
    }
    bs_speed_table(&e, inst, ninst);
    bs_multi_table(&e);
    bs_eval_table(&e);
    bs_quality_table(&e, inst, ninst);
    if (e.jf) {
        char jerr[600];
        fprintf(e.jf, "}\n");
        if (io_out_commit(&jout, jerr, sizeof jerr) != 0) {
            cli_error(e.cmd, "%s", jerr);
            e.fails++;
        }
    }
    free(e.times);
    if (e.gctx) gpk_ctx_destroy(e.gctx);
    gpk_ctx_destroy(e.ctx);
    for (int k = 0; k < ninst; k++) bs_inst_free(&inst[k]);
    return e.fails ? CLI_FAIL : CLI_OK;
}
