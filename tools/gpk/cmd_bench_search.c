/* gpk bench search: Luong, Melab & Talbi 2009, Tables 1-4 (speed) and the
 * quality of the iterated tabu search, on the CPU of this build.
 *
 * The speed table times a fixed number of tabu iterations on one CPU thread
 * and on all of them: the paper's "CPU" column against the CPU's own
 * parallel counterpart of its GPU columns (the GPU search is not in this
 * version, so those columns say so). The quality table runs the paper's
 * ITS budget (10 x 1000) over several seeds and gives the gap to the
 * best-known value. Every run is checked: the reported best must equal the
 * problem's full evaluation of the returned solution, and the 1-thread and
 * all-thread runs must agree (search.h: same seed, same result with any
 * thread count). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gpk/search.h"

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
            "Reproduces Luong, Melab & Talbi 2009: the speed of one local-search iteration\n"
            "(Tables 1-4: the whole neighbourhood evaluated, the best admissible move\n"
            "applied) on 1 CPU thread and on all of them, and with --quality the solutions\n"
            "of the paper's iterated tabu search (10 x 1000 iterations) against the\n"
            "best-known values. Every run is checked by full re-evaluation (FAIL rows, exit\n"
            "status 1). The GPU columns read n/a: the GPU search is not in this version.\n"
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
            "  --quality         also the quality table: ITS on all threads per seed\n"
            "  --seeds N         quality table: seeds 1..N (default 10)\n"
            "  --its-iters N     quality table: tabu iterations per global iteration\n"
            "                    (default 1000, the paper's)\n"
            "  --global N        quality table: global iterations (default 10, the paper's)\n"
            "  --json FILE       write the machine, the configuration and every row\n",
            bs_default_instances);
}

/* ---- best-known values (the same files and rules as gpk qap / gpk tsp) ---- */

/* ---- instances ---- */

typedef struct {
    char label[96];  /* as printed: name, with ":nb" when not the default */
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
            fprintf(stderr, "gpk %s: note: '%s' is in neither %s/qaplib nor %s/tsplib: skipped\n", cmd, spec, data,
                    data);
            return 1;
        }
    }
    /* a neighbourhood the problem does not have is a usage error, as in gpk qap/tsp/ppp */
    const gpk_neighbourhood nb = in->nb;
    int ok = 1;
    if (nb != GPK_NB_DEFAULT) {
        if (kind == GPK_PROBLEM_QAP) ok = nb == GPK_NB_SWAP;
        else if (kind == GPK_PROBLEM_TSP) ok = nb == GPK_NB_SWAP || nb == GPK_NB_TWO_OPT;
        else ok = nb == GPK_NB_FLIP1 || nb == GPK_NB_FLIP2;
    }
    if (!ok) {
        cli_error(cmd, "'%s': not a neighbourhood of this problem", token);
        return CLI_USAGE;
    }
    in->nb = nb != GPK_NB_DEFAULT ? nb
             : kind == GPK_PROBLEM_QAP ? GPK_NB_SWAP
             : kind == GPK_PROBLEM_TSP ? GPK_NB_TWO_OPT
                                       : GPK_NB_FLIP1;
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
    const gpk_neighbourhood dflt = kind == GPK_PROBLEM_QAP ? GPK_NB_SWAP
                                   : kind == GPK_PROBLEM_TSP ? GPK_NB_TWO_OPT
                                                             : GPK_NB_FLIP1;
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

int cmd_bench_search(int argc, char **argv)
{
    const char *cmd = "bench search";
    const char *instances = bs_default_instances, *json = NULL;
    const char *data = getenv("GPK_DATA");
    if (!data || !*data) data = "../shared/data";
    uint64_t threads = 0, iters = 100, reps = 3, seeds = 10, its_iters = 1000, global = 10;
    int quality = 0;
    /* argv[0] is "bench", argv[1] "search" */
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        int m;
        if (cli_is_help(a)) {
            cmd_bench_search_help(stdout);
            return CLI_OK;
        }
        if (cli_flag(a, NULL, "--quality")) {
            quality = 1;
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--instances", &val)) != 0) {
            if (m < 0) return CLI_USAGE;
            if (!*val) {
                cli_error(cmd, "--instances: an empty list");
                return CLI_USAGE;
            }
            instances = val;
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--data", &val)) != 0) {
            if (m < 0) return CLI_USAGE;
            data = val;
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--json", &val)) != 0) {
            if (m < 0) return CLI_USAGE;
            json = val;
        } else {
            /* the numeric options: name, target, lo, hi */
            static const char *const names[] = {"--threads", "--iters", "--reps", "--seeds", "--its-iters",
                                                "--global"};
            uint64_t *const targets[] = {&threads, &iters, &reps, &seeds, &its_iters, &global};
            const uint64_t lo[] = {1, 1, 1, 1, 1, 1};
            const uint64_t hi[] = {1 << 16, UINT64_MAX, 1000, 100000, UINT64_MAX, UINT32_MAX};
            int k = 0;
            for (; k < 6; k++) {
                m = cli_opt_value(cmd, argc, argv, &i, NULL, names[k], &val);
                if (m < 0) return CLI_USAGE;
                if (m > 0) break;
            }
            if (k == 6) {
                cli_error(cmd, "unknown option '%s' (see gpk bench search --help)", a);
                return CLI_USAGE;
            }
            if (cli_parse_uint(val, lo[k], hi[k], targets[k]) != 0) {
                cli_error(cmd, "bad %s '%s' (an integer, 1 or more)", names[k], val);
                return CLI_USAGE;
            }
        }
    }

    /* Load every instance first: a bad token is reported before any timing. */
    static bs_inst inst[BS_MAX_INST];
    int ninst = 0, rc = CLI_OK;
    char list[4096];
    snprintf(list, sizeof list, "%s", instances);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        if (ninst >= BS_MAX_INST) {
            cli_error(cmd, "--instances: more than %d", BS_MAX_INST);
            rc = CLI_USAGE;
            break;
        }
        const int r = bs_load(cmd, tok, data, &inst[ninst]);
        if (r == 0) ninst++;
        else if (r != 1) {
            rc = r;
            break;
        }
    }
    if (rc == CLI_OK && ninst == 0) {
        cli_error(cmd, "no instance found (--data %s; or give files with --instances)", data);
        rc = CLI_FAIL;
    }
    if (rc != CLI_OK) {
        for (int k = 0; k < ninst; k++) bs_inst_free(&inst[k]);
        return rc;
    }

    gpk_ctx *ctx = NULL;
    if (cli_ctx_create(cmd, &ctx, GPK_BACKEND_CPU, -1, (int)threads) != GPK_OK) {
        for (int k = 0; k < ninst; k++) bs_inst_free(&inst[k]);
        return CLI_FAIL;
    }
    gpk_ctx_info info;
    gpk_ctx_info_get(ctx, &info);
    const int all = (int)info.threads;
    FILE *jf = NULL;
    if (json) {
        jf = fopen(json, "w");
        if (!jf) {
            cli_error(cmd, "cannot write '%s'", json);
            gpk_ctx_destroy(ctx);
            for (int k = 0; k < ninst; k++) bs_inst_free(&inst[k]);
            return CLI_FAIL;
        }
        fprintf(jf, "{\"command\": \"bench search\", \"gpk_version\": ");
        cli_json_str(jf, gpk_version());
        fprintf(jf, ", \"backend\": ");
        cli_json_ctx_info(jf, &info);
        fprintf(jf, ", \"threads\": %d, \"iters\": %llu, \"reps\": %llu, \"gpu\": null, \"speed\": [", all,
                (unsigned long long)iters, (unsigned long long)reps);
    }
    int fails = 0;
    double *times = malloc((size_t)reps * sizeof *times);
    if (!times) {
        cli_error(cmd, "out of host memory");
        fails++;
    }

    /* ---- speed: Tables 1-4 ---- */
    printf("Speed: %llu tabu iterations (seed 1), median of %llu; CPU = 1 thread, CPU-%d = %d threads\n",
           (unsigned long long)iters, (unsigned long long)reps, all, all);
    char hcpu[32];
    snprintf(hcpu, sizeof hcpu, "CPU-%d ms", all);
    printf("%-16s %6s %-6s %12s %10s %10s %9s %9s %7s  %-26s %s\n", "instance", "n", "nb", "neighbours", "CPU ms",
           hcpu, "Mmoves/s", "Mmoves/s", "accel", "GPU, GPU_tex", "check");
    int rows = 0;
    for (int k = 0; k < ninst && !fails; k++) {
        const bs_inst *in = &inst[k];
        gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
        o.algo = GPK_SEARCH_TABU;
        o.nb = in->nb;
        o.iters = iters;
        o.seed = 1;
        double med[2] = {0, 0};
        int64_t best[2] = {0, 0};
        uint64_t evaluated = 0;
        const char *verdict = "ok";
        char why[256] = "";
        for (int t = 0; t < 2 && strcmp(verdict, "ok") == 0; t++) {
            gpk_ctx_set_threads(ctx, t == 0 ? 1 : all);
            for (uint64_t r = 0; r < reps && strcmp(verdict, "ok") == 0; r++) {
                gpk_search_result res;
                verdict = bs_run(ctx, in, &o, &res, &times[r], why, sizeof why);
                best[t] = res.best;
                evaluated = res.evaluated;
                gpk_search_result_free(&res);
            }
            if (strcmp(verdict, "ok") == 0) med[t] = cli_median(times, (size_t)reps);
        }
        if (strcmp(verdict, "ok") == 0 && best[0] != best[1]) {
            snprintf(why, sizeof why, "1 thread found %lld, %d threads %lld (the search is deterministic)",
                     (long long)best[0], all, (long long)best[1]);
            verdict = "FAIL";
        }
        if (strcmp(verdict, "ok") != 0) fails++;
        /* the neighbourhood's size: moves evaluated per iteration */
        const uint64_t nsize = iters ? evaluated / iters : 0;
        const double r1 = med[0] > 0 ? (double)evaluated / med[0] / 1e3 : 0.0;
        const double rn = med[1] > 0 ? (double)evaluated / med[1] / 1e3 : 0.0;
        const double acc = med[1] > 0 ? med[0] / med[1] : 0.0;
        printf("%-16s %6u %-6s %12llu %10.3f %10.3f %9.2f %9.2f %6.2fx  %-26s %s%s%s\n", in->label, in->n,
               gpk_neighbourhood_name(in->nb), (unsigned long long)nsize, med[0], med[1], r1, rn, acc,
               "n/a (not in this version)", verdict, *why ? ": " : "", why);
        fflush(stdout);
        if (jf) {
            fprintf(jf, "%s\n {\"instance\": ", rows ? "," : "");
            cli_json_str(jf, in->label);
            fprintf(jf, ", \"n\": %u, \"nb\": \"%s\", \"neighbours\": %llu, \"evaluated\": %llu, "
                        "\"cpu1_ms\": %.6f, \"cpu_all_ms\": %.6f, \"cpu_all_threads\": %d, "
                        "\"cpu1_moves_per_s\": %.6g, \"cpu_all_moves_per_s\": %.6g, \"acceleration\": %.6f, "
                        "\"best\": %lld, \"gpu_ms\": null, \"gpu_tex_ms\": null, \"check\": \"%s\"}",
                    in->n, gpk_neighbourhood_name(in->nb), (unsigned long long)nsize, (unsigned long long)evaluated,
                    med[0], med[1], all, r1 * 1e6, rn * 1e6, acc, (long long)best[0], verdict);
        }
        rows++;
    }
    gpk_ctx_set_threads(ctx, all);

    /* ---- quality: the paper's ITS budget over seeds ---- */
    if (jf) fprintf(jf, "\n], \"quality\": ");
    if (quality && !fails) {
        if (jf)
            fprintf(jf, "{\"seeds\": %llu, \"iters\": %llu, \"global\": %llu, \"rows\": [",
                    (unsigned long long)seeds, (unsigned long long)its_iters, (unsigned long long)global);
        printf("\nQuality: iterated tabu search %llu x %llu, seeds 1..%llu, %d threads\n",
               (unsigned long long)global, (unsigned long long)its_iters, (unsigned long long)seeds, all);
        printf("%-16s %6s %-6s %12s %-4s %12s %14s %9s %9s %6s %9s  %s\n", "instance", "n", "nb", "best-known", "",
               "best", "mean", "gap best", "gap mean", "hits", "s/run", "check");
        int qrows = 0;
        for (int k = 0; k < ninst; k++) {
            const bs_inst *in = &inst[k];
            gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
            o.algo = GPK_SEARCH_ITS;
            o.nb = in->nb;
            o.iters = its_iters;
            o.global_iters = (uint32_t)global;
            int64_t best = INT64_MAX;
            double sum = 0, ms = 0;
            uint64_t hits = 0, done = 0;
            const char *verdict = "ok";
            char why[256] = "";
            for (uint64_t sd = 1; sd <= seeds; sd++) {
                o.seed = sd;
                gpk_search_result res;
                double wall;
                verdict = bs_run(ctx, in, &o, &res, &wall, why, sizeof why);
                if (strcmp(verdict, "ok") == 0) {
                    if (res.best < best) best = res.best;
                    sum += (double)res.best;
                    ms += wall;
                    done++;
                    if (in->bk.have && res.best <= in->bk.value) hits++;
                    if (in->bk.have && res.best < in->bk.value && in->pb.kind != GPK_PROBLEM_PPP) {
                        /* below a proven optimum: the check or the table is wrong */
                        if (strcmp(in->bk.kind, "OPT") == 0) {
                            snprintf(why, sizeof why, "seed %llu: %lld below the optimum %lld",
                                     (unsigned long long)sd, (long long)res.best, (long long)in->bk.value);
                            verdict = "FAIL";
                        }
                    }
                }
                gpk_search_result_free(&res);
                if (strcmp(verdict, "ok") != 0) break;
            }
            if (strcmp(verdict, "ok") != 0) fails++;
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
                   mean, gb, gm, (unsigned long long)hits, (unsigned long long)seeds,
                   done ? ms / (double)done * 1e-3 : 0.0, verdict, *why ? ": " : "", why);
            fflush(stdout);
            if (jf) {
                fprintf(jf, "%s\n {\"instance\": ", qrows ? "," : "");
                cli_json_str(jf, in->label);
                fprintf(jf, ", \"n\": %u, \"nb\": \"%s\", \"runs\": %llu, \"best\": %lld, \"mean\": %.6f",
                        in->n, gpk_neighbourhood_name(in->nb), (unsigned long long)done,
                        done ? (long long)best : 0, mean);
                if (in->bk.have) {
                    fprintf(jf, ", \"best_known\": %lld, \"best_known_kind\": ", (long long)in->bk.value);
                    cli_json_str(jf, in->bk.kind);
                } else {
                    fprintf(jf, ", \"best_known\": null, \"best_known_kind\": null");
                }
                if (gaps)
                    fprintf(jf, ", \"gap_best_percent\": %.6f, \"gap_mean_percent\": %.6f", bs_gap(&in->bk, best),
                            100.0 * (mean - (double)in->bk.value) / (double)in->bk.value);
                else
                    fprintf(jf, ", \"gap_best_percent\": null, \"gap_mean_percent\": null");
                fprintf(jf, ", \"hits\": %llu, \"ms_per_run\": %.6f, \"check\": \"%s\"}", (unsigned long long)hits,
                        done ? ms / (double)done : 0.0, verdict);
            }
            qrows++;
        }
        if (jf) fprintf(jf, "\n]}");
    } else if (jf) {
        fprintf(jf, "null");
    }
    if (jf) {
        fprintf(jf, "}\n");
        if (fclose(jf) != 0) {
            cli_error(cmd, "cannot write '%s'", json);
            fails++;
        }
    }
    free(times);
    gpk_ctx_destroy(ctx);
    for (int k = 0; k < ninst; k++) bs_inst_free(&inst[k]);
    return fails ? CLI_FAIL : CLI_OK;
}
