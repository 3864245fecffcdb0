/* Seeded particle sets for the octree (include/gpk/octree.h): the paper's
 * uniform and tube distributions and a Plummer sphere.
 *
 * The same (dist, n, seed) gives the same floats on every machine: the
 * generator is gpk_rng (xoshiro256** seeded by splitmix64, gpk/gen.h),
 * and no libm function other than sqrt (correctly rounded
 * by IEEE 754) is used. Directions come from rejection sampling instead of
 * sin/cos, whose last bits differ between C libraries; the cube root of the
 * Plummer radius is a fixed number of Newton steps. The random coordinates
 * used in the rejection tests are multiples of 2^-24 (tube) or 2^-20
 * (sphere directions), so their squares and sums are exact in double and
 * no compiler contraction into fused multiply-adds can change a decision. */
#include "octree_internal.h"
#include "gpk/gen.h"

#include <math.h>

/* A multiple of 2^-24 in [0, 1): exact as a float. */
static double unit24(gpk_rng *r) { return (double)(gpk_rng_next(r) >> 40) * 0x1p-24; }

/* A multiple of 2^-20 in [-1, 1). */
static double signed20(gpk_rng *r) { return (double)(gpk_rng_next(r) >> 43) * 0x1p-20 - 1.0; }

/* (0, 1), never 0 or 1: 53 random bits, offset by half a step. */
static double open01(gpk_rng *r) { return ((double)(gpk_rng_next(r) >> 11) + 0.5) * 0x1p-53; }

/* Cube root of m in (0, 1] by Newton's method from a power-of-two start:
 * the start is within a factor 2 of the root, and 40 steps reach the
 * fixed point; the fixed step count keeps the result the same everywhere.
 * Each step is a separate statement so that no multiply-add is fused
 * (C11 allows fusing only inside one expression). */
static double cbrt_portable(double m)
{
    int e;
    (void)frexp(m, &e); /* m = f * 2^e, f in [0.5, 1) */
    double y = ldexp(1.0, e / 3);
    for (int i = 0; i < 40; i++) {
        const double y2 = y * y;
        const double q = m / y2;
        const double diff = q - y;
        const double step = diff / 3.0;
        y = y + step;
    }
    return y;
}

static void gen_uniform(gpk_rng *r, float *xyz, size_t n)
{
    for (size_t i = 0; i < 3 * n; i++) xyz[i] = (float)unit24(r);
}

/* Uniform in the tube wall 0.45 <= radius <= 0.5 around the axis
 * (0.5, 0.5), z uniform in [0, 1). The offsets (u, v) are multiples of
 * 2^-24 in [-0.5, 0.5), so u*u + v*v is exact and 0.5 + u is an exact float. */
static void gen_tube(gpk_rng *r, float *xyz, size_t n)
{
    const double r_in2 = 0.45 * 0.45, r_out2 = 0.5 * 0.5;
    for (size_t i = 0; i < n; i++) {
        double u, v;
        for (;;) {
            u = unit24(r) - 0.5;
            v = unit24(r) - 0.5;
            const double uu = u * u;
            const double vv = v * v;
            const double rr = uu + vv;
            if (rr >= r_in2 && rr <= r_out2) break;
        }
        xyz[3 * i] = (float)(0.5 + u);
        xyz[3 * i + 1] = (float)(0.5 + v);
        xyz[3 * i + 2] = (float)unit24(r);
    }
}

/* Plummer sphere of scale a = 0.01 centred at (0.5, 0.5, 0.5): the radius
 * from the inverse of the enclosed mass M(r) = r^3 / (r^2 + a^2)^(3/2),
 * r = a / sqrt(m^(-2/3) - 1); radii above 0.5 are drawn again so that
 * every particle lies in the unit cube. The direction is uniform on the
 * sphere: a point uniform in the unit ball (rejection), normalized. */
static void gen_plummer(gpk_rng *r, float *xyz, size_t n)
{
    const double a = 0.01;
    for (size_t i = 0; i < n; i++) {
        double radius;
        for (;;) {
            const double c = cbrt_portable(open01(r));
            const double c2 = c * c;
            const double inv = 1.0 / c2;
            const double denom = inv - 1.0;
            if (!(denom > 0.0)) continue; /* m rounded to 1: an infinite radius */
            radius = a / sqrt(denom);
            if (radius <= 0.5) break;
        }
        double u, v, w, ss;
        for (;;) {
            u = signed20(r);
            v = signed20(r);
            w = signed20(r);
            const double uu = u * u;
            const double vv = v * v;
            const double ww = w * w;
            const double uv = uu + vv;
            ss = uv + ww;
            if (ss > 0.0 && ss <= 1.0) break;
        }
        const double scale = radius / sqrt(ss);
        const double dx = u * scale;
        const double dy = v * scale;
        const double dz = w * scale;
        xyz[3 * i] = (float)(0.5 + dx);
        xyz[3 * i + 1] = (float)(0.5 + dy);
        xyz[3 * i + 2] = (float)(0.5 + dz);
    }
}

gpk_status gpk_particles_generate(gpk_particle_dist dist, float *xyz, size_t n, uint64_t seed)
{
    if (n > 0 && !xyz) return GPK_EINVAL;
    gpk_rng r;
    gpk_rng_seed(&r, seed);
    switch (dist) {
    case GPK_PARTICLES_UNIFORM: gen_uniform(&r, xyz, n); return GPK_OK;
    case GPK_PARTICLES_TUBE: gen_tube(&r, xyz, n); return GPK_OK;
    case GPK_PARTICLES_PLUMMER: gen_plummer(&r, xyz, n); return GPK_OK;
    }
    return GPK_EINVAL;
}

static const gpk__name_value dist_names[] = {
    {"uniform", GPK_PARTICLES_UNIFORM}, {"tube", GPK_PARTICLES_TUBE}, {"plummer", GPK_PARTICLES_PLUMMER}};
GPK__NAME_FUNCTIONS(gpk_particle_dist, gpk_particle_dist_name, gpk_particle_dist_parse, dist_names)
