/*
 * range/range.h — the range factoring unit (private): a segmented factor
 * sieve over [first, last] with last < 2^64.
 *
 * Layout of the work. The handle sieves a grid of segments of PK_RANGE_SEG
 * numbers starting at `base` (the first number not yet delivered when the
 * sieve was set up). Every prime p <= limit divides its multiples out:
 * - 2 by counting trailing zero bits;
 * - odd p <= PK_RANGE_SEG ("small" primes) from a table walked for every
 *   segment, with p's inverse modulo 2^64 for exact division;
 * - larger p ("bucket" primes) are kept only in the bucket of the next
 *   segment they hit (a ring of nbuckets lists of fixed-size chunks), so a
 *   segment visits just the primes that divide one of its numbers.
 * limit is floor(sqrt(last)) unless that would take longer than finishing
 * the leftovers (pk_range_choose_limit): then a cofactor at least
 * (limit + 1)^2 is classified by the deterministic test below 2^64 and, when
 * composite, split by the word-size unit. Every factor is proven either way.
 *
 * Set-up (the small-prime table and the buckets) is done by pk_range_step in
 * chunks of the prime sieve, so it is interruptible and counts against the
 * budget; a restored handle sets up again from its position.
 */
#ifndef PK_RANGE_RANGE_H
#define PK_RANGE_RANGE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "primekit.h"

#define PK_RANGE_SEG 8192u           /* numbers per segment (measured: docs/kernel.md) */
#define PK_RANGE_SMALL_MAX 1100u     /* odd primes below PK_RANGE_SEG (1,027), plus room */
#define PK_RANGE_MAXF 15             /* distinct prime factors of a number below 2^64 */
#define PK_RANGE_MAXBIG 3            /* distinct cofactor primes above 2^16 */
#define PK_RANGE_MIN_LIMIT 65536u    /* limit is at least min(this, floor(sqrt(last))) */
#define PK_RANGE_MAX_LIMIT (UINT64_C(1) << 26) /* and at most this (time and bucket memory) */
#define PK_RANGE_CHUNK 510u          /* bucket entries per chunk */
#define PK_RANGE_SETUP_SPAN 131072u  /* numbers per set-up chunk of the prime sieve */
#define PK_RANGE_WHEEL 15015u        /* 3 * 5 * 7 * 11 * 13: the prime sieve's presieved pattern */
#define PK_RANGE_NIL UINT32_MAX

typedef struct pk_rentry {
    uint32_t p;     /* prime */
    uint32_t off;   /* offset of its next multiple in the bucket's segment */
} pk_rentry;

typedef struct pk_rchunk {
    uint32_t next;  /* next chunk of the same bucket (or of the free list) */
    uint32_t count;
    pk_rentry e[PK_RANGE_CHUNK];
} pk_rchunk;

struct pk_range {
    atomic_int interrupt;       /* set by pk_range_interrupt, consumed by step */

    uint64_t first, last;       /* the whole range */
    uint64_t done;              /* numbers delivered (position = first + done) */
    uint64_t limit;             /* sieve primes up to here */
    uint64_t square;            /* (limit + 1)^2, saturated: smaller cofactors are prime */

    /* set-up */
    int ready;                  /* the tables are built for base */
    uint64_t base;              /* grid origin: first + done when set up */
    uint64_t setup_at;          /* next odd number the prime sieve looks at */
    uint32_t *boot;             /* odd primes up to sqrt(limit) */
    size_t nboot;
    uint8_t *pbuf;              /* prime sieve chunk: one byte per odd number */
    uint8_t *wheel;             /* PK_RANGE_WHEEL bytes: 1 where 2j + 1 has no odd prime factor below 17 */

    /* small primes */
    size_t nsmall;
    uint32_t sp[PK_RANGE_SMALL_MAX];
    uint32_t soff[PK_RANGE_SMALL_MAX];   /* next multiple, relative to the next segment */
    uint64_t sinv[PK_RANGE_SMALL_MAX];   /* p^-1 mod 2^64 */
    uint64_t slim[PK_RANGE_SMALL_MAX];   /* (2^64 - 1) / p */

    /* buckets: segment k's bucket is head[k % nbuckets] */
    uint32_t nbuckets;
    uint32_t *head;
    pk_rchunk *chunks;
    uint32_t nchunks, capchunks, freechunks, nfree;
    uint64_t seg_index;         /* grid index of the next segment */

    /* a sieved segment whose cofactors are being finished */
    int pending;
    uint64_t pend_first;
    uint32_t pend_len, pend_at;

    /* the delivered segment */
    uint64_t seg_first;
    size_t seg_count;
    uint64_t *cof;              /* cofactor left by the sieve */
    uint8_t *nf;                /* sieved primes per number */
    uint32_t *fp;               /* PK_RANGE_MAXF per number, ascending */
    uint8_t *fe;
    uint8_t *nb;                /* cofactor primes per number (above limit) */
    uint64_t *bp;               /* PK_RANGE_MAXBIG per number, ascending */
    uint8_t *be;
    uint64_t *small_text;       /* " p" for odd p below PK_RANGE_SEG at p >> 1, " 2" at 0;
                                   byte 7: the text's length */
};

/* sieve.c */
uint64_t pk_range_choose_limit(uint64_t first, uint64_t last);
/* Allocate the tables for r->limit (boot primes, buffers, buckets); 0 or PK_E_NOMEM. */
int pk_range_tables_alloc(pk_range *r);
/* Forget the set-up (the next step starts it again from first + done). */
void pk_range_reset(pk_range *r);
/* One set-up chunk; returns the units spent. PK_E_NOMEM leaves the chunk undone. */
int pk_range_setup_chunk(pk_range *r, uint64_t *units);
/* Room in the chunk pool for the next segment's bucket moves; 0 or PK_E_NOMEM (nothing changed). */
int pk_range_segment_reserve(pk_range *r);
/* Sieve the next segment (the sieve's state moves on; the segment is pending). */
void pk_range_sieve_segment(pk_range *r);
/* Finish the pending segment's cofactors, polling the interrupt every 256 numbers: PK_OK (delivered:
   done moves on) or PK_INTERRUPTED (the next call goes on where this one stopped). */
int pk_range_finish(pk_range *r);

/* Consume a pending interrupt request: 1 if there was one. */
static inline int pk_range_take_interrupt(pk_range *r)
{
    if (!atomic_load_explicit(&r->interrupt, memory_order_relaxed))
        return 0;
    return atomic_exchange_explicit(&r->interrupt, 0, memory_order_acq_rel) != 0;
}

/* format.c: fill the small-prime text table (PK_RANGE_SEG / 2 words). */
void pk_range_small_text(uint64_t *table);

/* Create with an explicit limit (0: pk_range_choose_limit; tests and benchmarks give others, clamped to
   [min(PK_RANGE_MIN_LIMIT, isqrt(last)), isqrt(last)]). */
int pk_range_create_limit(uint64_t first, uint64_t last, uint64_t limit, pk_range **out);

#endif /* PK_RANGE_RANGE_H */
