/* What this build has: the one list of backends, and per backend the
 * tables through which the core and each family reach it (the core's
 * device table, core/internal.h; the sort family's, sort/sort_backend.h;
 * the octree's, octree/octree_internal.h; the search's device scans,
 * search/search_run.h; the families run on OpenCL, core/opencl_internal.h).
 * The CUDA backend's tables are its module's (src/modules/cuda_module.h),
 * loaded at first use. The core and the families look their tables up
 * here and know no backend by name; a new backend adds its row and its
 * tables here, a new family its table. */
#include "core/internal.h"
#include "octree/octree_internal.h"
#include "search/search_run.h"
#include "sort/sort_backend.h"
#include "modules/cuda_module.h"
#ifdef GPK_HAVE_OPENCL
#include "core/opencl_internal.h"
#endif

/* ---- the backends ---------------------------------------------------------- */

const gpk__backend_row gpk__backends[] = {
    {GPK_BACKEND_CPU, "cpu", NULL, NULL, NULL},
#ifdef GPK_HAVE_CUDA
    {GPK_BACKEND_CUDA, "cuda", NULL, NULL, gpk__cuda_device_of},
#else
    {GPK_BACKEND_CUDA, "cuda", NULL,
     "CUDA backend: not built into this gpk (nvcc was not found at build time)", NULL},
#endif
#ifdef GPK_HAVE_OPENCL
    {GPK_BACKEND_OPENCL, "opencl", &gpk__opencl_device, NULL, NULL},
#else
    {GPK_BACKEND_OPENCL, "opencl", NULL,
     "OpenCL backend: not built into this gpk (no OpenCL SDK at build time)", NULL},
#endif
    {GPK_BACKEND_AUTO, NULL, NULL, NULL, NULL},
};

/* ---- the sort family --------------------------------------------------------- */

/* the CPU has no transfers to leave out: no bench timing */
static const gpk__sort_backend sort_cpu = {
    .radix = gpk__radix_sort_cpu,
    .radix_reads_src = 1,
    .radix_descending = 1,
    .quick = gpk__quick_sort_cpu,
    .quick_max_n = SIZE_MAX,
    .segmented = gpk__seg_sort_cpu,
    .multi = &gpk__multi_cpu,
    .ooc = &gpk__ooc_cpu,
    .enomem_goes_ooc = 0,
    .radix_bench = NULL,
};
#ifdef GPK_HAVE_OPENCL
/* segmented sorts: two stable sorts of the covered elements through the
 * radix sort (segmented_opencl.c) */
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
#endif

/* The tables of a backend built as a module (cuda_module.h): NULL unless
 * b is that backend and its module loads. */
static const gpk__cuda_module *module_of(gpk_backend b)
{
#ifdef GPK_HAVE_CUDA
    if (b == GPK_BACKEND_CUDA) return gpk__cuda_module_get(NULL);
#endif
    (void)b;
    return NULL;
}

const gpk__sort_backend *gpk__sort_backend_of(gpk_backend b)
{
    const gpk__cuda_module *m = module_of(b);
    if (m) return m->sort;
    switch (b) {
    case GPK_BACKEND_CPU: return &sort_cpu;
#ifdef GPK_HAVE_OPENCL
    case GPK_BACKEND_OPENCL: return &sort_opencl;
#endif
    default: return NULL;
    }
}

/* ---- the octree --------------------------------------------------------------- */

/* NULL: the CPU builders */
const gpk__octree_backend *gpk__octree_backend_of(gpk_backend b)
{
    const gpk__cuda_module *m = module_of(b);
    return m ? m->octree : NULL;
}

/* ---- the local search's device scans ------------------------------------------ */

/* NULL: the CPU scans */
const gpk__search_backend *gpk__search_backend_of(gpk_backend b)
{
    const gpk__cuda_module *m = module_of(b);
    return m ? m->search : NULL;
}

/* ---- the families that run on OpenCL ------------------------------------------ */

#ifdef GPK_HAVE_OPENCL
const gpk_opencl_family *const gpk__opencl_families[] = {&gpk__radix_opencl_family, NULL};
#endif
