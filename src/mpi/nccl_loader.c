/* Opens NCCL at the first device exchange that wants it (nccl_loader.h). */
#define GPK_NCCL_LOADER_IMPL
#include "nccl_loader.h"

#include "../core/dl_table.h"

gpk_nccl_api gpk__nccl;

static char load_message[512];

/* NULL, or why NCCL cannot be used on this rank. */
static const char *open_table(void)
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
    char why[400];
    void *lib = gpk__dl_open_first(names, sizeof names / sizeof names[0], why, sizeof why);
    if (!lib) {
        snprintf(load_message, sizeof load_message, "NCCL (libnccl.so.2) could not be opened: %s", why);
        return load_message;
    }
    gpk_nccl_api api;
#define GPK_NCCL_LOAD(f) GPK__DL_FILL(lib, api, f, "NCCL library", load_message)
    GPK_NCCL_FUNCTIONS(GPK_NCCL_LOAD)
#undef GPK_NCCL_LOAD
    gpk__nccl = api; /* kept open for the life of the process */
    return NULL;
}

GPK__DL_LOADER(gpk__nccl_load, open_table)
