/* Large host arrays the library allocates or copies whole (internal.h):
 * the out-of-core sort's buffers, the CUDA backend's staging. */
#define _GNU_SOURCE
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void *gpk__host_alloc_large(size_t bytes)
{
    const size_t huge = (size_t)2 << 20;
    if (bytes < huge) return malloc(bytes ? bytes : 1);
    void *p = NULL;
    if (posix_memalign(&p, huge, bytes) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(p, bytes / huge * huge, MADV_HUGEPAGE); /* advice only: no huge pages is fine */
#endif
    return p;
}

/* One thread copies ~10 GB/s. One range a thread: a large memcpy streams
 * its stores past the cache (no read of the destination first). */
void gpk__host_copy(void *dst, const void *src, size_t bytes, int threads)
{
    if (threads < 1) threads = 1;
    const size_t min_piece = (size_t)1 << 20;
    size_t piece = (bytes / (size_t)threads + 4095) / 4096 * 4096;
    if (piece < min_piece) piece = min_piece;
    const long long pieces = (long long)((bytes + piece - 1) / piece);
#pragma omp parallel for schedule(static) num_threads(threads) if (pieces > 1)
    for (long long p = 0; p < pieces; p++) {
        const size_t off = (size_t)p * piece;
        memcpy((char *)dst + off, (const char *)src + off, bytes - off < piece ? bytes - off : piece);
    }
}
