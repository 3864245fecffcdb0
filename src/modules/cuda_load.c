/* libgpk's side of the CUDA module (cuda_module.h). libgpk.so, built with
 * GPK_CUDA_MODULE_DLOPEN, opens libgpk_cuda.so from its own directory at
 * the backend's first use; the static library has the module's code built
 * in and calls its entry directly. Either way once per process. */
#define _GNU_SOURCE /* dladdr */
#include "cuda_module.h"
#include "../octree/octree_internal.h"
#include "../sort/multi_internal.h"
#include "../sort/radix_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#ifdef GPK_CUDA_MODULE_DLOPEN
#include <dlfcn.h>
#endif

static const gpk__cuda_module *loaded;
static char load_error[768];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

#ifdef GPK_CUDA_MODULE_DLOPEN
static const gpk__cuda_host host = {
    .fail = gpk__fail,
    .clear_error = gpk__clear_error,
    .env_int = gpk__env_int,
    .host_alloc_large = gpk__host_alloc_large,
    .host_copy = gpk__host_copy,
    .multi_plan = gpk__multi_plan,
    .sort_shards = gpk__sort_shards,
    .radix_bits_check = gpk__radix_bits_check,
    .sort_widths_check = gpk__sort_widths_check,
    .octree_check_args = gpk__octree_check_args,
    .octree_root_from_bounds = gpk__octree_root_from_bounds,
};

/* The module's path: beside the file that holds this function (libgpk.so,
 * wherever it was installed), else the bare name for the loader's search. */
static void module_path(char *path, size_t len)
{
    Dl_info self;
    const char *slash = NULL;
    if (dladdr((void *)module_path, &self) && self.dli_fname) slash = strrchr(self.dli_fname, '/');
    if (slash && (size_t)(slash - self.dli_fname) + sizeof GPK__CUDA_MODULE_FILE + 1 < len)
        snprintf(path, len, "%.*s/%s", (int)(slash - self.dli_fname), self.dli_fname, GPK__CUDA_MODULE_FILE);
    else snprintf(path, len, "%s", GPK__CUDA_MODULE_FILE);
}

static void load(void)
{
    char path[512];
    module_path(path, sizeof path);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(load_error, sizeof load_error, "CUDA backend: its module could not be loaded (%s)",
                 e ? e : path);
        return;
    }
    gpk__cuda_module_open_fn open_module;
    /* POSIX: a data pointer from dlsym converts to a function pointer */
    *(void **)&open_module = dlsym(h, GPK__CUDA_MODULE_OPEN);
    loaded = open_module ? open_module(&host, GPK__CUDA_MODULE_ABI) : NULL;
    if (!loaded) {
        /* never closed when it loaded; here nothing of it is in use */
        snprintf(load_error, sizeof load_error,
                 "CUDA backend: %s is not the module of this libgpk (another build or version)", path);
        dlclose(h);
    }
}
#else
static void load(void)
{
    loaded = gpk_cuda_module_open(NULL, GPK__CUDA_MODULE_ABI);
    if (!loaded)
        snprintf(load_error, sizeof load_error, "CUDA backend: the built-in module refused this build");
}
#endif

const gpk__cuda_module *gpk__cuda_module_get(const char **why)
{
    pthread_once(&load_once, load);
    if (!loaded && why) *why = load_error;
    return loaded;
}

const gpk__device_backend *gpk__cuda_device_of(const char **why)
{
    const gpk__cuda_module *m = gpk__cuda_module_get(why);
    return m ? m->device : NULL;
}
