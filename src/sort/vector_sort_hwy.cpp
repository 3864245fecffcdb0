/* gpk__vector_sort on Highway's vqsort (vector_sort.h). Highway picks the
 * best of the instruction sets it was built for at run time; a forced
 * level (gpk__test.cpu_sort_simd) narrows its set with
 * SetSupportedTargetsForTest, which Highway provides for exactly that.
 * Nothing here throws out of an extern "C" function or prints. */
#include "vector_sort.h"

#include "../core/test_hooks.h"

#include <hwy/contrib/sort/vqsort.h>
#include <hwy/targets.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>

namespace {

/* Highway's targets better than AVX2 on x86 (a lower bit is a better
 * target): its AVX-512 variants. */
constexpr int64_t above_avx2 = HWY_AVX2 - 1;

int level_of(int64_t targets)
{
    if (targets & above_avx2) return GPK_SIMD_AVX512;
    if (targets & HWY_AVX2) return GPK_SIMD_AVX2;
    return GPK_SIMD_PORTABLE;
}

/* The processor's targets, read once before any narrowing. */
int64_t native_targets()
{
    static const int64_t t = hwy::SupportedTargets();
    return t;
}

std::mutex narrowing;
std::atomic<int> applied{-1}; /* the forced level set in Highway, -1: none */

/* The level after the hook's forced level (if any) is applied to Highway.
 * Only a change calls Highway (tests set the hook between sorts). */
int current_level()
{
    const int native = level_of(native_targets());
    const long long forced = gpk__hook(gpk__test.cpu_sort_simd, -1);
    const int want = forced < 0 || forced >= native ? -1 : (int)forced;
    if (applied.load(std::memory_order_acquire) != want) {
        std::lock_guard<std::mutex> lock(narrowing);
        if (applied.load(std::memory_order_relaxed) != want) {
            if (want == GPK_SIMD_AVX2) hwy::SetSupportedTargetsForTest(native_targets() & ~above_avx2);
            else hwy::SetSupportedTargetsForTest(0);
            (void)hwy::SupportedTargets(); /* re-chooses the dispatched target */
            applied.store(want, std::memory_order_release);
        }
    }
    return want < 0 ? native : want;
}

/* One sorter (its buffer) per thread, made on a thread's first sort. */
const hwy::Sorter *thread_sorter()
{
    thread_local std::unique_ptr<hwy::Sorter> sorter;
    if (!sorter) sorter.reset(new (std::nothrow) hwy::Sorter());
    return sorter.get();
}

template <typename T> void sort_as(const hwy::Sorter &s, void *keys, size_t n, int descending)
{
    if (descending) s(static_cast<T *>(keys), n, hwy::SortDescending());
    else s(static_cast<T *>(keys), n, hwy::SortAscending());
}

} // namespace

extern "C" int gpk__vector_sort_level(void)
{
    try {
        return current_level();
    } catch (...) {
        return GPK_SIMD_PORTABLE;
    }
}

extern "C" int gpk__vector_sort(void *keys, size_t n, unsigned width, int is_signed, int descending)
{
    try {
        if (current_level() == GPK_SIMD_PORTABLE || (width != 4 && width != 8)) return -1;
        const hwy::Sorter *s = thread_sorter();
        if (!s) return -1;
        if (width == 4) {
            if (is_signed) sort_as<int32_t>(*s, keys, n, descending);
            else sort_as<uint32_t>(*s, keys, n, descending);
        } else {
            if (is_signed) sort_as<int64_t>(*s, keys, n, descending);
            else sort_as<uint64_t>(*s, keys, n, descending);
        }
        return 0;
    } catch (...) {
        return -1;
    }
}

extern "C" int gpk__vector_sort_items(uint64_t *items, size_t n)
{
    try {
        if (current_level() == GPK_SIMD_PORTABLE) return -1;
        const hwy::Sorter *s = thread_sorter();
        if (!s) return -1;
        (*s)(items, n, hwy::SortAscending());
        return 0;
    } catch (...) {
        return -1;
    }
}
