/*
 * factor/ecm_gmp.h — resumable ECM over GMP with the GMP-ECM library, for
 * composite parts above 128 bits (private).
 *
 * Curves follow a fixed schedule: curve k uses Suyama's parametrisation with
 * sigma = PK_ECM_SIGMA0 + k, so a restored state repeats the same curves.
 * The B1 levels and their expected curve counts are the ones GMP-ECM
 * publishes for its default B2 (pk_ecm_levels). Stage 1 is the kernel's own
 * (a Montgomery ladder over the prime powers up to B1, in chunks of primes,
 * so it stops between chunks); stage 2 is one GMP-ECM call per curve from
 * the stage-1 point, run again if a step is interrupted before it.
 */
#ifndef PK_FACTOR_ECM_GMP_H
#define PK_FACTOR_ECM_GMP_H

#include "pk_internal.h"
#include "job/codec.h"

#define PK_ECM_SIGMA0 11u

typedef struct pk_ecm_level {
    unsigned digits;            /* factor size the level targets */
    uint64_t b1;
    uint64_t b2;                /* stage 2 bound (GMP-ECM's default for this B1) */
    uint64_t curves;            /* expected curves to find such a factor */
} pk_ecm_level;

#define PK_ECM_LEVELS 12u
extern const pk_ecm_level pk_ecm_levels[PK_ECM_LEVELS];

typedef struct pk_ecm {
    mpz_t n;                    /* the composite being split */
    mpz_t a, x, z;              /* the current curve (Montgomery A) and its point (X:Z):
                                   stage 1's running multiple; z = 1 in stage 2 */
    mpz_t a24;                  /* (A + 2)/4, derived from a */
    mpz_t t[6];                 /* scratch of the ladder */
    pk_sieve sieve;             /* primes of stage 1 (scratch) */
    uint64_t *primes;           /* one chunk's primes (scratch, allocated on first use) */
    uint64_t curve;             /* number of the current curve: sigma = PK_ECM_SIGMA0 + curve */
    unsigned level;             /* index in pk_ecm_levels (the last one repeats forever) */
    uint64_t level_curves;      /* curves finished at this level */
    uint64_t curves;            /* curves finished, every level */
    uint64_t b1done;            /* stage 1 of the current curve reached this bound */
    int phase;                  /* 0: curve not set up, 1: stage 1, 2: stage 2 */
    uint64_t work;              /* units spent */
    uint64_t last_b1, last_b2;  /* bounds of the last finished curve */
    uint64_t stride;            /* 0: one job runs every curve. Above 1: a share of the
                                   curves (pk_job_ecm_share): the next curve is curve +
                                   stride, level and level_curves follow the curve's number
                                   (curve k runs at the level of the k-th curve of one job)
                                   and curves counts this share's finished curves only */
} pk_ecm;

void pk_ecm_init(pk_ecm *e);
void pk_ecm_clear(pk_ecm *e);
/* Start on the odd composite n (not a perfect power). */
void pk_ecm_start(pk_ecm *e, const mpz_t n);
/* Levels whose expected curves are all done (0 .. PK_ECM_LEVELS). */
unsigned pk_ecm_levels_done(const pk_ecm *e);
/* One stint: set up a curve, a chunk of stage 1 (at most about *budget units),
   or stage 2. Returns 1 with 1 < factor < n, 0 when the stint ended without
   one, or PK_E_NOMEM / PK_E_INTERNAL. *budget is reduced by the units used. */
int pk_ecm_stint(pk_ecm *e, uint64_t *budget, mpz_t factor);
/* Fraction of the expected curves of levels 0..through done (monotone). */
double pk_ecm_fraction(const pk_ecm *e, unsigned through);

/* Level of the curve numbered k in one job's schedule (curves of earlier
   levels all before it) and its place in that level. */
void pk_ecm_level_of(uint64_t k, unsigned *level, uint64_t *level_curves);
/* Curves one job finishes before level `level` starts (levels 0..level-1). */
uint64_t pk_ecm_curves_before(unsigned level);
/* Make e a share: from the curve numbered `first` (e->curve, phase kept when
   it is the current one), every stride-th. */
void pk_ecm_make_share(pk_ecm *e, uint64_t first, uint64_t stride);

/* Checkpoint text: " <curve> <level> <level-curves> <curves> <phase> <b1done> <work> <last-b1> <last-b2> <x> <z>"
   appended to b; load reads the same words from [v, end) and checks them against n. */
void pk_ecm_save(const pk_ecm *e, pk_sbuf *b);
int pk_ecm_load(pk_ecm *e, const mpz_t n, const char *v, const char *end);
/* The same for a share whose first curve is `first`, every stride-th (stride > 1). */
int pk_ecm_load_share(pk_ecm *e, const mpz_t n, const char *v, const char *end, uint64_t first, uint64_t stride);

#endif /* PK_FACTOR_ECM_GMP_H */
