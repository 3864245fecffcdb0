/* libFuzzer target of the structured .npy header parser (tools/gpk/io.c,
 * io_parse_npy_records: gpk sort IN.npy --key NAME). The input is the key
 * name, a NUL, then the file. Any input must either describe records that
 * fit the bytes given (the header, then n records of size bytes, the key
 * inside a record) or fail with a message, without crashes or undefined
 * behaviour. */
#include "io.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size < 64 ? size : 64);
    if (!nul) return 0;
    char key[64];
    memcpy(key, data, (size_t)(nul - data) + 1);
    const size_t len = size - (size_t)(nul - data) - 1;
    /* a copy of exactly len bytes: ASan sees any read past the file */
    unsigned char *buf = malloc(len ? len : 1);
    if (!buf) return 0;
    if (len) memcpy(buf, nul + 1, len);
    io_npy_records r;
    memset(&r, 0, sizeof r);
    char err[600] = "";
    if (io_parse_npy_records(buf, len, "fuzz", key, &r, err, sizeof err) != 0) {
        if (!err[0]) abort(); /* a failure says why */
    } else {
        const size_t kw = gpk_type_size(r.ktype);
        if (kw == 0 || r.size == 0 || r.size > 256 || r.offset + kw > r.size || r.header > len ||
            r.n > (len - r.header) / r.size || r.header + r.n * r.size != len)
            abort();
    }
    free(buf);
    return 0;
}
