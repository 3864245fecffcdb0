/* The OpenCL backend's module (module.h): its tables and its entry, built
 * into libgpk_opencl.so, and into the static library, where the loader
 * calls the entry directly. */
#include "module.h"
#include "../core/opencl_internal.h"
#include "../sort/radix_internal.h"

/* segmented sorts: two stable sorts of the covered elements through the
 * radix sort (segmented_opencl.c, in libgpk) */
static const gpk__sort_backend sort_opencl = {
    .radix = gpk__radix_sort_opencl,
    .radix_reads_src = 0,
    .radix_descending = 0,
    .quick = NULL,
    .quick_max_n = 0,
    .segmented = gpk__seg_sort_by_two_sorts,
    .multi = NULL,
    .ooc = NULL,
    .enomem_goes_ooc = 0,
    .radix_bench = gpk__radix_bench_opencl,
};

/* the families that build programs on an OpenCL context (opencl_ctx.c) */
const gpk_opencl_family *const gpk__opencl_families[] = {&gpk__radix_opencl_family, NULL};

static const gpk__backend_module module = {
    .abi = GPK__MODULE_ABI,
    .device = &gpk__opencl_device,
    .sort = &sort_opencl,
};

GPK__MODULE_ENTRY(gpk_opencl_module_open, module)
