/*
 * trial/trial.h — trial division, the first stage of every job (private):
 * the 64/128-bit word path with its scans (word.c, scan*.c) and the GMP path
 * with its windows (gmp.c). The unit works on a job's core (pk_internal.h)
 * and calls nothing above it: the step loop (job.c) calls in.
 */
#ifndef PK_TRIAL_H
#define PK_TRIAL_H

#include "pk_internal.h"

/*
 * The divisibility tests of the 64-bit and 128-bit paths scan whole turns of
 * the 2·3·5·7 = 210 wheel: turn t holds the 48 candidates 210·t + r with r in
 * pk_wheel_residues. A scan returns the smallest candidate dividing n, or 0.
 * Implementations are chosen at run time (pk_dispatch); all give identical
 * answers. They are only called for divisors at or above PK_FP_MIN_DIVISOR,
 * where the floating-point reciprocal error bounds hold (see scan.c).
 */
#define PK_WHEEL 210u
#define PK_WHEEL_SLOTS 48u
extern const uint8_t pk_wheel_residues[PK_WHEEL_SLOTS];

#define PK_FP_MIN_DIVISOR (UINT64_C(1) << 20)   /* below: exact division */
#define PK_FP128_MAX_DIVISOR (UINT64_C(1) << 32) /* 128-bit path: at or above, exact division */

uint64_t pk_scan64_portable(uint64_t n, uint64_t turn_lo, uint64_t turn_hi);
uint64_t pk_scan128_portable(pk_u128 n, uint64_t turn_lo, uint64_t turn_hi);
#if defined(__x86_64__)
uint64_t pk_scan64_avx2(uint64_t n, uint64_t turn_lo, uint64_t turn_hi);
uint64_t pk_scan128_avx2(pk_u128 n, uint64_t turn_lo, uint64_t turn_hi);
uint64_t pk_scan64_avx512(uint64_t n, uint64_t turn_lo, uint64_t turn_hi);
uint64_t pk_scan128_avx512(pk_u128 n, uint64_t turn_lo, uint64_t turn_hi);
#endif

/* Shared by the scans (scan.c; method and error bounds there). */

/* First turns whose candidates are all >= 2^28 (64-bit) and >= 2^29 (128-bit):
   from there on one Newton step per turn keeps the reciprocals precise enough;
   below, the scans take two. */
#define PK_FP64_ONE_STEP_TURN (((UINT64_C(1) << 28) + PK_WHEEL - 1) / PK_WHEEL)
#define PK_FP128_ONE_STEP_TURN (((UINT64_C(1) << 29) + PK_WHEEL - 1) / PK_WHEEL)

/* n = hi + lo exactly, hi a double with at most 53 significant bits of n,
   0 <= lo < 2^11. */
void pk_n64_split(uint64_t n, double *hi, double *lo);

/* n < 2^128 in three exact terms, n = top_int * 2^76 + mid_int * 2^38 + low * 2^38:
   top_int = n >> 76 (below 2^52), mid_int = (n >> 38) mod 2^38, low = (n mod 2^38)
   / 2^38, and the scaled copies top = top_int / 2^38, mid = mid_int / 2^38. */
#define PK_N128_SCALE 274877906944.0 /* 2^38 */
typedef struct pk_n128_parts {
    double top, top_int, mid, mid_int, low;
} pk_n128_parts;
void pk_n128_parts_init(pk_u128 n, pk_n128_parts *out);

/* The smallest candidate of turn t dividing n (exact remainders), or 0. */
uint64_t pk_turn_divisor64(uint64_t n, uint64_t t);
uint64_t pk_turn_divisor128(pk_u128 n, uint64_t t);

/* ------------------------------------------------------------ paths */

/* Window work in stints (gmp.c): nodes paired, then the window check —
   the window's nodes folded one by one into a residue modulo the cofactor,
   then the gcd of the two. */
enum {
    PK_CHECK_NONE = 0,          /* no window check under way */
    PK_CHECK_MODULUS,           /* the reciprocal of the cofactor */
    PK_CHECK_FOLD,              /* nodes folded into acc */
    PK_CHECK_GCD,               /* gcd(cof, acc) */
    PK_CHECK_CONSTANT           /* the folding constant F */
};
typedef struct pk_window_check {
    int stage;                  /* PK_CHECK_* */
    int fold_phase;
    int acc_set;                /* acc holds the product of the nodes folded so far, mod cof */
    size_t cap;                 /* limbs per multiplication stint */
    mpz_t acc, y, tmp, g;
    pk_bmul mp;
    pk_modulus md;              /* the cofactor and its reciprocal, kept while cof is unchanged */
    mpz_t F;                    /* 2^split mod cof, for folding; ready with md when f_ready */
    size_t fc, split;           /* folding block bits, and split = bits of cof + 1 + fc */
    int f_ready;
    pk_fold fd;
    pk_reduce rd;
    pk_gcd gcd;
    /* Pairing two nodes larger than a stint (only with a cache, which keeps
       the result): Karatsuba over stints into pz. */
    int pairing;
    pk_karatsuba km;
    mpz_t pz;
} pk_window_check;

/* The nodes of an open GMP window (gmp.c). */
typedef struct pk_window_stack {
    mpz_t node[64];
    unsigned level[64];
    long count[64];
    uint64_t index[64];
} pk_window_stack;

/* The paths. Each advances job->next within budget; see the .c files. */
int pk_td_word(pk_job *job, uint64_t *budget);
int pk_tdgmp(pk_job *job, uint64_t *budget);
void pk_tdgmp_release(pk_job *job);

/* The window check of an open window: fold, gcd, split, divide out; the
   window is closed when it ends. PK_OK, a negative error, or
   PK_PATH_INTERRUPT (interrupt consumed; the check continues from where it
   stopped on the next call). */
int pk_tdgmp_check_window(pk_job *job);
/* The open window's product modulo the cofactor. */
void pk_tdgmp_window_residue(const pk_job *job, mpz_t out);

/* Reopen a window from a checkpoint with the given residue. */
int pk_tdgmp_window_restore(pk_job *job, uint64_t to, uint64_t tested, uint64_t work,
                            const mpz_t residue);

#endif /* PK_TRIAL_H */
