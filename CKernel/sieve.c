/*
 * sieve.c — a resumable segmented sieve of Eratosthenes over odd numbers.
 *
 * Base primes are grown on demand up to sqrt of the segment being sieved, so
 * the memory used follows how far a job has actually gone. Each base prime
 * remembers its next odd multiple, so consecutive segments cost no division.
 *
 * Growing the base and aligning the multiples to a new start are done in
 * chunks (pk_sieve_prepare), so that a sieve starting far from 0 (its base
 * primes reach sqrt of the start: 44 million of them near 10^18) can be
 * interrupted between chunks and taken up again where it stopped.
 */
#include <stdlib.h>
#include <string.h>

#include "pk_internal.h"

/* The first growth covers every prime whose square a sieve below 2^32 can
   reach, so later growth sieves with primes already held. */
#define PK_SIEVE_BASE_MIN UINT64_C(65536)
/* Base primes aligned to a new start per chunk (a division each). */
#define PK_SIEVE_ALIGN_CHUNK 65536u

void pk_sieve_init(pk_sieve *s)
{
    memset(s, 0, sizeof *s);
    s->seg_lo = PK_U64_MAX; /* no segment yet: the first call restarts */
}

void pk_sieve_free(pk_sieve *s)
{
    free(s->base);
    free(s->next_mult);
    free(s->seg);
    pk_sieve_init(s);
}

/* First odd multiple of p at or above max(lo, p*p). */
static uint64_t first_multiple(uint64_t p, uint64_t lo)
{
    uint64_t start = p * p;
    if (start < lo) {
        uint64_t rem = lo % p;
        /* Near 2^64 the next multiple may not exist: PK_U64_MAX then stands for "none". */
        if (__builtin_add_overflow(lo, rem ? p - rem : 0, &start))
            return PK_U64_MAX;
        if (!(start & 1) && __builtin_add_overflow(start, p, &start))
            return PK_U64_MAX;
    }
    return start;
}

/* Room for count base primes. */
static int reserve_base(pk_sieve *s, size_t count)
{
    if (count <= s->base_cap)
        return 0;
    uint32_t *base = realloc(s->base, count * sizeof *base);
    if (!base)
        return -1;
    s->base = base;
    uint64_t *next = realloc(s->next_mult, count * sizeof *next);
    if (!next)
        return -1;
    s->next_mult = next;
    s->base_cap = count;
    return 0;
}

/* More than the count of primes up to x (x / ln x * 1.2551 bounds it, and
   ln x >= (bits - 1) ln 2), so growing to x reallocates once. */
static size_t primes_up_to_bound(uint64_t x)
{
    unsigned bits = 64u - (unsigned)__builtin_clzll(x | 1);
    return (size_t)(x / 1000u * 1811u / (bits > 1 ? bits - 1 : 1)) + 8192u;
}

static int ensure_segment(pk_sieve *s)
{
    if (!s->seg)
        s->seg = malloc(PK_SIEVE_SPAN / 2 + 1);
    return s->seg ? 0 : -1;
}

/* Append the odd primes of (base_limit, limit] to base (limit < 2^32,
   limit - base_limit <= PK_SIEVE_SPAN, and limit <= 65536 on the first
   call), marking with the base primes already held. New primes get their
   multiple for seg_lo when every older one has it. */
static int extend_base(pk_sieve *s, uint64_t limit)
{
    if (ensure_segment(s) != 0)
        return -1;
    uint64_t lo = (s->base_limit < 3 ? 3 : s->base_limit + 1) | 1; /* seg[i] stands for lo + 2i */
    if (lo > limit) {
        s->base_limit = limit;
        return 0;
    }
    size_t slots = (size_t)((limit - lo) / 2) + 1;
    memset(s->seg, 0, slots);
    if (s->base_limit < PK_SIEVE_BASE_MIN) {
        for (uint64_t p = 3; p * p <= limit; p += 2)
            for (uint64_t m = first_multiple(p, lo); m <= limit; m += 2 * p)
                s->seg[(m - lo) / 2] = 1; /* composite p are harmless here */
    } else {
        for (size_t i = 0; i < s->base_count && (uint64_t)s->base[i] * s->base[i] <= limit; i++)
            for (uint64_t m = first_multiple(s->base[i], lo), p = s->base[i]; m <= limit; m += 2 * p)
                s->seg[(m - lo) / 2] = 1;
    }
    size_t fresh = 0;
    for (size_t i = 0; i < slots; i++)
        fresh += !s->seg[i];
    if (reserve_base(s, s->base_count + fresh) != 0)
        return -1;
    int current = s->seg_lo != PK_U64_MAX && s->aligned == s->base_count;
    for (size_t i = 0; i < slots; i++) {
        if (s->seg[i])
            continue;
        uint64_t p = lo + 2 * (uint64_t)i;
        s->base[s->base_count] = (uint32_t)p;
        s->next_mult[s->base_count] = current ? first_multiple(p, s->seg_lo) : 0;
        s->base_count++;
    }
    if (current)
        s->aligned = s->base_count;
    s->base_limit = limit;
    return 0;
}

int pk_sieve_prepare(pk_sieve *s, uint64_t lo, uint64_t hi, int (*poll)(void *), void *ctx)
{
    if (hi <= lo)
        return 0;
    uint64_t need = pk_isqrt_u64(hi - 1);
    if (need > s->base_limit) {
        /* Some headroom, so that the base grows in few steps as segments advance. */
        uint64_t want = need < PK_SIEVE_BASE_MIN ? PK_SIEVE_BASE_MIN : need + need / 8;
        if (want > UINT64_C(0xFFFFFFFF))
            want = UINT64_C(0xFFFFFFFF);
        if (reserve_base(s, primes_up_to_bound(want)) != 0)
            return -1;
        while (s->base_limit < want) {
            uint64_t step = s->base_limit < PK_SIEVE_BASE_MIN ? PK_SIEVE_BASE_MIN : s->base_limit + PK_SIEVE_SPAN;
            if (extend_base(s, step < want ? step : want) != 0)
                return -1;
            if (s->base_limit < want && poll && poll(ctx))
                return 1;
        }
    }
    uint64_t even_lo = lo & ~UINT64_C(1);
    if (s->seg_lo != even_lo) {
        s->seg_lo = even_lo;
        s->aligned = 0;
    }
    while (s->aligned < s->base_count) {
        size_t end = s->base_count - s->aligned > PK_SIEVE_ALIGN_CHUNK ? s->aligned + PK_SIEVE_ALIGN_CHUNK
                                                                       : s->base_count;
        for (size_t i = s->aligned; i < end; i++)
            s->next_mult[i] = first_multiple(s->base[i], even_lo);
        s->aligned = end;
        if (s->aligned < s->base_count && poll && poll(ctx))
            return 1;
    }
    return 0;
}

long pk_sieve_primes(pk_sieve *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    if (hi <= lo)
        return 0;
    if (pk_sieve_prepare(s, lo, hi, NULL, NULL) != 0 || ensure_segment(s) != 0)
        return -1;
    long count = 0;
    if (lo <= 2 && hi > 2)
        out[count++] = 2;
    uint64_t even_lo = lo & ~UINT64_C(1);
    uint64_t top = hi - 1;
    /* seg[i] stands for even_lo + 2i + 1. */
    size_t slots = (size_t)((hi - even_lo) / 2);
    memset(s->seg, 0, slots);
    uint64_t end = even_lo + 2 * (uint64_t)slots; /* exclusive bound of marked odds */
    for (size_t i = 0; i < s->base_count; i++) {
        uint64_t p = s->base[i];
        uint64_t m = s->next_mult[i];
        if (p * p > top)
            break; /* no multiple here; next_mult (>= p*p) stays valid */
        while (m < end) {
            s->seg[(m - even_lo) / 2] = 1;
            if (__builtin_add_overflow(m, 2 * p, &m))
                m = PK_U64_MAX; /* no further multiple below 2^64 */
        }
        s->next_mult[i] = m;
    }
    for (size_t i = 0; i < slots; i++) {
        uint64_t v = even_lo + 2 * (uint64_t)i + 1;
        if (!s->seg[i] && v >= lo && v > 1)
            out[count++] = v;
    }
    s->seg_lo = end;
    return count;
}
