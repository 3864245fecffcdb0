/* The CUDA device-pointer API (include/gpk/cuda.h) against the reference
 * sort: temporary-storage query, in place and out of place, keys and pairs,
 * every key type, sizes 0, 1, primes and 2^k +- 1, every distribution
 * (float specials included), several (b, r) pairs with r not dividing b,
 * bit-range detection, and the argument errors. Exits 77 (skipped) when no
 * CUDA device is usable. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpk/cuda.h"
#include "gpk/gen.h"
#include "gpk/gpk.h"
#include "gpk/sort.h"
#include "testutil.h"

static gpk_ctx *ctx;
static cudaStream_t stream;

#define CUDA_OK(call)                                                                   \
    do {                                                                                \
        cudaError_t e_ = (call);                                                        \
        if (e_ != cudaSuccess) {                                                        \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,               \
                    cudaGetErrorString(e_));                                            \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

static void *dev_alloc(size_t bytes)
{
    void *p = NULL;
    CUDA_OK(cudaMalloc(&p, bytes ? bytes : 1));
    return p;
}

typedef struct {
    gpk_type type;
    size_t n;
    gpk_dist dist;
    unsigned key_bits, radix_bits;
    size_t value_width; /* 0: keys only */
    int in_place;
    int detect;
} tcase;

static const char *describe(const tcase *c, char *buf, size_t len)
{
    snprintf(buf, len, "%s n=%zu %s b=%u r=%u values=%zu %s%s", gpk_type_name(c->type), c->n,
             gpk_dist_name(c->dist), c->key_bits, c->radix_bits, c->value_width,
             c->in_place ? "in-place" : "out-of-place", c->detect ? " detect" : "");
    return buf;
}

static void run(const tcase *c, uint64_t seed)
{
    char what[160];
    describe(c, what, sizeof what);
    const size_t kw = gpk_type_size(c->type), n = c->n, vw = c->value_width;
    unsigned char *keys = malloc(n * kw + 1), *ref = malloc(n * kw + 1), *got = malloc(n * kw + 1);
    unsigned char *vals = malloc(n * vw + 1), *vref = malloc(n * vw + 1), *vgot = malloc(n * vw + 1);
    if (!keys || !ref || !got || !vals || !vref || !vgot) {
        fprintf(stderr, "out of host memory\n");
        exit(1);
    }
    TU_CHECK(gpk_generate(c->type, c->dist, keys, n, seed, 0) == GPK_OK, "%s: generate", what);
    /* values: the input positions, so a wrong order or a lost value shows */
    for (size_t i = 0; i < n; i++) {
        if (vw == 4) ((uint32_t *)vals)[i] = (uint32_t)i;
        if (vw == 8) ((uint64_t *)vals)[i] = (uint64_t)i * 0x100000001ull;
    }
    memcpy(ref, keys, n * kw);
    memcpy(vref, vals, n * vw);
    /* detection sorts the bits where keys differ, the same order as all bits */
    TU_CHECK(gpk_sort_reference(c->type, ref, vw, vref, NULL, n, c->key_bits) == GPK_OK,
             "%s: reference", what);

    void *d_in = dev_alloc(n * kw), *d_out = c->in_place ? d_in : dev_alloc(n * kw);
    void *dv_in = vw ? dev_alloc(n * vw) : NULL;
    void *dv_out = vw ? (c->in_place ? dv_in : dev_alloc(n * vw)) : NULL;
    CUDA_OK(cudaMemcpy(d_in, keys, n * kw, cudaMemcpyHostToDevice));
    if (vw) CUDA_OK(cudaMemcpy(dv_in, vals, n * vw, cudaMemcpyHostToDevice));
    if (!c->in_place) {
        CUDA_OK(cudaMemset(d_out, 0xa5, (n * kw) > 0 ? n * kw : 1)); /* poison */
        if (vw) CUDA_OK(cudaMemset(dv_out, 0xa5, (n * vw) > 0 ? n * vw : 1));
    }

    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    o.key_bits = c->key_bits;
    o.radix_bits = c->radix_bits;
    const unsigned flags = c->detect ? GPK_CUDA_DETECT_BITS : 0;
    size_t temp_bytes = 0;
    gpk_status s = vw ? gpk_cuda_sort_pairs(ctx, NULL, &temp_bytes, c->type, d_in, d_out, vw, dv_in,
                                            dv_out, n, &o, flags, stream)
                      : gpk_cuda_sort_keys(ctx, NULL, &temp_bytes, c->type, d_in, d_out, n, &o, flags,
                                           stream);
    TU_CHECK(s == GPK_OK && temp_bytes > 0, "%s: temp query: %s", what, gpk_last_error(ctx));
    void *temp = dev_alloc(temp_bytes);
    s = vw ? gpk_cuda_sort_pairs(ctx, temp, &temp_bytes, c->type, d_in, d_out, vw, dv_in, dv_out, n,
                                 &o, flags, stream)
           : gpk_cuda_sort_keys(ctx, temp, &temp_bytes, c->type, d_in, d_out, n, &o, flags, stream);
    TU_CHECK(s == GPK_OK, "%s: sort: %s", what, gpk_last_error(ctx));
    CUDA_OK(cudaStreamSynchronize(stream));
    CUDA_OK(cudaMemcpy(got, d_out, n * kw, cudaMemcpyDeviceToHost));
    if (vw) CUDA_OK(cudaMemcpy(vgot, dv_out, n * vw, cudaMemcpyDeviceToHost));
    size_t bad = n;
    for (size_t i = 0; i < n && bad == n; i++)
        if (memcmp(got + i * kw, ref + i * kw, kw) != 0) bad = i;
    TU_CHECK(bad == n, "%s: keys differ from the reference at %zu", what, bad);
    if (vw) TU_CHECK(memcmp(vgot, vref, n * vw) == 0, "%s: values differ from the reference", what);
    if (!c->in_place && n > 0) {
        CUDA_OK(cudaMemcpy(got, d_in, n * kw, cudaMemcpyDeviceToHost));
        TU_CHECK(memcmp(got, keys, n * kw) == 0, "%s: the input keys changed", what);
        if (vw) {
            CUDA_OK(cudaMemcpy(vgot, dv_in, n * vw, cudaMemcpyDeviceToHost));
            TU_CHECK(memcmp(vgot, vals, n * vw) == 0, "%s: the input values changed", what);
        }
    }
    cudaFree(temp);
    cudaFree(d_in);
    if (!c->in_place) cudaFree(d_out);
    if (vw) {
        cudaFree(dv_in);
        if (!c->in_place) cudaFree(dv_out);
    }
    free(keys);
    free(ref);
    free(got);
    free(vals);
    free(vref);
    free(vgot);
}

static void errors(void)
{
    size_t tb = 0;
    gpk_radix_opts o = GPK_RADIX_OPTS_INIT;
    void *d = dev_alloc(1024), *t = NULL;

    o.radix_bits = 17;
    TU_CHECK(gpk_cuda_sort_keys(ctx, NULL, &tb, GPK_U32, d, d, 16, &o, 0, stream) == GPK_EINVAL,
             "radix_bits 17 accepted");
    TU_CHECK(gpk_last_error(ctx)[0] != '\0', "no message for radix_bits 17");
    o.radix_bits = 0;
    o.key_bits = 33;
    TU_CHECK(gpk_cuda_sort_keys(ctx, NULL, &tb, GPK_U32, d, d, 16, &o, 0, stream) == GPK_EINVAL,
             "key_bits 33 on u32 accepted");
    o.key_bits = 0;
    TU_CHECK(gpk_cuda_sort_keys(ctx, NULL, NULL, GPK_U32, d, d, 16, &o, 0, stream) == GPK_EINVAL,
             "NULL temp_bytes accepted");
    TU_CHECK(gpk_cuda_sort_keys(ctx, NULL, &tb, (gpk_type)99, d, d, 16, &o, 0, stream) == GPK_EINVAL,
             "unknown type accepted");
    TU_CHECK(gpk_cuda_sort_pairs(ctx, NULL, &tb, GPK_U32, d, d, 3, d, d, 16, &o, 0, stream) == GPK_EINVAL,
             "value width 3 accepted");
    TU_CHECK(gpk_cuda_sort_keys(ctx, NULL, &tb, GPK_U32, d, d, 16, &o, 0x80, stream) == GPK_EINVAL,
             "unknown flag accepted");
    /* a temp area smaller than asked for */
    TU_CHECK(gpk_cuda_sort_keys(ctx, NULL, &tb, GPK_U32, d, d, 256, &o, 0, stream) == GPK_OK, "query");
    t = dev_alloc(tb);
    size_t small = tb - 1;
    TU_CHECK(gpk_cuda_sort_keys(ctx, t, &small, GPK_U32, d, d, 256, &o, 0, stream) == GPK_EINVAL,
             "too small temp area accepted");
    TU_CHECK(gpk_cuda_sort_keys(ctx, t, &tb, GPK_U32, NULL, d, 256, &o, 0, stream) == GPK_EINVAL,
             "NULL keys accepted");
    /* a CPU context is not a CUDA context */
    gpk_ctx *cpu = NULL;
    if (gpk_ctx_create(&cpu, GPK_BACKEND_CPU) == GPK_OK) {
        TU_CHECK(gpk_cuda_sort_keys(cpu, NULL, &tb, GPK_U32, d, d, 16, &o, 0, stream) == GPK_EINVAL,
                 "CPU context accepted");
        gpk_ctx_destroy(cpu);
    }
    TU_CHECK(gpk_cuda_sort_keys(NULL, NULL, &tb, GPK_U32, d, d, 16, &o, 0, stream) == GPK_EINVAL,
             "NULL context accepted");
    cudaFree(t);
    cudaFree(d);
}

int main(void)
{
    if (gpk_ctx_create(&ctx, GPK_BACKEND_CUDA) != GPK_OK) {
        printf("test_cuda_api: skipped: %s\n", gpk_last_error(NULL));
        return TU_SKIP;
    }
    gpk_ctx_info info;
    gpk_ctx_info_get(ctx, &info);
    printf("device: %s, %s\n", info.device_name, info.platform);
    uint64_t seed = tu_seed();
    CUDA_OK(cudaStreamCreate(&stream));

    static const size_t sizes[] = {0, 1, 2, 3, 7, 31, 32, 33, 255, 256, 257, 4093, 4095, 4096, 4097,
                                   8191, 8193, 65521, 65535, 65537, 131071, 1000003, 1048575, 1048577};
    static const unsigned br[][2] = {{0, 0}, {0, 8}, {0, 5}, {0, 11}, {0, 16}, {10, 0}, {10, 5},
                                     {10, 3}, {13, 4}, {20, 0}, {0, 1}, {0, 12}};
    gpk_rng rng;
    gpk_rng_seed(&rng, seed);
    int cases = 0;
    for (int t = GPK_U32; t <= GPK_F64; t++) {
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            const int per = sizes[si] > 100000 ? 2 : 4;
            for (int k = 0; k < per; k++) {
                tcase c;
                c.type = (gpk_type)t;
                c.n = sizes[si];
                c.dist = (gpk_dist)(gpk_rng_next(&rng) % GPK_DIST_COUNT_);
                const unsigned *p = br[gpk_rng_next(&rng) % (sizeof br / sizeof br[0])];
                c.key_bits = p[0];
                c.radix_bits = p[1];
                /* r = 1 means 32 or 64 passes: keep it to small inputs */
                if (c.radix_bits == 1 && c.n > 5000) c.radix_bits = 2;
                c.value_width = (size_t[]){0, 0, 4, 8}[gpk_rng_next(&rng) % 4];
                c.in_place = (int)(gpk_rng_next(&rng) % 2);
                c.detect = (int)(gpk_rng_next(&rng) % 3 == 0);
                run(&c, gpk_rng_next(&rng));
                cases++;
            }
        }
    }
    errors();
    printf("test_cuda_api: %d sort cases\n", cases);
    CUDA_OK(cudaStreamDestroy(stream));
    gpk_ctx_destroy(ctx);
    return tu_finish("test_cuda_api");
}
