/* Opens NCCL at the first device exchange that wants it (nccl_loader.h). */
#define GPK_NCCL_LOADER_IMPL
#include "nccl_loader.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

gpk_nccl_api gpk__nccl;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const char *load_error = "NCCL was not opened";
static char load_message[512];

static void load(void)
{
    /* the soname first (what a program linked against NCCL would need),
     * then where the build found it (no rpath names it), then the
     * development name */
    static const char *const names[] = {
        "libnccl.so.2",
#ifdef GPK_NCCL_LIBDIR
        GPK_NCCL_LIBDIR "/libnccl.so.2",
#endif
        "libnccl.so",
    };
    void *lib = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !lib; i++) {
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!lib && i == 0) {
            /* the soname's failure says most: not there, or not loadable */
            const char *why = dlerror();
            snprintf(load_message, sizeof load_message, "NCCL (libnccl.so.2) could not be opened: %s",
                     why ? why : "not found");
        }
    }
    if (!lib) {
        load_error = load_message;
        return;
    }
    gpk_nccl_api api;
#define GPK_NCCL_LOAD(f)                                                               \
    *(void **)&api.f = dlsym(lib, #f);                                                 \
    if (!api.f) {                                                                      \
        snprintf(load_message, sizeof load_message, "the NCCL library has no %s", #f); \
        load_error = load_message;                                                     \
        dlclose(lib);                                                                  \
        return;                                                                        \
    }
    GPK_NCCL_FUNCTIONS(GPK_NCCL_LOAD)
#undef GPK_NCCL_LOAD
    gpk__nccl = api; /* kept open for the life of the process */
    load_error = NULL;
}

const char *gpk__nccl_load(void)
{
    pthread_once(&load_once, load);
    return load_error;
}
