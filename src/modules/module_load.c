/* libgpk's side of the backend modules (module.h). libgpk.so, built with
 * GPK_MODULE_DLOPEN, opens libgpk_<backend>.so from its own directory at
 * the backend's first use; the static library has the modules' code built
 * in and calls their entries directly. Either way once per process and
 * backend. */
#define _GNU_SOURCE /* dladdr */
#include "module.h"
#include "../sort/multi_internal.h"
#include "../sort/radix_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#ifdef GPK_MODULE_DLOPEN
#include <dlfcn.h>
#endif

/* One backend built as a module: where its code is, and what loading it
 * gave. */
typedef struct {
    gpk_backend id;
    const char *label; /* in messages */
    const char *file;  /* beside libgpk.so */
    const char *entry;
    gpk__module_open_fn builtin; /* the static library's */
    int tried;                   /* under load_lock */
    const gpk__backend_module *loaded;
    char error[768];
} module_slot;

#ifdef GPK_MODULE_DLOPEN
#define BUILTIN(fn) NULL
#else
#define BUILTIN(fn) fn
#endif
#define SLOT(id, name, label)                                                                               \
    {id,   label, "libgpk_" #name ".so", "gpk_" #name "_module_open", BUILTIN(gpk_##name##_module_open), 0, \
     NULL, ""},
static module_slot slots[] = {GPK__MODULES(SLOT){GPK_BACKEND_AUTO, NULL, NULL, NULL, NULL, 0, NULL, ""}};

static module_slot *slot_of(gpk_backend b)
{
    for (module_slot *m = slots; m->label; m++)
        if (m->id == b) return m;
    return NULL;
}

#ifdef GPK_MODULE_DLOPEN
static const gpk__module_host host = {.fail = gpk__fail,
#define HOST_ENTRY(type, give, name, params, args) .name = gpk__##name,
                                      GPK__MODULE_HOST_FUNCTIONS(HOST_ENTRY)
#undef HOST_ENTRY
};

/* path: the module's file beside the file that holds this function
 * (libgpk.so, wherever it was installed), else its bare name for the
 * loader's search. */
static void module_path(const module_slot *m, char *path, size_t len)
{
    Dl_info self;
    const char *slash = NULL;
    if (dladdr((void *)module_path, &self) && self.dli_fname) slash = strrchr(self.dli_fname, '/');
    if (slash && (size_t)(slash - self.dli_fname) + strlen(m->file) + 2 < len)
        snprintf(path, len, "%.*s/%s", (int)(slash - self.dli_fname), self.dli_fname, m->file);
    else snprintf(path, len, "%s", m->file);
}

static void load(module_slot *m)
{
    char path[512];
    module_path(m, path, sizeof path);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(m->error, sizeof m->error, "%s backend: its module could not be loaded (%s)", m->label,
                 e ? e : path);
        return;
    }
    gpk__module_open_fn open_module;
    /* POSIX: a data pointer from dlsym converts to a function pointer */
    *(void **)&open_module = dlsym(h, m->entry);
    m->loaded = open_module ? open_module(&host, GPK__MODULE_ABI) : NULL;
    if (!m->loaded) {
        /* nothing of it is in use: it may go */
        snprintf(m->error, sizeof m->error, "%s backend: %s is not the module of this libgpk (another build)",
                 m->label, path);
        dlclose(h);
    }
}
#else
static void load(module_slot *m)
{
    m->loaded = m->builtin(NULL, GPK__MODULE_ABI);
    if (!m->loaded) snprintf(m->error, sizeof m->error, "%s backend: its built-in module refused", m->label);
}
#endif

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

const gpk__backend_module *gpk__module_get(gpk_backend b, const char **why)
{
    module_slot *m = slot_of(b);
    if (!m) return NULL;
    pthread_mutex_lock(&load_lock);
    if (!m->tried) {
        m->tried = 1;
        load(m);
    }
    const gpk__backend_module *loaded = m->loaded;
    pthread_mutex_unlock(&load_lock);
    if (!loaded && why) *why = m->error;
    return loaded;
}

const gpk__device_backend *gpk__module_device(gpk_backend b, const char **why)
{
    const gpk__backend_module *m = gpk__module_get(b, why);
    return m ? m->device : NULL;
}
