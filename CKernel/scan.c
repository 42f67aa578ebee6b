/*
 * scan.c — the divisibility tests of the 64-bit and 128-bit paths: the
 * portable implementation, the helpers the SIMD implementations share
 * (scan_avx2.c, scan_avx512.c), and the run-time choice between them.
 *
 * A scan tests whole turns of the 210-wheel: slot s of turn t holds the
 * candidate d = 210 t + r_s (r_s in pk_wheel_residues), and returns the
 * smallest candidate dividing n, or 0. All candidates are >= 2^20
 * (PK_FP_MIN_DIVISOR) and below 2^32 (64-bit n: d <= sqrt(n); 128-bit n:
 * the caller stops at PK_FP128_MAX_DIVISOR). No scan divides per candidate.
 *
 * Reciprocals. The candidates of one slot form the progression d, d + 210,
 * d + 420, ...; each slot keeps x ~ 1/d in a double and carries it to the
 * next turn with Newton's step x' = x (2 - d' x). Every scan seeds x with one
 * correctly rounded division per slot when it starts. Let eta bound
 * |x d - 1|. If the previous x had error eta_p for d - 210, then
 * e = 1 - x d satisfies |e| <= 210 / (d - 210) + eta_p (1 + 2^-12), and one
 * step leaves eta <= e^2 + 3 * 2^-53 (the step squares the error; its two
 * roundings add at most 2^-53 each, with or without a fused multiply-add).
 * With eta_p never above 2^-40:
 *   one step,  d >= 2^20:  eta <= 2^-24.5   (not enough on its own, below)
 *   one step,  d >= 2^28:  eta <= 2^-40.5
 *   one step,  d >= 2^29:  eta <= 2^-42.5
 *   two steps, d >= 2^20:  eta <= 2^-49 + 3 * 2^-53 < 2^-48.6
 * The scans take two steps per turn below PK_FP64_ONE_STEP_TURN (candidates
 * below 2^28; 6% of the candidates up to 2^32) on the 64-bit path and below
 * PK_FP128_ONE_STEP_TURN (2^29) on the 128-bit path, one step above.
 *
 * The SIMD scans (4 or 8 slots per vector, FMA). 64-bit n:
 *   n = nh + nl, nh = n with all but its 53 leading bits cleared (an exact
 *   double), 0 <= nl < 2^11 (pk_n64_split);
 *   q = round(nh x)                        nearest integer, nh x < 2^44
 *   r = fma(-q, d, nh) = nh - q d          exact
 *   d | n  <=>  r = -nl.
 * |nh x - nh / d| <= (nh / d)(eta + 2^-53): below 2^44 * 2^-48.5 < 2^-4.5
 * for d in [2^20, 2^28) and 2^36 * 2^-40.4 < 2^-4.4 for d >= 2^28. So
 * |q - nh / d| < 0.55, |r| < 0.55 d (exact: far below 2^53), and
 * |r + nl| < 0.55 d + 2^11 < d, which is zero exactly when d divides n.
 * 128-bit n = T 2^76 + c1 2^38 + c2 with T < 2^52 and c1, c2 < 2^38, all
 * exact doubles (pk_n128_parts_init). Each slot keeps d, D = d / 2^38 and
 * X = 2^38 x (the same Newton iteration, scaled by powers of two):
 *   r0 = T - round(T x) d                                  |T / d| < 2^32
 *   r1 = r0 2^38 + c1 - q1 d,  q1 = round((r0 + c1 / 2^38) X)
 *   r2 = r1 2^38 + c2 - q2 d,  q2 = round((r1 + c2 / 2^38) X)
 *   d | n  <=>  r2 = 0.
 * Each reduction's quotient is below 0.55 * 2^38 + 2^18 < 2^37.2 and its
 * estimate (one rounded sum, one rounded product) is within
 * 2^37.2 (eta + 2^-51) of the true value: below 2^-5.2 for d >= 2^29 (one
 * step) and 2^-11 below (two steps). So every |r_k| < 0.55 d, and the FMA
 * forms are exact: fma(-q1, D, r0) = (r0 2^38 - q1 d) / 2^38 = (r1 - c1) /
 * 2^38 is an integer below 2^39 times 2^-38, and fma(that, 2^38, c1) = r1;
 * the last stage is left as (r2 - c2) / 2^38 and compared with -c2 / 2^38.
 * A turn's remainders are combined into one compare and branch per turn
 * (per group of slots on AVX2); on a hit the turn is tested again with exact
 * remainders (pk_turn_divisor64/128), which also picks its smallest divisor.
 *
 * The portable scan uses the same reciprocals without assuming FMA:
 *   q1 = trunc(n * x)            (n converted to double)
 *   r1 = n - q1 * d              (exact, in wrapping 64-bit integers)
 *   q2 = round(r1 * x)
 *   r2 = r1 - q2 * d             d | n  <=>  r2 == 0
 * r1 is small (|r1| < 2^40), so r1 * x is within 1/4 of r1 / d and r2 == 0
 * exactly when d divides r1, hence n. The 128-bit test takes two Newton
 * steps per turn everywhere and reduces the high word first.
 */
#include <math.h>

#include "pk_internal.h"

const uint8_t pk_wheel_residues[PK_WHEEL_SLOTS] = {
    1,   11,  13,  17,  19,  23,  29,  31,  37,  41,  43,  47,  53,  59,  61,  67,
    71,  73,  79,  83,  89,  97,  101, 103, 107, 109, 113, 121, 127, 131, 137, 139,
    143, 149, 151, 157, 163, 167, 169, 173, 179, 181, 187, 191, 193, 197, 199, 209};

/* Round to the nearest integer for |v| < 2^51 without calling libm. */
static inline double round_small(double v)
{
    const double magic = 6755399441055744.0; /* 1.5 * 2^52 */
    double t = v + magic; /* IEEE rules keep (v + m) - m from being folded */
    return t - magic;
}

static inline int divides64(uint64_t n, double nd, uint64_t d, double x)
{
    uint64_t q1 = (uint64_t)(int64_t)(nd * x);
    int64_t r1 = (int64_t)(n - q1 * d);
    int64_t q2 = (int64_t)round_small((double)r1 * x);
    return r1 - q2 * (int64_t)d == 0;
}

uint64_t pk_scan64_portable(uint64_t n, uint64_t turn_lo, uint64_t turn_hi)
{
    double x[PK_WHEEL_SLOTS];
    double nd = (double)n;
    for (unsigned s = 0; s < PK_WHEEL_SLOTS; s++)
        x[s] = 1.0 / (double)(PK_WHEEL * turn_lo + pk_wheel_residues[s]);
    for (uint64_t t = turn_lo; t < turn_hi; t++) {
        uint64_t base = PK_WHEEL * t;
        if (t != turn_lo) {
            for (unsigned s = 0; s < PK_WHEEL_SLOTS; s++) {
                double d = (double)(base + pk_wheel_residues[s]);
                x[s] = x[s] * (2.0 - d * x[s]);
            }
        }
        unsigned hit = 0;
        for (unsigned s = 0; s < PK_WHEEL_SLOTS; s++)
            hit |= (unsigned)divides64(n, nd, base + pk_wheel_residues[s], x[s]);
        if (hit) {
            for (unsigned s = 0; s < PK_WHEEL_SLOTS; s++)
                if (divides64(n, nd, base + pk_wheel_residues[s], x[s]))
                    return base + pk_wheel_residues[s];
        }
    }
    return 0;
}

static inline int divides128(uint64_t h, uint64_t l, double hd, uint64_t d, double x)
{
    /* hm = h mod d, in [0, d). */
    uint64_t q1 = (uint64_t)(int64_t)(hd * x);
    int64_t r1 = (int64_t)(h - q1 * d);
    int64_t q2 = (int64_t)round_small((double)r1 * x);
    int64_t hm = r1 - q2 * (int64_t)d;
    if (hm < 0)
        hm += (int64_t)d;
    /* n' = hm * 2^64 + l < d * 2^64 <= 2^96; q ~ n' / d < 2^64. */
    double qf = ((double)hm * 18446744073709551616.0 + (double)l) * x;
    if (qf > 18446744073709549568.0) /* the largest double below 2^64 */
        qf = 18446744073709549568.0;
    uint64_t q = (uint64_t)qf;
    int64_t r = (int64_t)(l - q * d); /* n' - q d, exact: |.| < 2^63 */
    int64_t q3 = (int64_t)round_small((double)r * x);
    return r - q3 * (int64_t)d == 0;
}

uint64_t pk_scan128_portable(pk_u128 n, uint64_t turn_lo, uint64_t turn_hi)
{
    double x[PK_WHEEL_SLOTS];
    uint64_t h = (uint64_t)(n >> 64), l = (uint64_t)n;
    double hd = (double)h;
    for (unsigned s = 0; s < PK_WHEEL_SLOTS; s++)
        x[s] = 1.0 / (double)(PK_WHEEL * turn_lo + pk_wheel_residues[s]);
    for (uint64_t t = turn_lo; t < turn_hi; t++) {
        uint64_t base = PK_WHEEL * t;
        if (t != turn_lo) {
            for (unsigned s = 0; s < PK_WHEEL_SLOTS; s++) {
                double d = (double)(base + pk_wheel_residues[s]);
                double y = x[s] * (2.0 - d * x[s]);
                x[s] = y * (2.0 - d * y);
            }
        }
        unsigned hit = 0;
        for (unsigned s = 0; s < PK_WHEEL_SLOTS; s++)
            hit |= (unsigned)divides128(h, l, hd, base + pk_wheel_residues[s], x[s]);
        if (hit) {
            for (unsigned s = 0; s < PK_WHEEL_SLOTS; s++)
                if (divides128(h, l, hd, base + pk_wheel_residues[s], x[s]))
                    return base + pk_wheel_residues[s];
        }
    }
    return 0;
}

/* ------------------------------------------------ shared by the SIMD scans */

void pk_n64_split(uint64_t n, double *hi, double *lo)
{
    unsigned shift = 0;
    while (n >> shift >> 53 != 0)
        shift++;
    uint64_t low_mask = (UINT64_C(1) << shift) - 1;
    *hi = (double)(n & ~low_mask);
    *lo = (double)(n & low_mask);
}

void pk_n128_parts_init(pk_u128 n, pk_n128_parts *out)
{
    const uint64_t m38 = (UINT64_C(1) << 38) - 1;
    out->top_int = (double)(uint64_t)(n >> 76);
    out->top = out->top_int / PK_N128_SCALE;
    out->mid_int = (double)((uint64_t)(n >> 38) & m38);
    out->mid = out->mid_int / PK_N128_SCALE;
    out->low = (double)((uint64_t)n & m38) / PK_N128_SCALE;
}

uint64_t pk_turn_divisor64(uint64_t n, uint64_t t)
{
    for (unsigned s = 0; s < PK_WHEEL_SLOTS; s++) {
        uint64_t d = PK_WHEEL * t + pk_wheel_residues[s];
        if (n % d == 0)
            return d;
    }
    return 0;
}

uint64_t pk_turn_divisor128(pk_u128 n, uint64_t t)
{
    for (unsigned s = 0; s < PK_WHEEL_SLOTS; s++) {
        uint64_t d = PK_WHEEL * t + pk_wheel_residues[s];
        if (n % d == 0)
            return d;
    }
    return 0;
}

/* ------------------------------------------------------------- dispatch */

/* The best path at or below `limit` that this CPU and build can run. */
static int simd_best(int limit)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (limit >= PK_SIMD_AVX512 && __builtin_cpu_supports("avx512f") &&
        __builtin_cpu_supports("avx512dq"))
        return PK_SIMD_AVX512;
    if (limit >= PK_SIMD_AVX2 && __builtin_cpu_supports("avx2") &&
        __builtin_cpu_supports("fma"))
        return PK_SIMD_AVX2;
#endif
    (void)limit;
    return PK_SIMD_PORTABLE;
}

int pk_simd_active(int requested)
{
    if (requested < PK_SIMD_AUTO || requested > PK_SIMD_AVX512)
        return PK_E_OPTIONS;
    return simd_best(requested == PK_SIMD_AUTO ? PK_SIMD_AVX512 : requested);
}

void pk_dispatch_select(int requested, pk_dispatch *out)
{
    int simd = pk_simd_active(requested);
    out->simd = PK_SIMD_PORTABLE;
    out->scan64 = pk_scan64_portable;
    out->scan128 = pk_scan128_portable;
#if defined(__x86_64__)
    if (simd == PK_SIMD_AVX512) {
        out->simd = simd;
        out->scan64 = pk_scan64_avx512;
        out->scan128 = pk_scan128_avx512;
    } else if (simd == PK_SIMD_AVX2) {
        out->simd = simd;
        out->scan64 = pk_scan64_avx2;
        out->scan128 = pk_scan128_avx2;
    }
#else
    (void)simd;
#endif
}
