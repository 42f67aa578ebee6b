/*
 * word.h — factoring numbers below 2^128 in machine words (private).
 *
 * Complete factorization below 2^64 (pk_word_factor64), primality for one and
 * two words, and a resumable splitter for composites below 2^128 (pk_wsplit_*)
 * that the job pipeline drives in budgeted steps and checkpoints as text.
 * Nothing here allocates, prints or keeps global state; every function is
 * thread-safe on distinct states. Methods and thresholds: docs/kernel.md,
 * "Word-size factoring".
 */
#ifndef PK_FACTOR_WORD_H
#define PK_FACTOR_WORD_H

#include <stddef.h>
#include <stdint.h>

#include "factor/word_mont.h"

/* Complete factorization of 1 <= n < 2^64: distinct primes ascending with exponents; returns the count
   (0 for n = 1, and for n = 0). Every prime is proven (deterministic test below 2^64). No allocation, no
   globals. */
int pk_word_factor64(uint64_t n, uint64_t primes[15], uint8_t exps[15]);

/* Deterministic primality below 2^64 (1 prime, 0 not); BPSW for 2^64 <= n < 2^128. */
int pk_word_is_prime64(uint64_t n);
int pk_word_is_prime128(pk_u128 n); /* 1 prime (proven below 2^64), 2 probable prime, 0 composite */
/* pk_word_is_prime64 without its trial division: for odd n > 53^2 with no prime factor below 53 (strong tests
   to fixed bases below 1.12e12, BPSW above; a proof either way). */
int pk_word_bpsw64(uint64_t n);

/* floor(sqrt(n)). */
uint64_t pk_word_isqrt64(uint64_t n);
/* The largest r with r^k <= n (k >= 1). */
pk_u128 pk_word_root128(pk_u128 n, unsigned k);
/* n = r^k with k >= 2 as large as possible: returns k and sets *root, or returns 1 (*root = n). */
unsigned pk_word_power128(pk_u128 n, pk_u128 *root);
/* The same when every prime factor of n has at least root_bits bits (fewer exponents to try). */
unsigned pk_word_power128_above(pk_u128 n, unsigned root_bits, pk_u128 *root);

/* ----------------------------------------------------------- resumable split */

/* Stage-2 baby steps: the j in (0, D/2) prime to D, at most 24 (D = 210). */
#define PK_WORD_BABY 24

/* One elliptic curve's progress (ECM with Montgomery curves, x and z only). */
#define PK_WORD_ECM_FIELDS(W)                                                   \
    W x, z;             /* stage 1: the running multiple; stage 2: its result Q */ \
    W a24;              /* (A + 2) / 4 (derived from the curve number) */         \
    W gx, gz, hx, hz;   /* stage 2: m·D·Q and (m − 1)·D·Q */                       \
    W dx, dz;           /* stage 2: D·Q (derived from Q) */                        \
    W acc;              /* stage 2: product of the cross differences */           \
    W bx[PK_WORD_BABY]; /* stage 2: x(jQ) with z = 1 (derived from Q) */          \
    uint32_t curve;     /* curves started before this one; sigma = curve + 6 */   \
    uint32_t stage;     /* 0 new curve, 1 stage 1, 2 stage 2 */                   \
    uint32_t pos;       /* stage 1: index of the next prime; stage 2: next m */  \
    uint32_t level      /* row of the parameter table (B1, D, B2) */

typedef struct pk_wecm64 { PK_WORD_ECM_FIELDS(uint64_t); } pk_wecm64;
typedef struct pk_wecm128 { PK_WORD_ECM_FIELDS(pk_u128); } pk_wecm128;

/* Pollard-Brent rho on x -> x^2 + c (Montgomery form), products of 32 differences per gcd. */
typedef struct pk_wrho {
    uint64_t c, x, y, ys, q; /* residues; c is the plain constant */
    uint64_t r, k, i;        /* Brent's cycle length, position in it, position in a batch */
    uint32_t phase;          /* 0 walk y r steps, 1 batches, 2 backtrack after gcd = n */
} pk_wrho;

/* The splitter's state: a plain struct of integers, copyable with memcpy. */
typedef struct pk_wsplit {
    pk_u128 n;
    uint64_t work;     /* units done (about one modular multiplication each) */
    uint64_t credit;   /* budget given and not yet spent (work is done in whole stints) */
    uint32_t method;   /* PK_WSPLIT_TRIAL, _RHO, _ECM */
    uint32_t tpos;     /* trial division: index of the next odd prime */
    pk_wrho rho;       /* n < 2^PK_WSPLIT_RHO_BITS */
    pk_wecm128 ecm;    /* otherwise */
    pk_mont64 m64;     /* derived from n */
    pk_mont128 m128;   /* derived from n */
} pk_wsplit;

enum { PK_WSPLIT_TRIAL = 0, PK_WSPLIT_RHO = 1, PK_WSPLIT_ECM = 2 };

void pk_wsplit_init(pk_wsplit *s, pk_u128 n);
/* Do at most `budget` units of work (1 unit ~ one modular multiplication of n's size; the job converts its
   step budget), return 1 with a nontrivial factor (1 < *factor < n) when one is found, 0 when the budget is
   spent (call again to continue exactly where it stopped), never fails otherwise (switches method or curve
   internally as it sees fit). Deterministic: the same state and budget sequence give the same result.
   Work is done in whole stints of at most about 1,500 units; budget too small for the next stint is kept in the
   state (credit) and spent by a later call, so the work done never exceeds the budgets given in total, and any
   split of the same total budget reaches the same state. */
int pk_wsplit_run(pk_wsplit *s, uint64_t budget, pk_u128 *factor);
/* Text form of the state for checkpoints: one line of printable ASCII, no newline, no spaces at the ends.
   save returns the length written (or the length needed if cap is too small, writing nothing);
   load validates everything (every field in range and consistent with n) and returns 0 or -1. */
size_t pk_wsplit_save(const pk_wsplit *s, char *buf, size_t cap);
int pk_wsplit_load(pk_wsplit *s, pk_u128 n, const char *text, size_t len);
/* For progress: a short static method name ("trial", "rho", "ecm") and work units done so far. */
const char *pk_wsplit_method(const pk_wsplit *s);
uint64_t pk_wsplit_work(const pk_wsplit *s);

#endif /* PK_FACTOR_WORD_H */
