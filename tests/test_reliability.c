/* The library's promises about threads (issue 19, items 1 and 4):
 *   threads    GPK_THREADS is validated, the thread count is clamped, and a
 *              team that cannot be created is a status, not libgomp ending
 *              the process;
 *   opencl     contexts created on 8 threads at once all work (backend
 *              discovery is one-time and thread-safe) and sort correctly;
 * and item 5:
 *   oversubscribed  a tabu search with 2 threads on one core that a busy
 *              process shares takes about as long as with 1 thread, not
 *              tens of times longer, and finds the same solution.
 * usage: test_reliability threads|opencl|oversubscribed
 */
#define _GNU_SOURCE /* sched_setaffinity */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpk/search.h"
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
        TU_CHECK(strstr(gpk_last_error(NULL), "GPK_THREADS") != NULL, "GPK_THREADS='%s': message '%s'",
                 bad[i], gpk_last_error(NULL));
        gpk_ctx_destroy(ctx);
        ctx = NULL;
    }
    /* An explicit count does not read the environment. */
    TU_CHECK(create_cpu(&ctx, 1) == GPK_OK, "threads 1 with GPK_THREADS=%s: %s", bad[0],
             gpk_last_error(NULL));
    gpk_ctx_destroy(ctx);
    ctx = NULL;
    /* Valid values, and the clamp. */
    static const struct {
        const char *env;
        int want;
    } good[] = {{"1", 1}, {"2", 2}, {"0", -1}, {"", -1}};
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

    /* A team that cannot be created: a status, not an exit. AddressSanitizer
     * reserves terabytes of shadow address space, so the address-space
     * limit that makes the failure is not possible under it. */
#if defined(__SANITIZE_ADDRESS__)
#define TU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TU_ASAN 1
#endif
#endif
#ifdef TU_ASAN
    printf("thread limit: skipped under AddressSanitizer\n");
    return;
#endif
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
            TU_CHECK(jobs[i].create != GPK_OK || jobs[i].sorted, "round %d thread %d: the sort differs",
                     round, i);
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

/* ---- oversubscribed cores ---------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A random QAPLIB instance of n facilities as text. */
static char *qap_text(uint32_t n, uint64_t s, size_t *len)
{
    size_t cap = 16 + (size_t)n * n * 2 * 4, k = 0;
    char *t = malloc(cap);
    if (!t) return NULL;
    k += (size_t)snprintf(t + k, cap - k, "%u\n", n);
    s |= 1;
    for (int m = 0; m < 2; m++)
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = 0; j < n; j++)
                k += (size_t)snprintf(t + k, cap - k, "%u%c", i == j ? 0u : (unsigned)(next(&s) % 100),
                                      j + 1 == n ? '\n' : ' ');
    *len = k;
    return t;
}

/* Milliseconds of a tabu search on ctx; the best cost in *best. */
static double tabu_ms(gpk_ctx *ctx, const gpk_qap *q, uint64_t iters, int64_t *best)
{
    gpk_search_problem pb = {GPK_PROBLEM_QAP, q, NULL, NULL};
    gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
    o.algo = GPK_SEARCH_TABU;
    o.iters = iters;
    o.seed = seed;
    gpk_search_result r;
    const double t0 = now_s();
    gpk_status st = gpk_search_run(ctx, &pb, &o, &r);
    const double ms = (now_s() - t0) * 1e3;
    TU_CHECK(st == GPK_OK, "gpk_search_run: %s", gpk_last_error(ctx));
    *best = st == GPK_OK ? r.best : -1;
    if (st == GPK_OK) gpk_search_result_free(&r);
    return ms;
}

static void test_oversubscribed(void)
{
    /* One core for this process and a busy child: 2 search threads then
     * always share it with a third runnable thread, on any machine. */
    cpu_set_t one;
    CPU_ZERO(&one);
    int cpu = sched_getcpu();
    CPU_SET(cpu >= 0 ? cpu : 0, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) {
        printf("oversubscribed: cannot pin to one CPU: skipped\n");
        return;
    }
    size_t len = 0;
    char *text = qap_text(80, seed, &len);
    gpk_qap q;
    TU_CHECK(text && gpk_qap_parse(text, len, "rand80", &q) == GPK_OK, "parse: %s", gpk_last_error(NULL));
    free(text);
    fflush(stdout);
    pid_t busy = fork();
    if (busy == 0) {
        for (volatile unsigned long x = 0;; x++) {}
    }
    TU_CHECK(busy > 0, "fork");
    gpk_ctx *c1 = NULL, *c2 = NULL;
    TU_CHECK(create_cpu(&c1, 1) == GPK_OK && create_cpu(&c2, 2) == GPK_OK, "contexts: %s",
             gpk_last_error(NULL));
    if (c1 && c2) {
        const uint64_t iters = 3000;
        int64_t b1 = 0, b2 = 0;
        /* Best of two runs each: the busy child makes single runs noisy. */
        double t1 = tabu_ms(c1, &q, iters, &b1), t2 = tabu_ms(c2, &q, iters, &b2);
        const double t1b = tabu_ms(c1, &q, iters, &b1), t2b = tabu_ms(c2, &q, iters, &b2);
        t1 = t1 < t1b ? t1 : t1b;
        t2 = t2 < t2b ? t2 : t2b;
        printf("oversubscribed: %llu tabu iterations, n = 80, one core shared with a busy process: "
               "1 thread %.1f ms, 2 threads %.1f ms\n",
               (unsigned long long)iters, t1, t2);
        TU_CHECK(b1 == b2, "1 and 2 threads found different bests: %lld, %lld", (long long)b1, (long long)b2);
        TU_CHECK(t2 <= 3.0 * t1 + 100.0, "2 threads took %.1f ms, 1 thread %.1f ms: more than 3 times", t2,
                 t1);
    }
    if (busy > 0) {
        kill(busy, SIGKILL);
        waitpid(busy, NULL, 0);
    }
    gpk_ctx_destroy(c1);
    gpk_ctx_destroy(c2);
    gpk_qap_free(&q);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s threads|opencl|oversubscribed\n", argv[0]);
        return 2;
    }
    seed = tu_seed();
    if (strcmp(argv[1], "thread-limit-child") == 0) return thread_limit_child();
    if (strcmp(argv[1], "threads") == 0) {
        test_threads();
    } else if (strcmp(argv[1], "oversubscribed") == 0) {
        test_oversubscribed();
    } else if (strcmp(argv[1], "opencl") == 0) {
        int rc = test_opencl();
        if (rc >= 0) return rc;
    } else {
        fprintf(stderr, "unknown test %s\n", argv[1]);
        return 2;
    }
    return tu_finish("test_reliability");
}
