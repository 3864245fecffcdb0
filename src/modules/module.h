/* The GPU backends as modules: each backend's code (CUDA: every kernel,
 * the static CUDA runtime and the code that calls it; OpenCL: its context,
 * its kernels' sources and its radix sort) lives in a shared module,
 * libgpk_cuda.so and libgpk_opencl.so, which libgpk opens with dlopen
 * from its own directory at the backend's first use (module_load.c). A
 * machine without a module, or a module that does not load, leaves the
 * other backends working and `gpk info` saying why. The static library
 * has the same code built in and reaches it through the same tables.
 *
 * The contract, both ways:
 * - a module gives libgpk one table (gpk__backend_module): the backend's
 *   device table and its sort, octree and search tables (the contracts
 *   every backend fills), and for CUDA the device API of gpk/cuda.h,
 *   which libgpk.so exports as forwarders (cuda_api.c);
 * - libgpk gives the modules the library functions their code calls
 *   (gpk__module_host), which module_host.c defines in each module under
 *   their usual names, so the backends' files are the same in both
 *   builds; the public API they call they link from libgpk.so. The test
 *   hooks are not shared: only programs linked with the static library
 *   set them, and there the code is built in.
 * Both sides come from one build: a module's entry refuses any other
 * (GPK__MODULE_ABI). A module is never closed, since contexts keep its
 * release hooks. */
#ifndef GPK_MODULE_H
#define GPK_MODULE_H

#include "../core/internal.h"
#include "../octree/octree_internal.h"
#include "../search/search_run.h"
#include "../sort/sort_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a table below changes; the context's size rides along. */
#define GPK__MODULE_VERSION 1u
#define GPK__MODULE_ABI ((GPK__MODULE_VERSION << 20) ^ (unsigned)sizeof(struct gpk_ctx))

/* libgpk's functions that the modules' code calls, but for gpk__fail
 * (variadic: below): X(type, give, name, params, args) each, for
 * `type gpk__name params`, called as `name args`; give is `return`, or
 * empty for a void function. From this one list come the table's
 * members, libgpk's table (module_load.c) and the modules' forwarders
 * (module_host.c). */
#define GPK__MODULE_HOST_FUNCTIONS(X)                                                                       \
    X(void, , clear_error, (gpk_ctx * ctx), (ctx))                                                          \
    X(int, return, env_int, (const char *name, int fallback), (name, fallback))                             \
    X(void *, return, host_alloc_large, (size_t bytes), (bytes))                                            \
    X(void, , host_copy, (void *dst, const void *src, size_t bytes, int threads),                           \
      (dst, src, bytes, threads))                                                                           \
    X(int, return, multi_plan, (const gpk_ctx *ctx, unsigned key_width, int out_in_temp, size_t total),     \
      (ctx, key_width, out_in_temp, total))                                                                 \
    X(gpk_status, return, sort_shards,                                                                      \
      (gpk_ctx * ctx, gpk_type key_type, size_t value_width, gpk_shard * shards, const gpk_sort_opts *opts, \
       const char *fn, int out_in_temp),                                                                    \
      (ctx, key_type, value_width, shards, opts, fn, out_in_temp))                                          \
    X(gpk_status, return, radix_bits_check,                                                                 \
      (gpk_ctx * ctx, const char *fn, gpk_type key_type, gpk_radix_opts *o), (ctx, fn, key_type, o))        \
    X(gpk_status, return, sort_widths_check,                                                                \
      (gpk_ctx * ctx, const char *fn, const void *array, const char *what, gpk_type key_type,               \
       size_t value_width, size_t *key_width),                                                              \
      (ctx, fn, array, what, key_type, value_width, key_width))                                             \
    X(gpk_status, return, octree_check_args,                                                                \
      (gpk_ctx * ctx, const void *xyz, const char *xyz_name, size_t n, unsigned leaf_threshold,             \
       gpk_octree_scheme scheme, const void *tree),                                                         \
      (ctx, xyz, xyz_name, n, leaf_threshold, scheme, tree))                                                \
    X(void, , octree_root_from_bounds, (const float lo[3], const float hi[3], octree_root *root),           \
      (lo, hi, root))

typedef struct gpk__module_host {
    gpk_status (*fail)(gpk_ctx *ctx, gpk_status s, const char *fmt, ...);
#define GPK__MODULE_HOST_MEMBER(type, give, name, params, args) type(*name) params;
    GPK__MODULE_HOST_FUNCTIONS(GPK__MODULE_HOST_MEMBER)
#undef GPK__MODULE_HOST_MEMBER
} gpk__module_host;

/* What a module gives libgpk; NULL entries: the backend has none. */
typedef struct gpk__backend_module {
    unsigned abi; /* GPK__MODULE_ABI of the module's build */
    const gpk__device_backend *device;
    const gpk__sort_backend *sort;
    const gpk__octree_backend *octree;
    const gpk__search_backend *search;
    const struct gpk__cuda_api *cuda_api; /* cuda_api.h */
} gpk__backend_module;

/* A module's entry, its one exported symbol (module.map): its table, or
 * NULL when abi is not its own. host: libgpk's functions (NULL where the
 * code is built in). */
typedef const gpk__backend_module *(*gpk__module_open_fn)(const gpk__module_host *host, unsigned abi);

/* The backends this build makes modules of: X(id, name, label) each, id
 * its gpk_backend, name that of its file (libgpk_<name>.so) and entry
 * (gpk_<name>_module_open, in src/modules/<name>_module.c), label its
 * name in messages. A new backend built as a module adds its line. */
#ifdef GPK_HAVE_CUDA
#define GPK__MODULE_CUDA(X) X(GPK_BACKEND_CUDA, cuda, "CUDA")
#else
#define GPK__MODULE_CUDA(X)
#endif
#ifdef GPK_HAVE_OPENCL
#define GPK__MODULE_OPENCL(X) X(GPK_BACKEND_OPENCL, opencl, "OpenCL")
#else
#define GPK__MODULE_OPENCL(X)
#endif
#define GPK__MODULES(X) GPK__MODULE_CUDA(X) GPK__MODULE_OPENCL(X)

#define GPK__MODULE_ENTRY_DECL(id, name, label) \
    const gpk__backend_module *gpk_##name##_module_open(const gpk__module_host *host, unsigned abi);
GPK__MODULES(GPK__MODULE_ENTRY_DECL)

/* In a module (module_host.c): the table its forwarders call. */
void gpk__module_host_set(const gpk__module_host *host);

/* Defines a backend's entry `name`, giving its table: exported and keeping
 * libgpk's functions in a module (GPK_AS_MODULE), plain where the code is
 * built into the static library. */
#ifdef GPK_AS_MODULE
#define GPK__MODULE_ENTRY(name, table)                                                                   \
    __attribute__((visibility("default"))) const gpk__backend_module *name(const gpk__module_host *host, \
                                                                           unsigned abi)                 \
    {                                                                                                    \
        if (abi != GPK__MODULE_ABI || !host) return NULL;                                                \
        gpk__module_host_set(host);                                                                      \
        return &(table);                                                                                 \
    }
#else
#define GPK__MODULE_ENTRY(name, table)                                          \
    const gpk__backend_module *name(const gpk__module_host *host, unsigned abi) \
    {                                                                           \
        (void)host;                                                             \
        return abi == GPK__MODULE_ABI ? &(table) : NULL;                        \
    }
#endif

/* libgpk's side (module_load.c): backend b's module, opened once; NULL
 * (and, when why is not NULL, *why, a static message) when b is not built
 * as a module or its module cannot be loaded. */
const gpk__backend_module *gpk__module_get(gpk_backend b, const char **why);
/* Its device table, the rows' load (core/internal.h, src/backends.c). */
const gpk__device_backend *gpk__module_device(gpk_backend b, const char **why);

#ifdef __cplusplus
}
#endif
#endif
