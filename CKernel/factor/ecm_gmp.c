/*
 * factor/ecm_gmp.c — resumable ECM through GMP-ECM (see ecm_gmp.h).
 *
 * GMP-ECM's stop callback takes no argument, so it cannot reach a job's
 * interrupt flag without global state; instead stage 1 is run in chunks of
 * B1: a call continues the curve from the point x and the bound B1done of
 * the previous one and returns the new point. The chunk is sized from the
 * step budget and capped so that one costs about a millisecond at 200 bits.
 * Units: a chunk of D primes-bound on an L-limb number costs D·L²·PK_ECM_UNIT
 * units (measured: roughly the time of as many trial-division units); stage
 * 2 is counted as B1·L²·PK_ECM_UNIT.
 */
#include <stdio.h>
#include <string.h>

#include <ecm.h>

#include "factor/ecm_gmp.h"

#define PK_ECM_UNIT 40u
#define PK_ECM_CHUNK_MIN 200u
#define PK_ECM_CHUNK_LIMBS2 16000u /* max chunk = this / L² (at least PK_ECM_CHUNK_MIN) */

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
    mpz_init(e->n);
    mpz_init(e->a);
    mpz_init(e->x);
}

void pk_ecm_clear(pk_ecm *e)
{
    mpz_clear(e->n);
    mpz_clear(e->a);
    mpz_clear(e->x);
}

void pk_ecm_start(pk_ecm *e, const mpz_t n)
{
    mpz_set(e->n, n);
    mpz_set_ui(e->a, 0);
    mpz_set_ui(e->x, 0);
    e->curve = 0;
    e->level = 0;
    e->level_curves = e->curves = 0;
    e->b1done = 1;
    e->phase = 0;
    e->work = 0;
    e->last_b1 = e->last_b2 = 0;
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
    e->curve++;
    e->phase = 0;
    e->b1done = 1;
    mpz_set_ui(e->x, 0);
    mpz_set_ui(e->a, 0);
}

static void curve_finished(pk_ecm *e, uint64_t b2)
{
    e->curves++;
    e->last_b1 = pk_ecm_levels[e->level].b1;
    e->last_b2 = b2;
    if (++e->level_curves >= pk_ecm_levels[e->level].curves && e->level + 1 < PK_ECM_LEVELS) {
        e->level++;
        e->level_curves = 0;
    }
    next_curve(e);
}

/* One GMP-ECM call on the current curve: stage 1 from b1done to b1 (stage 2
   skipped), or stage 2 alone when stage2 is set. */
static int call(pk_ecm *e, uint64_t b1, int stage2, mpz_t factor)
{
    ecm_params p;
    ecm_init(p);
    p->method = ECM_ECM;
    p->param = ECM_PARAM_SUYAMA;
    p->sigma_is_A = 1;
    mpz_set(p->sigma, e->a);
    mpz_set(p->x, e->x);
    p->B1done = (double)e->b1done;
    p->verbose = 0;
    if (stage2) {
        mpz_set_ui(p->B2, pk_ecm_levels[e->level].b2);
    } else {
        /* No stage 2, and none of its set-up: B2 = 0 and no NTT (with B2 = B1
           GMP-ECM still prepares stage 2, 180 µs a call, measured). */
        mpz_set_ui(p->B2, 0);
        p->use_ntt = 0;
    }
    int r = ecm_factor(factor, e->n, (double)b1, p);
    if (r >= 0) {
        mpz_set(e->x, p->x);
        e->b1done = b1;
    }
    ecm_clear(p);
    return r;
}

int pk_ecm_piece(pk_ecm *e, uint64_t *budget, mpz_t factor)
{
    const pk_ecm_level *lv = &pk_ecm_levels[e->level];
    uint64_t l2 = limbs2(e);
    uint64_t used = 0;
    int found = 0;
    if (e->phase == 0) {
        if (suyama(e->n, PK_ECM_SIGMA0 + e->curve, e->a, e->x, factor)) {
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
        uint64_t from = e->b1done;
        int r = call(e, to, 0, factor);
        if (r < 0)
            return PK_E_INTERNAL;
        used = (to - from) * l2 * PK_ECM_UNIT;
        if (r > 0) {
            if (mpz_cmp_ui(factor, 1) > 0 && mpz_cmp(factor, e->n) < 0)
                found = 1;
            else
                curve_finished(e, 0); /* every prime at once: try the next curve */
        } else if (e->b1done >= lv->b1) {
            e->phase = 2;
        }
    } else {
        int r = call(e, lv->b1, 1, factor);
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
}

int pk_ecm_load(pk_ecm *e, const mpz_t n, const char *v, const char *end)
{
    uint64_t f[9];
    const char *w;
    size_t wl;
    for (int i = 0; i < 9; i++)
        if (pk_next_word(&v, end, &w, &wl) != PK_OK || pk_word_u64(w, wl, &f[i]) != PK_OK)
            return PK_E_CHECKPOINT;
    if (pk_next_word(&v, end, &w, &wl) != PK_OK || v != end)
        return PK_E_CHECKPOINT;
    pk_ecm_start(e, n);
    int rc = pk_set_mpz(e->x, w, wl);
    if (rc != PK_OK)
        return rc;
    uint64_t curve = f[0], level = f[1], lc = f[2], curves = f[3], phase = f[4], b1done = f[5];
    if (level >= PK_ECM_LEVELS || phase > 2 || curves > curve)
        return PK_E_CHECKPOINT_STATE;
    const pk_ecm_level *lv = &pk_ecm_levels[level];
    uint64_t before = 0;
    for (unsigned i = 0; i < level; i++)
        before += pk_ecm_levels[i].curves;
    /* Curves of earlier levels are all done; the last level repeats without end. */
    if (curves != before + lc || (level + 1 < PK_ECM_LEVELS && lc >= lv->curves))
        return PK_E_CHECKPOINT_STATE;
    if (phase == 0 && (b1done != 1 || mpz_sgn(e->x) != 0))
        return PK_E_CHECKPOINT_STATE;
    if (phase == 1 && (b1done < 1 || b1done >= lv->b1))
        return PK_E_CHECKPOINT_STATE;
    if (phase == 2 && b1done != lv->b1)
        return PK_E_CHECKPOINT_STATE;
    if (phase != 0 && (mpz_sgn(e->x) <= 0 || mpz_cmp(e->x, n) >= 0))
        return PK_E_CHECKPOINT_STATE;
    const pk_ecm_level *last = &pk_ecm_levels[level - (lc == 0 && level > 0)];
    if ((curves == 0) != (f[7] == 0) || (f[7] != 0 && f[7] != last->b1) || (f[8] != 0 && f[8] != last->b2) ||
        (f[7] == 0 && f[8] != 0))
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
    if (phase != 0) {
        mpz_t x0, g;
        mpz_inits(x0, g, NULL);
        int ok = suyama(n, PK_ECM_SIGMA0 + curve, e->a, x0, g);
        mpz_clears(x0, g, NULL);
        if (!ok)
            return PK_E_CHECKPOINT_STATE; /* this curve could never have started */
    }
    return PK_OK;
}
