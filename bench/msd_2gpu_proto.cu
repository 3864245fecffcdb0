// Issue 17 prototype, a measurement and not a sort (docs/perf/scale.md,
// "Next: partition first", run 11): the exchange and bucket sorts of the
// partition-first plan on 2 GPUs, against one GPU sorting all the keys.
// Each GPU holds 2^30 u32 keys (2^31 in all). Timed per GPU, both at once:
//   1. the MSD pass, stood in for by a sort with key_bits 8 of 2^30 keys
//      (histogram + one 8-bit pass; its output is not used);
//   2. the copy engine pushes the peer's half of each of 128 buckets
//      (2^22 keys, 16 MB) from a staging buffer into the owner's working
//      buffer (cudaMemcpyPeerAsync), an event per bucket;
//   3. each bucket (2^23 keys: the owner's half, generated in place, and the
//      peer's) is sorted on its low 24 bits by gpk_cuda_sort_keys as soon as
//      its copy is in, on S streams, into the output.
// Buckets hold keys whose top byte is the bucket's (GPU 0: 0..127, GPU 1:
// 128..255), so the outputs must be sorted and in order across the GPUs:
// checked. The one-GPU sort of the same 2^31 keys runs on GPU 0 first.
// Build: CMake target gpk_msd_2gpu_proto (CUDA builds); run on a host with
// 2 GPUs and peer access.
#include <gpk/cuda.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <algorithm>
#define CK(x)                                                                        \
    do {                                                                             \
        cudaError_t e_ = (x);                                                        \
        if (e_ != cudaSuccess) {                                                     \
            printf("CUDA %s: %s (line %d)\n", #x, cudaGetErrorString(e_), __LINE__); \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)
#define GK(c, x)                                           \
    do {                                                   \
        gpk_status s_ = (x);                               \
        if (s_ != GPK_OK) {                                \
            printf("gpk %s: %s\n", #x, gpk_last_error(c)); \
            exit(1);                                       \
        }                                                  \
    } while (0)
static const int NB = 128; // buckets per GPU
static const int S = 8;    // sorting streams per GPU
__device__ uint32_t mix32(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (uint32_t)(z ^ (z >> 31));
}
// bucketed: element i of a region of buckets of `bucket` keys gets top byte first_digit + i / bucket
__global__ void gen(uint32_t *k, size_t n, size_t bucket, uint32_t first_digit, uint64_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint32_t v = mix32((i + seed) * 0x9E3779B97F4A7C15ull);
        k[i] = bucket ? ((first_digit + (uint32_t)(i / bucket)) << 24) | (v & 0xFFFFFFu) : v;
    }
}
__global__ void count_unsorted(const uint32_t *k, size_t n, unsigned long long *bad)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x + 1; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        if (k[i - 1] > k[i]) atomicAdd(bad, 1ull);
}
struct Gpu {
    int dev;
    gpk_ctx *ctx;
    cudaStream_t main, copy, st[S];
    cudaEvent_t start, stop, msd_done, sent[NB],
        done[S]; // sent[b]: this GPU's copy of its half of the peer's bucket b is done
    uint32_t *work, *out, *staging, *scratch;
    void *t_full, *t_seg[S];
    size_t tb_full, tb_seg;
    unsigned long long *bad;
};
int main()
{
    const size_t per = (size_t)1 << 30, bucket = per / NB, half = bucket / 2;
    int count = 0;
    CK(cudaGetDeviceCount(&count));
    if (count < 2) {
        printf("needs 2 GPUs, %d present\n", count);
        return 77;
    }
    Gpu g[2];
    for (int i = 0; i < 2; i++) {
        Gpu &G = g[i];
        G.dev = i;
        CK(cudaSetDevice(i));
        int can = 0;
        CK(cudaDeviceCanAccessPeer(&can, i, 1 - i));
        if (!can) {
            printf("no peer access %d -> %d\n", i, 1 - i);
            return 77;
        }
        cudaError_t pe = cudaDeviceEnablePeerAccess(1 - i, 0);
        if (pe != cudaSuccess && pe != cudaErrorPeerAccessAlreadyEnabled) CK(pe);
        (void)cudaGetLastError();
        gpk_ctx_opts co = GPK_CTX_OPTS_INIT;
        co.backend = GPK_BACKEND_CUDA;
        co.device = i;
        if (gpk_ctx_create_ex(&G.ctx, &co) != GPK_OK) {
            printf("ctx %d: %s\n", i, gpk_last_error(NULL));
            return 1;
        }
        CK(cudaStreamCreateWithFlags(&G.main, cudaStreamNonBlocking));
        CK(cudaStreamCreateWithFlags(&G.copy, cudaStreamNonBlocking));
        for (int s = 0; s < S; s++) {
            CK(cudaStreamCreateWithFlags(&G.st[s], cudaStreamNonBlocking));
            CK(cudaEventCreateWithFlags(&G.done[s], cudaEventDisableTiming));
        }
        for (int b = 0; b < NB; b++) CK(cudaEventCreateWithFlags(&G.sent[b], cudaEventDisableTiming));
        CK(cudaEventCreate(&G.start));
        CK(cudaEventCreate(&G.stop));
        CK(cudaEventCreateWithFlags(&G.msd_done, cudaEventDisableTiming));
        CK(cudaMalloc(&G.work, per * 4));
        CK(cudaMalloc(&G.out, per * 4));
        CK(cudaMalloc(&G.staging, per / 2 * 4));
        CK(cudaMalloc(&G.scratch, per * 4));
        CK(cudaMalloc(&G.bad, 8));
        gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
        o.key_bits = 8;
        GK(G.ctx, gpk_cuda_sort_keys(G.ctx, NULL, &G.tb_full, GPK_U32, G.scratch, G.out, per, &o, 0, G.main));
        o.key_bits = 24;
        GK(G.ctx, gpk_cuda_sort_keys(G.ctx, NULL, &G.tb_seg, GPK_U32, G.work, G.out, bucket, &o, 0, G.main));
        CK(cudaMalloc(&G.t_full, G.tb_full));
        for (int s = 0; s < S; s++) CK(cudaMalloc(&G.t_seg[s], G.tb_seg));
    }
    // one GPU, all 2^31 keys (GPU 0): the baseline
    float one = 1e9;
    {
        CK(cudaSetDevice(0));
        uint32_t *a, *b;
        void *t;
        size_t tb = 0;
        const size_t n = 2 * per;
        CK(cudaMalloc(&a, n * 4));
        CK(cudaMalloc(&b, n * 4));
        gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
        GK(g[0].ctx, gpk_cuda_sort_keys(g[0].ctx, NULL, &tb, GPK_U32, a, b, n, &o, 0, g[0].main));
        CK(cudaMalloc(&t, tb));
        for (int r = 0; r < 5; r++) {
            gen<<<4096, 256, 0, g[0].main>>>(a, n, 0, 0, 7 + r);
            CK(cudaGetLastError());
            CK(cudaEventRecord(g[0].start, g[0].main));
            GK(g[0].ctx, gpk_cuda_sort_keys(g[0].ctx, t, &tb, GPK_U32, a, b, n, &o, 0, g[0].main));
            CK(cudaEventRecord(g[0].stop, g[0].main));
            CK(cudaEventSynchronize(g[0].stop));
            float ms;
            CK(cudaEventElapsedTime(&ms, g[0].start, g[0].stop));
            one = std::min(one, ms);
        }
        CK(cudaMemsetAsync(g[0].bad, 0, 8, g[0].main));
        count_unsorted<<<4096, 256, 0, g[0].main>>>(b, n, g[0].bad);
        unsigned long long nb = 0;
        CK(cudaMemcpy(&nb, g[0].bad, 8, cudaMemcpyDeviceToHost));
        printf("one GPU, 2^31 u32 keys: %.3f ms (best of 5)%s\n", one, nb ? " NOT SORTED" : "");
        CK(cudaFree(a));
        CK(cudaFree(b));
        CK(cudaFree(t));
    }
    for (int variant = 0; variant < 2; variant++) { // 0: the plan; 1: the same without the MSD pass stand-in
        float best = 1e9, best_wall = 1e9, best_gpu[2] = {0, 0};
        for (int r = 0; r < 5; r++) {
            for (int i = 0; i < 2;
                 i++) { // GPU i's own halves in place, its staging holds the other GPU's halves
                Gpu &G = g[i];
                CK(cudaSetDevice(i));
                gen<<<4096, 256, 0, G.main>>>(G.scratch, per, 0, 0, 99 + r);
                CK(cudaGetLastError());
                for (int b = 0; b < NB; b++) { // own half of bucket b: the first half of its region
                    gen<<<512, 256, 0, G.main>>>(G.work + b * bucket, half, half, (uint32_t)(i * NB + b),
                                                 1000 * b + r);
                    CK(cudaGetLastError());
                    gen<<<512, 256, 0, G.main>>>(G.staging + b * half, half, half,
                                                 (uint32_t)((1 - i) * NB + b), 5000 * b + r + 1);
                    CK(cudaGetLastError());
                }
                CK(cudaStreamSynchronize(G.main));
            }
            auto t0 = std::chrono::steady_clock::now();
            for (int i = 0; i < 2; i++) {
                Gpu &G = g[i];
                CK(cudaSetDevice(i));
                CK(cudaEventRecord(G.start, G.main));
                if (variant == 0) {
                    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
                    o.key_bits = 8;
                    GK(G.ctx,
                       gpk_cuda_sort_keys(G.ctx, G.t_full, &G.tb_full, GPK_U32, G.scratch, G.out, per, &o, 0,
                                          G.main));
                }
                CK(cudaEventRecord(G.msd_done, G.main));
            }
            for (int i = 0; i < 2;
                 i++) { // GPU i pushes its staged halves into the other GPU's buckets, after both MSD passes
                Gpu &G = g[i], &P = g[1 - i];
                CK(cudaSetDevice(i));
                CK(cudaStreamWaitEvent(G.copy, G.msd_done, 0));
                CK(cudaStreamWaitEvent(G.copy, P.msd_done, 0));
                for (int b = 0; b < NB; b++) {
                    CK(cudaMemcpyPeerAsync(P.work + b * bucket + half, P.dev, G.staging + b * half, G.dev,
                                           half * 4, G.copy));
                    CK(cudaEventRecord(G.sent[b], G.copy)); // waited for on GPU 1 - i
                }
            }
            for (int i = 0; i < 2; i++) {
                Gpu &G = g[i], &P = g[1 - i];
                CK(cudaSetDevice(i));
                gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
                o.key_bits = 24;
                for (int b = 0; b < NB; b++) {
                    cudaStream_t s = G.st[b % S];
                    CK(cudaStreamWaitEvent(s, P.sent[b], 0));
                    GK(G.ctx,
                       gpk_cuda_sort_keys(G.ctx, G.t_seg[b % S], &G.tb_seg, GPK_U32, G.work + b * bucket,
                                          G.out + b * bucket, bucket, &o, 0, s));
                }
                for (int s = 0; s < S; s++) {
                    CK(cudaEventRecord(G.done[s], G.st[s]));
                    CK(cudaStreamWaitEvent(G.main, G.done[s], 0));
                }
                CK(cudaEventRecord(G.stop, G.main));
            }
            float ms[2];
            for (int i = 0; i < 2; i++) {
                CK(cudaSetDevice(i));
                CK(cudaEventSynchronize(g[i].stop));
                CK(cudaEventElapsedTime(&ms[i], g[i].start, g[i].stop));
            }
            double wall =
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            float m = std::max(ms[0], ms[1]);
            if (m < best) {
                best = m;
                best_gpu[0] = ms[0];
                best_gpu[1] = ms[1];
            }
            best_wall = std::min(best_wall, (float)wall);
        }
        unsigned long long nb[2] = {0, 0};
        uint32_t last0 = 0, first1 = 0;
        for (int i = 0; i < 2; i++) {
            CK(cudaSetDevice(i));
            CK(cudaMemsetAsync(g[i].bad, 0, 8, g[i].main));
            count_unsorted<<<4096, 256, 0, g[i].main>>>(g[i].out, per, g[i].bad);
            CK(cudaGetLastError());
            CK(cudaMemcpy(&nb[i], g[i].bad, 8, cudaMemcpyDeviceToHost));
        }
        CK(cudaMemcpy(&last0, g[0].out + per - 1, 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(&first1, g[1].out, 4, cudaMemcpyDeviceToHost));
        const bool ok = !nb[0] && !nb[1] && last0 <= first1;
        printf("%s: %.3f ms (GPU 0 %.3f, GPU 1 %.3f; host wall %.3f), best of 5: %.3fx one GPU; %s\n",
               variant == 0 ? "2 GPUs, MSD pass + exchange + bucket sorts"
                            : "2 GPUs, exchange + bucket sorts only",
               best, best_gpu[0], best_gpu[1], best_wall, one / best, ok ? "sorted" : "NOT SORTED");
    }
    for (int i = 0; i < 2; i++) gpk_ctx_destroy(g[i].ctx);
    return 0;
}
