/* The library functions a backend module's code calls, under their usual
 * names, forwarding to libgpk's (the table the module's entry was given):
 * a module has no copy of the library's state. Built into each module
 * only (module.h). */
#include <stdio.h>

#include "module.h"
#include "../sort/multi_internal.h"
#include "../sort/radix_internal.h"

static const gpk__module_host *host_table;

void gpk__module_host_set(const gpk__module_host *host) { host_table = host; }

gpk_status gpk__fail(gpk_ctx *ctx, gpk_status s, const char *fmt, ...)
{
    char msg[GPK_ERRLEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return host_table->fail(ctx, s, "%s", msg);
}

#define FORWARD(type, give, name, params, args) \
    type gpk__##name params { give host_table->name args; }
GPK__MODULE_HOST_FUNCTIONS(FORWARD)
