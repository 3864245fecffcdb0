/* Status strings and per-context error messages. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Context creation can fail before a context exists: its message goes to a
 * per-thread slot that gpk_last_error(NULL) reads. */
static _Thread_local char creation_error[GPK_ERRLEN];

const char *gpk_status_string(gpk_status s)
{
    switch (s) {
    case GPK_OK: return "success";
    case GPK_EINVAL: return "invalid argument";
    case GPK_ENOMEM: return "out of memory";
    case GPK_EDEVICE: return "device error";
    case GPK_EUNSUPPORTED: return "unsupported";
    case GPK_EFORMAT: return "malformed input";
    case GPK_EIO: return "input/output error";
    case GPK_EFULL: return "task pool full";
    }
    return "unknown status";
}

gpk_status gpk__fail(gpk_ctx *ctx, gpk_status s, const char *fmt, ...)
{
    char *dst = ctx ? ctx->err : creation_error;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, GPK_ERRLEN, fmt, ap);
    va_end(ap);
    return s;
}

void gpk__clear_error(gpk_ctx *ctx)
{
    if (ctx) ctx->err[0] = '\0';
    else creation_error[0] = '\0';
}

const char *gpk_last_error(const gpk_ctx *ctx) { return ctx ? ctx->err : creation_error; }

int gpk__env_int(const char *name, int fallback)
{
    const char *v = getenv(name);
    if (!v || !*v) return fallback;
    char *end;
    long x = strtol(v, &end, 10);
    if (*end != '\0' || x < -1000000 || x > 1000000) return fallback;
    return (int)x;
}
