/* Device copy bandwidth, the floor of a bandwidth-bound pass: bytes read +
 * bytes written per second by cudaMemcpyAsync device to device and by a
 * 16-byte-per-thread copy kernel, at the sizes given (MiB, default 128 and
 * 1024), median of 20. Build: nvcc -O3 -arch=sm_90 bench/copy_bw.cu */
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CU(x)                                                        \
    do {                                                             \
        cudaError_t e_ = (x);                                        \
        if (e_ != cudaSuccess) {                                     \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); \
            return 1;                                                \
        }                                                            \
    } while (0)

__global__ void copy16(const uint4 *in, uint4 *out, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = in[i];
}

int main(int argc, char **argv)
{
    std::vector<size_t> mib;
    for (int i = 1; i < argc; i++) mib.push_back(strtoull(argv[i], 0, 10));
    if (mib.empty()) mib = {128, 1024};
    int sms = 0;
    CU(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    cudaEvent_t e0, e1;
    CU(cudaEventCreate(&e0));
    CU(cudaEventCreate(&e1));
    for (size_t m : mib) {
        const size_t bytes = m << 20;
        void *a, *b;
        CU(cudaMalloc(&a, bytes));
        CU(cudaMalloc(&b, bytes));
        CU(cudaMemset(a, 1, bytes));
        for (int kind = 0; kind < 2; kind++) {
            std::vector<float> t;
            for (int r = 0; r < 21; r++) {
                CU(cudaEventRecord(e0));
                if (kind == 0) CU(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice));
                else copy16<<<sms * 8, 256>>>((const uint4 *)a, (uint4 *)b, bytes / 16);
                CU(cudaEventRecord(e1));
                CU(cudaEventSynchronize(e1));
                float ms;
                CU(cudaEventElapsedTime(&ms, e0, e1));
                if (r) t.push_back(ms);
            }
            std::sort(t.begin(), t.end());
            const double ms = t[t.size() / 2];
            printf("copy %-16s %6zu MiB: %8.3f ms  %6.0f GB/s (read + write)\n",
                   kind ? "kernel 16 B" : "cudaMemcpy D2D", m, ms, 2.0 * bytes / ms / 1e6);
        }
        CU(cudaFree(a));
        CU(cudaFree(b));
    }
    return 0;
}
