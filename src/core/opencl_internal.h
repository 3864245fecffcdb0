/* The OpenCL device context (src/core/opencl_ctx.c: device, context,
 * queue), kept in ctx->opencl, and what a family that runs on OpenCL gives
 * the core. A family keeps its own programs, kernels and buffers in its
 * hook slot on the context (the radix sort: src/sort/radix_opencl.c).
 * Built only with GPK_HAVE_OPENCL. */
#ifndef GPK_OPENCL_INTERNAL_H
#define GPK_OPENCL_INTERNAL_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include "opencl_loader.h"

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gpk_opencl {
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;

    cl_device_type type;
    cl_ulong local_mem, max_alloc, global_mem;
    size_t max_wg;
    cl_uint compute_units;
    char vendor[128];
    char name[256];
} gpk_opencl;

/* The OpenCL device backend (opencl_ctx.c). */
extern const gpk__device_backend gpk__opencl_device;

/* "CL_OUT_OF_RESOURCES" etc. */
const char *gpk__cl_error_name(cl_int e);
/* Records "OpenCL <what> failed: <NAME> (<code>)" on ctx; returns
 * GPK_ENOMEM for allocation failures, GPK_EDEVICE otherwise. */
gpk_status gpk__cl_fail(gpk_ctx *ctx, cl_int e, const char *what);

/* What a family that runs on OpenCL gives the core: init builds its
 * programs and kernels once the device, context and queue exist (it may
 * fail the context's creation) and keeps them in its hook slot on ctx;
 * release frees them, also after a partial init, and may be called again
 * (it is the family's hook: gpk_ctx_destroy runs it first). */
typedef struct gpk_opencl_family {
    const char *name;
    gpk_status (*init)(gpk_ctx *ctx, gpk_opencl *dev);
    void (*release)(gpk_ctx *ctx);
} gpk_opencl_family;

/* The families, NULL-terminated (src/modules/opencl_module.c); each defines its
 * entry next to its code (the radix sort: src/sort/radix_opencl.c). */
extern const gpk_opencl_family *const gpk__opencl_families[];
extern const gpk_opencl_family gpk__radix_opencl_family;

#ifdef __cplusplus
}
#endif
#endif
