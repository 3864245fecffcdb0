/* Sorts past 2^31 and 2^32 keys on the CUDA backend (issue 16), checked on
 * the device without a CPU reference sort: the output is in order, and it
 * is a permutation of the input (an order-free hash of every key, or of
 * every (key, value) pair, before and after; for sigma, every index once,
 * keys_out[j] = keys_in[sigma[j]], and equal keys in input order).
 *
 *   test_cuda_wide [--seed S] [CASE ...]
 *   CASE = kind:n[:dist[:reps]]   (n as 2^32+1, 2^31-1 or a number)
 *   kind: keys   gpk_cuda_sort_keys, u32, in place (device API)
 *         pairs  gpk_cuda_sort_pairs, u32 keys and u32 values, in place
 *         host   gpk_sort_keys (host API: upload, detected bit range)
 *         ocl    gpk_sort_keys on the OpenCL backend (host API; the check runs on CUDA)
 *         cpu    gpk_sort_keys on the CPU backend; cpuquick: with GPK_SORT_QUICK
 *         cudaquick  GPK_SORT_QUICK on CUDA (from 2^32 elements the radix sort runs)
 *         perm64 gpk_sort_perm64 (host API), u32 keys, u64 sigma
 *   dist: uniform (32 random bits, default) or low12 (12 random bits: in the
 *         upper passes one digit holds every key, a count past 2^32).
 *   reps > 1: a benchmark; every rep sorts freshly generated keys, the
 *         median sort time is printed (keys/s), the last output is checked.
 * Without cases it runs a small set (the ctest). A case that does not fit
 * the free device memory is skipped with a message (exit 0 if none failed).
 * Exits 77 when no CUDA device is usable. */
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <vector>

#include "gpk/cuda.h"
#include "gpk/gpk.h"
#include "gpk/sort.h"

#define CUDA_OK(call)                                                                              \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

typedef unsigned long long u64;

__host__ __device__ static inline u64 mix64(u64 x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

__global__ void gen_kernel(uint32_t *keys, uint32_t *vals, size_t n, u64 seed, uint32_t mask)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const u64 h = mix64(seed + i);
        keys[i] = (uint32_t)h & mask;
        if (vals) vals[i] = (uint32_t)(h >> 32);
    }
}

/* out[0], out[1]: two order-free hashes of the (key, value) multiset. */
__global__ void hash_kernel(const uint32_t *keys, const uint32_t *vals, size_t n, u64 *out)
{
    u64 a = 0, b = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const u64 x = (u64)keys[i] | (vals ? (u64)vals[i] << 32 : 0ull);
        a += mix64(x);
        b ^= mix64(x + 0x9e3779b97f4a7c15ull) + 0x632be59bd9b4e019ull * (x | 1);
    }
    for (int s = 16; s > 0; s >>= 1) {
        a += __shfl_xor_sync(0xffffffffu, a, s);
        b ^= __shfl_xor_sync(0xffffffffu, b, s);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&out[0], a);
        atomicXor(&out[1], b);
    }
}

/* out[0]: positions i with keys[i] > keys[i + 1]. */
__global__ void order_kernel(const uint32_t *keys, size_t n, u64 *out)
{
    u64 bad = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i + 1 < n;
         i += (size_t)gridDim.x * blockDim.x)
        bad += keys[i] > keys[i + 1];
    if (bad) atomicAdd(&out[0], bad);
}

/* out[0] sigma out of range or repeated, out[1] keys_out[j] != keys_in[sigma[j]],
 * out[2] equal keys out of input order. seen: n bits, zeroed. */
__global__ void perm_kernel(const uint32_t *keys_in, const uint32_t *keys_out, const uint64_t *sigma,
                            size_t n, unsigned *seen, u64 *out)
{
    u64 bad[3] = {0, 0, 0};
    for (size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x; j < n;
         j += (size_t)gridDim.x * blockDim.x) {
        const uint64_t s = sigma[j];
        if (s >= n) {
            bad[0]++;
            continue;
        }
        const unsigned bit = 1u << (s & 31);
        if (atomicOr(&seen[s >> 5], bit) & bit) bad[0]++;
        if (keys_out[j] != keys_in[s]) bad[1]++;
        if (j + 1 < n && keys_out[j] == keys_out[j + 1] && s >= sigma[j + 1]) bad[2]++;
    }
    for (int k = 0; k < 3; k++)
        if (bad[k]) atomicAdd(&out[k], bad[k]);
}

static gpk_ctx *ctx;
static cudaStream_t stream;
static u64 *d_scratch; /* 4 words for the check kernels */
static int failures, skipped;

static int grid_for(size_t n)
{
    return (int)std::max<size_t>(1, std::min<size_t>(132 * 16, (n + 255) / 256));
}

static void gen(uint32_t *k, uint32_t *v, size_t n, u64 seed, uint32_t mask)
{
    gen_kernel<<<grid_for(n), 256, 0, stream>>>(k, v, n, seed, mask);
    CUDA_OK(cudaGetLastError());
}

static void hash(const uint32_t *k, const uint32_t *v, size_t n, u64 h[2])
{
    CUDA_OK(cudaMemsetAsync(d_scratch, 0, 2 * sizeof(u64), stream));
    hash_kernel<<<grid_for(n), 256, 0, stream>>>(k, v, n, d_scratch);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaMemcpyAsync(h, d_scratch, 2 * sizeof(u64), cudaMemcpyDeviceToHost, stream));
    CUDA_OK(cudaStreamSynchronize(stream));
}

static u64 disorder(const uint32_t *k, size_t n)
{
    u64 bad = 0;
    CUDA_OK(cudaMemsetAsync(d_scratch, 0, sizeof(u64), stream));
    order_kernel<<<grid_for(n), 256, 0, stream>>>(k, n, d_scratch);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaMemcpyAsync(&bad, d_scratch, sizeof(u64), cudaMemcpyDeviceToHost, stream));
    CUDA_OK(cudaStreamSynchronize(stream));
    return bad;
}

static bool fits(const char *what, size_t need)
{
    size_t free_b = 0, total_b = 0;
    CUDA_OK(cudaMemGetInfo(&free_b, &total_b));
    if (need + ((size_t)256 << 20) <= free_b) return true;
    printf("SKIP %s: needs %.2f GiB of device memory, %.2f GiB free\n", what, need / 1073741824.0,
           free_b / 1073741824.0);
    fflush(stdout);
    skipped++;
    return false;
}

static void report(const char *what, bool ok, const char *detail, double ms, size_t n, int reps)
{
    if (!ok) failures++;
    if (reps > 1)
        printf("%s %s: %s; median %.3f ms over %d reps, %.3f Gkeys/s\n", ok ? "ok" : "FAIL", what, detail, ms,
               reps, n / ms / 1e6);
    else printf("%s %s: %s (%.3f ms)\n", ok ? "ok" : "FAIL", what, detail, ms);
    fflush(stdout);
}

/* keys and pairs through the device API, in place. */
static void run_device(const char *what, bool pairs, size_t n, uint32_t mask, int reps, u64 seed)
{
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    size_t temp = 0;
    gpk_status s = pairs
        ? gpk_cuda_sort_pairs(ctx, NULL, &temp, GPK_U32, NULL, NULL, 4, NULL, NULL, n, &o, 0, stream)
        : gpk_cuda_sort_keys(ctx, NULL, &temp, GPK_U32, NULL, NULL, n, &o, 0, stream);
    if (s != GPK_OK) {
        printf("FAIL %s: temp size query: %s\n", what, gpk_last_error(ctx));
        failures++;
        return;
    }
    if (!fits(what, n * 4 * (pairs ? 2 : 1) + temp)) return;
    uint32_t *k = NULL, *v = NULL;
    void *t = NULL;
    CUDA_OK(cudaMalloc(&k, n * 4));
    if (pairs) CUDA_OK(cudaMalloc(&v, n * 4));
    CUDA_OK(cudaMalloc(&t, temp));
    cudaEvent_t e0, e1;
    CUDA_OK(cudaEventCreate(&e0));
    CUDA_OK(cudaEventCreate(&e1));
    std::vector<float> ms;
    u64 before[2] = {0, 0}, after[2] = {0, 0};
    bool ok = true;
    for (int r = 0; r < reps && ok; r++) {
        gen(k, v, n, seed + (u64)r * 0x1000003ull, mask);
        if (r == reps - 1) hash(k, v, n, before);
        CUDA_OK(cudaEventRecord(e0, stream));
        s = pairs ? gpk_cuda_sort_pairs(ctx, t, &temp, GPK_U32, k, k, 4, v, v, n, &o, 0, stream)
                  : gpk_cuda_sort_keys(ctx, t, &temp, GPK_U32, k, k, n, &o, 0, stream);
        CUDA_OK(cudaEventRecord(e1, stream));
        cudaError_t ce = cudaEventSynchronize(e1);
        if (s != GPK_OK || ce != cudaSuccess) {
            printf("FAIL %s: %s %s\n", what, s != GPK_OK ? gpk_last_error(ctx) : "", cudaGetErrorString(ce));
            failures++;
            ok = false;
            break;
        }
        float f = 0;
        CUDA_OK(cudaEventElapsedTime(&f, e0, e1));
        ms.push_back(f);
    }
    if (ok) {
        const u64 bad = disorder(k, n);
        hash(k, v, n, after);
        char detail[200];
        const bool same = before[0] == after[0] && before[1] == after[1];
        snprintf(detail, sizeof detail, "%llu out of order, %s multiset, path %s", bad,
                 same ? "same" : "DIFFERENT", gpk_last_sort_path(ctx));
        std::sort(ms.begin(), ms.end());
        const double med =
            ms.size() % 2 ? ms[ms.size() / 2] : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
        report(what, bad == 0 && same, detail, med, n, reps);
    }
    CUDA_OK(cudaEventDestroy(e0));
    CUDA_OK(cudaEventDestroy(e1));
    CUDA_OK(cudaFree(k));
    if (v) CUDA_OK(cudaFree(v));
    CUDA_OK(cudaFree(t));
}

/* The host API: keys (host) or keys with a u64 sigma (perm64). The context
 * is made afresh around it so that its device buffers are given back for
 * the check. */
static void run_host(const char *what, gpk_backend be, gpk_sort_algo algo, bool perm, size_t n, uint32_t mask,
                     u64 seed)
{
    const size_t need = 2 * n * (4 + (perm ? 8 : 0)) + ((size_t)64 << 20);
    const size_t check_need = n * (perm ? 4 + 4 + 8 : 4) + n / 8;
    if (!fits(what, std::max(need, check_need))) return;
    uint32_t *hk = (uint32_t *)malloc(n * 4);
    uint32_t *hin = perm ? (uint32_t *)malloc(n * 4) : NULL;
    uint64_t *hs = perm ? (uint64_t *)malloc(n * 8) : NULL;
    if (!hk || (perm && (!hin || !hs))) {
        printf("SKIP %s: not enough host memory\n", what);
        skipped++;
        free(hk);
        free(hin);
        free(hs);
        return;
    }
    uint32_t *dk = NULL;
    CUDA_OK(cudaMalloc(&dk, n * 4));
    gen(dk, NULL, n, seed, mask);
    u64 before[2], after[2];
    hash(dk, NULL, n, before);
    CUDA_OK(cudaMemcpy(hk, dk, n * 4, cudaMemcpyDeviceToHost));
    if (perm) memcpy(hin, hk, n * 4);
    CUDA_OK(cudaFree(dk));

    gpk_ctx *hctx = NULL;
    gpk_status s = gpk_ctx_create(&hctx, be);
    if (s != GPK_OK) {
        printf("SKIP %s: no %s backend\n", what, gpk_backend_name(be));
        skipped++;
        free(hk);
        free(hin);
        free(hs);
        return;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    gpk_sort_opts o = GPK_SORT_OPTS_INIT;
    o.algorithm = algo;
    if (s == GPK_OK)
        s = perm ? gpk_sort_perm64(hctx, GPK_U32, hk, hs, n, &o) : gpk_sort_keys(hctx, GPK_U32, hk, n, &o);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
    if (s != GPK_OK) {
        printf("FAIL %s: %s\n", what, hctx ? gpk_last_error(hctx) : gpk_status_string(s));
        failures++;
    }
    char path[64] = "-";
    if (s == GPK_OK)
        snprintf(path, sizeof path, "%s (%s)", gpk_last_sort_path(hctx),
                 gpk_sort_algo_name(gpk_last_sort_algo(hctx)));
    gpk_ctx_destroy(hctx);
    if (s != GPK_OK) {
        free(hk);
        free(hin);
        free(hs);
        return;
    }
    uint32_t *dout = NULL, *din = NULL;
    uint64_t *dsig = NULL;
    unsigned *seen = NULL;
    CUDA_OK(cudaMalloc(&dout, n * 4));
    CUDA_OK(cudaMemcpy(dout, hk, n * 4, cudaMemcpyHostToDevice));
    const u64 bad = disorder(dout, n);
    hash(dout, NULL, n, after);
    u64 pbad[3] = {0, 0, 0};
    if (perm) {
        CUDA_OK(cudaMalloc(&din, n * 4));
        CUDA_OK(cudaMalloc(&dsig, n * 8));
        CUDA_OK(cudaMalloc(&seen, (n + 31) / 32 * 4));
        CUDA_OK(cudaMemcpy(din, hin, n * 4, cudaMemcpyHostToDevice));
        CUDA_OK(cudaMemcpy(dsig, hs, n * 8, cudaMemcpyHostToDevice));
        CUDA_OK(cudaMemset(seen, 0, (n + 31) / 32 * 4));
        CUDA_OK(cudaMemset(d_scratch, 0, 3 * sizeof(u64)));
        perm_kernel<<<grid_for(n), 256, 0, stream>>>(din, dout, dsig, n, seen, d_scratch);
        CUDA_OK(cudaGetLastError());
        CUDA_OK(cudaMemcpyAsync(pbad, d_scratch, 3 * sizeof(u64), cudaMemcpyDeviceToHost, stream));
        CUDA_OK(cudaStreamSynchronize(stream));
        CUDA_OK(cudaFree(din));
        CUDA_OK(cudaFree(dsig));
        CUDA_OK(cudaFree(seen));
    }
    CUDA_OK(cudaFree(dout));
    const bool same = before[0] == after[0] && before[1] == after[1];
    char detail[240];
    snprintf(
        detail, sizeof detail,
        "%llu out of order, %s multiset, sigma: %llu bad/repeated, %llu wrong key, %llu unstable; path %s; "
        "host call with transfers",
        bad, same ? "same" : "DIFFERENT", pbad[0], pbad[1], pbad[2], path);
    report(what, bad == 0 && same && pbad[0] == 0 && pbad[1] == 0 && pbad[2] == 0, detail, ms, n, 1);
    free(hk);
    free(hin);
    free(hs);
}

/* "2^32+1", "2^31-1", "1000003" */
static bool parse_n(const char *s, size_t *n)
{
    char *end;
    if (!strncmp(s, "2^", 2)) {
        unsigned long e = strtoul(s + 2, &end, 10);
        if (e >= 63) return false;
        size_t v = (size_t)1 << e;
        if (*end == '+' || *end == '-') {
            const int sign = *end == '+' ? 1 : -1;
            unsigned long long d = strtoull(end + 1, &end, 10);
            v = sign > 0 ? v + d : v - d;
        }
        *n = v;
        return *end == '\0' || *end == ':';
    }
    *n = (size_t)strtoull(s, &end, 10);
    return end != s && (*end == '\0' || *end == ':');
}

static void run_case(const char *spec, u64 seed)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", spec);
    char *kind = strtok(buf, ":"), *ns = strtok(NULL, ":"), *dist = strtok(NULL, ":"),
         *rs = strtok(NULL, ":");
    size_t n = 0;
    if (!kind || !ns || !parse_n(ns, &n) || n < 2) {
        printf("FAIL bad case '%s'\n", spec);
        failures++;
        return;
    }
    const bool low = dist && !strcmp(dist, "low12");
    if (dist && !low && strcmp(dist, "uniform")) {
        printf("FAIL bad distribution in '%s'\n", spec);
        failures++;
        return;
    }
    const uint32_t mask = low ? 0xfffu : 0xffffffffu;
    const int reps = rs ? std::max(1, atoi(rs)) : 1;
    char what[160];
    snprintf(what, sizeof what, "%s n=%zu %s seed=%llu", kind, n, low ? "low12" : "uniform", seed);
    if (!strcmp(kind, "keys")) run_device(what, false, n, mask, reps, seed);
    else if (!strcmp(kind, "pairs")) run_device(what, true, n, mask, reps, seed);
    else if (!strcmp(kind, "host")) run_host(what, GPK_BACKEND_CUDA, GPK_SORT_AUTO, false, n, mask, seed);
    else if (!strcmp(kind, "ocl")) run_host(what, GPK_BACKEND_OPENCL, GPK_SORT_AUTO, false, n, mask, seed);
    else if (!strcmp(kind, "cpu")) run_host(what, GPK_BACKEND_CPU, GPK_SORT_AUTO, false, n, mask, seed);
    else if (!strcmp(kind, "cpuquick")) run_host(what, GPK_BACKEND_CPU, GPK_SORT_QUICK, false, n, mask, seed);
    else if (!strcmp(kind, "cudaquick"))
        run_host(what, GPK_BACKEND_CUDA, GPK_SORT_QUICK, false, n, mask, seed);
    else if (!strcmp(kind, "perm64")) run_host(what, GPK_BACKEND_CUDA, GPK_SORT_AUTO, true, n, mask, seed);
    else {
        printf("FAIL unknown kind in '%s'\n", spec);
        failures++;
    }
}

int main(int argc, char **argv)
{
    u64 seed = (u64)time(NULL) * 2654435761ull;
    int first = 1;
    if (argc > 2 && !strcmp(argv[1], "--seed")) {
        seed = strtoull(argv[2], NULL, 0);
        first = 3;
    }
    if (gpk_ctx_create(&ctx, GPK_BACKEND_CUDA) != GPK_OK) {
        printf("test_cuda_wide: no CUDA device, skipped\n");
        return 77;
    }
    CUDA_OK(cudaStreamCreate(&stream));
    CUDA_OK(cudaMalloc(&d_scratch, 4 * sizeof(u64)));
    printf("test_cuda_wide: seed %llu\n", seed);
    static const char *small[] = {"keys:2",        "keys:1000003",        "keys:2^20+1:low12",
                                  "pairs:65537",   "pairs:2^20-1:low12",  "host:100003",
                                  "perm64:2^18+3", "perm64:300007:low12", "ocl:100003",
                                  "cpu:100003",    "cpuquick:65537",      "cudaquick:65537"};
    if (first >= argc)
        for (const char *c : small) run_case(c, seed++);
    for (int i = first; i < argc; i++) run_case(argv[i], seed++);
    CUDA_OK(cudaFree(d_scratch));
    CUDA_OK(cudaStreamDestroy(stream));
    gpk_ctx_destroy(ctx);
    printf("test_cuda_wide: %d failed, %d skipped\n", failures, skipped);
    return failures ? 1 : 0;
}
