/*
 * factor/qs.h — self-initialising quadratic sieve for composite parts of
 * about 2^60 to 2^230 (private).
 *
 * A Knuth-Schroeppel multiplier k, a factor base of the primes p with
 * (kn/p) != -1, SIQS polynomials (A a product of factor-base primes, the B
 * of one A visited in Gray-code order), a byte sieve in blocks of 32 kB
 * (primes below 32 not sieved), candidates trial-divided by re-using the
 * roots, one large prime per relation, Gaussian elimination over GF(2) on
 * 64-bit words, and square roots giving gcd factors.
 *
 * The work is done in stints (one polynomial's sieve, a few columns of the
 * elimination, one square root), so a caller polls its interrupt between
 * stints. Everything is deterministic: the same n gives the same
 * parameters, polynomials and factor, however the budget is cut, so a
 * restart from the beginning ends with the identical answer (a checkpoint
 * records only that QS was started on a part). Allocation happens when the
 * state is made and when relations are stored, never in the sieve.
 */
#ifndef PK_FACTOR_QS_H
#define PK_FACTOR_QS_H

#include <stdint.h>
#include <gmp.h>

/* The sizes the sieve takes (docs/kernel.md: it beats the word-size
   splitter from about 76 bits and ECM on balanced parts up to the largest
   size measured). */
#define PK_QS_MIN_BITS 80
#define PK_QS_MAX_BITS 230

/* Units of the word-size splitter spent on a part of `bits` bits before it
   passes to the sieve: 2^(bits/8+1) (about 6 % of the sieve's time), and at
   least 2^14, which decides below 104 bits (a job's word-size stint; the
   pass then splits most parts with a prime factor of 20-32 bits, which
   would cost a sieve run): its small factors are found first.
   The job pipeline and the batch calls use it alike; docs/kernel.md has the
   measurements. */
#define PK_QS_WORD_PASS_MIN_LOG2 14
#ifdef PK_WORD_TUNE
/* A build for measuring (never the library's, word_impl.h): the pass scaled by 2^shift, and at least 2^floor. */
extern int pk_qs_word_pass_shift;
extern unsigned pk_qs_word_pass_floor;
#define PK_QS_WORD_PASS_SHIFT pk_qs_word_pass_shift
#define PK_QS_WORD_PASS_FLOOR pk_qs_word_pass_floor
#else
#define PK_QS_WORD_PASS_SHIFT 0
#define PK_QS_WORD_PASS_FLOOR PK_QS_WORD_PASS_MIN_LOG2
#endif
static inline uint64_t pk_qs_word_pass(unsigned bits)
{
    const uint64_t u = UINT64_C(1) << (bits / 8 + 1 + PK_QS_WORD_PASS_SHIFT);
    const uint64_t least = UINT64_C(1) << PK_QS_WORD_PASS_FLOOR;
    return u < least ? least : u;
}

typedef struct pk_qs pk_qs;

/* Make a state for the odd composite n (not a perfect power; n >= 2^40).
   NULL when memory runs out. */
pk_qs *pk_qs_new(const mpz_t n);
void pk_qs_free(pk_qs *q);

/* Do stints of work until at least `budget` units are spent or the factor
   is found (one unit is about half a nanosecond's work; one stint took at
   most 0.5 ms up to 160 bits, 1.7 ms at 200 bits); a budget of 1 does one
   stint.
   Returns 1 with 1 < factor < n dividing n, 0 when the budget is spent (call
   again to continue), -1 when memory runs out (the state is still valid),
   -2 when QS gave up (never expected: the square roots of every dependency
   of several rounds failed). *used gets the units spent by this call. */
int pk_qs_run(pk_qs *q, uint64_t budget, mpz_t factor, uint64_t *used);

/* Units spent so far, and a progress fraction in [0, 1] that never
   decreases (relations found against relations needed, then elimination). */
uint64_t pk_qs_work(const pk_qs *q);
double pk_qs_fraction(const pk_qs *q);

#endif /* PK_FACTOR_QS_H */
