/* OpenCL radix sort backend (Helluy 2011): host side.
 *
 * A sort uploads the caller's keys (and values), detects the bit range when
 * b = 0 (one AND/OR reduction), runs p = ceil((end - begin) / r) passes of
 * histogram -> scan with split s -> reorder between two ping-pong buffers
 * (the first pass maps the keys, the last maps them back), and downloads
 * the result. Nothing is written to the caller's arrays before all device
 * work has succeeded.
 *
 * Variants (kernels in radix.cl):
 *   fast   work-group counting and local ranking: the GPU default;
 *   paper  per-item histograms H(c, g, i) in local memory, optional
 *          transposition: the CPU default, and the paper-faithful version
 *          on GPUs (forced by tests);
 *   onesweep  one read for the digit counts of all passes, then per pass
 *          one kernel that ranks a tile, finds its digits' offsets by
 *          decoupled look-back and writes the tile coalesced (the CUDA
 *          backend's design): the default on NVIDIA GPUs when the program
 *          built with the inline-PTX warp primitives; portable otherwise
 *          (forced by tests), for testing the design on PoCL;
 *   global per-item histograms in global memory: used when the 2^r * I
 *          counters of the paper variant do not fit in local memory
 *          (large r on GPUs), or forced by tests.
 * A variant that does not fit the device for the requested r falls back to
 * the next one, so every r in 1..16 works.
 *
 * The tuning table below is the one place for per-device choices; tests
 * force a variant, the transposition, the vendor path, the 64-bit build or
 * the profile through gpk__test (src/core/test_hooks.h).
 */
#define _POSIX_C_SOURCE 200809L

#include "radix_internal.h"
#include "../core/opencl_internal.h"
#include "radix_cl.h"      /* gpk_radix_cl_source[], generated from src/sort/radix.cl */
#include "key_traits_cl.h" /* gpk_key_traits_cl_source[], generated from src/core/key_traits.h */

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- state ---------------------------------------------------------------- */

/* Radix sort variants (see src/sort/radix.cl). */
enum {
    GPK_OCL_FAST = 0,    /* work-group counting and local ranking (GPUs) */
    GPK_OCL_PAPER = 1,   /* per-item histograms in local memory, as in the paper */
    GPK_OCL_GLOBAL = 2,  /* per-item histograms in global memory (large r) */
    GPK_OCL_ONESWEEP = 3 /* one histogram read, then one pass kernel per digit (look-back) */
};

/* One row of the tuning table (src/sort/radix_opencl.c). G is given per
 * compute unit so that one row fits a family of devices. */
typedef struct gpk_opencl_tune {
    const char *name;
    int variant; /* preferred variant */
    unsigned fast_r, fast_items, fast_groups_per_cu, fast_split;
    unsigned kpt4, kpt8; /* keys per item of the fast kernels (build time) */
    unsigned paper_r, paper_items, paper_groups_per_cu, paper_split;
    int paper_transpose;
    unsigned os_items, os_kpt4, os_kpt8; /* onesweep: items per group, keys per item (build time) */
    int os_default;                      /* 1: onesweep is the default where the vendor warp path built */
} gpk_opencl_tune;

/* Phases of a sort, for the optional profile. */
enum {
    GPK_OCL_PH_DETECT = 0,
    GPK_OCL_PH_TRANSPOSE,
    GPK_OCL_PH_HISTOGRAM,
    GPK_OCL_PH_SCAN,
    GPK_OCL_PH_REORDER,
    GPK_OCL_NPHASE
};

typedef struct gpk_ocl_kernel {
    cl_kernel k;
    size_t wg; /* CL_KERNEL_WORK_GROUP_SIZE */
    char name[32];
    int phase; /* GPK_OCL_PH_* */
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
    GPK_OCL_KEYS0 = 0,
    GPK_OCL_KEYS1,
    GPK_OCL_VALS0,
    GPK_OCL_VALS1,
    GPK_OCL_HIST,
    GPK_OCL_AUX,
    GPK_OCL_RED,
    GPK_OCL_STATUS,
    GPK_OCL_NBUF
};

/* What the radix sort keeps on an OpenCL context, in its hook slot (the
 * core's gpk_opencl holds the device, context and queue only). */
typedef struct radix_cl {
    gpk_opencl *dev;
    gpk_opencl_tune tune;

    /* [0]: 32-bit positions, built with the context; [1]: 64-bit positions
     * (GPK_POS64), built by the first sort past 2^32 keys */
    gpk_ocl_kernels ks[2];

    /* The vendor build (inline PTX) is tried on NVIDIA GPUs unless
     * a test turns it off (gpk__test.opencl_vendor 0); 2 makes its failure an error
     * (with the build log) instead of a fallback. vendor_log keeps the start
     * of a failed vendor build's log. */
    unsigned os_bpt; /* GPK_OS_BPT of the builds: onesweep needs items >= 256 / os_bpt */
    char vendor_log[1024];

    struct {
        cl_mem mem;
        size_t bytes;
    } buf[GPK_OCL_NBUF];

    /* Per-phase kernel times, only when gpk__test.opencl_profile is set at context
     * creation (for docs/perf and tuning; the paper reports the same split):
     * events of the current sort, then their sums in ms since the last reset. */
    int profile;
    cl_event *prof_ev;
    int *prof_phase;
    size_t prof_n, prof_cap;
    double prof_ms[GPK_OCL_NPHASE];
} radix_cl;

static void radix_opencl_release(gpk_ctx *ctx);

/* ctx's radix state; NULL when ctx is not an OpenCL context. */
static radix_cl *state_of(gpk_ctx *ctx)
{
    void **slot = gpk__ctx_hook_state(ctx, radix_opencl_release);
    return slot ? (radix_cl *)*slot : NULL;
}

/* Releases the cached buffers (after an allocation failure, so that a
 * retry starts from nothing). */
static void release_buffers(radix_cl *st)
{
    for (int i = 0; i < GPK_OCL_NBUF; i++) {
        if (st->buf[i].mem) clReleaseMemObject(st->buf[i].mem);
        st->buf[i].mem = NULL;
        st->buf[i].bytes = 0;
    }
}

/* Adds the times of the recorded events to prof_ms and releases them
 * (call after clFinish). */
static void profile_collect(radix_cl *st)
{
    for (size_t i = 0; i < st->prof_n; i++) {
        cl_ulong t0 = 0, t1 = 0;
        if (clGetEventProfilingInfo(st->prof_ev[i], CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL) ==
                CL_SUCCESS &&
            clGetEventProfilingInfo(st->prof_ev[i], CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL) ==
                CL_SUCCESS &&
            t1 >= t0)
            st->prof_ms[st->prof_phase[i]] += (double)(t1 - t0) * 1e-6;
        clReleaseEvent(st->prof_ev[i]);
    }
    st->prof_n = 0;
}

/* ---- tuning ---------------------------------------------------------------
 * One table, first matching row wins (type 0 and vendor NULL match any).
 * GPU rows: the fast variant with r = 8 (4 passes for 32-bit keys) and tiles
 * of I * KPT keys; G is a few groups per compute unit, each walking a
 * contiguous run of tiles, which keeps H (2^r * G counters) small. The
 * paper-variant columns of the GPU rows are the paper's GTX 470 values
 * (Table 3: r = 5, I = 128, s = 512, transposition on; G = 128 on 14 CUs,
 * about 8 per CU). CPU row: the paper's CPU setting (Table 3: I = 1, no
 * transposition, s = 8), with r = 8, which measured faster than r = 6 on
 * PoCL, and 2 groups per core (see docs/perf/radix.md). */
static const struct tune_row {
    cl_device_type type;
    const char *vendor;
    gpk_opencl_tune t;
} tune_table[] = {
    /* name          variant       fast: r   I  G/cu   s kpt4 kpt8 paper: r  I  G/cu   s  transp
     *                                                                        onesweep: I kpt4 kpt8 default */
    {CL_DEVICE_TYPE_GPU,
     "NVIDIA",
     {"nvidia-gpu", GPK_OCL_FAST, 8, 256, 8, 256, 12, 6, 5, 128, 8, 512, 1, 256, 16, 8, 1}},
    {CL_DEVICE_TYPE_GPU, NULL, {"gpu", GPK_OCL_FAST, 8, 256, 8, 256, 8, 4, 5, 128, 8, 512, 1, 256, 8, 4, 0}},
    {CL_DEVICE_TYPE_CPU, NULL, {"cpu", GPK_OCL_PAPER, 8, 64, 2, 64, 8, 4, 8, 1, 2, 8, 0, 64, 8, 4, 0}},
    {0, NULL, {"other", GPK_OCL_PAPER, 8, 64, 4, 64, 8, 4, 6, 16, 4, 64, 0, 64, 8, 4, 0}},
};

static int contains_ci(const char *hay, const char *needle)
{
    const size_t nl = strlen(needle);
    for (const char *h = hay; *h; h++) {
        size_t i = 0;
        while (i < nl && h[i] && tolower((unsigned char)h[i]) == tolower((unsigned char)needle[i])) i++;
        if (i == nl) return 1;
    }
    return nl == 0;
}

/* Chooses the tuning row for the device described in *st (type, vendor,
 * compute units). */
static void gpk__radix_opencl_tune(const radix_cl *st, gpk_opencl_tune *out)
{
    const size_t rows = sizeof tune_table / sizeof tune_table[0];
    *out = tune_table[rows - 1].t;
    for (size_t i = 0; i < rows; i++) {
        const struct tune_row *row = &tune_table[i];
        if (row->type && !(st->dev->type & row->type)) continue;
        if (row->vendor && !contains_ci(st->dev->vendor, row->vendor)) continue;
        *out = row->t;
        break;
    }
}

/* ---- plan ----------------------------------------------------------------- */

#define RANK_BITS 4u /* GPK_RANK_BITS in the build options */
#define PADK(p) ((size_t)(p) + ((size_t)(p) >> 5))
#define TD 16u /* transposition tile, GPK_TD in radix.cl */

typedef struct plan {
    int variant;
    unsigned w;             /* widest pass, bits */
    unsigned I, G;          /* items per group, groups launched */
    unsigned s;             /* scan split */
    int transpose;          /* paper variants */
    size_t npad;            /* elements of the key / payload buffers in use */
    unsigned C;             /* paper: keys per item */
    unsigned T, tiles, tpg; /* fast: tile size, tile count, tiles per group */
    size_t hist_len;        /* counters of H for the widest pass (onesweep: of all passes) */
    size_t aux_len;
    size_t status_len; /* onesweep: look-back words of a pass and the tile counter */
} plan;

typedef struct run {
    gpk_ctx *ctx;
    radix_cl *st;
    const gpk_radix_job *job;
    size_t n;
    int wide;                 /* 64-bit positions (past 2^32 keys, or gpk__test.opencl_wide_from) */
    unsigned pw;              /* bytes of a position / histogram entry: 4 or 8 */
    const gpk_ocl_kernels *k; /* the build for pw */
    int kind;                 /* key map: 0 unsigned, 1 signed, 2 float */
    int kwi;                  /* key width index: 4 -> 0, 8 -> 1 */
    unsigned kw, vw;          /* key and payload bytes (sigma is a 4- or 8-byte payload) */
    int vi;                   /* payload index: 0, 4, 8 -> 0, 1, 2 */
    int sigma;
    int pref;   /* preferred variant */
    unsigned r; /* radix bits */
    unsigned begin, end, passes;
    plan p;
    int res; /* buffer slot (0 or 1) holding the result */
} run;

/* ---- programs: the 32-bit one built when a context is created
 * (gpk__radix_opencl_family), the 64-bit one on first use ---- */

/* The program source: the key maps (core/key_traits.h), the common part of
 * radix.cl, then its template part once per (key width, payload width); see
 * the head of radix.cl. #line keeps the compiler's line numbers radix.cl's. */
static char *program_source(void)
{
    static const char marker[] = "/*@@GPK_TEMPLATE@@";
    static const char line1[] = "\n#line 1\n";
    static const int kw[2] = {4, 8}, vw[3] = {0, 4, 8};
    const char *maps = gpk_key_traits_cl_source;
    const char *src = gpk_radix_cl_source;
    const char *tpl = strstr(src, marker);
    if (!tpl) return NULL;
    const size_t maps_len = strlen(maps), common_len = (size_t)(tpl - src), tpl_len = strlen(tpl);
    int tpl_line = 1;
    for (const char *c = src; c < tpl; c++)
        if (*c == '\n') tpl_line++;
    const size_t total = maps_len + sizeof line1 + common_len + 6 * (tpl_len + 128) + 1;
    char *out = malloc(total);
    if (!out) return NULL;
    size_t len = 0;
    memcpy(out, maps, maps_len);
    len += maps_len;
    memcpy(out + len, line1, sizeof line1 - 1);
    len += sizeof line1 - 1;
    memcpy(out + len, src, common_len);
    len += common_len;
    for (int k = 0; k < 2; k++)
        for (int v = 0; v < 3; v++) {
            len +=
                (size_t)snprintf(out + len, total - len, "\n#define GPK_KW %d\n#define GPK_VW %d\n#line %d\n",
                                 kw[k], vw[v], tpl_line);
            memcpy(out + len, tpl, tpl_len);
            len += tpl_len;
            out[len++] = '\n';
        }
    out[len] = '\0';
    return out;
}

static gpk_status make_kernel(gpk_ctx *ctx, radix_cl *st, cl_program program, gpk_ocl_kernel *k,
                              const char *name)
{
    cl_int e;
    snprintf(k->name, sizeof k->name, "%s", name);
    k->phase = !strncmp(name, "scan", 4)                     ? GPK_OCL_PH_SCAN
        : !strncmp(name, "transpose", 9)                     ? GPK_OCL_PH_TRANSPOSE
        : !strncmp(name, "reduce", 6)                        ? GPK_OCL_PH_DETECT
        : strstr(name, "reorder") || strstr(name, "os_pass") ? GPK_OCL_PH_REORDER
                                                             : GPK_OCL_PH_HISTOGRAM;
    k->k = clCreateKernel(program, name, &e);
    if (e != CL_SUCCESS) {
        k->k = NULL;
        char what[80];
        snprintf(what, sizeof what, "clCreateKernel(%s)", name);
        return gpk__cl_fail(ctx, e, what);
    }
    e = clGetKernelWorkGroupInfo(k->k, st->dev->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof k->wg, &k->wg,
                                 NULL);
    if (e != CL_SUCCESS) {
        char what[96];
        snprintf(what, sizeof what, "clGetKernelWorkGroupInfo(%s)", name);
        return gpk__cl_fail(ctx, e, what);
    }
    return GPK_OK;
}

/* The start of the program's build log on one line ("" when none). */
static void build_log(radix_cl *st, cl_program prog, char *log, size_t len)
{
    log[0] = '\0';
    size_t need = 0;
    if (clGetProgramBuildInfo(prog, st->dev->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &need) != CL_SUCCESS ||
        need == 0)
        return;
    char *full = malloc(need + 1);
    if (full &&
        clGetProgramBuildInfo(prog, st->dev->device, CL_PROGRAM_BUILD_LOG, need, full, NULL) == CL_SUCCESS) {
        full[need] = '\0';
        snprintf(log, len, "%s", full);
        for (char *c = log; *c; c++)
            if (*c == '\n' || *c == '\r') *c = ' ';
        for (size_t l = strlen(log); l > 0 && isspace((unsigned char)log[l - 1]); l--) log[l - 1] = '\0';
    }
    free(full);
}

/* The vendor path where it builds (1, the default); tests force 0 (portable
 * kernels only), 2 (the vendor path or an error) or 3 (the vendor path's
 * 32-lane ranking with emulated warp primitives on any device). */
static int vendor_mode(void)
{
    const int v = (int)gpk__hook(gpk__test.opencl_vendor, 1);
    return v == 0 || v == 2 || v == 3 ? v : 1;
}

/* wide: positions, counts and sizes in 64 bits (GPK_POS64), for sorts past
 * 2^32 keys; the 32-bit build keeps the common sizes' local memory and
 * arithmetic as they were. */
static gpk_status build_program(gpk_ctx *ctx, radix_cl *st, int wide)
{
    cl_int e;
    gpk_ocl_kernels *ks = &st->ks[wide];
    char *src = program_source();
    if (!src) return gpk__fail(ctx, GPK_ENOMEM, "OpenCL: cannot assemble the radix program source");
    /* The onesweep kernels' warp primitives: NVIDIA's inline PTX where the
     * device is NVIDIA's and the program builds with them; otherwise, or
     * when that build fails, the portable program. */
    const int mode = vendor_mode();
    const int nvidia = (st->dev->type & CL_DEVICE_TYPE_GPU) && contains_ci(st->dev->vendor, "NVIDIA");
    if (mode == 2 && !nvidia) {
        free(src);
        return gpk__fail(ctx, GPK_EUNSUPPORTED,
                         "OpenCL: the vendor path was required but there is none for %s (%s)", st->dev->name,
                         st->dev->vendor);
    }
    /* Keys per item are compile-time (they size private arrays); the rest
     * of the tuning is chosen per call. */
    st->os_bpt = 2u * ((256u + st->tune.os_items - 1u) / st->tune.os_items); /* half the items still work */
    if (st->os_bpt > 8) st->os_bpt = 8;
    char opts[640];
    for (int ptx = mode != 0 && nvidia && mode != 3; ptx >= 0; ptx--) {
        const char *srcs[1] = {src};
        ks->program = clCreateProgramWithSource(st->dev->context, 1, srcs, NULL, &e);
        if (e != CL_SUCCESS) {
            ks->program = NULL;
            free(src);
            return gpk__cl_fail(ctx, e, "clCreateProgramWithSource");
        }
        snprintf(
            opts, sizeof opts,
            "-cl-std=CL1.2 -DGPK_KPT4=%u -DGPK_KPT8=%u -DGPK_RANK_BITS=4 -DGPK_OS_KPT4=%u -DGPK_OS_KPT8=%u "
            "-DGPK_OS_BPT=%u%s%s",
            st->tune.kpt4, st->tune.kpt8, st->tune.os_kpt4, st->tune.os_kpt8, st->os_bpt,
            wide ? " -DGPK_POS64" : "",
            ptx             ? " -DGPK_NV_PTX"
                : mode == 3 ? " -DGPK_EMU_WARP"
                            : "");
        e = clBuildProgram(ks->program, 1, &st->dev->device, opts, NULL, NULL);
        if (e == CL_SUCCESS) {
            ks->os_warp = ptx || mode == 3 ? 32 : 1;
            ks->os_emulated = mode == 3;
            break;
        }
        char log[400];
        build_log(st, ks->program, log, sizeof log);
        clReleaseProgram(ks->program);
        ks->program = NULL;
        if (ptx) {
            snprintf(st->vendor_log, sizeof st->vendor_log, "%s (%d): %s", gpk__cl_error_name(e), (int)e,
                     log[0] ? log : "(no build log)");
            if (mode == 2) {
                free(src);
                return gpk__fail(ctx, GPK_EDEVICE,
                                 "OpenCL build of the vendor (inline PTX) kernels failed on %s: %s",
                                 st->dev->name, st->vendor_log);
            }
            continue;
        }
        free(src);
        return gpk__fail(ctx, GPK_EDEVICE, "OpenCL clBuildProgram failed on %s: %s (%d): %s", st->dev->name,
                         gpk__cl_error_name(e), (int)e, log[0] ? log : "(no build log)");
    }
    free(src);

    gpk_status s;
    char name[32];
    static const int kw[2] = {4, 8}, vw[3] = {0, 4, 8};
    cl_program pr = ks->program;
    if ((s = make_kernel(ctx, st, pr, &ks->scan_parts, "scan_parts")) != GPK_OK) return s;
    if ((s = make_kernel(ctx, st, pr, &ks->scan_add, "scan_add")) != GPK_OK) return s;
    if ((s = make_kernel(ctx, st, pr, &ks->transpose[0], "transpose_w4")) != GPK_OK) return s;
    if ((s = make_kernel(ctx, st, pr, &ks->transpose[1], "transpose_w8")) != GPK_OK) return s;
    for (int k = 0; k < 2; k++) {
        snprintf(name, sizeof name, "reduce_andor_k%d", kw[k]);
        if ((s = make_kernel(ctx, st, pr, &ks->reduce[k], name)) != GPK_OK) return s;
        snprintf(name, sizeof name, "fast_count_k%d", kw[k]);
        if ((s = make_kernel(ctx, st, pr, &ks->fast_count[k], name)) != GPK_OK) return s;
        snprintf(name, sizeof name, "paper_hist_k%d", kw[k]);
        if ((s = make_kernel(ctx, st, pr, &ks->paper_hist[k], name)) != GPK_OK) return s;
        snprintf(name, sizeof name, "os_hist_k%d", kw[k]);
        if ((s = make_kernel(ctx, st, pr, &ks->os_hist[k], name)) != GPK_OK) return s;
        for (int v = 0; v < 3; v++) {
            snprintf(name, sizeof name, "fast_reorder_k%d_v%d", kw[k], vw[v]);
            if ((s = make_kernel(ctx, st, pr, &ks->fast_reorder[k][v], name)) != GPK_OK) return s;
            snprintf(name, sizeof name, "paper_reorder_k%d_v%d", kw[k], vw[v]);
            if ((s = make_kernel(ctx, st, pr, &ks->paper_reorder[k][v], name)) != GPK_OK) return s;
            snprintf(name, sizeof name, "os_pass_k%d_v%d", kw[k], vw[v]);
            if ((s = make_kernel(ctx, st, pr, &ks->os_pass[k][v], name)) != GPK_OK) return s;
        }
    }
    return GPK_OK;
}

static void release_kernel(gpk_ocl_kernel *k)
{
    if (k->k) clReleaseKernel(k->k);
    k->k = NULL;
}

static void release_kernels(gpk_ocl_kernels *ks)
{
    release_kernel(&ks->scan_parts);
    release_kernel(&ks->scan_add);
    for (int k = 0; k < 2; k++) {
        release_kernel(&ks->transpose[k]);
        release_kernel(&ks->reduce[k]);
        release_kernel(&ks->fast_count[k]);
        release_kernel(&ks->paper_hist[k]);
        release_kernel(&ks->os_hist[k]);
        for (int v = 0; v < 3; v++) {
            release_kernel(&ks->os_pass[k][v]);
            release_kernel(&ks->fast_reorder[k][v]);
            release_kernel(&ks->paper_reorder[k][v]);
        }
    }
    if (ks->program) clReleaseProgram(ks->program);
    ks->program = NULL;
}

static gpk_status kernels_of(gpk_ctx *ctx, radix_cl *st, int wide, const gpk_ocl_kernels **out)
{
    wide = wide != 0;
    if (!st->ks[wide].program) {
        const gpk_status s = build_program(ctx, st, wide);
        if (s != GPK_OK) {
            release_kernels(&st->ks[wide]);
            return s;
        }
    }
    *out = &st->ks[wide];
    return GPK_OK;
}

/* The context's hook: frees what the radix sort keeps on it (the device
 * work is done: the core finishes the queue first, or nothing ran). */
static void radix_opencl_release(gpk_ctx *ctx)
{
    void **slot = gpk__ctx_hook_state(ctx, radix_opencl_release);
    radix_cl *st = slot ? (radix_cl *)*slot : NULL;
    if (!st) return;
    if (st->dev->queue) clFinish(st->dev->queue);
    profile_collect(st);
    free(st->prof_ev);
    free(st->prof_phase);
    release_buffers(st);
    release_kernels(&st->ks[0]);
    release_kernels(&st->ks[1]);
    free(st);
    *slot = NULL;
}

/* The tuning comes first: the keys per item are compile-time. */
static gpk_status radix_opencl_init(gpk_ctx *ctx, gpk_opencl *dev)
{
    void **slot = gpk__ctx_hook(ctx, radix_opencl_release, 0);
    if (!slot) return gpk__fail(ctx, GPK_ENOMEM, "OpenCL radix sort: no free context hook");
    radix_cl *st = calloc(1, sizeof *st);
    if (!st) return gpk__fail(ctx, GPK_ENOMEM, "out of host memory for the OpenCL radix sort's state");
    *slot = st;
    st->dev = dev;
    st->profile = gpk__hook(gpk__test.opencl_profile, 0) != 0;
    gpk__radix_opencl_tune(st, &st->tune);
    return build_program(ctx, st, 0);
}

const gpk_opencl_family gpk__radix_opencl_family = {"radix sort", radix_opencl_init, radix_opencl_release};

static size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }
static size_t min_sz(size_t a, size_t b) { return a < b ? a : b; }

/* The variant a test forces, else the tuning's. */
static int variant_or(int fallback)
{
    const int v = (int)gpk__hook(gpk__test.opencl_variant, fallback);
    return v >= GPK_OCL_FAST && v <= GPK_OCL_ONESWEEP ? v : fallback;
}

static unsigned kpt_of(const run *R) { return R->kw == 4 ? R->st->tune.kpt4 : R->st->tune.kpt8; }
static unsigned os_kpt_of(const run *R) { return R->kw == 4 ? R->st->tune.os_kpt4 : R->st->tune.os_kpt8; }

/* Local memory of the onesweep pass for I items and digits of w bits:
 * counters per (warp, digit), staged keys and values, digit bases, scan. */
static size_t os_local(const run *R, unsigned I, unsigned w)
{
    const size_t T = (size_t)I * os_kpt_of(R), D = (size_t)1 << w;
    const size_t counters = (size_t)(I / R->k->os_warp) * D * 4;
    const size_t keys = (T * R->kw + 7) / 8 * 8;
    const size_t vals = R->vw ? T * R->vw : 4;
    return counters + keys + vals + D * 4 + (size_t)2 * I * 4;
}

/* Words of the fast reorder's rank counters: 2^RB 16-bit counters per
 * item, two to a word. */
static size_t cnt_words(size_t I, unsigned bits)
{
    const unsigned nb = bits < RANK_BITS ? bits : RANK_BITS;
    return ((size_t)1 << (nb - 1)) * I;
}

/* Picks the kernel build for R->wide. */
static gpk_status use_width(run *R, int wide)
{
    R->wide = wide;
    R->pw = wide ? 8u : 4u;
    return kernels_of(R->ctx, R->st, wide, &R->k);
}

/* Local memory of the fast reorder for I items and passes of w bits. */
static size_t fast_local(const run *R, unsigned I, unsigned w)
{
    const size_t T = (size_t)I * kpt_of(R);
    const size_t wide = R->vw > R->kw ? R->vw : R->kw;
    const size_t kv = (PADK(T - 1) + 1) * wide;
    const size_t ib = R->vw ? ((PADK(T - 1) + 1) * 2 + 3) / 4 * 4 : 4;
    const size_t cnt = cnt_words(I, w) * 4;
    const size_t scan = (size_t)2 * I * 4;
    const size_t rr = ((size_t)1 << w) * (R->pw + 4); /* gofs, tstart */
    return kv + ib + cnt + scan + rr;
}

/* Replicas of the fast histogram: several copies spread equal digits of a
 * wavefront over several counters; keep the array within 16 KB. */
static unsigned fast_nrep(unsigned bits)
{
    const size_t per = ((size_t)1 << bits) * 4;
    size_t n = 16384 / per;
    if (n > 8) n = 8;
    if (n < 1) n = 1;
    return (unsigned)n;
}

static size_t wg_limit(const run *R, const gpk_ocl_kernel *a, const gpk_ocl_kernel *b)
{
    size_t m = R->st->dev->max_wg;
    if (a->wg && a->wg < m) m = a->wg;
    if (b->wg && b->wg < m) m = b->wg;
    return m;
}

/* The items of a work-group for kernels a and b: the caller's (GPK_EINVAL
 * when the kernels cannot run that many), else `tuned` halved down to
 * their limit. */
static gpk_status pick_items(const run *R, const gpk_ocl_kernel *a, const gpk_ocl_kernel *b, unsigned tuned,
                             unsigned *I)
{
    const size_t lim = wg_limit(R, a, b);
    const unsigned asked = R->job->items;
    *I = asked ? asked : tuned;
    if (asked && *I > lim)
        return gpk__fail(R->ctx, GPK_EINVAL, "items = %u exceeds the work-group limit %zu of %s", *I, lim,
                         R->st->dev->name);
    if (!asked)
        while (*I > lim) *I /= 2;
    return GPK_OK;
}

/* Fills *p for passes of at most w bits. Returns GPK_EINVAL for tunables
 * the device cannot run; chooses the variant (falling back from fast to
 * paper to global when local memory is too small). */
static gpk_status make_plan(run *R, unsigned w, plan *p)
{
    gpk_ctx *ctx = R->ctx;
    radix_cl *st = R->st;
    const gpk_opencl_tune *tu = &st->tune;
    const gpk_radix_job *job = R->job;
    const size_t n = R->n;
    const cl_ulong lm = st->dev->local_mem > 256 ? st->dev->local_mem - 256
                                                 : st->dev->local_mem; /* implementations keep a little */
    memset(p, 0, sizeof *p);
    p->w = w;
    int variant = R->pref;

    if (variant == GPK_OCL_ONESWEEP) {
        unsigned I;
        gpk_status s = pick_items(R, &R->k->os_pass[R->kwi][R->vi], &R->k->os_hist[R->kwi], tu->os_items, &I);
        if (s != GPK_OK) return s;
        while (!job->items && I > 32 && os_local(R, I, w) > lm) I /= 2;
        const size_t D = (size_t)1 << w;
        /* Digits of up to 8 bits, counts in 30 bits (32-bit build), whole warps, every
         * digit owned by an item in the per-digit phases; otherwise the
         * fast variant runs. */
        if (w <= 8 && n < ((size_t)1 << 30) && !R->wide && I >= R->k->os_warp && I % R->k->os_warp == 0 &&
            (size_t)I * st->os_bpt >= D && os_local(R, I, w) <= lm) {
            p->variant = GPK_OCL_ONESWEEP;
            p->I = I;
            p->T = I * os_kpt_of(R);
            p->tiles = (unsigned)ceil_div(n, p->T);
            p->G = p->tiles;
            p->npad = n;
            p->hist_len = ceil_div((size_t)R->kw * 8, w) * D;
            p->aux_len = 1;
            p->status_len = (size_t)p->tiles * D + 1;
            return GPK_OK;
        }
        variant = GPK_OCL_FAST;
    }

    if (variant == GPK_OCL_FAST) {
        unsigned I;
        gpk_status s =
            pick_items(R, &R->k->fast_reorder[R->kwi][R->vi], &R->k->fast_count[R->kwi], tu->fast_items, &I);
        if (s != GPK_OK) return s;
        while (!job->items && I > 32 && fast_local(R, I, w) > lm) I /= 2;
        const size_t T = (size_t)I * kpt_of(R);
        if (fast_local(R, I, w) <= lm && T <= 65535) { /* 16-bit rank counters */
            p->variant = GPK_OCL_FAST;
            p->I = I;
            p->T = (unsigned)T;
            p->tiles = (unsigned)ceil_div(n, T);
            const size_t G =
                job->groups ? job->groups : (size_t)tu->fast_groups_per_cu * st->dev->compute_units;
            p->tpg = (unsigned)ceil_div(p->tiles, G);
            p->G = (unsigned)ceil_div(p->tiles, p->tpg);
            p->s = job->scan_split ? job->scan_split : tu->fast_split;
            p->npad = n;
            p->hist_len = ((size_t)1 << w) * p->G;
            p->aux_len = min_sz(p->s, p->hist_len);
            return GPK_OK;
        }
        variant = GPK_OCL_PAPER; /* r too large for the tile arrays */
    }

    unsigned I;
    gpk_status s =
        pick_items(R, &R->k->paper_reorder[R->kwi][R->vi], &R->k->paper_hist[R->kwi], tu->paper_items, &I);
    if (s != GPK_OK) return s;
    const size_t R_ = (size_t)1 << w;
    if (variant == GPK_OCL_PAPER) {
        /* S = 2^r * I * pw bytes must fit: the paper's constraint S < C */
        while (!job->items && I > 1 && R_ * I * R->pw > lm) I /= 2;
        if (R_ * I * R->pw > lm) variant = GPK_OCL_GLOBAL;
    }
    size_t G = job->groups ? job->groups : (size_t)tu->paper_groups_per_cu * st->dev->compute_units;
    if (variant == GPK_OCL_GLOBAL && !job->items && !job->groups) {
        /* H = 2^r * G * I counters in global memory: keep it near 16 Mi
         * counters (64 MB) so that the scan stays cheap. */
        const size_t cap = ((size_t)1 << 24) / R_;
        while ((size_t)I * G > cap && G > 1) G /= 2;
        while ((size_t)I * G > cap && I > 1) I /= 2;
    }
    if (!job->groups && G * I > n) G = ceil_div(n, I); /* no item without a key */
    if (G < 1) G = 1;
    const size_t GI = G * I;
    p->variant = variant;
    p->I = I;
    p->G = (unsigned)G;
    p->npad = ceil_div(n, GI) * GI; /* padded with the largest key, as in the paper */
    p->C = (unsigned)(p->npad / GI);
    p->s = job->scan_split ? job->scan_split : tu->paper_split;
    p->hist_len = R_ * GI;
    p->aux_len = min_sz(p->s, p->hist_len);
    {
        p->transpose = (int)gpk__hook(gpk__test.opencl_transpose, tu->paper_transpose) != 0;
        const size_t tlim = wg_limit(R, &R->k->transpose[0], &R->k->transpose[1]);
        if (tlim < TD * TD) p->transpose = 0;
    }
    if (p->npad > 0xFFFFFFFFu && !R->wide) { /* the padding crosses 2^32: plan again with 64-bit positions */
        s = use_width(R, 1);
        return s != GPK_OK ? s : make_plan(R, w, p);
    }
    if (p->hist_len > 0xFFFFFFFFu)
        return gpk__fail(ctx, GPK_EINVAL,
                         "OpenCL radix sort: G*I = %zu and r = %u give more than 2^32 histogram entries", GI,
                         w);
    return GPK_OK;
}

/* Pass q's digits, bits [shift, shift + bits), the maps its kernels apply
 * on reading and on writing the keys (a kind, or 0; the first pass maps
 * with first, the last unmaps with last), and its buffers: it reads side
 * src and writes the other (values, when there are none: the keys). */
typedef struct pass_io {
    unsigned shift, bits;
    int kin_map, kout_map;
    cl_mem kin, kout, vin, vout;
} pass_io;

static pass_io pass_at(const run *R, unsigned q, int src, int first, int last)
{
    const radix_cl *st = R->st;
    pass_io io;
    io.shift = R->begin + q * R->r;
    io.bits = (R->end - io.shift) < R->r ? (R->end - io.shift) : R->r;
    io.kin_map = q == 0 ? first : 0;
    io.kout_map = q + 1 == R->passes ? last : 0;
    io.kin = st->buf[GPK_OCL_KEYS0 + src].mem;
    io.kout = st->buf[GPK_OCL_KEYS1 - src].mem;
    io.vin = R->vw ? st->buf[GPK_OCL_VALS0 + src].mem : io.kin;
    io.vout = R->vw ? st->buf[GPK_OCL_VALS1 - src].mem : io.kout;
    return io;
}

/* ---- launching -------------------------------------------------------------- */

typedef struct karg {
    size_t size;
    const void *ptr;
} karg;
#define A_MEM(m)             \
    {                        \
        sizeof(cl_mem), &(m) \
    }
#define A_U(x)                                       \
    {                                                \
        sizeof(cl_uint), &(cl_uint) { (cl_uint)(x) } \
    }
#define A_I(x)                                    \
    {                                             \
        sizeof(cl_int), &(cl_int) { (cl_int)(x) } \
    }
/* The arguments every reorder kernel takes first: pass q's keys and values
 * in and out (a pass_io), whether it writes the permutation (sigma, in
 * the first pass), and the histogram h. */
#define A_REORDER_IO(io, q, h) \
    A_MEM((io).kin), A_MEM((io).kout), A_MEM((io).vin), A_MEM((io).vout), A_I(R->sigma && (q) == 0), A_MEM(h)
/* a size or position: pos_t of the build, R->pw bytes */
#define A_P(x)                                                                                  \
    {                                                                                           \
        R->pw, R->pw == 8 ? (const void *)&(cl_ulong){(cl_ulong)(x)} : (const void *)&(cl_uint) \
        {                                                                                       \
            (cl_uint)(x)                                                                        \
        }                                                                                       \
    }
#define A_LOCAL(bytes)        \
    {                         \
        (size_t)(bytes), NULL \
    }
#define NARGS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Room for more profiling events; 0 when the host is out of memory (the
 * launch then goes unprofiled). */
static int grow_profile(radix_cl *st)
{
    const size_t cap = st->prof_cap ? 2 * st->prof_cap : 64;
    cl_event *ev = realloc(st->prof_ev, cap * sizeof *ev);
    if (!ev) return 0;
    st->prof_ev = ev;
    int *ph = realloc(st->prof_phase, cap * sizeof *ph);
    if (!ph) return 0;
    st->prof_phase = ph;
    st->prof_cap = cap;
    return 1;
}

static gpk_status launch(run *R, const gpk_ocl_kernel *k, const karg *a, int na, cl_uint dim,
                         const size_t *gws, const size_t *lws)
{
    char what[96];
    for (int i = 0; i < na; i++) {
        const cl_int e = clSetKernelArg(k->k, (cl_uint)i, a[i].size, a[i].ptr);
        if (e != CL_SUCCESS) {
            snprintf(what, sizeof what, "clSetKernelArg(%s, %d)", k->name, i);
            return gpk__cl_fail(R->ctx, e, what);
        }
    }
    radix_cl *st = R->st;
    cl_event ev = NULL;
    const int prof = st->profile && (st->prof_n < st->prof_cap || grow_profile(st));
    const cl_int e =
        clEnqueueNDRangeKernel(st->dev->queue, k->k, dim, NULL, gws, lws, 0, NULL, prof ? &ev : NULL);
    if (e != CL_SUCCESS) {
        snprintf(what, sizeof what, "clEnqueueNDRangeKernel(%s)", k->name);
        return gpk__cl_fail(R->ctx, e, what);
    }
    if (prof) {
        st->prof_ev[st->prof_n] = ev;
        st->prof_phase[st->prof_n++] = k->phase;
    }
    return GPK_OK;
}

/* Grows cached buffer `slot` to at least `bytes`; when preserve > 0 the
 * first `preserve` bytes of the old buffer are copied to the new one. An
 * allocation failure releases every cached buffer. */
static gpk_status ensure_buf(run *R, int slot, size_t bytes, size_t preserve)
{
    radix_cl *st = R->st;
    if (bytes == 0) bytes = 4;
    if (st->buf[slot].mem && st->buf[slot].bytes >= bytes) return GPK_OK;
    cl_int e;
    cl_mem m = clCreateBuffer(st->dev->context, CL_MEM_READ_WRITE, bytes, NULL, &e);
    if (e != CL_SUCCESS) {
        release_buffers(st);
        if (e == CL_MEM_OBJECT_ALLOCATION_FAILURE || e == CL_OUT_OF_HOST_MEMORY ||
            e == CL_INVALID_BUFFER_SIZE || e == CL_OUT_OF_RESOURCES)
            return gpk__fail(R->ctx, GPK_ENOMEM, "OpenCL clCreateBuffer(%zu bytes) failed on %s: %s (%d)",
                             bytes, st->dev->name, gpk__cl_error_name(e), (int)e);
        return gpk__cl_fail(R->ctx, e, "clCreateBuffer");
    }
    if (preserve && st->buf[slot].mem) {
        e = clEnqueueCopyBuffer(st->dev->queue, st->buf[slot].mem, m, 0, 0, preserve, 0, NULL, NULL);
        if (e != CL_SUCCESS) {
            clReleaseMemObject(m);
            return gpk__cl_fail(R->ctx, e, "clEnqueueCopyBuffer");
        }
    }
    if (st->buf[slot].mem) clReleaseMemObject(st->buf[slot].mem); /* freed once the copy is done */
    st->buf[slot].mem = m;
    st->buf[slot].bytes = bytes;
    return GPK_OK;
}

/* Device memory the plan needs; GPK_ENOMEM with the sizes when it cannot
 * fit. extra: bytes held besides (the bench's copy of the input). */
static gpk_status check_memory(run *R, const plan *p, size_t extra)
{
    radix_cl *st = R->st;
    const size_t kb = p->npad * R->kw, vb = p->npad * R->vw, hb = p->hist_len * R->pw;
    const size_t biggest = kb > vb ? (kb > hb ? kb : hb) : (vb > hb ? vb : hb);
    if (biggest > st->dev->max_alloc)
        return gpk__fail(R->ctx, GPK_ENOMEM,
                         "sorting %zu keys on %s needs a %zu-byte buffer, more than its largest allocation "
                         "(%llu bytes)",
                         R->n, st->dev->name, biggest, (unsigned long long)st->dev->max_alloc);
    const double total = 2.0 * kb + 2.0 * vb + hb + (double)R->pw * p->aux_len + 4.0 * p->status_len + extra;
    if (total > (double)st->dev->global_mem)
        return gpk__fail(R->ctx, GPK_ENOMEM,
                         "sorting %zu keys on %s needs %.2f GiB of device memory, it has %.2f GiB", R->n,
                         st->dev->name, total / 1073741824.0, (double)st->dev->global_mem / 1073741824.0);
    return GPK_OK;
}

/* ---- the phases ------------------------------------------------------------ */

/* b = 0: [begin, end) from the AND and OR of the mapped keys. */
static gpk_status detect_range(run *R)
{
    radix_cl *st = R->st;
    const gpk_ocl_kernel *k = &R->k->reduce[R->kwi];
    /* CPUs: one item per group sweeps a contiguous chunk; GPUs: 256 */
    size_t I = (st->dev->type & CL_DEVICE_TYPE_CPU) ? 1 : 256;
    while (I > 1 && (I > k->wg || I > st->dev->max_wg)) I /= 2;
    size_t G = min_sz((size_t)st->dev->compute_units * ((st->dev->type & CL_DEVICE_TYPE_CPU) ? 4 : 16),
                      ceil_div(R->n, I));
    if (G < 1) G = 1;
    const size_t chunk = ceil_div(R->n, G);
    gpk_status s = ensure_buf(R, GPK_OCL_RED, 2 * G * R->kw, 0);
    if (s != GPK_OK) return s;
    {
        karg a[] = {A_MEM(st->buf[GPK_OCL_KEYS0].mem), A_P(R->n),          A_P(chunk),        A_I(R->kind),
                    A_MEM(st->buf[GPK_OCL_RED].mem),   A_LOCAL(I * R->kw), A_LOCAL(I * R->kw)};
        const size_t gws = G * I;
        if ((s = launch(R, k, a, NARGS(a), 1, &gws, &I)) != GPK_OK) return s;
    }
    void *host = malloc(2 * G * R->kw);
    if (!host) return gpk__fail(R->ctx, GPK_ENOMEM, "out of host memory");
    const cl_int e = clEnqueueReadBuffer(st->dev->queue, st->buf[GPK_OCL_RED].mem, CL_TRUE, 0, 2 * G * R->kw,
                                         host, 0, NULL, NULL);
    if (e != CL_SUCCESS) {
        free(host);
        return gpk__cl_fail(R->ctx, e, "clEnqueueReadBuffer(reduction)");
    }
    uint64_t and_all, or_all = 0;
    if (R->kw == 4) {
        const uint32_t *v = host;
        uint32_t a = 0xFFFFFFFFu, o = 0;
        for (size_t g = 0; g < G; g++) {
            a &= v[2 * g];
            o |= v[2 * g + 1];
        }
        and_all = a;
        or_all = o;
    } else {
        const uint64_t *v = host;
        and_all = ~(uint64_t)0;
        for (size_t g = 0; g < G; g++) {
            and_all &= v[2 * g];
            or_all |= v[2 * g + 1];
        }
    }
    free(host);
    gpk__radix_range_from_masks(and_all, or_all, &R->begin, &R->end);
    return GPK_OK;
}

/* Exclusive scan of H[0..len) in place, split in s parts (paper 3.2.2). */
static gpk_status scan_hist(run *R, size_t len)
{
    radix_cl *st = R->st;
    gpk_status s;
    size_t SW = 256;
    const gpk_ocl_kernels *ks = R->k;
    while (SW > 1 && (SW > ks->scan_parts.wg || SW > ks->scan_add.wg || SW > st->dev->max_wg)) SW /= 2;
    const size_t part = ceil_div(len, R->p.s ? R->p.s : 1);
    const size_t nparts = ceil_div(len, part);
    cl_mem h = st->buf[GPK_OCL_HIST].mem, aux = st->buf[GPK_OCL_AUX].mem;
    {
        karg a[] = {A_MEM(h), A_MEM(aux), A_U(len), A_U(part), A_I(nparts > 1), A_LOCAL(2 * SW * R->pw)};
        const size_t gws = nparts * SW;
        if ((s = launch(R, &ks->scan_parts, a, NARGS(a), 1, &gws, &SW)) != GPK_OK) return s;
    }
    if (nparts > 1) {
        karg a[] = {A_MEM(aux), A_MEM(aux), A_U(nparts), A_U(nparts), A_I(0), A_LOCAL(2 * SW * R->pw)};
        if ((s = launch(R, &ks->scan_parts, a, NARGS(a), 1, &SW, &SW)) != GPK_OK) return s;
        karg b[] = {A_MEM(h), A_MEM(aux), A_U(len), A_U(part)};
        const size_t gws = nparts * SW;
        if ((s = launch(R, &ks->scan_add, b, NARGS(b), 1, &gws, &SW)) != GPK_OK) return s;
    }
    return GPK_OK;
}

static gpk_status run_fast(run *R)
{
    radix_cl *st = R->st;
    const plan *p = &R->p;
    gpk_status s;
    int src = 0;
    const size_t I = p->I, gws = (size_t)p->G * p->I;
    const size_t T = p->T;
    const size_t wide = R->vw > R->kw ? R->vw : R->kw;
    for (unsigned q = 0; q < R->passes; q++) {
        const pass_io io = pass_at(R, q, src, R->kind, R->kind);
        const size_t Rq = (size_t)1 << io.bits;
        cl_mem h = st->buf[GPK_OCL_HIST].mem;
        const unsigned nrep = fast_nrep(io.bits);
        {
            karg a[] = {A_MEM(io.kin), A_MEM(h),     A_P(R->n),       A_U(p->tiles), A_U(p->tpg),
                        A_U(io.shift), A_U(io.bits), A_I(io.kin_map), A_U(nrep),     A_LOCAL(Rq * nrep * 4)};
            if ((s = launch(R, &R->k->fast_count[R->kwi], a, NARGS(a), 1, &gws, &I)) != GPK_OK) return s;
        }
        if ((s = scan_hist(R, Rq * p->G)) != GPK_OK) return s;
        {
            karg a[] = {A_REORDER_IO(io, q, h),
                        A_P(R->n),
                        A_U(p->tiles),
                        A_U(p->tpg),
                        A_U(io.shift),
                        A_U(io.bits),
                        A_I(io.kin_map),
                        A_I(io.kout_map),
                        A_LOCAL((PADK(T - 1) + 1) * wide),
                        A_LOCAL(R->vw ? ((PADK(T - 1) + 1) * 2 + 3) / 4 * 4 : 4),
                        A_LOCAL(cnt_words(I, io.bits) * 4),
                        A_LOCAL(2 * I * 4),
                        A_LOCAL(Rq * R->pw),
                        A_LOCAL(Rq * 4)};
            if ((s = launch(R, &R->k->fast_reorder[R->kwi][R->vi], a, NARGS(a), 1, &gws, &I)) != GPK_OK)
                return s;
        }
        src ^= 1;
    }
    R->res = src;
    return GPK_OK;
}

/* Onesweep: zeroed histograms, one read counts the digits of every pass,
 * scan_parts turns each pass's row into digit bases (one group a row), then
 * one os_pass launch per pass, one group per tile. */
static gpk_status run_onesweep(run *R)
{
    radix_cl *st = R->st;
    const plan *p = &R->p;
    gpk_status s;
    cl_int e;
    const cl_uint zero = 0;
    const size_t stride = (size_t)1 << p->w, I = p->I;
    cl_mem h = st->buf[GPK_OCL_HIST].mem, status = st->buf[GPK_OCL_STATUS].mem;
    e = clEnqueueFillBuffer(st->dev->queue, h, &zero, sizeof zero, 0, R->passes * stride * 4, 0, NULL, NULL);
    if (e != CL_SUCCESS) return gpk__cl_fail(R->ctx, e, "clEnqueueFillBuffer(histograms)");
    {
        const gpk_ocl_kernel *k = &R->k->os_hist[R->kwi];
        size_t HI = 256;
        while (HI > 1 && (HI > k->wg || HI > st->dev->max_wg)) HI /= 2;
        size_t G = min_sz((size_t)st->dev->compute_units * 8, ceil_div(R->n, HI));
        if (G < 1) G = 1;
        const size_t gws = G * HI;
        karg a[] = {A_MEM(st->buf[GPK_OCL_KEYS0].mem),
                    A_MEM(h),
                    A_U(R->n),
                    A_I(R->kind),
                    A_U(R->begin),
                    A_U(R->r),
                    A_U(R->end),
                    A_U(stride),
                    A_LOCAL(R->passes * stride * 4)};
        if ((s = launch(R, k, a, NARGS(a), 1, &gws, &HI)) != GPK_OK) return s;
    }
    {
        size_t SW = 256;
        while (SW > 1 && (SW > R->k->scan_parts.wg || SW > st->dev->max_wg)) SW /= 2;
        const size_t gws = R->passes * SW;
        karg a[] = {A_MEM(h),    A_MEM(h), A_U(R->passes * stride),
                    A_U(stride), A_I(0),   A_LOCAL(2 * SW * R->pw)};
        if ((s = launch(R, &R->k->scan_parts, a, NARGS(a), 1, &gws, &SW)) != GPK_OK) return s;
    }
    const size_t wide_k = ((size_t)p->T * R->kw + 7) / 8 * 8;
    int src = 0;
    for (unsigned q = 0; q < R->passes; q++) {
        const pass_io io = pass_at(R, q, src, R->kind, R->kind);
        const size_t D = (size_t)1 << io.bits;
        /* the pass's look-back words and, after them, its tile counter */
        e = clEnqueueFillBuffer(st->dev->queue, status, &zero, sizeof zero, 0, ((size_t)p->tiles * D + 1) * 4,
                                0, NULL, NULL);
        if (e != CL_SUCCESS) return gpk__cl_fail(R->ctx, e, "clEnqueueFillBuffer(look-back words)");
        const size_t gws = (size_t)p->tiles * I;
        karg a[] = {A_REORDER_IO(io, q, h),
                    A_U(q * stride),
                    A_MEM(status),
                    A_U(R->n),
                    A_U(io.shift),
                    A_U(io.bits),
                    A_I(io.kin_map),
                    A_I(io.kout_map),
                    A_LOCAL((I / R->k->os_warp) * stride * 4),
                    A_LOCAL(wide_k),
                    A_LOCAL(R->vw ? (size_t)p->T * R->vw : 4),
                    A_LOCAL(stride * 4),
                    A_LOCAL(2 * I * 4)};
        if ((s = launch(R, &R->k->os_pass[R->kwi][R->vi], a, NARGS(a), 1, &gws, &I)) != GPK_OK) return s;
        src ^= 1;
    }
    R->res = src;
    return GPK_OK;
}

static gpk_status transpose(run *R, cl_mem in, cl_mem out, unsigned width, size_t rows, size_t cols, int kmap)
{
    const size_t lws[2] = {TD, TD};
    const size_t gws[2] = {ceil_div(cols, TD) * TD, ceil_div(rows, TD) * TD};
    karg a[] = {A_MEM(in), A_MEM(out), A_U(rows), A_U(cols), A_I(kmap), A_LOCAL(TD * (TD + 1) * width)};
    return launch(R, &R->k->transpose[width == 8], a, NARGS(a), 2, gws, lws);
}

static gpk_status run_paper(run *R)
{
    radix_cl *st = R->st;
    const plan *p = &R->p;
    gpk_status s;
    cl_int e;
    const size_t I = p->I, GI = (size_t)p->G * p->I;
    const int ghist = p->variant == GPK_OCL_GLOBAL;
    int src = 0;

    if (p->npad > R->n) {
        /* the paper's padding: keys that map to the largest key go last */
        const uint32_t pad32 = gpk__unmap_u32(R->job->key_type, 0xFFFFFFFFu);
        const uint64_t pad64 = gpk__unmap_u64(R->job->key_type, ~(uint64_t)0);
        const void *pat = R->kw == 4 ? (const void *)&pad32 : (const void *)&pad64;
        e = clEnqueueFillBuffer(st->dev->queue, st->buf[GPK_OCL_KEYS0].mem, pat, R->kw, R->n * R->kw,
                                (p->npad - R->n) * R->kw, 0, NULL, NULL);
        if (e != CL_SUCCESS) return gpk__cl_fail(R->ctx, e, "clEnqueueFillBuffer(padding)");
    }
    int kin_first = R->kind, kout_last = R->kind;
    if (p->transpose) {
        /* rows of the (G*I) x C matrix become columns: item reads coalesce */
        if ((s = transpose(R, st->buf[GPK_OCL_KEYS0].mem, st->buf[GPK_OCL_KEYS1].mem, R->kw, GI, p->C,
                           R->kind)) != GPK_OK)
            return s;
        if (R->vw && !R->sigma &&
            (s = transpose(R, st->buf[GPK_OCL_VALS0].mem, st->buf[GPK_OCL_VALS1].mem, R->vw, GI, p->C, 0)) !=
                GPK_OK)
            return s;
        src = 1;
        kin_first = kout_last = 0; /* the transpositions map and unmap */
    }
    for (unsigned q = 0; q < R->passes; q++) {
        const pass_io io = pass_at(R, q, src, kin_first, kout_last);
        const size_t Rq = (size_t)1 << io.bits;
        cl_mem h = st->buf[GPK_OCL_HIST].mem;
        const size_t lbytes = ghist ? 4 : Rq * I * R->pw;
        if (ghist) {
            const cl_ulong zero = 0;
            e = clEnqueueFillBuffer(st->dev->queue, h, &zero, R->pw, 0, Rq * GI * R->pw, 0, NULL, NULL);
            if (e != CL_SUCCESS) return gpk__cl_fail(R->ctx, e, "clEnqueueFillBuffer(histogram)");
        }
        {
            karg a[] = {A_MEM(io.kin),   A_MEM(h),          A_U(p->C),  A_U(io.shift),  A_U(io.bits),
                        A_I(io.kin_map), A_I(p->transpose), A_I(ghist), A_LOCAL(lbytes)};
            if ((s = launch(R, &R->k->paper_hist[R->kwi], a, NARGS(a), 1, &GI, &I)) != GPK_OK) return s;
        }
        if ((s = scan_hist(R, Rq * GI)) != GPK_OK) return s;
        {
            karg a[] = {A_REORDER_IO(io, q, h), A_U(p->C),       A_U(io.shift),
                        A_U(io.bits),           A_I(io.kin_map), A_I(io.kout_map),
                        A_I(p->transpose),      A_I(ghist),      A_LOCAL(lbytes)};
            if ((s = launch(R, &R->k->paper_reorder[R->kwi][R->vi], a, NARGS(a), 1, &GI, &I)) != GPK_OK)
                return s;
        }
        src ^= 1;
    }
    if (p->transpose) {
        if ((s = transpose(R, st->buf[GPK_OCL_KEYS0 + src].mem, st->buf[GPK_OCL_KEYS1 - src].mem, R->kw, p->C,
                           GI, -R->kind)) != GPK_OK)
            return s;
        if (R->vw &&
            (s = transpose(R, st->buf[GPK_OCL_VALS0 + src].mem, st->buf[GPK_OCL_VALS1 - src].mem, R->vw, p->C,
                           GI, 0)) != GPK_OK)
            return s;
        src ^= 1;
    }
    R->res = src;
    return GPK_OK;
}

/* Sorts what KEYS0 (and VALS0) hold: the caller's n keys in raw form.
 * Leaves the result in slot R->res; R->passes == 0 means the keys were
 * already in order (all equal on the sorted bits). */
static gpk_status sort_device(run *R)
{
    gpk_status s;
    const gpk_radix_job *job = R->job;
    R->res = 0;
    if (job->key_bits) {
        R->begin = 0;
        R->end = job->key_bits;
    } else if ((s = detect_range(R)) != GPK_OK) {
        return s;
    }
    const unsigned span = R->end - R->begin;
    R->passes = (span + R->r - 1) / R->r;
    if (R->passes == 0) return GPK_OK;
    if ((s = make_plan(R, span < R->r ? span : R->r, &R->p)) != GPK_OK) return s;
    const plan *p = &R->p;
    if ((s = check_memory(R, p, 0)) != GPK_OK) return s;
    /* slot 0 already holds the input: grow it keeping its contents */
    if ((s = ensure_buf(R, GPK_OCL_KEYS0, p->npad * R->kw, R->n * R->kw)) != GPK_OK) return s;
    if ((s = ensure_buf(R, GPK_OCL_KEYS1, p->npad * R->kw, 0)) != GPK_OK) return s;
    if (R->vw) {
        if ((s = ensure_buf(R, GPK_OCL_VALS0, p->npad * R->vw, R->sigma ? 0 : R->n * R->vw)) != GPK_OK)
            return s;
        if ((s = ensure_buf(R, GPK_OCL_VALS1, p->npad * R->vw, 0)) != GPK_OK) return s;
    }
    if ((s = ensure_buf(R, GPK_OCL_HIST, p->hist_len * R->pw, 0)) != GPK_OK) return s;
    if ((s = ensure_buf(R, GPK_OCL_AUX, p->aux_len * R->pw, 0)) != GPK_OK) return s;
    if (p->variant == GPK_OCL_ONESWEEP && (s = ensure_buf(R, GPK_OCL_STATUS, p->status_len * 4, 0)) != GPK_OK)
        return s;
    static const char *const path_name[] = {"opencl-fast", "opencl-paper", "opencl-global",
                                            "opencl-onesweep"};
    R->ctx->last_sort_path = p->variant != GPK_OCL_ONESWEEP || R->k->os_warp == 1 ? path_name[p->variant]
        : R->k->os_emulated                                                       ? "opencl-onesweep-emu"
                                                                                  : "opencl-onesweep-ptx";
    return p->variant == GPK_OCL_ONESWEEP ? run_onesweep(R)
        : p->variant == GPK_OCL_FAST      ? run_fast(R)
                                          : run_paper(R);
}

/* ---- entry points -------------------------------------------------------- */

static gpk_status run_init(run *R, gpk_ctx *ctx, const gpk_radix_job *job)
{
    memset(R, 0, sizeof *R);
    R->ctx = ctx;
    R->job = job;
    R->st = ctx ? state_of(ctx) : NULL;
    if (!R->st) return gpk__fail(ctx, GPK_EINVAL, "the context has no OpenCL device");
    if (!job->keys || job->n < 2)
        return gpk__fail(ctx, GPK_EINVAL, "OpenCL radix sort: bad job (n = %zu)", job->n);
    R->n = job->n;
    /* the 64-bit build past 2^32 keys (tests move the limit) */
    const long long wf = gpk__hook(gpk__test.opencl_wide_from, 0xFFFFFFFFll);
    const size_t wide_from = wf >= 0 ? (size_t)wf : 0xFFFFFFFFu;
    gpk_status s = use_width(R, R->n > wide_from);
    if (s != GPK_OK) return s;
    R->kw = job->key_width;
    if (R->kw != 4 && R->kw != 8) return gpk__fail(ctx, GPK_EINVAL, "key width %u", R->kw);
    R->kwi = R->kw == 8;
    R->kind = gpk_key_kind(job->key_type); /* as the kernels take it (key_traits.h) */
    R->sigma = job->sigma != NULL && job->values == NULL;
    R->vw = job->values ? job->value_width : (R->sigma ? job->sigma_width : 0);
    if (R->vw != 0 && R->vw != 4 && R->vw != 8) return gpk__fail(ctx, GPK_EINVAL, "value width %u", R->vw);
    R->vi = R->vw == 0 ? 0 : (R->vw == 4 ? 1 : 2);
    if (job->key_bits > R->kw * 8) return gpk__fail(ctx, GPK_EINVAL, "key_bits = %u", job->key_bits);
    if (job->radix_bits > 16) return gpk__fail(ctx, GPK_EINVAL, "radix_bits = %u (1..16)", job->radix_bits);
    const gpk_opencl_tune *tu = &R->st->tune;
    R->pref = variant_or(tu->os_default && R->k->os_warp > 1 && !R->k->os_emulated ? GPK_OCL_ONESWEEP
                                                                                   : tu->variant);
    R->r = job->radix_bits
        ? job->radix_bits
        : (R->pref == GPK_OCL_FAST || R->pref == GPK_OCL_ONESWEEP ? tu->fast_r : tu->paper_r);
    return GPK_OK;
}

/* Memory check before anything is uploaded, for the widest passes. */
static gpk_status precheck(run *R, size_t extra)
{
    plan p;
    const unsigned span = R->job->key_bits ? R->job->key_bits : R->kw * 8;
    gpk_status s = make_plan(R, span < R->r ? span : R->r, &p);
    if (s != GPK_OK) return s;
    return check_memory(R, &p, extra);
}

static gpk_status upload(run *R, cl_mem keys, cl_mem vals)
{
    const gpk_radix_job *job = R->job;
    cl_int e =
        clEnqueueWriteBuffer(R->st->dev->queue, keys, CL_FALSE, 0, R->n * R->kw, job->keys, 0, NULL, NULL);
    if (e != CL_SUCCESS) return gpk__cl_fail(R->ctx, e, "clEnqueueWriteBuffer(keys)");
    if (job->values) {
        e = clEnqueueWriteBuffer(R->st->dev->queue, vals, CL_FALSE, 0, R->n * R->vw, job->values, 0, NULL,
                                 NULL);
        if (e != CL_SUCCESS) return gpk__cl_fail(R->ctx, e, "clEnqueueWriteBuffer(values)");
    }
    return GPK_OK;
}

/* Device work is complete when this is called: read the results into the
 * caller's arrays. */
static gpk_status download(run *R)
{
    const gpk_radix_job *job = R->job;
    radix_cl *st = R->st;
    cl_int e = clFinish(st->dev->queue);
    if (e != CL_SUCCESS) return gpk__cl_fail(R->ctx, e, "clFinish");
    profile_collect(st);
    if (R->passes == 0) {
        /* keys already in order: they stay as they are */
        if (R->sigma) gpk__sigma_iota(job->sigma, job->sigma_width, 0, R->n);
        return GPK_OK;
    }
    e = clEnqueueReadBuffer(st->dev->queue, st->buf[GPK_OCL_KEYS0 + R->res].mem, CL_TRUE, 0, R->n * R->kw,
                            job->keys, 0, NULL, NULL);
    if (e != CL_SUCCESS) return gpk__cl_fail(R->ctx, e, "clEnqueueReadBuffer(keys)");
    if (R->vw) {
        void *dst = R->sigma ? (void *)job->sigma : job->values;
        e = clEnqueueReadBuffer(st->dev->queue, st->buf[GPK_OCL_VALS0 + R->res].mem, CL_TRUE, 0, R->n * R->vw,
                                dst, 0, NULL, NULL);
        if (e != CL_SUCCESS) return gpk__cl_fail(R->ctx, e, "clEnqueueReadBuffer(values)");
    }
    return GPK_OK;
}

gpk_status gpk__radix_sort_opencl(gpk_ctx *ctx, const gpk_radix_job *job)
{
    run R;
    gpk_status s = run_init(&R, ctx, job);
    if (s != GPK_OK) return s;
    if ((s = precheck(&R, 0)) != GPK_OK) return s;
    if ((s = ensure_buf(&R, GPK_OCL_KEYS0, R.n * R.kw, 0)) != GPK_OK) return s;
    if (job->values && (s = ensure_buf(&R, GPK_OCL_VALS0, R.n * R.vw, 0)) != GPK_OK) return s;
    s = upload(&R, R.st->buf[GPK_OCL_KEYS0].mem, job->values ? R.st->buf[GPK_OCL_VALS0].mem : NULL);
    if (s == GPK_OK) s = sort_device(&R);
    if (s == GPK_OK) s = download(&R);
    /* on failure, wait for what was queued: the uploads read the caller's arrays */
    if (s != GPK_OK) {
        clFinish(R.st->dev->queue);
        profile_collect(R.st);
    }
    return s;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

gpk_status gpk__radix_bench_opencl(gpk_ctx *ctx, const gpk_radix_job *job, int reps, double *ms)
{
    run R;
    gpk_status s = run_init(&R, ctx, job);
    if (s != GPK_OK) return s;
    if (reps < 1 || !ms) return gpk__fail(ctx, GPK_EINVAL, "bench: reps = %d", reps);
    radix_cl *st = R.st;
    const size_t kb = R.n * R.kw, vb = job->values ? R.n * R.vw : 0;
    if ((s = precheck(&R, kb + vb)) != GPK_OK) return s;
    double *times = malloc((size_t)reps * sizeof *times);
    if (!times) return gpk__fail(ctx, GPK_ENOMEM, "out of host memory");
    cl_mem orig_k = NULL, orig_v = NULL;
    cl_int e;
    orig_k = clCreateBuffer(st->dev->context, CL_MEM_READ_ONLY, kb, NULL, &e);
    if (e != CL_SUCCESS) {
        orig_k = NULL;
        s = gpk__cl_fail(ctx, e, "clCreateBuffer(bench keys)");
        goto done;
    }
    if (vb) {
        orig_v = clCreateBuffer(st->dev->context, CL_MEM_READ_ONLY, vb, NULL, &e);
        if (e != CL_SUCCESS) {
            orig_v = NULL;
            s = gpk__cl_fail(ctx, e, "clCreateBuffer(bench values)");
            goto done;
        }
    }
    if ((s = upload(&R, orig_k, orig_v)) != GPK_OK) goto done;
    for (int rep = 0; rep < reps; rep++) {
        /* every rep sorts the same unsorted input; the copy is not timed */
        if ((s = ensure_buf(&R, GPK_OCL_KEYS0, kb, 0)) != GPK_OK) goto done;
        if (vb && (s = ensure_buf(&R, GPK_OCL_VALS0, vb, 0)) != GPK_OK) goto done;
        e = clEnqueueCopyBuffer(st->dev->queue, orig_k, st->buf[GPK_OCL_KEYS0].mem, 0, 0, kb, 0, NULL, NULL);
        if (e == CL_SUCCESS && vb)
            e = clEnqueueCopyBuffer(st->dev->queue, orig_v, st->buf[GPK_OCL_VALS0].mem, 0, 0, vb, 0, NULL,
                                    NULL);
        if (e != CL_SUCCESS) {
            s = gpk__cl_fail(ctx, e, "clEnqueueCopyBuffer(bench input)");
            goto done;
        }
        if ((e = clFinish(st->dev->queue)) != CL_SUCCESS) {
            s = gpk__cl_fail(ctx, e, "clFinish");
            goto done;
        }
        const double t0 = now_ms();
        if ((s = sort_device(&R)) != GPK_OK) goto done;
        if ((e = clFinish(st->dev->queue)) != CL_SUCCESS) {
            s = gpk__cl_fail(ctx, e, "clFinish");
            goto done;
        }
        times[rep] = now_ms() - t0;
        profile_collect(st);
    }
    qsort(times, (size_t)reps, sizeof *times, cmp_double);
    *ms = reps % 2 ? times[reps / 2] : 0.5 * (times[reps / 2 - 1] + times[reps / 2]);
    s = download(&R);
done:
    clFinish(st->dev->queue);
    profile_collect(st);
    if (orig_k) clReleaseMemObject(orig_k);
    if (orig_v) clReleaseMemObject(orig_v);
    free(times);
    return s;
}
