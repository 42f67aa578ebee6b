/*
 * word_impl.h — what the word-size factoring files share among themselves
 * (private to CKernel/factor/word*): the ECM parameter table and the
 * functions word_arith.c instantiates for one and two words.
 */
#ifndef PK_WORD_IMPL_H
#define PK_WORD_IMPL_H

#include "factor/word.h"
#include "factor/word_primes.h"

/* One row of the ECM schedule: stage-1 bound B1, stage-2 bound B2, giant step D (30 or 210). */
typedef struct pk_word_ecm_level {
    uint32_t max_bits; /* first row for n of at most this many bits */
    uint32_t b1, b2, d;
} pk_word_ecm_level;

#define PK_WORD_ECM_LEVELS 14
/* PK_WORD_TUNE (a build for measuring other schedules, never the library's) makes the table writable. */
#ifdef PK_WORD_TUNE
#define PK_WORD_TABLE_CONST
#else
#define PK_WORD_TABLE_CONST const
#endif
extern PK_WORD_TABLE_CONST pk_word_ecm_level pk_word_ecm_levels[PK_WORD_ECM_LEVELS];

/* Curves run at a row before the schedule moves to the next one. */
#define PK_WORD_ECM_CURVES_PER_LEVEL 64u

/* Work units charged for whole stints (about one modular multiplication each). */
#define PK_WORD_COST_CURVE 400u
#define PK_WORD_COST_BABY 800u
#define PK_WORD_COST_GCD 100u

/* Charge a stint of `cost` units to a run's budget: when *credit covers it,
   take it from *credit, add it to *work and return 1; otherwise change
   nothing and return 0 (the stint waits for a later budget). Every leg of
   the splitters (trial, power, rho, ECM) pays through this. */
static inline int pk_word_charge(uint64_t *credit, uint64_t *work, uint64_t cost)
{
    if (*credit < cost)
        return 0;
    *credit -= cost;
    *work += cost;
    return 1;
}

const pk_word_ecm_level *pk_word_ecm_level_for(unsigned nbits, uint32_t curve);
unsigned pk_word_baby_count(uint32_t d);
uint32_t pk_word_ecm_giant_end(const pk_word_ecm_level *L);
/* First giant index of stage 2. */
uint32_t pk_word_ecm_giant_start(const pk_word_ecm_level *L);
/* Index (into pk_word_odd_primes, plus one) where stage 1 ends. */
uint32_t pk_word_ecm_stage1_end(const pk_word_ecm_level *L);
unsigned pk_word_gcd_small(unsigned a, unsigned b);

uint64_t pk_w64_gcd(uint64_t a, uint64_t b);
pk_u128 pk_w128_gcd(pk_u128 a, pk_u128 b);
int pk_w64_sprp2(const pk_mont64 *m);
int pk_w128_sprp2(const pk_mont128 *m);
int pk_w64_slprp(const pk_mont64 *m);
int pk_w128_slprp(const pk_mont128 *m);

uint64_t pk_w64_ecm_curve(const pk_mont64 *m, pk_wecm64 *e);
pk_u128 pk_w128_ecm_curve(const pk_mont128 *m, pk_wecm128 *e);
uint64_t pk_w64_ecm_baby(const pk_mont64 *m, pk_wecm64 *e, const pk_word_ecm_level *L);
pk_u128 pk_w128_ecm_baby(const pk_mont128 *m, pk_wecm128 *e, const pk_word_ecm_level *L);
int pk_w64_ecm_run(const pk_mont64 *m, pk_wecm64 *e, unsigned nbits, uint64_t *credit, uint64_t *work,
                   uint64_t *factor);
int pk_w128_ecm_run(const pk_mont128 *m, pk_wecm128 *e, unsigned nbits, uint64_t *credit, uint64_t *work,
                    pk_u128 *factor);

/* Rho for odd composite n < 2^64 (n in m): start (c = 1), and run while *credit lasts (2 units a step). */
void pk_w64_rho_start(const pk_mont64 *m, pk_wrho *r, uint64_t c);
int pk_w64_rho_run(const pk_mont64 *m, pk_wrho *r, uint64_t *credit, uint64_t *work, uint64_t *factor);
#ifndef PK_WORD_RHO_BATCH
#define PK_WORD_RHO_BATCH 32u
#endif

#endif /* PK_WORD_IMPL_H */
