/* The CUDA device-pointer API (include/gpk/cuda.h) against the reference
 * sort: temporary-storage query, in place and out of place, keys and pairs,
 * every key type, sizes 0, 1, primes and 2^k +- 1, every distribution
 * (float specials included), several (b, r) pairs with r not dividing b,
 * bit-range detection, the bit-range calls (_bits, two side by side on
 * two streams), and the argument errors. Exits 77 (skipped) when no
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
#include "hookargs.h"

static gpk_ctx *ctx;
static cudaStream_t stream;
/* GPK_TEST_SMALL=1 (compute-sanitizer runs it): the sizes up to 65537,
 * since racecheck multiplies a kernel's time by hundreds */
static size_t max_n = SIZE_MAX;

#define CUDA_OK(call)                                                                              \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1);                                                                               \
        }                                                                                          \
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
    TU_CHECK(gpk_sort_reference(c->type, ref, vw, vref, NULL, n, c->key_bits) == GPK_OK, "%s: reference",
             what);

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
    gpk_status s = vw
        ? gpk_cuda_sort_pairs(ctx, NULL, &temp_bytes, c->type, d_in, d_out, vw, dv_in, dv_out, n, &o, flags,
                              stream)
        : gpk_cuda_sort_keys(ctx, NULL, &temp_bytes, c->type, d_in, d_out, n, &o, flags, stream);
    TU_CHECK(s == GPK_OK && temp_bytes > 0, "%s: temp query: %s", what, gpk_last_error(ctx));
    void *temp = dev_alloc(temp_bytes);
    s = vw ? gpk_cuda_sort_pairs(ctx, temp, &temp_bytes, c->type, d_in, d_out, vw, dv_in, dv_out, n, &o,
                                 flags, stream)
           : gpk_cuda_sort_keys(ctx, temp, &temp_bytes, c->type, d_in, d_out, n, &o, flags, stream);
    TU_CHECK(s == GPK_OK, "%s: sort: %s", what, gpk_last_error(ctx));
    {
        /* a call the one-block sort takes whole asks for 1 byte (no work
         * tables, no spare), and only such a call does */
        const char *path = gpk_last_sort_path(ctx);
        const int tile = path && strcmp(path, "radix-tile") == 0;
        if (temp_bytes == 1)
            TU_CHECK(tile || n < 2, "%s: 1 byte of temp, but the path was %s", what, path ? path : "(none)");
        if (tile && !c->detect)
            TU_CHECK(temp_bytes == 1, "%s: the one-block sort ran, but the call asked for %zu bytes", what,
                     temp_bytes);
    }
    CUDA_OK(cudaStreamSynchronize(stream));
    CUDA_OK(cudaMemcpy(got, d_out, n * kw, cudaMemcpyDeviceToHost));
    if (vw) CUDA_OK(cudaMemcpy(vgot, dv_out, n * vw, cudaMemcpyDeviceToHost));
    size_t bad = tu_first_difference(got, ref, n, kw);
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

/* The mapped key (gpk/sort.h), for the bit-range reference below. */
static uint64_t mapped(gpk_type t, const unsigned char *k)
{
    uint32_t u;
    uint64_t v;
    switch (t) {
    case GPK_U32: memcpy(&u, k, 4); return u;
    case GPK_I32: memcpy(&u, k, 4); return u ^ 0x80000000u;
    case GPK_F32:
        memcpy(&u, k, 4);
        return (uint32_t)(((u & 0x80000000u) ? ~u : (u ^ 0x80000000u)) - 0x7FFFFFu);
    case GPK_U64: memcpy(&v, k, 8); return v;
    case GPK_I64: memcpy(&v, k, 8); return v ^ 0x8000000000000000ull;
    default:
        memcpy(&v, k, 8);
        return ((v & 0x8000000000000000ull) ? ~v : (v ^ 0x8000000000000000ull)) - 0xFFFFFFFFFFFFFull;
    }
}

/* gpk_cuda_sort_{keys,pairs}_bits: each case is two sorts of different
 * inputs and bit ranges issued side by side on two streams (the calls'
 * promise), each against the reference: a stable sort of the input
 * positions by the digit (mapped key >> begin) & (2^(end - begin) - 1). */
static void bits_cases(gpk_rng *rng)
{
    static const size_t sizes[] = {0, 1, 2, 7, 257, 4097, 65537, 300007, 1048577, 3000017};
    cudaStream_t s2;
    CUDA_OK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    int cases = 0;
    for (int t = GPK_U32; t <= GPK_F64; t++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            if (sizes[si] > max_n) continue;
            const size_t kw = gpk_type_size((gpk_type)t), bits = 8 * kw;
            struct one {
                size_t n, vw;
                unsigned begin, end;
                int in_place;
                unsigned char *keys, *got;
                uint32_t *vals, *vgot;
                void *d_in, *d_out, *dv_in, *dv_out, *temp;
                size_t temp_bytes;
            } c[2];
            char what[2][160];
            for (int j = 0; j < 2; j++) {
                struct one *o = &c[j];
                o->n = j == 0 ? sizes[si] : sizes[(si * 7 + 3) % (sizeof sizes / sizeof sizes[0])];
                if (o->n > max_n) o->n = max_n;
                const unsigned pick = (unsigned)(gpk_rng_next(rng) % 4);
                /* the top byte (a partition), all but it (the parts), a middle range, a random one */
                o->begin = pick == 0 ? (unsigned)bits - 8
                    : pick == 1      ? 0
                    : pick == 2      ? 5
                                     : (unsigned)(gpk_rng_next(rng) % bits);
                o->end = pick == 0 ? (unsigned)bits
                    : pick == 1    ? (unsigned)bits - 8
                    : pick == 2    ? 19
                                   : o->begin + 1 + (unsigned)(gpk_rng_next(rng) % (bits - o->begin));
                o->vw = (gpk_rng_next(rng) % 2) ? 4 : 0;
                o->in_place = (int)(gpk_rng_next(rng) % 2);
                const gpk_dist dist = (gpk_dist)(gpk_rng_next(rng) % GPK_DIST_COUNT_);
                snprintf(what[j], sizeof what[j], "bits %s n=%zu %s [%u, %u) values=%zu %s",
                         gpk_type_name((gpk_type)t), o->n, gpk_dist_name(dist), o->begin, o->end, o->vw,
                         o->in_place ? "in-place" : "out-of-place");
                o->keys = malloc(o->n * kw + 1), o->got = malloc(o->n * kw + 1);
                o->vals = malloc(o->n * 4 + 4), o->vgot = malloc(o->n * 4 + 4);
                if (!o->keys || !o->got || !o->vals || !o->vgot) {
                    fprintf(stderr, "out of host memory\n");
                    exit(1);
                }
                TU_CHECK(gpk_generate((gpk_type)t, dist, o->keys, o->n, gpk_rng_next(rng), 0) == GPK_OK,
                         "%s: generate", what[j]);
                for (size_t i = 0; i < o->n; i++) o->vals[i] = (uint32_t)i;
                o->d_in = dev_alloc(o->n * kw), o->d_out = o->in_place ? o->d_in : dev_alloc(o->n * kw);
                o->dv_in = o->vw ? dev_alloc(o->n * 4) : NULL;
                o->dv_out = o->vw ? (o->in_place ? o->dv_in : dev_alloc(o->n * 4)) : NULL;
                CUDA_OK(cudaMemcpy(o->d_in, o->keys, o->n * kw, cudaMemcpyHostToDevice));
                if (o->vw) CUDA_OK(cudaMemcpy(o->dv_in, o->vals, o->n * 4, cudaMemcpyHostToDevice));
                o->temp_bytes = 0;
                /* the query (temp NULL), then the sort below */
                gpk_status s = o->vw
                    ? gpk_cuda_sort_pairs_bits(ctx, NULL, &o->temp_bytes, (gpk_type)t, o->d_in, o->d_out, 4,
                                               o->dv_in, o->dv_out, o->n, o->begin, o->end, j ? s2 : stream)
                    : gpk_cuda_sort_keys_bits(ctx, NULL, &o->temp_bytes, (gpk_type)t, o->d_in, o->d_out, o->n,
                                              o->begin, o->end, j ? s2 : stream);
                TU_CHECK(s == GPK_OK, "%s: temp query: %s", what[j], gpk_last_error(ctx));
                o->temp = dev_alloc(o->temp_bytes);
            }
            CUDA_OK(cudaDeviceSynchronize()); /* the copies in; then both sorts at once */
            for (int j = 0; j < 2; j++) {
                struct one *o = &c[j];
                gpk_status s = o->vw
                    ? gpk_cuda_sort_pairs_bits(ctx, o->temp, &o->temp_bytes, (gpk_type)t, o->d_in, o->d_out,
                                               4, o->dv_in, o->dv_out, o->n, o->begin, o->end,
                                               j ? s2 : stream)
                    : gpk_cuda_sort_keys_bits(ctx, o->temp, &o->temp_bytes, (gpk_type)t, o->d_in, o->d_out,
                                              o->n, o->begin, o->end, j ? s2 : stream);
                TU_CHECK(s == GPK_OK, "%s: sort: %s", what[j], gpk_last_error(ctx));
            }
            CUDA_OK(cudaDeviceSynchronize());
            for (int j = 0; j < 2; j++) {
                struct one *o = &c[j];
                CUDA_OK(cudaMemcpy(o->got, o->d_out, o->n * kw, cudaMemcpyDeviceToHost));
                if (o->vw) CUDA_OK(cudaMemcpy(o->vgot, o->dv_out, o->n * 4, cudaMemcpyDeviceToHost));
                /* the reference: input positions stably sorted by the digit */
                const unsigned w = o->end - o->begin;
                uint64_t *digit = malloc(o->n * 8 + 8);
                uint32_t *pos = malloc(o->n * 4 + 4);
                for (size_t i = 0; i < o->n; i++) {
                    const uint64_t m = mapped((gpk_type)t, o->keys + i * kw) >> o->begin;
                    digit[i] = w >= 64 ? m : m & ((1ull << w) - 1);
                    pos[i] = (uint32_t)i;
                }
                TU_CHECK(gpk_sort_reference(GPK_U64, digit, 4, pos, NULL, o->n, 0) == GPK_OK, "%s: reference",
                         what[j]);
                size_t bad = o->n;
                for (size_t i = 0; i < o->n && bad == o->n; i++) {
                    if (memcmp(o->got + i * kw, o->keys + (size_t)pos[i] * kw, kw)) bad = i;
                    if (o->vw && o->vgot[i] != pos[i]) bad = i;
                }
                TU_CHECK(bad == o->n, "%s: differs from the reference at %zu", what[j], bad);
                free(digit), free(pos);
                cudaFree(o->temp);
                cudaFree(o->d_in);
                if (!o->in_place) cudaFree(o->d_out);
                if (o->vw) {
                    cudaFree(o->dv_in);
                    if (!o->in_place) cudaFree(o->dv_out);
                }
                free(o->keys), free(o->got), free(o->vals), free(o->vgot);
                cases++;
            }
        }
    /* empty and outside ranges, a bad value width */
    size_t tb = 0;
    void *d = dev_alloc(64);
    TU_CHECK(gpk_cuda_sort_keys_bits(ctx, NULL, &tb, GPK_U32, d, d, 16, 8, 8, stream) == GPK_EINVAL &&
                 strstr(gpk_last_error(ctx), "[8, 8)"),
             "empty bit range accepted (%s)", gpk_last_error(ctx));
    TU_CHECK(gpk_cuda_sort_keys_bits(ctx, NULL, &tb, GPK_U32, d, d, 16, 0, 33, stream) == GPK_EINVAL,
             "bits [0, 33) of u32 accepted");
    TU_CHECK(gpk_cuda_sort_keys_bits(ctx, NULL, &tb, GPK_F64, d, d, 16, 60, 65, stream) == GPK_EINVAL,
             "bits [60, 65) of f64 accepted");
    TU_CHECK(gpk_cuda_sort_pairs_bits(ctx, NULL, &tb, GPK_U32, d, d, 2, d, d, 16, 0, 8, stream) == GPK_EINVAL,
             "value width 2 accepted");
    TU_CHECK(gpk_cuda_sort_keys_bits(NULL, NULL, &tb, GPK_U32, d, d, 16, 0, 8, stream) == GPK_EINVAL,
             "NULL context accepted");
    cudaFree(d);
    CUDA_OK(cudaStreamDestroy(s2));
    printf("test_cuda_api: %d bit-range sorts\n", cases);
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
    /* GPK_KEY_BITS_ALL: every bit, as 0 is here (the same temp) */
    size_t tb_all = 0, tb_zero = 0;
    o.key_bits = GPK_KEY_BITS_ALL;
    TU_CHECK(gpk_cuda_sort_keys(ctx, NULL, &tb_all, GPK_U32, d, d, 16, &o, 0, stream) == GPK_OK,
             "key_bits ALL refused: %s", gpk_last_error(ctx));
    o.key_bits = 0;
    TU_CHECK(gpk_cuda_sort_keys(ctx, NULL, &tb_zero, GPK_U32, d, d, 16, &o, 0, stream) == GPK_OK &&
                 tb_all == tb_zero,
             "key_bits ALL: temp %zu, key_bits 0: %zu", tb_all, tb_zero);
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
    /* arrays that share memory (other than in == out) are refused before
     * the device touches them */
    char *dc = (char *)d;
    TU_CHECK(gpk_cuda_sort_keys(ctx, t, &tb, GPK_U32, d, dc + 4, 128, &o, 0, stream) == GPK_EINVAL &&
                 strstr(gpk_last_error(ctx), "overlap"),
             "keys out one key past keys in accepted: %s", gpk_last_error(ctx));
    TU_CHECK(gpk_cuda_sort_keys(ctx, d, &tb, GPK_U32, d, d, 256, &o, 0, stream) == GPK_EINVAL &&
                 strstr(gpk_last_error(ctx), "overlap"),
             "temp on the keys accepted: %s", gpk_last_error(ctx));
    size_t tbp = 0;
    TU_CHECK(gpk_cuda_sort_pairs(ctx, NULL, &tbp, GPK_U32, d, d, 4, dc + 512, dc + 512, 64, &o, 0, stream) ==
                 GPK_OK,
             "pairs query");
    void *tp = dev_alloc(tbp);
    TU_CHECK(gpk_cuda_sort_pairs(ctx, tp, &tbp, GPK_U32, d, d, 4, dc + 4, dc + 4, 64, &o, 0, stream) ==
                     GPK_EINVAL &&
                 strstr(gpk_last_error(ctx), "overlap"),
             "values on the keys accepted: %s", gpk_last_error(ctx));
    TU_CHECK(gpk_cuda_sort_pairs(ctx, tp, &tbp, GPK_U32, d, d, 4, dc + 512, dc + 512, 64, &o, 0, stream) ==
                 GPK_OK,
             "adjacent keys and values refused: %s", gpk_last_error(ctx));
    CUDA_OK(cudaStreamSynchronize(stream));
    cudaFree(tp);
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

int main(int argc, char **argv)
{
    hook_args(&argc, argv); /* e.g. radix_cuda_hybrid=1 (scripts/gpu-check.sh) */
    if (gpk_ctx_create(&ctx, GPK_BACKEND_CUDA) != GPK_OK) {
        printf("test_cuda_api: skipped: %s\n", gpk_last_error(NULL));
        return TU_SKIP;
    }
    if (getenv("GPK_TEST_SMALL") && *getenv("GPK_TEST_SMALL") == '1') max_n = 65537;
    gpk_ctx_info info;
    gpk_ctx_info_get(ctx, &info);
    printf("device: %s, %s\n", info.device_name, info.platform);
    uint64_t seed = tu_seed();
    CUDA_OK(cudaStreamCreate(&stream));

    static const size_t sizes[] = {0,    1,     2,     3,     7,      31,      32,      33,
                                   255,  256,   257,   4093,  4095,   4096,    4097,    8191,
                                   8193, 65521, 65535, 65537, 131071, 1000003, 1048575, 1048577};
    static const unsigned br[][2] = {{0, 0},  {0, 8},  {0, 5},  {0, 11}, {0, 16}, {10, 0},
                                     {10, 5}, {10, 3}, {13, 4}, {20, 0}, {0, 1},  {0, 12}};
    gpk_rng rng;
    gpk_rng_seed(&rng, seed);
    int cases = 0;
    for (int t = GPK_U32; t <= GPK_F64; t++) {
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            if (sizes[si] > max_n) continue;
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
    bits_cases(&rng);
    printf("test_cuda_api: %d sort cases\n", cases);
    CUDA_OK(cudaStreamDestroy(stream));
    gpk_ctx_destroy(ctx);
    return tu_finish("test_cuda_api");
}
