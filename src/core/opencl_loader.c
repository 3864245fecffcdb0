/* Opens the OpenCL ICD loader at the first use of the OpenCL backend
 * (opencl_loader.h). */
#define GPK_CL_LOADER_IMPL
#include "opencl_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

gpk_cl_api gpk__cl;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const char *load_error = "the OpenCL loader was not opened";
static char load_message[256];

static void load(void)
{
    /* the soname first (what a program linked against OpenCL would need),
     * then the development name */
    void *lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) lib = dlopen("libOpenCL.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        load_error = "libOpenCL.so.1 not found: no OpenCL ICD loader is installed";
        return;
    }
    gpk_cl_api api;
#define GPK_CL_LOAD(f)                                                                  \
    *(void **)&api.f = dlsym(lib, #f);                                                  \
    if (!api.f) {                                                                       \
        snprintf(load_message, sizeof load_message, "the OpenCL loader has no %s", #f); \
        load_error = load_message;                                                      \
        dlclose(lib);                                                                   \
        return;                                                                         \
    }
    GPK_CL_FUNCTIONS(GPK_CL_LOAD)
#undef GPK_CL_LOAD
    gpk__cl = api; /* kept open for the life of the process */
    load_error = NULL;
}

const char *gpk__cl_load(void)
{
    pthread_once(&load_once, load);
    return load_error;
}
