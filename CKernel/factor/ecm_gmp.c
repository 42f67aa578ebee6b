/*
 * factor/ecm_gmp.c — resumable ECM (see ecm_gmp.h).
 *
 * Stage 1 is done here, not by GMP-ECM: GMP-ECM's stop callback takes no
 * argument, so it cannot reach a job's interrupt flag without global state,
 * and continuing a curve chunk by chunk through ecm_factor leaks four
 * residues a call in GMP-ECM 7.0 (its curve clean-up frees one of the five
 * coefficients it allocates), hundreds of bytes a millisecond. The kernel's
 * stage 1 multiplies the point (X:Z) on By² = x³ + Ax² + x by the prime
 * powers up to B1 with Montgomery's x-only ladder, one chunk of primes (from
 * the segmented sieve) at a time: the product of the chunk's prime powers is
 * one ladder scalar. Chunks are sized from the step budget and capped at
 * 16,000/L² of B1 for an L-limb part (about a millisecond at 200 bits).
 * Stage 2 is one GMP-ECM call per curve from the affine stage-1 point
 * (sigma_is_A with A, B1done = B1), with B2 from the level table.
 * Units: a ladder bit on an L-limb part counts L²·PK_ECM_BIT_UNIT, stage 2
 * B1·L²·PK_ECM_UNIT (about the time of as many trial-division units).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ecm.h>

#include "factor/ecm_gmp.h"

/* GMP-ECM 7.0 leaks four residues per ecm_factor call (see above). In
   sanitizer builds the call runs with LeakSanitizer's reports off, so the
   tests and fuzzers see every other leak. */
#if defined(__SANITIZE_ADDRESS__)
#  define PK_LSAN 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define PK_LSAN 1
#  endif
#endif
#ifdef PK_LSAN
#  include <sanitizer/lsan_interface.h>
#  define PK_GMPECM_LEAK_BEGIN() __lsan_disable()
#  define PK_GMPECM_LEAK_END() __lsan_enable()
#else
#  define PK_GMPECM_LEAK_BEGIN() ((void)0)
#  define PK_GMPECM_LEAK_END() ((void)0)
#endif

/* GMP-ECM's stage 2 keeps state in the library's globals (the Fermat-number
   flag and the Schonhage-Strassen scratch among them): two threads in
   ecm_factor at once corrupt each other's arithmetic and abort. The kernel
   keeps no state of its own between jobs; this lock is the one exception,
   held only around the library call, so jobs stepped on several threads
   take turns in stage 2 (a few milliseconds a curve at the lower levels) and
   run everything else side by side. */
static pthread_mutex_t pk_gmpecm_lock = PTHREAD_MUTEX_INITIALIZER;

#define PK_ECM_UNIT 40u
#define PK_ECM_BIT_UNIT 28u
#define PK_ECM_CHUNK_MIN 200u
#define PK_ECM_CHUNK_LIMBS2 16000u /* max chunk = this / L² (at least PK_ECM_CHUNK_MIN) */
#define PK_ECM_CHUNK_MAX PK_ECM_CHUNK_LIMBS2 /* the largest chunk (L = 1) */

/* Digits, B1, B2 (set explicitly, so that a part's record says what ran), and
   the expected curves for a factor of that size. */
const pk_ecm_level pk_ecm_levels[PK_ECM_LEVELS] = {
    {15, 2000, UINT64_C(147396), 25},
    {20, 11000, UINT64_C(1873422), 90},
    {25, 50000, UINT64_C(12746592), 300},
    {30, 250000, UINT64_C(128992510), 700},
    {35, 1000000, UINT64_C(1045563762), 1800},
    {40, 3000000, UINT64_C(5706890290), 5100},
    {45, 11000000, UINT64_C(35133391030), 10600},
    {50, 43000000, UINT64_C(240490660426), 19300},
    {55, 110000000, UINT64_C(776278396540), 49000},
    {60, 260000000, UINT64_C(3178559884516), 124000},
    {65, 850000000, UINT64_C(15892277350966), 210000},
    {70, 2900000000u, UINT64_C(105101237217912), 340000},
};

void pk_ecm_init(pk_ecm *e)
{
    memset(e, 0, sizeof *e);
    mpz_inits(e->n, e->a, e->x, e->z, e->a24, NULL);
    for (int i = 0; i < 6; i++)
        mpz_init(e->t[i]);
    pk_sieve_init(&e->sieve);
}

void pk_ecm_clear(pk_ecm *e)
{
    mpz_clears(e->n, e->a, e->x, e->z, e->a24, NULL);
    for (int i = 0; i < 6; i++)
        mpz_clear(e->t[i]);
    pk_sieve_free(&e->sieve);
    free(e->primes);
    e->primes = NULL;
}

void pk_ecm_start(pk_ecm *e, const mpz_t n)
{
    mpz_set(e->n, n);
    mpz_set_ui(e->a, 0);
    mpz_set_ui(e->x, 0);
    mpz_set_ui(e->z, 0);
    e->curve = 0;
    e->level = 0;
    e->level_curves = e->curves = 0;
    e->b1done = 1;
    e->phase = 0;
    e->work = 0;
    e->last_b1 = e->last_b2 = 0;
    e->stride = 0;
}

uint64_t pk_ecm_curves_before(unsigned level)
{
    uint64_t before = 0;
    for (unsigned i = 0; i < level && i < PK_ECM_LEVELS; i++)
        before += pk_ecm_levels[i].curves;
    return before;
}

void pk_ecm_level_of(uint64_t k, unsigned *level, uint64_t *level_curves)
{
    unsigned l = 0;
    while (l + 1 < PK_ECM_LEVELS && k >= pk_ecm_levels[l].curves) {
        k -= pk_ecm_levels[l].curves;
        l++;
    }
    *level = l;
    *level_curves = k;
}

void pk_ecm_make_share(pk_ecm *e, uint64_t first, uint64_t stride)
{
    if (first != e->curve) {
        e->curve = first;
        e->phase = 0;
        e->b1done = 1;
        mpz_set_ui(e->x, 0);
        mpz_set_ui(e->z, 0);
        mpz_set_ui(e->a, 0);
    }
    e->stride = stride;
    e->curves = 0;
    e->last_b1 = e->last_b2 = 0;
    pk_ecm_level_of(e->curve, &e->level, &e->level_curves);
}

unsigned pk_ecm_levels_done(const pk_ecm *e)
{
    unsigned done = e->level;
    if (done == PK_ECM_LEVELS - 1 && e->level_curves >= pk_ecm_levels[done].curves)
        done = PK_ECM_LEVELS;
    return done;
}

double pk_ecm_fraction(const pk_ecm *e, unsigned through)
{
    if (through >= PK_ECM_LEVELS)
        through = PK_ECM_LEVELS - 1;
    double all = 0, done = 0;
    for (unsigned i = 0; i <= through; i++) {
        all += (double)pk_ecm_levels[i].curves;
        if (i < e->level)
            done += (double)pk_ecm_levels[i].curves;
        else if (i == e->level)
            done += (double)e->level_curves;
    }
    double f = all > 0 ? done / all : 1.0;
    return f > 1.0 ? 1.0 : f;
}

/*
 * Suyama's curve for sigma: u = sigma² − 5, v = 4·sigma, starting point
 * x0 = u³/v³ and A = (v − u)³·(3u + v) / (4·u³·v) − 2, all modulo n.
 * Returns 1 with the curve, 0 when an inverse does not exist: then g holds
 * the gcd that stopped it (a factor, or n itself for a useless sigma).
 */
static int suyama(const mpz_t n, uint64_t sigma, mpz_t a, mpz_t x, mpz_t g)
{
    mpz_t u, v, t, d;
    mpz_inits(u, v, t, d, NULL);
    mpz_set_ui(u, sigma);
    mpz_mul(u, u, u);
    mpz_sub_ui(u, u, 5);
    mpz_mod(u, u, n);
    mpz_set_ui(v, sigma);
    mpz_mul_2exp(v, v, 2);
    mpz_mod(v, v, n);
    /* d = 4·u³·v; inverting d·v² = 4·u³·v³ gives both inverses at once. */
    mpz_powm_ui(t, u, 3, n);          /* u³ */
    mpz_mul(d, t, v);
    mpz_mul_2exp(d, d, 2);
    mpz_mod(d, d, n);                 /* 4u³v */
    mpz_mul(g, d, v);
    mpz_mul(g, g, v);
    mpz_mod(g, g, n);                 /* 4u³v³ */
    int ok = mpz_invert(g, g, n) != 0;
    if (!ok) {
        mpz_mul(g, d, v);
        mpz_mul(g, g, v);
        mpz_gcd(g, g, n);
    } else {
        /* With g = 1/(4u³v³): 1/v³ = 4u³·g and 1/(4u³v) = v²·g. */
        mpz_t iv3, id;
        mpz_inits(iv3, id, NULL);
        mpz_mul_2exp(iv3, t, 2);
        mpz_mul(iv3, iv3, g);
        mpz_mod(iv3, iv3, n);         /* 1/v³ */
        mpz_mul(id, v, v);
        mpz_mul(id, id, g);
        mpz_mod(id, id, n);           /* 1/(4u³v) */
        mpz_mul(x, t, iv3);
        mpz_mod(x, x, n);             /* u³/v³ */
        mpz_sub(a, v, u);
        mpz_powm_ui(a, a, 3, n);
        mpz_mul_ui(d, u, 3);
        mpz_add(d, d, v);
        mpz_mul(a, a, d);
        mpz_mod(a, a, n);
        mpz_mul(a, a, id);
        mpz_sub_ui(a, a, 2);
        mpz_mod(a, a, n);
        mpz_clears(iv3, id, NULL);
    }
    mpz_clears(u, v, t, d, NULL);
    return ok;
}

static uint64_t limbs2(const pk_ecm *e)
{
    uint64_t l = mpz_size(e->n);
    return l * l;
}

static void next_curve(pk_ecm *e)
{
    e->curve += e->stride > 1 ? e->stride : 1;
    if (e->stride > 1)
        pk_ecm_level_of(e->curve, &e->level, &e->level_curves);
    e->phase = 0;
    e->b1done = 1;
    mpz_set_ui(e->x, 0);
    mpz_set_ui(e->z, 0);
    mpz_set_ui(e->a, 0);
}

static void curve_finished(pk_ecm *e, uint64_t b2)
{
    e->curves++;
    e->last_b1 = pk_ecm_levels[e->level].b1;
    e->last_b2 = b2;
    if (e->stride > 1) {
        next_curve(e); /* the level follows the curve's number */
        return;
    }
    if (++e->level_curves >= pk_ecm_levels[e->level].curves && e->level + 1 < PK_ECM_LEVELS) {
        e->level++;
        e->level_curves = 0;
    }
    next_curve(e);
}

/* (A + 2)/4 mod n; 0 when 4 has no inverse (n even: never for a part). */
static int set_a24(pk_ecm *e)
{
    mpz_add_ui(e->a24, e->a, 2);
    mpz_set_ui(e->t[0], 4);
    if (!mpz_invert(e->t[0], e->t[0], e->n))
        return 0;
    mpz_mul(e->a24, e->a24, e->t[0]);
    mpz_mod(e->a24, e->a24, e->n);
    return 1;
}

static void mulmod(mpz_t r, const mpz_t a, const mpz_t b, const mpz_t n)
{
    mpz_mul(r, a, b);
    mpz_mod(r, r, n);
}

/*
 * Montgomery arithmetic on L-limb residues for the ladder: a residue a stands
 * for a·R^-1 mod n with R = 2^(64L); mont_mul is REDC of a product (inputs
 * below n, output below n).
 */
typedef struct pk_mont {
    mp_size_t l;
    const mp_limb_t *n;
    mp_limb_t ninv;             /* −1/n mod 2^64 */
    mp_limb_t *t;               /* 2L limbs of scratch */
} pk_mont;

/* REDC of the 2L-limb t (below n·R): t·R^-1 mod n into r. Each row's carry
   is kept in the limb that row cleared and added in one pass at the end. */
static void mont_redc(const pk_mont *m, mp_limb_t *r, mp_limb_t *t)
{
    mp_size_t l = m->l;
    for (mp_size_t i = 0; i < l; i++)
        t[i] = mpn_addmul_1(t + i, m->n, l, t[i] * m->ninv);
    if (mpn_add_n(r, t + l, t, l) || mpn_cmp(r, m->n, l) >= 0)
        mpn_sub_n(r, r, m->n, l);
}

static void mont_mul(const pk_mont *m, mp_limb_t *r, const mp_limb_t *a, const mp_limb_t *b)
{
    mpn_mul_n(m->t, a, b, m->l);
    mont_redc(m, r, m->t);
}

static void mont_sqr(const pk_mont *m, mp_limb_t *r, const mp_limb_t *a)
{
    mpn_sqr(m->t, a, m->l);
    mont_redc(m, r, m->t);
}

static void mont_add(const pk_mont *m, mp_limb_t *r, const mp_limb_t *a, const mp_limb_t *b)
{
    if (mpn_add_n(r, a, b, m->l) || mpn_cmp(r, m->n, m->l) >= 0)
        mpn_sub_n(r, r, m->n, m->l);
}

static void mont_sub(const pk_mont *m, mp_limb_t *r, const mp_limb_t *a, const mp_limb_t *b)
{
    if (mpn_sub_n(r, a, b, m->l))
        mpn_add_n(r, r, m->n, m->l);
}

/* v·R mod n into l limbs. */
static void mont_in(const pk_mont *m, mp_limb_t *r, const mpz_t v, const mpz_t n)
{
    mpz_t t;
    mpz_init(t);
    mpz_mul_2exp(t, v, (mp_bitcnt_t)(64 * m->l));
    mpz_mod(t, t, n);
    memset(r, 0, (size_t)m->l * sizeof *r);
    mpz_export(r, NULL, -1, sizeof *r, 0, 0, t);
    mpz_clear(t);
}

/* The residue a (in Montgomery form) as a plain number. */
static void mont_out(const pk_mont *m, mpz_t v, const mp_limb_t *a, mp_limb_t *one, mp_limb_t *tmp)
{
    memset(one, 0, (size_t)m->l * sizeof *one);
    one[0] = 1;
    mont_mul(m, tmp, a, one);
    mpz_import(v, (size_t)m->l, -1, sizeof *tmp, 0, 0, tmp);
}

enum { LX0, LZ0, LX1, LZ1, LXD, LZD, LA24, LS, LD, LQ, LU, LV, LW, LREGS };

/* (x2:z2) = 2·(x:z); uses LS, LD, LQ. Outputs may alias the inputs. */
static void mont_dbl(const pk_mont *m, mp_limb_t **g, mp_limb_t *x2, mp_limb_t *z2, const mp_limb_t *x,
                     const mp_limb_t *z)
{
    mont_add(m, g[LS], x, z);
    mont_sqr(m, g[LS], g[LS]);          /* (x + z)² */
    mont_sub(m, g[LD], x, z);
    mont_sqr(m, g[LD], g[LD]);          /* (x − z)² */
    mont_sub(m, g[LQ], g[LS], g[LD]);   /* 4xz */
    mont_mul(m, x2, g[LS], g[LD]);
    mont_mul(m, z2, g[LQ], g[LA24]);
    mont_add(m, z2, z2, g[LD]);
    mont_mul(m, z2, z2, g[LQ]);
}

/* (xr:zr) = (xp:zp) + (xq:zq) with difference (LXD:LZD); uses LU, LV, LW.
   Outputs may alias p or q. */
static void mont_dadd(const pk_mont *m, mp_limb_t **g, mp_limb_t *xr, mp_limb_t *zr, const mp_limb_t *xp,
                      const mp_limb_t *zp, const mp_limb_t *xq, const mp_limb_t *zq)
{
    mont_sub(m, g[LU], xp, zp);
    mont_add(m, g[LW], xq, zq);
    mont_mul(m, g[LU], g[LU], g[LW]);
    mont_add(m, g[LV], xp, zp);
    mont_sub(m, g[LW], xq, zq);
    mont_mul(m, g[LV], g[LV], g[LW]);
    mont_add(m, g[LW], g[LU], g[LV]);
    mont_sqr(m, g[LW], g[LW]);
    mont_sub(m, g[LU], g[LU], g[LV]);
    mont_sqr(m, g[LU], g[LU]);
    mont_mul(m, xr, g[LZD], g[LW]);
    mont_mul(m, zr, g[LXD], g[LU]);
}

/* (x:z) = k·(x:z) by Montgomery's ladder (k >= 1). 0, or -1 when memory
   runs out. */
static int ladder(pk_ecm *e, const mpz_t k)
{
    size_t bits = mpz_sizeinbase(k, 2);
    if (bits <= 1)
        return 0;
    mp_size_t l = (mp_size_t)mpz_size(e->n);
    mp_limb_t *mem = malloc((size_t)(LREGS + 4) * (size_t)l * sizeof *mem);
    if (!mem)
        return -1;
    mp_limb_t *g[LREGS];
    for (int i = 0; i < LREGS; i++)
        g[i] = mem + (size_t)i * (size_t)l;
    pk_mont m = {l, mpz_limbs_read(e->n), 0, mem + (size_t)LREGS * (size_t)l};
    mp_limb_t n0 = m.n[0], inv = n0; /* n odd: Newton's iteration for 1/n0 mod 2^64 */
    for (int i = 0; i < 6; i++)
        inv *= 2 - n0 * inv;
    m.ninv = (mp_limb_t)0 - inv;
    mont_in(&m, g[LXD], e->x, e->n);
    mont_in(&m, g[LZD], e->z, e->n);
    mont_in(&m, g[LA24], e->a24, e->n);
    memcpy(g[LX0], g[LXD], (size_t)l * sizeof *mem);
    memcpy(g[LZ0], g[LZD], (size_t)l * sizeof *mem);
    mont_dbl(&m, g, g[LX1], g[LZ1], g[LX0], g[LZ0]);
    for (size_t i = bits - 1; i-- > 0;) {
        if (mpz_tstbit(k, i)) {
            mont_dadd(&m, g, g[LX0], g[LZ0], g[LX0], g[LZ0], g[LX1], g[LZ1]);
            mont_dbl(&m, g, g[LX1], g[LZ1], g[LX1], g[LZ1]);
        } else {
            mont_dadd(&m, g, g[LX1], g[LZ1], g[LX0], g[LZ0], g[LX1], g[LZ1]);
            mont_dbl(&m, g, g[LX0], g[LZ0], g[LX0], g[LZ0]);
        }
    }
    mont_out(&m, e->x, g[LX0], g[LS], g[LD]);
    mont_out(&m, e->z, g[LZ0], g[LS], g[LD]);
    free(mem);
    return 0;
}

/* Stage 1 over the primes of (b1done, to]: (x:z) = s·(x:z) with s the product
   of their largest powers up to B1. Returns the ladder bits, or -1 when
   memory runs out. */
static long stage1_chunk(pk_ecm *e, uint64_t to, uint64_t b1)
{
    if (!e->primes) {
        e->primes = malloc((PK_ECM_CHUNK_MAX / 2 + 4) * sizeof *e->primes);
        if (!e->primes)
            return -1;
    }
    long count = pk_sieve_primes(&e->sieve, e->b1done + 1, to + 1, e->primes);
    if (count < 0)
        return -1;
    mpz_t k;
    mpz_init_set_ui(k, 1);
    for (long i = 0; i < count; i++) {
        uint64_t p = e->primes[i], q = p;
        while (q <= b1 / p)
            q *= p;
        mpz_mul_ui(k, k, q);
    }
    long bits = (long)mpz_sizeinbase(k, 2);
    int rc = ladder(e, k);
    mpz_clear(k);
    return rc < 0 ? -1 : bits;
}

int pk_ecm_stint(pk_ecm *e, uint64_t *budget, mpz_t factor)
{
    const pk_ecm_level *lv = &pk_ecm_levels[e->level];
    uint64_t l2 = limbs2(e);
    uint64_t used = 0;
    int found = 0;
    if (e->phase == 0) {
        if (suyama(e->n, PK_ECM_SIGMA0 + e->curve, e->a, e->x, factor) && set_a24(e)) {
            mpz_set_ui(e->z, 1);
            e->phase = 1;
            e->b1done = 1;
        } else if (mpz_cmp_ui(factor, 1) > 0 && mpz_cmp(factor, e->n) < 0) {
            found = 1;
        } else {
            next_curve(e); /* a sigma without a curve modulo n */
        }
        used = l2;
    } else if (e->phase == 1) {
        uint64_t max = PK_ECM_CHUNK_LIMBS2 / l2;
        if (max < PK_ECM_CHUNK_MIN)
            max = PK_ECM_CHUNK_MIN;
        uint64_t chunk = *budget / (l2 * PK_ECM_UNIT);
        if (chunk < PK_ECM_CHUNK_MIN)
            chunk = PK_ECM_CHUNK_MIN;
        if (chunk > max)
            chunk = max;
        uint64_t to = lv->b1 - e->b1done <= chunk ? lv->b1 : e->b1done + chunk;
        long bits = stage1_chunk(e, to, lv->b1);
        if (bits < 0)
            return PK_E_NOMEM;
        e->b1done = to;
        used = (uint64_t)bits * l2 * PK_ECM_BIT_UNIT + l2;
        if (e->b1done >= lv->b1) {
            /* The affine point for stage 2; no inverse means the curve's
               order is smooth modulo some prime of n (a factor), or all. */
            if (mpz_invert(factor, e->z, e->n)) {
                mulmod(e->x, e->x, factor, e->n);
                mpz_set_ui(e->z, 1);
                e->phase = 2;
            } else {
                mpz_gcd(factor, e->z, e->n);
                if (mpz_cmp_ui(factor, 1) > 0 && mpz_cmp(factor, e->n) < 0)
                    found = 1;
                else
                    curve_finished(e, 0);
            }
        }
    } else if (mpz_sgn(e->x) == 0) {
        /* x = 0: the point of order 2, whose multiples say nothing (and which
           GMP-ECM refuses as a starting point). */
        curve_finished(e, 0);
        used = l2;
    } else {
        ecm_params p;
        ecm_init(p);
        p->method = ECM_ECM;
        p->param = ECM_PARAM_SUYAMA;
        p->sigma_is_A = 1;
        mpz_set(p->sigma, e->a);
        mpz_set(p->x, e->x);
        p->B1done = (double)lv->b1;
        p->verbose = 0;
        mpz_set_ui(p->B2, lv->b2);
        pthread_mutex_lock(&pk_gmpecm_lock);
        PK_GMPECM_LEAK_BEGIN();
        int r = ecm_factor(factor, e->n, (double)lv->b1, p);
        PK_GMPECM_LEAK_END();
        pthread_mutex_unlock(&pk_gmpecm_lock);
        ecm_clear(p);
        if (r < 0)
            return PK_E_INTERNAL;
        used = lv->b1 * l2 * PK_ECM_UNIT;
        if (r > 0 && mpz_cmp_ui(factor, 1) > 0 && mpz_cmp(factor, e->n) < 0)
            found = 1;
        else
            curve_finished(e, lv->b2);
    }
    e->work += used;
    *budget = *budget > used ? *budget - used : 0;
    return found;
}

void pk_ecm_save(const pk_ecm *e, pk_sbuf *b)
{
    pk_sb_u64_word(b, e->curve);
    pk_sb_u64_word(b, e->level);
    pk_sb_u64_word(b, e->level_curves);
    pk_sb_u64_word(b, e->curves);
    pk_sb_u64_word(b, (uint64_t)e->phase);
    pk_sb_u64_word(b, e->b1done);
    pk_sb_u64_word(b, e->work);
    pk_sb_u64_word(b, e->last_b1);
    pk_sb_u64_word(b, e->last_b2);
    pk_sb_text(b, " ");
    pk_sb_mpz(b, e->x);
    pk_sb_text(b, " ");
    pk_sb_mpz(b, e->z);
}

static int ecm_load(pk_ecm *e, const mpz_t n, const char *v, const char *end, uint64_t first, uint64_t stride)
{
    uint64_t f[9];
    const char *w;
    size_t wl;
    for (int i = 0; i < 9; i++)
        if (pk_next_word(&v, end, &w, &wl) != PK_OK || pk_word_u64(w, wl, &f[i]) != PK_OK)
            return PK_E_CHECKPOINT;
    const char *zw;
    size_t zl;
    if (pk_next_word(&v, end, &w, &wl) != PK_OK || pk_next_word(&v, end, &zw, &zl) != PK_OK || v != end)
        return PK_E_CHECKPOINT;
    pk_ecm_start(e, n);
    int rc = pk_set_mpz(e->x, w, wl);
    if (rc == PK_OK)
        rc = pk_set_mpz(e->z, zw, zl);
    if (rc != PK_OK)
        return rc;
    uint64_t curve = f[0], level = f[1], lc = f[2], curves = f[3], phase = f[4], b1done = f[5];
    if (level >= PK_ECM_LEVELS || phase > 2 || curves > curve)
        return PK_E_CHECKPOINT_STATE;
    const pk_ecm_level *lv = &pk_ecm_levels[level];
    uint64_t before = pk_ecm_curves_before((unsigned)level);
    if (stride > 1) {
        /* A share: its curves are first, first + stride, ...; the level is the
           curve's own; it finished at most the curves before the current one. */
        unsigned lk;
        uint64_t ck;
        if (curve < first || (curve - first) % stride != 0)
            return PK_E_CHECKPOINT_STATE;
        pk_ecm_level_of(curve, &lk, &ck);
        if (lk != level || ck != lc || curves > (curve - first) / stride)
            return PK_E_CHECKPOINT_STATE;
        int b_ok = f[7] == 0 && f[8] == 0;
        for (unsigned i = 0; i <= level && !b_ok; i++)
            b_ok = f[7] == pk_ecm_levels[i].b1 && (f[8] == 0 || f[8] == pk_ecm_levels[i].b2);
        if (!b_ok || (curves == 0) != (f[7] == 0))
            return PK_E_CHECKPOINT_STATE;
    } else if (curves != before + lc || (level + 1 < PK_ECM_LEVELS && lc >= lv->curves)) {
        /* Curves of earlier levels are all done; the last level repeats without end. */
        return PK_E_CHECKPOINT_STATE;
    }
    if (phase == 0 && (b1done != 1 || mpz_sgn(e->x) != 0 || mpz_sgn(e->z) != 0))
        return PK_E_CHECKPOINT_STATE;
    /* A share keeps the state its factor came from: stage 1 may have reached B1. */
    if (phase == 1 && (b1done < 1 || b1done > lv->b1 || (b1done == lv->b1 && stride <= 1)))
        return PK_E_CHECKPOINT_STATE;
    if (phase == 2 && b1done != lv->b1)
        return PK_E_CHECKPOINT_STATE;
    if (phase != 0 && (mpz_cmp(e->x, n) >= 0 || mpz_cmp(e->z, n) >= 0))
        return PK_E_CHECKPOINT_STATE;
    if (phase == 2 && mpz_cmp_ui(e->z, 1) != 0) /* stage 2 starts from the affine point */
        return PK_E_CHECKPOINT_STATE;
    const pk_ecm_level *last = &pk_ecm_levels[level - (lc == 0 && level > 0)];
    if (stride <= 1 && ((curves == 0) != (f[7] == 0) || (f[7] != 0 && f[7] != last->b1) ||
                        (f[8] != 0 && f[8] != last->b2) || (f[7] == 0 && f[8] != 0)))
        return PK_E_CHECKPOINT_STATE;
    e->curve = curve;
    e->level = (unsigned)level;
    e->level_curves = lc;
    e->curves = curves;
    e->phase = (int)phase;
    e->b1done = b1done;
    e->work = f[6];
    e->last_b1 = f[7];
    e->last_b2 = f[8];
    e->stride = stride > 1 ? stride : 0;
    if (phase != 0) {
        mpz_t x0, g;
        mpz_inits(x0, g, NULL);
        int ok = suyama(n, PK_ECM_SIGMA0 + curve, e->a, x0, g) && set_a24(e);
        mpz_clears(x0, g, NULL);
        if (!ok)
            return PK_E_CHECKPOINT_STATE; /* this curve could never have started */
    }
    return PK_OK;
}

int pk_ecm_load(pk_ecm *e, const mpz_t n, const char *v, const char *end)
{
    return ecm_load(e, n, v, end, 0, 0);
}

int pk_ecm_load_share(pk_ecm *e, const mpz_t n, const char *v, const char *end, uint64_t first, uint64_t stride)
{
    return stride > 1 ? ecm_load(e, n, v, end, first, stride) : PK_E_CHECKPOINT_STATE;
}
