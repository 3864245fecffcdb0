/* The partition's reads that the vectorised quicksorts share
 * (vector_sort_avx2.c, vector_sort_avx512.c; why the whole-register
 * stores always fit is in vector_sort_avx2.c's header). Included by each
 * kernel's file after it has defined INLINE, UNROLL, QUICK_VEC,
 * QUICK_LANES (keys a register), part_state (with its write positions
 * l and r), quick_load(p) (a register from keys p) and
 * part_full(keys, P, v, pvx, s, gt) (one whole register partitioned). */

/* Of keys[0, rr) (rr a multiple of QUICK_LANES, at least 2 UNROLL
 * registers): the first and the last UNROLL registers put in held[0, 2
 * UNROLL), the registers between read in blocks of UNROLL and then one by
 * one, each block from the side with less room written back, and
 * partitioned around pvx. Afterwards the room left, [P->l, P->r), holds
 * as many keys as held[] and the keys from rr on. */
INLINE void partition_reads(QUICK_KEY *keys, size_t rr, part_state *P, QUICK_VEC *held, QUICK_VEC pvx, int s,
                            int gt)
{
    size_t lr = 0;
    for (int i = 0; i < UNROLL; i++) held[i] = quick_load(keys + QUICK_LANES * i);
    for (int i = 0; i < UNROLL; i++) held[UNROLL + i] = quick_load(keys + rr - QUICK_LANES * (UNROLL - i));
    lr += QUICK_LANES * UNROLL;
    rr -= QUICK_LANES * UNROLL;
    while (rr - lr >= QUICK_LANES * UNROLL) {
        QUICK_VEC v[UNROLL];
        if (lr - P->l <= P->r - rr) {
            for (int i = 0; i < UNROLL; i++) v[i] = quick_load(keys + lr + QUICK_LANES * i);
            lr += QUICK_LANES * UNROLL;
        } else {
            rr -= QUICK_LANES * UNROLL;
            for (int i = 0; i < UNROLL; i++) v[i] = quick_load(keys + rr + QUICK_LANES * i);
        }
        for (int i = 0; i < UNROLL; i++) part_full(keys, P, v[i], pvx, s, gt);
    }
    while (rr > lr) {
        QUICK_VEC v;
        if (lr - P->l <= P->r - rr) {
            v = quick_load(keys + lr);
            lr += QUICK_LANES;
        } else {
            rr -= QUICK_LANES;
            v = quick_load(keys + rr);
        }
        part_full(keys, P, v, pvx, s, gt);
    }
}
