/* Opens the OpenCL ICD loader at the first use of the OpenCL backend
 * (opencl_loader.h). */
#define GPK_CL_LOADER_IMPL
#include "opencl_internal.h"

#include "dl_table.h"

gpk_cl_api gpk__cl;

static char load_message[256];

/* NULL, or why the OpenCL backend cannot run. */
static const char *open_table(void)
{
    /* the soname first (what a program linked against OpenCL would need),
     * then the development name */
    static const char *const names[] = {"libOpenCL.so.1", "libOpenCL.so"};
    void *lib = gpk__dl_open_first(names, sizeof names / sizeof names[0], NULL, 0);
    if (!lib) return "libOpenCL.so.1 not found: no OpenCL ICD loader is installed";
    gpk_cl_api api;
#define GPK_CL_LOAD(f) GPK__DL_FILL(lib, api, f, "OpenCL loader", load_message)
    GPK_CL_FUNCTIONS(GPK_CL_LOAD)
#undef GPK_CL_LOAD
    gpk__cl = api; /* kept open for the life of the process */
    return NULL;
}

GPK__DL_LOADER(gpk__cl_load, open_table)
