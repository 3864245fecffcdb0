/* libFuzzer target of the CLI's array reader (tools/gpk/io.c): .npy
 * headers and raw data, as a regular file (memfd: sizes are checked before
 * allocating) and as a stream (fmemopen: the buffer grows with the data).
 * Any input must either give an array whose size matches the bytes read or
 * fail with a message, without crashes, leaks or undefined behaviour.
 * The first byte picks the path and the --type; the rest is the file. */
#include "fuzz_memfile.h"
#include "io.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    const unsigned sel = data[0];
    data++;
    size--;
    /* bits 0-2: no --type or one of the six; bit 3: stream; bit 4: the
     * name ends in .npy */
    const gpk_type types[6] = {GPK_U32, GPK_I32, GPK_F32, GPK_U64, GPK_I64, GPK_F64};
    const gpk_type *type = (sel & 7) < 6 ? &types[sel & 7] : NULL;
    io_array a;
    char err[600];
    int rc;
    if (sel & 8) {
        FILE *f = fmemopen(size ? (void *)data : (void *)"", size, "rb");
        if (!f) return 0;
        rc = io_read_stream(f, "fuzz", (sel >> 4) & 1, type, &a, err, sizeof err);
        fclose(f);
    } else {
        const char *path = fuzz_memfile(data, size);
        if (!path) abort();
        FILE *f = fopen(path, "rb");
        if (!f) abort();
        rc = io_read_stream(f, "fuzz", (sel >> 4) & 1, type, &a, err, sizeof err);
        fclose(f);
    }
    if (rc != 0) {
        if (!err[0] || a.data) abort(); /* a failure says why and keeps nothing */
        return 0;
    }
    const size_t w = gpk_type_size(a.type);
    if (a.n * w > size || (type && a.type != *type)) abort();
    /* Every element is readable (ASan checks the bounds). */
    volatile unsigned char sink = 0;
    for (size_t i = 0; i < a.n * w; i++) sink ^= ((const unsigned char *)a.data)[i];
    (void)sink;
    io_array_free(&a);
    return 0;
}
