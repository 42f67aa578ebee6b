/*
 * trial/scan.c — the divisibility tests of the 64-bit and 128-bit paths: the
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
 * |x d - 1|. If the previous x_p had error eta_p for d - 210, then
 * e = 1 - x_p d satisfies |e| <= 210 / (d - 210) + eta_p (1 + 2^-12), and one
 * step leaves eta <= e^2 + 3 * 2^-53 (the step squares the error; its
 * roundings, three without a fused multiply-add and two with, add at most
 * 2^-53 each).
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
 * The portable scans run the SIMD method in plain C where the compiler
 * guarantees a fused multiply-add (__FP_FAST_FMA / __ARM_FEATURE_FMA: every
 * aarch64 build, so NEON vectorises it). Elsewhere (x86-64 builds without
 * -mfma) they use the same reciprocals and bounds without an FMA (the Newton
 * step's rounding bound holds either way) and compute the remainders exactly
 * in wrapping integer arithmetic:
 *   64-bit:  q = round(n x) (n rounded to a double: |n - nd| <= 2^10, which
 *            adds below 2^-10 to the quotient error), r = n - q d mod 2^64;
 *            |r| < 0.55 d, so d | n <=> r = 0. While every d < 2^32 the
 *            test runs mod 2^32 (r = 0 <=> r = 0 mod 2^32 since |r| < 2^32),
 *            which compilers vectorise with SSE2 or NEON at -O2.
 *   128-bit: the three reductions of the SIMD scans with
 *            r_k = (r_{k-1} 2^38 + c_k - q_k d) mod 2^64.
 * Rounding to an integer adds 1.5 * 2^52 and reads the encoding
 * (round_to_u64), so neither libm nor a conversion instruction is needed; it
 * needs the default round-to-nearest mode, which the portable scans check on
 * entry (falling back to exact remainders in any other mode).
 */
#include <string.h>

#include "trial/trial.h"

const uint8_t pk_wheel_residues[PK_WHEEL_SLOTS] = {
    1,   11,  13,  17,  19,  23,  29,  31,  37,  41,  43,  47,  53,  59,  61,  67,
    71,  73,  79,  83,  89,  97,  101, 103, 107, 109, 113, 121, 127, 131, 137, 139,
    143, 149, 151, 157, 163, 167, 169, 173, 179, 181, 187, 191, 193, 197, 199, 209};

/*
 * round(v) for |v| < 2^51, as a two's-complement 64-bit integer: v + 1.5 * 2^52
 * lies in [2^52, 2^53), where a double's last bit is worth 1, so the rounded
 * sum's encoding minus that of 1.5 * 2^52 is the integer.
 */
static inline uint64_t round_to_u64(double v)
{
    double t = v + 6755399441055744.0;
    uint64_t bits;
    memcpy(&bits, &t, sizeof bits);
    return bits - UINT64_C(0x4338000000000000);
}

/*
 * 1 when floating-point arithmetic rounds to nearest, the C default, which
 * round_to_u64 relies on. A program may have chosen another mode (fesetround);
 * the portable scans then fall back to exact remainders. (The SIMD scans round
 * with explicit modes and their bounds hold in any mode.)
 */
static int rounds_to_nearest(void)
{
    volatile double one = 1.0, quarter = 0x1p-54, three_quarters = 0x1.8p-53; /* of 2^-52 */
    return one + three_quarters == 1.0 + 0x1p-52 && one + quarter == 1.0 &&
           -one - three_quarters == -1.0 - 0x1p-52 && -one - quarter == -1.0;
}

/* The smallest candidate of turns [lo, hi) dividing n, by exact remainders. */
static uint64_t exact_scan64(uint64_t n, uint64_t lo, uint64_t hi)
{
    for (uint64_t t = lo; t < hi; t++) {
        uint64_t h = pk_turn_divisor64(n, t);
        if (h)
            return h;
    }
    return 0;
}

static uint64_t exact_scan128(pk_u128 n, uint64_t lo, uint64_t hi)
{
    for (uint64_t t = lo; t < hi; t++) {
        uint64_t h = pk_turn_divisor128(n, t);
        if (h)
            return h;
    }
    return 0;
}

/* The portable scans' Newton step (no FMA assumed; see the bound above). */
static inline double newton(double x, double d)
{
    return x * (2.0 - d * x);
}

/* Every slot's divisor and its correctly rounded reciprocal at turn t. */
static inline void slots_seed(double *d, double *x, uint64_t t)
{
    for (unsigned s = 0; s < PK_WHEEL_SLOTS; s++) {
        d[s] = (double)(PK_WHEEL * t + pk_wheel_residues[s]);
        x[s] = 1.0 / d[s];
    }
}

/* Carry every slot to the next turn: one Newton step, or two where one is
   not precise enough (see the bounds above). */
static inline void slots_advance(double *d, double *x, int two_steps)
{
    if (two_steps) {
        for (unsigned s = 0; s < PK_WHEEL_SLOTS; s++) {
            d[s] += (double)PK_WHEEL;
            x[s] = newton(newton(x[s], d[s]), d[s]);
        }
    } else {
        for (unsigned s = 0; s < PK_WHEEL_SLOTS; s++) {
            d[s] += (double)PK_WHEEL;
            x[s] = newton(x[s], d[s]);
        }
    }
}

/*
 * Where the compiler guarantees a fused multiply-add (every aarch64 target),
 * the portable scans use the SIMD scans' method in plain C, which compilers
 * vectorise (NEON); elsewhere (x86-64 without -mfma, ...) the integer method.
 */
#if defined(__FP_FAST_FMA) || defined(__ARM_FEATURE_FMA)
#define PK_PORTABLE_FMA 1

/* Nearest integer to v for |v| < 2^51, in round-to-nearest mode. */
static inline double round_fma(double v)
{
    const double magic = 6755399441055744.0; /* 1.5 * 2^52 */
    return (v + magic) - magic;
}

static uint64_t scan64_fma(uint64_t n, uint64_t turn_lo, uint64_t turn_hi)
{
    double d[PK_WHEEL_SLOTS], x[PK_WHEEL_SLOTS], nh, nl;
    pk_n64_split(n, &nh, &nl);
    const double target = -nl;
    slots_seed(d, x, turn_lo);
    for (uint64_t t = turn_lo; t < turn_hi; t++) {
        if (t != turn_lo)
            slots_advance(d, x, t < PK_FP64_ONE_STEP_TURN);
        unsigned hit = 0;
        for (unsigned s = 0; s < PK_WHEEL_SLOTS; s++) {
            double q = round_fma(nh * x[s]);
            hit |= __builtin_fma(-q, d[s], nh) == target;
        }
        if (hit) {
            uint64_t h = pk_turn_divisor64(n, t);
            if (h)
                return h; /* always: the bounds above exclude false alarms */
        }
    }
    return 0;
}

static uint64_t scan128_fma(pk_u128 n, uint64_t turn_lo, uint64_t turn_hi)
{
    double du[PK_WHEEL_SLOTS], d[PK_WHEEL_SLOTS], x[PK_WHEEL_SLOTS]; /* d, d/2^38, 2^38/d */
    pk_n128_parts c;
    pk_n128_parts_init(n, &c);
    const double neg_low = -c.low;
    for (unsigned s = 0; s < PK_WHEEL_SLOTS; s++) {
        du[s] = (double)(PK_WHEEL * turn_lo + pk_wheel_residues[s]);
        d[s] = du[s] / PK_N128_SCALE;
        x[s] = 1.0 / d[s];
    }
    for (uint64_t t = turn_lo; t < turn_hi; t++) {
        if (t != turn_lo) {
            int steps = t < PK_FP128_ONE_STEP_TURN ? 2 : 1;
            for (unsigned s = 0; s < PK_WHEEL_SLOTS; s++) {
                du[s] += (double)PK_WHEEL;
                d[s] += (double)PK_WHEEL / PK_N128_SCALE;
            }
            for (int k = 0; k < steps; k++)
                for (unsigned s = 0; s < PK_WHEEL_SLOTS; s++)
                    x[s] = newton(x[s], d[s]);
        }
        unsigned hit = 0;
        for (unsigned s = 0; s < PK_WHEEL_SLOTS; s++) {
            double q = round_fma(c.top * x[s]);
            double r = __builtin_fma(-q, du[s], c.top_int);
            q = round_fma((r + c.mid) * x[s]);
            r = __builtin_fma(__builtin_fma(-q, d[s], r), PK_N128_SCALE, c.mid_int);
            q = round_fma((r + c.low) * x[s]);
            hit |= __builtin_fma(-q, d[s], r) == neg_low;
        }
        if (hit) {
            uint64_t h = pk_turn_divisor128(n, t);
            if (h)
                return h; /* always: the bounds above exclude false alarms */
        }
    }
    return 0;
}
#endif /* FMA */

uint64_t pk_scan64_portable(uint64_t n, uint64_t turn_lo, uint64_t turn_hi)
{
    double d[PK_WHEEL_SLOTS], x[PK_WHEEL_SLOTS];
    const double nd = (double)n;
    const int narrow = turn_hi <= (UINT64_C(1) << 32) / PK_WHEEL; /* every d < 2^32 */
    if (!rounds_to_nearest())
        return exact_scan64(n, turn_lo, turn_hi);
#ifdef PK_PORTABLE_FMA
    return scan64_fma(n, turn_lo, turn_hi);
#endif
    slots_seed(d, x, turn_lo);
    for (uint64_t t = turn_lo; t < turn_hi; t++) {
        if (t != turn_lo)
            slots_advance(d, x, t < PK_FP64_ONE_STEP_TURN);
        uint64_t base = PK_WHEEL * t;
        unsigned hit = 0;
        if (narrow) {
            /* |n - q d| < d < 2^32: zero exactly when it is zero mod 2^32, and
               32-bit lanes let compilers vectorise this loop with SSE2 or NEON. */
            const uint32_t n32 = (uint32_t)n, base32 = (uint32_t)base;
            for (unsigned s = 0; s < PK_WHEEL_SLOTS; s++) {
                uint32_t q = (uint32_t)round_to_u64(nd * x[s]);
                hit |= n32 - q * (base32 + pk_wheel_residues[s]) == 0;
            }
        } else {
            for (unsigned s = 0; s < PK_WHEEL_SLOTS; s++) {
                uint64_t q = round_to_u64(nd * x[s]);
                hit |= n - q * (base + pk_wheel_residues[s]) == 0;
            }
        }
        if (hit) {
            uint64_t h = pk_turn_divisor64(n, t);
            if (h)
                return h; /* always: the bounds above exclude false alarms */
        }
    }
    return 0;
}

/* (n mod d == 0) for the 128-bit n of parts c; x ~ 1/d as in the SIMD scans. */
static inline int divides128(const pk_n128_parts *c, uint64_t top, uint64_t mid, uint64_t low,
                             uint64_t d, double x)
{
    uint64_t q = round_to_u64(c->top_int * x);
    uint64_t r = top - q * d;
    q = round_to_u64(((double)(int64_t)r * PK_N128_SCALE + c->mid_int) * x);
    r = (r << 38) + mid - q * d;
    q = round_to_u64(((double)(int64_t)r * PK_N128_SCALE + c->low * PK_N128_SCALE) * x);
    r = (r << 38) + low - q * d;
    return r == 0;
}

uint64_t pk_scan128_portable(pk_u128 n, uint64_t turn_lo, uint64_t turn_hi)
{
    double d[PK_WHEEL_SLOTS], x[PK_WHEEL_SLOTS];
    pk_n128_parts c;
    if (!rounds_to_nearest())
        return exact_scan128(n, turn_lo, turn_hi);
#ifdef PK_PORTABLE_FMA
    return scan128_fma(n, turn_lo, turn_hi);
#endif
    pk_n128_parts_init(n, &c);
    const uint64_t m38 = (UINT64_C(1) << 38) - 1;
    const uint64_t top = (uint64_t)(n >> 76), mid = (uint64_t)(n >> 38) & m38;
    const uint64_t low = (uint64_t)n & m38;
    slots_seed(d, x, turn_lo);
    for (uint64_t t = turn_lo; t < turn_hi; t++) {
        if (t != turn_lo)
            slots_advance(d, x, t < PK_FP128_ONE_STEP_TURN);
        uint64_t base = PK_WHEEL * t;
        unsigned hit = 0;
        for (unsigned s = 0; s < PK_WHEEL_SLOTS; s++)
            hit |= (unsigned)divides128(&c, top, mid, low, base + pk_wheel_residues[s], x[s]);
        if (hit) {
            uint64_t h = pk_turn_divisor128(n, t);
            if (h)
                return h; /* always: the bounds above exclude false alarms */
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
