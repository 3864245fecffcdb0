/* CUDA-R-quicksort (Manca et al. 2015, Section 5): the recursive variant,
 * with CUDA dynamic parallelism as sm_90 supports it (CDP2: no
 * cudaDeviceSynchronize in device code; fire-and-forget and tail launches).
 *
 * This file compiles quick_cuda.cu a second time, with relocatable device
 * code and its own device link (see CMakeLists.txt), so that only the
 * recursive variant pays for separable compilation. Everything but the
 * recursion is shared: the partition, plan-time classification, finish and
 * record kernels, the key maps and the host code.
 *
 * One recursion step, for a segment at depth d (its data in buf(d)):
 *   node_kernel<<<1, 1>>>      launches the partition grid of the segment
 *                              (fire-and-forget) and its continuation into
 *                              the tail-launch stream, which starts only
 *                              once the node grid and all the work it
 *                              launched have finished;
 *   cont_kernel<<<1, 1>>>      reads the segment's counters, appends the
 *                              finished children to the item list and
 *                              launches a node per big child (fire and
 *                              forget).
 * Each step nests two launches deeper and CUDA allows 24 levels, so a
 * segment still big at depth kCdpDepth is handed back to the iterative
 * loop (list 1). Item and list slots are taken with one 64-bit atomicAdd
 * on (count, blocks) pairs, so the block offsets stay increasing in slot
 * order, as the finish kernel's binary search needs.
 */
#define GPK_QUICK_CDP_TU 1
#include "quick_cuda.cu"

namespace {

enum CdpError : uint32_t { CDP_ERR_CAPACITY = 1, CDP_ERR_LAUNCH = 2 };

template <class K, class V> struct CdpArgs {
    const K *kin;
    const V *vin;
    K *kA, *kB;
    V *vA, *vB;
    Twiddle<K> map;
    PlanArgs<K> pa;       /* classification flags, item list, list 1 */
    Seg<K> *pool_seg;
    Part<K> *pool_part;
    uint32_t *pool_ctr;   /* [0] slots taken, [1] = 0 */
    uint32_t cap_pool;
};

/* buf(d): the buffer segments of depth d live in (d = 0: the input). */
__device__ __forceinline__ uint8_t buf_of_depth(int d) { return d == 0 ? BUF_IN : (d & 1) ? BUF_B : BUF_A; }

__device__ __forceinline__ void cdp_error(Ctl *ctl, uint32_t code) { atomicOr(&ctl->overflow, code); }

template <class K, class V, bool HAS_V> __global__ void node_kernel(CdpArgs<K, V> a, uint32_t slot, int depth);

/* Takes a pool slot for a big child and launches its node. */
template <class K, class V, bool HAS_V>
__device__ void spawn(const CdpArgs<K, V> &a, const Child<K> &c, int depth)
{
    const uint32_t slot = atomicAdd(&a.pool_ctr[0], 1u);
    if (slot >= a.cap_pool) {
        cdp_error(a.pa.ctl, CDP_ERR_CAPACITY);
        return;
    }
    a.pool_seg[slot] = Seg<K>{c.off, c.len, c.min, c.max};
    a.pool_part[slot] = Part<K>{0u, 0u, (K)~(K)0, (K)0, (K)~(K)0, (K)0};
    node_kernel<K, V, HAS_V><<<1, 1, 0, cudaStreamFireAndForget>>>(a, slot, depth);
    if (cudaGetLastError() != cudaSuccess) cdp_error(a.pa.ctl, CDP_ERR_LAUNCH);
}

/* After the partition of pool slot `slot` (depth d): its children. */
template <class K, class V, bool HAS_V> __global__ void cont_kernel(CdpArgs<K, V> a, uint32_t slot, int depth)
{
    const Seg<K> sg = a.pool_seg[slot];
    const Part<K> pt = a.pool_part[slot];
    const uint8_t cbuf = buf_of_depth(depth + 1);
    const K pivot = midpoint_up(sg.min, sg.max);
    const Child<K> ch[3] = {
        Child<K>{sg.off, pt.lt, pt.lt_min, pt.lt_max, cbuf, false},
        Child<K>{sg.off + pt.lt, sg.len - pt.lt - pt.gt, pivot, pivot, cbuf, true},
        Child<K>{sg.off + sg.len - pt.gt, pt.gt, pt.gt_min, pt.gt_max, cbuf, false},
    };
    Ctl *ctl = a.pa.ctl;
    for (int k = 0; k < 3; k++) {
        bool big, item;
        uint32_t tiles, blocks;
        Item<K> it;
        classify(a.pa, ch[k], &big, &tiles, &item, &it, &blocks);
        if (item) {
            /* (nitems, item_blocks) as one word: slot and first block */
            static_assert(offsetof(Ctl, item_blocks) == offsetof(Ctl, nitems) + 4 && offsetof(Ctl, nitems) % 8 == 0,
                          "item counters form one 64-bit word");
            const u64 old = atomicAdd(reinterpret_cast<u64 *>(&ctl->nitems), ((u64)blocks << 32) | 1ull);
            const uint32_t idx = (uint32_t)old;
            if (idx < a.pa.cap_items) {
                a.pa.items[idx] = it;
                a.pa.item_blocks[idx] = (uint32_t)(old >> 32);
            } else {
                cdp_error(ctl, CDP_ERR_CAPACITY);
            }
        }
        if (big) {
            if (depth + 1 < kCdpDepth) {
                spawn<K, V, HAS_V>(a, ch[k], depth + 1);
            } else {
                /* left for the iterative loop: list 1, (nbig, big_tiles) as one word */
                static_assert(offsetof(Ctl, big_tiles) == offsetof(Ctl, nbig) + 4 && offsetof(Ctl, nbig) % 8 == 0,
                              "list counters form one 64-bit word");
                const u64 old = atomicAdd(reinterpret_cast<u64 *>(&ctl->nbig), ((u64)tiles << 32) | 1ull);
                const uint32_t idx = (uint32_t)old;
                if (idx < a.pa.cap_items && idx < (uint32_t)(a.cap_pool / kCdpDepth)) {
                    a.pa.next[idx] = Seg<K>{ch[k].off, ch[k].len, ch[k].min, ch[k].max};
                    a.pa.next_tiles[idx] = (uint32_t)(old >> 32);
                    a.pa.next_parts[idx] = Part<K>{0u, 0u, (K)~(K)0, (K)0, (K)~(K)0, (K)0};
                } else {
                    cdp_error(ctl, CDP_ERR_CAPACITY);
                }
            }
        }
    }
}

template <class K, class V, bool HAS_V> __global__ void node_kernel(CdpArgs<K, V> a, uint32_t slot, int depth)
{
    using S = QShape<K, V, HAS_V>;
    const Seg<K> sg = a.pool_seg[slot];
    const uint8_t sb = buf_of_depth(depth), db = buf_of_depth(depth + 1);
    PartArgs<K, V> p;
    p.segs = a.pool_seg + slot;
    p.seg_tiles = a.pool_ctr + 1; /* one segment, first tile 0 */
    p.nseg = 1;
    p.parts = a.pool_part + slot;
    p.kin = sb == BUF_IN ? a.kin : sb == BUF_A ? a.kA : a.kB;
    p.vin = sb == BUF_IN ? a.vin : sb == BUF_A ? a.vA : a.vB;
    p.kout = db == BUF_A ? a.kA : a.kB;
    p.vout = db == BUF_A ? a.vA : a.vB;
    p.map = a.map;
    p.raw = sb == BUF_IN && a.pa.in_raw;
    const uint32_t tiles = (uint32_t)(((u64)sg.len + S::TILE - 1) / S::TILE);
    partition_kernel<K, V, HAS_V, !HAS_V><<<tiles, kThreads, 0, cudaStreamFireAndForget>>>(p);
    if (cudaGetLastError() != cudaSuccess) cdp_error(a.pa.ctl, CDP_ERR_LAUNCH);
    cont_kernel<K, V, HAS_V><<<1, 1, 0, cudaStreamTailLaunch>>>(a, slot, depth);
    if (cudaGetLastError() != cudaSuccess) cdp_error(a.pa.ctl, CDP_ERR_LAUNCH);
}

/* Device-side launches stay pending until they run; the default limit
 * (2048) is below what a wide tree has in flight. Set once per process
 * and device; failure is not fatal (a launch that does not fit is
 * reported by the kernels). */
static void raise_pending_limit()
{
    size_t cur = 0;
    if (cudaDeviceGetLimit(&cur, cudaLimitDevRuntimePendingLaunchCount) == cudaSuccess && cur < 32768)
        (void)cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 32768);
    (void)cudaGetLastError();
}

template <class K, class V, bool HAS_V>
static gpk_status cdp_phase(gpk_ctx *ctx, const DevSort<K, V> &d, const Lists<K> &l, const PlanArgs<K> &pa,
                            Ctl *c, cudaStream_t stream)
{
    raise_pending_limit();
    /* the root: list 0's one segment (and its zeroed counters) into slot 0 */
    cudaError_t e = cudaMemcpyAsync(l.pool_seg, l.segs[0], sizeof(Seg<K>), cudaMemcpyDeviceToDevice, stream);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(l.pool_part, l.parts[0], sizeof(Part<K>), cudaMemcpyDeviceToDevice, stream);
    if (e == cudaSuccess) e = cudaMemsetAsync(l.pool_ctr, 0, 2 * sizeof(uint32_t), stream);
    /* slot 0 is taken: pool_ctr[0] = 1 */
    if (e == cudaSuccess) e = cudaMemsetAsync(l.pool_ctr, 1, 1, stream);
    /* list 1 starts empty (the first plan left nbig = 1 for list 0) */
    if (e == cudaSuccess) e = cudaMemsetAsync(&l.ctl->nbig, 0, 2 * sizeof(uint32_t), stream);
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "recursive quicksort: setup");

    CdpArgs<K, V> a;
    a.kin = d.kin;
    a.vin = d.vin;
    a.kA = d.kA;
    a.kB = d.kB;
    a.vA = d.vA;
    a.vB = d.vB;
    a.map = d.map;
    a.pa = pa;
    a.pa.in_raw = d.raw;
    a.pa.next = l.segs[1];
    a.pa.next_tiles = l.tiles[1];
    a.pa.next_parts = l.parts[1];
    a.pool_seg = l.pool_seg;
    a.pool_part = l.pool_part;
    a.pool_ctr = l.pool_ctr;
    a.cap_pool = l.cap_pool;
    node_kernel<K, V, HAS_V><<<1, 1, 0, stream>>>(a, 0u, 0);
    e = cudaGetLastError();
    if (e != cudaSuccess) return gpk__cuda_fail(ctx, e, "recursive quicksort: launch");
    gpk_status s = read_ctl(ctx, l.ctl, c, stream);
    if (s != GPK_OK) return s;
    return GPK_OK;
}

} // namespace
