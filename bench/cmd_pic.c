/* gpk pic: the particle-in-cell sorting test. The test itself is
 * examples/pic.c, compiled here without its main() so that the example and
 * the CLI run the same code. */
#define GPK_PIC_NO_MAIN
#include "pic.c"

#include "cli.h"
#include "bench_hooks.h"

/* Device-resident timing for GPU backends through the bench hooks: upload
 * once, time the sorts alone. The CPU has no transfers to leave out. */
static gpk_status pic_device_timer(gpk_ctx *ctx, const uint32_t *keys, uint32_t *work, uint32_t *sigma,
                                   size_t n, unsigned key_bits, unsigned radix_bits, int reps, double *ms)
{
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    o.key_bits = key_bits;
    o.radix_bits = radix_bits;
    memcpy(work, keys, n * sizeof *keys);
    return gpk__bench_radix(ctx, GPK_U32, work, 0, NULL, sigma, n, &o, reps, ms);
}

void cmd_pic_help(FILE *f)
{
    fprintf(f,
            "usage: gpk pic [--n N] [--backend B] [--reps R] [--threads T] [--device D] [--json]\n"
            "\n"
            "The particle-in-cell sort of Helluy (2011), Section 4.2 / Table 7: N particles on a\n"
            "32x32 periodic grid (van der Corput positions and velocities), a first sort, a move\n"
            "by less than one cell, then the weakly disordered second sort with permutation,\n"
            "timed with p = 2 passes (key bits 10, radix bits 5) against p = 6 (30, 5).\n"
            "Checks that every particle ends in the cell its key names.\n"
            "\n"
            "  --n N        particles (default 8M = 8*2^20; 2^20, 1M, 1048576 all work)\n"
            "  --backend B  auto (default), cpu, cuda, opencl\n"
            "  --reps R     timed repetitions of each second sort, median kept (default 5)\n"
            "  --threads T  CPU threads (default: all cores)\n"
            "  --device D   CUDA / OpenCL device index\n"
            "  --json       print the result as JSON on stdout\n"
            "\n"
            "Times: host-to-host gpk_sort_perm calls (on a GPU they include the transfers), and\n"
            "on GPU backends also the device-resident sorts alone (uploads excluded).\n");
}

int cmd_pic(int argc, char **argv)
{
    const char *cmd = "pic";
    pic_opts o = PIC_OPTS_INIT;
    o.device_timer = pic_device_timer;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        int m;
        if (cli_is_help(a)) {
            cmd_pic_help(stdout);
            return CLI_OK;
        }
        if (cli_flag(a, NULL, "--json")) {
            json = 1;
            continue;
        }
        if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--n", &val)) != 0) {
            uint64_t v;
            if (m < 0) return CLI_USAGE;
            if (cli_parse_size(val, &v) != 0 || v > UINT32_MAX) {
                cli_error(cmd, "bad --n '%s' (a count up to 2^32-1, e.g. 8M, 2^23)", val);
                return CLI_USAGE;
            }
            o.n = (size_t)v;
        } else if ((m = cli_opt_backend(cmd, argc, argv, &i, &o.backend)) != 0) {
            if (m < 0) return CLI_USAGE;
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--reps", &val)) != 0) {
            uint64_t v;
            if (m < 0) return CLI_USAGE;
            if (cli_parse_uint(val, 1, 100000, &v) != 0) {
                cli_error(cmd, "bad --reps '%s' (1 or more)", val);
                return CLI_USAGE;
            }
            o.reps = (int)v;
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--threads", &val)) != 0) {
            uint64_t v;
            if (m < 0) return CLI_USAGE;
            if (cli_parse_uint(val, 0, 1 << 20, &v) != 0) {
                cli_error(cmd, "bad --threads '%s'", val);
                return CLI_USAGE;
            }
            o.threads = (int)v;
        } else if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--device", &val)) != 0) {
            uint64_t v;
            if (m < 0) return CLI_USAGE;
            if (cli_parse_uint(val, 0, 1 << 20, &v) != 0) {
                cli_error(cmd, "bad --device '%s'", val);
                return CLI_USAGE;
            }
            o.device = (int)v;
        } else {
            cli_error(cmd, "unknown option or argument '%s' (see gpk pic --help)", a);
            return CLI_USAGE;
        }
    }

    if (o.device >= 0 && o.backend == GPK_BACKEND_CPU) {
        cli_error(cmd, "--device selects a CUDA or OpenCL device; the cpu backend has none");
        return CLI_USAGE;
    }
    pic_result r;
    int rc = pic_run(&o, &r);
    if (rc == 2) {
        cli_error(cmd, "%s", r.msg);
        return CLI_FAIL;
    }
    fprintf(stderr, "gpk pic: %s (%s) N=%zu, %.1f%% of particles moved cell\n",
            gpk_backend_name(r.info.backend), r.info.device_name, r.n, 100.0 * r.moved);
    fprintf(stderr,
            "gpk pic: second sort, host-to-host:    p=6 %9.3f ms, p=2 %9.3f ms, "
            "speedup %.2fx\n",
            r.ms_p6, r.ms_p2, r.speedup);
    if (r.have_dev)
        fprintf(stderr,
                "gpk pic: second sort, device-resident: p=6 %9.3f ms, p=2 %9.3f ms, "
                "speedup %.2fx\n",
                r.dev_ms_p6, r.dev_ms_p2, r.dev_speedup);
    fprintf(stderr, "gpk pic: check %s\n", rc == 0 ? "ok" : "FAILED");
    if (json) {
        printf("{\"command\": \"pic\", \"gpk_version\": ");
        cli_json_str(stdout, gpk_version());
        printf(", \"backend\": ");
        cli_json_ctx_info(stdout, &r.info);
        printf(", \"n\": %zu, \"grid\": 32, \"reps\": %d, \"ms_p6\": %.6f, \"ms_p2\": %.6f, "
               "\"speedup\": %.4f, \"moved_fraction\": %.6f, \"unsorted_fraction\": %.6f, "
               "\"check\": %s",
               r.n, o.reps, r.ms_p6, r.ms_p2, r.speedup, r.moved, r.unsorted,
               rc == 0 ? "\"ok\"" : "\"failed\"");
        if (r.have_dev)
            printf(", \"device_ms_p6\": %.6f, \"device_ms_p2\": %.6f, \"device_speedup\": %.4f", r.dev_ms_p6,
                   r.dev_ms_p2, r.dev_speedup);
        if (rc != 0) {
            printf(", \"error\": ");
            cli_json_str(stdout, r.msg);
        }
        printf("}\n");
    }
    if (rc != 0) {
        cli_error(cmd, "check FAILED: %s", r.msg);
        return CLI_FAIL;
    }
    return CLI_OK;
}
