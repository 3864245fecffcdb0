/* What this build has: the one list of backends, and per backend the
 * tables through which the core and each family reach it (the core's
 * device table, core/internal.h; the sort family's, sort/sort_backend.h;
 * the octree's, octree/octree_internal.h; the families run on OpenCL,
 * core/opencl_internal.h). The core and the families look their tables up
 * here and know no backend by name; a new backend adds its row and its
 * tables here, a new family its table. */
#include "core/internal.h"
#include "octree/octree_internal.h"
#include "sort/sort_backend.h"
#ifdef GPK_HAVE_CUDA
#include "core/cuda_internal.h"
#endif
#ifdef GPK_HAVE_CUDA_OCTREE
#include "octree/octree_cuda_internal.h"
#endif
#ifdef GPK_HAVE_OPENCL
#include "core/opencl_internal.h"
#endif

/* ---- the backends ---------------------------------------------------------- */

const gpk__backend_row gpk__backends[] = {
    {GPK_BACKEND_CPU, "cpu", NULL, NULL},
#ifdef GPK_HAVE_CUDA
    {GPK_BACKEND_CUDA, "cuda", &gpk__cuda_device, NULL},
#else
    {GPK_BACKEND_CUDA, "cuda", NULL,
     "CUDA backend: not built into this gpk (nvcc was not found at build time)"},
#endif
#ifdef GPK_HAVE_OPENCL
    {GPK_BACKEND_OPENCL, "opencl", &gpk__opencl_device, NULL},
#else
    {GPK_BACKEND_OPENCL, "opencl", NULL,
     "OpenCL backend: not built into this gpk (no OpenCL SDK at build time)"},
#endif
    {GPK_BACKEND_AUTO, NULL, NULL, NULL},
};

/* ---- the sort family --------------------------------------------------------- */

static const gpk__sort_backend sort_cpu = {
    gpk__radix_sort_cpu, 1, 1, gpk__quick_sort_cpu, SIZE_MAX, gpk__seg_sort_cpu, &gpk__multi_cpu,
    &gpk__ooc_cpu,       0,
};
#ifdef GPK_HAVE_CUDA
/* The CUDA quicksort keeps 32-bit positions (segments, tiles and their
 * packed counters). */
static const gpk__sort_backend sort_cuda = {
    gpk__radix_sort_cuda, 0, 0, gpk__quick_sort_cuda, UINT32_MAX, gpk__seg_sort_cuda, &gpk__multi_cuda,
    &gpk__ooc_cuda,       1,
};
#endif
#ifdef GPK_HAVE_OPENCL
/* segmented sorts: two stable sorts of the covered elements through the
 * radix sort (segmented_opencl.c) */
static const gpk__sort_backend sort_opencl = {
    gpk__radix_sort_opencl, 0, 0, NULL, 0, gpk__seg_sort_by_two_sorts, NULL, NULL, 0,
};
#endif

const gpk__sort_backend *gpk__sort_backend_of(gpk_backend b)
{
    switch (b) {
    case GPK_BACKEND_CPU: return &sort_cpu;
#ifdef GPK_HAVE_CUDA
    case GPK_BACKEND_CUDA: return &sort_cuda;
#endif
#ifdef GPK_HAVE_OPENCL
    case GPK_BACKEND_OPENCL: return &sort_opencl;
#endif
    default: return NULL;
    }
}

/* ---- the octree --------------------------------------------------------------- */

#ifdef GPK_HAVE_CUDA_OCTREE
/* the whole build on the device, the root cube included */
static const gpk__octree_backend octree_cuda = {gpk__octree_build_cuda, 1};
#endif

const gpk__octree_backend *gpk__octree_backend_of(gpk_backend b)
{
    switch (b) {
#ifdef GPK_HAVE_CUDA_OCTREE
    case GPK_BACKEND_CUDA: return &octree_cuda;
#endif
    default: return NULL; /* the CPU builders */
    }
}

/* ---- the families that run on OpenCL ------------------------------------------ */

#ifdef GPK_HAVE_OPENCL
const gpk_opencl_family *const gpk__opencl_families[] = {&gpk__radix_opencl_family, NULL};
#endif
