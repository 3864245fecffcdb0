/* The merge of sorted register runs that the vectorised quicksorts of
 * 32-bit keys share (vector_sort_avx2.c, vector_sort_avx512.c). Included
 * by each kernel's file after it has defined INLINE, QUICK32_VEC (its
 * register type), vmin(a, b, s), vmax(a, b, s), QUICK32_REVERSE(v) (the
 * lanes reversed) and merge_in_register(v, s) (a bitonic register
 * sorted). */

/* Registers v[0, r) (r a power of two, 2 to 16), each half of them
 * sorted ascending as one run, merged into one run. The flip compares
 * register i with register r - 1 - i reversed, and keeps the greater keys
 * reversed in the upper register: the comparators that follow pair lanes
 * of registers in the same half, so a lane order reversed throughout a
 * half changes none of their pairs, and a reversed bitonic register is
 * bitonic for merge_in_register. */
INLINE void merge_registers(QUICK32_VEC *v, int r, int s)
{
#pragma GCC unroll 8
    for (int i = 0; i < r / 2; i++) {
        const QUICK32_VEC a = v[i], b = QUICK32_REVERSE(v[r - 1 - i]);
        v[i] = vmin(a, b, s);
        v[r - 1 - i] = vmax(a, b, s);
    }
    for (int d = r / 4; d >= 1; d /= 2)
#pragma GCC unroll 16
        for (int i = 0; i < r; i++)
            if (!(i & d)) {
                const QUICK32_VEC a = v[i], b = v[i + d];
                v[i] = vmin(a, b, s);
                v[i + d] = vmax(a, b, s);
            }
#pragma GCC unroll 16
    for (int i = 0; i < r; i++) v[i] = merge_in_register(v[i], s);
}
