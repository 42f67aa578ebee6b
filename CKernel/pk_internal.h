/*
 * pk_internal.h — private declarations shared by the kernel's source files.
 * Nothing here is part of the public API; see include/primekit.h.
 */
#ifndef PK_INTERNAL_H
#define PK_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <gmp.h>

#include "primekit.h"

__extension__ typedef unsigned __int128 pk_u128;

#define PK_U64_MAX UINT64_C(0xFFFFFFFFFFFFFFFF)
/* Largest divisor ever tried: keeps every loop clear of 2^64 wrap-around. */
#define PK_BOUND_MAX (PK_U64_MAX - UINT64_C(0xFFFF))

/* ------------------------------------------------------------ dispatch */

/* The trial-division scans chosen at run time for a job (trial/trial.h
   describes them: the smallest candidate of wheel turns [turn_lo, turn_hi)
   dividing n, or 0). */
typedef uint64_t (*pk_scan64_fn)(uint64_t n, uint64_t turn_lo, uint64_t turn_hi);
typedef uint64_t (*pk_scan128_fn)(pk_u128 n, uint64_t turn_lo, uint64_t turn_hi);

typedef struct pk_dispatch {
    int simd;                   /* the pk_simd value actually in use */
    pk_scan64_fn scan64;
    pk_scan128_fn scan128;
} pk_dispatch;

/*
 * Resolve a requested pk_simd value to the best available implementation:
 * AUTO picks the best the CPU supports; a path the CPU (or the build) lacks
 * falls back to the best one below it. out->simd records the choice.
 */
void pk_dispatch_select(int requested, pk_dispatch *out);

/* ------------------------------------------------------------- sieve */

/*
 * A resumable segmented sieve of Eratosthenes producing the primes of
 * [lo, hi) in ascending order, one segment at a time.
 */
typedef struct pk_sieve {
    uint32_t *base;         /* odd base primes, ascending */
    uint64_t *next_mult;    /* next odd multiple of base[i] at or above seg_lo */
    size_t base_count, base_cap;
    uint64_t base_limit;    /* every odd prime <= base_limit is in base */
    uint64_t seg_lo;        /* start of the next segment (even), PK_U64_MAX for none */
    size_t aligned;         /* next_mult of base[0 .. aligned) is for seg_lo */
    uint8_t *seg;           /* one byte per odd number of a segment */
} pk_sieve;

#define PK_SIEVE_SPAN (UINT64_C(1) << 18) /* integers per segment */

void pk_sieve_init(pk_sieve *s);
void pk_sieve_free(pk_sieve *s);
/*
 * Primes p with lo <= p < hi (hi - lo <= PK_SIEVE_SPAN) into out (capacity
 * at least PK_SIEVE_SPAN / 2 + 2). Consecutive calls with lo equal to the
 * previous hi reuse the sieve's state; any other lo restarts it. Returns the
 * count, or -1 when memory runs out.
 */
long pk_sieve_primes(pk_sieve *s, uint64_t lo, uint64_t hi, uint64_t *out);
/*
 * The set-up pk_sieve_primes(s, lo, hi, ...) needs (base primes up to
 * sqrt(hi - 1), their multiples aligned to lo), done in chunks with a call
 * of poll(ctx) after each chunk but the last (poll may be NULL; every call
 * does at least one chunk when any work is left): returns 0 when ready (the
 * call of pk_sieve_primes that follows does one segment's work), 1 when
 * poll returned nonzero (the work done is kept; call again), -1 when memory
 * runs out.
 */
int pk_sieve_prepare(pk_sieve *s, uint64_t lo, uint64_t hi, int (*poll)(void *), void *ctx);

/* ------------------------------------------------------------- cache */

/* Products of the primes of aligned runs of 2^level segments. */
#define PK_CACHE_LEVELS 12u
typedef struct pk_cache_entry {
    mpz_t product;
    long count;                 /* primes in the segment */
} pk_cache_entry;

struct pk_cache {
    _Atomic(pk_cache_entry *) *slots;
    size_t slot_count;
    atomic_size_t bytes;
    size_t max_bytes;
};

/* The node for segments [i * 2^level, (i + 1) * 2^level), or NULL. */
const pk_cache_entry *pk_cache_get(pk_cache *c, unsigned level, uint64_t i);
/* Offer a computed node; the cache copies it if it has room. */
void pk_cache_put(pk_cache *c, unsigned level, uint64_t i, const mpz_t product, long count);

/* ------------------------------------------------------------ primality */

/* Deterministic primality for 64-bit values (BPSW via GMP is exact there). */
int pk_is_prime_u64(uint64_t n);
/* floor(sqrt(n)). */
uint64_t pk_isqrt_u64(uint64_t n);
/* BPSW: 2 = proven (below 2^64), 1 = probable prime, 0 = composite. */
int pk_bpsw(const mpz_t n);

/* ------------------------------------------------------------ parsing */

/* 1 if s[0..len) is ^(0|[1-9][0-9]*)$. */
int pk_is_canonical_decimal(const char *s, size_t len);
/* Parse a canonical decimal, saturating at 2^64-1. Returns PK_OK or PK_E_PARSE. */
int pk_parse_u64_saturating(const char *s, size_t len, uint64_t *out);
/* Copy a string out under the caller-buffer convention. */
int pk_emit(const char *s, size_t n, char *buf, size_t cap, size_t *len);
/* Exact number of decimal digits of v. */
size_t pk_decimal_length(const mpz_t v);
/* mpz to decimal under the caller-buffer convention. */
int pk_emit_mpz(const mpz_t v, char *buf, size_t cap, size_t *len);

/* ------------------------------------------------------------ divisors (divisors.c) */

/* Every divisor of prod primes[i]^exponents[i] (the product below 2^64),
   ascending; returns where they are (inside space) and their number in
   *have. space holds 3 * total values, total being at least the number of
   divisors (the product of exponents[i] + 1). */
const uint64_t *pk_divisors_ascending(const uint64_t *primes, const uint64_t *exponents, size_t count,
                                      uint64_t *space, size_t total, size_t *have);
/* The number of decimal digits of v. */
size_t pk_decimal_length_u64(uint64_t v);
/* values in decimal, separated by single spaces, into out (at most 21 bytes
   per value; no terminator); returns the length. */
size_t pk_decimal_list(const uint64_t *values, size_t count, char *out);

/* -------------------------------------------------- bounded operations */

/* Long GMP work in stints of bounded size (bounded.c). Every *_stint call does
   one stint and keeps its progress in the state, so a caller can stop between
   stints and continue later. `cap` is the largest operand, in limbs, of any
   multiplication a stint does. */

/* Nonzero when the caller should stop (pk_gcd_run returns after it). */
typedef int (*pk_poll_fn)(void *ctx);

struct pk_karatsuba;
typedef struct pk_bmul {
    size_t i;                   /* stints of the current product done */
    size_t max_limbs;           /* largest operand of any stint so far (statistics, tests) */
    struct pk_karatsuba *km;         /* Karatsuba state for balanced products, allocated when first needed */
    int km_ready;
    mpz_t xv, yv;               /* read-only views of the operands' magnitudes (Karatsuba) */
} pk_bmul;

/* rop = x·y, one stint per call; 1 when rop holds the product. Operands of
   similar sizes larger than cap go by Karatsuba over stints (pk_karatsuba), others
   as products of cap-limb slices. rop must be distinct from x, y and tmp, and
   untouched between calls; x and y must not change. */
int pk_bmul_stint(mpz_t rop, const mpz_t x, const mpz_t y, size_t cap, pk_bmul *st, mpz_t tmp);
/* Free what a pk_bmul allocated (it may be reused afterwards). */
void pk_bmul_clear(pk_bmul *st);

/* x·y by Karatsuba over stints of at most cap limbs (bounded.c); out must be
   distinct from x and y, which stay unchanged until the product is done. */
#define PK_KARATSUBA_DEPTH 24u
typedef struct pk_karatsuba_frame {
    mpz_ptr out;
    mpz_srcptr x, y;
    mpz_t x0, x1, y0, y1;       /* read-only views of x and y */
    mpz_t sx, sy, z0, z1, z2;
    size_t h;
    int phase;
} pk_karatsuba_frame;

typedef struct pk_karatsuba {
    pk_karatsuba_frame fr[PK_KARATSUBA_DEPTH];
    unsigned depth;
    size_t cap;
    size_t max_limbs;           /* largest operand of any stint so far (statistics, tests) */
} pk_karatsuba;

void pk_karatsuba_init(pk_karatsuba *k);
void pk_karatsuba_clear(pk_karatsuba *k);
void pk_karatsuba_start(pk_karatsuba *k, mpz_t out, const mpz_t x, const mpz_t y, size_t cap);
/* One stint; 1 when out = x·y. */
int pk_karatsuba_stint(pk_karatsuba *k);

/* A modulus m with its Barrett reciprocal mu = floor(2^(n + cmax) / m), n =
   bits of m, cmax = min(n, 64·cap - 1) the largest Barrett block. */
typedef struct pk_modulus {
    mpz_t m, mu;
    size_t n, cap, cmax;
    size_t ktop;                /* Newton's last precision: cmax + 64, at most n */
    int ready;                  /* mu computed */
    /* Newton's iteration: precisions ks[nk] (base) up to ks[0] = n. */
    size_t ks[64];
    unsigned nk, ki;
    int phase;
    pk_bmul mp;
    mpz_t r, t1, t2, tmp;
} pk_modulus;

void pk_modulus_init(pk_modulus *md);
void pk_modulus_clear(pk_modulus *md);
void pk_modulus_set(pk_modulus *md, const mpz_t m, size_t cap);
/* One stint of computing mu; 1 when ready. */
int pk_modulus_stint(pk_modulus *md);

/* x mod m from the top, in blocks of up to cmax bits (Barrett with mu). */
typedef struct pk_reduce {
    size_t pos;                 /* low bits of x not yet taken */
    size_t c;                   /* the current block's bits */
    int phase;
    pk_bmul mp;
    mpz_t r;                    /* the remainder so far; the result when done */
    mpz_t x, q, t, mu_c;
} pk_reduce;

void pk_reduce_init(pk_reduce *rd);
void pk_reduce_clear(pk_reduce *rd);
/* Start reducing x (>= 0); md must be ready. */
void pk_reduce_start(pk_reduce *rd, const mpz_t x, const pk_modulus *md);
/* One stint; 1 when rd->r = x mod m. x must be the same number every call. */
int pk_reduce_stint(pk_reduce *rd, const mpz_t x, pk_modulus *md, mpz_t tmp);

/* x modulo m up to a multiple, by folding with F = 2^split mod m, one
   product per c bits (bounded.c): r ends congruent to x and below about
   2^(split + 1). x must be the same number every call. */
typedef struct pk_fold {
    size_t pos;                 /* low bits of x not yet taken, a multiple of c */
    int phase;
    pk_bmul mp;
    mpz_t r, hi, t;
} pk_fold;

void pk_fold_init(pk_fold *fd);
void pk_fold_clear(pk_fold *fd);
void pk_fold_start(pk_fold *fd, const mpz_t x, size_t split, size_t c);
/* One stint; 1 when fd->r is done. */
int pk_fold_stint(pk_fold *fd, const mpz_t x, const mpz_t F, size_t split, size_t c, size_t cap, mpz_t tmp);

/* A gcd in stints: a half-gcd recursion on an explicit stack of frames. */
typedef struct pk_gcd_frame {
    mpz_t a, b;                 /* the pair, a >= b >= 0 */
    mpz_t m[4];                 /* (start pair) = M·(a, b): m00 m01 m10 m11; not at the root */
    mpz_t t[4];                 /* products while a child's matrix is applied */
    int det;                    /* det M = ±1 */
    int track;                  /* M is kept (every frame but the root) */
    int phase, force_div;
    size_t stop;                /* done when b has at most this many bits */
    size_t na;                  /* bits of a when the child was started */
    size_t p;                   /* the child's slice: the bits of a, b above 2^p */
} pk_gcd_frame;

typedef struct pk_gcd {
    pk_gcd_frame *fr;
    unsigned depth, nfr;
    size_t cap;
    pk_bmul mp;
    mpz_t tmp;
    uint64_t stints;            /* stints done, ever (statistics, tests) */
} pk_gcd;

void pk_gcd_init(pk_gcd *g);
void pk_gcd_clear(pk_gcd *g);
int pk_gcd_start(pk_gcd *g, const mpz_t a, const mpz_t b, size_t cap);
/* Stints until done (1, the gcd in out) or until poll returns nonzero
   (0; call again to continue). PK_E_NOMEM when memory runs out. poll may be
   NULL; it is called before every stint. */
int pk_gcd_run(pk_gcd *g, mpz_t out, pk_poll_fn poll, void *ctx);

/* ------------------------------------------------------------ job */

typedef struct pk_factor {
    mpz_t prime;
    uint64_t exponent;
    int certainty;              /* pk_certainty: PROBABLE only for a BPSW pass above 2^64 */
} pk_factor;

struct pk_pipe;                 /* the stages after trial division (job/pipeline.c) */
struct pk_window_check;         /* trial division's window check (trial/trial.h) */
struct pk_window_stack;

struct pk_job {
    atomic_int interrupt;       /* set by pk_job_interrupt, consumed by step */
    atomic_int conclude;        /* set by pk_job_conclude, never cleared */
    int concluded;              /* the job has seen conclude (checkpointed) */

    mpz_t n;                    /* the candidate */
    char *n_text;               /* its decimal digits, kept to spare conversions */
    size_t n_len;
    mpz_t cof;                  /* n divided by every factor found */
    pk_factor *factors;         /* ascending */
    size_t factor_count, factor_cap;

    uint64_t from, bound;       /* requested range, inclusive */
    uint64_t next;              /* every divisor < next has been tried */
    uint64_t eff_bound;         /* min(bound, floor(sqrt(cof)), limit) */
    uint64_t limit;             /* pk_job_limit: no divisor above it is needed; in memory only */
    uint64_t tested, work;
    double percent;             /* never decreases */
    size_t max_digits, bpsw_digits;
    int done;
    int cof_status;             /* pk_cofactor_status, once done */
    size_t cof_digits;          /* exact decimal length of cof, once done */

    pk_dispatch dispatch;
    pk_cache *cache;            /* shared segment products, may be NULL */

    /* Complete factorization (job/pipeline.c): trial division is the first
       stage; the pipeline, created when it ends, owns every later one. */
    int mode;                   /* pk_mode */
    unsigned ecm_digits;        /* effort limits (pk_options) */
    uint64_t work_limit;
    struct pk_pipe *pipe;       /* NULL until trial division of a complete job ends */

    uint64_t revision;          /* bumped by every step */
    /* The last checkpoint text, reused while the job has not changed
       (a 10-million-digit checkpoint costs seconds to render). */
    char *ckpt_text;
    size_t ckpt_len;
    uint64_t ckpt_revision;     /* the revision ckpt_text was rendered at */

    /* GMP window mode (trial/gmp.c): products of the segments of
       [next, win_pos) wait on a stack of aligned tree nodes for one gcd.
       In memory only: a checkpoint records next, the window's start. */
    int win_open;
    uint64_t win_pos, win_tested, win_work, win_bits;
    unsigned win_depth;
    struct pk_window_stack *ws; /* allocated on the first window */
    struct pk_window_check *wc; /* the window check in progress; allocated on the first */
    /* A segment product being built in stints: the primes of [rp_lo, rp_hi)
       packed into rp_words words of tree[], paired level by level. */
    int rp_active;
    uint64_t rp_lo, rp_hi;
    long rp_count;
    size_t rp_words;
    /* Polls of the interrupt flag between stints of window work. */
    uint64_t polls;

    /* GMP path scratch; rebuilt on demand, never part of the checkpoint. */
    pk_sieve sieve;
    uint64_t *primes;           /* one sieve segment's primes */
    long prime_count, prime_pos;
    uint64_t primes_lo, primes_hi; /* the segment primes[] came from */
    mpz_t *tree;                /* product/remainder tree storage */
    size_t tree_cap;

#ifdef PK_TEST_HOOKS
    /* Test builds only (bindings/c/Makefile builds the tests' kernel with
       PK_TEST_HOOKS): pk_job_poll raises the interrupt flag at this poll, as
       another thread would; 0 for none. */
    uint64_t poll_trap;
#endif
};

/* Copy options (NULL: defaults) into *out, validating them. */
int pk_options_resolve(const pk_options *options, pk_options *out);
/* Set n and n_text from canonical decimal digits (not NUL-terminated). */
int pk_job_set_candidate(pk_job *job, const char *digits, size_t len);
/* Create an empty job (no candidate yet). */
pk_job *pk_job_alloc(void);
/* min(cap, floor(sqrt(v))) without a square root of a huge v. */
uint64_t pk_sqrt_capped(const mpz_t v, uint64_t cap);
/* Recompute eff_bound from cof and bound. */
void pk_job_refresh_bound(pk_job *job);
/* Record a proven prime factor p with exponent e (merging with an equal one). */
int pk_job_add_factor(pk_job *job, const mpz_t p, uint64_t e);
/* The same with a pk_certainty. */
int pk_job_add_prime(pk_job *job, const mpz_t p, uint64_t e, int certainty);
/* Poll the interrupt between stints of work (counts polls; in test builds
   poll_trap raises the flag at a given poll). 1 when interrupted (consumed)
   or concluding (see pk_job_stop_requested). */
int pk_job_poll(pk_job *job);
/* Divide every power of the proven prime d out of cof and record it. */
int pk_job_divide_out(pk_job *job, uint64_t d);
/* 1 when trial division from 2 below next proves v > 1 (with no prime
   below next) prime: next^2 > v. */
int pk_job_trial_proves(const pk_job *job, const mpz_t v);
/* Finish the job: classify the cofactor and set done. */
int pk_job_finish(pk_job *job);
/* The cofactor status pk_job_finish would give the job's cofactor (above 1). */
int pk_job_classify_cofactor(const pk_job *job);
/* Update percent from next and eff_bound, never decreasing. */
void pk_job_update_percent(pk_job *job);
/* 1 if the interrupt flag was set (and clear it). */
int pk_job_take_interrupt(pk_job *job);
/* 1 once pk_job_conclude has been seen by a complete job that is not done
   (records it in job->concluded). */
int pk_job_concluding(pk_job *job);
/* 1 when a path should stop and return PK_PATH_INTERRUPT: the job is
   concluding (the flag stays) or an interrupt was pending (consumed). */
int pk_job_stop_requested(pk_job *job);

#include "fnv.h"   /* pk_fnv, the hash of every checksum line */
/* The length of the body of a checkpoint text whose last line is
   "checksum <16 lower-case hex digits>\n" holding the checksum of every byte
   before it; 0 when the line is missing, malformed or does not match. */
size_t pk_checkpoint_checked_body(const char *text, size_t length);
/* A copy of the job through its checkpoint text (the same state, options,
   dispatch and cache; no interrupt or conclude request pending). */
int pk_job_clone(const pk_job *job, pk_job **out);

/* Internal outcome of a path call. */
enum {
    PK_PATH_CONTINUE = 0,   /* re-dispatch: a factor was found or a block ended */
    PK_PATH_BUDGET = 1,     /* budget spent */
    PK_PATH_INTERRUPT = 2   /* interrupt seen (already consumed) */
};

#endif /* PK_INTERNAL_H */
