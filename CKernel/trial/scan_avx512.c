/*
 * scan_avx512.c — the divisibility scans of the 64-bit and 128-bit paths with
 * AVX-512 (F + DQ): 8 wheel slots per vector.
 *
 * Method and error bounds: scan.c ("The SIMD scans"). All 48 slots of a
 * turn are six vectors, kept in registers for the whole scan.
 *
 * The functions carry a target attribute, so the file builds with plain -O2
 * on any x86-64; pk_dispatch_select calls them only on CPUs that have the
 * instructions. Elsewhere the file is empty.
 */
#include "trial/trial.h"

#if defined(__x86_64__)

#include <immintrin.h>

#define PK_TARGET __attribute__((target("avx512f,avx512dq")))

#define NV64 6  /* vectors per group, 64-bit scan: all 48 slots at once */
_Static_assert(NV64 == 6, "TEST64 combines exactly six vectors");
#define NV128 6 /* vectors per group, 128-bit scan: all 48 slots at once */
_Static_assert(NV128 == 6, "TEST128 combines exactly six vectors");

/* The 48 residues as doubles, in slot order. */
static void residues_f64(double out[PK_WHEEL_SLOTS])
{
    for (unsigned s = 0; s < PK_WHEEL_SLOTS; s++)
        out[s] = (double)pk_wheel_residues[s];
}

/* q = round-to-nearest(v): |v| < 2^51 here, so this is exact integer rounding. */
#define ROUND(v) _mm512_roundscale_pd((v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
/* min(|a|, |b|) (vrangepd: absolute minimum, sign cleared). Hits are found by
   taking the smallest |remainder| of a turn and comparing once: compares into
   mask registers compete with the FMAs for the same pipes, vrangepd does not. */
#define ABSMIN(a, b) _mm512_range_pd((a), (b), 0x0A)

/*
 * Scan turns [lo, hi) for the 8 * NV64 slots starting at res: the first turn
 * in which some slot's candidate divides n (as nh + nl, see scan.c), or hi.
 */
PK_TARGET static uint64_t group64(double nh, double nl, const double *res, uint64_t lo,
                                  uint64_t hi)
{
    const __m512d vnh = _mm512_set1_pd(nh), vneg = _mm512_set1_pd(-nl);
    const __m512d two = _mm512_set1_pd(2.0), step = _mm512_set1_pd((double)PK_WHEEL);
    const __m512d base = _mm512_set1_pd((double)(PK_WHEEL * lo));
    __m512d d[NV64], x[NV64];
    __mmask8 m = 0;
    if (lo >= hi)
        return hi;
#pragma GCC unroll 8
    for (unsigned v = 0; v < NV64; v++) {
        d[v] = _mm512_add_pd(base, _mm512_loadu_pd(res + 8 * v));
        x[v] = _mm512_div_pd(_mm512_set1_pd(1.0), d[v]);
    }
#define TEST64()                                                                  \
    do {                                                                          \
        __m512d e[NV64];                                                          \
        _Pragma("GCC unroll 8") for (unsigned v = 0; v < NV64; v++)               \
        {                                                                         \
            __m512d q = ROUND(_mm512_mul_pd(vnh, x[v]));                          \
            e[v] = _mm512_sub_pd(_mm512_fnmadd_pd(q, d[v], vnh), vneg);           \
        }                                                                         \
        __m512d a = ABSMIN(ABSMIN(e[0], e[1]), ABSMIN(e[2], e[3]));               \
        a = ABSMIN(a, ABSMIN(e[4], e[5]));                                        \
        m = _mm512_cmp_pd_mask(a, _mm512_setzero_pd(), _CMP_EQ_OQ);               \
    } while (0)
#define NEWTON(xv, dv) _mm512_mul_pd((xv), _mm512_fnmadd_pd((dv), (xv), two))

    TEST64();
    if (m)
        return lo;
    uint64_t t = lo + 1;
    uint64_t split = hi < PK_FP64_ONE_STEP_TURN ? hi : PK_FP64_ONE_STEP_TURN;
    for (; t < split; t++) {
#pragma GCC unroll 8
        for (unsigned v = 0; v < NV64; v++) {
            d[v] = _mm512_add_pd(d[v], step);
            x[v] = NEWTON(NEWTON(x[v], d[v]), d[v]);
        }
        TEST64();
        if (m)
            return t;
    }
    for (; t < hi; t++) {
#pragma GCC unroll 8
        for (unsigned v = 0; v < NV64; v++) {
            d[v] = _mm512_add_pd(d[v], step);
            x[v] = NEWTON(x[v], d[v]);
        }
        TEST64();
        if (m)
            return t;
    }
    return hi;
#undef TEST64
}

PK_TARGET uint64_t pk_scan64_avx512(uint64_t n, uint64_t turn_lo, uint64_t turn_hi)
{
    double res[PK_WHEEL_SLOTS], nh, nl;
    residues_f64(res);
    pk_n64_split(n, &nh, &nl);
    while (turn_lo < turn_hi) {
        uint64_t t = turn_hi;
        for (unsigned g = 0; g < PK_WHEEL_SLOTS; g += 8 * NV64)
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
    const __m512d top = _mm512_set1_pd(c->top), top_int = _mm512_set1_pd(c->top_int);
    const __m512d mid = _mm512_set1_pd(c->mid), mid_int = _mm512_set1_pd(c->mid_int);
    const __m512d neg_low = _mm512_set1_pd(-c->low);
    const __m512d scale = _mm512_set1_pd(PK_N128_SCALE), two = _mm512_set1_pd(2.0);
    const __m512d step = _mm512_set1_pd((double)PK_WHEEL / PK_N128_SCALE);
    const __m512d step_int = _mm512_set1_pd((double)PK_WHEEL);
    const __m512d base = _mm512_set1_pd((double)(PK_WHEEL * lo));
    const __m512d inv = _mm512_set1_pd(1.0 / PK_N128_SCALE);
    __m512d du[NV128], d[NV128], x[NV128]; /* d, d / 2^38 and 2^38 / d */
    __mmask8 m = 0;
    if (lo >= hi)
        return hi;
#pragma GCC unroll 8
    for (unsigned v = 0; v < NV128; v++) {
        du[v] = _mm512_add_pd(base, _mm512_loadu_pd(res + 8 * v));
        d[v] = _mm512_mul_pd(du[v], inv);
        x[v] = _mm512_div_pd(_mm512_set1_pd(1.0), d[v]);
    }
    /* Three reductions: r = n >> 76 mod d, then (r * 2^38 + the next 38
       bits) mod d twice; the last is left as (r - low) / 2^38. */
#define TEST128()                                                                 \
    do {                                                                          \
        __m512d e[NV128];                                                         \
        _Pragma("GCC unroll 8") for (unsigned v = 0; v < NV128; v++)              \
        {                                                                         \
            __m512d q = ROUND(_mm512_mul_pd(top, x[v]));                          \
            __m512d r = _mm512_fnmadd_pd(q, du[v], top_int);                      \
            q = ROUND(_mm512_mul_pd(_mm512_add_pd(r, mid), x[v]));                \
            r = _mm512_fmadd_pd(_mm512_fnmadd_pd(q, d[v], r), scale, mid_int);    \
            q = ROUND(_mm512_mul_pd(_mm512_sub_pd(r, neg_low), x[v]));            \
            e[v] = _mm512_sub_pd(_mm512_fnmadd_pd(q, d[v], r), neg_low);          \
        }                                                                         \
        __m512d a = ABSMIN(ABSMIN(e[0], e[1]), ABSMIN(e[2], e[3]));               \
        a = ABSMIN(a, ABSMIN(e[4], e[5]));                                        \
        m = _mm512_cmp_pd_mask(a, _mm512_setzero_pd(), _CMP_EQ_OQ);               \
    } while (0)
#define ADVANCE128()                                                              \
    _Pragma("GCC unroll 8") for (unsigned v = 0; v < NV128; v++)                  \
    {                                                                             \
        du[v] = _mm512_add_pd(du[v], step_int);                                   \
        d[v] = _mm512_add_pd(d[v], step);                                         \
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

PK_TARGET uint64_t pk_scan128_avx512(pk_u128 n, uint64_t turn_lo, uint64_t turn_hi)
{
    double res[PK_WHEEL_SLOTS];
    pk_n128_parts c;
    residues_f64(res);
    pk_n128_parts_init(n, &c);
    while (turn_lo < turn_hi) {
        uint64_t t = turn_hi;
        for (unsigned g = 0; g < PK_WHEEL_SLOTS; g += 8 * NV128)
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
