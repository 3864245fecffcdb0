/* H100 pairs sweep v7: u32/u32 (384, 12, 3), u64/u64 (384, 12, 2) */
constexpr PassShape kPassShapes[] = {
    /* bits key val  threads items blocks/SM */
    {8, 4, 0, 256, 24, 3},
    {8, 4, 4, 384, 12, 3},
    {8, 4, 8, 384, 12, 2},
    {8, 8, 0, 384, 14, 2},
    {8, 8, 4, 384, 12, 2},
    {8, 8, 8, 384, 12, 2},
    {10, 4, 0, 512, 16, 2},
    {10, 4, 4, 512, 12, 2},
    {10, 4, 8, 512, 10, 2},
    {10, 8, 0, 512, 12, 2},
    {10, 8, 4, 512, 10, 2},
    {10, 8, 8, 512, 8, 2},
    {11, 4, 0, 512, 16, 2},
    {11, 4, 4, 512, 12, 2},
    {11, 4, 8, 512, 10, 2},
    {11, 8, 0, 512, 12, 2},
    {11, 8, 4, 512, 10, 2},
    {11, 8, 8, 512, 8, 2},
};

constexpr DefaultDigits kDefaultDigits[] = {
    /* key bytes, range up to (bits), widest digit */
    {4, 11, 11}, /* one pass: a 10-bit PIC cell key is read and written once */
    {4, 32, 8},
    {8, 11, 11},
    {8, 64, 8},
};
