/* libFuzzer target of the best-known tables beside an instance
 * (tools/gpk/best_known.c: best-known.csv, bestSolutions.txt), files the
 * user never named: the first byte picks the separator and the name looked
 * up, the rest is the table, read through the same regular-file check as
 * the CLI. Any input must give no value or one taken from a line that
 * names it, with its kind, source and note strings terminated within
 * their arrays; no crash, leak or undefined behaviour (built with
 * -fsanitize=fuzzer,address,undefined; see run.sh). */
#include "best_known.h"
#include "fuzz_memfile.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[] = {"a280", "tai12a", "burma14", "x", "A280", "nug30"};
    if (size < 1) return 0;
    const char sep = data[0] & 1 ? ':' : ',';
    const char *name = names[(data[0] >> 1) % (sizeof names / sizeof *names)];
    const char *path = fuzz_memfile(data + 1, size - 1);
    if (!path) abort();
    char why[256];
    FILE *f = cli_open_beside(path, why, sizeof why);
    if (!f) abort(); /* a memory file is a regular file */
    cli_best_known bk;
    cli_read_best_known(f, "fuzz", sep, name, sep == ',' ? "BKS" : "OPT", &bk);
    fclose(f);
    if (!memchr(bk.kind, 0, sizeof bk.kind) || !memchr(bk.source, 0, sizeof bk.source) ||
        !memchr(bk.note, 0, sizeof bk.note))
        abort();
    if (bk.have) {
        /* the value came from a line of the input that starts with the name */
        if (!*bk.kind || strncmp(bk.source, "fuzz:", 5) != 0) abort();
        (void)cli_reference_plausible(&bk, bk.value);
        (void)cli_reference_plausible(&bk, bk.value / 3);
    }
    return 0;
}
