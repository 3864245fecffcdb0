/* The OpenCL entry points gpk uses, opened at run time (opencl_loader.c):
 * libgpk names no OpenCL library among its NEEDED entries, so it loads
 * where no ICD loader is installed, and the OpenCL backend then reports
 * why it is missing. Included by opencl_internal.h after CL/cl.h: every
 * cl* call in the library goes through the table below. */
#ifndef GPK_OPENCL_LOADER_H
#define GPK_OPENCL_LOADER_H

#ifdef __cplusplus
extern "C" {
#endif

/* Every OpenCL function the library calls; a new call adds its name here. */
#define GPK_CL_FUNCTIONS(X)      \
    X(clBuildProgram)            \
    X(clCreateBuffer)            \
    X(clCreateCommandQueue)      \
    X(clCreateContext)           \
    X(clCreateKernel)            \
    X(clCreateProgramWithSource) \
    X(clEnqueueCopyBuffer)       \
    X(clEnqueueFillBuffer)       \
    X(clEnqueueNDRangeKernel)    \
    X(clEnqueueReadBuffer)       \
    X(clEnqueueWriteBuffer)      \
    X(clFinish)                  \
    X(clGetDeviceIDs)            \
    X(clGetDeviceInfo)           \
    X(clGetEventProfilingInfo)   \
    X(clGetKernelWorkGroupInfo)  \
    X(clGetPlatformIDs)          \
    X(clGetPlatformInfo)         \
    X(clGetProgramBuildInfo)     \
    X(clReleaseCommandQueue)     \
    X(clReleaseContext)          \
    X(clReleaseEvent)            \
    X(clReleaseKernel)           \
    X(clReleaseMemObject)        \
    X(clReleaseProgram)          \
    X(clSetKernelArg)

typedef struct gpk_cl_api {
#define GPK_CL_FIELD(f) __typeof__(&f) f;
    GPK_CL_FUNCTIONS(GPK_CL_FIELD)
#undef GPK_CL_FIELD
} gpk_cl_api;

/* Filled by gpk__cl_load. */
extern gpk_cl_api gpk__cl;

/* Opens the OpenCL ICD loader (libOpenCL.so.1, else libOpenCL.so) once
 * per process and fills gpk__cl. NULL when every function is there, else
 * why the OpenCL backend cannot run ("libOpenCL.so.1 not found"). Thread
 * safe. */
const char *gpk__cl_load(void);

#ifndef GPK_CL_LOADER_IMPL
#define clBuildProgram gpk__cl.clBuildProgram
#define clCreateBuffer gpk__cl.clCreateBuffer
#define clCreateCommandQueue gpk__cl.clCreateCommandQueue
#define clCreateContext gpk__cl.clCreateContext
#define clCreateKernel gpk__cl.clCreateKernel
#define clCreateProgramWithSource gpk__cl.clCreateProgramWithSource
#define clEnqueueCopyBuffer gpk__cl.clEnqueueCopyBuffer
#define clEnqueueFillBuffer gpk__cl.clEnqueueFillBuffer
#define clEnqueueNDRangeKernel gpk__cl.clEnqueueNDRangeKernel
#define clEnqueueReadBuffer gpk__cl.clEnqueueReadBuffer
#define clEnqueueWriteBuffer gpk__cl.clEnqueueWriteBuffer
#define clFinish gpk__cl.clFinish
#define clGetDeviceIDs gpk__cl.clGetDeviceIDs
#define clGetDeviceInfo gpk__cl.clGetDeviceInfo
#define clGetEventProfilingInfo gpk__cl.clGetEventProfilingInfo
#define clGetKernelWorkGroupInfo gpk__cl.clGetKernelWorkGroupInfo
#define clGetPlatformIDs gpk__cl.clGetPlatformIDs
#define clGetPlatformInfo gpk__cl.clGetPlatformInfo
#define clGetProgramBuildInfo gpk__cl.clGetProgramBuildInfo
#define clReleaseCommandQueue gpk__cl.clReleaseCommandQueue
#define clReleaseContext gpk__cl.clReleaseContext
#define clReleaseEvent gpk__cl.clReleaseEvent
#define clReleaseKernel gpk__cl.clReleaseKernel
#define clReleaseMemObject gpk__cl.clReleaseMemObject
#define clReleaseProgram gpk__cl.clReleaseProgram
#define clSetKernelArg gpk__cl.clSetKernelArg
#endif

#ifdef __cplusplus
}
#endif
#endif
