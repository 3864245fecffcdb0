/* The families that run on a backend the core owns, as the core sees them:
 * it creates the device context and calls each family's hooks, without
 * knowing the family. A new family adds its entry here. */
#include "core/internal.h"

#ifdef GPK_HAVE_OPENCL
#include "core/opencl_internal.h"

const gpk_opencl_family *const gpk__opencl_families[] = {&gpk__radix_opencl_family, NULL};
#endif
