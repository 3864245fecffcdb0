/* The particle-in-cell sorting test of Helluy (2011), Section 4.2 / Table 7,
 * written against gpk's public API. examples/pic.c implements it and, unless
 * GPK_PIC_NO_MAIN is defined, a main(); `gpk pic` includes pic.c with
 * GPK_PIC_NO_MAIN so both run the same code. */
#ifndef GPK_EXAMPLE_PIC_H
#define GPK_EXAMPLE_PIC_H

#include <stddef.h>
#include <stdint.h>

#include <gpk/gpk.h>

/* An optional second timer for the second sort: sorts a copy of keys[0..n)
 * with the given bits `reps` times, leaves the sorted keys in work and the
 * permutation in sigma, and puts the median time in *ms. `gpk pic` passes
 * one that times device-resident sorts (no transfers) on GPU backends; it
 * returns GPK_EUNSUPPORTED where it has nothing to add (the CPU). */
typedef gpk_status (*pic_sort_timer)(gpk_ctx *ctx, const uint32_t *keys, uint32_t *work, uint32_t *sigma,
                                     size_t n, unsigned key_bits, unsigned radix_bits, int reps, double *ms);

typedef struct pic_opts {
    size_t n;                    /* particles (default 8M = 8 * 2^20) */
    gpk_backend backend;         /* GPK_BACKEND_AUTO: CUDA when present, else CPU */
    int device;                  /* -1: default */
    int threads;                 /* CPU threads, 0: all cores */
    int reps;                    /* timed repetitions of each second sort; the median is kept */
    pic_sort_timer device_timer; /* NULL: host-to-host times only */
} pic_opts;
#define PIC_OPTS_INIT                                     \
    {                                                     \
        (size_t)8 << 20, GPK_BACKEND_AUTO, -1, 0, 5, NULL \
    }

typedef struct pic_result {
    gpk_ctx_info info; /* the backend and device that ran */
    size_t n;
    double ms_p6;                             /* second sort, b = 30, r = 5: 6 passes (median, ms) */
    double ms_p2;                             /* second sort, b = 10, r = 5: 2 passes (median, ms) */
    double speedup;                           /* ms_p6 / ms_p2 */
    int have_dev;                             /* the device timer ran: */
    double dev_ms_p6, dev_ms_p2, dev_speedup; /* device-resident times, same sorts */
    double moved;                             /* fraction of particles that changed cell in the move */
    double unsorted; /* fraction of adjacent key pairs out of order before the second sort */
    char msg[512];   /* what failed, when pic_run does not return 0 */
} pic_result;

/* Runs the test. Returns 0 when every check passed, 1 when a check failed,
 * 2 when something could not run (no memory, no backend, a sort error);
 * r->msg says which. */
int pic_run(const pic_opts *o, pic_result *r);

#endif
