/* Reading the best-known values beside an instance (best_known.c). */
#ifndef GPK_CLI_BEST_KNOWN_H
#define GPK_CLI_BEST_KNOWN_H

#include <stdio.h>

#include "cli.h"

/* Opens FILE for reading when it is a regular file of at most 64 MiB
 * (without waiting: a FIFO is refused, as are /dev/zero and directories).
 * NULL when it cannot be used: why is "" when it does not exist (no
 * message needed), else says why it was passed over. */
FILE *cli_open_beside(const char *file, char *why, size_t len);
/* The table's value for `name` from f (lines "name SEP value [SEP kind]";
 * label names the table in notes). Values outside int64 are passed over
 * with a note. */
void cli_read_best_known(FILE *f, const char *label, char sep, const char *name, const char *default_kind,
                         cli_best_known *bk);
/* 1 when `best`, a solution's value, can be compared with the reference:
 * not below an optimum (kind OPT), not under half of a positive reference. */
int cli_reference_plausible(const cli_best_known *bk, int64_t best);

#endif
