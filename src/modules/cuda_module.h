/* The CUDA backend as a module: every CUDA kernel, the CUDA runtime and
 * the code that calls it live in libgpk_cuda.so, which libgpk opens with
 * dlopen at the backend's first use (cuda_load.c); a machine without it,
 * or a module that does not load, leaves the CPU and OpenCL backends
 * working and `gpk info` saying why. The static library has the same code
 * built in and reaches it through the same tables.
 *
 * The contract, both ways:
 * - the module gives libgpk one table (gpk__cuda_module): the backend's
 *   device table, its sort, octree and search tables and the device API
 *   (include/gpk/cuda.h), whose exported symbols in libgpk.so forward to
 *   it (cuda_api.c);
 * - libgpk gives the module the library functions its code calls
 *   (gpk__cuda_host), which the module's cuda_host.c defines under their
 *   usual names; the public API it calls (gpk_type_size, ...) it links
 *   from libgpk.so. The test hooks are not shared: only programs linked
 *   with the static library set them, and there the code is built in.
 * Both sides come from one build: gpk_cuda_module_open refuses any other
 * (GPK__CUDA_MODULE_ABI). The module is never closed, since contexts keep
 * its release hooks. */
#ifndef GPK_CUDA_MODULE_H
#define GPK_CUDA_MODULE_H

#include "../core/internal.h"
#include "../octree/octree_internal.h"
#include "../search/search_run.h"
#include "../sort/sort_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The file libgpk looks for beside itself, and the one symbol it exports. */
#define GPK__CUDA_MODULE_FILE "libgpk_cuda.so"
#define GPK__CUDA_MODULE_OPEN "gpk_cuda_module_open"
/* Bumped whenever a table below changes; the context's size rides along. */
#define GPK__CUDA_MODULE_VERSION 1u
#define GPK__CUDA_MODULE_ABI ((GPK__CUDA_MODULE_VERSION << 20) ^ (unsigned)sizeof(struct gpk_ctx))

/* libgpk's functions that the module's code calls. */
typedef struct gpk__cuda_host {
    gpk_status (*fail)(gpk_ctx *ctx, gpk_status s, const char *fmt, ...);
    void (*clear_error)(gpk_ctx *ctx);
    int (*env_int)(const char *name, int fallback);
    void *(*host_alloc_large)(size_t bytes);
    void (*host_copy)(void *dst, const void *src, size_t bytes, int threads);
    int (*multi_plan)(const gpk_ctx *ctx, unsigned key_width, int out_in_temp, size_t total);
    gpk_status (*sort_shards)(gpk_ctx *ctx, gpk_type key_type, size_t value_width, gpk_shard *shards,
                              const gpk_sort_opts *opts, const char *fn, int out_in_temp);
    gpk_status (*radix_bits_check)(gpk_ctx *ctx, const char *fn, gpk_type key_type, gpk_radix_opts *o);
    gpk_status (*sort_widths_check)(gpk_ctx *ctx, const char *fn, const void *array, const char *what,
                                    gpk_type key_type, size_t value_width, size_t *key_width);
    gpk_status (*octree_check_args)(gpk_ctx *ctx, const void *xyz, const char *xyz_name, size_t n,
                                    unsigned leaf_threshold, gpk_octree_scheme scheme, const void *tree);
    void (*octree_root_from_bounds)(const float lo[3], const float hi[3], octree_root *root);
} gpk__cuda_host;

/* What the module gives libgpk. */
typedef struct gpk__cuda_module {
    unsigned abi; /* GPK__CUDA_MODULE_ABI of the module's build */
    const gpk__device_backend *device;
    const gpk__sort_backend *sort;
    const gpk__octree_backend *octree; /* NULL: built without the CUDA octree */
    const gpk__search_backend *search; /* NULL: built without the CUDA search */
    const struct gpk__cuda_api *api;   /* cuda_api.h */
} gpk__cuda_module;

/* The module's entry (cuda_module.c): its table, or NULL when abi is not
 * its own. host: libgpk's functions (NULL where the code is built in). */
typedef const gpk__cuda_module *(*gpk__cuda_module_open_fn)(const gpk__cuda_host *host, unsigned abi);
const gpk__cuda_module *gpk_cuda_module_open(const gpk__cuda_host *host, unsigned abi);

/* libgpk's side (cuda_load.c): the module, opened once; NULL and, when why
 * is not NULL, *why (a static message) when it cannot be loaded. */
const gpk__cuda_module *gpk__cuda_module_get(const char **why);
/* Its device table, the CUDA row of the backend list (src/backends.c). */
const gpk__device_backend *gpk__cuda_device_of(const char **why);

#ifdef __cplusplus
}
#endif
#endif
