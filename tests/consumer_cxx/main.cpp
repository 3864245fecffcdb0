// A C++ program built against the installed gpk: sorts records by a key.
#include <gpk/gpk.h>
#include <gpk/sort.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <vector>

struct particle {
    float x, y, z;
    unsigned cell;
};

int main()
{
    gpk_ctx *ctx = nullptr;
    if (gpk_ctx_create(&ctx, GPK_BACKEND_CPU) != GPK_OK) {
        std::fprintf(stderr, "ctx: %s\n", gpk_last_error(nullptr));
        return 1;
    }
    std::vector<particle> p;
    for (unsigned i = 0; i < 1000; i++) p.push_back({float(i), 0.f, 0.f, (i * 7919u) % 97u});
    std::vector<particle> want = p;
    std::stable_sort(want.begin(), want.end(), [](const particle &a, const particle &b) { return a.cell < b.cell; });
    gpk_sort_opts o = GPK_SORT_OPTS_INIT;
    o.algorithm = GPK_SORT_RADIX; // stable
    gpk_status s = gpk_sort_records(ctx, p.data(), p.size(), sizeof(particle), offsetof(particle, cell), GPK_U32, &o);
    gpk_ctx_destroy(ctx);
    if (s != GPK_OK) return 1;
    for (size_t i = 0; i < p.size(); i++)
        if (p[i].x != want[i].x || p[i].cell != want[i].cell) {
            std::fprintf(stderr, "record %zu differs from std::stable_sort\n", i);
            return 1;
        }
    std::printf("gpk %s C++ consumer ok: 1000 records sorted by cell\n", gpk_version());
    return 0;
}
