/* Library-internal declarations shared by every module and backend. */
#ifndef GPK_INTERNAL_H
#define GPK_INTERNAL_H

#include "gpk/gpk.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "test_hooks.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GPK_ERRLEN 512

/* splitmix64 (Steele, Lea & Flood): the k-th output of a splitmix stream
 * started at s is gpk__splitmix64(s + k * 0x9E3779B97F4A7C15). It seeds
 * gpk_rng and the multistart runs of the search. */
static inline uint64_t gpk__splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* A hash of bytes chained on h (an instance's data, a start solution), to
 * see that every rank or call read the same. */
static inline uint64_t gpk__fingerprint(uint64_t h, const void *data, size_t bytes)
{
    const unsigned char *b = (const unsigned char *)data;
    size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = (h ^ w) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 32;
    }
    uint64_t w = 0;
    memcpy(&w, b + i, bytes - i);
    return gpk__splitmix64(h ^ w ^ (uint64_t)bytes);
}

/* x rounded up to a multiple of a (a > 0): buffer offsets and sizes. */
static inline size_t gpk__align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

/* A family that keeps state on a context between calls (buffers kept for
 * speed, per-context bookkeeping) registers a release hook on it and keeps
 * its state in the hook's slot: gpk_ctx_destroy calls every hook, newest
 * first, before the devices go; gpk_ctx_trim those registered with trim.
 * The core knows no family. */
typedef void (*gpk__ctx_release_fn)(gpk_ctx *ctx);
struct gpk_ctx_hook {
    gpk__ctx_release_fn release; /* frees what the family keeps on ctx; may be called again */
    int trim;                    /* also called by gpk_ctx_trim */
    void *state;                 /* the family's, NULL until it sets it */
};
#define GPK_CTX_HOOKS \
    12 /* at least one per family that registers (out-of-core: two, multi-device,
                            the radix sort on CUDA and on OpenCL, MPI) */

/* 1 when the byte ranges [a, a + an) and [b, b + bn) share a byte (empty
 * ranges share none): the sorts' arguments that must not alias. */
static inline int gpk__overlap(const void *a, size_t an, const void *b, size_t bn)
{
    const uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return an && bn && a && b && x < y + bn && y < x + an;
}

struct gpk_ctx {
    gpk_backend backend;
    int device;
    int threads; /* resolved CPU thread count, >= 1 */
    gpk_ctx_info info;
    char err[GPK_ERRLEN];
    void *host_scratch; /* grow-only CPU scratch, kept so that repeated sorts
                              (a PIC code sorts every step) skip page faults */
    size_t host_scratch_bytes;
    void *cuda;                 /* backend state owned by radix_cuda / cuda_ctx */
    void *opencl;               /* backend state owned by the OpenCL backend */
    int last_sort_algo;         /* gpk_sort_algo of the last successful sort */
    const char *last_sort_path; /* the variant it ran (static string), set by
                                   the backend or, when it sets none, the algorithm */
    size_t device_budget;       /* bytes of device memory a host-API sort may use; 0 = no
                              limit (CUDA: what is free). On the CPU backend a non-zero
                              budget makes the out-of-core driver run with the CPU sort
                              as its device (src/sort/ooc.c) */
    gpk_progress_fn progress;
    void *progress_user;
    /* Several devices (gpk_ctx_opts.devices): n_devices >= 1, the indices in
     * info.devices. CUDA: part[i] is the context of device i (part[0] ==
     * ctx itself; the others are owned here), each with its own stream and
     * buffers; peer[i][j]: device i's kernels may read device j's memory.
     * CPU: part[i] == ctx for every virtual device. */
    int n_devices;
    gpk_ctx *part[GPK_MAX_DEVICES];
    unsigned char peer[GPK_MAX_DEVICES][GPK_MAX_DEVICES];
    /* What the families keep on this context between calls (gpk__ctx_hook). */
    struct gpk_ctx_hook hook[GPK_CTX_HOOKS];
    int n_hooks;
};

/* The state slot of the family whose release hook is `release`, the hook
 * registered on ctx first where it is not yet (trim: gpk_ctx_trim calls it
 * too). NULL when ctx has no free hook. Inline: libgpk_mpi registers its
 * hook too, and libgpk's internal functions are hidden from it. */
static inline void **gpk__ctx_hook(gpk_ctx *ctx, gpk__ctx_release_fn release, int trim)
{
    for (int i = 0; i < ctx->n_hooks; i++)
        if (ctx->hook[i].release == release) return &ctx->hook[i].state;
    if (ctx->n_hooks == GPK_CTX_HOOKS) return NULL;
    struct gpk_ctx_hook *h = &ctx->hook[ctx->n_hooks++];
    h->release = release;
    h->trim = trim;
    h->state = NULL;
    return &h->state;
}

/* The state slot of release's hook on ctx; NULL when it is not registered. */
static inline void **gpk__ctx_hook_state(gpk_ctx *ctx, gpk__ctx_release_fn release)
{
    for (int i = 0; i < ctx->n_hooks; i++)
        if (ctx->hook[i].release == release) return &ctx->hook[i].state;
    return NULL;
}

/* Statistics of type T that a family keeps on a context, in a hook of
 * their own (which gpk_ctx_trim leaves alone): defines the hook's release
 * (static stats_release), stats_slot(ctx) (the statistics, zeroed when
 * first asked for; NULL without memory or a free hook) and
 * `T getter(ctx)` (a copy, zero when there are none). */
#define GPK__CTX_STATS(T, getter)                                           \
    static void stats_release(gpk_ctx *ctx)                                 \
    {                                                                       \
        void **slot = gpk__ctx_hook_state(ctx, stats_release);              \
        if (!slot) return;                                                  \
        free(*slot);                                                        \
        *slot = NULL;                                                       \
    }                                                                       \
    static T *stats_slot(gpk_ctx *ctx)                                      \
    {                                                                       \
        void **slot = gpk__ctx_hook(ctx, stats_release, 0);                 \
        if (!slot) return NULL;                                             \
        if (!*slot) *slot = calloc(1, sizeof(T));                           \
        return (T *)*slot;                                                  \
    }                                                                       \
    T getter(gpk_ctx *ctx)                                                  \
    {                                                                       \
        T none;                                                             \
        memset(&none, 0, sizeof none);                                      \
        void **slot = ctx ? gpk__ctx_hook_state(ctx, stats_release) : NULL; \
        return slot && *slot ? *(const T *)*slot : none;                    \
    }

/* Records a formatted message on ctx (or the thread-local slot when ctx is
 * NULL) and returns s, so callers write `return gpk__fail(ctx, GPK_EINVAL, ...)`. */
gpk_status gpk__fail(gpk_ctx *ctx, gpk_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void gpk__clear_error(gpk_ctx *ctx);

/* A function compiled for AVX2 as well as for the build's baseline
 * (x86-64-v2: 16-byte vectors), the one the processor runs picked when the
 * library loads (GNU ifunc): for loops the compiler vectorises. Not under
 * ThreadSanitizer, whose programs crash in the ifunc resolver (it runs
 * before the sanitizer's runtime is set up). */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GPK_SANITIZE_THREAD 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define GPK_SANITIZE_THREAD 1
#endif
#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__) && !defined(GPK_SANITIZE_THREAD)
#define GPK_ALSO_AVX2 __attribute__((target_clones("avx2", "default")))
#else
#define GPK_ALSO_AVX2
#endif

/* Evaluate; return the status on failure. */
#define GPK_CHECK(expr)                      \
    do {                                     \
        const gpk_status check_ = (expr);    \
        if (check_ != GPK_OK) return check_; \
    } while (0)

/* goto-cleanup helper: evaluate, keep the status, jump on failure. */
#define GPK_CHECK_GOTO(expr, st, label) \
    do {                                \
        (st) = (expr);                  \
        if ((st) != GPK_OK) goto label; \
    } while (0)

/* Host scratch memory of at least `bytes`, owned by ctx (NULL when out of memory). */
void *gpk__host_scratch(gpk_ctx *ctx, size_t bytes);

/* An integer environment variable (one of the table in docs/guide.md). */
int gpk__env_int(const char *name, int fallback);

/* An enum's names: a table of {name, value} rows, the canonical name of
 * each value first, aliases after it. */
typedef struct gpk__name_value {
    const char *name;
    int value;
} gpk__name_value;

/* The first name of value in table[0..n), "unknown" where it has none. */
const char *gpk__name_of(const gpk__name_value *table, size_t n, int value);
/* 1 with *value set when name (non-NULL) is in table[0..n), compared
 * case-blind; 0 otherwise. The caller says what a miss means. */
int gpk__name_lookup(const gpk__name_value *table, size_t n, const char *name, int *value);

/* Defines an enum's name function and its silent parse (GPK_EINVAL without
 * a message for a NULL argument or an unknown name) from its table. */
#define GPK__NAME_FUNCTIONS(type, name_fn, parse_fn, table)                                           \
    const char *name_fn(type x) { return gpk__name_of(table, sizeof table / sizeof *table, (int)x); } \
    gpk_status parse_fn(const char *name, type *out)                                                  \
    {                                                                                                 \
        int v;                                                                                        \
        if (!name || !out || !gpk__name_lookup(table, sizeof table / sizeof *table, name, &v))        \
            return GPK_EINVAL;                                                                        \
        *out = (type)v;                                                                               \
        return GPK_OK;                                                                                \
    }

/* The device side of a backend: one table each (the CPU has none), which
 * ctx.c reaches through gpk__device_backend_of; the families reach their
 * own tables the same way (src/sort/sort_backend.h, src/octree). */
typedef struct gpk__device_backend {
    const char *label;                       /* in messages: "CUDA backend: ..." */
    const char *no_device;                   /* why there is none, when unavailable_reason gives no more */
    int (*device_count)(void);               /* 0 when no usable device */
    const char *(*unavailable_reason)(void); /* why no device is usable (NULL entry: no_device says it) */
    gpk_status (*ctx_init)(gpk_ctx *ctx);    /* fills ctx->info and the backend's state */
    void (*ctx_release)(gpk_ctx *ctx);       /* also after a partial init */
    /* enables peer access between the devices of ctx->part[] where the
     * hardware allows it and fills ctx->peer; NULL: one device a context */
    gpk_status (*enable_peers)(gpk_ctx *ctx);
    /* gpk_host_lock / gpk_host_unlock; NULL: nothing to do */
    gpk_status (*host_lock)(gpk_ctx *ctx, void *p, size_t bytes);
    gpk_status (*host_unlock)(gpk_ctx *ctx, void *p);
} gpk__device_backend;

/* One row per backend gpk knows (src/backends.c, the one list of what
 * this build has; a row with name NULL ends it): its name (gpk_backend_name),
 * its device table (NULL for the CPU and for a backend not built in) and,
 * when not built in, why. A backend built as a module loaded at run time
 * has load instead of device: its device table, or NULL and *why (when why
 * is not NULL) when the module cannot be loaded. */
typedef struct gpk__backend_row {
    gpk_backend id;
    const char *name;
    const gpk__device_backend *device;
    const char *not_built;
    const gpk__device_backend *(*load)(gpk_backend b, const char **why);
} gpk__backend_row;
extern const gpk__backend_row gpk__backends[];

/* The device table of backend b (ctx.c, from gpk__backends); NULL for the
 * CPU and for a backend not built in, *not_built (when not NULL) then
 * saying why (NULL for the CPU and AUTO). */
const gpk__device_backend *gpk__device_backend_of(gpk_backend b, const char **not_built);

/* Large host arrays (host_mem.c). gpk__host_alloc_large: malloc for
 * arrays the library fills and the caller frees with free(): 2 MiB aligned
 * and marked for transparent huge pages where the system has them (fewer
 * first-touch faults). gpk__host_copy: memcpy on `threads` threads. */
void *gpk__host_alloc_large(size_t bytes);
void gpk__host_copy(void *dst, const void *src, size_t bytes, int threads);

/* Arrays that are allocated together and freed together, in one block
 * (gpk__alloc_parts): one part per array, `count` elements of `elem` bytes;
 * the allocation sets `at`, where the array starts (NULL for a part of no
 * elements). GPK__PART(ptr, count) describes the array ptr will point to,
 * its element size from ptr's type; the caller then takes it as
 * `ptr = part.at`, a plain conversion from void *. */
typedef struct gpk__part {
    size_t count, elem;
    void *at;
} gpk__part;
#define GPK__PART(ptr, count) ((gpk__part){(size_t)(count), sizeof *(ptr), NULL})

/* One block for parts[0..n), freed with free(): each part starts on its own
 * 64-byte line (for element types aligned to 64 bytes at most; no two
 * arrays share a cache line), all zeroed when zero is set (calloc: a large
 * block's pages stay untouched until used). NULL when out of memory or
 * when the sizes overflow size_t. Inline: libgpk_mpi uses it too, and
 * libgpk's internal functions are hidden from it. */
static inline void *gpk__alloc_parts(gpk__part *parts, size_t n, int zero)
{
    const size_t line = 64;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (parts[i].count == 0) continue;
        if (total > SIZE_MAX - 2 * line || parts[i].count > (SIZE_MAX - 2 * line - total) / parts[i].elem)
            return NULL;
        total += gpk__align_up(parts[i].count * parts[i].elem, line);
    }
    /* malloc aligns to less than a line: room for line - 1 bytes more
     * lets the first part start on one. */
    char *block = (char *)(zero ? calloc(1, total + line - 1) : malloc(total + line - 1));
    if (!block) return NULL;
    size_t off = gpk__align_up((size_t)(uintptr_t)block, line) - (size_t)(uintptr_t)block;
    for (size_t i = 0; i < n; i++) {
        parts[i].at = parts[i].count ? block + off : NULL;
        off += gpk__align_up(parts[i].count * parts[i].elem, line);
    }
    return block;
}

/* The host memory this process may use, in bytes: the smaller of the
 * machine's memory and the memory limit of its control group (v2
 * memory.max, v1 memory.limit_in_bytes, of its group and every ancestor):
 * a process of a container that passes it is killed without a word. 0
 * when neither is known. Every host-memory check of the library uses it. */
uint64_t gpk__host_memory_bytes(void);
/* The same from the files at proc_cgroup (/proc/self/cgroup) and under
 * sys_cgroup (/sys/fs/cgroup), given the machine's memory (0: unknown):
 * for tests, with fake control groups. */
uint64_t gpk__host_memory_limit_at(const char *proc_cgroup, const char *sys_cgroup, uint64_t ram);

#ifdef __cplusplus
}
#endif
#endif
