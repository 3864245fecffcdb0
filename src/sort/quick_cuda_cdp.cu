/* CUDA-R-quicksort (Manca et al. 2015, Section 5): the recursive variant,
 * with CUDA dynamic parallelism as sm_90 supports it (CDP2: no
 * cudaDeviceSynchronize in device code; fire-and-forget launches).
 *
 * This file compiles quick_cuda.cu a second time, with relocatable device
 * code and its own device link (see CMakeLists.txt), so that only the
 * recursive variant pays for separable compilation. Everything is shared
 * but one step: the block that finishes a segment last, which in the
 * iterative form appends a big child to the next level's list, here
 * launches the child's partition grid itself (fire and forget), down to
 * depth kCdpDepth. The host launches the root's grid and waits for the
 * whole tree (a grid is complete only when all the grids it launched
 * are); the segments still big at depth kCdpDepth (only on inputs whose
 * splits are very uneven) go back to the host loop.
 */
#define GPK_QUICK_CDP_TU 1
#include "quick_cuda.cu"
