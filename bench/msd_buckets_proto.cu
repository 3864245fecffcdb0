// Issue 17 prototype, a measurement and not a sort (docs/perf/scale.md,
// "Next: partition first", run 10): does an MSD-first multi-GPU plan fit the
// 1.7x goal? Per GPU, 2^30 u32 keys: one 8-bit MSD pass (timed as a sort with
// key_bits 8: histogram + one pass) then the 128 buckets of 2^23 keys sorted on
// their low 24 bits (gpk_cuda_sort_keys, key_bits 24) on S streams; against
// the whole sort of 2^30 keys. Also u64 (key_bits 8, then buckets on 56 bits).
// The buckets are generated already in place (bucket k: top digit k, random
// low bits), so the result can be checked; the pass's time stands in for
// partitioning them. Run: build/gpk_msd_buckets_proto (about 15 s on an H100;
// its figures predate the one-launch path, which now takes 2^22-key buckets).
#include <gpk/cuda.h>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>
#include <algorithm>
#define CK(x)                                                    \
    do {                                                         \
        cudaError_t e_ = (x);                                    \
        if (e_ != cudaSuccess) {                                 \
            printf("CUDA %s: %s\n", #x, cudaGetErrorString(e_)); \
            exit(1);                                             \
        }                                                        \
    } while (0)
#define GK(x)                                                \
    do {                                                     \
        gpk_status s_ = (x);                                 \
        if (s_ != GPK_OK) {                                  \
            printf("gpk %s: %s\n", #x, gpk_last_error(ctx)); \
            exit(1);                                         \
        }                                                    \
    } while (0)
template <class K>
__global__ void gen(K *k, size_t n, size_t bucket, unsigned shift, uint64_t seed, int bucketed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint64_t z = (i + seed) * 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        K v = (K)z;
        if (bucketed) {
            K low = (K)(((K)1 << shift) - 1);
            v = (K)(((K)(i / bucket) << shift) | (v & low));
        }
        k[i] = v;
    }
}
template <class K> __global__ void check(const K *k, size_t n, unsigned long long *bad)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x + 1; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        if (k[i - 1] > k[i]) atomicAdd(bad, 1ull);
}
template <class K> static void run(gpk_ctx *ctx, gpk_type t, unsigned bits, size_t n, int buckets)
{
    K *a, *b;
    CK(cudaMalloc(&a, n * sizeof(K)));
    CK(cudaMalloc(&b, n * sizeof(K)));
    unsigned long long *bad;
    CK(cudaMalloc(&bad, 8));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    const int S = 8;
    cudaStream_t st[S];
    cudaEvent_t done[S];
    for (int i = 0; i < S; i++) {
        CK(cudaStreamCreateWithFlags(&st[i], cudaStreamNonBlocking));
        CK(cudaEventCreateWithFlags(&done[i], cudaEventDisableTiming));
    }
    const size_t bucket = n / buckets;
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    size_t tb_full = 0, tb_seg = 0;
    GK(gpk_cuda_sort_keys(ctx, NULL, &tb_full, t, a, b, n, &o, 0, st[0]));
    o.key_bits = bits - 8;
    GK(gpk_cuda_sort_keys(ctx, NULL, &tb_seg, t, a, b, bucket, &o, 0, st[0]));
    void *tf;
    CK(cudaMalloc(&tf, tb_full));
    void *ts[S];
    for (int i = 0; i < S; i++) CK(cudaMalloc(&ts[i], tb_seg));
    auto timed = [&](auto body) {
        float best = 1e9;
        for (int r = 0; r < 5; r++) {
            CK(cudaEventRecord(e0, st[0]));
            body();
            CK(cudaEventRecord(e1, st[0]));
            CK(cudaEventSynchronize(e1));
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            best = std::min(best, ms);
        }
        return best;
    };
    auto regen = [&](int bucketed) {
        gen<K><<<4096, 256, 0, st[0]>>>(a, n, bucket, bits - 8, 12345, bucketed);
        CK(cudaGetLastError());
        CK(cudaStreamSynchronize(st[0]));
    };
    // whole sort, out of place
    float full = 1e9;
    for (int r = 0; r < 5; r++) {
        regen(0);
        full = std::min(full, timed([&] {
                            o.key_bits = 0;
                            GK(gpk_cuda_sort_keys(ctx, tf, &tb_full, t, a, b, n, &o, 0, st[0]));
                        }));
    }
    // the MSD pass stand-in: histogram + one 8-bit pass over all keys
    float msd = 1e9;
    for (int r = 0; r < 5; r++) {
        regen(0);
        msd = std::min(msd, timed([&] {
                           o.key_bits = 8;
                           GK(gpk_cuda_sort_keys(ctx, tf, &tb_full, t, a, b, n, &o, 0, st[0]));
                       }));
    }
    printf("%s n=%zu: whole sort %.3f ms, one 8-bit pass + histogram %.3f ms\n",
           sizeof(K) == 4 ? "u32" : "u64", n, full, msd);
    for (int s : {1, 2, 4, 8}) {
        float seg = 1e9;
        unsigned long long nbad = 0;
        for (int r = 0; r < 3; r++) {
            regen(1);
            seg = std::min(seg, timed([&] {
                               for (int i = 1; i < s; i++) {
                                   CK(cudaEventRecord(done[0], st[0]));
                                   CK(cudaStreamWaitEvent(st[i], done[0], 0));
                               }
                               o.key_bits = bits - 8;
                               for (int k = 0; k < buckets; k++)
                                   GK(gpk_cuda_sort_keys(ctx, ts[k % s], &tb_seg, t, a + k * bucket,
                                                         b + k * bucket, bucket, &o, 0, st[k % s]));
                               for (int i = 1; i < s; i++) {
                                   CK(cudaEventRecord(done[i], st[i]));
                                   CK(cudaStreamWaitEvent(st[0], done[i], 0));
                               }
                           }));
            CK(cudaMemsetAsync(bad, 0, 8, st[0]));
            check<K><<<4096, 256, 0, st[0]>>>(b, n, bad);
            CK(cudaGetLastError());
            CK(cudaMemcpy(&nbad, bad, 8, cudaMemcpyDeviceToHost));
        }
        printf("  %d buckets of %zu keys on %d stream(s): %.3f ms (%s); pass + buckets %.3f ms = %.3fx the "
               "whole sort; path %s\n",
               buckets, bucket, s, seg, nbad ? "NOT SORTED" : "sorted", msd + seg, (msd + seg) / full,
               gpk_last_sort_path(ctx));
    }
    cudaFree(a);
    cudaFree(b);
    cudaFree(bad);
    cudaFree(tf);
    for (int i = 0; i < S; i++) cudaFree(ts[i]);
}
int main(int argc, char **argv)
{
    gpk_ctx_opts co = GPK_CTX_OPTS_INIT;
    co.backend = GPK_BACKEND_CUDA;
    gpk_ctx *ctx = NULL;
    if (gpk_ctx_create_ex(&ctx, &co) != GPK_OK) {
        printf("ctx: %s\n", gpk_last_error(NULL));
        return 1;
    }
    run<uint32_t>(ctx, GPK_U32, 32, (size_t)1 << 30, 128);
    run<uint32_t>(ctx, GPK_U32, 32, (size_t)1 << 30, 256);
    run<uint64_t>(ctx, GPK_U64, 64, (size_t)1 << 29, 128);
    gpk_ctx_destroy(ctx);
    return 0;
}
