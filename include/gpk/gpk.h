/* gpk: GPU parallel kit. Umbrella header: version, status codes, contexts.
 *
 * Thread safety: a gpk_ctx is used by one thread at a time. Create one
 * context per thread; distinct contexts may be created and used
 * concurrently (backend discovery runs once per process).
 * The library never prints and never exits: every call returns a
 * gpk_status, and gpk_last_error(ctx) holds a message for the last failure.
 */
#ifndef GPK_GPK_H
#define GPK_GPK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GPK_VERSION_MAJOR 0
#define GPK_VERSION_MINOR 1
#define GPK_VERSION_PATCH 0
#define GPK_VERSION_NUMBER (GPK_VERSION_MAJOR * 10000 + GPK_VERSION_MINOR * 100 + GPK_VERSION_PATCH)
#define GPK_VERSION_STRING "0.1.0"

#if defined(_WIN32) && defined(GPK_SHARED_BUILD)
#define GPK_API __declspec(dllexport)
#elif defined(__GNUC__)
#define GPK_API __attribute__((visibility("default")))
#else
#define GPK_API
#endif

typedef enum gpk_status {
    GPK_OK = 0,
    GPK_EINVAL = 1,       /* bad argument: NULL pointer, value out of range */
    GPK_ENOMEM = 2,       /* host or device memory exhausted, or input too large for it */
    GPK_EDEVICE = 3,      /* a CUDA or OpenCL call failed */
    GPK_EUNSUPPORTED = 4, /* backend or type not available in this build or on this device */
    GPK_EFORMAT = 5,      /* malformed input file */
    GPK_EIO = 6,          /* file could not be read or written */
    GPK_EFULL = 7         /* a bounded task queue or deque is full: raise its capacity */
} gpk_status;

typedef enum gpk_backend {
    GPK_BACKEND_AUTO = 0, /* CUDA if a device is usable, else CPU; GPK_BACKEND env overrides */
    GPK_BACKEND_CPU = 1,
    GPK_BACKEND_CUDA = 2,
    GPK_BACKEND_OPENCL = 3
} gpk_backend;

/* Element types. Keys of every type sort in their natural order. */
typedef enum gpk_type {
    GPK_U32 = 0,
    GPK_I32 = 1,
    GPK_F32 = 2,
    GPK_U64 = 3,
    GPK_I64 = 4,
    GPK_F64 = 5
} gpk_type;

typedef struct gpk_ctx gpk_ctx;

/* Most devices one context spans. */
#define GPK_MAX_DEVICES 16

typedef struct gpk_ctx_opts {
    gpk_backend backend; /* GPK_BACKEND_AUTO: see above */
    int device;          /* CUDA device or OpenCL device index; -1: GPK_DEVICE env, else 0 */
    int threads;         /* CPU threads; 0: GPK_THREADS env (a count, else EINVAL), else all
                             cores; at most 4 per core; ENOMEM when they cannot be created */
    /* Several devices (multi-GPU sorts, gpk_sort_shards_*): n_devices
     * indices in devices[], 1..GPK_MAX_DEVICES of them; a device may repeat
     * (the same GPU twice, for tests). n_devices 0: the GPK_DEVICES
     * environment variable ("0,1"), else the one `device`. devices[0] is
     * the context's first device, where every single-device call runs.
     * CUDA: every device must exist (EINVAL otherwise); peer access is
     * enabled between them where the hardware allows it. CPU: K "virtual
     * devices", host shards that run the multi-device driver, for tests.
     * OpenCL: one device only (EUNSUPPORTED otherwise). */
    int n_devices;
    const int *devices;
} gpk_ctx_opts;
#define GPK_CTX_OPTS_INIT                \
    {                                    \
        GPK_BACKEND_AUTO, -1, 0, 0, NULL \
    }

typedef struct gpk_ctx_info {
    gpk_backend backend;
    char device_name[256];        /* GPU name, OpenCL device name, or CPU model */
    char platform[128];           /* "CUDA 13.0", OpenCL platform name, or "CPU (OpenMP)" */
    unsigned compute_units;       /* multiprocessors, OpenCL compute units, or CPU threads */
    uint64_t memory_bytes;        /* device global memory; for the CPU backend the host memory the
                               process may use (its control group's limit where smaller) */
    unsigned threads;             /* CPU threads this context uses */
    unsigned n_devices;           /* devices the context spans (1 unless opened with several) */
    int devices[GPK_MAX_DEVICES]; /* their indices; devices[0] is the one described above */
} gpk_ctx_info;

GPK_API const char *gpk_version(void);
GPK_API const char *gpk_status_string(gpk_status s);
GPK_API const char *gpk_backend_name(gpk_backend b);
/* Parses "auto", "cpu", "cuda", "opencl"; GPK_EINVAL otherwise. */
GPK_API gpk_status gpk_backend_parse(const char *name, gpk_backend *out);
/* The backends this library knows, built in or not, in the order gpk info
 * lists them: gpk_backend_at(i) for i in [0, gpk_backend_count()), AUTO
 * outside that range (AUTO itself is not in the list). A program that
 * lists or validates backends reads them here, so a new backend needs no
 * change in it. */
GPK_API int gpk_backend_count(void);
GPK_API gpk_backend gpk_backend_at(int i);
/* Non-zero when backend b is built into this library (a device may still
 * be missing: gpk_backend_available); 0 for AUTO and unknown values. */
GPK_API int gpk_backend_built(gpk_backend b);
GPK_API size_t gpk_type_size(gpk_type t);
GPK_API const char *gpk_type_name(gpk_type t);
/* Parses "u32", "i32", "f32", "u64", "i64", "f64"; GPK_EINVAL otherwise. */
GPK_API gpk_status gpk_type_parse(const char *name, gpk_type *out);

/* Non-zero when this build contains the backend and a device for it is usable now. */
GPK_API int gpk_backend_available(gpk_backend b);
/* How many devices of backend b this build can use now: CUDA GPUs, OpenCL
 * devices of the chosen platform, 1 for the CPU and for AUTO without a GPU
 * (AUTO: the CUDA count where CUDA is usable); 0 where the backend is not
 * built or has no device. For spreading ranks or threads over the GPUs of
 * a node (device = local rank % count). */
GPK_API int gpk_device_count(gpk_backend b);

/* The bytes of host memory this process may use: the machine's memory or,
 * where smaller, the limit of its control group (v1 or v2, every ancestor
 * group included), so that a program in a container sizes its buffers by
 * what the container allows. *from_cgroup (may be NULL) is set to 1 when
 * the control group's limit is the smaller. */
GPK_API uint64_t gpk_host_memory_limit(int *from_cgroup);

GPK_API gpk_status gpk_ctx_create(gpk_ctx **ctx, gpk_backend backend);
GPK_API gpk_status gpk_ctx_create_ex(gpk_ctx **ctx, const gpk_ctx_opts *opts);
GPK_API void gpk_ctx_destroy(gpk_ctx *ctx);
GPK_API gpk_status gpk_ctx_info_get(const gpk_ctx *ctx, gpk_ctx_info *info);
GPK_API gpk_backend gpk_ctx_backend(const gpk_ctx *ctx);
/* Sets the CPU thread count (0 = all cores). */
GPK_API gpk_status gpk_ctx_set_threads(gpk_ctx *ctx, int threads);

/* Caps the device memory a host-API sort (gpk_sort_keys, _pairs, _perm,
 * _records) may use, in bytes; 0 (the default) = no cap (CUDA: the free
 * memory). An input whose in-memory sort needs more is sorted out of core:
 * sorted runs that fit, then merged (docs/guide.md, "Out-of-core sorts").
 * On a CPU context a non-zero budget runs the same out-of-core driver with
 * the CPU sort standing in for the device, for tests. The GPK_DEVICE_BUDGET
 * environment variable (bytes, with an optional K, M or G suffix: powers of
 * 1024) sets it when a context is created. */
GPK_API gpk_status gpk_ctx_set_device_budget(gpk_ctx *ctx, size_t bytes);

/* Gives back the memory ctx keeps between calls for the out-of-core sort:
 * its extra host buffer (as large as the largest input it sorted, page-
 * locked on CUDA). The next out-of-core sort allocates it again. */
GPK_API void gpk_ctx_trim(gpk_ctx *ctx);

/* Page-locks the caller's host memory [p, p + bytes) for the transfers of
 * the host-API sorts (CUDA: cudaHostRegister, portable to every device),
 * so that they move it by DMA instead of copying it through staging
 * buffers, which made large out-of-core sorts faster (docs/perf/radix.md).
 * Locking costs time once, and locked memory stays resident; unlock it with gpk_host_unlock(ctx, p)
 * before freeing it. On backends without such transfers (CPU, OpenCL) both
 * calls do nothing and return GPK_OK. */
GPK_API gpk_status gpk_host_lock(gpk_ctx *ctx, void *p, size_t bytes);
GPK_API gpk_status gpk_host_unlock(gpk_ctx *ctx, void *p);

/* Progress of long host-API sorts (the out-of-core sort): fn(user, done)
 * is called on the calling thread with the fraction done, 0 < done <= 1,
 * as the work completes; fn must not call gpk on ctx. NULL: none. */
typedef void (*gpk_progress_fn)(void *user, double done);
GPK_API gpk_status gpk_ctx_set_progress(gpk_ctx *ctx, gpk_progress_fn fn, void *user);

/* Message for the last failed call on ctx ("" if none). With ctx == NULL:
 * the message of the last failed gpk_ctx_create on this thread. */
GPK_API const char *gpk_last_error(const gpk_ctx *ctx);

#ifdef __cplusplus
}
#endif
#endif
