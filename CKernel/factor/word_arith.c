/*
 * word_arith.c — the arithmetic of the word-size factoring unit: BPSW and
 * ECM for one and two words (word_gen.h instantiated twice), Pollard-Brent
 * rho for one word, integer roots, and the ECM schedule.
 */
#include "factor/word_impl.h"

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

/*
 * The ECM schedule. A composite of b bits with no factor below 2^10 starts at
 * the first row whose max_bits >= b (its smallest factor has at most b/2
 * bits), and moves one row on after every PK_WORD_ECM_CURVES_PER_LEVEL curves.
 * Up to 79 bits ECM runs to the end: B1 near the optimum for a factor of
 * max_bits/2 bits. From PK_QS_MIN_BITS (80) bits the rows serve the short
 * pass before the quadratic sieve (pk_qs_word_pass), which only unbalanced
 * parts leave early: cheap curves for factors of about 20-28 bits. Chosen by
 * measurement (docs/kernel.md, "Word-size factoring"; Tests/Benchmarks/kernel
 * `make tune`).
 */
PK_WORD_TABLE_CONST pk_word_ecm_level pk_word_ecm_levels[PK_WORD_ECM_LEVELS] = {
    {40, 30, 900, 30},          {48, 50, 2000, 30},         {56, 70, 3500, 210},
    {64, 200, 10000, 210},      {76, 400, 12000, 210},      {79, 600, 18000, 210},
    {100, 200, 6000, 210},      {112, 200, 6000, 210},      {128, 200, 6000, 210},
    {128, 2500, 130000, 210},   {128, 5000, 260000, 210},   {128, 11000, 550000, 210},
    {128, 25000, 1200000, 210}, {128, 50000, 2500000, 210},
};

const pk_word_ecm_level *pk_word_ecm_level_for(unsigned nbits, uint32_t curve)
{
    unsigned i = 0;
    while (i + 1 < PK_WORD_ECM_LEVELS && pk_word_ecm_levels[i].max_bits < nbits)
        i++;
    uint32_t bump = curve / PK_WORD_ECM_CURVES_PER_LEVEL;
    i = bump >= PK_WORD_ECM_LEVELS - 1 - i ? PK_WORD_ECM_LEVELS - 1 : i + bump;
    return &pk_word_ecm_levels[i];
}

unsigned pk_word_gcd_small(unsigned a, unsigned b)
{
    while (b) {
        unsigned t = a % b;
        a = b;
        b = t;
    }
    return a;
}

unsigned pk_word_baby_count(uint32_t d)
{
    return d == 30 ? 4 : 24;
}

uint32_t pk_word_ecm_giant_start(const pk_word_ecm_level *L)
{
    uint32_t m0 = (L->b1 + L->d / 2) / L->d;
    return m0 < 2 ? 2 : m0;
}

uint32_t pk_word_ecm_giant_end(const pk_word_ecm_level *L)
{
    return L->b2 / L->d + 1;
}

uint32_t pk_word_ecm_stage1_end(const pk_word_ecm_level *L)
{
    uint32_t i = 0;
    while (i < PK_WORD_ODD_PRIMES && pk_word_odd_primes[i] <= L->b1)
        i++;
    return i + 1;
}

/* --------------------------------------------------------- one word */

#define W uint64_t
#define M pk_mont64
#define PFX(name) pk_w64_##name
#define MUL pk_mont64_mul
#define ADD pk_mont64_add
#define SUB pk_mont64_sub
#define TO pk_mont64_to
#define WBITS 64
typedef pk_wecm64 pk_w64_ecm;
#include "factor/word_gen.h"
#undef W
#undef M
#undef PFX
#undef MUL
#undef ADD
#undef SUB
#undef TO
#undef WBITS

/* --------------------------------------------------------- two words */

#define W pk_u128
#define M pk_mont128
#define PFX(name) pk_w128_##name
#define MUL pk_mont128_mul
#define ADD pk_mont128_add
#define SUB pk_mont128_sub
#define TO pk_mont128_to
#define WBITS 128
typedef pk_wecm128 pk_w128_ecm;
#include "factor/word_gen.h"
#undef W
#undef M
#undef PFX
#undef MUL
#undef ADD
#undef SUB
#undef TO
#undef WBITS

/* -------------------------------------------------------------- rho */

void pk_w64_rho_start(const pk_mont64 *m, pk_wrho *r, uint64_t c)
{
    r->c = c;
    r->x = r->y = r->ys = pk_mont64_to(m, 2);
    r->q = m->one;
    r->r = 1;
    r->k = 0;
    r->i = 0;
    r->phase = 0;
}

/*
 * Brent's cycle finding: x stays at y's position when the walk began, y
 * walks r steps (phase 0), then r more in batches of PK_WORD_RHO_BATCH whose
 * differences x - y multiply into q, one gcd per batch (phase 1); r doubles.
 * A gcd of n means the batch jumped past a factor: walk the batch again from
 * its start ys one gcd a step (phase 2); n again means the constant c
 * failed, and the walk restarts with c + 1.
 */
int pk_w64_rho_run(const pk_mont64 *m, pk_wrho *r, uint64_t *credit, uint64_t *work, uint64_t *factor)
{
    const uint64_t n = m->n;
    uint64_t c = pk_mont64_to(m, r->c);
    uint64_t x = r->x, y = r->y, q = r->q;
    uint64_t steps = *credit / 2, done = 0;
    int found = 0;
    while (done < steps) {
        if (r->phase == 0) {
            uint64_t todo = r->r - r->i;
            if (todo > steps - done)
                todo = steps - done;
            for (uint64_t j = 0; j < todo; j++)
                y = pk_mont64_add(m, pk_mont64_mul(m, y, y), c);
            done += todo;
            r->i += todo;
            if (r->i == r->r) {
                r->phase = 1;
                r->i = 0;
                r->k = 0;
                r->ys = y;
            }
            continue;
        }
        if (r->phase == 1) {
            uint64_t todo = PK_WORD_RHO_BATCH - r->i;
            if (todo > r->r - r->k)
                todo = r->r - r->k;
            if (todo > steps - done)
                todo = steps - done;
            for (uint64_t j = 0; j < todo; j++) {
                y = pk_mont64_add(m, pk_mont64_mul(m, y, y), c);
                q = pk_mont64_mul(m, q, pk_mont64_sub(m, x, y));
            }
            done += todo;
            r->i += todo;
            r->k += todo;
            if (r->i == PK_WORD_RHO_BATCH || r->k == r->r) {
                uint64_t g = pk_w64_gcd(q, n);
                r->i = 0;
                if (g == n) {
                    r->phase = 2;
                    continue;
                }
                if (g != 1) {
                    *factor = g;
                    found = 1;
                    break;
                }
                r->ys = y;
                if (r->k == r->r) {
                    r->r *= 2;
                    r->phase = 0;
                    x = y;
                }
            }
            continue;
        }
        /* phase 2 */
        r->ys = pk_mont64_add(m, pk_mont64_mul(m, r->ys, r->ys), c);
        done++;
        uint64_t g = pk_w64_gcd(pk_mont64_sub(m, x, r->ys), n);
        if (g != 1 && g != n) {
            *factor = g;
            found = 1;
            break;
        }
        if (g == n || ++r->i > PK_WORD_RHO_BATCH) {
            r->x = x;
            pk_w64_rho_start(m, r, r->c + 1 >= n - 2 ? 1 : r->c + 1);
            x = r->x;
            y = r->y;
            q = r->q;
            c = pk_mont64_to(m, r->c);
        }
    }
    if (!found) {
        r->x = x;
        r->y = y;
        r->q = q;
    } else {
        /* the next call (if any) restarts with another constant */
        pk_w64_rho_start(m, r, r->c + 1 >= n - 2 ? 1 : r->c + 1);
    }
    pk_word_charge(credit, work, 2 * done); /* steps <= *credit / 2: always covered */
    return found;
}

/* ------------------------------------------------------ primality, roots */

static const uint8_t small_odd[] = {3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47};

int pk_word_is_prime64(uint64_t n)
{
    if (n < 2)
        return 0;
    if (!(n & 1))
        return n == 2;
    for (size_t i = 0; i < sizeof small_odd; i++) {
        if (n == small_odd[i])
            return 1;
        if (n % small_odd[i] == 0)
            return 0;
    }
    if (n < 53 * 53)
        return 1;
    return pk_word_bpsw64(n);
}

/*
 * Strong probable prime to every base in bases[0..k) at once (k <= 3, n odd >= 3): one exponent chain per base,
 * run side by side so that their multiplications overlap. A base that n divides is skipped (n is then that base,
 * a prime, when the callers' ranges hold: see pk_word_bpsw64).
 */
static inline __attribute__((always_inline)) int sprp_bases64(const pk_mont64 *m, const uint64_t *bases, int k)
{
    const uint64_t n = m->n, one = m->one, minus1 = n - one;
    uint64_t d = n - 1;
    const int s = __builtin_ctzll(d);
    d >>= s;
    uint64_t b[3], x[3];
    for (int j = 0; j < k; j++) {
        uint64_t a = bases[j] < n ? bases[j] : bases[j] % n;
        b[j] = a ? pk_mont64_mul(m, a, m->r2) : one;
        x[j] = b[j];
    }
    for (int bit = 62 - __builtin_clzll(d); bit >= 0; bit--) {
        for (int j = 0; j < k; j++)
            x[j] = pk_mont64_mul(m, x[j], x[j]);
        if ((d >> bit) & 1)
            for (int j = 0; j < k; j++)
                x[j] = pk_mont64_mul(m, x[j], b[j]);
    }
    for (int j = 0; j < k; j++) {
        uint64_t y = x[j];
        if (y == one || y == minus1)
            continue;
        int r = 1;
        for (; r < s; r++) {
            y = pk_mont64_mul(m, y, y);
            if (y == minus1)
                break;
            if (y == one)
                return 0;
        }
        if (r == s)
            return 0;
    }
    return 1;
}

/*
 * Odd n > 53^2 with no prime factor below 53. First the strong test to base 2, which nearly every composite
 * fails. A pass is then confirmed by the cheapest proof for n's size:
 *   n < 4,759,123,141:      strong tests to bases 7 and 61;
 *   n < 1,122,004,669,633:  strong tests to bases 13, 23 and 1,662,803.
 * G. Jaeschke, "On strong pseudoprimes to several bases", Math. Comp. 61 (1993), 915-926, computed the least
 * composite that is a strong pseudoprime to all of 2, 7, 61 (4,759,123,141) and to all of 2, 13, 23, 1662803
 * (1,122,004,669,633), so below those bounds passing every base of the set proves n prime. (A base that n
 * divides is skipped: n > 53^2 divides 7, 13, 23 or 61 never, and 1,662,803 is prime, so there n is prime.)
 * Above the second bound the strong Lucas test with Selfridge's parameters completes BPSW: no composite below
 * 2^64 passes both (every base-2 strong pseudoprime below 2^64 is known and was checked: J. Feitsma and
 * W. Galway's enumeration), so it is a proof there too. Costs measured in docs/kernel.md ("Word-size factoring").
 */
int pk_word_bpsw64(uint64_t n)
{
    static const uint64_t set32[2] = {7, 61};
    static const uint64_t set40[3] = {13, 23, 1662803};
    pk_mont64 m;
    pk_mont64_init(&m, n);
    if (!pk_w64_sprp2(&m))
        return 0;
    if (n < UINT64_C(4759123141))
        return sprp_bases64(&m, set32, 2);
    if (n < UINT64_C(1122004669633))
        return sprp_bases64(&m, set40, 3);
    uint64_t r = pk_word_isqrt64(n);
    if (r * r == n)
        return 0;
    return pk_w64_slprp(&m); /* no BPSW pseudoprime exists below 2^64 */
}

int pk_word_is_prime128(pk_u128 n)
{
    if ((n >> 64) == 0)
        return pk_word_is_prime64((uint64_t)n);
    if (!(n & 1))
        return 0;
    for (size_t i = 0; i < sizeof small_odd; i++)
        if (n % small_odd[i] == 0)
            return 0;
    pk_mont128 m;
    pk_mont128_init(&m, n);
    if (!pk_w128_sprp2(&m))
        return 0;
    pk_u128 r = pk_word_root128(n, 2);
    if (r * r == n)
        return 0;
    return pk_w128_slprp(&m) ? 2 : 0;
}

/* r^k, or 2^128 - 1 when it would not fit (2^128 - 1 itself is no perfect power). */
static pk_u128 pow_sat(pk_u128 r, unsigned k)
{
    pk_u128 p = 1;
    for (unsigned i = 0; i < k; i++)
        if (__builtin_mul_overflow(p, r, &p))
            return ~(pk_u128)0;
    return p;
}

uint64_t pk_word_isqrt64(uint64_t n)
{
    if (n < 2)
        return n;
#if defined(__x86_64__)
    uint64_t r = (uint64_t)_mm_cvtsd_f64(_mm_sqrt_sd(_mm_setzero_pd(), _mm_set_sd((double)n)));
#else
    uint64_t r = UINT64_C(1) << ((64 - __builtin_clzll(n) + 1) / 2);
    for (;;) {
        uint64_t y = (r + n / r) / 2;
        if (y >= r)
            break;
        r = y;
    }
#endif
    if (r > UINT64_C(0xFFFFFFFF))
        r = UINT64_C(0xFFFFFFFF);
    while (r * r > n)
        r--;
    while (r < UINT64_C(0xFFFFFFFF) && (r + 1) * (r + 1) <= n)
        r++;
    return r;
}

pk_u128 pk_word_root128(pk_u128 n, unsigned k)
{
    if (k <= 1 || n < 2)
        return n;
    if (k == 2 && (n >> 64) == 0)
        return pk_word_isqrt64((uint64_t)n);
    /* Newton's iteration from above, starting at 2^ceil(bits / k) */
    int bits = 128 - ((n >> 64) ? __builtin_clzll((uint64_t)(n >> 64)) : 64 + __builtin_clzll((uint64_t)n));
    unsigned e = ((unsigned)bits + k - 1) / k;
    pk_u128 r = e >= 128 ? ~(pk_u128)0 : (pk_u128)1 << e;
    for (;;) {
        pk_u128 p = pow_sat(r, k - 1);
        pk_u128 y = ((pk_u128)(k - 1) * r + n / p) / k;
        if (y >= r)
            break;
        r = y;
    }
    while (pow_sat(r, k) > n)
        r--;
    return r;
}

unsigned pk_word_power128(pk_u128 n, pk_u128 *root)
{
    return pk_word_power128_above(n, 1, root);
}

unsigned pk_word_power128_above(pk_u128 n, unsigned root_bits, pk_u128 *root)
{
    if (root_bits < 1)
        root_bits = 1;
    *root = n;
    if (n < 4)
        return 1;
    /* largest k first among primes; then the root may be a power again */
    static const uint8_t ks[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67,
                                 71, 73, 79, 83, 89, 97, 101, 103, 107, 109, 113, 127};
    unsigned total = 1;
    pk_u128 m = n;
    for (size_t i = 0; i < sizeof ks;) {
        if ((unsigned)ks[i] * (root_bits - 1) >= (unsigned)pk_w128_bitlen(m))
            break; /* r >= 2^(root_bits - 1), so r^k would have more bits than m */
        pk_u128 r = pk_word_root128(m, ks[i]);
        if (r < 2)
            break;
        if (pow_sat(r, ks[i]) == m) {
            m = r;
            total *= ks[i];
            continue; /* the same k may apply again */
        }
        i++;
    }
    *root = m;
    return total;
}
