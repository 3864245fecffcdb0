/* OpenCL backend: device discovery and selection, context, queue, program
 * and kernels, kept in ctx->opencl for the life of the gpk context. */
#include "opencl_internal.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "radix_cl.h" /* gpk_radix_cl_source[], generated from src/sort/radix.cl */

const char *gpk__cl_error_name(cl_int e)
{
    switch (e) {
#define GPK_CL_ERR(x) case x: return #x;
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

static void discover_once(void) { discovered_n = discover_devices(&discovered); }

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

int gpk__opencl_device_count(void)
{
    pthread_once(&discovery_once, discover_once);
    return discovered_n;
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

static cl_int dev_string(cl_device_id d, cl_device_info what, char *buf, size_t len)
{
    buf[0] = '\0';
    cl_int e = clGetDeviceInfo(d, what, len, buf, NULL);
    if (e == CL_INVALID_VALUE) {
        /* longer than buf: read it whole and truncate */
        size_t need = 0;
        e = clGetDeviceInfo(d, what, 0, NULL, &need);
        if (e != CL_SUCCESS) return e;
        char *tmp = malloc(need + 1);
        if (!tmp) return CL_OUT_OF_HOST_MEMORY;
        e = clGetDeviceInfo(d, what, need, tmp, NULL);
        if (e == CL_SUCCESS) snprintf(buf, len, "%s", tmp);
        free(tmp);
    }
    buf[len - 1] = '\0';
    trim(buf);
    return e;
}

static cl_int plat_string(cl_platform_id p, cl_platform_info what, char *buf, size_t len)
{
    buf[0] = '\0';
    cl_int e = clGetPlatformInfo(p, what, len, buf, NULL);
    if (e == CL_INVALID_VALUE) {
        size_t need = 0;
        e = clGetPlatformInfo(p, what, 0, NULL, &need);
        if (e != CL_SUCCESS) return e;
        char *tmp = malloc(need + 1);
        if (!tmp) return CL_OUT_OF_HOST_MEMORY;
        e = clGetPlatformInfo(p, what, need, tmp, NULL);
        if (e == CL_SUCCESS) snprintf(buf, len, "%s", tmp);
        free(tmp);
    }
    buf[len - 1] = '\0';
    trim(buf);
    return e;
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

/* ---- program ---- */

/* The program source: the common part of radix.cl followed by its template
 * part once per (key width, payload width); see the head of radix.cl. */
static char *program_source(void)
{
    static const char marker[] = "/*@@GPK_TEMPLATE@@";
    static const int kw[2] = {4, 8}, vw[3] = {0, 4, 8};
    const char *src = gpk_radix_cl_source;
    const char *tpl = strstr(src, marker);
    if (!tpl) return NULL;
    const size_t common_len = (size_t)(tpl - src), tpl_len = strlen(tpl);
    int tpl_line = 1;
    for (const char *c = src; c < tpl; c++)
        if (*c == '\n') tpl_line++;
    const size_t total = common_len + 6 * (tpl_len + 128) + 1;
    char *out = malloc(total);
    if (!out) return NULL;
    memcpy(out, src, common_len);
    size_t len = common_len;
    for (int k = 0; k < 2; k++)
        for (int v = 0; v < 3; v++) {
            len += (size_t)snprintf(out + len, total - len, "\n#define GPK_KW %d\n#define GPK_VW %d\n#line %d\n",
                                    kw[k], vw[v], tpl_line);
            memcpy(out + len, tpl, tpl_len);
            len += tpl_len;
            out[len++] = '\n';
        }
    out[len] = '\0';
    return out;
}

static gpk_status make_kernel(gpk_ctx *ctx, gpk_opencl *st, cl_program program, gpk_ocl_kernel *k,
                              const char *name)
{
    cl_int e;
    snprintf(k->name, sizeof k->name, "%s", name);
    k->phase = !strncmp(name, "scan", 4)        ? GPK_OCL_PH_SCAN
               : !strncmp(name, "transpose", 9) ? GPK_OCL_PH_TRANSPOSE
               : !strncmp(name, "reduce", 6)    ? GPK_OCL_PH_DETECT
               : strstr(name, "reorder") || strstr(name, "os_pass") ? GPK_OCL_PH_REORDER
                                                : GPK_OCL_PH_HISTOGRAM;
    k->k = clCreateKernel(program, name, &e);
    if (e != CL_SUCCESS) {
        k->k = NULL;
        char what[80];
        snprintf(what, sizeof what, "clCreateKernel(%s)", name);
        return gpk__cl_fail(ctx, e, what);
    }
    e = clGetKernelWorkGroupInfo(k->k, st->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof k->wg, &k->wg, NULL);
    if (e != CL_SUCCESS) {
        char what[96];
        snprintf(what, sizeof what, "clGetKernelWorkGroupInfo(%s)", name);
        return gpk__cl_fail(ctx, e, what);
    }
    return GPK_OK;
}

/* The start of the program's build log on one line ("" when none). */
static void build_log(gpk_opencl *st, cl_program prog, char *log, size_t len)
{
    log[0] = '\0';
    size_t need = 0;
    if (clGetProgramBuildInfo(prog, st->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &need) != CL_SUCCESS || need == 0)
        return;
    char *full = malloc(need + 1);
    if (full && clGetProgramBuildInfo(prog, st->device, CL_PROGRAM_BUILD_LOG, need, full, NULL) == CL_SUCCESS) {
        full[need] = '\0';
        snprintf(log, len, "%s", full);
        for (char *c = log; *c; c++)
            if (*c == '\n' || *c == '\r') *c = ' ';
        trim(log);
    }
    free(full);
}

/* GPK_OPENCL_VENDOR: 0 portable kernels only, 2 the vendor path or an
 * error, "emulate" the vendor path's 32-lane ranking with emulated warp
 * primitives on any device (3, for tests), anything else (default) the
 * vendor path where it builds. */
static int vendor_mode(void)
{
    const char *v = getenv("GPK_OPENCL_VENDOR");
    if (!v || !*v) return 1;
    if (!strcmp(v, "emulate")) return 3;
    return atoi(v) == 0 ? 0 : atoi(v) == 2 ? 2 : 1;
}

/* wide: positions, counts and sizes in 64 bits (GPK_POS64), for sorts past
 * 2^32 keys; the 32-bit build keeps the common sizes' local memory and
 * arithmetic as they were. */
static gpk_status build_program(gpk_ctx *ctx, gpk_opencl *st, int wide)
{
    cl_int e;
    gpk_ocl_kernels *ks = &st->ks[wide];
    char *src = program_source();
    if (!src) return gpk__fail(ctx, GPK_ENOMEM, "OpenCL: cannot assemble the radix program source");
    /* The onesweep kernels' warp primitives: NVIDIA's inline PTX where the
     * device is NVIDIA's and the program builds with them; otherwise, or
     * when that build fails, the portable program. */
    const int mode = vendor_mode();
    const int nvidia = (st->type & CL_DEVICE_TYPE_GPU) && contains_ci(st->vendor, "NVIDIA");
    if (mode == 2 && !nvidia) {
        free(src);
        return gpk__fail(ctx, GPK_EUNSUPPORTED, "GPK_OPENCL_VENDOR=2: no vendor path for %s (%s)", st->name,
                         st->vendor);
    }
    /* Keys per item are compile-time (they size private arrays); the rest
     * of the tuning is chosen per call. */
    st->os_bpt = 2u * ((256u + st->tune.os_items - 1u) / st->tune.os_items); /* half the items still work */
    if (st->os_bpt > 8) st->os_bpt = 8;
    char opts[640];
    const char *extra = getenv("GPK_OPENCL_BUILD_OPTIONS"); /* for experiments, e.g. -cl-nv-verbose */
    for (int ptx = mode != 0 && nvidia && mode != 3; ptx >= 0; ptx--) {
        const char *srcs[1] = {src};
        ks->program = clCreateProgramWithSource(st->context, 1, srcs, NULL, &e);
        if (e != CL_SUCCESS) {
            ks->program = NULL;
            free(src);
            return gpk__cl_fail(ctx, e, "clCreateProgramWithSource");
        }
        snprintf(opts, sizeof opts,
                 "-cl-std=CL1.2 -DGPK_KPT4=%u -DGPK_KPT8=%u -DGPK_RANK_BITS=4 -DGPK_OS_KPT4=%u -DGPK_OS_KPT8=%u "
                 "-DGPK_OS_BPT=%u%s%s %.300s",
                 st->tune.kpt4, st->tune.kpt8, st->tune.os_kpt4, st->tune.os_kpt8, st->os_bpt,
                 wide ? " -DGPK_POS64" : "", ptx ? " -DGPK_NV_PTX" : mode == 3 ? " -DGPK_EMU_WARP" : "",
                 extra ? extra : "");
        e = clBuildProgram(ks->program, 1, &st->device, opts, NULL, NULL);
        if (e == CL_SUCCESS) {
            ks->os_warp = ptx || mode == 3 ? 32 : 1;
            ks->os_emulated = mode == 3;
            break;
        }
        char log[400];
        build_log(st, ks->program, log, sizeof log);
        clReleaseProgram(ks->program);
        ks->program = NULL;
        if (ptx) {
            snprintf(st->vendor_log, sizeof st->vendor_log, "%s (%d): %s", gpk__cl_error_name(e), (int)e,
                     log[0] ? log : "(no build log)");
            if (mode == 2) {
                free(src);
                return gpk__fail(ctx, GPK_EDEVICE, "OpenCL build of the vendor (inline PTX) kernels failed on %s: %s",
                                 st->name, st->vendor_log);
            }
            continue;
        }
        free(src);
        return gpk__fail(ctx, GPK_EDEVICE, "OpenCL clBuildProgram failed on %s: %s (%d): %s", st->name,
                         gpk__cl_error_name(e), (int)e, log[0] ? log : "(no build log)");
    }
    free(src);

    gpk_status s;
    char name[32];
    static const int kw[2] = {4, 8}, vw[3] = {0, 4, 8};
    cl_program pr = ks->program;
    if ((s = make_kernel(ctx, st, pr, &ks->scan_parts, "scan_parts")) != GPK_OK) return s;
    if ((s = make_kernel(ctx, st, pr, &ks->scan_add, "scan_add")) != GPK_OK) return s;
    if ((s = make_kernel(ctx, st, pr, &ks->transpose[0], "transpose_w4")) != GPK_OK) return s;
    if ((s = make_kernel(ctx, st, pr, &ks->transpose[1], "transpose_w8")) != GPK_OK) return s;
    for (int k = 0; k < 2; k++) {
        snprintf(name, sizeof name, "reduce_andor_k%d", kw[k]);
        if ((s = make_kernel(ctx, st, pr, &ks->reduce[k], name)) != GPK_OK) return s;
        snprintf(name, sizeof name, "fast_count_k%d", kw[k]);
        if ((s = make_kernel(ctx, st, pr, &ks->fast_count[k], name)) != GPK_OK) return s;
        snprintf(name, sizeof name, "paper_hist_k%d", kw[k]);
        if ((s = make_kernel(ctx, st, pr, &ks->paper_hist[k], name)) != GPK_OK) return s;
        snprintf(name, sizeof name, "os_hist_k%d", kw[k]);
        if ((s = make_kernel(ctx, st, pr, &ks->os_hist[k], name)) != GPK_OK) return s;
        for (int v = 0; v < 3; v++) {
            snprintf(name, sizeof name, "fast_reorder_k%d_v%d", kw[k], vw[v]);
            if ((s = make_kernel(ctx, st, pr, &ks->fast_reorder[k][v], name)) != GPK_OK) return s;
            snprintf(name, sizeof name, "paper_reorder_k%d_v%d", kw[k], vw[v]);
            if ((s = make_kernel(ctx, st, pr, &ks->paper_reorder[k][v], name)) != GPK_OK) return s;
            snprintf(name, sizeof name, "os_pass_k%d_v%d", kw[k], vw[v]);
            if ((s = make_kernel(ctx, st, pr, &ks->os_pass[k][v], name)) != GPK_OK) return s;
        }
    }
    return GPK_OK;
}

static void release_kernels(gpk_ocl_kernels *ks);

gpk_status gpk__opencl_kernels(gpk_ctx *ctx, gpk_opencl *st, int wide, const gpk_ocl_kernels **out)
{
    wide = wide != 0;
    if (!st->ks[wide].program) {
        const gpk_status s = build_program(ctx, st, wide);
        if (s != GPK_OK) {
            release_kernels(&st->ks[wide]);
            return s;
        }
    }
    *out = &st->ks[wide];
    return GPK_OK;
}

/* ---- context ---- */

#define GPK_DEVINFO(param, var)                                                   \
    do {                                                                          \
        cl_int e_ = clGetDeviceInfo(st->device, param, sizeof(var), &(var), NULL); \
        if (e_ != CL_SUCCESS) {                                                   \
            s = gpk__cl_fail(ctx, e_, "clGetDeviceInfo(" #param ")");             \
            goto fail;                                                            \
        }                                                                         \
    } while (0)

gpk_status gpk__opencl_ctx_init(gpk_ctx *ctx)
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

    {
        const char *prof = getenv("GPK_OPENCL_PROFILE");
        st->profile = prof && *prof && strcmp(prof, "0") != 0;
    }
    gpk__radix_opencl_tune(st, &st->tune);
    if ((s = build_program(ctx, st, 0)) != GPK_OK) goto fail;
    return GPK_OK;

fail:
    gpk__opencl_ctx_release(ctx);
    return s;
}

void gpk__opencl_release_buffers(gpk_opencl *st)
{
    for (int i = 0; i < GPK_OCL_NBUF; i++) {
        if (st->buf[i].mem) clReleaseMemObject(st->buf[i].mem);
        st->buf[i].mem = NULL;
        st->buf[i].bytes = 0;
    }
}

void gpk__opencl_profile_collect(gpk_opencl *st)
{
    for (size_t i = 0; i < st->prof_n; i++) {
        cl_ulong t0 = 0, t1 = 0;
        if (clGetEventProfilingInfo(st->prof_ev[i], CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL) == CL_SUCCESS &&
            clGetEventProfilingInfo(st->prof_ev[i], CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL) == CL_SUCCESS &&
            t1 >= t0)
            st->prof_ms[st->prof_phase[i]] += (double)(t1 - t0) * 1e-6;
        clReleaseEvent(st->prof_ev[i]);
    }
    st->prof_n = 0;
}

static void release_kernel(gpk_ocl_kernel *k)
{
    if (k->k) clReleaseKernel(k->k);
    k->k = NULL;
}

static void release_kernels(gpk_ocl_kernels *ks)
{
    release_kernel(&ks->scan_parts);
    release_kernel(&ks->scan_add);
    for (int k = 0; k < 2; k++) {
        release_kernel(&ks->transpose[k]);
        release_kernel(&ks->reduce[k]);
        release_kernel(&ks->fast_count[k]);
        release_kernel(&ks->paper_hist[k]);
        release_kernel(&ks->os_hist[k]);
        for (int v = 0; v < 3; v++) {
            release_kernel(&ks->os_pass[k][v]);
            release_kernel(&ks->fast_reorder[k][v]);
            release_kernel(&ks->paper_reorder[k][v]);
        }
    }
    if (ks->program) clReleaseProgram(ks->program);
    ks->program = NULL;
}

void gpk__opencl_ctx_release(gpk_ctx *ctx)
{
    gpk_opencl *st = ctx ? (gpk_opencl *)ctx->opencl : NULL;
    if (!st) return;
    if (st->queue) clFinish(st->queue);
    gpk__opencl_profile_collect(st);
    free(st->prof_ev);
    free(st->prof_phase);
    gpk__opencl_release_buffers(st);
    release_kernels(&st->ks[0]);
    release_kernels(&st->ks[1]);
    if (st->queue) clReleaseCommandQueue(st->queue);
    if (st->context) clReleaseContext(st->context);
    free(st);
    ctx->opencl = NULL;
}
