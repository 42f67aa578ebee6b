/*
 * scan_avx2.c — the divisibility scans of the 64-bit and 128-bit paths with
 * AVX2 + FMA: 4 wheel slots per vector.
 *
 * Method and error bounds: scan.c ("The SIMD scans"). Differences from
 * scan_avx512.c: half the vector width, the slots scanned in groups of 16
 * (64-bit) or 12 (128-bit) so that a group's state stays in the 16 vector
 * registers, and a turn's hits combined with compares and ORs.
 *
 * The functions carry a target attribute, so the file builds with plain -O2
 * on any x86-64; pk_dispatch_select calls them only on CPUs that have the
 * instructions. Elsewhere the file is empty.
 */
#include "trial/trial.h"

#if defined(__x86_64__)

#include <immintrin.h>

#define PK_TARGET __attribute__((target("avx2,fma")))

#define NV64 4  /* vectors per group, 64-bit scan: three groups of 16 slots */
#define NV128 3 /* vectors per group, 128-bit scan: four groups of 12 slots */

/* The 48 residues as doubles, in slot order. */
static void residues_f64(double out[PK_WHEEL_SLOTS])
{
    for (unsigned s = 0; s < PK_WHEEL_SLOTS; s++)
        out[s] = (double)pk_wheel_residues[s];
}

/* q = round-to-nearest(v): |v| < 2^51 here, so this is exact integer rounding. */
#define ROUND(v) _mm256_round_pd((v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
/* Nonzero if some lane of r[0..count) equals the same lane of target. */
PK_TARGET static inline int any_equal(const __m256d *r, unsigned count, __m256d target)
{
    __m256d acc = _mm256_cmp_pd(r[0], target, _CMP_EQ_OQ);
    for (unsigned v = 1; v < count; v++)
        acc = _mm256_or_pd(acc, _mm256_cmp_pd(r[v], target, _CMP_EQ_OQ));
    return _mm256_movemask_pd(acc);
}

/*
 * Scan turns [lo, hi) for the 4 * NV64 slots starting at res: the first turn
 * in which some slot's candidate divides n (as nh + nl, see scan.c), or hi.
 */
PK_TARGET static uint64_t group64(double nh, double nl, const double *res, uint64_t lo,
                                  uint64_t hi)
{
    const __m256d vnh = _mm256_set1_pd(nh), vneg = _mm256_set1_pd(-nl);
    const __m256d two = _mm256_set1_pd(2.0), step = _mm256_set1_pd((double)PK_WHEEL);
    const __m256d base = _mm256_set1_pd((double)(PK_WHEEL * lo));
    __m256d d[NV64], x[NV64];
    int m = 0;
    if (lo >= hi)
        return hi;
#pragma GCC unroll 8
    for (unsigned v = 0; v < NV64; v++) {
        d[v] = _mm256_add_pd(base, _mm256_loadu_pd(res + 4 * v));
        x[v] = _mm256_div_pd(_mm256_set1_pd(1.0), d[v]);
    }
#define TEST64()                                                                  \
    do {                                                                          \
        __m256d e[NV64];                                                          \
        _Pragma("GCC unroll 8") for (unsigned v = 0; v < NV64; v++)               \
        {                                                                         \
            __m256d q = ROUND(_mm256_mul_pd(vnh, x[v]));                          \
            e[v] = _mm256_fnmadd_pd(q, d[v], vnh);                                \
        }                                                                         \
        m = any_equal(e, NV64, vneg);                                             \
    } while (0)
#define NEWTON(xv, dv) _mm256_mul_pd((xv), _mm256_fnmadd_pd((dv), (xv), two))

    TEST64();
    if (m)
        return lo;
    uint64_t t = lo + 1;
    uint64_t split = hi < PK_FP64_ONE_STEP_TURN ? hi : PK_FP64_ONE_STEP_TURN;
    for (; t < split; t++) {
#pragma GCC unroll 8
        for (unsigned v = 0; v < NV64; v++) {
            d[v] = _mm256_add_pd(d[v], step);
            x[v] = NEWTON(NEWTON(x[v], d[v]), d[v]);
        }
        TEST64();
        if (m)
            return t;
    }
    for (; t < hi; t++) {
#pragma GCC unroll 8
        for (unsigned v = 0; v < NV64; v++) {
            d[v] = _mm256_add_pd(d[v], step);
            x[v] = NEWTON(x[v], d[v]);
        }
        TEST64();
        if (m)
            return t;
    }
    return hi;
#undef TEST64
}

PK_TARGET uint64_t pk_scan64_avx2(uint64_t n, uint64_t turn_lo, uint64_t turn_hi)
{
    double res[PK_WHEEL_SLOTS], nh, nl;
    residues_f64(res);
    pk_n64_split(n, &nh, &nl);
    while (turn_lo < turn_hi) {
        uint64_t t = turn_hi;
        for (unsigned g = 0; g < PK_WHEEL_SLOTS; g += 4 * NV64)
            t = group64(nh, nl, res + g, turn_lo, t);
        if (t == turn_hi)
            return 0;
        uint64_t hit = pk_turn_divisor64(n, t);
        if (hit)
            return hit;
        turn_lo = t + 1; /* not reached: the bounds in scan.c exclude false alarms */
    }
    return 0;
}

/* As group64 for the 128-bit scan, with the parts of n from pk_n128_parts_init. */
PK_TARGET static uint64_t group128(const pk_n128_parts *c, const double *res, uint64_t lo,
                                   uint64_t hi)
{
    const __m256d top = _mm256_set1_pd(c->top), top_int = _mm256_set1_pd(c->top_int);
    const __m256d mid = _mm256_set1_pd(c->mid), mid_int = _mm256_set1_pd(c->mid_int);
    const __m256d neg_low = _mm256_set1_pd(-c->low);
    const __m256d scale = _mm256_set1_pd(PK_N128_SCALE), two = _mm256_set1_pd(2.0);
    const __m256d step = _mm256_set1_pd((double)PK_WHEEL / PK_N128_SCALE);
    const __m256d step_int = _mm256_set1_pd((double)PK_WHEEL);
    const __m256d base = _mm256_set1_pd((double)(PK_WHEEL * lo));
    const __m256d inv = _mm256_set1_pd(1.0 / PK_N128_SCALE);
    __m256d du[NV128], d[NV128], x[NV128]; /* d, d / 2^38 and 2^38 / d */
    int m = 0;
    if (lo >= hi)
        return hi;
#pragma GCC unroll 8
    for (unsigned v = 0; v < NV128; v++) {
        du[v] = _mm256_add_pd(base, _mm256_loadu_pd(res + 4 * v));
        d[v] = _mm256_mul_pd(du[v], inv);
        x[v] = _mm256_div_pd(_mm256_set1_pd(1.0), d[v]);
    }
    /* Three reductions: r = n >> 76 mod d, then (r * 2^38 + the next 38
       bits) mod d twice; the last is left as (r - low) / 2^38. */
#define TEST128()                                                                 \
    do {                                                                          \
        __m256d e[NV128];                                                         \
        _Pragma("GCC unroll 8") for (unsigned v = 0; v < NV128; v++)              \
        {                                                                         \
            __m256d q = ROUND(_mm256_mul_pd(top, x[v]));                          \
            __m256d r = _mm256_fnmadd_pd(q, du[v], top_int);                      \
            q = ROUND(_mm256_mul_pd(_mm256_add_pd(r, mid), x[v]));                \
            r = _mm256_fmadd_pd(_mm256_fnmadd_pd(q, d[v], r), scale, mid_int);    \
            q = ROUND(_mm256_mul_pd(_mm256_sub_pd(r, neg_low), x[v]));            \
            e[v] = _mm256_fnmadd_pd(q, d[v], r);                                  \
        }                                                                         \
        m = any_equal(e, NV128, neg_low);                                         \
    } while (0)
#define ADVANCE128()                                                              \
    _Pragma("GCC unroll 8") for (unsigned v = 0; v < NV128; v++)                  \
    {                                                                             \
        du[v] = _mm256_add_pd(du[v], step_int);                                   \
        d[v] = _mm256_add_pd(d[v], step);                                         \
    }

    TEST128();
    if (m)
        return lo;
    uint64_t t = lo + 1;
    uint64_t split = hi < PK_FP128_ONE_STEP_TURN ? hi : PK_FP128_ONE_STEP_TURN;
    for (; t < split; t++) {
        ADVANCE128();
#pragma GCC unroll 8
        for (unsigned v = 0; v < NV128; v++)
            x[v] = NEWTON(NEWTON(x[v], d[v]), d[v]);
        TEST128();
        if (m)
            return t;
    }
    for (; t < hi; t++) {
        ADVANCE128();
#pragma GCC unroll 8
        for (unsigned v = 0; v < NV128; v++)
            x[v] = NEWTON(x[v], d[v]);
        TEST128();
        if (m)
            return t;
    }
    return hi;
#undef TEST128
#undef ADVANCE128
#undef NEWTON
}

PK_TARGET uint64_t pk_scan128_avx2(pk_u128 n, uint64_t turn_lo, uint64_t turn_hi)
{
    double res[PK_WHEEL_SLOTS];
    pk_n128_parts c;
    residues_f64(res);
    pk_n128_parts_init(n, &c);
    while (turn_lo < turn_hi) {
        uint64_t t = turn_hi;
        for (unsigned g = 0; g < PK_WHEEL_SLOTS; g += 4 * NV128)
            t = group128(&c, res + g, turn_lo, t);
        if (t == turn_hi)
            return 0;
        uint64_t hit = pk_turn_divisor128(n, t);
        if (hit)
            return hit;
        turn_lo = t + 1; /* not reached: the bounds in scan.c exclude false alarms */
    }
    return 0;
}

#endif /* __x86_64__ */
