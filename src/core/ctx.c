/* Contexts: backend selection, thread count, device information. */
#include "internal.h"
#include "key_traits.h"

#include <errno.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

const char *gpk_version(void) { return GPK_VERSION_STRING; }

/* gpk__backends' row of b; NULL for AUTO and unknown values. */
static const gpk__backend_row *backend_row(gpk_backend b)
{
    for (const gpk__backend_row *r = gpk__backends; r->name; r++)
        if (r->id == b) return r;
    return NULL;
}

const char *gpk_backend_name(gpk_backend b)
{
    if (b == GPK_BACKEND_AUTO) return "auto";
    const gpk__backend_row *r = backend_row(b);
    return r ? r->name : "unknown";
}

gpk_status gpk_backend_parse(const char *name, gpk_backend *out)
{
    if (!name || !out) return GPK_EINVAL;
    if (strcasecmp(name, "auto") == 0) {
        *out = GPK_BACKEND_AUTO;
        return GPK_OK;
    }
    for (const gpk__backend_row *r = gpk__backends; r->name; r++)
        if (strcasecmp(name, r->name) == 0) {
            *out = r->id;
            return GPK_OK;
        }
    return GPK_EINVAL;
}

int gpk_backend_count(void)
{
    int n = 0;
    while (gpk__backends[n].name) n++;
    return n;
}

gpk_backend gpk_backend_at(int i)
{
    return i >= 0 && i < gpk_backend_count() ? gpk__backends[i].id : GPK_BACKEND_AUTO;
}

int gpk_backend_built(gpk_backend b)
{
    const gpk__backend_row *r = backend_row(b);
    return r && !r->not_built;
}

size_t gpk_type_size(gpk_type t) { return gpk_key_bytes(t); }

const char *gpk_type_name(gpk_type t)
{
#define TYPE_NAME(T, N, B, U, C, K) \
    case T: return #N;
    switch (t) {
        GPK_KEY_TYPES(TYPE_NAME)
    }
#undef TYPE_NAME
    return "unknown";
}

gpk_status gpk_type_parse(const char *name, gpk_type *out)
{
#define TYPE_ENTRY(T, N, B, U, C, K) T,
    static const gpk_type all[] = {GPK_KEY_TYPES(TYPE_ENTRY)};
#undef TYPE_ENTRY
    if (!name || !out) return GPK_EINVAL;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcasecmp(name, gpk_type_name(all[i])) == 0) {
            *out = all[i];
            return GPK_OK;
        }
    return GPK_EINVAL;
}

const gpk__device_backend *gpk__device_backend_of(gpk_backend b, const char **not_built)
{
    const gpk__backend_row *r = backend_row(b);
    if (not_built) *not_built = r ? r->not_built : NULL;
    if (r && r->load) return r->load(b, not_built);
    return r ? r->device : NULL;
}

int gpk_device_count(gpk_backend b)
{
    if (b == GPK_BACKEND_CPU) return 1;
    /* AUTO: CUDA's devices, else the CPU */
    const gpk__device_backend *dev =
        gpk__device_backend_of(b == GPK_BACKEND_AUTO ? GPK_BACKEND_CUDA : b, NULL);
    const int n = dev ? dev->device_count() : 0;
    if (b == GPK_BACKEND_AUTO) return n > 0 ? n : 1;
    return n > 0 ? n : 0;
}

int gpk_backend_available(gpk_backend b)
{
    /* AUTO is always available (the CPU stands in) without asking CUDA */
    return b == GPK_BACKEND_AUTO || gpk_device_count(b) > 0;
}

static void *probe_thread(void *arg) { return arg; }

/* The power of two of a size suffix: K, M or G (either case) for 2^10,
 * 2^20, 2^30; -1 for any other character. */
static int size_suffix_shift(char c)
{
    switch (c) {
    case 'k':
    case 'K': return 10;
    case 'm':
    case 'M': return 20;
    case 'g':
    case 'G': return 30;
    default: return -1;
    }
}

/* The stack size libgomp gives its threads: OMP_STACKSIZE / GOMP_STACKSIZE
 * ("size[B|K|M|G]", kilobytes by default), else the pthread default. */
static size_t omp_stack_bytes(void)
{
    const char *v = getenv("GOMP_STACKSIZE");
    if (!v || !*v) v = getenv("OMP_STACKSIZE");
    if (!v || !*v) return 0;
    char *end;
    unsigned long long x = strtoull(v, &end, 10);
    while (*end == ' ') end++;
    const int shift = *end == '\0' ? 10 : (*end == 'b' || *end == 'B') ? 0 : size_suffix_shift(*end);
    if (shift < 0) return 0;
    return x > (SIZE_MAX >> shift) ? 0 : (size_t)x << shift;
}

/* libgomp ends the process when it cannot create a team's threads (a
 * memory or process limit), so the team size is tried with plain pthreads
 * of the same stack size first, and a shortfall becomes a status. libgomp
 * keeps its threads between parallel regions, so once a team of this size
 * exists it is not created again. */
static gpk_status probe_threads(gpk_ctx *ctx, int threads)
{
    if (threads <= 1) return GPK_OK;
    pthread_t *t = malloc((size_t)(threads - 1) * sizeof *t);
    if (!t) return gpk__fail(ctx, GPK_ENOMEM, "out of host memory for %d thread handles", threads);
    pthread_attr_t attr;
    int have_attr = 0;
    const size_t stack = omp_stack_bytes();
    if (stack && pthread_attr_init(&attr) == 0) {
        have_attr = pthread_attr_setstacksize(&attr, stack) == 0;
        if (!have_attr) pthread_attr_destroy(&attr);
    }
    int started = 0, e = 0;
    for (; started < threads - 1; started++)
        if ((e = pthread_create(&t[started], have_attr ? &attr : NULL, probe_thread, NULL)) != 0) break;
    for (int i = 0; i < started; i++) pthread_join(t[i], NULL);
    if (have_attr) pthread_attr_destroy(&attr);
    free(t);
    if (started < threads - 1)
        return gpk__fail(ctx, GPK_ENOMEM,
                         "cannot create %d CPU threads (%d were possible: %s); "
                         "ask for fewer with --threads or GPK_THREADS",
                         threads, started + 1, strerror(e));
    return GPK_OK;
}

/* The thread count: the request, else GPK_THREADS, else the cores; at most
 * GPK_THREADS_PER_CORE per core, since more only adds waiting. */
#define GPK_THREADS_PER_CORE 4
static gpk_status resolve_threads(gpk_ctx *ctx, int requested, int *out)
{
    const int cores = omp_get_num_procs() > 0 ? omp_get_num_procs() : 1;
    long t = requested;
    if (t <= 0) {
        const char *env = getenv("GPK_THREADS");
        if (env && *env) {
            char *end;
            errno = 0;
            t = strtol(env, &end, 10);
            if (errno || end == env || *end != '\0' || t < 0)
                return gpk__fail(ctx, GPK_EINVAL,
                                 "GPK_THREADS=%s: expected a thread count, 0 or unset for all %d cores", env,
                                 cores);
        }
    }
    if (t <= 0) t = cores;
    if (t > (long)GPK_THREADS_PER_CORE * cores) t = (long)GPK_THREADS_PER_CORE * cores;
    GPK_CHECK(probe_threads(ctx, (int)t));
    *out = (int)t;
    return GPK_OK;
}

static void cpu_info(gpk_ctx *ctx)
{
    gpk_ctx_info *info = &ctx->info;
    snprintf(info->device_name, sizeof info->device_name, "CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f)) {
            if (strncmp(line, "model name", 10) == 0) {
                const char *colon = strchr(line, ':');
                if (colon) {
                    colon++;
                    while (*colon == ' ') colon++;
                    snprintf(info->device_name, sizeof info->device_name, "%s", colon);
                    info->device_name[strcspn(info->device_name, "\n")] = '\0';
                }
                break;
            }
        }
        fclose(f);
    }
    snprintf(info->platform, sizeof info->platform, "CPU (OpenMP)");
    info->compute_units = (unsigned)ctx->threads;
    info->memory_bytes = gpk__host_memory_bytes(); /* the container's limit where smaller */
}

/* GPK_DEVICE_BUDGET: a byte count with an optional K, M or G (powers of
 * 1024); unset or empty leaves the budget off. */
static gpk_status env_device_budget(size_t *out)
{
    *out = 0;
    const char *v = getenv("GPK_DEVICE_BUDGET");
    if (!v || !*v) return GPK_OK;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    int shift = 0;
    if (end != v && *end) shift = size_suffix_shift(*end++);
    if (errno || end == v || *end != '\0' || shift < 0 || v[0] == '-' || x > (SIZE_MAX >> shift))
        return gpk__fail(NULL, GPK_EINVAL,
                         "GPK_DEVICE_BUDGET=%s: expected a byte count such as 268435456, 256M or 2G", v);
    *out = (size_t)x << shift;
    return GPK_OK;
}

/* The device list: opts->devices, else GPK_DEVICES ("0,1") when no single
 * device was asked for, else the one device (-1: resolved later). */
static gpk_status device_list(const gpk_ctx_opts *o, int list[GPK_MAX_DEVICES], int *count)
{
    if (o->n_devices < 0 || o->n_devices > GPK_MAX_DEVICES)
        return gpk__fail(NULL, GPK_EINVAL, "gpk_ctx_create: n_devices = %d, expected 0..%d", o->n_devices,
                         GPK_MAX_DEVICES);
    if (o->n_devices > 0) {
        if (!o->devices)
            return gpk__fail(NULL, GPK_EINVAL, "gpk_ctx_create: n_devices = %d but devices is NULL",
                             o->n_devices);
        for (int i = 0; i < o->n_devices; i++) {
            if (o->devices[i] < 0)
                return gpk__fail(NULL, GPK_EINVAL, "gpk_ctx_create: devices[%d] = %d is negative", i,
                                 o->devices[i]);
            list[i] = o->devices[i];
        }
        *count = o->n_devices;
        return GPK_OK;
    }
    const char *env = getenv("GPK_DEVICES");
    if (o->device < 0 && env && *env) {
        int k = 0;
        const char *p = env;
        for (;;) {
            char *end;
            errno = 0;
            long d = strtol(p, &end, 10);
            if (errno || end == p || d < 0 || d > 65535 || k == GPK_MAX_DEVICES ||
                (*end != ',' && *end != '\0'))
                return gpk__fail(
                    NULL, GPK_EINVAL,
                    "GPK_DEVICES=%s: expected 1 to %d device indices separated by commas, such as 0,1", env,
                    GPK_MAX_DEVICES);
            list[k++] = (int)d;
            if (*end == '\0') break;
            p = end + 1;
        }
        *count = k;
        return GPK_OK;
    }
    list[0] = o->device;
    *count = 1;
    return GPK_OK;
}

/* The contexts of devices 1..K-1 (CUDA), peer access between them. */
static gpk_status open_parts(gpk_ctx *ctx, const int *list, int count)
{
    ctx->part[0] = ctx;
    for (int i = 1; i < count; i++) {
        if (ctx->backend == GPK_BACKEND_CPU) {
            ctx->part[i] = ctx; /* the CPU's virtual devices */
            continue;
        }
        gpk_ctx_opts po = GPK_CTX_OPTS_INIT;
        po.backend = ctx->backend;
        po.device = list[i];
        po.threads = ctx->threads / count > 0 ? ctx->threads / count : 1;
        po.n_devices = 1;
        po.devices = &list[i];
        gpk_status s = gpk_ctx_create_ex(&ctx->part[i], &po);
        if (s != GPK_OK) {
            ctx->part[i] = NULL;
            return gpk__fail(ctx, s, "device %d of %d (GPK_DEVICES / devices[%d] = %d): %s", i + 1, count, i,
                             list[i], gpk_last_error(NULL));
        }
        ctx->part[i]->device_budget = ctx->device_budget;
    }
    const gpk__device_backend *dev = gpk__device_backend_of(ctx->backend, NULL);
    if (dev && dev->enable_peers && count > 1) return dev->enable_peers(ctx);
    return GPK_OK;
}

gpk_status gpk_ctx_create(gpk_ctx **ctx, gpk_backend backend)
{
    gpk_ctx_opts o = GPK_CTX_OPTS_INIT;
    o.backend = backend;
    return gpk_ctx_create_ex(ctx, &o);
}

gpk_status gpk_ctx_create_ex(gpk_ctx **out, const gpk_ctx_opts *opts)
{
    gpk__clear_error(NULL);
    if (!out) return gpk__fail(NULL, GPK_EINVAL, "gpk_ctx_create: ctx pointer is NULL");
    *out = NULL;
    gpk_ctx_opts o = GPK_CTX_OPTS_INIT;
    if (opts) o = *opts;

    /* The environment overrides only AUTO: an explicit request is kept. */
    gpk_backend backend = o.backend;
    const char *env = getenv("GPK_BACKEND");
    if (backend == GPK_BACKEND_AUTO && env && *env) {
        if (gpk_backend_parse(env, &backend) != GPK_OK)
            return gpk__fail(NULL, GPK_EINVAL, "GPK_BACKEND=%s: expected auto, cpu, cuda or opencl", env);
    }
    if (backend != GPK_BACKEND_AUTO && !backend_row(backend))
        return gpk__fail(NULL, GPK_EINVAL, "gpk_ctx_create: unknown backend %d", (int)backend);
    if (backend == GPK_BACKEND_AUTO)
        backend = gpk_backend_available(GPK_BACKEND_CUDA) ? GPK_BACKEND_CUDA : GPK_BACKEND_CPU;

    int devices[GPK_MAX_DEVICES], n_devices = 0;
    GPK_CHECK(device_list(&o, devices, &n_devices));
    const char *not_built = NULL;
    const gpk__device_backend *dev = gpk__device_backend_of(backend, &not_built);
    if (dev && !dev->enable_peers && n_devices > 1)
        return gpk__fail(NULL, GPK_EUNSUPPORTED, "%s backend: one device per context (%d asked for)",
                         dev->label, n_devices);
    size_t budget;
    GPK_CHECK(env_device_budget(&budget));
    gpk_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return gpk__fail(NULL, GPK_ENOMEM, "gpk_ctx_create: out of host memory");
    ctx->device_budget = budget;
    ctx->backend = backend;
    ctx->device = devices[0] >= 0 ? devices[0] : gpk__env_int("GPK_DEVICE", 0);
    if (ctx->device < 0) ctx->device = 0;
    devices[0] = ctx->device;
    {
        gpk_status ts = resolve_threads(NULL, o.threads, &ctx->threads);
        if (ts != GPK_OK) {
            free(ctx);
            return ts;
        }
    }
    ctx->info.backend = backend;
    ctx->info.threads = (unsigned)ctx->threads;

    gpk_status s = GPK_OK;
    if (backend == GPK_BACKEND_CPU) {
        cpu_info(ctx);
    } else if (!dev) {
        s = gpk__fail(NULL, GPK_EUNSUPPORTED, "%s", not_built ? not_built : "backend not built in");
    } else if (dev->device_count() <= 0) {
        if (dev->unavailable_reason) {
            const char *why = dev->unavailable_reason();
            s = gpk__fail(NULL, GPK_EUNSUPPORTED, "%s backend: %s (%s)", dev->label, dev->no_device,
                          why ? why : "the devices went away");
        } else {
            s = gpk__fail(NULL, GPK_EUNSUPPORTED, "%s backend: %s", dev->label, dev->no_device);
        }
    } else {
        s = dev->ctx_init(ctx);
        if (s != GPK_OK) gpk__fail(NULL, s, "%s", ctx->err);
    }
    ctx->n_devices = 1;
    if (s == GPK_OK && n_devices > 1) {
        s = open_parts(ctx, devices, n_devices);
        if (s != GPK_OK) gpk__fail(NULL, s, "%s", ctx->err);
    }
    if (s != GPK_OK) {
        gpk_ctx_destroy(ctx);
        return s;
    }
    ctx->part[0] = ctx;
    ctx->n_devices = n_devices;
    ctx->info.n_devices = (unsigned)n_devices;
    for (int i = 0; i < n_devices; i++) ctx->info.devices[i] = devices[i];
    ctx->info.threads = (unsigned)ctx->threads;
    *out = ctx;
    return GPK_OK;
}

void gpk_ctx_destroy(gpk_ctx *ctx)
{
    if (!ctx) return;
    for (int i = ctx->n_hooks - 1; i >= 0; i--) ctx->hook[i].release(ctx);
    for (int i = 1; i < GPK_MAX_DEVICES; i++)
        if (ctx->part[i] && ctx->part[i] != ctx) gpk_ctx_destroy(ctx->part[i]);
    const gpk__device_backend *dev = gpk__device_backend_of(ctx->backend, NULL);
    if (dev) dev->ctx_release(ctx);
    free(ctx->host_scratch);
    free(ctx);
}

void *gpk__host_scratch(gpk_ctx *ctx, size_t bytes)
{
    if (bytes <= ctx->host_scratch_bytes) return ctx->host_scratch;
    free(ctx->host_scratch);
    ctx->host_scratch = malloc(bytes);
    ctx->host_scratch_bytes = ctx->host_scratch ? bytes : 0;
    return ctx->host_scratch;
}

gpk_status gpk_ctx_info_get(const gpk_ctx *ctx, gpk_ctx_info *info)
{
    if (!ctx || !info) return GPK_EINVAL;
    *info = ctx->info;
    return GPK_OK;
}

gpk_backend gpk_ctx_backend(const gpk_ctx *ctx) { return ctx ? ctx->backend : GPK_BACKEND_AUTO; }

gpk_status gpk_ctx_set_threads(gpk_ctx *ctx, int threads)
{
    if (!ctx) return GPK_EINVAL;
    if (threads < 0) return gpk__fail(ctx, GPK_EINVAL, "gpk_ctx_set_threads: %d < 0", threads);
    GPK_CHECK(resolve_threads(ctx, threads, &ctx->threads));
    ctx->info.threads = (unsigned)ctx->threads;
    if (ctx->backend == GPK_BACKEND_CPU) ctx->info.compute_units = (unsigned)ctx->threads;
    return GPK_OK;
}

gpk_status gpk_ctx_set_device_budget(gpk_ctx *ctx, size_t bytes)
{
    if (!ctx) return GPK_EINVAL;
    ctx->device_budget = bytes;
    for (int i = 1; i < ctx->n_devices; i++)
        if (ctx->part[i] && ctx->part[i] != ctx) ctx->part[i]->device_budget = bytes;
    return GPK_OK;
}

gpk_status gpk_ctx_set_progress(gpk_ctx *ctx, gpk_progress_fn fn, void *user)
{
    if (!ctx) return GPK_EINVAL;
    ctx->progress = fn;
    ctx->progress_user = user;
    return GPK_OK;
}

gpk_status gpk_host_lock(gpk_ctx *ctx, void *p, size_t bytes)
{
    if (!ctx) return GPK_EINVAL;
    if (!p && bytes) return gpk__fail(ctx, GPK_EINVAL, "gpk_host_lock: NULL memory of %zu bytes", bytes);
    if (!bytes) return GPK_OK;
    const gpk__device_backend *dev = gpk__device_backend_of(ctx->backend, NULL);
    return dev && dev->host_lock ? dev->host_lock(ctx, p, bytes) : GPK_OK;
}

gpk_status gpk_host_unlock(gpk_ctx *ctx, void *p)
{
    if (!ctx) return GPK_EINVAL;
    if (!p) return GPK_OK;
    const gpk__device_backend *dev = gpk__device_backend_of(ctx->backend, NULL);
    return dev && dev->host_unlock ? dev->host_unlock(ctx, p) : GPK_OK;
}

void gpk_ctx_trim(gpk_ctx *ctx)
{
    if (!ctx) return;
    for (int i = ctx->n_hooks - 1; i >= 0; i--)
        if (ctx->hook[i].trim) ctx->hook[i].release(ctx);
}
