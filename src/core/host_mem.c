/* Host memory (internal.h): how much the process may use; large host
 * arrays the library allocates or copies whole (the out-of-core sort's
 * buffers, the CUDA backend's staging). */
#define _GNU_SOURCE
#include "internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The smallest memory limit of the control groups from dir up to root
 * (every ancestor's limit applies), read from `file` in each; 0 when none
 * is set. "max" (v2) and v1's huge "unlimited" are no limit. */
static uint64_t cgroup_chain_limit(const char *root, const char *dir, const char *file)
{
    char path[PATH_MAX];
    uint64_t best = 0;
    snprintf(path, sizeof path, "%s%s", root, strcmp(dir, "/") == 0 ? "" : dir);
    const size_t rootlen = strlen(root);
    for (;;) {
        char fpath[PATH_MAX + 64];
        snprintf(fpath, sizeof fpath, "%s/%s", path, file);
        FILE *f = fopen(fpath, "re");
        if (f) {
            char line[64];
            if (fgets(line, sizeof line, f) && line[0] >= '0' && line[0] <= '9') {
                const unsigned long long v = strtoull(line, NULL, 10);
                if (v > 0 && v < ((uint64_t)1 << 60) && (best == 0 || v < best)) best = v;
            }
            fclose(f);
        }
        char *slash = strrchr(path, '/');
        if (strlen(path) <= rootlen || !slash || (size_t)(slash - path) < rootlen) break;
        *slash = '\0';
    }
    return best;
}

uint64_t gpk__host_memory_limit_at(const char *proc_cgroup, const char *sys_cgroup, uint64_t ram)
{
    uint64_t limit = ram;
    /* v2: "0::/path", the limit in memory.max; v1: "N:memory:/path" (or
     * with other controllers), in memory.limit_in_bytes. A path that is
     * not under the mount point seen here (another namespace) still finds
     * the limits from where it is. */
    FILE *f = fopen(proc_cgroup, "re");
    char line[PATH_MAX + 64];
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2 || c2[1] != '/') continue;
        *c1 = '\0', *c2 = '\0'; /* line: the hierarchy's number */
        const char *controllers = c1 + 1, *dir = c2 + 1;
        uint64_t v = 0;
        if (strcmp(line, "0") == 0 && *controllers == '\0') {
            v = cgroup_chain_limit(sys_cgroup, dir, "memory.max");
        } else {
            const char *m = strstr(controllers, "memory");
            if (m && (m == controllers || m[-1] == ',') && (m[6] == '\0' || m[6] == ',')) {
                char root[PATH_MAX];
                snprintf(root, sizeof root, "%s/%s", sys_cgroup, controllers);
                v = cgroup_chain_limit(root, dir, "memory.limit_in_bytes");
                if (!v) {
                    snprintf(root, sizeof root, "%s/memory", sys_cgroup);
                    v = cgroup_chain_limit(root, dir, "memory.limit_in_bytes");
                }
            }
        }
        if (v && (limit == 0 || v < limit)) limit = v;
    }
    if (f) fclose(f);
    return limit;
}

uint64_t gpk__host_memory_bytes(void)
{
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    const uint64_t ram = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    return gpk__host_memory_limit_at("/proc/self/cgroup", "/sys/fs/cgroup", ram);
}

void *gpk__host_alloc_large(size_t bytes)
{
    const size_t huge = (size_t)2 << 20;
    if (bytes < huge) return malloc(bytes ? bytes : 1);
    void *p = NULL;
    if (posix_memalign(&p, huge, bytes) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(p, bytes / huge * huge, MADV_HUGEPAGE); /* advice only: no huge pages is fine */
#endif
    return p;
}

/* One thread copies ~10 GB/s. One range a thread: a large memcpy streams
 * its stores past the cache (no read of the destination first). */
void gpk__host_copy(void *dst, const void *src, size_t bytes, int threads)
{
    if (threads < 1) threads = 1;
    const size_t min_piece = (size_t)1 << 20;
    size_t piece = (bytes / (size_t)threads + 4095) / 4096 * 4096;
    if (piece < min_piece) piece = min_piece;
    const long long pieces = (long long)((bytes + piece - 1) / piece);
#pragma omp parallel for schedule(static) num_threads(threads) if (pieces > 1)
    for (long long p = 0; p < pieces; p++) {
        const size_t off = (size_t)p * piece;
        memcpy((char *)dst + off, (const char *)src + off, bytes - off < piece ? bytes - off : piece);
    }
}
