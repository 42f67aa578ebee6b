/*
 * word_factor.c — complete factorization below 2^64 and 2^128, and the
 * public batch calls pk_factor_u64_array / pk_factor_u128_array.
 *
 * Below 2^64: trial division by 2 and the odd primes below 2^10
 * (a multiplication by p^-1 mod 2^64 and a comparison each), stopping at the
 * square root of what is left; then each composite part is checked for a
 * perfect power and split, by Pollard-Brent rho below 2^PK_WORD_RHO_BITS and
 * by ECM above, and the parts are factored again until every one is prime
 * (BPSW, a proof below 2^64). Above 2^64 the same with two-word arithmetic,
 * and parts that drop below 2^64 continue on the one-word path.
 */
#include <string.h>

#include "primekit.h"
#include "factor/qs.h"
#include "factor/word_impl.h"
#include "factor/word_trial.h"

/* Trial division by the first PK_WORD_TRIAL_USED odd primes (docs/kernel.md has the measurement). */
#ifndef PK_WORD_TRIAL_USED
#define PK_WORD_TRIAL_USED 171 /* the odd primes below 2^10 */
#endif
#ifdef PK_WORD_TUNE
int pk_qs_word_pass_shift = 0;
unsigned pk_qs_word_pass_floor = PK_QS_WORD_PASS_MIN_LOG2;
#endif
#ifndef PK_WORD_RHO_BITS
#define PK_WORD_RHO_BITS 40
#endif

typedef struct part {
    pk_u128 n;
    unsigned mult;
} part;

typedef struct plist {
    pk_u128 *primes;
    unsigned *exps;
    int count, cap;
} plist;

static void plist_add(plist *l, pk_u128 p, unsigned e)
{
    int i = 0;
    while (i < l->count && l->primes[i] < p)
        i++;
    if (i < l->count && l->primes[i] == p) {
        l->exps[i] += e;
        return;
    }
    for (int j = l->count; j > i; j--) {
        l->primes[j] = l->primes[j - 1];
        l->exps[j] = l->exps[j - 1];
    }
    l->primes[i] = p;
    l->exps[i] = e;
    l->count++;
}

/* rho_pair: differences multiplied per gcd, and the first round's length (factors below 2^10 are gone, so
   cycles shorter than that are rare and the gcds of shorter rounds mostly wasted). */
#ifndef PK_WORD_RHO_PAIR_BATCH
#define PK_WORD_RHO_PAIR_BATCH 32u
#endif
#ifndef PK_WORD_RHO_PAIR_R0
#define PK_WORD_RHO_PAIR_R0 16u
#endif

#if PK_WORD_RHO_BITS > 60
#error "rho_pair keeps residues below 2n + c and needs (2n + c)^2 < n 2^64"
#endif

/* One step of x -> x^2 R^-1 + c on lazy residues: the result is congruent to the reduced one and lies in
   (c, 2n + c); nc = n + c. Needs x^2 < n 2^64 (true for x < 2n + c and n < 2^60). */
static inline uint64_t rho_step(uint64_t x, uint64_t inv, uint64_t n, uint64_t nc)
{
    pk_u128 t = (pk_u128)x * x;
    uint64_t q = (uint64_t)t * inv;
    return (uint64_t)(t >> 64) - (uint64_t)(((pk_u128)q * n) >> 64) + nc;
}

/* a·b R^-1 congruent mod n, in (0, 2n), for a·b < n 2^64. */
static inline uint64_t lazy_mul(uint64_t a, uint64_t b, uint64_t inv, uint64_t n)
{
    pk_u128 t = (pk_u128)a * b;
    uint64_t q = (uint64_t)t * inv;
    return (uint64_t)(t >> 64) - (uint64_t)(((pk_u128)q * n) >> 64) + n;
}

/*
 * Pollard-Brent rho for the batch call (not resumable: pk_wsplit has the resumable walk): two walks with
 * different constants run in lockstep on n < 2^PK_WORD_RHO_BITS, so the multiplications of one fill the wait
 * on the other's, and the first of the two to meet a factor ends the search (about 1/sqrt(2) of one walk's
 * steps). Residues stay lazy (below 2n + c, never reduced); only gcds with n are taken of them, and those
 * depend only on the residue classes. Each walk's differences multiply into its own product, and one gcd of the
 * two products ends a batch; a gcd of n sends each walk back over the batch one gcd a step; when neither
 * yields a proper factor the walks restart with the next constants.
 */
static uint64_t rho_pair(uint64_t n)
{
    const uint64_t inv = pk_inv64(n), n2 = 2 * n; /* x - y + n2 is in (0, 4n) */
    for (uint64_t c1 = 1;; c1 += 2) {
        const uint64_t c2 = c1 + 1, nc1 = n + c1, nc2 = n + c2;
        uint64_t y1 = 2, y2 = 2, x1 = 2, x2 = 2;
        int failed = 0;
        for (uint64_t r = PK_WORD_RHO_PAIR_R0; !failed; r *= 2) {
            x1 = y1;
            x2 = y2;
            for (uint64_t i = 0; i < r; i++) {
                y1 = rho_step(y1, inv, n, nc1);
                y2 = rho_step(y2, inv, n, nc2);
            }
            for (uint64_t k = 0; k < r; k += PK_WORD_RHO_PAIR_BATCH) {
                const uint64_t ys1 = y1, ys2 = y2;
                const uint64_t len = r - k < PK_WORD_RHO_PAIR_BATCH ? r - k : PK_WORD_RHO_PAIR_BATCH;
                uint64_t q1 = 1, q2 = 1;
                for (uint64_t j = 0; j < len; j++) {
                    y1 = rho_step(y1, inv, n, nc1);
                    y2 = rho_step(y2, inv, n, nc2);
                    q1 = lazy_mul(q1, x1 - y1 + n2, inv, n);
                    q2 = lazy_mul(q2, x2 - y2 + n2, inv, n);
                }
                uint64_t g = pk_w64_gcd(lazy_mul(q1, q2, inv, n), n);
                if (g == 1)
                    continue;
                if (g != n)
                    return g;
                /* back over the batch, one walk at a time */
                uint64_t z = ys1;
                for (uint64_t j = 0; j < len; j++) {
                    z = rho_step(z, inv, n, nc1);
                    g = pk_w64_gcd(x1 - z + n2, n);
                    if (g != 1)
                        break;
                }
                if (g != 1 && g != n)
                    return g;
                z = ys2;
                for (uint64_t j = 0; j < len; j++) {
                    z = rho_step(z, inv, n, nc2);
                    g = pk_w64_gcd(x2 - z + n2, n);
                    if (g != 1)
                        break;
                }
                if (g != 1 && g != n)
                    return g;
                failed = 1; /* both walks closed their cycles mod n together: new constants */
                break;
            }
        }
    }
}

/* A nontrivial factor of the odd composite n < 2^64 (no factor below 2^10, not a perfect power). */
static uint64_t split64(uint64_t n)
{
    if (64 - __builtin_clzll(n) <= PK_WORD_RHO_BITS)
        return rho_pair(n);
    pk_mont64 m;
    pk_mont64_init(&m, n);
    uint64_t credit = UINT64_MAX, work = 0, f = 0;
    pk_wecm64 e;
    memset(&e, 0, sizeof e);
    unsigned bits = (unsigned)(64 - __builtin_clzll(n));
    while (!pk_w64_ecm_run(&m, &e, bits, &credit, &work, &f))
        credit = UINT64_MAX;
    return f;
}

/* A factor of n by the quadratic sieve, or 0 when it runs out of memory. */
static pk_u128 qs_split128(pk_u128 n)
{
    mpz_t m, g;
    mpz_init(m);
    mpz_init(g);
    mpz_import(m, 2, -1, sizeof(uint64_t), 0, 0, (uint64_t[2]){(uint64_t)n, (uint64_t)(n >> 64)});
    pk_u128 f = 0;
    pk_qs *q = pk_qs_new(m);
    if (q) {
        uint64_t used = 0;
        int rc;
        while ((rc = pk_qs_run(q, UINT64_MAX, g, &used)) == 0) {
        }
        if (rc == 1) {
            uint64_t w[2] = {0, 0};
            mpz_export(w, NULL, -1, sizeof(uint64_t), 0, 0, g);
            f = ((pk_u128)w[1] << 64) | w[0];
        }
        pk_qs_free(q);
    }
    mpz_clear(m);
    mpz_clear(g);
    return f;
}

/* A proper factor of the composite n (no prime factor below 2^10, not a
   perfect power): the word-size splitter, and from PK_QS_MIN_BITS bits on,
   after the splitter's pass, the quadratic sieve, as a job's pipeline does. */
static pk_u128 split128(pk_u128 n)
{
    pk_wsplit s;
    pk_wsplit_init(&s, n);
    pk_u128 f = 0;
    const unsigned bits = 128u - (unsigned)__builtin_clzll((uint64_t)(n >> 64));
    if (bits >= PK_QS_MIN_BITS) {
        const uint64_t pass = pk_qs_word_pass(bits);
        while (pk_wsplit_work(&s) < pass)
            if (pk_wsplit_run(&s, pass - pk_wsplit_work(&s), &f))
                return f;
        f = qs_split128(n);
        if (f)
            return f;
    }
    while (!pk_wsplit_run(&s, UINT64_MAX, &f)) {
    }
    return f;
}

/* Factor the parts on the stack until each is prime. Every part is > 1 and has no prime factor below the
   trial bound. Returns 0, or -1 if the prime list would overflow (cannot happen below 2^128). */
static int finish(part *stack, int top, plist *l)
{
    const uint64_t next = pk_word_odd_primes[PK_WORD_TRIAL_USED], next2 = next * next;
    while (top > 0) {
        part c = stack[--top];
        if (c.n == 1)
            continue;
        /* parts have no prime factor below 2^10 (and are above 2^10): no trial division again, and a part
           below the square of the first prime not tried is prime (so are most factors rho finds) */
        int prime = (c.n >> 64) ? pk_word_is_prime128(c.n)
                                : c.n < next2 || pk_word_bpsw64((uint64_t)c.n);
        if (prime) {
            if (l->count >= l->cap)
                return -1;
            plist_add(l, c.n, c.mult);
            continue;
        }
        pk_u128 root;
        unsigned k = pk_word_power128_above(c.n, 11, &root); /* no prime factor below 2^10 is left */
        if (k > 1) {
            stack[top++] = (part){root, c.mult * k};
            continue;
        }
        pk_u128 f = (c.n >> 64) ? split128(c.n) : split64((uint64_t)c.n);
        pk_u128 g = c.n / f;
        /* equal parts merge; keeps the stack short */
        if (f == g) {
            stack[top++] = (part){f, c.mult * 2};
        } else {
            stack[top++] = (part){f, c.mult};
            stack[top++] = (part){g, c.mult};
        }
    }
    return 0;
}

/* Trial division of m (odd) by the table's primes; returns what is left and sets *limit2 to the square of
   the first prime not tried (m below it is 1 or prime). */
static uint64_t trial64(uint64_t m, plist *l, uint64_t *limit2)
{
    int i = 0;
    for (; i < PK_WORD_TRIAL_USED; i++) {
        const uint64_t p = pk_word_odd_primes[i];
        if (p * p > m)
            break;
        const uint64_t inv = pk_word_trial_inv[i], lim = pk_word_trial_lim[i];
        uint64_t q = m * inv;
        if (q <= lim) {
            unsigned e = 0;
            do {
                m = q;
                e++;
                q = m * inv;
            } while (q <= lim);
            plist_add(l, p, e);
        }
    }
    const uint64_t next = pk_word_odd_primes[i];
    *limit2 = next * next;
    return m;
}

static int factor_u64(uint64_t n, plist *l)
{
    if (n < 2)
        return 0;
    if (!(n & 1)) {
        unsigned e = (unsigned)__builtin_ctzll(n);
        plist_add(l, 2, e);
        n >>= e;
    }
    uint64_t limit2;
    n = trial64(n, l, &limit2);
    if (n == 1)
        return 0;
    if (n < limit2) {
        plist_add(l, n, 1);
        return 0;
    }
    part stack[130];
    stack[0] = (part){n, 1};
    return finish(stack, 1, l);
}

int pk_word_factor64(uint64_t n, uint64_t primes[15], uint8_t exps[15])
{
    pk_u128 p[15];
    unsigned e[15];
    plist l = {p, e, 0, 15};
    factor_u64(n, &l);
    for (int i = 0; i < l.count; i++) {
        primes[i] = (uint64_t)p[i];
        exps[i] = (uint8_t)e[i];
    }
    return l.count;
}

static int factor_u128(pk_u128 n, plist *l)
{
    if ((n >> 64) == 0)
        return factor_u64((uint64_t)n, l);
    if (!(n & 1)) {
        unsigned e = (uint64_t)n ? (unsigned)__builtin_ctzll((uint64_t)n)
                                 : 64 + (unsigned)__builtin_ctzll((uint64_t)(n >> 64));
        plist_add(l, 2, e);
        n >>= e;
    }
    int i = 0;
    for (; i < PK_WORD_TRIAL_USED && (n >> 64); i++) {
        const uint32_t p = pk_word_odd_primes[i];
        if (n % p == 0) {
            unsigned e = 0;
            do {
                n /= p;
                e++;
            } while (n % p == 0);
            plist_add(l, p, e);
        }
    }
    if ((n >> 64) == 0) {
        /* the rest on one word; trial division restarts at 3, which finds nothing twice */
        return factor_u64((uint64_t)n, l);
    }
    part stack[260];
    stack[0] = (part){n, 1};
    return finish(stack, 1, l);
}

/* ------------------------------------------------------------ public calls */

int pk_factor_u64_array(const uint64_t *numbers, size_t count, pk_u64_answer *answers, size_t answer_size)
{
    if (count == 0)
        return PK_OK;
    if (!numbers || !answers || answer_size != sizeof(pk_u64_answer))
        return PK_E_ARG;
    for (size_t i = 0; i < count; i++)
        if (numbers[i] < 2)
            return PK_E_RANGE;
    for (size_t i = 0; i < count; i++) {
        pk_u64_answer *a = &answers[i];
        pk_u128 p[PK_U64_MAX_FACTORS];
        unsigned e[PK_U64_MAX_FACTORS];
        plist l = {p, e, 0, PK_U64_MAX_FACTORS};
        if (factor_u64(numbers[i], &l) != 0)
            return PK_E_INTERNAL;
        a->size = sizeof *a;
        a->n = numbers[i];
        a->factor_count = (uint32_t)l.count;
        for (int j = 0; j < l.count; j++) {
            a->primes[j] = (uint64_t)p[j];
            a->exponents[j] = (uint8_t)e[j];
        }
    }
    return PK_OK;
}

int pk_factor_u128_array(const pk_uint128 *numbers, size_t count, pk_u128_answer *answers, size_t answer_size)
{
    if (count == 0)
        return PK_OK;
    if (!numbers || !answers || answer_size != sizeof(pk_u128_answer))
        return PK_E_ARG;
    for (size_t i = 0; i < count; i++)
        if (numbers[i].hi == 0 && numbers[i].lo < 2)
            return PK_E_RANGE;
    for (size_t i = 0; i < count; i++) {
        pk_u128_answer *a = &answers[i];
        const pk_u128 n = ((pk_u128)numbers[i].hi << 64) | numbers[i].lo;
        pk_u128 p[PK_U128_MAX_FACTORS];
        unsigned e[PK_U128_MAX_FACTORS];
        plist l = {p, e, 0, PK_U128_MAX_FACTORS};
        if (factor_u128(n, &l) != 0)
            return PK_E_INTERNAL;
        a->size = sizeof *a;
        a->n = numbers[i];
        a->factor_count = (uint32_t)l.count;
        a->probable_count = 0;
        for (int j = 0; j < l.count; j++) {
            a->primes[j].lo = (uint64_t)p[j];
            a->primes[j].hi = (uint64_t)(p[j] >> 64);
            a->exponents[j] = (uint8_t)e[j];
            a->certainty[j] = (p[j] >> 64) ? PK_CERTAINTY_PROBABLE : PK_CERTAINTY_PROVEN;
            a->probable_count += (p[j] >> 64) != 0;
        }
    }
    return PK_OK;
}
