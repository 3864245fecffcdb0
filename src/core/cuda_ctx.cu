/* CUDA contexts: device detection, device information, the backend state
 * (a stream, pinned read-back words, grow-only device buffers). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "cuda_internal.h"

extern "C" gpk_status gpk__cuda_fail(gpk_ctx *ctx, cudaError_t e, const char *what)
{
    (void)cudaGetLastError(); /* clear it, so the next call does not report it again */
    gpk_status s = (e == cudaErrorMemoryAllocation) ? GPK_ENOMEM : GPK_EDEVICE;
    return gpk__fail(ctx, s, "CUDA: %s: %s", what, cudaGetErrorString(e));
}

extern "C" gpk_status gpk__cuda_rep_end(gpk_ctx *ctx, cudaStream_t stream, double *ms, const char *what)
{
    gpk_cuda_state *st = (gpk_cuda_state *)ctx->cuda;
    cudaError_t e = cudaEventRecord(st->ev_stop, stream);
    if (e == cudaSuccess) e = cudaEventSynchronize(st->ev_stop);
    float f = 0;
    if (e == cudaSuccess) e = cudaEventElapsedTime(&f, st->ev_start, st->ev_stop);
    *ms = f;
    return e == cudaSuccess ? GPK_OK : gpk__cuda_fail(ctx, e, what);
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

extern "C" double gpk__median_ms(double *times, int reps)
{
    qsort(times, (size_t)reps, sizeof *times, cmp_double);
    return reps % 2 ? times[reps / 2] : 0.5 * (times[reps / 2 - 1] + times[reps / 2]);
}

extern "C" int gpk__cuda_device_count(void)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        /* No driver, no device, or a driver older than the runtime: the
         * CUDA backend is simply unavailable, which is not an error here. */
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

extern "C" const char *gpk__cuda_unavailable_reason(void)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e == cudaSuccess) return n > 0 ? NULL : "no CUDA device";
    (void)cudaGetLastError();
    /* The runtime is linked in statically and opens the driver itself: when
     * it could not, the driver library is not loaded now, and the runtime's
     * own words ("driver version is insufficient") would mislead. */
    void *driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!driver) return "no CUDA driver (libcuda.so.1 not found)";
    dlclose(driver);
    return cudaGetErrorString(e);
}

/* The kernel driver's version ("580.159.04") from /proc, when readable: the
 * first word after "Kernel Module" that starts with a digit. */
static void driver_version(char *out, size_t len)
{
    out[0] = '\0';
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (!f) return;
    char line[512];
    if (fgets(line, sizeof line, f)) {
        const char *p = strstr(line, "Kernel Module");
        while (p && *p) {
            while (*p && (*p < '0' || *p > '9')) {
                while (*p && *p != ' ') p++; /* skip a word */
                while (*p == ' ') p++;
            }
            size_t k = 0;
            while (p[k] && ((p[k] >= '0' && p[k] <= '9') || p[k] == '.') && k + 1 < len) {
                out[k] = p[k];
                k++;
            }
            out[k] = '\0';
            break;
        }
    }
    fclose(f);
}

extern "C" gpk_status gpk__cuda_ctx_init(gpk_ctx *ctx)
{
    int count = gpk__cuda_device_count();
    if (ctx->device >= count)
        return gpk__fail(ctx, GPK_EINVAL, "CUDA: device %d requested, but %d device%s present", ctx->device,
                         count, count == 1 ? " is" : "s are");
    cudaError_t e = cudaSetDevice(ctx->device);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "cudaSetDevice");
    cudaDeviceProp prop;
    e = cudaGetDeviceProperties(&prop, ctx->device);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "cudaGetDeviceProperties");

    gpk_cuda_state *st = (gpk_cuda_state *)calloc(1, sizeof *st);
    if (!st) return gpk__fail(ctx, GPK_ENOMEM, "CUDA: out of host memory");
    ctx->cuda = st;
    st->sm_count = prop.multiProcessorCount;
    st->smem_optin = prop.sharedMemPerBlockOptin;

    e = cudaStreamCreateWithFlags(&st->stream, cudaStreamNonBlocking);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "cudaStreamCreate");
    e = cudaEventCreate(&st->ev_start);
    if (e == cudaSuccess) e = cudaEventCreate(&st->ev_stop);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "cudaEventCreate");
    e = cudaMallocHost((void **)&st->pinned, 4 * sizeof(unsigned long long));
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "cudaMallocHost");
    int pools = 0;
    e = cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, ctx->device);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "cudaDeviceGetAttribute (memory pools)");
    if (pools) {
        cudaMemPoolProps props;
        memset(&props, 0, sizeof props);
        props.allocType = cudaMemAllocationTypePinned;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = ctx->device;
        e = cudaMemPoolCreate(&st->temp_pool, &props);
        if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "cudaMemPoolCreate");
        /* keep what was freed: the next call reuses it without mapping pages */
        unsigned long long keep = ~0ull; /* a cuuint64_t */
        e = cudaMemPoolSetAttribute(st->temp_pool, cudaMemPoolAttrReleaseThreshold, &keep);
        if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "cudaMemPoolSetAttribute");
    }

    gpk_ctx_info *info = &ctx->info;
    info->backend = GPK_BACKEND_CUDA;
    snprintf(info->device_name, sizeof info->device_name, "%s", prop.name);
    int runtime = 0;
    (void)cudaRuntimeGetVersion(&runtime);
    char drv[64];
    driver_version(drv, sizeof drv);
    if (drv[0])
        snprintf(info->platform, sizeof info->platform, "CUDA %d.%d (driver %s)", runtime / 1000,
                 (runtime % 1000) / 10, drv);
    else {
        int driver_api = 0;
        (void)cudaDriverGetVersion(&driver_api);
        snprintf(info->platform, sizeof info->platform, "CUDA %d.%d (driver API %d.%d)", runtime / 1000,
                 (runtime % 1000) / 10, driver_api / 1000, (driver_api % 1000) / 10);
    }
    info->compute_units = (unsigned)prop.multiProcessorCount;
    info->memory_bytes = (uint64_t)prop.totalGlobalMem;
    return GPK_OK;
}

extern "C" void gpk__cuda_ctx_release(gpk_ctx *ctx)
{
    gpk_cuda_state *st = (gpk_cuda_state *)ctx->cuda;
    if (!st) return;
    /* Release everything; errors cannot be reported from a destructor and
     * must not stop the rest from being freed. */
    (void)cudaSetDevice(ctx->device);
    if (st->stream) (void)cudaStreamSynchronize(st->stream);
    for (int i = 0; i < GPK_CUDA_SLOTS; i++)
        if (st->buf[i]) (void)cudaFree(st->buf[i]);
    if (st->pinned) (void)cudaFreeHost(st->pinned);
    if (st->ev_start) (void)cudaEventDestroy(st->ev_start);
    if (st->ev_stop) (void)cudaEventDestroy(st->ev_stop);
    if (st->staging) (void)cudaFreeHost(st->staging);
    for (int i = 0; i < 2; i++)
        if (st->staging_ev[i]) (void)cudaEventDestroy(st->staging_ev[i]);
    if (st->stream) (void)cudaStreamDestroy(st->stream);
    if (st->temp_pool) (void)cudaMemPoolDestroy(st->temp_pool);
    (void)cudaGetLastError();
    free(st);
    ctx->cuda = NULL;
}

/* Gives the temporaries' pool's unused memory back to the device, once
 * stream's frees into it have run. */
static cudaError_t trim_temp_pool(gpk_cuda_state *st, cudaStream_t stream)
{
    cudaError_t e = cudaStreamSynchronize(stream);
    return e == cudaSuccess ? cudaMemPoolTrimTo(st->temp_pool, 0) : e;
}

extern "C" gpk_status gpk__cuda_temp_alloc(gpk_ctx *ctx, void **p, size_t bytes, cudaStream_t stream,
                                           const char *what)
{
    gpk_cuda_state *st = (gpk_cuda_state *)ctx->cuda;
    if (bytes == 0) bytes = 1;
    cudaError_t e =
        st->temp_pool ? cudaMallocFromPoolAsync(p, bytes, st->temp_pool, stream) : cudaMalloc(p, bytes);
    if (e == cudaErrorMemoryAllocation && st->temp_pool) {
        /* what the pool keeps may be what is missing: give it back, once */
        (void)cudaGetLastError();
        e = trim_temp_pool(st, stream);
        if (e == cudaSuccess) e = cudaMallocFromPoolAsync(p, bytes, st->temp_pool, stream);
    }
    if (e != cudaSuccess) {
        *p = NULL;
        return gpk__cuda_fail(ctx, e, what);
    }
    return GPK_OK;
}

extern "C" cudaError_t gpk__cuda_temp_free(gpk_ctx *ctx, void *p, cudaStream_t stream)
{
    gpk_cuda_state *st = (gpk_cuda_state *)ctx->cuda;
    if (!p) return cudaSuccess;
    return st->temp_pool ? cudaFreeAsync(p, stream) : cudaFree(p);
}

static double mib(size_t b) { return (double)b / (1024.0 * 1024.0); }

extern "C" gpk_status gpk__cuda_reserve(gpk_ctx *ctx, const size_t bytes[GPK_CUDA_SLOTS], const char *what)
{
    gpk_cuda_state *st = (gpk_cuda_state *)ctx->cuda;
    size_t wanted = 0, grow = 0, kept = 0;
    for (int i = 0; i < GPK_CUDA_SLOTS; i++) {
        wanted += bytes[i];
        if (bytes[i] > st->buf_bytes[i]) grow += bytes[i];
        else kept += st->buf_bytes[i];
    }
    if (grow == 0) return GPK_OK;

    size_t free_b = 0, total_b = 0;
    cudaError_t e = cudaMemGetInfo(&free_b, &total_b);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "cudaMemGetInfo");
    /* Slots that grow are freed first, so their old size counts as free. */
    size_t reclaim = 0;
    for (int i = 0; i < GPK_CUDA_SLOTS; i++)
        if (bytes[i] > st->buf_bytes[i]) reclaim += st->buf_bytes[i];
    if (grow > free_b + reclaim && st->temp_pool) {
        /* the temporaries' pool may hold what is missing */
        e = trim_temp_pool(st, st->stream);
        if (e == cudaSuccess) e = cudaMemGetInfo(&free_b, &total_b);
        if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "trimming the temporaries' memory pool");
    }
    if (wanted > total_b || grow > free_b + reclaim)
        return gpk__fail(ctx, GPK_ENOMEM,
                         "CUDA: %s needs %.1f MiB of device memory; the device has %.1f MiB, "
                         "%.1f MiB free",
                         what, mib(wanted), mib(total_b), mib(free_b + reclaim + kept));

    for (int i = 0; i < GPK_CUDA_SLOTS; i++) {
        if (bytes[i] <= st->buf_bytes[i]) continue;
        if (st->buf[i]) {
            e = cudaFree(st->buf[i]);
            st->buf[i] = NULL;
            st->buf_bytes[i] = 0;
            if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "cudaFree");
        }
    }
    for (int i = 0; i < GPK_CUDA_SLOTS; i++) {
        if (bytes[i] <= st->buf_bytes[i]) continue;
        e = cudaMalloc(&st->buf[i], bytes[i]);
        if (e != cudaSuccess) {
            st->buf[i] = NULL;
            (void)cudaGetLastError();
            return gpk__fail(ctx, GPK_ENOMEM, "CUDA: %s: cudaMalloc of %.1f MiB failed: %s", what,
                             mib(bytes[i]), cudaGetErrorString(e));
        }
        st->buf_bytes[i] = bytes[i];
    }
    return GPK_OK;
}

/* Peer access is a property of the process (of its device contexts), not
 * of a gpk context: asked for once per pair, so that the second gpk context
 * over the same GPUs does not meet cudaErrorPeerAccessAlreadyEnabled (which
 * compute-sanitizer reports as an API error). */
static pthread_mutex_t peer_lock = PTHREAD_MUTEX_INITIALIZER;
#define GPK_PEER_TABLE 64
static unsigned char peer_enabled[GPK_PEER_TABLE][GPK_PEER_TABLE];

extern "C" gpk_status gpk__cuda_enable_peers(gpk_ctx *ctx)
{
    pthread_mutex_lock(&peer_lock);
    gpk_status s = GPK_OK;
    int k = 0;
    while (k < GPK_MAX_DEVICES && ctx->part[k]) k++;
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++) {
            const int di = ctx->part[i]->device, dj = ctx->part[j]->device;
            if (di == dj) {
                ctx->peer[i][j] = 1;
                continue;
            }
            const int known = di < GPK_PEER_TABLE && dj < GPK_PEER_TABLE;
            if (known && peer_enabled[di][dj]) {
                ctx->peer[i][j] = 1;
                continue;
            }
            int can = 0;
            cudaError_t e = cudaDeviceCanAccessPeer(&can, di, dj);
            if (e != cudaSuccess) {
                s = gpk__cuda_fail(ctx, e, "cudaDeviceCanAccessPeer");
                goto done;
            }
            if (!can) continue; /* the merge copies that device's pieces instead (cudaMemcpyPeerAsync) */
            e = cudaSetDevice(di);
            if (e == cudaSuccess) e = cudaDeviceEnablePeerAccess(dj, 0);
            if (e == cudaErrorPeerAccessAlreadyEnabled) {
                (void)cudaGetLastError(); /* enabled outside gpk: fine */
                e = cudaSuccess;
            }
            if (e != cudaSuccess) {
                s = gpk__cuda_fail(ctx, e, "cudaDeviceEnablePeerAccess");
                goto done;
            }
            if (known) peer_enabled[di][dj] = 1;
            ctx->peer[i][j] = 1;
        }
done:
    pthread_mutex_unlock(&peer_lock);
    cudaError_t e = cudaSetDevice(ctx->device);
    if (e != cudaSuccess && s == GPK_OK) s = gpk__cuda_fail(ctx, e, "cudaSetDevice");
    return s;
}

extern "C" const gpk__device_backend gpk__cuda_device = {
    "CUDA",
    "no usable CUDA device",
    gpk__cuda_device_count,
    gpk__cuda_unavailable_reason,
    gpk__cuda_ctx_init,
    gpk__cuda_ctx_release,
    gpk__cuda_enable_peers,
    gpk__cuda_host_lock,
    gpk__cuda_host_unlock,
};
