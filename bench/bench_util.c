/* Helpers shared by the gpk bench commands (bench_util.h). */
#include "bench_util.h"

#include <stdio.h>
#include <string.h>

int bench_for_each_item(const char *list, int (*fn)(const char *, void *), void *arg)
{
    char buf[1024];
    if (strlen(list) >= sizeof buf) return -1;
    strcpy(buf, list);
    char *p = buf;
    for (;;) {
        char *comma = strchr(p, ',');
        if (comma) *comma = '\0';
        if (!*p || fn(p, arg) != 0) return -1;
        if (!comma) return 0;
        p = comma + 1;
    }
}

void bench_machine(char *host, size_t host_len, char *model, size_t model_len, int *cores,
                   unsigned long long *mem_bytes)
{
    snprintf(host, host_len, "unknown");
    snprintf(model, model_len, "unknown");
    *cores = 0;
    *mem_bytes = 0;
    char line[512];
    FILE *f = fopen("/proc/sys/kernel/hostname", "r");
    if (f) {
        if (fgets(line, sizeof line, f)) {
            line[strcspn(line, "\n")] = '\0';
            snprintf(host, host_len, "%s", line);
        }
        fclose(f);
    }
    f = fopen("/proc/cpuinfo", "r");
    if (f) {
        int have_model = 0;
        while (fgets(line, sizeof line, f)) {
            if (strncmp(line, "processor", 9) == 0) (*cores)++;
            const char *p = strchr(line, ':');
            if (!have_model && p && strncmp(line, "model name", 10) == 0) {
                for (p++; *p == ' '; p++) {}
                snprintf(model, model_len, "%s", p);
                model[strcspn(model, "\n")] = '\0';
                have_model = 1;
            }
        }
        fclose(f);
    }
    f = fopen("/proc/meminfo", "r");
    if (f) {
        unsigned long long kb = 0;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "MemTotal: %llu kB", &kb) == 1) break;
        fclose(f);
        *mem_bytes = kb * 1024ull;
    }
}
