/* OpenCL backend state shared by src/core/opencl_ctx.c (device, context,
 * queue) and src/sort/radix_opencl.c (tuning, program, kernels, buffers,
 * sorting).
 * Built only with GPK_HAVE_OPENCL. */
#ifndef GPK_OPENCL_INTERNAL_H
#define GPK_OPENCL_INTERNAL_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Radix sort variants (see src/sort/radix.cl). */
enum {
    GPK_OCL_FAST = 0,   /* work-group counting and local ranking (GPUs) */
    GPK_OCL_PAPER = 1,  /* per-item histograms in local memory, as in the paper */
    GPK_OCL_GLOBAL = 2, /* per-item histograms in global memory (large r) */
    GPK_OCL_ONESWEEP = 3 /* one histogram read, then one pass kernel per digit (look-back) */
};

/* One row of the tuning table (src/sort/radix_opencl.c). G is given per
 * compute unit so that one row fits a family of devices. */
typedef struct gpk_opencl_tune {
    const char *name;
    int variant;              /* preferred variant */
    unsigned fast_r, fast_items, fast_groups_per_cu, fast_split;
    unsigned kpt4, kpt8;      /* keys per item of the fast kernels (build time) */
    unsigned paper_r, paper_items, paper_groups_per_cu, paper_split;
    int paper_transpose;
    unsigned os_items, os_kpt4, os_kpt8; /* onesweep: items per group, keys per item (build time) */
    int os_default;           /* 1: onesweep is the default where the vendor warp path built */
} gpk_opencl_tune;

/* Phases of a sort, for the optional profile. */
enum {
    GPK_OCL_PH_DETECT = 0, GPK_OCL_PH_TRANSPOSE, GPK_OCL_PH_HISTOGRAM, GPK_OCL_PH_SCAN,
    GPK_OCL_PH_REORDER, GPK_OCL_NPHASE
};

typedef struct gpk_ocl_kernel {
    cl_kernel k;
    size_t wg;      /* CL_KERNEL_WORK_GROUP_SIZE */
    char name[32];
    int phase;      /* GPK_OCL_PH_* */
} gpk_ocl_kernel;

/* One build of src/sort/radix.cl and its kernels. [w]: key (or element)
 * width 4 -> 0, 8 -> 1; [v]: payload 0, 4, 8 -> 0, 1, 2. */
typedef struct gpk_ocl_kernels {
    cl_program program;
    gpk_ocl_kernel scan_parts, scan_add, transpose[2];
    gpk_ocl_kernel reduce[2], fast_count[2], paper_hist[2];
    gpk_ocl_kernel fast_reorder[2][3], paper_reorder[2][3];
    gpk_ocl_kernel os_hist[2], os_pass[2][3];
    /* the onesweep kernels' warp: 32 when built with the NVIDIA inline-PTX
     * primitives (GPK_NV_PTX) or their emulation (GPK_EMU_WARP), else 1 */
    unsigned os_warp;
    int os_emulated; /* the emulated vendor ranking (a test hook) */
} gpk_ocl_kernels;

/* Cached device buffers, grow-only. */
enum {
    GPK_OCL_KEYS0 = 0, GPK_OCL_KEYS1, GPK_OCL_VALS0, GPK_OCL_VALS1,
    GPK_OCL_HIST, GPK_OCL_AUX, GPK_OCL_RED, GPK_OCL_STATUS, GPK_OCL_NBUF
};

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

    gpk_opencl_tune tune;

    /* [0]: 32-bit positions, built with the context; [1]: 64-bit positions
     * (GPK_POS64), built by the first sort past 2^32 keys */
    gpk_ocl_kernels ks[2];

    /* The vendor build (inline PTX) is tried on NVIDIA GPUs unless
     * a test turns it off (gpk__test.opencl_vendor 0); 2 makes its failure an error
     * (with the build log) instead of a fallback. vendor_log keeps the start
     * of a failed vendor build's log. */
    unsigned os_bpt;          /* GPK_OS_BPT of the builds: onesweep needs items >= 256 / os_bpt */
    char vendor_log[1024];

    struct { cl_mem mem; size_t bytes; } buf[GPK_OCL_NBUF];

    /* Per-phase kernel times, only when gpk__test.opencl_profile is set at context
     * creation (for docs/perf and tuning; the paper reports the same split):
     * events of the current sort, then their sums in ms since the last reset. */
    int profile;
    cl_event *prof_ev;
    int *prof_phase;
    size_t prof_n, prof_cap;
    double prof_ms[GPK_OCL_NPHASE];
} gpk_opencl;

/* "CL_OUT_OF_RESOURCES" etc. */
const char *gpk__cl_error_name(cl_int e);
/* Records "OpenCL <what> failed: <NAME> (<code>)" on ctx; returns
 * GPK_ENOMEM for allocation failures, GPK_EDEVICE otherwise. */
gpk_status gpk__cl_fail(gpk_ctx *ctx, cl_int e, const char *what);

/* What a family that runs on OpenCL gives the core: init builds its
 * programs and kernels once the device, context and queue exist (it may
 * fail the context's creation); release frees them, also after a partial
 * init. */
typedef struct gpk_opencl_family {
    const char *name;
    gpk_status (*init)(gpk_ctx *ctx, gpk_opencl *st);
    void (*release)(gpk_opencl *st);
} gpk_opencl_family;

/* The families, NULL-terminated (src/families.c); each family defines its
 * entry next to its code (the radix sort: src/sort/radix_opencl.c). */
extern const gpk_opencl_family *const gpk__opencl_families[];
extern const gpk_opencl_family gpk__radix_opencl_family;

/* Adds the times of the recorded events to prof_ms and releases them
 * (call after clFinish). */
void gpk__opencl_profile_collect(gpk_opencl *st);

/* The kernels with 32-bit (wide = 0) or 64-bit positions, building the
 * latter on first use. */
gpk_status gpk__opencl_kernels(gpk_ctx *ctx, gpk_opencl *st, int wide, const gpk_ocl_kernels **out);

/* Releases the cached buffers (after an allocation failure, so that a
 * retry starts from nothing). */
void gpk__opencl_release_buffers(gpk_opencl *st);

#ifdef __cplusplus
}
#endif
#endif
