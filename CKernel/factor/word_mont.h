/*
 * word_mont.h — Montgomery arithmetic for odd moduli below 2^64 (one word)
 * and below 2^128 (two words), as inline functions; private to the
 * word-size factoring unit (CKernel/factor/word*).
 *
 * A residue a is kept as a·R mod n (R = 2^64 or 2^128), always fully reduced
 * (0 <= value < n), so equality of residues is equality of words and the
 * values written into a saved state are canonical. Products reduce with
 * REDC: one word (t = a·b; m = t·n^-1 mod 2^64; (t − m·n) / 2^64, plus n when
 * negative) works for every odd n < 2^64; two words interleave the product
 * and the reduction limb by limb (CIOS) and keep the one carry bit the sum can
 * reach when n is above 2^127.
 */
#ifndef PK_WORD_MONT_H
#define PK_WORD_MONT_H

#include <stdint.h>

typedef unsigned __int128 pk_u128;

/* ------------------------------------------------------------ one word */

typedef struct pk_mont64 {
    uint64_t n;    /* odd modulus */
    uint64_t inv;  /* n^-1 mod 2^64 */
    uint64_t one;  /* R mod n */
    uint64_t r2;   /* R^2 mod n */
} pk_mont64;

static inline uint64_t pk_inv64(uint64_t n)
{
    uint64_t x = n; /* right to 3 bits for odd n; each Newton step doubles them */
    for (int i = 0; i < 5; i++)
        x *= 2 - n * x;
    return x;
}

/* t mod n for t < n·2^64 (one hardware division on x86-64; the library call for 128-bit % is slower). */
static inline uint64_t pk_mod128by64(pk_u128 t, uint64_t n)
{
#if defined(__x86_64__)
    uint64_t q, r;
    __asm__("divq %4" : "=a"(q), "=d"(r) : "a"((uint64_t)t), "d"((uint64_t)(t >> 64)), "rm"(n));
    (void)q;
    return r;
#else
    return (uint64_t)(t % n);
#endif
}

static inline void pk_mont64_init(pk_mont64 *m, uint64_t n)
{
    m->n = n;
    m->inv = pk_inv64(n);
    m->one = (0 - n) % n; /* 2^64 mod n */
    m->r2 = pk_mod128by64((pk_u128)m->one * m->one, n);
}

static inline uint64_t pk_mont64_redc(const pk_mont64 *m, pk_u128 t)
{
    uint64_t lo = (uint64_t)t, hi = (uint64_t)(t >> 64);
    uint64_t q = lo * m->inv;
    uint64_t h = (uint64_t)(((pk_u128)q * m->n) >> 64);
    uint64_t r = hi - h;
    return hi < h ? r + m->n : r;
}

static inline uint64_t pk_mont64_mul(const pk_mont64 *m, uint64_t a, uint64_t b)
{
    return pk_mont64_redc(m, (pk_u128)a * b);
}

static inline uint64_t pk_mont64_add(const pk_mont64 *m, uint64_t a, uint64_t b)
{
    uint64_t t = m->n - b;
    return a >= t ? a - t : a + b;
}

static inline uint64_t pk_mont64_sub(const pk_mont64 *m, uint64_t a, uint64_t b)
{
    return a >= b ? a - b : a - b + m->n;
}

static inline uint64_t pk_mont64_to(const pk_mont64 *m, uint64_t a)
{
    return pk_mont64_mul(m, a % m->n, m->r2);
}

static inline uint64_t pk_mont64_from(const pk_mont64 *m, uint64_t a)
{
    return pk_mont64_redc(m, a);
}

/* ----------------------------------------------------------- two words */

typedef struct pk_mont128 {
    pk_u128 n;     /* odd modulus */
    uint64_t ninv; /* -n^-1 mod 2^64 */
    pk_u128 one;   /* R mod n */
    pk_u128 r2;    /* R^2 mod n */
} pk_mont128;

/* Additions without branches: a taken branch on data costs more than the arithmetic. */
static inline pk_u128 pk_mont128_add(const pk_mont128 *m, pk_u128 a, pk_u128 b)
{
    pk_u128 s, t;
    int carry = __builtin_add_overflow(a, b, &s);
    int borrow = __builtin_sub_overflow(s, m->n, &t);
    pk_u128 keep = (pk_u128)0 - (pk_u128)(borrow & !carry); /* all ones: s < n, keep s */
    return (s & keep) | (t & ~keep);
}

static inline pk_u128 pk_mont128_sub(const pk_mont128 *m, pk_u128 a, pk_u128 b)
{
    pk_u128 r;
    int borrow = __builtin_sub_overflow(a, b, &r);
    return r + (m->n & ((pk_u128)0 - (pk_u128)borrow));
}

static inline void pk_mont128_init(pk_mont128 *m, pk_u128 n)
{
    m->n = n;
    m->ninv = 0 - pk_inv64((uint64_t)n);
    m->one = (0 - n) % n; /* 2^128 mod n */
    pk_u128 r = m->one;   /* doubled 128 times: 2^256 mod n */
    for (int i = 0; i < 128; i++)
        r = pk_mont128_add(m, r, r);
    m->r2 = r;
}

/*
 * Two-word product with the reduction interleaved limb by limb (a, b < n). Each limb adds a·b_i and q·n as
 * 128-bit products; their low words cancel by the choice of q (the sum of the two low words is 0 or 2^64,
 * 2^64 exactly when a·b_i's low word is nonzero), so no carry chain runs through them. The running sum stays
 * below 2n < 2^129: one carry bit (top) beside two words.
 */
static inline pk_u128 pk_mont128_mul(const pk_mont128 *m, pk_u128 a, pk_u128 b)
{
    const uint64_t a0 = (uint64_t)a, a1 = (uint64_t)(a >> 64);
    const uint64_t b0 = (uint64_t)b, b1 = (uint64_t)(b >> 64);
    const uint64_t n0 = (uint64_t)m->n, n1 = (uint64_t)(m->n >> 64);
    /* limb 0: s + top·2^128 = (a·b0 + q·n) / 2^64 */
    const pk_u128 p0 = (pk_u128)a0 * b0, p1 = (pk_u128)a1 * b0;
    uint64_t q = (uint64_t)p0 * m->ninv;
    const pk_u128 r0 = (pk_u128)q * n0, r1 = (pk_u128)q * n1;
    pk_u128 s = (p0 >> 64) + (r0 >> 64) + ((uint64_t)p0 != 0);
    uint64_t top = __builtin_add_overflow(s, p1, &s);
    top += __builtin_add_overflow(s, r1, &s); /* at most one of the two carries: the whole is below 2^129 */
    /* limb 1: w + top·2^128 = (s + top·2^128 + a·b1 + q·n) / 2^64, below 2n */
    const pk_u128 u0 = (pk_u128)a0 * b1 + (uint64_t)s;
    const pk_u128 u1 = (pk_u128)a1 * b1 + (uint64_t)(s >> 64) + ((pk_u128)top << 64);
    q = (uint64_t)u0 * m->ninv;
    const pk_u128 v0 = (pk_u128)q * n0, v1 = (pk_u128)q * n1;
    pk_u128 w = (u0 >> 64) + (v0 >> 64) + ((uint64_t)u0 != 0);
    top = __builtin_add_overflow(w, u1, &w);
    top += __builtin_add_overflow(w, v1, &w);
#if defined(__x86_64__)
    /* Below 2^127 the sum w < 2n has no carry, and w >= n is rare (about n / 2^130 of products for random
       residues): a branch is predicted well and costs least. Above, w >= n is frequent: w + top·2^128 − n, kept
       unless it borrows, by two conditional moves (masks lengthen the chain; docs/kernel.md has the measurement).
       The test on n's top bit is the same for every product with that modulus. */
    if (!(n1 >> 63))
        return w >= m->n ? w - m->n : w;
    uint64_t d0 = (uint64_t)w, d1 = (uint64_t)(w >> 64);
    const uint64_t w0 = d0, w1 = d1;
    __asm__("subq %[n0], %[d0]\n\t"
            "sbbq %[n1], %[d1]\n\t"
            "sbbq $0, %[t]\n\t"
            "cmovcq %[w0], %[d0]\n\t"
            "cmovcq %[w1], %[d1]"
            : [d0] "+&r"(d0), [d1] "+&r"(d1), [t] "+&r"(top)
            : [n0] "r"(n0), [n1] "r"(n1), [w0] "r"(w0), [w1] "r"(w1)
            : "cc");
    return (pk_u128)d0 | ((pk_u128)d1 << 64);
#else
    return (top || w >= m->n) ? w - m->n : w;
#endif
}

static inline pk_u128 pk_mont128_to(const pk_mont128 *m, pk_u128 a)
{
    return pk_mont128_mul(m, a % m->n, m->r2);
}

static inline pk_u128 pk_mont128_from(const pk_mont128 *m, pk_u128 a)
{
    return pk_mont128_mul(m, a, 1);
}

#endif /* PK_WORD_MONT_H */
