/* The sorting network that the vectorised quicksorts share
 * (vector_sort_avx2.c, vector_sort_avx512.c, at either key width).
 * Included by each kernel's file after it has defined INLINE, QUICK_VEC
 * (its register type), QUICK_LANES (keys a register: 4, 8 or 16),
 * vmin(a, b, s), vmax(a, b, s) and, for d and b the powers of two below
 * and up to QUICK_LANES:
 *   lanes_xor(v, d)          lane l of v moved to lane l ^ d;
 *   lanes_reversed(v, b)     v's lanes reversed within each block of b;
 *   blend_upper(lo, hi, d)   hi's lanes l with l & d set, lo's others;
 *   interleave_lo(a, b)      the lower halves of a and b alternating,
 *                            a's first (a0 b0 a1 b1 ...);
 *   interleave_hi(a, b)      the upper halves alike. */

/* The lesser keys of a and b, lane by lane, to a, the greater to b. */
INLINE void coex(QUICK_VEC *a, QUICK_VEC *b, int s)
{
    const QUICK_VEC x = *a;
    *a = vmin(x, *b, s);
    *b = vmax(x, *b, s);
}

/* One layer of comparators inside register v at lane distance d: lane l
 * against lane l ^ d, the greater key to the lane with l & d set. */
INLINE QUICK_VEC lane_layer(QUICK_VEC v, int d, int s)
{
    const QUICK_VEC p = lanes_xor(v, d);
    return blend_upper(vmin(v, p, s), vmax(v, p, s), d);
}

/* One register sorted ascending: bitonic merges of 2, 4, ... lanes, each
 * beginning with lane l against lane l ^ (k - 1) of its block of k (the
 * "flip", which keeps every comparator ascending). */
INLINE QUICK_VEC sort_register(QUICK_VEC v, int s)
{
#pragma GCC unroll 4
    for (int k = 2; k <= QUICK_LANES; k *= 2) {
        const QUICK_VEC p = lanes_reversed(v, k);
        v = blend_upper(vmin(v, p, s), vmax(v, p, s), k / 2);
#pragma GCC unroll 4
        for (int j = k / 4; j >= 1; j /= 2) v = lane_layer(v, j, s);
    }
    return v;
}

/* Registers v[0, r) (r = 1, 2, 4, 8, 16 or 32) sorted ascending as one run of
 * L r keys (L = QUICK_LANES; register i holding keys L i to L i + L - 1).
 * - A bitonic sort of the L r keys (each merge of k keys beginning with
 *   key e against key e ^ (k - 1), the flip, then e against e ^ j for j =
 *   k / 4, ..., 1; the lesser key to the lower e) in which key e of the
 *   network sits in register e % r, lane e / r. Comparators at distances
 *   below r so pair whole registers (a min and a max, no shuffle), and
 *   only those at r and above pair lanes inside registers: a third fewer
 *   vector operations than sorting each register and merging the runs.
 * - Then log2 r rounds, each interleaving register i with register
 *   i + r / 2 (their lower halves into register 2 i, their upper halves
 *   into 2 i + 1), move key e to register e / L, lane e % L: a round
 *   rotates the bits of a key's place (its register's bits above its
 *   lane's) left by one, and the place starts as e rotated by log2 L.
 * r is a constant wherever this is inlined, so the loops unroll and every
 * branch folds. */
INLINE void sort_registers(QUICK_VEC *v, int r, int s)
{
    if (r == 1) {
        v[0] = sort_register(v[0], s);
        return;
    }
    const int lr = r == 2 ? 1 : r == 4 ? 2 : r == 8 ? 3 : r == 16 ? 4 : 5; /* log2 r */
    const int ll = QUICK_LANES == 16 ? 4 : QUICK_LANES == 8 ? 3 : 2;       /* log2 L */
#pragma GCC unroll 16
    for (int kb = 1; kb <= lr + ll; kb++) {
        const int k = 1 << kb;
        if (k <= r) {
#pragma GCC unroll 32
            for (int i = 0; i < r; i++)
                if (!(i & k / 2)) coex(&v[i], &v[i ^ (k - 1)], s);
        } else {
            const int kl = k / r; /* the flip's lane block */
#pragma GCC unroll 16
            for (int i = 0; i < r / 2; i++) {
                const QUICK_VEC a = v[i], b = lanes_reversed(v[r - 1 - i], kl);
                const QUICK_VEC lo = vmin(a, b, s), hi = vmax(a, b, s);
                v[i] = blend_upper(lo, hi, kl / 2);
                v[r - 1 - i] = lanes_reversed(blend_upper(hi, lo, kl / 2), kl);
            }
        }
#pragma GCC unroll 8
        for (int jb = kb - 2; jb >= 0; jb--) {
            const int j = 1 << jb;
            if (j >= r) {
#pragma GCC unroll 32
                for (int i = 0; i < r; i++) v[i] = lane_layer(v[i], j / r, s);
            } else {
#pragma GCC unroll 32
                for (int i = 0; i < r; i++)
                    if (!(i & j)) coex(&v[i], &v[i + j], s);
            }
        }
    }
#pragma GCC unroll 8
    for (int round = 0; round < lr; round++) {
        QUICK_VEC t[32];
#pragma GCC unroll 16
        for (int i = 0; i < r / 2; i++) {
            t[2 * i] = interleave_lo(v[i], v[i + r / 2]);
            t[2 * i + 1] = interleave_hi(v[i], v[i + r / 2]);
        }
#pragma GCC unroll 32
        for (int i = 0; i < r; i++) v[i] = t[i];
    }
}
