/* gpk info: which backends this binary has and what each one would run on. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "gpk/sort.h"

void cmd_info_help(FILE *f)
{
    fprintf(f,
            "usage: gpk info [--backend B] [--json]\n"
            "\n"
            "Shows the gpk version, the backends built in, and for each usable backend its\n"
            "device (gpk_ctx_info): name, platform, compute units, memory, CPU threads,\n"
            "and the instruction set of the CPU sort (avx512, avx2 or portable).\n"
            "\n"
            "  --backend B  only this backend (%s; auto: the one AUTO picks)\n"
            "  --json       print JSON on stdout\n",
            cli_backend_choices());
}

int cmd_info(int argc, char **argv)
{
    const char *cmd = "info";
    int json = 0, only = 0;
    gpk_backend want = GPK_BACKEND_AUTO;
    for (int i = 1; i < argc; i++) {
        int m;
        if (cli_is_help(argv[i])) {
            cmd_info_help(stdout);
            return CLI_OK;
        }
        if (cli_flag(argv[i], NULL, "--json")) {
            json = 1;
        } else if ((m = cli_opt_backend(cmd, argc, argv, &i, &want)) != 0) {
            if (m < 0) return CLI_USAGE;
            only = 1;
        } else {
            cli_error(cmd, "unknown option or argument '%s' (see gpk info --help)", argv[i]);
            return CLI_USAGE;
        }
    }

    /* every backend the library knows, in its order, or the one asked for */
    const int count = only ? 1 : gpk_backend_count();
    if (json) {
        printf("{\"gpk_version\": ");
        cli_json_str(stdout, gpk_version());
        printf(", \"backends_built\": ");
        cli_json_str(stdout, cli_backends_built());
        printf(", \"cpu_sort_simd\": ");
        cli_json_str(stdout, gpk_cpu_sort_simd());
        printf(", \"backends\": [");
    } else {
        printf("gpk %s, backends built: %s\n", gpk_version(), cli_backends_built());
    }
    int failures = 0, printed = 0;
    for (int k = 0; k < count; k++) {
        const gpk_backend b = only ? want : gpk_backend_at(k);
        /* Without --backend, a backend that is not usable is listed as such;
         * asked for by name, it is an error. */
        gpk_ctx *ctx = NULL;
        gpk_ctx_opts o = GPK_CTX_OPTS_INIT;
        o.backend = b;
        const int available = only || gpk_backend_available(b);
        gpk_status s = gpk_ctx_create_ex(&ctx, &o);
        const char *why = s != GPK_OK
            ? cli_backend_reason(gpk_backend_name(b),
                                 *gpk_last_error(NULL) ? gpk_last_error(NULL) : gpk_status_string(s))
            : "no device found";
        if (!available || s != GPK_OK) {
            if (!only) {
                /* listed with the reason (not built in, no driver, no device) */
                if (!json) printf("%-7s not available: %s\n", gpk_backend_name(b), why);
            } else {
                cli_error(cmd, "%s backend: %s", gpk_backend_name(b), why);
                failures++;
            }
            gpk_ctx_destroy(ctx);
            continue;
        }
        gpk_ctx_info info;
        gpk_ctx_info_get(ctx, &info);
        if (json) {
            if (printed) printf(", ");
            cli_json_ctx_info(stdout, &info);
        } else {
            printf("%-7s %s\n", gpk_backend_name(info.backend), info.device_name);
            printf("        platform %s, %u compute units, %.1f GiB memory", info.platform,
                   info.compute_units, (double)info.memory_bytes / (1024.0 * 1024.0 * 1024.0));
            if (info.backend == GPK_BACKEND_CPU) printf(", %u threads", info.threads);
            printf("\n");
            if (info.backend == GPK_BACKEND_CPU) printf("        sort simd %s\n", gpk_cpu_sort_simd());
        }
        printed++;
        gpk_ctx_destroy(ctx);
    }
    if (json) printf("]}\n");
    return failures ? CLI_FAIL : CLI_OK;
}
