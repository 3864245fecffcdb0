/* A library opened at run time into a table of its functions: the one way
 * the OpenCL loader (core/opencl_loader.c) and the NCCL loader
 * (mpi/nccl_loader.c) do it. Header-only, so that libgpk_mpi uses it
 * without libgpk exporting it. */
#ifndef GPK_DL_TABLE_H
#define GPK_DL_TABLE_H

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

/* The first of names[0, n) that dlopen opens (now, locally), or NULL with
 * why dlopen refused names[0] in why[0, why_len) (why may be NULL with
 * why_len 0). */
static inline void *gpk__dl_open_first(const char *const *names, size_t n, char *why, size_t why_len)
{
    void *lib = NULL;
    for (size_t i = 0; i < n && !lib; i++) {
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!lib && i == 0) {
            const char *e = dlerror();
            snprintf(why, why_len, "%s", e ? e : "not found");
        }
    }
    return lib;
}

/* In a loader function that returns its error (NULL: loaded): table member
 * api.f from lib, or, where lib has no f, lib closed and "the <what> has
 * no f" returned in msg (a char array). */
#define GPK__DL_FILL(lib, api, f, what, msg)                     \
    *(void **)&(api).f = dlsym(lib, #f);                         \
    if (!(api).f) {                                              \
        snprintf(msg, sizeof msg, "the %s has no %s", what, #f); \
        dlclose(lib);                                            \
        return msg;                                              \
    }

/* const char *entry(void): open_table() run once per process (thread
 * safe), its answer kept: NULL where the table is filled, else why not. */
#define GPK__DL_LOADER(entry, open_table)                           \
    static pthread_once_t entry##_once = PTHREAD_ONCE_INIT;         \
    static const char *entry##_error;                               \
    static void entry##_run(void) { entry##_error = open_table(); } \
    const char *entry(void)                                         \
    {                                                               \
        pthread_once(&entry##_once, entry##_run);                   \
        return entry##_error;                                       \
    }

#endif
