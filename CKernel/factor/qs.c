/*
 * factor/qs.c — self-initialising quadratic sieve (see qs.h).
 *
 * With k the multiplier and kN = k·n, a polynomial is Q(x) = (Ax + B)^2 − kN
 * with B^2 ≡ kN (mod A), so Q(x) = A·g(x), g(x) = Ax^2 + 2Bx + C,
 * C = (B^2 − kN)/A, and (Ax + B)^2 ≡ A·g(x) (mod n). A relation is an x in
 * [−M, M) whose g(x) factors over the factor base, but for at most one
 * prime below the large-prime bound; two relations with the same large
 * prime make one cycle. Every cycle is a row of the GF(2) matrix (exponent
 * parities of −1, 2 and the factor-base primes); a set of rows summing to
 * zero gives X^2 ≡ Y^2 (mod n) and gcd(X − Y, n).
 *
 * Factor-base index 0 stands for −1, index 1 for 2, the rest are odd primes.
 */
#include <stdlib.h>
#include <string.h>

#include "factor/qs.h"

#define QS_BLOCK 32768u
#define QS_SMALL 32u       /* primes below this are not sieved */
#define QS_EXTRA 64u       /* cycles beyond the columns */
#define QS_MAX_S 20u
#define QS_ROUNDS 4        /* square-root rounds before giving up */

enum { QS_SIEVE = 0, QS_MATRIX = 1, QS_SQRT = 2 };

/* Parameters by bits of n, chosen by measurement (docs/kernel.md):
   factor-base size, sieve length per polynomial in kB (2M; blocks of at most 32 kB), large
   prime bound as a multiple of the largest factor-base prime, and the bits
   below log2 g_max at which a sieve value becomes a candidate. */
typedef struct qs_param {
    unsigned bits, fb, kb, lpmult, slack;
} qs_param;

static const qs_param qs_params[] = {
    {40, 40, 16, 20, 14},      {64, 80, 16, 30, 16},      {80, 110, 16, 40, 18},     {96, 140, 16, 50, 21},
    {104, 170, 16, 80, 24},    {112, 250, 32, 80, 25},    {128, 420, 32, 100, 28},   {144, 700, 32, 120, 29},
    {160, 1100, 32, 150, 30},  {176, 1600, 96, 150, 31},  {192, 2400, 128, 180, 32}, {208, 3600, 192, 200, 33},
    {224, 5200, 256, 200, 34}, {240, 7500, 320, 250, 35},
};
#define QS_NPARAMS (sizeof qs_params / sizeof qs_params[0])

struct pk_qs {
    mpz_t n, kn, a, b, c, t, u, v;
    mpz_t bl[QS_MAX_S];       /* B_l of the current A */
    uint32_t k;               /* multiplier */
    unsigned bits;
    uint32_t fbsize, blocks, blen, m; /* interval [-m, m), 2m = blocks * blen */
    uint64_t lp;              /* large-prime bound */
    uint8_t thresh;           /* sieve start value: candidates reach 0x80 */
    uint32_t *p, *sq;         /* factor base and sqrt(kN) mod p (0 when p | kN) */
    uint8_t *logp;
    uint32_t *ainv, *s1, *s2, *n1, *n2; /* A^-1 mod p, roots in [0, p), next positions */
    uint32_t *pinv, *plim;    /* p^-1 mod 2^32 and floor((2^32 - 1) / p): p | d < 2^32 iff d·pinv <= plim */
    uint32_t *hit;            /* scratch: nonzero where a factor-base prime divides the candidate */
    uint32_t fbpad;           /* fbsize rounded up to 8: the length of p, s1, s2, pinv, plim, hit */
    void (*hits)(const struct pk_qs *q, uint32_t pos); /* fills hit: qs_hits_avx2 or qs_hits_base */
    uint32_t *binv;           /* [QS_MAX_S][fbsize]: 2·B_l·A^-1 mod p */
    uint8_t *skip;            /* primes of A */
    uint8_t *sieve;           /* one block */
    uint32_t s;               /* primes in A */
    uint32_t aidx[QS_MAX_S];
    uint32_t poly, npoly;     /* polynomial of this A, polynomials per A */
    uint32_t alo, ahi;        /* index range the primes of A are drawn from */
    uint64_t rng;
    uint64_t *aused;          /* hashes of the A used */
    size_t naused, capaused;

    /* relations */
    mpz_t *y;                 /* Ax + B mod n */
    uint32_t *roff, *rlen;    /* factor list of relation r: fl[roff[r] .. + rlen[r]] */
    uint64_t *rlp;            /* large prime (1 when none) */
    size_t nrel, caprel;
    uint32_t *fl;
    size_t nfl, capfl;
    uint32_t *hash;           /* large prime -> relation + 1, open addressing */
    size_t hcap, hcount;
    uint32_t *cyc;            /* pairs (r1, r2), r2 = UINT32_MAX for a full relation */
    size_t ncyc, capcyc;
    size_t need;              /* cycles needed */
    uint32_t *tdl;            /* scratch factor list of a candidate */

    /* matrix */
    int phase;
    int round;
    uint64_t *mat;
    uint8_t *used;
    size_t rows, wc, wh, ww;  /* rows, words of columns, of history, per row */
    uint32_t col;
    size_t dep;               /* next row looked at for a dependency */
    uint32_t *cnt;            /* exponent sums of a square root */

    uint64_t work;
    double frac;
};

/* ------------------------------------------------------------- arithmetic */

static uint32_t pow_mod(uint32_t b, uint32_t e, uint32_t p)
{
    uint64_t r = 1, x = b % p;
    while (e) {
        if (e & 1)
            r = r * x % p;
        x = x * x % p;
        e >>= 1;
    }
    return (uint32_t)r;
}

/* p^-1 mod 2^32 for odd p (Newton's iteration: each step doubles the correct low bits, from 3 for p·p ≡ 1 mod 8). */
static uint32_t inverse_mod_2_32(uint32_t p)
{
    uint32_t x = p;
    for (int i = 0; i < 4; i++)
        x *= 2 - p * x;
    return x;
}

static void qs_hits_avx2(const pk_qs *q, uint32_t pos);
static void qs_hits_base(const pk_qs *q, uint32_t pos);

static uint32_t inv_mod(uint32_t a, uint32_t p)
{
    int64_t t = 0, nt = 1, r = p, nr = a % p;
    while (nr) {
        int64_t qq = r / nr, x;
        x = t - qq * nt; t = nt; nt = x;
        x = r - qq * nr; r = nr; nr = x;
    }
    return (uint32_t)(t < 0 ? t + p : t);
}

/* Square root of a quadratic residue a mod the odd prime p (Tonelli-Shanks). */
static uint32_t sqrt_mod(uint32_t a, uint32_t p)
{
    a %= p;
    if (a == 0)
        return 0;
    if (p % 4 == 3)
        return pow_mod(a, (p + 1) / 4, p);
    uint32_t q = p - 1, s = 0;
    while (!(q & 1)) {
        q >>= 1;
        s++;
    }
    uint32_t z = 2;
    while (pow_mod(z, (p - 1) / 2, p) != p - 1)
        z++;
    uint64_t c = pow_mod(z, q, p), r = pow_mod(a, (q + 1) / 2, p), t = pow_mod(a, q, p);
    uint32_t mm = s;
    while (t != 1) {
        uint32_t i = 0;
        uint64_t tt = t;
        while (tt != 1) {
            tt = tt * tt % p;
            i++;
        }
        uint64_t bb = c;
        for (uint32_t j = 0; j + i + 1 < mm; j++)
            bb = bb * bb % p;
        mm = i;
        c = bb * bb % p;
        t = t * c % p;
        r = r * bb % p;
    }
    return (uint32_t)r;
}

/* log2 and 2^y without libm (the kernel links only GMP and GMP-ECM). */
static double qs_log2(double x)
{
    if (x <= 0)
        return -1e300;
    int e = 0;
    while (x >= 2) {
        x *= 0.5;
        e++;
    }
    while (x < 1) {
        x *= 2;
        e--;
    }
    double z = (x - 1) / (x + 1), z2 = z * z, t = z, sum = 0;
    for (int k = 1; k < 40; k += 2) {
        sum += t / k;
        t *= z2;
    }
    return e + 2 * sum / 0.69314718055994530942;
}

static double qs_exp2(double y)
{
    double r = 1;
    while (y >= 1) {
        r *= 2;
        y -= 1;
    }
    while (y < 0) {
        r *= 0.5;
        y += 1;
    }
    double a = y * 0.69314718055994530942, t = 1, sum = 1;
    for (int k = 1; k < 25; k++) {
        t *= a / k;
        sum += t;
    }
    return r * sum;
}

static double qs_ln(double x)
{
    return qs_log2(x) * 0.69314718055994530942;
}

/* Jacobi symbol (a/m) for odd m > 0. */
static int jacobi(uint32_t a, uint32_t m)
{
    int r = 1;
    a %= m;
    while (a) {
        while (!(a & 1)) {
            a >>= 1;
            if ((m & 7) == 3 || (m & 7) == 5)
                r = -r;
        }
        uint32_t t = a;
        a = m;
        m = t;
        if ((a & 3) == 3 && (m & 3) == 3)
            r = -r;
        a %= m;
    }
    return m == 1 ? r : 0;
}

/* The odd primes below limit, ascending, into a new array (*count of them). */
static uint32_t *odd_primes(uint32_t limit, size_t *count)
{
    uint8_t *comp = calloc(limit / 2 + 1, 1);
    uint32_t *out = malloc((limit / 4 + 16) * sizeof *out);
    size_t k = 0;
    if (!comp || !out) {
        free(comp);
        free(out);
        return NULL;
    }
    for (uint32_t i = 1; 2 * i + 1 < limit; i++) {
        if (comp[i])
            continue;
        uint32_t p = 2 * i + 1;
        out[k++] = p;
        for (uint64_t j = (uint64_t)p * p / 2; j < limit / 2; j += p)
            comp[j] = 1;
    }
    free(comp);
    *count = k;
    return out;
}

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s += UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

/* ------------------------------------------------------------------- setup */

/* Knuth-Schroeppel: the odd squarefree k < 72 maximising the expected
   contribution of small primes to kN, less half of log k. */
static uint32_t choose_multiplier(const mpz_t n, const uint32_t *primes, size_t np)
{
    static const uint8_t ks[] = {1,  3,  5,  7,  11, 13, 15, 17, 19, 21, 23, 29, 31, 33, 35, 37, 39,
                                 41, 43, 47, 51, 53, 55, 57, 59, 61, 65, 67, 69, 71};
    double f[sizeof ks];
    unsigned nmod8 = (unsigned)mpz_fdiv_ui(n, 8);
    for (size_t i = 0; i < sizeof ks; i++) {
        unsigned m8 = (nmod8 * ks[i]) % 8;
        f[i] = -0.5 * qs_ln((double)ks[i]) + (m8 == 1 ? 2 * qs_ln(2.0) : m8 == 5 ? qs_ln(2.0) : 0.5 * qs_ln(2.0));
    }
    for (size_t j = 0; j < np && primes[j] < 300; j++) {
        uint32_t p = primes[j];
        int jn = jacobi((uint32_t)mpz_fdiv_ui(n, p), p);
        double lp = qs_ln((double)p);
        for (size_t i = 0; i < sizeof ks; i++) {
            if (ks[i] % p == 0)
                f[i] += lp / p;
            else if (jn * jacobi(ks[i], p) == 1)
                f[i] += 2 * lp / (p - 1);
        }
    }
    size_t best = 0;
    for (size_t i = 1; i < sizeof ks; i++)
        if (f[i] > f[best])
            best = i;
    return ks[best];
}

static qs_param params_for(unsigned bits)
{
    if (bits <= qs_params[0].bits)
        return qs_params[0];
    for (size_t i = 1; i < QS_NPARAMS; i++) {
        if (bits <= qs_params[i].bits) {
            const qs_param *lo = &qs_params[i - 1], *hi = &qs_params[i];
            double f = (double)(bits - lo->bits) / (hi->bits - lo->bits);
            qs_param r = *hi;
            r.bits = bits;
            r.fb = (unsigned)(lo->fb + f * ((double)hi->fb - lo->fb));
            r.lpmult = (unsigned)(lo->lpmult + f * ((double)hi->lpmult - lo->lpmult));
            r.slack = (unsigned)(lo->slack + f * ((double)hi->slack - lo->slack) + 0.5);
            r.kb = f < 0.5 ? lo->kb : hi->kb;
            return r;
        }
    }
    return qs_params[QS_NPARAMS - 1];
}

void pk_qs_free(pk_qs *q)
{
    if (!q)
        return;
    mpz_clears(q->n, q->kn, q->a, q->b, q->c, q->t, q->u, q->v, NULL);
    for (unsigned i = 0; i < QS_MAX_S; i++)
        mpz_clear(q->bl[i]);
    for (size_t i = 0; i < q->nrel; i++)
        mpz_clear(q->y[i]);
    free(q->y);
    free(q->p);
    free(q->sq);
    free(q->logp);
    free(q->ainv);
    free(q->s1);
    free(q->pinv);
    free(q->plim);
    free(q->hit);
    free(q->s2);
    free(q->n1);
    free(q->n2);
    free(q->binv);
    free(q->skip);
    free(q->sieve);
    free(q->aused);
    free(q->roff);
    free(q->rlen);
    free(q->rlp);
    free(q->fl);
    free(q->hash);
    free(q->cyc);
    free(q->tdl);
    free(q->mat);
    free(q->used);
    free(q->cnt);
    free(q);
}

pk_qs *pk_qs_new(const mpz_t n)
{
    pk_qs *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    mpz_inits(q->n, q->kn, q->a, q->b, q->c, q->t, q->u, q->v, NULL);
    for (unsigned i = 0; i < QS_MAX_S; i++)
        mpz_init(q->bl[i]);
    mpz_set(q->n, n);
    q->bits = (unsigned)mpz_sizeinbase(n, 2);
    qs_param pr = params_for(q->bits);
    size_t np;
    uint32_t *primes = odd_primes(pr.fb * 30 + 5000, &np);
    if (!primes) {
        pk_qs_free(q);
        return NULL;
    }
    q->k = choose_multiplier(n, primes, np);
    mpz_mul_ui(q->kn, n, q->k);
    q->fbsize = pr.fb;
    q->blen = pr.kb >= 32 ? QS_BLOCK : pr.kb * 1024;
    q->blocks = pr.kb * 1024 / q->blen;
    q->m = q->blocks * q->blen / 2;
    q->rng = UINT64_C(0x5153) ^ mpz_get_ui(n);
    size_t fb = q->fbsize;
    /* The arrays the candidate check reads eight at a time are padded (zeros: they never count). */
    q->fbpad = (uint32_t)((fb + 7) & ~(size_t)7);
    q->p = calloc(q->fbpad, sizeof *q->p);
    q->sq = malloc(fb * sizeof *q->sq);
    q->logp = malloc(fb);
    q->ainv = malloc(fb * sizeof *q->ainv);
    q->s1 = calloc(q->fbpad, sizeof *q->s1);
    q->s2 = calloc(q->fbpad, sizeof *q->s2);
    q->pinv = calloc(q->fbpad, sizeof *q->pinv);
    q->plim = calloc(q->fbpad, sizeof *q->plim);
    q->hit = calloc(q->fbpad, sizeof *q->hit);
    q->hits = __builtin_cpu_supports("avx2") ? qs_hits_avx2 : qs_hits_base;
    q->n1 = malloc(fb * sizeof *q->n1);
    q->n2 = malloc(fb * sizeof *q->n2);
    q->binv = malloc((size_t)QS_MAX_S * fb * sizeof *q->binv);
    q->skip = calloc(q->fbpad, 1);
    q->sieve = malloc(QS_BLOCK);
    q->tdl = malloc((fb + 64 + 2 * (size_t)q->bits) * sizeof *q->tdl);
    q->cnt = malloc(fb * sizeof *q->cnt);
    q->hcap = 1024;
    q->hash = calloc(q->hcap, sizeof *q->hash);
    if (!q->p || !q->sq || !q->logp || !q->ainv || !q->s1 || !q->pinv || !q->plim || !q->hit || !q->s2 || !q->n1 || !q->n2 || !q->binv ||
        !q->skip || !q->sieve || !q->tdl || !q->cnt || !q->hash) {
        free(primes);
        pk_qs_free(q);
        return NULL;
    }
    /* The factor base: -1, 2, then the odd primes with (kN/p) != -1. */
    q->p[0] = 1;
    q->p[1] = 2;
    /* pinv and plim stay 0 for -1 and 2 (found otherwise; their hits are not read). */
    q->sq[0] = q->sq[1] = 0;
    q->logp[0] = q->logp[1] = 0;
    uint32_t i = 2;
    for (size_t j = 0; i < fb && j < np; j++) {
        uint32_t p = primes[j];
        uint32_t r = (uint32_t)mpz_fdiv_ui(q->kn, p);
        if (r != 0 && jacobi(r, p) != 1)
            continue;
        q->p[i] = p;
        q->pinv[i] = inverse_mod_2_32(p);
        q->plim[i] = UINT32_MAX / p;
        q->sq[i] = sqrt_mod(r, p);
        q->logp[i] = (uint8_t)(qs_log2((double)p) + 0.5);
        i++;
    }
    free(primes);
    if (i < fb) { /* never: the primes below 30·fb + 5000 suffice */
        pk_qs_free(q);
        return NULL;
    }
    uint64_t pmax = q->p[fb - 1];
    q->lp = pmax * pr.lpmult;
    if (q->lp >= pmax * pmax)
        q->lp = pmax * pmax - 1;
    /* log2 of g's largest values, about M·sqrt(kN/2), less the slack. */
    double gmax = qs_log2((double)q->m) + 0.5 * ((double)mpz_sizeinbase(q->kn, 2) - 1.0);
    double th = gmax - pr.slack;
    if (th < 8)
        th = 8;
    if (th > 120)
        th = 120;
    q->thresh = (uint8_t)(0x80 - (unsigned)th);
    q->need = fb + QS_EXTRA;
    return q;
}

/* ------------------------------------------------------------- relations */

static int grow(void **ptr, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *np = realloc(*ptr, c * size);
    if (!np)
        return -1;
    *ptr = np;
    *cap = c;
    return 0;
}

static int hash_grow(pk_qs *q)
{
    size_t cap = q->hcap * 2;
    uint32_t *h = calloc(cap, sizeof *h);
    if (!h)
        return -1;
    for (size_t i = 0; i < q->hcap; i++) {
        if (!q->hash[i])
            continue;
        uint64_t L = q->rlp[q->hash[i] - 1];
        size_t j = (size_t)(L * UINT64_C(0x9e3779b97f4a7c15) >> 20) & (cap - 1);
        while (h[j])
            j = (j + 1) & (cap - 1);
        h[j] = q->hash[i];
    }
    free(q->hash);
    q->hash = h;
    q->hcap = cap;
    return 0;
}

/* Store a relation (y, factor list, large prime) and make cycles of it. */
static int add_relation(pk_qs *q, const mpz_t y, const uint32_t *f, size_t nf, uint64_t L)
{
    size_t relcap = q->caprel;
    if (grow((void **)&q->roff, &relcap, q->nrel + 1, sizeof *q->roff))
        return -1;
    relcap = q->caprel;
    if (grow((void **)&q->rlen, &relcap, q->nrel + 1, sizeof *q->rlen))
        return -1;
    relcap = q->caprel;
    if (grow((void **)&q->rlp, &relcap, q->nrel + 1, sizeof *q->rlp))
        return -1;
    relcap = q->caprel;
    if (grow((void **)&q->y, &relcap, q->nrel + 1, sizeof *q->y))
        return -1;
    q->caprel = relcap;
    if (grow((void **)&q->fl, &q->capfl, q->nfl + nf, sizeof *q->fl) ||
        grow((void **)&q->cyc, &q->capcyc, 2 * (q->ncyc + 1), sizeof *q->cyc))
        return -1;
    if (L > 1 && 2 * (q->hcount + 1) > q->hcap && hash_grow(q))
        return -1;
    uint32_t r = (uint32_t)q->nrel++;
    mpz_init_set(q->y[r], y);
    q->roff[r] = (uint32_t)q->nfl;
    q->rlen[r] = (uint32_t)nf;
    q->rlp[r] = L;
    memcpy(q->fl + q->nfl, f, nf * sizeof *f);
    q->nfl += nf;
    if (L == 1) {
        q->cyc[2 * q->ncyc] = r;
        q->cyc[2 * q->ncyc + 1] = UINT32_MAX;
        q->ncyc++;
        return 0;
    }
    size_t j = (size_t)(L * UINT64_C(0x9e3779b97f4a7c15) >> 20) & (q->hcap - 1);
    while (q->hash[j]) {
        if (q->rlp[q->hash[j] - 1] == L) {
            q->cyc[2 * q->ncyc] = q->hash[j] - 1;
            q->cyc[2 * q->ncyc + 1] = r;
            q->ncyc++;
            return 0;
        }
        j = (j + 1) & (q->hcap - 1);
    }
    q->hash[j] = r + 1;
    q->hcount++;
    return 0;
}

/* ------------------------------------------------------------ polynomials */

/* A new A: s primes whose product is near sqrt(2kN)/M, not used before. */
/* x mod p for a fixed x and many small p: a word's remainder when x is a non-negative word, GMP's otherwise. */
typedef struct word_mod {
    uint64_t w;
    int fits;
} word_mod;

static void word_mod_init(word_mod *m, const mpz_t x)
{
    m->fits = mpz_sgn(x) >= 0 && mpz_sizeinbase(x, 2) <= 64;
    m->w = m->fits ? (uint64_t)mpz_get_ui(x) : 0;
}

static inline uint32_t word_mod_of(const word_mod *m, const mpz_t x, uint32_t p)
{
    return m->fits ? (uint32_t)(m->w % p) : (uint32_t)mpz_fdiv_ui(x, p);
}

static void new_a(pk_qs *q)
{
    double target = 0.5 * (mpz_sizeinbase(q->kn, 2) + 1.0) - qs_log2((double)q->m);
    uint32_t fb = q->fbsize;
    if (!q->s) {
        /* Primes of about 2000 where the factor base reaches them. */
        uint32_t lo = 2;
        while (lo < fb && q->p[lo] < QS_SMALL * 2)
            lo++;
        double qt = q->p[fb - 1] > 4000 ? 2000.0 : q->p[(lo + 2 * fb) / 3 < fb ? (lo + 2 * fb) / 3 : fb - 1];
        uint32_t s = (uint32_t)(target / qs_log2(qt) + 0.5);
        if (s < 2)
            s = 2;
        if (s > QS_MAX_S)
            s = QS_MAX_S;
        q->s = s;
        double each = qs_exp2(target / s);
        uint32_t a = lo, b;
        while (a < fb && q->p[a] < each / 2)
            a++;
        b = a;
        while (b < fb && q->p[b] < each * 2)
            b++;
        while (b - a < 8 * s + 24 && (a > lo || b < fb - 1)) { /* widen the range */
            if (a > lo)
                a--;
            if (b < fb - 1)
                b++;
        }
        q->alo = a;
        q->ahi = b;
        q->npoly = 1u << (s - 1);
    }
    uint32_t s = q->s;
    for (unsigned tries = 0;; tries++) {
        memset(q->skip, 0, fb);
        mpz_set_ui(q->a, 1);
        uint32_t span = q->ahi - q->alo;
        for (uint32_t j = 0; j + 1 < s; j++) {
            uint32_t idx;
            do
                idx = q->alo + (uint32_t)(rng_next(&q->rng) % span);
            while (q->skip[idx] || q->sq[idx] == 0);
            q->skip[idx] = 1;
            q->aidx[j] = idx;
            mpz_mul_ui(q->a, q->a, q->p[idx]);
        }
        /* The last prime: the nearest to what is missing. */
        double want = qs_exp2(target - qs_log2(mpz_get_d(q->a)));
        uint32_t lo = 2, hi = fb - 1;
        while (lo < hi) { /* the first prime >= want */
            uint32_t mid = (lo + hi) / 2;
            if (q->p[mid] < want)
                lo = mid + 1;
            else
                hi = mid;
        }
        uint32_t best = 0;
        double bd = 1e300;
        for (uint32_t idx = lo > 2 + 2 * s ? lo - 2 * s : 2; idx < fb && idx <= lo + 2 * s; idx++) {
            if (q->skip[idx] || q->sq[idx] == 0 || q->p[idx] < QS_SMALL)
                continue;
            double d = qs_ln((double)q->p[idx] / want);
            d = d < 0 ? -d : d;
            if (d < bd) {
                bd = d;
                best = idx;
            }
        }
        if (!best) { /* the window held only primes of A: any other */
            for (uint32_t idx = fb - 1; idx >= 2 && !best; idx--)
                if (!q->skip[idx] && q->sq[idx] != 0 && q->p[idx] >= QS_SMALL)
                    best = idx;
        }
        q->skip[best] = 1;
        q->aidx[s - 1] = best;
        mpz_mul_ui(q->a, q->a, q->p[best]);
        uint64_t h = 0;
        for (uint32_t idx = 0; idx < fb; idx++)
            if (q->skip[idx])
                h = h * UINT64_C(1000003) + idx + 1;
        int seen = 0;
        for (size_t j = 0; j < q->naused; j++)
            seen |= q->aused[j] == h;
        if (!seen || tries > 1000) {
            if (!grow((void **)&q->aused, &q->capaused, q->naused + 1, sizeof *q->aused))
                q->aused[q->naused++] = h;
            break;
        }
    }
    /* B_l = (A/q_l)·γ with γ = sqrt(kN)·(A/q_l)^-1 mod q_l, γ <= q_l/2. */
    mpz_set_ui(q->b, 0);
    for (uint32_t l = 0; l < s; l++) {
        uint32_t ql = q->p[q->aidx[l]];
        mpz_divexact_ui(q->t, q->a, ql);
        uint32_t r = (uint32_t)mpz_fdiv_ui(q->t, ql);
        uint64_t g = (uint64_t)q->sq[q->aidx[l]] * inv_mod(r, ql) % ql;
        if (g > ql / 2)
            g = ql - g;
        mpz_mul_ui(q->bl[l], q->t, (unsigned long)g);
        mpz_add(q->b, q->b, q->bl[l]);
    }
    /* Roots of every sieved prime. A, B and the B_l are taken mod p by one word division each when they fit
       in a word (n up to about 130 bits); GMP's remainder of a one-limb number inverts p first, which was 7 %
       of a 100-bit sieve's instructions. */
    word_mod am, bm_, blm[QS_MAX_S];
    word_mod_init(&am, q->a);
    word_mod_init(&bm_, q->b);
    for (uint32_t l = 0; l + 1 < s; l++)
        word_mod_init(&blm[l], q->bl[l]);
    for (uint32_t i = 2; i < fb; i++) {
        uint32_t p = q->p[i];
        if (q->skip[i])
            continue;
        uint32_t ai = inv_mod(word_mod_of(&am, q->a, p), p);
        q->ainv[i] = ai;
        uint64_t bm = word_mod_of(&bm_, q->b, p), mm = q->m % p;
        uint64_t r1 = (uint64_t)ai * ((q->sq[i] + p - bm) % p) % p;
        uint64_t r2 = (uint64_t)ai * ((2 * (uint64_t)p - q->sq[i] - bm) % p) % p;
        q->s1[i] = (uint32_t)((r1 + mm) % p);
        q->s2[i] = (uint32_t)((r2 + mm) % p);
        for (uint32_t l = 0; l + 1 < s; l++)
            q->binv[(size_t)l * fb + i] = (uint32_t)(2 * (uint64_t)word_mod_of(&blm[l], q->bl[l], p) * ai % p);
    }
    q->poly = 0;
    q->work += (uint64_t)fb * (30 + 4 * s);
}

/* Move to the next B of this A (Gray code), or to a new A. */
static void next_poly(pk_qs *q)
{
    uint32_t i = ++q->poly;
    if (i >= q->npoly) {
        new_a(q);
        return;
    }
    uint32_t v = (uint32_t)__builtin_ctz(i);
    int minus = ((i >> (v + 1)) & 1) == 0; /* B -= 2 B_v: roots += binv */
    if (minus) {
        mpz_submul_ui(q->b, q->bl[v], 2);
    } else {
        mpz_addmul_ui(q->b, q->bl[v], 2);
    }
    const uint32_t *bi = q->binv + (size_t)v * q->fbsize;
    for (uint32_t j = 2; j < q->fbsize; j++) {
        uint32_t p = q->p[j], d = bi[j];
        if (minus) {
            uint32_t x = q->s1[j] + d;
            q->s1[j] = x >= p ? x - p : x;
            x = q->s2[j] + d;
            q->s2[j] = x >= p ? x - p : x;
        } else {
            q->s1[j] = q->s1[j] >= d ? q->s1[j] - d : q->s1[j] + p - d;
            q->s2[j] = q->s2[j] >= d ? q->s2[j] - d : q->s2[j] + p - d;
        }
    }
    q->work += 4 * (uint64_t)q->fbsize;
}

/* ---------------------------------------------------------------- sieving */

/* Which factor-base primes divide g at pos: those with pos ≡ s1 or s2 (mod p). For odd p, p divides
   d = pos + p - s (0 < d < 2^32) exactly when d·p^-1 mod 2^32 <= floor((2^32 - 1) / p), the multiples of p
   below 2^32 being the numbers that multiplication maps to 0 .. floor((2^32 - 1) / p). Eight primes at a
   time, with no division; compiled for AVX2 and for any x86-64, chosen once by the CPU. */
typedef uint32_t qs_v8 __attribute__((vector_size(32)));

static inline __attribute__((always_inline)) void qs_hits_body(const pk_qs *q, uint32_t pos)
{
    const qs_v8 at = (qs_v8){0, 0, 0, 0, 0, 0, 0, 0} + pos;
    for (uint32_t i = 0; i < q->fbpad; i += 8) {
        qs_v8 p, s1, s2, inv, lim;
        memcpy(&p, q->p + i, sizeof p);
        memcpy(&s1, q->s1 + i, sizeof s1);
        memcpy(&s2, q->s2 + i, sizeof s2);
        memcpy(&inv, q->pinv + i, sizeof inv);
        memcpy(&lim, q->plim + i, sizeof lim);
        qs_v8 h = (qs_v8)(((at + p - s1) * inv <= lim) | ((at + p - s2) * inv <= lim));
        memcpy(q->hit + i, &h, sizeof h);
    }
}

__attribute__((target("avx2"))) static void qs_hits_avx2(const pk_qs *q, uint32_t pos)
{
    qs_hits_body(q, pos);
}

static void qs_hits_base(const pk_qs *q, uint32_t pos)
{
    qs_hits_body(q, pos);
}

/* Trial-divide the candidate at interval position pos; store a relation. */
static int candidate(pk_qs *q, uint32_t pos)
{
    long x = (long)pos - (long)q->m;
    /* g(x) = (A x + 2B) x + C */
    mpz_mul_si(q->t, q->a, x);
    mpz_add(q->u, q->t, q->b); /* A x + B */
    mpz_add(q->t, q->u, q->b);
    mpz_mul_si(q->t, q->t, x);
    mpz_add(q->t, q->t, q->c);
    size_t nf = 0;
    uint32_t *f = q->tdl;
    if (mpz_sgn(q->t) < 0) {
        f[nf++] = 0;
        mpz_neg(q->t, q->t);
    }
    if (mpz_sgn(q->t) == 0)
        return 0;
    unsigned long e2 = mpz_scan1(q->t, 0);
    if (e2 > (unsigned long)q->bits)
        return 0;
    for (unsigned long j = 0; j < e2; j++)
        f[nf++] = 1;
    mpz_tdiv_q_2exp(q->t, q->t, e2);
    q->hits(q, pos);
    for (uint32_t i = 2; i < q->fbsize; i++) {
        if (i % 8 == 0) { /* a group of eight primes with no hit and none of A's is passed over at once */
            uint64_t h[4], a;
            memcpy(h, q->hit + i, sizeof h);
            memcpy(&a, q->skip + i, sizeof a);
            if (!(h[0] | h[1] | h[2] | h[3] | a)) {
                i += 7;
                continue;
            }
        }
        if (!(q->hit[i] | q->skip[i]))
            continue;
        uint32_t p = q->p[i];
        if (q->skip[i]) {
            f[nf++] = i; /* A's own factor */
            while (mpz_divisible_ui_p(q->t, p)) {
                mpz_divexact_ui(q->t, q->t, p);
                f[nf++] = i;
            }
            continue;
        }
        while (mpz_divisible_ui_p(q->t, p)) {
            mpz_divexact_ui(q->t, q->t, p);
            if (nf + 1 < q->fbsize + 64 + 2 * (size_t)q->bits)
                f[nf++] = i;
        }
    }
    q->work += 3 * (uint64_t)q->fbsize;
    if (mpz_cmp_ui(q->t, 1) != 0 && (mpz_sizeinbase(q->t, 2) > 64 || mpz_get_ui(q->t) >= q->lp))
        return 0;
    uint64_t L = mpz_get_ui(q->t);
    mpz_mod(q->u, q->u, q->n);
    return add_relation(q, q->u, f, nf, L);
}

/* Sieve the current polynomial over [-M, M) block by block. */
static int sieve_poly(pk_qs *q)
{
    uint32_t fb = q->fbsize;
    uint32_t first = 2;
    while (first < fb && q->p[first] < QS_SMALL)
        first++;
    /* C = (B^2 - kN) / A */
    mpz_mul(q->c, q->b, q->b);
    mpz_sub(q->c, q->c, q->kn);
    mpz_divexact(q->c, q->c, q->a);
    for (uint32_t i = first; i < fb; i++) {
        q->n1[i] = q->s1[i];
        q->n2[i] = q->s2[i];
    }
    uint8_t *sv = q->sieve;
    for (uint32_t blk = 0; blk < q->blocks; blk++) {
        uint32_t base = blk * q->blen, end = base + q->blen;
        memset(sv, q->thresh, q->blen);
        for (uint32_t i = first; i < fb; i++) {
            if (q->skip[i])
                continue;
            uint32_t p = q->p[i];
            uint8_t lg = q->logp[i];
            uint32_t r1 = q->n1[i], r2 = q->n2[i];
            uint8_t *s0 = sv - base;
            if (q->sq[i] == 0) { /* p | kN: one root */
                for (; r1 < end; r1 += p)
                    s0[r1] += lg;
                q->n1[i] = r1;
                continue;
            }
            /* Both roots in one loop, the smaller one first. */
            uint32_t lo = r1 < r2 ? r1 : r2, hi = r1 < r2 ? r2 : r1;
            for (; hi < end; lo += p, hi += p) {
                s0[lo] += lg;
                s0[hi] += lg;
            }
            if (lo < end) {
                s0[lo] += lg;
                lo += p;
            }
            q->n1[i] = r1 <= r2 ? lo : hi;
            q->n2[i] = r1 <= r2 ? hi : lo;
        }
        /* Candidates are set top bits: 32 bytes are looked at together (blen is a multiple of 1 kB). */
        const uint64_t *w = (const uint64_t *)(const void *)sv;
        const uint64_t top = UINT64_C(0x8080808080808080);
        for (uint32_t j = 0; j < q->blen / 8; j += 4) {
            if (!((w[j] | w[j + 1] | w[j + 2] | w[j + 3]) & top))
                continue;
            for (uint32_t b = 0; b < 32; b++)
                if (sv[8 * j + b] & 0x80)
                    if (candidate(q, base + 8 * j + b) < 0)
                        return -1;
        }
    }
    q->work += (uint64_t)q->blocks * q->blen * 3 + (uint64_t)fb * 2 * q->blocks;
    return 0;
}

/* ----------------------------------------------------------------- matrix */

static int build_matrix(pk_qs *q)
{
    size_t rows = q->ncyc < q->need ? q->ncyc : q->need;
    if (q->round > 0)
        rows = q->ncyc;
    q->rows = rows;
    q->wc = (q->fbsize + 63) / 64;
    q->wh = (rows + 63) / 64;
    q->ww = q->wc + q->wh;
    free(q->mat);
    free(q->used);
    q->mat = calloc(rows * q->ww, sizeof *q->mat);
    q->used = calloc(rows, 1);
    if (!q->mat || !q->used)
        return -1;
    for (size_t r = 0; r < rows; r++) {
        uint64_t *row = q->mat + r * q->ww;
        for (int h = 0; h < 2; h++) {
            uint32_t rel = q->cyc[2 * r + h];
            if (rel == UINT32_MAX)
                continue;
            for (uint32_t j = 0; j < q->rlen[rel]; j++) {
                uint32_t c = q->fl[q->roff[rel] + j];
                row[c / 64] ^= UINT64_C(1) << (c % 64);
            }
        }
        row[q->wc + r / 64] |= UINT64_C(1) << (r % 64);
    }
    q->col = 0;
    q->dep = 0;
    q->work += rows * q->ww;
    return 0;
}

/* Eliminate column q->col. */
static void eliminate_column(pk_qs *q)
{
    uint32_t c = q->col++;
    size_t w = c / 64;
    uint64_t bit = UINT64_C(1) << (c % 64);
    size_t piv = SIZE_MAX;
    for (size_t r = 0; r < q->rows; r++)
        if (!q->used[r] && (q->mat[r * q->ww + w] & bit)) {
            piv = r;
            break;
        }
    q->work += q->rows;
    if (piv == SIZE_MAX)
        return;
    q->used[piv] = 1;
    const uint64_t *pr = q->mat + piv * q->ww;
    for (size_t r = 0; r < q->rows; r++) {
        uint64_t *row = q->mat + r * q->ww;
        if (r == piv || !(row[w] & bit))
            continue;
        for (size_t j = w; j < q->ww; j++)
            row[j] ^= pr[j];
    }
    q->work += q->rows * (q->ww - w) / 2;
}

/* Square root of the dependency in row r: 1 with a factor, 0 otherwise. */
static int try_dependency(pk_qs *q, size_t r, mpz_t factor)
{
    const uint64_t *row = q->mat + r * q->ww;
    memset(q->cnt, 0, q->fbsize * sizeof *q->cnt);
    mpz_set_ui(q->t, 1); /* X */
    mpz_set_ui(q->u, 1); /* Y */
    for (size_t i = 0; i < q->rows; i++) {
        if (!(row[q->wc + i / 64] >> (i % 64) & 1))
            continue;
        for (int h = 0; h < 2; h++) {
            uint32_t rel = q->cyc[2 * i + h];
            if (rel == UINT32_MAX)
                continue;
            mpz_mul(q->t, q->t, q->y[rel]);
            mpz_mod(q->t, q->t, q->n);
            for (uint32_t j = 0; j < q->rlen[rel]; j++)
                q->cnt[q->fl[q->roff[rel] + j]]++;
        }
        if (q->cyc[2 * i + 1] != UINT32_MAX) {
            mpz_mul_ui(q->u, q->u, (unsigned long)q->rlp[q->cyc[2 * i]]);
            mpz_mod(q->u, q->u, q->n);
        }
    }
    for (uint32_t i = 0; i < q->fbsize; i++) {
        if (q->cnt[i] & 1)
            return 0; /* never: the row sums to zero */
        if (i == 0 || q->cnt[i] == 0)
            continue;
        mpz_set_ui(q->v, q->p[i]);
        mpz_powm_ui(q->v, q->v, q->cnt[i] / 2, q->n);
        mpz_mul(q->u, q->u, q->v);
        mpz_mod(q->u, q->u, q->n);
    }
    q->work += q->rows * 50 + q->fbsize * 20;
    mpz_sub(q->v, q->t, q->u);
    mpz_gcd(factor, q->v, q->n);
    return mpz_cmp_ui(factor, 1) > 0 && mpz_cmp(factor, q->n) < 0;
}

/* ------------------------------------------------------------------- run */

static int stint(pk_qs *q, mpz_t factor)
{
    if (q->phase == QS_SIEVE) {
        if (mpz_sgn(q->a) == 0 || !mpz_cmp_ui(q->a, 1)) {
            /* First stint: small cases and factor-base primes dividing n. */
            if (mpz_even_p(q->n)) {
                mpz_set_ui(factor, 2);
                return 1;
            }
            for (uint32_t i = 2; i < q->fbsize; i++)
                if (q->sq[i] == 0 && mpz_divisible_ui_p(q->n, q->p[i]) && mpz_cmp_ui(q->n, q->p[i]) > 0) {
                    mpz_set_ui(factor, q->p[i]);
                    return 1;
                }
            new_a(q);
        } else {
            next_poly(q);
        }
        if (sieve_poly(q) < 0)
            return -1;
        double f = 0.9 * (double)q->ncyc / (double)q->need;
        if (f > 0.9)
            f = 0.9;
        if (f > q->frac)
            q->frac = f;
        if (q->ncyc >= q->need + (size_t)q->round * QS_EXTRA) {
            if (build_matrix(q) < 0)
                return -1;
            q->phase = QS_MATRIX;
        }
        return 0;
    }
    if (q->phase == QS_MATRIX) {
        uint64_t start = q->work;
        while (q->col < q->fbsize && q->work - start < 300000)
            eliminate_column(q);
        double f = 0.9 + 0.09 * q->col / q->fbsize;
        if (f > q->frac)
            q->frac = f;
        if (q->col >= q->fbsize)
            q->phase = QS_SQRT;
        return 0;
    }
    /* QS_SQRT: one dependency per stint */
    while (q->dep < q->rows && q->used[q->dep])
        q->dep++;
    if (q->dep >= q->rows) {
        /* Every dependency failed: gather more relations and try again. */
        if (++q->round >= QS_ROUNDS)
            return -2;
        q->phase = QS_SIEVE;
        return 0;
    }
    return try_dependency(q, q->dep++, factor);
}

int pk_qs_run(pk_qs *q, uint64_t budget, mpz_t factor, uint64_t *used)
{
    uint64_t start = q->work;
    int rc = 0;
    while (rc == 0 && q->work - start < budget)
        rc = stint(q, factor);
    *used = q->work - start;
    return rc;
}

uint64_t pk_qs_work(const pk_qs *q)
{
    return q->work;
}

double pk_qs_fraction(const pk_qs *q)
{
    return q->frac;
}
