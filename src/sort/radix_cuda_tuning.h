/* The CUDA radix sort's tuning table, included by radix_cuda.cu only.
 *
 * kPassShapes: the pass kernel's shape per (digit table bits, key bytes,
 * value bytes): threads per block, keys per thread, and the blocks an SM
 * the kernel is compiled for (__launch_bounds__). kDefaultDigits: how wide
 * the digits of the default pass plan are per key width and bit range.
 *
 * Measured on sm_90 (docs/perf/radix.md, "Tile shapes as data", with the
 * sweeps and commands); the same table serves every architecture until one
 * is measured there. A row's shape changes only the speed, never the
 * result: every shape is checked by the same tests.
 *
 * bench/tuning/variant.py rewrites rows of this table for a tuning build
 * (-DGPK_RADIX_CUDA_TUNING); keep one row per line in this layout. */
#ifndef GPK_RADIX_CUDA_TUNING_H
#define GPK_RADIX_CUDA_TUNING_H

constexpr PassShape kPassShapes[] = {
    /* bits key val  threads items blocks/SM */
    {8, 4, 0, 384, 20, 3},  {8, 4, 4, 256, 24, 2},  {8, 4, 8, 384, 12, 2},  {8, 8, 0, 384, 12, 3},
    {8, 8, 4, 384, 12, 2},  {8, 8, 8, 256, 16, 2},  {10, 4, 0, 512, 16, 2}, {10, 4, 4, 512, 12, 2},
    {10, 4, 8, 512, 10, 2}, {10, 8, 0, 512, 12, 2}, {10, 8, 4, 512, 10, 2}, {10, 8, 8, 512, 8, 2},
    {11, 4, 0, 512, 16, 2}, {11, 4, 4, 512, 12, 2}, {11, 4, 8, 512, 10, 2}, {11, 8, 0, 512, 12, 2},
    {11, 8, 4, 512, 10, 2}, {11, 8, 8, 512, 8, 2},
};

constexpr DefaultDigits kDefaultDigits[] = {
    /* key bytes, range up to (bits), widest digit */
    {4, 11, 11}, /* one pass: a 10-bit PIC cell key is read and written once */
    {4, 32, 8},
    {8, 11, 11},
    {8, 64, 8},
};

#endif
