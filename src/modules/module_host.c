/* The library functions a backend module's code calls, under their usual
 * names, forwarding to libgpk's (the table the module's entry was given):
 * a module has no copy of the library's state. Built into each module
 * only (module.h). */
#include <stdio.h>

#include "module.h"
#include "../sort/multi_internal.h"
#include "../sort/radix_internal.h"

static const gpk__module_host *host_table;

void gpk__module_host_set(const gpk__module_host *host) { host_table = host; }

gpk_status gpk__fail(gpk_ctx *ctx, gpk_status s, const char *fmt, ...)
{
    char msg[GPK_ERRLEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return host_table->fail(ctx, s, "%s", msg);
}

void gpk__clear_error(gpk_ctx *ctx) { host_table->clear_error(ctx); }

int gpk__env_int(const char *name, int fallback) { return host_table->env_int(name, fallback); }

void *gpk__host_alloc_large(size_t bytes) { return host_table->host_alloc_large(bytes); }

void gpk__host_copy(void *dst, const void *src, size_t bytes, int threads)
{
    host_table->host_copy(dst, src, bytes, threads);
}

int gpk__multi_plan(const gpk_ctx *ctx, unsigned key_width, int out_in_temp, size_t total)
{
    return host_table->multi_plan(ctx, key_width, out_in_temp, total);
}

gpk_status gpk__sort_shards(gpk_ctx *ctx, gpk_type key_type, size_t value_width, gpk_shard *shards,
                            const gpk_sort_opts *opts, const char *fn, int out_in_temp)
{
    return host_table->sort_shards(ctx, key_type, value_width, shards, opts, fn, out_in_temp);
}

gpk_status gpk__radix_bits_check(gpk_ctx *ctx, const char *fn, gpk_type key_type, gpk_radix_opts *o)
{
    return host_table->radix_bits_check(ctx, fn, key_type, o);
}

gpk_status gpk__sort_widths_check(gpk_ctx *ctx, const char *fn, const void *array, const char *what,
                                  gpk_type key_type, size_t value_width, size_t *key_width)
{
    return host_table->sort_widths_check(ctx, fn, array, what, key_type, value_width, key_width);
}

gpk_status gpk__octree_check_args(gpk_ctx *ctx, const void *xyz, const char *xyz_name, size_t n,
                                  unsigned leaf_threshold, gpk_octree_scheme scheme, const void *tree)
{
    return host_table->octree_check_args(ctx, xyz, xyz_name, n, leaf_threshold, scheme, tree);
}

void gpk__octree_root_from_bounds(const float lo[3], const float hi[3], octree_root *root)
{
    host_table->octree_root_from_bounds(lo, hi, root);
}
