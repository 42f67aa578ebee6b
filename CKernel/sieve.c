/*
 * sieve.c — a resumable segmented sieve of Eratosthenes over odd numbers.
 *
 * Base primes are grown on demand up to sqrt of the segment being sieved, so
 * the memory used follows how far a job has actually gone. Each base prime
 * remembers its next odd multiple, so consecutive segments cost no division.
 */
#include <stdlib.h>
#include <string.h>

#include "pk_internal.h"

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

/* Make base hold every odd prime <= limit (limit < 2^32). */
static int grow_base(pk_sieve *s, uint64_t limit)
{
    if (limit <= s->base_limit)
        return 0;
    /* Simple sieve of the odd numbers up to limit; base primes are few. */
    size_t n = (size_t)(limit / 2) + 1; /* index i stands for 2i+1 */
    uint8_t *comp = calloc(n, 1);
    if (!comp)
        return -1;
    for (size_t i = 1; (2 * i + 1) * (2 * i + 1) <= limit; i++) {
        if (comp[i])
            continue;
        uint64_t p = 2 * i + 1;
        for (uint64_t m = p * p; m <= limit; m += 2 * p)
            comp[m / 2] = 1;
    }
    size_t count = 0;
    for (size_t i = 1; i < n; i++)
        count += !comp[i];
    uint32_t *base = malloc(count * sizeof *base);
    uint64_t *next = malloc(count * sizeof *next);
    if (!base || !next) {
        free(comp);
        free(base);
        free(next);
        return -1;
    }
    size_t k = 0;
    for (size_t i = 1; i < n; i++)
        if (!comp[i])
            base[k++] = (uint32_t)(2 * i + 1);
    free(comp);
    free(s->base);
    free(s->next_mult);
    s->base = base;
    s->next_mult = next;
    s->base_count = count;
    s->base_cap = count;
    s->base_limit = limit;
    s->seg_lo = PK_U64_MAX; /* offsets must be recomputed */
    return 0;
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

long pk_sieve_primes(pk_sieve *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    if (hi <= lo)
        return 0;
    long count = 0;
    if (lo <= 2 && hi > 2)
        out[count++] = 2;
    uint64_t even_lo = lo & ~UINT64_C(1);
    uint64_t top = hi - 1;
    uint64_t need = pk_isqrt_u64(top);
    /* Grow the base with headroom so it is rebuilt rarely. */
    if (need > s->base_limit) {
        uint64_t want = need < 65536 ? 65536 : need + need / 2;
        if (want > UINT64_C(0xFFFFFFFF))
            want = UINT64_C(0xFFFFFFFF);
        if (grow_base(s, want) != 0)
            return -1;
    }
    if (!s->seg) {
        s->seg = malloc(PK_SIEVE_SPAN / 2 + 1);
        if (!s->seg)
            return -1;
    }
    if (s->seg_lo != even_lo) {
        for (size_t i = 0; i < s->base_count; i++)
            s->next_mult[i] = first_multiple(s->base[i], even_lo);
    }
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
