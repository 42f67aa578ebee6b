/*
 * word_gen.h — arithmetic-generic parts of the word-size factoring unit,
 * written once and instantiated for one word (uint64_t) and two words
 * (pk_u128) by word_arith.c, which defines before each inclusion:
 *
 *   W            the word type            M       the Montgomery context type
 *   PFX(name)    the function name prefix
 *   MUL ADD SUB  Montgomery operations    TO(m, v) v into Montgomery form
 *   WBITS        bits of W
 *
 * Here: binary gcd and modular inverse, BPSW (a strong base-2 test and a
 * strong Lucas test with Selfridge's parameters), and one ECM curve at a time
 * as a resumable state machine (Montgomery curves in x and z; Suyama's
 * parametrization; stage 1 by a Montgomery ladder per prime power; stage 2 by
 * baby steps j·Q (j prime to D) and giant steps m·D·Q, one product of cross
 * differences, one gcd at the end).
 */

static inline int PFX(ctz)(W a)
{
#if WBITS == 64
    return __builtin_ctzll(a);
#else
    uint64_t lo = (uint64_t)a;
    return lo ? __builtin_ctzll(lo) : 64 + __builtin_ctzll((uint64_t)(a >> 64));
#endif
}

static inline int PFX(bitlen)(W a)
{
#if WBITS == 64
    return a ? 64 - __builtin_clzll(a) : 0;
#else
    uint64_t hi = (uint64_t)(a >> 64);
    return hi ? 128 - __builtin_clzll(hi) : ((uint64_t)a ? 64 - __builtin_clzll((uint64_t)a) : 0);
#endif
}

W PFX(gcd)(W a, W b)
{
    if (a == 0)
        return b;
    if (b == 0)
        return a;
    int shift = PFX(ctz)(a | b);
    a >>= PFX(ctz)(a);
    do {
        b >>= PFX(ctz)(b);
        /* a, b = min(a, b), |b - a|, chosen without a branch (the comparison is a coin toss) */
        W t = b - a, mask = (W)0 - (W)(b < a);
        a += t & mask;            /* b when b < a */
        b = (t ^ mask) - mask;    /* |b - a| */
    } while (b);
    return a << shift;
}

/* x / 2 mod n (n odd, x < n). */
static inline W PFX(half)(const M *m, W x)
{
    return (x & 1) ? (x >> 1) + (m->n >> 1) + 1 : x >> 1;
}

/* The inverse of a Montgomery residue a, in Montgomery form, into *inv; returns gcd(a, n) (1 on success). */
static W PFX(inverse)(const M *m, W a, W *inv)
{
    /* a·x1 = u and a·x2 = v (mod n) throughout; v stays odd. */
    W u = a, v = m->n, x1 = 1, x2 = 0;
    if (u == 0)
        return m->n;
    while (u) {
        while (!(u & 1)) {
            u >>= 1;
            x1 = PFX(half)(m, x1);
        }
        if (u < v) {
            W t = u;
            u = v;
            v = t;
            t = x1;
            x1 = x2;
            x2 = t;
        }
        u -= v;
        x1 = SUB(m, x1, x2);
    }
    if (v != 1)
        return v;
    /* x2 = (aR)^-1 = a^-1 R^-1; times R^3 (reduced twice) gives a^-1 R. */
    W r3 = MUL(m, m->r2, m->r2);
    *inv = MUL(m, x2, r3);
    return 1;
}

/* ----------------------------------------------------------------- BPSW */

/* Strong probable prime to base 2 (n odd >= 3). */
int PFX(sprp2)(const M *m)
{
    const W n = m->n, one = m->one, minus1 = n - one;
    W d = n - 1;
    int s = PFX(ctz)(d);
    d >>= s;
    W x = one;
    for (int b = PFX(bitlen)(d) - 1; b >= 0; b--) {
        x = MUL(m, x, x);
        if ((d >> b) & 1)
            x = ADD(m, x, x);
    }
    if (x == one || x == minus1)
        return 1;
    for (int r = 1; r < s; r++) {
        x = MUL(m, x, x);
        if (x == minus1)
            return 1;
        if (x == one)
            return 0;
    }
    return 0;
}

/* Jacobi symbol (a / n), a >= 0 below 2^32, n odd. */
static int PFX(jacobi)(uint64_t a, W n)
{
    int t = 1;
    uint64_t nn;
    if (a == 0)
        return n == 1;
    while (!(a & 1)) {
        a >>= 1;
        unsigned r = (unsigned)(n & 7);
        if (r == 3 || r == 5)
            t = -t;
    }
    /* reciprocity: (a / n) = (n / a) · (-1)^((a-1)/2 · (n-1)/2) */
    if ((a & 3) == 3 && (n & 3) == 3)
        t = -t;
    nn = (uint64_t)(n % a);
    uint64_t x = nn, y = a; /* now (x / y), y odd */
    while (x) {
        while (!(x & 1)) {
            x >>= 1;
            uint64_t r = y & 7;
            if (r == 3 || r == 5)
                t = -t;
        }
        uint64_t tmp = x;
        x = y;
        y = tmp;
        if ((x & 3) == 3 && (y & 3) == 3)
            t = -t;
        x %= y;
    }
    return y == 1 ? t : 0;
}

/* Strong Lucas probable prime with Selfridge's D (n odd, not a square, no factor below 50). */
int PFX(slprp)(const M *m)
{
    const W n = m->n;
    int64_t D = 5;
    for (;;) {
        uint64_t a = (uint64_t)(D < 0 ? -D : D);
        int j = PFX(jacobi)(a, n);
        if (D < 0 && (n & 3) == 3)
            j = -j;
        if (j == -1)
            break;
        if (j == 0 && (W)a != n)
            return 0;
        D = D > 0 ? -(D + 2) : -D + 2;
        if (D > 100000 || D < -100000)
            return 0; /* only a square gets here, and callers exclude squares */
    }
    const int64_t Q = (1 - D) / 4;
    const W Dm = D >= 0 ? TO(m, (W)D) : n - TO(m, (W)(-D)) ;
    const W Qm0 = Q >= 0 ? TO(m, (W)Q) : n - TO(m, (W)(-Q));
    const W Qm = Qm0 == n ? 0 : Qm0;
    const W Dmm = Dm == n ? 0 : Dm;
    W d = n + 1; /* n + 1 does not wrap: n is not 2^bits - 1 (divisible by 3) */
    int s = PFX(ctz)(d);
    d >>= s;
    W U = m->one, V = m->one, Qk = Qm;
    for (int b = PFX(bitlen)(d) - 2; b >= 0; b--) {
        U = MUL(m, U, V);
        V = SUB(m, MUL(m, V, V), ADD(m, Qk, Qk));
        Qk = MUL(m, Qk, Qk);
        if ((d >> b) & 1) {
            W U2 = PFX(half)(m, ADD(m, U, V));
            V = PFX(half)(m, ADD(m, MUL(m, Dmm, U), V));
            U = U2;
            Qk = MUL(m, Qk, Qm);
        }
    }
    if (U == 0 || V == 0)
        return 1;
    for (int r = 1; r < s; r++) {
        V = SUB(m, MUL(m, V, V), ADD(m, Qk, Qk));
        if (V == 0)
            return 1;
        Qk = MUL(m, Qk, Qk);
    }
    return 0;
}

/* ------------------------------------------------------------------ ECM */

typedef struct {
    W x, z;
} PFX(pt);

static inline __attribute__((always_inline)) PFX(pt) PFX(dbl)(const M *m, PFX(pt) p, W a24)
{
    W s = ADD(m, p.x, p.z), d = SUB(m, p.x, p.z);
    s = MUL(m, s, s);
    d = MUL(m, d, d);
    W t = SUB(m, s, d);
    PFX(pt) r;
    r.x = MUL(m, s, d);
    r.z = MUL(m, t, ADD(m, d, MUL(m, a24, t)));
    return r;
}

/* p + q given p - q = diff. */
static inline __attribute__((always_inline)) PFX(pt) PFX(add)(const M *m, PFX(pt) p, PFX(pt) q, PFX(pt) diff)
{
    W u = MUL(m, SUB(m, p.x, p.z), ADD(m, q.x, q.z));
    W v = MUL(m, ADD(m, p.x, p.z), SUB(m, q.x, q.z));
    W s = ADD(m, u, v), d = SUB(m, u, v);
    PFX(pt) r;
    r.x = MUL(m, diff.z, MUL(m, s, s));
    r.z = MUL(m, diff.x, MUL(m, d, d));
    return r;
}

/* k·p and (k + 1)·p for k >= 1. (Choosing by masks instead of branches measured slower.) */
static void PFX(ladder)(const M *m, PFX(pt) p, uint64_t k, W a24, PFX(pt) *kp, PFX(pt) *k1p)
{
    PFX(pt) r0 = p, r1 = PFX(dbl)(m, p, a24);
    for (int b = 62 - __builtin_clzll(k); b >= 0; b--) {
        if ((k >> b) & 1) {
            r0 = PFX(add)(m, r1, r0, p);
            r1 = PFX(dbl)(m, r1, a24);
        } else {
            r1 = PFX(add)(m, r1, r0, p);
            r0 = PFX(dbl)(m, r0, a24);
        }
    }
    *kp = r0;
    if (k1p)
        *k1p = r1;
}

/* Curve setup (stage 0 -> 1): the starting point and a24 of curve e->curve. Returns the gcd met when the
   inversion fails (a factor, or n), else 1. */
W PFX(ecm_curve)(const M *m, PFX(ecm) *e)
{
    W s = TO(m, (W)e->curve + 6);
    W s2 = MUL(m, s, s);
    W five = TO(m, 5);
    W u = SUB(m, s2, five);
    W v = ADD(m, ADD(m, s, s), ADD(m, s, s));
    W u3 = MUL(m, MUL(m, u, u), u);
    W v3 = MUL(m, MUL(m, v, v), v);
    W vu = SUB(m, v, u);
    W num = MUL(m, MUL(m, MUL(m, vu, vu), vu), ADD(m, ADD(m, ADD(m, u, u), u), v));
    W den = MUL(m, u3, v);
    for (int i = 0; i < 4; i++)
        den = ADD(m, den, den);
    W inv = 0;
    W g = PFX(inverse)(m, den, &inv);
    if (g != 1)
        return g;
    e->a24 = MUL(m, num, inv);
    e->x = u3;
    e->z = v3;
    return 1;
}

/* Stage-2 derived values from Q = (e->x : e->z): baby x-coordinates with z = 1 and D·Q. Returns the gcd
   met when the inversion fails, else 1. */
W PFX(ecm_baby)(const M *m, PFX(ecm) *e, const pk_word_ecm_level *L)
{
    PFX(pt) q = {e->x, e->z};
    PFX(pt) q2 = PFX(dbl)(m, q, e->a24);
    PFX(pt) prev = q, cur = q;
    W zs[PK_WORD_BABY], pre[PK_WORD_BABY];
    int nb = 0;
    for (unsigned j = 1; j < L->d / 2; j += 2) {
        if (j > 1) {
            PFX(pt) next = j == 3 ? PFX(add)(m, q2, q, q) : PFX(add)(m, cur, q2, prev);
            prev = cur;
            cur = next;
        }
        if (pk_word_gcd_small(j, L->d) == 1) {
            e->bx[nb] = cur.x;
            zs[nb] = cur.z;
            nb++;
        }
    }
    /* One inversion for all: prefix products, then back. */
    W acc = m->one;
    for (int i = 0; i < nb; i++) {
        pre[i] = acc;
        acc = MUL(m, acc, zs[i]);
    }
    W inv = 0;
    W g = PFX(inverse)(m, acc, &inv);
    if (g != 1)
        return g;
    for (int i = nb - 1; i >= 0; i--) {
        W zi = MUL(m, inv, pre[i]);
        inv = MUL(m, inv, zs[i]);
        e->bx[i] = MUL(m, e->bx[i], zi);
    }
    PFX(pt) dq;
    PFX(ladder)(m, q, L->d, e->a24, &dq, NULL);
    e->dx = dq.x;
    e->dz = dq.z;
    return 1;
}

/*
 * Advance the curve(s) while *credit covers the next stint. Returns 1 with a factor in *factor, 0
 * when the credit is spent. Unit costs: about one modular multiplication each.
 */
int PFX(ecm_run)(const M *m, PFX(ecm) *e, unsigned nbits, uint64_t *credit, uint64_t *work, W *factor)
{
    for (;;) {
        const pk_word_ecm_level *L = pk_word_ecm_level_for(nbits, e->curve);
        if (e->stage == 0) {
            if (!pk_word_charge(credit, work, PK_WORD_COST_CURVE))
                return 0;
            W g = PFX(ecm_curve)(m, e);
            if (g != 1) {
                e->curve++;
                if (g != m->n) {
                    *factor = g;
                    return 1;
                }
                continue;
            }
            e->stage = 1;
            e->pos = 0;
            e->level = (uint32_t)(L - pk_word_ecm_levels);
            continue;
        }
        if (e->stage == 1) {
            if (e->pos == 0) {
                /* p = 2: doublings only */
                unsigned k = 31 - (unsigned)__builtin_clz(L->b1);
                uint64_t cost = 5 * (uint64_t)k;
                if (!pk_word_charge(credit, work, cost))
                    return 0;
                PFX(pt) p = {e->x, e->z};
                for (unsigned i = 0; i < k; i++)
                    p = PFX(dbl)(m, p, e->a24);
                e->x = p.x;
                e->z = p.z;
                e->pos = 1;
                continue;
            }
            unsigned p = e->pos - 1 < PK_WORD_ODD_PRIMES ? pk_word_odd_primes[e->pos - 1] : 0x10000;
            if (p > L->b1) {
                if (!pk_word_charge(credit, work, PK_WORD_COST_BABY))
                    return 0;
                W g = PFX(ecm_baby)(m, e, L);
                if (g != 1) {
                    e->stage = 0;
                    e->pos = 0;
                    e->curve++;
                    if (g != m->n) {
                        *factor = g;
                        return 1;
                    }
                    continue;
                }
                /* giants from m0 = max(2, round(B1 / D)): (m0 - 1)·D·Q and m0·D·Q */
                uint32_t m0 = (L->b1 + L->d / 2) / L->d;
                if (m0 < 2)
                    m0 = 2;
                PFX(pt) dq = {e->dx, e->dz}, h, g2;
                PFX(ladder)(m, dq, m0 - 1, e->a24, &h, &g2);
                e->hx = h.x;
                e->hz = h.z;
                e->gx = g2.x;
                e->gz = g2.z;
                e->acc = m->one;
                e->stage = 2;
                e->pos = m0;
                continue;
            }
            uint64_t q = p;
            while (q * p <= L->b1)
                q *= p;
            int bits = 64 - __builtin_clzll(q);
            uint64_t cost = 11 * (uint64_t)bits;
            if (!pk_word_charge(credit, work, cost))
                return 0;
            PFX(pt) pt0 = {e->x, e->z}, r;
            PFX(ladder)(m, pt0, q, e->a24, &r, NULL);
            e->x = r.x;
            e->z = r.z;
            e->pos++;
            continue;
        }
        /* stage 2: giant step m = e->pos */
        const unsigned nb = pk_word_baby_count(L->d);
        const uint64_t cost = 2 * (uint64_t)nb + 6;
        const uint32_t mhi = pk_word_ecm_giant_end(L);
        if (e->pos > mhi) {
            if (!pk_word_charge(credit, work, PK_WORD_COST_GCD))
                return 0;
            W g = PFX(gcd)(e->acc, m->n);
            e->stage = 0;
            e->pos = 0;
            e->curve++;
            if (g != 1 && g != m->n) {
                *factor = g;
                return 1;
            }
            continue;
        }
        if (!pk_word_charge(credit, work, cost))
            return 0;
        /* two products in turn, so consecutive multiplications do not wait on each other */
        W acc = e->acc, acc2 = m->one;
        for (unsigned i = 0; i < nb; i += 2) {
            acc = MUL(m, acc, SUB(m, e->gx, MUL(m, e->bx[i], e->gz)));
            acc2 = MUL(m, acc2, SUB(m, e->gx, MUL(m, e->bx[i + 1], e->gz)));
        }
        e->acc = MUL(m, acc, acc2);
        PFX(pt) g2 = {e->gx, e->gz}, h = {e->hx, e->hz}, dq = {e->dx, e->dz};
        PFX(pt) nx = PFX(add)(m, g2, dq, h);
        e->hx = g2.x;
        e->hz = g2.z;
        e->gx = nx.x;
        e->gz = nx.z;
        e->pos++;
    }
}
