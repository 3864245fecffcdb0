/* OpenCL backend: device discovery and selection, context and queue, kept
 * in ctx->opencl for the life of the gpk context. The families that run on
 * OpenCL build their programs and kernels through their registered hooks
 * (gpk__opencl_families), so the core knows none of them. */
#include "opencl_internal.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *gpk__cl_error_name(cl_int e)
{
    switch (e) {
#define GPK_CL_ERR(x) \
    case x: return #x;
        GPK_CL_ERR(CL_SUCCESS)
        GPK_CL_ERR(CL_DEVICE_NOT_FOUND)
        GPK_CL_ERR(CL_DEVICE_NOT_AVAILABLE)
        GPK_CL_ERR(CL_COMPILER_NOT_AVAILABLE)
        GPK_CL_ERR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
        GPK_CL_ERR(CL_OUT_OF_RESOURCES)
        GPK_CL_ERR(CL_OUT_OF_HOST_MEMORY)
        GPK_CL_ERR(CL_PROFILING_INFO_NOT_AVAILABLE)
        GPK_CL_ERR(CL_MEM_COPY_OVERLAP)
        GPK_CL_ERR(CL_IMAGE_FORMAT_MISMATCH)
        GPK_CL_ERR(CL_IMAGE_FORMAT_NOT_SUPPORTED)
        GPK_CL_ERR(CL_BUILD_PROGRAM_FAILURE)
        GPK_CL_ERR(CL_MAP_FAILURE)
        GPK_CL_ERR(CL_MISALIGNED_SUB_BUFFER_OFFSET)
        GPK_CL_ERR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
        GPK_CL_ERR(CL_COMPILE_PROGRAM_FAILURE)
        GPK_CL_ERR(CL_LINKER_NOT_AVAILABLE)
        GPK_CL_ERR(CL_LINK_PROGRAM_FAILURE)
        GPK_CL_ERR(CL_DEVICE_PARTITION_FAILED)
        GPK_CL_ERR(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
        GPK_CL_ERR(CL_INVALID_VALUE)
        GPK_CL_ERR(CL_INVALID_DEVICE_TYPE)
        GPK_CL_ERR(CL_INVALID_PLATFORM)
        GPK_CL_ERR(CL_INVALID_DEVICE)
        GPK_CL_ERR(CL_INVALID_CONTEXT)
        GPK_CL_ERR(CL_INVALID_QUEUE_PROPERTIES)
        GPK_CL_ERR(CL_INVALID_COMMAND_QUEUE)
        GPK_CL_ERR(CL_INVALID_HOST_PTR)
        GPK_CL_ERR(CL_INVALID_MEM_OBJECT)
        GPK_CL_ERR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
        GPK_CL_ERR(CL_INVALID_IMAGE_SIZE)
        GPK_CL_ERR(CL_INVALID_SAMPLER)
        GPK_CL_ERR(CL_INVALID_BINARY)
        GPK_CL_ERR(CL_INVALID_BUILD_OPTIONS)
        GPK_CL_ERR(CL_INVALID_PROGRAM)
        GPK_CL_ERR(CL_INVALID_PROGRAM_EXECUTABLE)
        GPK_CL_ERR(CL_INVALID_KERNEL_NAME)
        GPK_CL_ERR(CL_INVALID_KERNEL_DEFINITION)
        GPK_CL_ERR(CL_INVALID_KERNEL)
        GPK_CL_ERR(CL_INVALID_ARG_INDEX)
        GPK_CL_ERR(CL_INVALID_ARG_VALUE)
        GPK_CL_ERR(CL_INVALID_ARG_SIZE)
        GPK_CL_ERR(CL_INVALID_KERNEL_ARGS)
        GPK_CL_ERR(CL_INVALID_WORK_DIMENSION)
        GPK_CL_ERR(CL_INVALID_WORK_GROUP_SIZE)
        GPK_CL_ERR(CL_INVALID_WORK_ITEM_SIZE)
        GPK_CL_ERR(CL_INVALID_GLOBAL_OFFSET)
        GPK_CL_ERR(CL_INVALID_EVENT_WAIT_LIST)
        GPK_CL_ERR(CL_INVALID_EVENT)
        GPK_CL_ERR(CL_INVALID_OPERATION)
        GPK_CL_ERR(CL_INVALID_GL_OBJECT)
        GPK_CL_ERR(CL_INVALID_BUFFER_SIZE)
        GPK_CL_ERR(CL_INVALID_MIP_LEVEL)
        GPK_CL_ERR(CL_INVALID_GLOBAL_WORK_SIZE)
        GPK_CL_ERR(CL_INVALID_PROPERTY)
        GPK_CL_ERR(CL_INVALID_IMAGE_DESCRIPTOR)
        GPK_CL_ERR(CL_INVALID_COMPILER_OPTIONS)
        GPK_CL_ERR(CL_INVALID_LINKER_OPTIONS)
        GPK_CL_ERR(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef GPK_CL_ERR
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "unknown OpenCL error";
    }
}

gpk_status gpk__cl_fail(gpk_ctx *ctx, cl_int e, const char *what)
{
    const gpk_status s =
        (e == CL_MEM_OBJECT_ALLOCATION_FAILURE || e == CL_OUT_OF_HOST_MEMORY) ? GPK_ENOMEM : GPK_EDEVICE;
    return gpk__fail(ctx, s, "OpenCL %s failed: %s (%d)", what, gpk__cl_error_name(e), (int)e);
}

/* ---- device enumeration ---- */

typedef struct dev_entry {
    cl_platform_id platform;
    cl_device_id device;
} dev_entry;

/* All devices of all platforms in a stable order: GPUs first (in platform
 * then device order), then every other device. Returns the count (0 when
 * there is no ICD, no platform or no device); *out is malloc'ed. */
static int discover_devices(dev_entry **out)
{
    *out = NULL;
    cl_uint np = 0;
    if (clGetPlatformIDs(0, NULL, &np) != CL_SUCCESS || np == 0) return 0;
    cl_platform_id *plats = malloc(np * sizeof *plats);
    if (!plats) return 0;
    if (clGetPlatformIDs(np, plats, NULL) != CL_SUCCESS) {
        free(plats);
        return 0;
    }
    dev_entry *all = NULL;
    int count = 0;
    for (int pass = 0; pass < 2; pass++) {
        /* pass 0: GPUs; pass 1: all but GPUs */
        const cl_device_type want = pass == 0 ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_ALL;
        for (cl_uint p = 0; p < np; p++) {
            cl_uint nd = 0;
            if (clGetDeviceIDs(plats[p], want, 0, NULL, &nd) != CL_SUCCESS || nd == 0) continue;
            cl_device_id *devs = malloc(nd * sizeof *devs);
            if (!devs) continue;
            if (clGetDeviceIDs(plats[p], want, nd, devs, NULL) == CL_SUCCESS) {
                for (cl_uint d = 0; d < nd; d++) {
                    cl_device_type t = 0;
                    if (clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof t, &t, NULL) != CL_SUCCESS) t = 0;
                    if (pass == 1 && (t & CL_DEVICE_TYPE_GPU)) continue;
                    dev_entry *grown = realloc(all, (size_t)(count + 1) * sizeof *all);
                    if (!grown) continue;
                    all = grown;
                    all[count].platform = plats[p];
                    all[count].device = devs[d];
                    count++;
                }
            }
            free(devs);
        }
    }
    free(plats);
    *out = all;
    return count;
}

/* The ICD loader and PoCL initialise themselves on first use, and doing
 * that on several threads at once crashes or finds no device; so the
 * platforms and devices are listed once per process, under pthread_once,
 * and every context picks from that list. */
static pthread_once_t discovery_once = PTHREAD_ONCE_INIT;
static dev_entry *discovered;
static int discovered_n;

static void discover_once(void)
{
    /* without the ICD loader there is nothing to list */
    discovered_n = gpk__cl_load() ? 0 : discover_devices(&discovered);
}

/* A copy of the process's device list; the count (0 when there is none or
 * on out of memory). */
static int list_devices(dev_entry **out)
{
    *out = NULL;
    pthread_once(&discovery_once, discover_once);
    if (discovered_n == 0) return 0;
    *out = malloc((size_t)discovered_n * sizeof **out);
    if (!*out) return 0;
    memcpy(*out, discovered, (size_t)discovered_n * sizeof **out);
    return discovered_n;
}

static int opencl_device_count(void)
{
    pthread_once(&discovery_once, discover_once);
    return discovered_n;
}

static const char *opencl_unavailable_reason(void)
{
    const char *why = gpk__cl_load();
    if (why) return why;
    return opencl_device_count() > 0 ? NULL : "no OpenCL platform or device found";
}

/* Case-insensitive substring test. */
static int contains_ci(const char *hay, const char *needle)
{
    const size_t nl = strlen(needle);
    if (nl == 0) return 1;
    for (const char *h = hay; *h; h++) {
        size_t i = 0;
        while (i < nl && h[i] && tolower((unsigned char)h[i]) == tolower((unsigned char)needle[i])) i++;
        if (i == nl) return 1;
    }
    return 0;
}

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    size_t b = 0;
    while (s[b] && isspace((unsigned char)s[b])) b++;
    if (b) memmove(s, s + b, n - b + 1);
}

/* One property of device d, or of platform p when d is NULL: the two
 * clGet*Info calls take the same arguments. */
static cl_int info_get(cl_device_id d, cl_platform_id p, cl_uint what, size_t len, void *buf, size_t *need)
{
    return d ? clGetDeviceInfo(d, what, len, buf, need) : clGetPlatformInfo(p, what, len, buf, need);
}

/* The string property `what` of device d (or of platform p when d is NULL)
 * in buf, truncated to len bytes and trimmed. */
static cl_int info_string(cl_device_id d, cl_platform_id p, cl_uint what, char *buf, size_t len)
{
    buf[0] = '\0';
    cl_int e = info_get(d, p, what, len, buf, NULL);
    if (e == CL_INVALID_VALUE) {
        /* longer than buf: read it whole and truncate */
        size_t need = 0;
        e = info_get(d, p, what, 0, NULL, &need);
        if (e != CL_SUCCESS) return e;
        char *tmp = malloc(need + 1);
        if (!tmp) return CL_OUT_OF_HOST_MEMORY;
        e = info_get(d, p, what, need, tmp, NULL);
        if (e == CL_SUCCESS) snprintf(buf, len, "%s", tmp);
        free(tmp);
    }
    buf[len - 1] = '\0';
    trim(buf);
    return e;
}

static cl_int dev_string(cl_device_id d, cl_device_info what, char *buf, size_t len)
{
    return info_string(d, NULL, what, buf, len);
}

static cl_int plat_string(cl_platform_id p, cl_platform_info what, char *buf, size_t len)
{
    return info_string(NULL, p, what, buf, len);
}

/* Picks the device: GPK_OPENCL_DEVICE (an index, or a substring of the
 * device or platform name, case-insensitive) overrides ctx->device, an
 * index in the list of list_devices (-1 counts as 0). */
static gpk_status choose_device(gpk_ctx *ctx, const dev_entry *devs, int n, int *chosen)
{
    const char *env = getenv("GPK_OPENCL_DEVICE");
    if (env && *env) {
        int all_digits = 1;
        for (const char *c = env; *c; c++)
            if (!isdigit((unsigned char)*c)) all_digits = 0;
        if (all_digits) {
            const long idx = strtol(env, NULL, 10);
            if (idx >= n)
                return gpk__fail(ctx, GPK_EINVAL, "GPK_OPENCL_DEVICE=%s: only %d OpenCL device%s", env, n,
                                 n == 1 ? "" : "s");
            *chosen = (int)idx;
            return GPK_OK;
        }
        for (int i = 0; i < n; i++) {
            char dn[256], pn[256];
            if (dev_string(devs[i].device, CL_DEVICE_NAME, dn, sizeof dn) != CL_SUCCESS) dn[0] = '\0';
            if (plat_string(devs[i].platform, CL_PLATFORM_NAME, pn, sizeof pn) != CL_SUCCESS) pn[0] = '\0';
            if (contains_ci(dn, env) || contains_ci(pn, env)) {
                *chosen = i;
                return GPK_OK;
            }
        }
        return gpk__fail(ctx, GPK_EUNSUPPORTED, "GPK_OPENCL_DEVICE=%s matches none of the %d OpenCL device%s",
                         env, n, n == 1 ? "" : "s");
    }
    const int idx = ctx->device < 0 ? 0 : ctx->device;
    if (idx >= n)
        return gpk__fail(ctx, GPK_EINVAL, "OpenCL device %d does not exist (%d device%s)", idx, n,
                         n == 1 ? "" : "s");
    *chosen = idx;
    return GPK_OK;
}

/* ---- context ---- */

#define GPK_DEVINFO(param, var)                                                    \
    do {                                                                           \
        cl_int e_ = clGetDeviceInfo(st->device, param, sizeof(var), &(var), NULL); \
        if (e_ != CL_SUCCESS) {                                                    \
            s = gpk__cl_fail(ctx, e_, "clGetDeviceInfo(" #param ")");              \
            goto fail;                                                             \
        }                                                                          \
    } while (0)

static void opencl_ctx_release(gpk_ctx *ctx);

static gpk_status opencl_ctx_init(gpk_ctx *ctx)
{
    gpk_status s = GPK_OK;
    dev_entry *devs = NULL;
    const int ndev = list_devices(&devs);
    if (ndev == 0) {
        free(devs);
        return gpk__fail(ctx, GPK_EUNSUPPORTED, "no OpenCL device found (no ICD, platform or device)");
    }
    int idx = 0;
    if ((s = choose_device(ctx, devs, ndev, &idx)) != GPK_OK) {
        free(devs);
        return s;
    }
    gpk_opencl *st = calloc(1, sizeof *st);
    if (!st) {
        free(devs);
        return gpk__fail(ctx, GPK_ENOMEM, "out of host memory for the OpenCL state");
    }
    ctx->opencl = st;
    st->platform = devs[idx].platform;
    st->device = devs[idx].device;
    free(devs);

    cl_int e;
    char pname[128], pver[128];
    if ((e = dev_string(st->device, CL_DEVICE_NAME, st->name, sizeof st->name)) != CL_SUCCESS) {
        s = gpk__cl_fail(ctx, e, "clGetDeviceInfo(CL_DEVICE_NAME)");
        goto fail;
    }
    if ((e = dev_string(st->device, CL_DEVICE_VENDOR, st->vendor, sizeof st->vendor)) != CL_SUCCESS) {
        s = gpk__cl_fail(ctx, e, "clGetDeviceInfo(CL_DEVICE_VENDOR)");
        goto fail;
    }
    if ((e = plat_string(st->platform, CL_PLATFORM_NAME, pname, sizeof pname)) != CL_SUCCESS) {
        s = gpk__cl_fail(ctx, e, "clGetPlatformInfo(CL_PLATFORM_NAME)");
        goto fail;
    }
    if ((e = plat_string(st->platform, CL_PLATFORM_VERSION, pver, sizeof pver)) != CL_SUCCESS) {
        s = gpk__cl_fail(ctx, e, "clGetPlatformInfo(CL_PLATFORM_VERSION)");
        goto fail;
    }
    GPK_DEVINFO(CL_DEVICE_TYPE, st->type);
    GPK_DEVINFO(CL_DEVICE_LOCAL_MEM_SIZE, st->local_mem);
    GPK_DEVINFO(CL_DEVICE_MAX_MEM_ALLOC_SIZE, st->max_alloc);
    GPK_DEVINFO(CL_DEVICE_GLOBAL_MEM_SIZE, st->global_mem);
    GPK_DEVINFO(CL_DEVICE_MAX_WORK_GROUP_SIZE, st->max_wg);
    GPK_DEVINFO(CL_DEVICE_MAX_COMPUTE_UNITS, st->compute_units);
    if (st->compute_units == 0) st->compute_units = 1;

    ctx->info.backend = GPK_BACKEND_OPENCL;
    snprintf(ctx->info.device_name, sizeof ctx->info.device_name, "%s", st->name);
    snprintf(ctx->info.platform, sizeof ctx->info.platform, "%.60s (%.60s)", pname, pver);
    ctx->info.compute_units = st->compute_units;
    ctx->info.memory_bytes = (uint64_t)st->global_mem;

    const cl_context_properties props[3] = {CL_CONTEXT_PLATFORM, (cl_context_properties)st->platform, 0};
    st->context = clCreateContext(props, 1, &st->device, NULL, NULL, &e);
    if (e != CL_SUCCESS) {
        st->context = NULL;
        s = gpk__cl_fail(ctx, e, "clCreateContext");
        goto fail;
    }
    /* In-order queue: each kernel of a pass consumes the previous one's
     * output. Profiling is on so that tools can time commands. */
    st->queue = clCreateCommandQueue(st->context, st->device, CL_QUEUE_PROFILING_ENABLE, &e);
    if (e != CL_SUCCESS) {
        st->queue = NULL;
        s = gpk__cl_fail(ctx, e, "clCreateCommandQueue");
        goto fail;
    }

    for (const gpk_opencl_family *const *f = gpk__opencl_families; *f; f++)
        if ((s = (*f)->init(ctx, st)) != GPK_OK) goto fail;
    return GPK_OK;

fail:
    opencl_ctx_release(ctx);
    return s;
}

static void opencl_ctx_release(gpk_ctx *ctx)
{
    gpk_opencl *st = ctx ? (gpk_opencl *)ctx->opencl : NULL;
    if (!st) return;
    if (st->queue) clFinish(st->queue);
    for (const gpk_opencl_family *const *f = gpk__opencl_families; *f; f++) (*f)->release(ctx);
    if (st->queue) clReleaseCommandQueue(st->queue);
    if (st->context) clReleaseContext(st->context);
    free(st);
    ctx->opencl = NULL;
}

const gpk__device_backend gpk__opencl_device = {
    "OpenCL",
    "no usable OpenCL device",
    opencl_device_count,
    opencl_unavailable_reason,
    opencl_ctx_init,
    opencl_ctx_release,
    NULL,
    NULL,
    NULL,
};
