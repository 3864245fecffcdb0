/* The readers of .sln and .tour files take a path: each input is handed to
 * them through one memory file (memfd), rewritten per input and named
 * /proc/self/fd/N, so that no disk file is touched. */
#ifndef GPK_FUZZ_MEMFILE_H
#define GPK_FUZZ_MEMFILE_H

#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* The path of a memory file holding exactly data[0..size), or NULL. */
static const char *fuzz_memfile(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("gpk-fuzz", 0);
        if (fd < 0) return NULL;
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0) return NULL;
    size_t done = 0;
    while (done < size) {
        ssize_t w = pwrite(fd, data + done, size - done, (off_t)done);
        if (w <= 0) return NULL;
        done += (size_t)w;
    }
    return path;
}

#endif
