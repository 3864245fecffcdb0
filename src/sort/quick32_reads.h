/* The partition's reads that the vectorised quicksorts of 32-bit keys
 * share (vector_sort_avx2.c, vector_sort_avx512.c; why the whole-register
 * stores always fit is in vector_sort_avx2.c's header). Included by each
 * kernel's file after it has defined INLINE, UNROLL, QUICK32_VEC,
 * QUICK32_LANES (keys a register), part_state (with its write positions
 * l and r), quick32_load(p) (a register from keys p) and
 * part_full(keys, P, v, pvx, s, gt) (one whole register partitioned). */

/* Of keys[0, rr) (rr a multiple of QUICK32_LANES, at least 2 UNROLL
 * registers): the first and the last UNROLL registers put in held[0, 2
 * UNROLL), the registers between read in blocks of UNROLL and then one by
 * one, each block from the side with less room written back, and
 * partitioned around pvx. Afterwards the room left, [P->l, P->r), holds
 * as many keys as held[] and the keys from rr on. */
INLINE void partition_reads(uint32_t *keys, size_t rr, part_state *P, QUICK32_VEC *held, QUICK32_VEC pvx,
                            int s, int gt)
{
    size_t lr = 0;
    for (int i = 0; i < UNROLL; i++) held[i] = quick32_load(keys + QUICK32_LANES * i);
    for (int i = 0; i < UNROLL; i++)
        held[UNROLL + i] = quick32_load(keys + rr - QUICK32_LANES * (UNROLL - i));
    lr += QUICK32_LANES * UNROLL;
    rr -= QUICK32_LANES * UNROLL;
    while (rr - lr >= QUICK32_LANES * UNROLL) {
        QUICK32_VEC v[UNROLL];
        if (lr - P->l <= P->r - rr) {
            for (int i = 0; i < UNROLL; i++) v[i] = quick32_load(keys + lr + QUICK32_LANES * i);
            lr += QUICK32_LANES * UNROLL;
        } else {
            rr -= QUICK32_LANES * UNROLL;
            for (int i = 0; i < UNROLL; i++) v[i] = quick32_load(keys + rr + QUICK32_LANES * i);
        }
        for (int i = 0; i < UNROLL; i++) part_full(keys, P, v[i], pvx, s, gt);
    }
    while (rr > lr) {
        QUICK32_VEC v;
        if (lr - P->l <= P->r - rr) {
            v = quick32_load(keys + lr);
            lr += QUICK32_LANES;
        } else {
            rr -= QUICK32_LANES;
            v = quick32_load(keys + rr);
        }
        part_full(keys, P, v, pvx, s, gt);
    }
}
