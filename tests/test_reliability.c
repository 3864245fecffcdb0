/* The library's promises about threads (issue 19, items 1 and 4):
 *   threads    GPK_THREADS is validated, the thread count is clamped, and a
 *              team that cannot be created is a status, not libgomp ending
 *              the process;
 *   opencl     contexts created on 8 threads at once all work (backend
 *              discovery is one-time and thread-safe) and sort correctly.
 * usage: test_reliability threads|opencl
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpk/sort.h"
#include "testutil.h"

static uint64_t seed;

/* xorshift64* */
static uint64_t next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

/* Sorts n random u32 keys on ctx and holds them to the reference. */
static int sort_matches(gpk_ctx *ctx, size_t n, uint64_t s)
{
    uint32_t *a = malloc((n ? n : 1) * sizeof *a), *b = malloc((n ? n : 1) * sizeof *b);
    if (!a || !b) {
        free(a);
        free(b);
        return 0;
    }
    s |= 1;
    for (size_t i = 0; i < n; i++) a[i] = b[i] = (uint32_t)next(&s);
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    int ok = gpk_sort_keys(ctx, GPK_U32, a, n, &o) == GPK_OK &&
             gpk_sort_reference(GPK_U32, b, 0, NULL, NULL, n, 0) == GPK_OK && memcmp(a, b, n * sizeof *a) == 0;
    free(a);
    free(b);
    return ok;
}

/* ---- threads -------------------------------------------------------------------------------- */

static gpk_status create_cpu(gpk_ctx **ctx, int threads)
{
    gpk_ctx_opts o = GPK_CTX_OPTS_INIT;
    o.backend = GPK_BACKEND_CPU;
    o.threads = threads;
    return gpk_ctx_create_ex(ctx, &o);
}

/* Run in a child that has OMP_STACKSIZE=1G in its environment from the
 * start (so libgomp uses it too) and a 3 GB address-space limit: a team
 * of 8 cannot be created. Exits 0 when the library said so with a status
 * (or managed); libgomp's "Thread creation failed" would exit 1. */
static int thread_limit_child(void)
{
    gpk_ctx *ctx = NULL;
    gpk_status s = create_cpu(&ctx, 8);
    if (s != GPK_OK) {
        printf("child: gpk_ctx_create(threads 8) -> %s: %s\n", gpk_status_string(s), gpk_last_error(NULL));
        return s == GPK_ENOMEM && strstr(gpk_last_error(NULL), "threads") ? 0 : 3;
    }
    gpk_ctx_info info;
    gpk_ctx_info_get(ctx, &info);
    printf("child: context with %u threads\n", info.threads);
    int ok = sort_matches(ctx, (size_t)1 << 20, seed);
    gpk_ctx_destroy(ctx);
    return ok ? 0 : 4;
}

static void test_threads(void)
{
    const int cores = (int)sysconf(_SC_NPROCESSORS_ONLN) > 0 ? (int)sysconf(_SC_NPROCESSORS_ONLN) : 1;
    gpk_ctx *ctx = NULL;
    gpk_ctx_info info;

    /* Invalid GPK_THREADS values are refused with a message naming them. */
    static const char *bad[] = {"abc", "-5", "3x", " ", "1e3", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("GPK_THREADS", bad[i], 1);
        gpk_status s = create_cpu(&ctx, 0);
        TU_CHECK(s == GPK_EINVAL && !ctx, "GPK_THREADS='%s': status %s, expected invalid argument", bad[i],
                 gpk_status_string(s));
        TU_CHECK(strstr(gpk_last_error(NULL), "GPK_THREADS") != NULL, "GPK_THREADS='%s': message '%s'", bad[i],
                 gpk_last_error(NULL));
        gpk_ctx_destroy(ctx);
        ctx = NULL;
    }
    /* An explicit count does not read the environment. */
    TU_CHECK(create_cpu(&ctx, 1) == GPK_OK, "threads 1 with GPK_THREADS=%s: %s", bad[0], gpk_last_error(NULL));
    gpk_ctx_destroy(ctx);
    ctx = NULL;
    /* Valid values, and the clamp. */
    static const struct { const char *env; int want; } good[] = {{"1", 1}, {"2", 2}, {"0", -1}, {"", -1}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        setenv("GPK_THREADS", good[i].env, 1);
        TU_CHECK(create_cpu(&ctx, 0) == GPK_OK, "GPK_THREADS='%s': %s", good[i].env, gpk_last_error(NULL));
        if (ctx) {
            gpk_ctx_info_get(ctx, &info);
            const int want = good[i].want > 0 ? good[i].want : cores;
            TU_CHECK((int)info.threads == want, "GPK_THREADS='%s': %u threads, expected %d", good[i].env,
                     info.threads, want);
            gpk_ctx_destroy(ctx);
            ctx = NULL;
        }
    }
    unsetenv("GPK_THREADS");
    static const int huge[] = {1 << 20, 100000, 4 * 64 + 1};
    for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
        TU_CHECK(create_cpu(&ctx, huge[i]) == GPK_OK, "threads %d: %s", huge[i], gpk_last_error(NULL));
        if (!ctx) continue;
        gpk_ctx_info_get(ctx, &info);
        TU_CHECK(info.threads >= 1 && (int)info.threads <= 4 * cores, "threads %d: clamped to %u, cores %d",
                 huge[i], info.threads, cores);
        TU_CHECK(sort_matches(ctx, 100003, seed + i), "sort with %u threads", info.threads);
        TU_CHECK(gpk_ctx_set_threads(ctx, huge[i]) == GPK_OK, "set_threads %d", huge[i]);
        gpk_ctx_info_get(ctx, &info);
        TU_CHECK((int)info.threads <= 4 * cores, "set_threads %d: %u", huge[i], info.threads);
        TU_CHECK(gpk_ctx_set_threads(ctx, -1) == GPK_EINVAL, "set_threads -1 accepted");
        gpk_ctx_destroy(ctx);
        ctx = NULL;
    }

    /* A team that cannot be created: a status, not an exit. */
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit rl = {(rlim_t)3 << 30, (rlim_t)3 << 30};
        setrlimit(RLIMIT_AS, &rl);
        setenv("OMP_STACKSIZE", "1G", 1);
        char seedarg[32];
        snprintf(seedarg, sizeof seedarg, "%llu", (unsigned long long)seed);
        setenv("GPK_TEST_SEED", seedarg, 1);
        execl("/proc/self/exe", "test_reliability", "thread-limit-child", (char *)NULL);
        _exit(5);
    }
    int status = 0;
    TU_CHECK(pid > 0 && waitpid(pid, &status, 0) == pid, "fork / waitpid failed");
    TU_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
             "thread limit: the child %s %d (libgomp's exit is 1; 3: wrong status, 4: wrong sort)",
             WIFEXITED(status) ? "exited with" : "died of signal",
             WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

/* ---- OpenCL ----------------------------------------------------------------------------------- */

#define OCL_THREADS 8

typedef struct ocl_job {
    int index;
    gpk_status create;
    char msg[256];
    int sorted;
    pthread_barrier_t *start;
} ocl_job;

static void *ocl_worker(void *arg)
{
    ocl_job *j = arg;
    gpk_ctx *ctx = NULL;
    pthread_barrier_wait(j->start); /* all threads reach discovery together */
    j->create = gpk_ctx_create(&ctx, GPK_BACKEND_OPENCL);
    if (j->create != GPK_OK) {
        snprintf(j->msg, sizeof j->msg, "%s", gpk_last_error(NULL));
        return NULL;
    }
    /* Sizes differ per thread: 0, 1, primes, powers of two and neighbours. */
    static const size_t sizes[OCL_THREADS] = {0, 1, 7919, 65536, 65535, 65537, 100003, 1 << 18};
    j->sorted = sort_matches(ctx, sizes[j->index], seed + (uint64_t)j->index);
    gpk_ctx_destroy(ctx);
    return NULL;
}

static int test_opencl(void)
{
    /* Several rounds: each round is a fresh race for context creation,
     * though discovery runs once per process. */
    for (int round = 0; round < 3; round++) {
        pthread_barrier_t start;
        pthread_barrier_init(&start, NULL, OCL_THREADS);
        pthread_t t[OCL_THREADS];
        ocl_job jobs[OCL_THREADS];
        memset(jobs, 0, sizeof jobs);
        for (int i = 0; i < OCL_THREADS; i++) {
            jobs[i].index = i;
            jobs[i].start = &start;
            TU_CHECK(pthread_create(&t[i], NULL, ocl_worker, &jobs[i]) == 0, "pthread_create %d", i);
        }
        for (int i = 0; i < OCL_THREADS; i++) pthread_join(t[i], NULL);
        pthread_barrier_destroy(&start);
        for (int i = 0; i < OCL_THREADS; i++) {
            TU_CHECK(jobs[i].create == GPK_OK, "round %d thread %d: gpk_ctx_create(opencl): %s: %s", round, i,
                     gpk_status_string(jobs[i].create), jobs[i].msg);
            TU_CHECK(jobs[i].create != GPK_OK || jobs[i].sorted, "round %d thread %d: the sort differs", round,
                     i);
        }
    }
    /* Only now, after the race, is the device list asked for on this
     * thread: asking first would have done the discovery alone. */
    if (!gpk_backend_available(GPK_BACKEND_OPENCL)) {
        const char *req = getenv("GPK_REQUIRE_OPENCL");
        printf("no OpenCL device%s\n", req && *req == '1' ? ", but GPK_REQUIRE_OPENCL=1" : ": skipped");
        return req && *req == '1' ? 1 : TU_SKIP;
    }
    return -1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s threads|opencl\n", argv[0]);
        return 2;
    }
    seed = tu_seed();
    if (strcmp(argv[1], "thread-limit-child") == 0) return thread_limit_child();
    if (strcmp(argv[1], "threads") == 0) {
        test_threads();
    } else if (strcmp(argv[1], "opencl") == 0) {
        int rc = test_opencl();
        if (rc >= 0) return rc;
    } else {
        fprintf(stderr, "unknown test %s\n", argv[1]);
        return 2;
    }
    return tu_finish("test_reliability");
}
