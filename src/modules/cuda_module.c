/* The CUDA backend's module (module.h): its tables and its entry, built
 * into libgpk_cuda.so, and into the static library, where the loader
 * calls the entry directly. */
#include "cuda_api.h"
#include "../core/cuda_internal.h"
#include "../sort/radix_internal.h"
#ifdef GPK_HAVE_CUDA_OCTREE
#include "../octree/octree_cuda_internal.h"
#endif

/* The CUDA quicksort keeps 32-bit positions (segments, tiles and their
 * packed counters). */
static const gpk__sort_backend sort_cuda = {
    .radix = gpk__radix_sort_cuda,
    .radix_reads_src = 0,
    .radix_descending = 0, /* its in-memory sort may go out of core */
    .quick = gpk__quick_sort_cuda,
    .quick_max_n = UINT32_MAX,
    .segmented = gpk__seg_sort_cuda,
    .multi = &gpk__multi_cuda,
    .ooc = &gpk__ooc_cuda,
    .enomem_goes_ooc = 1,
    .radix_bench = gpk__radix_bench_cuda,
    .quick_bench = gpk__quick_bench_cuda,
};

#ifdef GPK_HAVE_CUDA_OCTREE
/* the whole build on the device, the root cube included */
static const gpk__octree_backend octree_cuda = {gpk__octree_build_cuda, 1};
#endif

#ifdef GPK_HAVE_CUDA_SEARCH
static const gpk__search_backend search_cuda = {
    .open = gpk__search_cuda_open,
    .fast = gpk__search_cuda_fast,
    .close = gpk__search_cuda_close,
    .tabu_upload = gpk__search_cuda_tabu_upload,
    .tabu_set = gpk__search_cuda_tabu_set,
    .best_move = gpk__search_cuda_best_move,
    .tsp_ls_open = gpk__tsp_ls_cuda_open,
    .tsp_ls_eval = gpk__tsp_ls_cuda_eval,
    .tsp_ls_close = gpk__tsp_ls_cuda_close,
};
#endif

static const gpk__cuda_api api = {
#ifdef GPK_HAVE_CUDA_OCTREE
    .octree_build = gpk_cuda_octree_build,
    .octree_free = gpk_cuda_octree_free,
#endif
#define API_ENTRY(name, params, args) .name = gpk_cuda_##name,
    GPK__CUDA_API_SORTS(API_ENTRY)
#undef API_ENTRY
};

static const gpk__backend_module module = {
    .abi = GPK__MODULE_ABI,
    .device = &gpk__cuda_device,
    .sort = &sort_cuda,
#ifdef GPK_HAVE_CUDA_OCTREE
    .octree = &octree_cuda,
#endif
#ifdef GPK_HAVE_CUDA_SEARCH
    .search = &search_cuda,
#endif
    .cuda_api = &api,
};

GPK__MODULE_ENTRY(gpk_cuda_module_open, module)
