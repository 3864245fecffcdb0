/* What this build has: the one list of backends, and per backend the
 * tables through which the core and each family reach it (the core's
 * device table, core/internal.h; the sort family's, sort/sort_backend.h;
 * the octree's, octree/octree_internal.h; the search's device scans,
 * search/search_run.h). The GPU backends' tables are their modules'
 * (modules/module.h: libgpk_cuda.so, libgpk_opencl.so), loaded at first
 * use; the CPU's are here. The core and the families look their tables up
 * here and know no backend by name; a new backend adds its row here and
 * its module's tables, a new family its table. */
#include "core/internal.h"
#include "octree/octree_internal.h"
#include "search/search_run.h"
#include "sort/sort_backend.h"
#include "modules/module.h"

/* ---- the backends ---------------------------------------------------------- */

const gpk__backend_row gpk__backends[] = {
    {GPK_BACKEND_CPU, "cpu", NULL, NULL, NULL},
#ifdef GPK_HAVE_CUDA
    {GPK_BACKEND_CUDA, "cuda", NULL, NULL, gpk__module_device},
#else
    {GPK_BACKEND_CUDA, "cuda", NULL,
     "CUDA backend: not built into this gpk (nvcc was not found at build time)", NULL},
#endif
#ifdef GPK_HAVE_OPENCL
    {GPK_BACKEND_OPENCL, "opencl", NULL, NULL, gpk__module_device},
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

const gpk__sort_backend *gpk__sort_backend_of(gpk_backend b)
{
    const gpk__backend_module *m = gpk__module_get(b, NULL);
    if (m) return m->sort;
    return b == GPK_BACKEND_CPU ? &sort_cpu : NULL;
}

/* ---- the octree --------------------------------------------------------------- */

/* NULL: the CPU builders */
const gpk__octree_backend *gpk__octree_backend_of(gpk_backend b)
{
    const gpk__backend_module *m = gpk__module_get(b, NULL);
    return m ? m->octree : NULL;
}

/* ---- the local search's device scans ------------------------------------------ */

/* NULL: the CPU scans */
const gpk__search_backend *gpk__search_backend_of(gpk_backend b)
{
    const gpk__backend_module *m = gpk__module_get(b, NULL);
    return m ? m->search : NULL;
}
