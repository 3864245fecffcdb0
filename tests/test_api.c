#define _POSIX_C_SOURCE 200809L
/* Contexts, names, generators, the key mapping, the host memory limit
 * (fake control groups), arrays in one block, and bad input: every error
 * gives its status and a message and leaves the caller's arrays untouched.
 * Usage: test_api BACKEND (the bad-input part runs on that backend). */
#include "gpk/gen.h"
#include "gpk/sort.h"
#include "sort/radix_internal.h"
#include "testutil.h"
#include "hookargs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_names(void)
{
    TU_CHECK(strcmp(gpk_version(), GPK_VERSION_STRING) == 0, "version string");
    for (int t = GPK_U32; t <= GPK_F64; t++) {
        gpk_type back;
        TU_CHECK(gpk_type_parse(gpk_type_name((gpk_type)t), &back) == GPK_OK && back == (gpk_type)t,
                 "type name round trip %d", t);
    }
    gpk_type tt;
    TU_CHECK(gpk_type_parse("u16", &tt) == GPK_EINVAL, "u16 is not a type");
    gpk_backend b;
    TU_CHECK(gpk_backend_parse("OpenCL", &b) == GPK_OK && b == GPK_BACKEND_OPENCL, "backend parse");
    TU_CHECK(gpk_backend_parse("metal", &b) == GPK_EINVAL, "unknown backend rejected");
    /* the backend list: every backend once, each name parsing back to it,
     * AUTO outside; built as this build was configured */
    const int nb = gpk_backend_count();
    TU_CHECK(nb >= 3 && gpk_backend_at(0) == GPK_BACKEND_CPU, "backend list of %d", nb);
    TU_CHECK(gpk_backend_at(-1) == GPK_BACKEND_AUTO && gpk_backend_at(nb) == GPK_BACKEND_AUTO, "list ends");
    for (int i = 0; i < nb; i++) {
        const gpk_backend bi = gpk_backend_at(i);
        TU_CHECK(bi != GPK_BACKEND_AUTO && gpk_backend_parse(gpk_backend_name(bi), &b) == GPK_OK && b == bi,
                 "backend %d (%s) round trip", i, gpk_backend_name(bi));
        for (int j = 0; j < i; j++) TU_CHECK(gpk_backend_at(j) != bi, "backend %d listed twice", i);
        if (gpk_backend_available(bi))
            TU_CHECK(gpk_backend_built(bi), "%s usable, not built", gpk_backend_name(bi));
    }
    TU_CHECK(gpk_backend_built(GPK_BACKEND_CPU) && !gpk_backend_built(GPK_BACKEND_AUTO),
             "built: cpu, not auto");
#ifdef GPK_HAVE_CUDA
    TU_CHECK(gpk_backend_built(GPK_BACKEND_CUDA), "CUDA built");
#else
    TU_CHECK(!gpk_backend_built(GPK_BACKEND_CUDA), "CUDA not built");
#endif
#ifdef GPK_HAVE_OPENCL
    TU_CHECK(gpk_backend_built(GPK_BACKEND_OPENCL), "OpenCL built");
#else
    TU_CHECK(!gpk_backend_built(GPK_BACKEND_OPENCL), "OpenCL not built");
#endif
    for (int s = GPK_OK; s <= GPK_EFULL; s++)
        TU_CHECK(strlen(gpk_status_string((gpk_status)s)) > 0, "status string %d", s);
    TU_CHECK(gpk_backend_available(GPK_BACKEND_CPU), "cpu always available");
    /* device counts agree with availability */
    TU_CHECK(gpk_device_count(GPK_BACKEND_CPU) == 1, "CPU device count %d",
             gpk_device_count(GPK_BACKEND_CPU));
    TU_CHECK(gpk_device_count(GPK_BACKEND_AUTO) >= 1, "AUTO device count %d",
             gpk_device_count(GPK_BACKEND_AUTO));
    for (int b = GPK_BACKEND_CUDA; b <= GPK_BACKEND_OPENCL; b++)
        TU_CHECK((gpk_device_count((gpk_backend)b) > 0) == (gpk_backend_available((gpk_backend)b) != 0),
                 "%s: %d devices, available %d", gpk_backend_name((gpk_backend)b),
                 gpk_device_count((gpk_backend)b), gpk_backend_available((gpk_backend)b));
    TU_CHECK(gpk_device_count((gpk_backend)42) == 0, "an unknown backend has devices");
}

static void test_ctx(void)
{
    gpk_ctx *ctx = NULL;
    TU_CHECK(gpk_ctx_create(NULL, GPK_BACKEND_CPU) == GPK_EINVAL, "NULL ctx pointer");
    TU_CHECK(strlen(gpk_last_error(NULL)) > 0, "creation error message kept");
    TU_CHECK(gpk_ctx_create(&ctx, (gpk_backend)42) == GPK_EINVAL && ctx == NULL, "bad backend");
    gpk_ctx_opts o = GPK_CTX_OPTS_INIT;
    o.backend = GPK_BACKEND_CPU;
    o.threads = 3;
    TU_CHECK(gpk_ctx_create_ex(&ctx, &o) == GPK_OK, "cpu ctx: %s", gpk_last_error(NULL));
    if (ctx) {
        gpk_ctx_info info;
        TU_CHECK(gpk_ctx_info_get(ctx, &info) == GPK_OK, "info");
        TU_CHECK(info.backend == GPK_BACKEND_CPU && info.threads == 3 && info.memory_bytes > 0,
                 "cpu info: backend %d threads %u mem %llu", info.backend, info.threads,
                 (unsigned long long)info.memory_bytes);
        TU_CHECK(gpk_ctx_set_threads(ctx, -1) == GPK_EINVAL && strlen(gpk_last_error(ctx)) > 0,
                 "negative threads");
        gpk_ctx_destroy(ctx);
    }
    /* AUTO picks CUDA only when a device is usable; GPK_BACKEND overrides AUTO. */
    setenv("GPK_BACKEND", "cpu", 1);
    TU_CHECK(gpk_ctx_create(&ctx, GPK_BACKEND_AUTO) == GPK_OK && gpk_ctx_backend(ctx) == GPK_BACKEND_CPU,
             "GPK_BACKEND=cpu");
    gpk_ctx_destroy(ctx);
    setenv("GPK_BACKEND", "quantum", 1);
    TU_CHECK(gpk_ctx_create(&ctx, GPK_BACKEND_AUTO) == GPK_EINVAL, "GPK_BACKEND=quantum rejected");
    unsetenv("GPK_BACKEND");
    TU_CHECK(gpk_ctx_create(&ctx, GPK_BACKEND_AUTO) == GPK_OK, "auto");
    gpk_backend expect = gpk_backend_available(GPK_BACKEND_CUDA) ? GPK_BACKEND_CUDA : GPK_BACKEND_CPU;
    TU_CHECK(gpk_ctx_backend(ctx) == expect, "auto picked %s", gpk_backend_name(gpk_ctx_backend(ctx)));
    gpk_ctx_destroy(ctx);
}

static void test_generator(uint64_t seed)
{
    uint32_t a[1000], b[1000];
    gpk_generate(GPK_U32, GPK_DIST_UNIFORM, a, 1000, seed, 0);
    gpk_generate(GPK_U32, GPK_DIST_UNIFORM, b, 1000, seed, 0);
    TU_CHECK(memcmp(a, b, sizeof a) == 0, "same seed, same data");
    gpk_generate(GPK_U32, GPK_DIST_UNIFORM, b, 1000, seed + 1, 0);
    TU_CHECK(memcmp(a, b, sizeof a) != 0, "other seed, other data");
    gpk_rng r;
    gpk_rng_seed(&r, 1);
    /* Pinned: the portable generator must give these values on every machine. */
    uint64_t first = gpk_rng_next(&r);
    gpk_rng_seed(&r, 1);
    TU_CHECK(gpk_rng_next(&r) == first, "rng repeatable");
    gpk_generate(GPK_U32, GPK_DIST_FEW_BITS, a, 1000, seed, 5);
    int small = 1;
    for (int i = 0; i < 1000; i++) small &= a[i] < 32;
    TU_CHECK(small, "few-bits respects its bit count");
    float f[1000];
    gpk_generate(GPK_F32, GPK_DIST_UNIFORM, f, 1000, seed, 0);
    int in01 = 1;
    for (int i = 0; i < 1000; i++) in01 &= f[i] >= 0.0f && f[i] < 1.0f;
    TU_CHECK(in01, "f32 uniform in [0,1)");
    double dd[8];
    TU_CHECK(gpk_generate(GPK_F64, GPK_DIST_SORTED, dd, 8, seed, 0) == GPK_OK && dd[0] < dd[7], "sorted");
    TU_CHECK(gpk_generate(GPK_U32, GPK_DIST_FEW_BITS, a, 10, seed, 33) == GPK_EINVAL, "too many bits");
}

/* The mapping must be monotone in the documented total order and a bijection. */
static void test_mapping(uint64_t seed)
{
    const float fs[] = {-INFINITY, -1e30f, -1.0f, -1e-40f, -0.0f,    0.0f,
                        1e-45f,    1e-40f, 1.0f,  3.4e38f, INFINITY, NAN};
    for (size_t i = 0; i + 1 < sizeof fs / sizeof fs[0]; i++) {
        uint32_t x, y;
        memcpy(&x, &fs[i], 4);
        memcpy(&y, &fs[i + 1], 4);
        TU_CHECK(gpk__map_u32(GPK_F32, x) < gpk__map_u32(GPK_F32, y), "f32 order at %zu", i);
    }
    uint32_t negnan = 0xFFC00000u, posnan = 0x7FC00000u, inf = 0x7F800000u;
    TU_CHECK(gpk__map_u32(GPK_F32, negnan) > gpk__map_u32(GPK_F32, inf), "-NaN after +inf");
    TU_CHECK(gpk__map_u32(GPK_F32, posnan) > gpk__map_u32(GPK_F32, inf), "+NaN after +inf");
    const double ds[] = {-INFINITY, -1.0, -0.0, 0.0, 5e-324, 1.0, INFINITY, NAN};
    for (size_t i = 0; i + 1 < sizeof ds / sizeof ds[0]; i++) {
        uint64_t x, y;
        memcpy(&x, &ds[i], 8);
        memcpy(&y, &ds[i + 1], 8);
        TU_CHECK(gpk__map_u64(GPK_F64, x) < gpk__map_u64(GPK_F64, y), "f64 order at %zu", i);
    }
    TU_CHECK(gpk__map_u32(GPK_I32, (uint32_t)-5) < gpk__map_u32(GPK_I32, 3u), "i32 order");
    TU_CHECK(gpk__map_u64(GPK_I64, (uint64_t)-5) < gpk__map_u64(GPK_I64, 3u), "i64 order");
    gpk_rng r;
    gpk_rng_seed(&r, seed);
    int round = 1;
    for (int i = 0; i < 100000; i++) {
        uint64_t v = gpk_rng_next(&r);
        for (int t = GPK_U32; t <= GPK_F64; t++) {
            if (gpk_type_size((gpk_type)t) == 4)
                round &= gpk__unmap_u32((gpk_type)t, gpk__map_u32((gpk_type)t, (uint32_t)v)) == (uint32_t)v;
            else round &= gpk__unmap_u64((gpk_type)t, gpk__map_u64((gpk_type)t, v)) == v;
        }
    }
    TU_CHECK(round, "map/unmap round trip");
    unsigned b, e;
    gpk__radix_range_from_masks(0x00F0u & 0x0030u, 0x00F0u | 0x0030u, &b, &e);
    TU_CHECK(b == 6 && e == 8, "range from masks: [%u,%u)", b, e);
}

static void test_bad_input(gpk_backend be)
{
    gpk_ctx *ctx;
    if (gpk_ctx_create(&ctx, be) != GPK_OK) {
        printf("bad-input tests: backend %s unavailable, skipped\n", gpk_backend_name(be));
        return;
    }
    uint32_t keys[8] = {5, 3, 9, 1, 7, 2, 8, 6}, copy[8];
    uint32_t sigma[8] = {0};
    memcpy(copy, keys, sizeof keys);
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;

    TU_CHECK(gpk_sort_keys(NULL, GPK_U32, keys, 8, NULL) == GPK_EINVAL, "NULL ctx");
    TU_CHECK(gpk_sort_keys(ctx, GPK_U32, NULL, 8, NULL) == GPK_EINVAL && strstr(gpk_last_error(ctx), "NULL"),
             "NULL keys: %s", gpk_last_error(ctx));
    TU_CHECK(gpk_sort_keys(ctx, GPK_U32, NULL, 0, NULL) == GPK_OK, "n = 0 with NULL is fine");
    TU_CHECK(gpk_sort_keys(ctx, (gpk_type)9, keys, 8, NULL) == GPK_EINVAL, "bad type");
    TU_CHECK(gpk_sort_perm(ctx, GPK_U32, keys, NULL, 8, NULL) == GPK_EINVAL, "NULL sigma");
    TU_CHECK(gpk_sort_pairs(ctx, GPK_U32, keys, GPK_U32, NULL, 8, NULL) == GPK_EINVAL, "NULL values");
    o.key_bits = 33;
    TU_CHECK(gpk_sort_keys(ctx, GPK_U32, keys, 8, &o) == GPK_EINVAL &&
                 strstr(gpk_last_error(ctx), "key_bits"),
             "key_bits > 32: %s", gpk_last_error(ctx));
    o.key_bits = 65;
    TU_CHECK(gpk_sort_keys(ctx, GPK_U64, keys, 4, &o) == GPK_EINVAL, "key_bits > 64");
    o.key_bits = 0;
    o.radix_bits = 17;
    TU_CHECK(gpk_sort_keys(ctx, GPK_U32, keys, 8, &o) == GPK_EINVAL &&
                 strstr(gpk_last_error(ctx), "radix_bits"),
             "radix_bits 17: %s", gpk_last_error(ctx));
    TU_CHECK(memcmp(keys, copy, sizeof keys) == 0, "keys untouched after errors");

    /* An input far larger than any memory: a clear ENOMEM before any byte of
     * the (small, real) array is read or written. */
    size_t huge = (size_t)1 << 40;
    gpk_status s = gpk_sort_perm(ctx, GPK_U32, keys, sigma, huge, NULL);
    TU_CHECK(s == GPK_EINVAL && strstr(gpk_last_error(ctx), "gpk_sort_perm64"),
             "perm of 2^40 keys cannot have a u32 sigma: %s (%s)", gpk_status_string(s), gpk_last_error(ctx));
    s = gpk_sort_perm(ctx, GPK_U32, keys, sigma, (size_t)UINT32_MAX + 1, NULL);
    TU_CHECK(s == GPK_EINVAL && strstr(gpk_last_error(ctx), "gpk_sort_perm64"),
             "perm of 2^32 keys cannot have a u32 sigma: %s (%s)", gpk_status_string(s), gpk_last_error(ctx));
    uint64_t sigma64[8] = {0};
    /* 2^40 keys and 2^40 sigma entries from two stack arrays would share
     * memory: refused as overlapping before any size is considered */
    s = gpk_sort_perm64(ctx, GPK_U32, keys, sigma64, huge, NULL);
    TU_CHECK(s == GPK_EINVAL && strstr(gpk_last_error(ctx), "overlap"), "perm64 of 2^40 keys: %s (%s)",
             gpk_status_string(s), gpk_last_error(ctx));
    TU_CHECK(gpk_sort_perm64(ctx, GPK_U32, keys, NULL, 8, NULL) == GPK_EINVAL, "NULL sigma64");
    s = gpk_sort_keys(ctx, GPK_U32, keys, huge, NULL);
    TU_CHECK(s == GPK_ENOMEM && strlen(gpk_last_error(ctx)) > 0, "2^40 keys: %s (%s)", gpk_status_string(s),
             gpk_last_error(ctx));
    TU_CHECK(memcmp(keys, copy, sizeof keys) == 0, "keys untouched after ENOMEM");

    /* n = 1 and n = 0 work and set sigma. */
    sigma[0] = 99;
    TU_CHECK(gpk_sort_perm(ctx, GPK_U32, keys, sigma, 1, NULL) == GPK_OK && sigma[0] == 0, "n = 1 sigma");
    sigma64[0] = 99;
    TU_CHECK(gpk_sort_perm64(ctx, GPK_U32, keys, sigma64, 1, NULL) == GPK_OK && sigma64[0] == 0,
             "n = 1 sigma64");
    TU_CHECK(gpk_sort_keys(ctx, GPK_F64, keys, 0, NULL) == GPK_OK, "n = 0");
    TU_CHECK(gpk_sort_keys(ctx, GPK_U32, keys, 8, NULL) == GPK_OK && keys[0] == 1 && keys[7] == 9,
             "and a good call still works afterwards");
    TU_CHECK(strlen(gpk_last_error(ctx)) == 0, "success clears the message");
    gpk_ctx_destroy(ctx);
}

/* Arrays that share memory are refused (GPK_EINVAL, a message naming
 * them) and left as they were: the sorts would corrupt them. in == out of
 * gpk_sort_keys_to is the one sharing allowed. */
static void test_overlap(gpk_backend be, uint64_t seed)
{
    gpk_ctx *ctx;
    if (gpk_ctx_create(&ctx, be) != GPK_OK) {
        printf("overlap tests: backend %s unavailable, skipped\n", gpk_backend_name(be));
        return;
    }
    enum { N = 1000 };
    uint64_t z[N + 1], copy[N + 1];
    gpk_rng r;
    gpk_rng_seed(&r, seed);
    for (size_t i = 0; i <= N; i++) z[i] = gpk_rng_next(&r);
    memcpy(copy, z, sizeof z);
    uint32_t *z32 = (uint32_t *)(void *)z;
    gpk_status s;
#define REFUSED(call, what)                                                                  \
    s = (call);                                                                              \
    TU_CHECK(s == GPK_EINVAL && strstr(gpk_last_error(ctx), "overlap"), "%s: %s (%s)", what, \
             gpk_status_string(s), gpk_last_error(ctx));                                     \
    TU_CHECK(memcmp(z, copy, sizeof z) == 0, "%s: the arrays were changed", what);           \
    memcpy(z, copy, sizeof z)
    REFUSED(gpk_sort_pairs(ctx, GPK_U32, z32, GPK_U32, z32 + 1, N - 1, NULL), "pairs, values = keys + 1");
    REFUSED(gpk_sort_pairs(ctx, GPK_U32, z32 + 1, GPK_U32, z32, N - 1, NULL), "pairs, keys = values + 1");
    REFUSED(gpk_sort_pairs(ctx, GPK_U64, z, GPK_U64, z, N, NULL), "pairs, values = keys");
    REFUSED(gpk_sort_pairs(ctx, GPK_U64, z, GPK_U32, z32 + 3, 2, NULL),
            "pairs, values on the last key's bytes");
    REFUSED(gpk_sort_perm(ctx, GPK_U32, z32, z32, N, NULL), "perm, sigma = keys");
    REFUSED(gpk_sort_perm(ctx, GPK_U64, z, z32 + 1, N / 2, NULL), "perm, sigma inside the keys");
    REFUSED(gpk_sort_perm64(ctx, GPK_U64, z, z + 1, N, NULL), "perm64, sigma = keys + 1");
    REFUSED(gpk_sort_perm64(ctx, GPK_U32, z32 + 1, z, N, NULL), "perm64, keys inside sigma");
    REFUSED(gpk_sort_keys_to(ctx, GPK_U64, z, z + 1, N, NULL), "keys_to, out = in + 1");
    {
        /* the one shard of a CPU context: its keys_out inside its keys */
        gpk_ctx_opts co = GPK_CTX_OPTS_INIT;
        co.backend = GPK_BACKEND_CPU; /* host shards: AUTO would take a GPU where there is one */
        gpk_ctx *cpu = NULL;
        if (be == GPK_BACKEND_CPU && gpk_ctx_create_ex(&cpu, &co) == GPK_OK) {
            gpk_shard sh;
            memset(&sh, 0, sizeof sh);
            sh.keys = z;
            sh.n = N / 2;
            TU_CHECK(gpk_sort_shards_keys(cpu, GPK_U64, &sh, NULL) == GPK_OK, "shards: temp query: %s",
                     gpk_last_error(cpu));
            unsigned char *temp = malloc(sh.temp_bytes);
            sh.temp = temp;
            sh.keys_out = z + N / 4;
            s = gpk_sort_shards_keys(cpu, GPK_U64, &sh, NULL);
            TU_CHECK(s == GPK_EINVAL && strstr(gpk_last_error(cpu), "overlap"),
                     "shards, keys_out inside keys: %s (%s)", gpk_status_string(s), gpk_last_error(cpu));
            TU_CHECK(memcmp(z, copy, sizeof z) == 0, "shards: the arrays were changed");
            sh.keys_out = z + N / 2; /* adjacent, not overlapping: sorts */
            s = gpk_sort_shards_keys(cpu, GPK_U64, &sh, NULL);
            TU_CHECK(s == GPK_OK, "shards, adjacent buffers: %s (%s)", gpk_status_string(s),
                     gpk_last_error(cpu));
            free(temp);
            memcpy(z, copy, sizeof z);
        }
        gpk_ctx_destroy(cpu);
    }
#undef REFUSED
    /* Adjacent arrays are fine, and sorted. */
    s = gpk_sort_pairs(ctx, GPK_U32, z32, GPK_U32, z32 + N, N, NULL);
    int ok = s == GPK_OK;
    for (size_t i = 1; ok && i < N; i++) ok = z32[i - 1] <= z32[i];
    TU_CHECK(ok, "pairs in adjacent halves: %s (%s)", gpk_status_string(s), gpk_last_error(ctx));
    memcpy(z, copy, sizeof z);
    s = gpk_sort_perm(ctx, GPK_U32, z32, z32 + N, N, NULL);
    ok = s == GPK_OK;
    for (size_t j = 0; ok && j < N; j++)
        ok = z32[N + j] < N && z32[j] == ((const uint32_t *)(const void *)copy)[z32[N + j]];
    TU_CHECK(ok, "perm in adjacent halves: %s (%s)", gpk_status_string(s), gpk_last_error(ctx));
    gpk_ctx_destroy(ctx);
}

/* Writes text to dir/rel, making the directories on the way. */
static void put(const char *dir, const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    for (char *p = path + strlen(dir) + 1; (p = strchr(p, '/')) != NULL; p++) {
        *p = '\0';
        mkdir(path, 0700);
        *p = '/';
    }
    FILE *f = fopen(path, "w");
    TU_CHECK(f != NULL, "cannot write %s", path);
    if (f) fputs(text, f), fclose(f);
}

/* The host memory limit is the smaller of the machine's and the control
 * group's (v2 memory.max, v1 memory.limit_in_bytes, ancestors included),
 * read from fake /proc/self/cgroup and /sys/fs/cgroup trees. */
static void test_host_memory(void)
{
    char dir[] = "/tmp/gpk_test_cgroup.XXXXXX";
    if (!mkdtemp(dir)) {
        TU_CHECK(0, "%s", "mkdtemp");
        return;
    }
    char proc[600], sys[600];
    snprintf(proc, sizeof proc, "%s/cgroup", dir);
    snprintf(sys, sizeof sys, "%s/sys", dir);
    const uint64_t G = 1ull << 30, ram = 16 * G;
    struct {
        const char *proc, *file1, *text1, *file2, *text2;
        uint64_t want;
    } cases[] = {
        /* v2: the group's own limit, then an ancestor's smaller one, "max" */
        {"0::/user/job\n", "sys/user/memory.max", "max\n", "sys/user/job/memory.max", "3221225472\n", 3 * G},
        {"0::/user/job\n", "sys/user/memory.max", "1073741824\n", "sys/user/job/memory.max", "max\n", G},
        {"0::/user/job\n", "sys/user/memory.max", "max\n", "sys/user/job/memory.max", "max\n", ram},
        /* larger than the machine: the machine's */
        {"0::/big\n", "sys/big/memory.max", "68719476736\n", "sys/none", "", ram},
        /* v1: the memory controller alone, among others, and "unlimited" */
        {"5:cpu,cpuacct:/x\n4:memory:/grp\n", "sys/memory/grp/memory.limit_in_bytes", "2147483648\n",
         "sys/none", "", 2 * G},
        {"3:cpuset,memory:/g\n", "sys/cpuset,memory/g/memory.limit_in_bytes", "1610612736\n", "sys/none", "",
         3 * G / 2},
        {"4:memory:/grp\n", "sys/memory/grp/memory.limit_in_bytes", "9223372036854771712\n", "sys/none", "",
         ram},
        /* no control group file at all */
        {NULL, "sys/none", "", "sys/none", "", ram},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char cmd[700];
        snprintf(cmd, sizeof cmd, "rm -rf '%s/sys' '%s'", dir, proc);
        TU_CHECK(system(cmd) == 0, "%s", cmd);
        if (cases[i].proc) put(dir, "cgroup", cases[i].proc);
        put(dir, cases[i].file1, cases[i].text1);
        put(dir, cases[i].file2, cases[i].text2);
        const uint64_t got = gpk__host_memory_limit_at(proc, sys, ram);
        TU_CHECK(got == cases[i].want, "host memory, case %zu (%s): %llu bytes, want %llu", i,
                 cases[i].proc ? cases[i].proc : "no cgroup file", (unsigned long long)got,
                 (unsigned long long)cases[i].want);
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    TU_CHECK(system(cmd) == 0, "%s", cmd);
    /* this process: at most the machine's memory, and what a CPU context says */
    const uint64_t here = gpk__host_memory_bytes();
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    TU_CHECK(here > 0 && here <= (uint64_t)pages * (uint64_t)page, "host memory %llu of %llu",
             (unsigned long long)here, (unsigned long long)pages * (unsigned long long)page);
    gpk_ctx *ctx = NULL;
    if (gpk_ctx_create(&ctx, GPK_BACKEND_CPU) == GPK_OK) {
        gpk_ctx_info info;
        gpk_ctx_info_get(ctx, &info);
        TU_CHECK(info.memory_bytes == here, "a CPU context's memory_bytes %llu, the limit %llu",
                 (unsigned long long)info.memory_bytes, (unsigned long long)here);
        gpk_ctx_destroy(ctx);
    }
}

/* Arrays in one block (gpk__alloc_parts): each on its own 64-byte line,
 * in order and apart, zeroed when asked, NULL for no elements; sizes that
 * overflow size_t give NULL. */
static void test_alloc_parts(void)
{
    for (int zero = 0; zero <= 1; zero++) {
        uint32_t *a = NULL;
        double *b = NULL;
        uint8_t *c = NULL, *none = NULL;
        gpk__part p[] = {GPK__PART(a, 3), GPK__PART(none, 0), GPK__PART(b, 100), GPK__PART(c, 65)};
        void *block = gpk__alloc_parts(p, sizeof p / sizeof *p, zero);
        TU_CHECK(block != NULL, "alloc_parts (zero %d): no block", zero);
        if (!block) continue;
        a = p[0].at, none = p[1].at, b = p[2].at, c = p[3].at;
        TU_CHECK(none == NULL, "alloc_parts (zero %d): a part of no elements is not NULL", zero);
        TU_CHECK((uintptr_t)a % 64 == 0 && (uintptr_t)b % 64 == 0 && (uintptr_t)c % 64 == 0,
                 "alloc_parts (zero %d): a part off its line", zero);
        TU_CHECK((char *)a >= (char *)block && (char *)(a + 3) <= (char *)b && (char *)(b + 100) <= (char *)c,
                 "alloc_parts (zero %d): parts out of order or overlapping", zero);
        int zeroed = 1;
        for (int i = 0; zero && i < 65; i++)
            zeroed &= c[i] == 0 && (i >= 3 || a[i] == 0) && (i >= 64 || b[i] == 0);
        TU_CHECK(zeroed, "%s", "alloc_parts: a zeroed block has a non-zero byte");
        memset(a, 1, 3 * sizeof *a), memset(b, 2, 100 * sizeof *b), memset(c, 3, 65); /* all writable */
        free(block);
    }
    uint64_t *big = NULL;
    gpk__part over[] = {GPK__PART(big, SIZE_MAX / 16), GPK__PART(big, SIZE_MAX / 16)},
              huge[] = {GPK__PART(big, SIZE_MAX / 4)};
    TU_CHECK(gpk__alloc_parts(over, 2, 0) == NULL, "%s", "alloc_parts: a sum past SIZE_MAX is not NULL");
    TU_CHECK(gpk__alloc_parts(huge, 1, 1) == NULL, "%s",
             "alloc_parts: count x elem past SIZE_MAX is not NULL");
}

/* key_bits = GPK_KEY_BITS_ALL: every bit, in the host API (radix and AUTO)
 * and the reference, the same order as the default detection; few-bit keys
 * too (where detection would sort fewer bits). */
static void test_key_bits_all(gpk_backend be, uint64_t seed)
{
    gpk_ctx *ctx;
    if (gpk_ctx_create(&ctx, be) != GPK_OK) return;
    const gpk_type types[] = {GPK_U32, GPK_F32, GPK_I64, GPK_F64};
    const gpk_dist dists[] = {GPK_DIST_RANDOM_BITS, GPK_DIST_FEW_BITS};
    const size_t n = 5000;
    uint64_t *a = malloc(8 * n), *b = malloc(8 * n), *ref = malloc(8 * n);
    for (size_t ti = 0; ti < 4 && a && b && ref; ti++)
        for (size_t di = 0; di < 2; di++) {
            const gpk_type t = types[ti];
            const size_t bytes = n * gpk_type_size(t);
            TU_CHECK(gpk_generate(t, dists[di], ref, n, seed + ti, 0) == GPK_OK, "generate");
            memcpy(a, ref, bytes);
            memcpy(b, ref, bytes);
            TU_CHECK(gpk_sort_reference(t, ref, 0, NULL, NULL, n, GPK_KEY_BITS_ALL) == GPK_OK,
                     "reference, ALL");
            gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
            o.key_bits = GPK_KEY_BITS_ALL;
            o.algorithm = GPK_SORT_RADIX;
            gpk_status s = gpk_sort_keys(ctx, t, a, n, &o);
            TU_CHECK(s == GPK_OK && memcmp(a, ref, bytes) == 0, "%s dist %d, radix with key_bits ALL: %s",
                     gpk_type_name(t), (int)dists[di], gpk_last_error(ctx));
            o.algorithm = GPK_SORT_AUTO;
            s = gpk_sort_keys(ctx, t, b, n, &o);
            TU_CHECK(s == GPK_OK && memcmp(b, ref, bytes) == 0, "%s dist %d, AUTO with key_bits ALL: %s",
                     gpk_type_name(t), (int)dists[di], gpk_last_error(ctx));
        }
    free(a);
    free(b);
    free(ref);
    gpk_ctx_destroy(ctx);
}

int main(int argc, char **argv)
{
    hook_args(&argc, argv); /* e.g. multi_min=0 (scripts/gpu-stages.sh multi) */
    gpk_backend be = GPK_BACKEND_CPU;
    if (argc > 1 && gpk_backend_parse(argv[1], &be) != GPK_OK) return 2;
    uint64_t seed = tu_seed();
    test_names();
    test_ctx();
    test_generator(seed);
    test_mapping(seed);
    test_host_memory();
    test_alloc_parts();
    test_bad_input(be);
    test_overlap(be, seed);
    test_key_bits_all(be, seed);
    return tu_finish("test_api");
}
