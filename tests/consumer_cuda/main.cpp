// The device-pointer API from a host C++ program: sorts keys already on the
// GPU. Exits 77 (skipped) where no CUDA device is usable.
#include <gpk/cuda.h>

#include <cstdio>
#include <vector>

int main()
{
    if (!gpk_backend_available(GPK_BACKEND_CUDA)) {
        std::printf("no CUDA device: the CUDA consumer built, not run\n");
        return 77;
    }
    gpk_ctx *ctx = nullptr;
    if (gpk_ctx_create(&ctx, GPK_BACKEND_CUDA) != GPK_OK) return 1;
    const size_t n = 100000;
    std::vector<unsigned> h(n);
    for (size_t i = 0; i < n; i++) h[i] = unsigned(i * 2654435761u);
    void *d_in = nullptr, *d_out = nullptr, *d_temp = nullptr;
    size_t temp = 0;
    int ok = cudaMalloc(&d_in, n * 4) == cudaSuccess && cudaMalloc(&d_out, n * 4) == cudaSuccess &&
             cudaMemcpy(d_in, h.data(), n * 4, cudaMemcpyHostToDevice) == cudaSuccess &&
             gpk_cuda_sort_keys(ctx, nullptr, &temp, GPK_U32, d_in, d_out, n, nullptr, 0, 0) == GPK_OK &&
             cudaMalloc(&d_temp, temp ? temp : 1) == cudaSuccess &&
             gpk_cuda_sort_keys(ctx, d_temp, &temp, GPK_U32, d_in, d_out, n, nullptr, 0, 0) == GPK_OK &&
             cudaMemcpy(h.data(), d_out, n * 4, cudaMemcpyDeviceToHost) == cudaSuccess;
    for (size_t i = 1; ok && i < n; i++) ok = h[i - 1] <= h[i];
    cudaFree(d_in);
    cudaFree(d_out);
    cudaFree(d_temp);
    gpk_ctx_destroy(ctx);
    std::printf("CUDA consumer %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
