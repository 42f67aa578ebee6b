/*
 * scan.c — the divisibility tests of the 64-bit and 128-bit paths (portable
 * implementation) and the run-time choice between implementations.
 *
 * Method. For a divisor d >= 2^20 and x ~ 1/d in double precision:
 *   q1 = trunc(n * x)            (n converted to double)
 *   r1 = n - q1 * d              (exact, in wrapping 64-bit integers)
 *   q2 = round(r1 * x)
 *   r2 = r1 - q2 * d             d | n  <=>  r2 == 0
 * r1 is small (|r1| < 2^40), so r1 * x is within 1/4 of r1 / d and r2 == 0
 * exactly when d divides r1, hence n. The test never divides.
 *
 * Reciprocals. The candidates of one wheel slot form the progression
 * d, d + 210, d + 420, ...; each slot keeps x ~ 1/d and moves it to the next
 * turn with one Newton step, x' = x * (2 - d' * x), whose relative error is
 * the square of (210 / d): below 2^-24.6 for d >= 2^20, which bounds
 * |r1| <= n * 2^-24.6 < 2^40 and the stage-2 error below 2^-5. The 128-bit
 * test needs more (its n is up to 2^96 after the first reduction) and takes
 * two Newton steps, error below 2^-49. The reciprocals are seeded exactly
 * (one division per slot) at the start of every call.
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

void pk_dispatch_select(int requested, pk_dispatch *out)
{
    (void)requested;
    out->simd = PK_SIMD_PORTABLE;
    out->scan64 = pk_scan64_portable;
    out->scan128 = pk_scan128_portable;
}
