/* gpk radix sort kernels, OpenCL C 1.2 (Helluy 2011, "A portable
 * implementation of the radix sort algorithm in OpenCL").
 *
 * One LSD pass over the digit of `bits` bits at `shift` is
 *   histogram -> scan with split s -> reorder,
 * with an optional transposition of the list before the first and after
 * the last pass. Two families of kernels implement a pass:
 *
 *  paper_*  the paper's algorithm: G groups of I items, item (g, i) owns a
 *           contiguous sub-list, counts its digits in its own histogram
 *           H(c, g, i) stored as H[c*G*I + g*I + i] (in local memory, or in
 *           global memory when 2^r * I counters do not fit), and reorders
 *           its sub-list sequentially with the scanned H.
 *  os_*     not the paper's structure: the Onesweep form of the CUDA backend
 *           (Adinets & Merrill 2022), for GPUs. One read counts the digits
 *           of every pass (os_hist); per pass one kernel (os_pass) ranks a
 *           tile in local memory, learns where its digits go from the tiles
 *           before it by decoupled look-back, and writes it out coalesced:
 *           one read and one write of the keys per pass, one launch.
 *  fast_*   the same structure with the per-item histograms replaced by
 *           work-group cooperation, for GPUs: group g owns a contiguous run
 *           of tiles of I*KPT keys and counts them with local atomics into
 *           H[c*G + g]; the reorder sorts each tile stably by the digit in
 *           local memory (KPT keys per item, RB-bit rounds of per-item
 *           counters, i.e. the paper's H(c, i) inside the tile) and then
 *           writes runs of equal digits to consecutive addresses.
 *
 * Keys are unsigned in "mapped" form (see include/gpk/sort.h): the first
 * pass maps the caller's keys when it reads them (kmap_in = 1 signed,
 * 2 float) and the last pass maps them back when it writes them.
 *
 * Layout of this file: common helpers and type-independent kernels, then,
 * after the line holding the marker GPK_TEMPLATE, a template written once in
 * terms of GPK_KW (key bytes: 4 or 8) and GPK_VW (payload bytes: 0, 4 or 8).
 * The host (src/sort/radix_opencl.c) builds one program from the key maps
 * (src/core/key_traits.h), the common part and the template six times, once
 * per (GPK_KW, GPK_VW); kernel names carry the widths: fast_reorder_k4_v8,
 * fast_count_k8, ... Compiled after key_traits.h, the file as it stands is
 * the common part plus the (4, 0) instance.
 *
 * Build-time parameters (-D): GPK_KPT4 / GPK_KPT8 keys per item in the fast
 * kernels for 4 / 8-byte keys, GPK_RANK_BITS bits per local ranking round,
 * GPK_OS_KPT4 / GPK_OS_KPT8 keys per item of os_pass, GPK_NV_PTX the
 * NVIDIA warp primitives (inline PTX) for os_pass,
 * GPK_POS64: 64-bit sizes, positions and histogram entries (pos_t), the
 * build the host makes for sorts past 2^32 keys. Tile-local counts and
 * ranks stay 32- or 16-bit in both builds (the os_* kernels run in the
 * 32-bit build only: n < 2^30).
 */

#ifndef GPK_KPT4
#define GPK_KPT4 8
#endif
#ifndef GPK_KPT8
#define GPK_KPT8 4
#endif
#ifndef GPK_RANK_BITS
#define GPK_RANK_BITS 4
#endif
#ifndef GPK_OS_KPT4
#define GPK_OS_KPT4 16
#endif
#ifndef GPK_OS_KPT8
#define GPK_OS_KPT8 8
#endif

#ifdef GPK_POS64
typedef ulong pos_t;
#else
typedef uint pos_t;
#endif

/* Local-memory index padding that keeps tile arrays free of bank conflicts
 * on 32-bank hardware when they are read both striped (p = m*I + t) and
 * blocked (p = t*KPT + m). */
#define PADK(p) ((p) + ((p) >> 5))

/* ---- key maps: gpk_key_map32/64 and gpk_key_unmap32/64 (kind 0
 * unsigned, 1 signed, 2 float) of src/core/key_traits.h, which the host
 * puts in front of this file ---- */

/* ---- work-group helpers ---- */

/* Exclusive prefix sum of x over the work-group (Hillis-Steele with two
 * buffers, one barrier a step; buf holds 2 * local size). *total gets the
 * sum of all x. Every item of the group must call it. Written once for
 * uint (tile ranks) and pos_t (the global histogram). */
#define GPK_GROUP_SCAN(NAME, T)                                                \
    T NAME(T x, __local T *buf, T *total)                                      \
    {                                                                          \
        const uint I = get_local_size(0), t = get_local_id(0);                 \
        __local T *a = buf, *b = buf + I;                                      \
        a[t] = x;                                                              \
        barrier(CLK_LOCAL_MEM_FENCE);                                          \
        for (uint off = 1; off < I; off <<= 1) {                               \
            T v = a[t];                                                        \
            if (t >= off) v += a[t - off];                                     \
            b[t] = v;                                                          \
            barrier(CLK_LOCAL_MEM_FENCE);                                      \
            __local T *tmp = a;                                                \
            a = b;                                                             \
            b = tmp;                                                           \
        }                                                                      \
        const T incl = a[t];                                                   \
        *total = a[I - 1];                                                     \
        barrier(CLK_LOCAL_MEM_FENCE); /* the caller may reuse buf at once */   \
        return incl - x;                                                       \
    }
GPK_GROUP_SCAN(gpk_group_scan_excl, uint)
#ifdef GPK_POS64
GPK_GROUP_SCAN(gpk_group_scan_pos, pos_t)
#else
#define gpk_group_scan_pos gpk_group_scan_excl
#endif

/* ---- scan with split s (paper section 3.2.2) ----
 * The histogram h[0..len) is cut into parts of `part` entries; group p
 * scans part p in place (exclusive) and, when aux is used, writes the part's
 * sum to aux[p]. The host then scans aux with one group and adds aux[p]
 * back to part p with scan_add. */
__kernel void scan_parts(__global pos_t *h, __global pos_t *aux, uint len, uint part, int write_aux,
                         __local pos_t *tmp)
{
    const uint I = get_local_size(0), t = get_local_id(0), g = get_group_id(0);
    const uint begin = g * part;
    const uint end = min(len, begin + part);
    pos_t carry = 0;
    for (uint b = begin; b < end; b += I) {
        const uint j = b + t;
        const pos_t x = j < end ? h[j] : 0u;
        pos_t total;
        const pos_t e = gpk_group_scan_pos(x, tmp, &total);
        if (j < end) h[j] = carry + e;
        carry += total;
    }
    if (write_aux && t == 0) aux[g] = carry;
}

__kernel void scan_add(__global pos_t *h, __global const pos_t *aux, uint len, uint part)
{
    const uint I = get_local_size(0), t = get_local_id(0), g = get_group_id(0);
    const uint begin = g * part;
    const uint end = min(len, begin + part);
    const pos_t add = aux[g];
    for (uint j = begin + t; j < end; j += I) h[j] += add;
}

/* ---- transposition (paper section 3.2.1) ----
 * in is a rows x cols matrix in row-major order, out receives its
 * transpose (cols x rows). 16x16 tiles go through local memory so that both
 * the reads and the writes are coalesced; the +1 column avoids bank
 * conflicts. kmap > 0 maps keys on the way (kind), kmap < 0 unmaps (-kind). */
#define GPK_TD 16

/* Written once for 4-byte (uint, the 32-bit maps) and 8-byte keys. */
#define GPK_TRANSPOSE(NAME, T, MAP, UNMAP)                                                             \
    __kernel void NAME(__global const T *in, __global T *out, uint rows, uint cols, int kmap,          \
                       __local T *tile)                                                                \
    {                                                                                                  \
        const uint lx = get_local_id(0), ly = get_local_id(1);                                         \
        const uint c0 = get_group_id(0) * GPK_TD, r0 = get_group_id(1) * GPK_TD;                       \
        const uint r = r0 + ly, c = c0 + lx;                                                           \
        if (r < rows && c < cols) {                                                                    \
            T v = in[(pos_t)r * cols + c];                                                             \
            if (kmap > 0) v = MAP(kmap, v);                                                            \
            else if (kmap < 0) v = UNMAP(-kmap, v);                                                    \
            tile[ly * (GPK_TD + 1) + lx] = v;                                                          \
        }                                                                                              \
        barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
        const uint orow = c0 + ly, ocol = r0 + lx;                                                     \
        if (orow < cols && ocol < rows) out[(pos_t)orow * rows + ocol] = tile[lx * (GPK_TD + 1) + ly]; \
    }
GPK_TRANSPOSE(transpose_w4, uint, gpk_key_map32, gpk_key_unmap32)
GPK_TRANSPOSE(transpose_w8, ulong, gpk_key_map64, gpk_key_unmap64)

/* ---- Onesweep pass: warp primitives ----
 * With GPK_NV_PTX (set by the host on NVIDIA GPUs when a build with it
 * succeeds) a warp is the hardware's 32 lanes, and ballots and shuffles are
 * inline PTX: NVIDIA's OpenCL 1.2 has no sub-group functions. Without it a
 * "warp" is one work-item and the primitives are not needed: the same
 * kernel then runs anywhere (one counter row per item, slower). The lane
 * of work-item t is t % 32: NVIDIA packs consecutive items of a 1-D group
 * into a warp. */
#ifdef GPK_NV_PTX
#define GPK_WARP 32

/* peers with bit `bit` of d equal to mine: peers & (mine set ? ballot : ~ballot) */
uint gpk_match_bit(uint peers, uint d, uint bit)
{
    uint out;
    asm volatile("{\n\t"
                 ".reg .pred p;\n\t"
                 ".reg .b32 t;\n\t"
                 "and.b32 t, %2, %3;\n\t"
                 "setp.ne.u32 p, t, 0;\n\t"
                 "vote.sync.ballot.b32 t, p, 0xffffffff;\n\t"
                 "@!p not.b32 t, t;\n\t"
                 "and.b32 %0, %1, t;\n\t"
                 "}"
                 : "=r"(out)
                 : "r"(peers), "r"(d), "r"(bit));
    return out;
}

uint gpk_shfl(uint v, uint src_lane)
{
    uint out;
    asm volatile("shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(out) : "r"(v), "r"(src_lane));
    return out;
}
uint gpk_shfl_up(uint v, uint delta)
{
    uint out;
    asm volatile("shfl.sync.up.b32 %0, %1, %2, 0x0, 0xffffffff;" : "=r"(out) : "r"(v), "r"(delta));
    return out;
}
#define GPK_WARP_RANK 1
#define GPK_MATCH_BIT(peers, d, bit) gpk_match_bit((peers), (d), (bit))
#define GPK_SHFL(v, src) gpk_shfl((v), (src))
#define GPK_SHFL_UP(v, delta) gpk_shfl_up((v), (delta))

#elif defined(GPK_EMU_WARP)
/* For tests on any device (a test hook: gpk__test.opencl_vendor 3): the vendor path's
 * 32-lane ranking with the ballot and the shuffle emulated in local memory
 * with group barriers (every item of the group runs the ranking loop). */
#define GPK_WARP 32

uint gpk_emu_match_bit(uint peers, uint d, uint bit, __local uint *word, uint lane)
{
    if (lane == 0) *word = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (d & bit) atomic_or(word, 1u << lane);
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint ballot = *word;
    barrier(CLK_LOCAL_MEM_FENCE);
    return peers & ((d & bit) ? ballot : ~ballot);
}

uint gpk_emu_shfl(uint v, uint src_lane, __local uint *slots, uint lane)
{
    slots[lane] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint out = slots[src_lane];
    barrier(CLK_LOCAL_MEM_FENCE);
    return out;
}
/* lanes below delta get their own value, as with shfl.sync.up */
uint gpk_emu_shfl_up(uint v, uint delta, __local uint *slots, uint lane)
{
    slots[lane] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint out = lane >= delta ? slots[lane - delta] : v;
    barrier(CLK_LOCAL_MEM_FENCE);
    return out;
}
#define GPK_WARP_RANK 1
/* scratch: the group scan's buffer (2 * I words): lane slots in the first
 * I words, one word per warp after them */
#define GPK_MATCH_BIT(peers, d, bit) gpk_emu_match_bit((peers), (d), (bit), sscan + I + warp, lane)
#define GPK_SHFL(v, src) gpk_emu_shfl((v), (src), sscan + warp * GPK_WARP, lane)
#define GPK_SHFL_UP(v, delta) gpk_emu_shfl_up((v), (delta), sscan + warp * GPK_WARP, lane)

#else
#define GPK_WARP 1
#endif

/* Look-back words: read and written at device scope (volatile: past the
 * non-coherent L1 on GPUs, never cached in a register while spinning). */
uint gpk_load_status(__global const uint *p) { return *(volatile __global const uint *)p; }
void gpk_store_status(__global uint *p, uint v) { *(volatile __global uint *)p = v; }

#define GPK_OS_FLAG_AGG (1u << 30)
#define GPK_OS_FLAG_INCL (2u << 30)
#define GPK_OS_COUNT_MASK ((1u << 30) - 1u)
#define GPK_OS_MAXBITS 8 /* digit bits of a pass */
#ifndef GPK_OS_BPT
#define GPK_OS_BPT 8 /* most digits per item in the per-digit phases (the host sets it) */
#endif

/*@@GPK_TEMPLATE@@ everything below is instantiated once per (GPK_KW, GPK_VW) */

#ifndef GPK_KW
#define GPK_KW 4
#endif
#ifndef GPK_VW
#define GPK_VW 0
#endif

#if GPK_KW == 4
#define KEY_T uint
#define KEY_MAX 0xFFFFFFFFu
#define KMAP(k, kind) gpk_key_map32((kind), (k))
#define KUNMAP(k, kind) gpk_key_unmap32((kind), (k))
#define KPT GPK_KPT4
#define OSKPT GPK_OS_KPT4
#define KEY_VEC uint4
#define VEC 4
#define vstoreV vstore4
#else
#define KEY_T ulong
#define KEY_MAX 0xFFFFFFFFFFFFFFFFUL
#define KMAP(k, kind) gpk_key_map64((kind), (k))
#define KUNMAP(k, kind) gpk_key_unmap64((kind), (k))
#define KPT GPK_KPT8
#define OSKPT GPK_OS_KPT8
#define KEY_VEC ulong2
#define VEC 2
#define vstoreV vstore2
#endif

#if GPK_VW == 8
#define VAL_T ulong
#else
#define VAL_T uint /* GPK_VW == 0: the payload arguments are present but unused */
#endif

#define RB GPK_RANK_BITS
#define NHMAX (1u << (RB - 1)) /* rank counter words per item */
#define GPK_NAME2_(base, k, v) base##_k##k##_v##v
#define GPK_NAME2(base, k, v) GPK_NAME2_(base, k, v)
#define GPK_NAME1_(base, k) base##_k##k
#define GPK_NAME1(base, k) GPK_NAME1_(base, k)
#define KNAME(base) GPK_NAME2(base, GPK_KW, GPK_VW)   /* depends on keys and payload */
#define KNAME1(base) GPK_NAME1(base, GPK_KW)          /* depends on keys only */
#define DIGIT(k, sh, mask) ((uint)((k) >> (sh)) & (mask))

#if GPK_VW == 0

/* AND and OR of the mapped keys, one pair per group (b = 0 detection);
 * the host combines the G pairs. Group g reduces the contiguous chunk
 * [g*chunk, (g+1)*chunk), its items striding by I (coalesced on GPUs, one
 * sequential sweep per item when I = 1 on CPUs). */
__kernel void KNAME1(reduce_andor)(__global const KEY_T *keys, pos_t n, pos_t chunk, int kmap,
                                   __global KEY_T *out, __local KEY_T *sa, __local KEY_T *so)
{
    const uint I = get_local_size(0), t = get_local_id(0), g = get_group_id(0);
    const ulong end = min((ulong)n, (ulong)(g + 1) * chunk);
    KEY_T a = KEY_MAX, o = 0;
    for (ulong j = (ulong)g * chunk + t; j < end; j += I) {
        const KEY_T k = KMAP(keys[j], kmap);
        a &= k;
        o |= k;
    }
    sa[t] = a;
    so[t] = o;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint p2 = 1;
    while (p2 < I) p2 <<= 1;
    for (uint off = p2 >> 1; off > 0; off >>= 1) {
        if (t < off && t + off < I) {
            sa[t] &= sa[t + off];
            so[t] |= so[t + off];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (t == 0) {
        out[2 * g] = sa[0];
        out[2 * g + 1] = so[0];
    }
}

/* Paper histogram: item (g, i) counts the digits of its sub-list, the row
 * row = g*I + i of the list seen as a (G*I) x C matrix: keys[row*C + k], or
 * keys[k*G*I + row] once the list is transposed (coalesced reads). The
 * counters H(c, g, i) live in local memory at loc[c*I + i] (each item only
 * touches its own column, so no atomics and no barrier are needed), or,
 * with ghist, directly at hist[c*G*I + row] (zeroed by the host) when
 * 2^bits * I counters do not fit in local memory. */
__kernel void KNAME1(paper_hist)(__global const KEY_T *keys, __global pos_t *hist, uint C, uint shift,
                                 uint bits, int kmap, int transposed, int ghist, __local uint *loc)
{
    const uint I = get_local_size(0), i = get_local_id(0), g = get_group_id(0);
    const uint GI = get_num_groups(0) * I, row = g * I + i;
    const uint R = 1u << bits, mask = R - 1u;
    if (!ghist)
        for (uint c = 0; c < R; c++) loc[c * I + i] = 0;
    for (uint k = 0; k < C; k++) {
        const pos_t j = transposed ? (pos_t)k * GI + row : (pos_t)row * C + k;
        const uint d = DIGIT(KMAP(keys[j], kmap), shift, mask);
        if (ghist) hist[d * GI + row] += 1u;
        else loc[d * I + i] += 1u;
    }
    if (!ghist)
        for (uint c = 0; c < R; c++) hist[c * GI + row] = loc[c * I + i]; /* coalesced in i */
}

/* Fast histogram: group g counts the digits of its tiles
 * [g*tpg, (g+1)*tpg) of I*KPT keys with local atomics into nrep replicas
 * (lh[d*nrep + rep], rep = item % nrep, so that equal digits in a wavefront
 * spread over several counters) and writes the sum to hist[d*G + g]. */
__kernel void KNAME1(fast_count)(__global const KEY_T *kin, __global pos_t *hist, pos_t n, uint tiles, uint tpg,
                                 uint shift, uint bits, int kmap, uint nrep, __local uint *lh)
{
    const uint I = get_local_size(0), t = get_local_id(0), g = get_group_id(0), G = get_num_groups(0);
    const uint R = 1u << bits, mask = R - 1u, T = I * KPT;
    for (uint j = t; j < R * nrep; j += I) lh[j] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint rep = t % nrep;
    for (uint tt = 0; tt < tpg; tt++) {
        const uint tile = g * tpg + tt;
        if (tile >= tiles) break;
        const pos_t base = (pos_t)tile * T;
        const uint valid = (uint)min((pos_t)T, n - base);
        KEY_T kr[KPT];
        for (uint m = 0; m < KPT; m++) {
            const uint p = m * I + t;
            kr[m] = p < valid ? kin[base + p] : 0;
        }
        for (uint m = 0; m < KPT; m++) {
            const uint p = m * I + t;
            if (p < valid) atomic_inc(&lh[DIGIT(KMAP(kr[m], kmap), shift, mask) * nrep + rep]);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = t; d < R; d += I) {
        uint s = 0;
        for (uint r = 0; r < nrep; r++) s += lh[d * nrep + r];
        hist[d * G + g] = s;
    }
}

/* Onesweep histogram: the digit counts of every pass in one read. Pass p
 * sorts bits [begin + p*r, min(begin + (p+1)*r, end)); its 2^bits counters
 * are hist[p*stride ..] (zeroed by the host). The items of all groups
 * stride over the keys (coalesced); each group counts in local memory and
 * adds its table to hist once. */
__kernel void KNAME1(os_hist)(__global const KEY_T *keys, __global uint *hist, uint n, int kmap, uint begin, uint r,
                              uint end, uint stride, __local uint *lh)
{
    const uint I = get_local_size(0), t = get_local_id(0);
    const uint passes = (end - begin + r - 1) / r;
    for (uint j = t; j < passes * stride; j += I) lh[j] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint step = (uint)get_global_size(0);
    for (uint j = (uint)get_global_id(0); j < n; j += step) {
        const KEY_T k = KMAP(keys[j], kmap);
        for (uint p = 0; p < passes; p++) {
            const uint sh = begin + p * r, bits = min(r, end - sh);
            atomic_inc(&lh[p * stride + DIGIT(k, sh, (1u << bits) - 1u)]);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint j = t; j < passes * stride; j += I) {
        const uint c = lh[j];
        if (c) atomic_add(&hist[j], c);
    }
}

#endif /* GPK_VW == 0 */

/* Paper reorder: item (g, i) walks its sub-list in order and sends each key
 * to H(c, g, i)++, where H holds the exclusive scan of the histogram: the
 * position of its first key of digit c in the sorted list. Transposed, the
 * logical position pos = row'*C + k' is stored at k'*G*I + row'. The payload
 * moves with the key; vgen makes it the key's original index (sigma). */
__kernel void KNAME(paper_reorder)(__global const KEY_T *kin, __global KEY_T *kout,
                                   __global const VAL_T *vin, __global VAL_T *vout, int vgen,
                                   __global pos_t *hist, uint C, uint shift, uint bits, int kmap_in,
                                   int kmap_out, int transposed, int ghist, __local pos_t *loc)
{
    const uint I = get_local_size(0), i = get_local_id(0), g = get_group_id(0);
    const uint GI = get_num_groups(0) * I, row = g * I + i;
    const uint R = 1u << bits, mask = R - 1u;
    if (!ghist)
        for (uint c = 0; c < R; c++) loc[c * I + i] = hist[c * GI + row];
    for (uint k = 0; k < C; k++) {
        const pos_t j = transposed ? (pos_t)k * GI + row : (pos_t)row * C + k;
        const KEY_T key = KMAP(kin[j], kmap_in);
        const uint d = DIGIT(key, shift, mask);
        pos_t pos;
        if (ghist) {
            pos = hist[d * GI + row];
            hist[d * GI + row] = pos + 1u;
        } else {
            pos = loc[d * I + i];
            loc[d * I + i] = pos + 1u;
        }
        const pos_t o = transposed ? (pos % C) * GI + pos / C : pos;
        kout[o] = KUNMAP(key, kmap_out);
#if GPK_VW
        vout[o] = vgen ? (VAL_T)((pos_t)row * C + k) : vin[j];
#endif
    }
}

/* Fast reorder. Group g walks its tiles in order, keeping in gofs[d] the
 * position in the output of its next key of digit d (initially the scanned
 * hist[d*G + g]). For each tile of T = I*KPT keys:
 *  1. load, item t taking keys t*KPT.. (mapped, KEY_MAX past the end);
 *  2. stable sort of the tile by the digit, in rounds of RB bits: item t
 *     holds the KPT consecutive keys t*KPT.. (blocked), counts their RB-bit
 *     sub-digits (in registers) and publishes them in its own column of
 *     cnt[sub-digit][item] (the paper's H(c, i) inside the tile, 16-bit
 *     counters), one exclusive scan of cnt
 *     (digit-major) gives every key its rank, and the keys (with their tile
 *     index, for the payload) are written to kbuf at their rank;
 *  3. the start of each digit's run in the sorted tile (tstart);
 *  4. the key at sorted position p goes to gofs[d] + p - tstart[d]: keys of
 *     one digit land at consecutive addresses, so the writes coalesce;
 *  5. gofs[d] advances by the digit's count; the payload goes through kbuf
 *     (reused) to the same positions. */
__kernel void KNAME(fast_reorder)(__global const KEY_T *kin, __global KEY_T *kout,
                                  __global const VAL_T *vin, __global VAL_T *vout, int vgen,
                                  __global const pos_t *hist, pos_t n, uint tiles, uint tpg, uint shift,
                                  uint bits, int kmap_in, int kmap_out, __local ulong *kvraw,
                                  __local ushort *ibuf, __local uint *cnt, __local uint *sscan,
                                  __local pos_t *gofs, __local uint *tstart)
{
    const uint I = get_local_size(0), t = get_local_id(0), g = get_group_id(0), G = get_num_groups(0);
    const uint R = 1u << bits, mask = R - 1u, T = I * KPT;
    /* kvraw is declared with the widest type so that it is 8-byte aligned
     * (NVIDIA aligns a local argument to its declared type only) */
    __local KEY_T *kbuf = (__local KEY_T *)kvraw;

    for (uint d = t; d < R; d += I) gofs[d] = hist[d * G + g];
    /* the barrier after the first load orders these writes before any read */

    for (uint tt = 0; tt < tpg; tt++) {
        const uint tile = g * tpg + tt;
        if (tile >= tiles) break; /* uniform over the group */
        const pos_t base = (pos_t)tile * T;
        const uint valid = (uint)min((pos_t)T, n - base);

        /* 1. load: item t takes the KPT consecutive keys t*KPT.. (the
         * blocked arrangement the ranking needs); full tiles use 16-byte
         * vector loads, which coalesce over a wavefront */
        KEY_T kr[KPT];
#if GPK_VW
        ushort ir[KPT];
        for (uint m = 0; m < KPT; m++) ir[m] = (ushort)(t * KPT + m);
#endif
#if KPT % VEC == 0
        if (valid == T) {
            __global const KEY_VEC *src = (__global const KEY_VEC *)(kin + base + t * KPT);
            for (uint q = 0; q < KPT / VEC; q++) {
                const KEY_VEC v = src[q];
                KEY_T tmp[VEC];
                vstoreV(v, 0, tmp);
                for (uint e = 0; e < VEC; e++) kr[q * VEC + e] = KMAP(tmp[e], kmap_in);
            }
        } else
#endif
        {
            for (uint m = 0; m < KPT; m++) {
                const uint p = t * KPT + m;
                kr[m] = p < valid ? KMAP(kin[base + p], kmap_in) : KEY_MAX;
            }
        }

        /* 2. local stable sort by the digit, RB bits a round (LSD). Item t
         * counts the sub-digits of its keys in registers (8-bit fields: lo
         * for sub-digits 0..NH-1, hi for NH..2NH-1) and publishes them as
         * 16-bit counters, two to a word: sub-digits k and k + NH of item t
         * share cnt[k*I + t]. */
        for (uint rb = 0; rb < bits; rb += RB) {
            const uint nb = min((uint)RB, bits - rb), sh = shift + rb;
            const uint NH = 1u << (nb - 1), hmask = NH - 1u;
            ulong lo = 0, hi = 0;
            for (uint m = 0; m < KPT; m++) {
                const uint sd = DIGIT(kr[m], sh, 2u * NH - 1u);
                const ulong inc = 1UL << ((sd & hmask) * 8u);
                if (sd & NH) hi += inc;
                else lo += inc;
            }
            for (uint j = 0; j < NHMAX; j++)
                if (j < NH)
                    cnt[j * I + t] = (uint)((lo >> (8u * j)) & 0xFFu) | ((uint)((hi >> (8u * j)) & 0xFFu) << 16);
            barrier(CLK_LOCAL_MEM_FENCE);
            /* exclusive scan of the NH*I words in (row, item) order, item t
             * owning words t*NH.. t*NH+NH-1; it reads them rotated by rot so
             * that 32 consecutive items touch 32 different banks */
            const uint rot = ((t * NH) >> 5) & hmask;
            uint c[NHMAX];
            uint sum = 0, lowsum = 0;
            for (uint j = 0; j < NHMAX; j++) {
                c[j] = 0;
                if (j < NH) {
                    c[j] = cnt[t * NH + ((j + rot) & hmask)];
                    sum += c[j];
                    if (j >= NH - rot) lowsum += c[j]; /* words t*NH + 0 .. rot-1 */
                }
            }
            uint total;
            uint run = gpk_group_scan_excl(sum, sscan, &total);
            run += (total & 0xFFFFu) << 16; /* high halves rank after every low-half key */
            uint acc_hi = run + lowsum, acc_lo = run;
            for (uint j = 0; j < NHMAX; j++) {
                if (j < NH) {
                    uint v;
                    if (j < NH - rot) {
                        v = acc_hi;
                        acc_hi += c[j];
                    } else {
                        v = acc_lo;
                        acc_lo += c[j];
                    }
                    cnt[t * NH + ((j + rot) & hmask)] = v;
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            /* rank = this item's scanned base for the sub-digit + its own
             * earlier keys of the sub-digit (running 8-bit fields again) */
            ulong lo2 = 0, hi2 = 0;
            for (uint m = 0; m < KPT; m++) {
                const uint sd = DIGIT(kr[m], sh, 2u * NH - 1u);
                const uint k = sd & hmask, up = sd & NH;
                const uint base_k = (cnt[k * I + t] >> (up ? 16 : 0)) & 0xFFFFu;
                const ulong inc = 1UL << (8u * k);
                uint prior;
                if (up) {
                    prior = (uint)(hi2 >> (8u * k)) & 0xFFu;
                    hi2 += inc;
                } else {
                    prior = (uint)(lo2 >> (8u * k)) & 0xFFu;
                    lo2 += inc;
                }
                const uint r = base_k + prior;
                kbuf[PADK(r)] = kr[m];
#if GPK_VW
                ibuf[PADK(r)] = ir[m];
#endif
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            if (rb + RB < bits) {
                for (uint m = 0; m < KPT; m++) {
                    kr[m] = kbuf[PADK(t * KPT + m)];
#if GPK_VW
                    ir[m] = ibuf[PADK(t * KPT + m)];
#endif
                }
            }
        }

        /* 3. runs of equal digits in the sorted tile (read striped now) */
        uint ends = 0;
        for (uint m = 0; m < KPT; m++) {
            const uint p = m * I + t;
            if (p < valid) {
                const KEY_T k = kbuf[PADK(p)];
                const uint d = DIGIT(k, shift, mask);
                kr[m] = k;
                if (p == 0 || DIGIT(kbuf[PADK(p - 1)], shift, mask) != d) tstart[d] = p;
                if (p + 1 == valid || DIGIT(kbuf[PADK(p + 1)], shift, mask) != d) ends |= 1u << m;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        /* 4. scatter the keys */
#if GPK_VW
        pos_t pos[KPT];
#endif
        for (uint m = 0; m < KPT; m++) {
            const uint p = m * I + t;
            if (p < valid) {
                const uint d = DIGIT(kr[m], shift, mask);
                const pos_t o = gofs[d] + (p - tstart[d]);
                kout[o] = KUNMAP(kr[m], kmap_out);
#if GPK_VW
                pos[m] = o;
#endif
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        /* 5. advance the offsets (one item per digit present: the one
         * holding its last key), then move the payload */
        for (uint m = 0; m < KPT; m++) {
            if ((ends >> m) & 1u) {
                const uint d = DIGIT(kr[m], shift, mask);
                gofs[d] += m * I + t + 1u - tstart[d];
            }
        }
#if GPK_VW
        if (vgen) {
            for (uint m = 0; m < KPT; m++) {
                const uint p = m * I + t;
                if (p < valid) vout[pos[m]] = (VAL_T)(base + ibuf[PADK(p)]);
            }
        } else {
            __local VAL_T *vbuf = (__local VAL_T *)kvraw;
            for (uint m = 0; m < KPT; m++) {
                const uint p = m * I + t;
                if (p < valid) vbuf[PADK(p)] = vin[base + p];
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            for (uint m = 0; m < KPT; m++) {
                const uint p = m * I + t;
                if (p < valid) vout[pos[m]] = vbuf[PADK(ibuf[PADK(p)])];
            }
        }
#endif
        barrier(CLK_LOCAL_MEM_FENCE); /* kbuf, tstart and gofs are reused by the next tile */
    }
}

/* Onesweep pass over the digit of `bits` (<= 8) bits at `shift`. One group
 * per tile of T = I*OSKPT keys. status holds a word per (tile, digit) and
 * then the tile counter, all zeroed: tiles are numbered in the order groups
 * take them from the counter, so every tile a group waits for in the
 * look-back belongs to a group that is already running.
 *  1. load: warp w's lane l takes tile positions w*32*OSKPT + i*32 + l
 *     (coalesced), mapped, KEY_MAX past the end (largest digit: they rank
 *     after every real key and are never written);
 *  2. rank in the warp, key i of every lane in lane order (input order, so
 *     stable): the lanes that share the digit (ballots, one per digit bit)
 *     let the highest of them add their number to the warp's counter for
 *     the digit and pass the old count on (shuffle);
 *  3. per digit: the tile's count, published at once for later tiles
 *     (status word: flag | count), its start in the tile (scan over the
 *     digits), and each warp's first rank in it;
 *  4. the keys go to local memory in sorted order (and the values);
 *  5. decoupled look-back: each digit's count in all earlier tiles, summed
 *     back to the first word marked inclusive; then this tile's inclusive
 *     word, and the output index of sorted position j with digit d is
 *     s_base[d] + j;
 *  6. write out: consecutive items take consecutive sorted keys, so runs of
 *     one digit land at consecutive addresses.
 * Counts fit 30 bits: the host runs this pass for n < 2^30 only. */
__kernel void KNAME(os_pass)(__global const KEY_T *kin, __global KEY_T *kout, __global const VAL_T *vin,
                             __global VAL_T *vout, int vgen, __global const uint *bases, uint boff,
                             __global uint *status, uint n, uint shift, uint bits,
                             int kmap_in, int kmap_out, __local uint *counters, __local ulong *kvraw,
                             __local VAL_T *vbuf, __local uint *s_base, __local uint *sscan)
{
    const uint I = get_local_size(0), t = get_local_id(0);
    const uint W = I / GPK_WARP, warp = t / GPK_WARP, lane = t % GPK_WARP;
    const uint D = 1u << bits, mask = D - 1u, T = I * OSKPT;
    const uint bpt = (D + I - 1u) / I; /* digits per item, <= GPK_OS_BPT */
    const uint tiles = (n + T - 1u) / T;
    __local KEY_T *kbuf = (__local KEY_T *)kvraw; /* declared ulong: 8-byte aligned on NVIDIA */

    for (uint j = t; j < W * D; j += I) counters[j] = 0;
    if (t == 0) s_base[0] = atomic_inc(&status[tiles * D]);
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint tile = s_base[0]; /* s_base is next written after the ranking's barrier */
    const uint base = tile * T, valid = min(T, n - base);
    const uint first = warp * GPK_WARP * OSKPT + lane; /* tile position of this item's key 0 */

    /* 1. load */
    KEY_T key[OSKPT];
    if (valid == T) {
        #pragma unroll
        for (uint i = 0; i < OSKPT; i++) key[i] = KMAP(kin[base + first + i * GPK_WARP], kmap_in);
    } else {
        #pragma unroll
        for (uint i = 0; i < OSKPT; i++) {
            const uint p = first + i * GPK_WARP;
            key[i] = p < valid ? KMAP(kin[base + p], kmap_in) : KEY_MAX;
        }
    }

    /* 2. rank in the warp */
    uint rank[OSKPT];
    {
        __local uint *wc = counters + warp * D;
#ifdef GPK_WARP_RANK
        const uint lt = (1u << lane) - 1u;
#endif
        #pragma unroll
        for (uint i = 0; i < OSKPT; i++) {
            const uint d = DIGIT(key[i], shift, mask);
#ifdef GPK_WARP_RANK
            /* bits above the pass's width are 0 in every lane: no change */
            uint peers = 0xFFFFFFFFu;
            #pragma unroll
            for (uint b = 0; b < GPK_OS_MAXBITS; b++) peers = GPK_MATCH_BIT(peers, d, 1u << b);
            const uint below = popcount(peers & lt);
            const uint leader = 31u - clz(peers);
            /* An atomic, so that the next key's leader, maybe another lane,
             * reads this count: it runs after the shuffle, which waits for
             * the value the atomic returns. */
            uint old = 0;
            if (lane == leader) old = atomic_add(&wc[d], below + 1u);
            rank[i] = GPK_SHFL(old, leader) + below;
#else
            rank[i] = wc[d]++;
#endif
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    /* 3. per digit: item t owns digits t*bpt .. t*bpt + bpt - 1 */
    uint total[GPK_OS_BPT], start[GPK_OS_BPT];
    uint my_sum = 0;
    #pragma unroll
    for (uint u = 0; u < GPK_OS_BPT; u++) {
        const uint d = t * bpt + u;
        uint c = 0;
        if (u < bpt && d < D)
            for (uint w = 0; w < W; w++) c += counters[w * D + d];
        total[u] = c;
        my_sum += c;
    }
    #pragma unroll
    for (uint u = 0; u < GPK_OS_BPT; u++) {
        const uint d = t * bpt + u;
        if (u < bpt && d < D)
            gpk_store_status(&status[tile * D + d], (tile == 0 ? GPK_OS_FLAG_INCL : GPK_OS_FLAG_AGG) | total[u]);
    }
    {
#if defined(GPK_WARP_RANK) && !defined(GPK_OS_PLAIN_SCAN)
        /* exclusive scan over the group: within each warp by shuffles, then
         * the warps' sums (one barrier instead of the general scan's log I) */
        uint incl = my_sum;
        #pragma unroll
        for (uint o = 1; o < GPK_WARP; o <<= 1) {
            const uint y = GPK_SHFL_UP(incl, o);
            if (lane >= o) incl += y;
        }
        __local uint *warp_sum = sscan + I; /* past the emulation's lane slots */
        if (lane == GPK_WARP - 1) warp_sum[warp] = incl;
        barrier(CLK_LOCAL_MEM_FENCE);
        uint run = incl - my_sum;
        for (uint w = 0; w < warp; w++) run += warp_sum[w];
#else
        uint all;
        uint run = gpk_group_scan_excl(my_sum, sscan, &all);
#endif
        #pragma unroll
        for (uint u = 0; u < GPK_OS_BPT; u++) {
            start[u] = run;
            run += total[u];
        }
    }
    #pragma unroll
    for (uint u = 0; u < GPK_OS_BPT; u++) {
        const uint d = t * bpt + u;
        if (u < bpt && d < D) {
            uint run = start[u];
            for (uint w = 0; w < W; w++) {
                const uint c = counters[w * D + d];
                counters[w * D + d] = run;
                run += c;
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    /* 4. stage in sorted order; the values are loaded now and stored after
     * the look-back, so their loads are in flight meanwhile */
    #pragma unroll
    for (uint i = 0; i < OSKPT; i++) {
        rank[i] += counters[warp * D + DIGIT(key[i], shift, mask)];
        kbuf[rank[i]] = key[i];
    }
#if GPK_VW
    VAL_T val[OSKPT];
    #pragma unroll
    for (uint i = 0; i < OSKPT; i++) {
        const uint p = first + i * GPK_WARP;
        val[i] = vgen ? (VAL_T)(base + p) : (p < valid ? vin[base + p] : (VAL_T)0);
    }
#endif

    /* 5. look-back */
    #pragma unroll
    for (uint u = 0; u < GPK_OS_BPT; u++) {
        const uint d = t * bpt + u;
        if (u < bpt && d < D) {
            uint excl = 0;
            if (tile > 0) {
                uint back = tile;
                for (;;) {
                    const uint w = gpk_load_status(&status[(back - 1u) * D + d]);
                    if (w == 0) continue; /* not published yet */
                    excl += w & GPK_OS_COUNT_MASK;
                    if (w & GPK_OS_FLAG_INCL) break;
                    back--;
                }
                gpk_store_status(&status[tile * D + d], GPK_OS_FLAG_INCL | (excl + total[u]));
            }
            /* modulo 2^32 on the way, exact once the position is added */
            s_base[d] = bases[boff + d] + excl - start[u];
        }
    }
#if GPK_VW
    #pragma unroll
    for (uint i = 0; i < OSKPT; i++)
        if (first + i * GPK_WARP < valid) vbuf[rank[i]] = val[i];
#endif
    barrier(CLK_LOCAL_MEM_FENCE);

    /* 6. write out */
    #pragma unroll
    for (uint j = 0; j < OSKPT; j++) {
        const uint idx = t + j * I;
        if (idx < valid) {
            const KEY_T k = kbuf[idx];
            const uint o = s_base[DIGIT(k, shift, mask)] + idx;
            kout[o] = KUNMAP(k, kmap_out);
#if GPK_VW
            vout[o] = vbuf[idx];
#endif
        }
    }
}

#undef KEY_T
#undef KEY_MAX
#undef KMAP
#undef KUNMAP
#undef KPT
#undef OSKPT
#undef VAL_T
#undef RB
#undef NHMAX
#undef KEY_VEC
#undef VEC
#undef vstoreV
#undef GPK_NAME2_
#undef GPK_NAME2
#undef GPK_NAME1_
#undef GPK_NAME1
#undef KNAME
#undef KNAME1
#undef DIGIT
#undef GPK_KW
#undef GPK_VW
