/*
 * range/sieve.c — the segmented factor sieve of the range unit (range.h):
 * the sieve limit, the set-up of the small-prime table and the buckets, and
 * one segment's sieve and finish.
 */
#include <stdlib.h>
#include <string.h>

#include "range/range.h"
#include "factor/word.h"

/*
 * The sieve limit. Sieving to sqrt(last) costs about one number of the
 * prime sieve plus one 64-bit remainder per prime up to it, whatever the
 * range's length; stopping at a lower limit L costs a primality test for
 * most numbers (the cofactor then exceeds (L+1)^2) and a word-size split for
 * the few whose cofactor is a product of two primes above L. Measured
 * (Tests/Benchmarks/kernel, pk-range-bench --limit): near 10^18 and 2^64,
 * 10^5 numbers take about the same time for limits from 2^24 to 2^27 and
 * twice as long at 2^20, so the limit is 2^10 times the range's length,
 * never under 2^16 and never above 2^26 (the buckets then hold 3.9 million
 * primes, 31 MB).
 */
uint64_t pk_range_choose_limit(uint64_t first, uint64_t last)
{
    uint64_t root = pk_word_isqrt64(last);
    uint64_t count = last - first + 1;
    uint64_t want = count > PK_RANGE_MAX_LIMIT ? PK_RANGE_MAX_LIMIT : count << 10;
    if (want > PK_RANGE_MAX_LIMIT)
        want = PK_RANGE_MAX_LIMIT;
    if (want < PK_RANGE_MIN_LIMIT)
        want = PK_RANGE_MIN_LIMIT;
    return root < want ? root : want;
}

/* p^-1 mod 2^64 for odd p (Newton's iteration, 5 steps from 3 good bits). */
static uint64_t inverse64(uint64_t p)
{
    uint64_t x = p;            /* p * p == 1 mod 8 */
    for (int i = 0; i < 5; i++)
        x *= 2 - p * x;
    return x;
}

int pk_range_tables_alloc(pk_range *r)
{
    /* odd primes up to sqrt(limit) (below 2^16) by a plain sieve */
    uint32_t root = (uint32_t)pk_word_isqrt64(r->limit);
    uint8_t *mark = calloc((size_t)root + 1, 1);
    r->boot = malloc(sizeof *r->boot * (root / 2 + 2));
    r->pbuf = malloc(PK_RANGE_SETUP_SPAN / 2);
    r->wheel = malloc(PK_RANGE_WHEEL);
    r->nbuckets = (uint32_t)(r->limit / PK_RANGE_SEG + 2);
    r->head = malloc(sizeof *r->head * r->nbuckets);
    r->cof = malloc(sizeof *r->cof * PK_RANGE_SEG);
    r->nf = malloc(PK_RANGE_SEG);
    r->fp = malloc(sizeof *r->fp * PK_RANGE_SEG * PK_RANGE_MAXF);
    r->fe = malloc((size_t)PK_RANGE_SEG * PK_RANGE_MAXF);
    r->nb = malloc(PK_RANGE_SEG);
    r->bp = malloc(sizeof *r->bp * PK_RANGE_SEG * PK_RANGE_MAXBIG);
    r->be = malloc((size_t)PK_RANGE_SEG * PK_RANGE_MAXBIG);
    r->small_text = malloc(sizeof *r->small_text * (PK_RANGE_SEG / 2));
    if (!mark || !r->boot || !r->pbuf || !r->wheel || !r->head || !r->cof || !r->nf || !r->fp || !r->fe || !r->nb ||
        !r->bp || !r->be || !r->small_text) {
        free(mark);
        return PK_E_NOMEM;
    }
    r->nboot = 0;
    for (uint32_t i = 3; i <= root; i += 2) {
        if (mark[i])
            continue;
        r->boot[r->nboot++] = i;
        for (uint64_t j = (uint64_t)i * i; j <= root; j += 2 * i)
            mark[j] = 1;
    }
    free(mark);
    for (uint32_t j = 0; j < PK_RANGE_WHEEL; j++) {
        uint32_t x = 2 * j + 1;
        r->wheel[j] = x % 3 && x % 5 && x % 7 && x % 11 && x % 13;
    }
    pk_range_small_text(r->small_text);
    pk_range_reset(r);
    return PK_OK;
}

void pk_range_reset(pk_range *r)
{
    r->ready = 0;
    r->base = r->first + r->done;
    r->setup_at = 3;
    r->nsmall = 0;
    r->seg_index = 0;
    r->seg_count = 0;
    r->pending = 0;
    for (uint32_t k = 0; k < r->nbuckets; k++)
        r->head[k] = PK_RANGE_NIL;
    /* every chunk back on the free list */
    r->freechunks = PK_RANGE_NIL;
    r->nfree = r->nchunks;
    for (uint32_t c = r->nchunks; c-- > 0;) {
        r->chunks[c].next = r->freechunks;
        r->freechunks = c;
    }
}

/* Room for `more` chunks on the free list; PK_E_NOMEM changes nothing. */
static int reserve_chunks(pk_range *r, uint32_t more)
{
    if (r->nfree >= more)
        return PK_OK;
    uint32_t need = r->nchunks + (more - r->nfree);
    if (need > r->capchunks) {
        uint32_t cap = r->capchunks ? r->capchunks : 16;
        while (cap < need)
            cap *= 2;
        pk_rchunk *c = realloc(r->chunks, sizeof *c * cap);
        if (!c)
            return PK_E_NOMEM;
        r->chunks = c;
        r->capchunks = cap;
    }
    while (r->nchunks < need) {
        r->chunks[r->nchunks].next = r->freechunks;
        r->freechunks = r->nchunks++;
        r->nfree++;
    }
    return PK_OK;
}

/* At most how many buckets `pushes` pushes can reach: no more than the buckets, nor the segments left. */
static uint32_t targets(const pk_range *r, uint64_t pushes)
{
    uint64_t segs = (r->last - r->base) / PK_RANGE_SEG + 1;
    uint64_t t = pushes < r->nbuckets ? pushes : r->nbuckets;
    return (uint32_t)(t < segs ? t : segs);
}

/* Append to bucket slot k. The caller reserved a chunk for every push that may need one. */
static inline void push(pk_range *r, uint32_t k, uint32_t p, uint32_t off)
{
    uint32_t h = r->head[k];
    if (h == PK_RANGE_NIL || r->chunks[h].count == PK_RANGE_CHUNK) {
        uint32_t c = r->freechunks;
        r->freechunks = r->chunks[c].next;
        r->nfree--;
        r->chunks[c].next = h;
        r->chunks[c].count = 0;
        r->head[k] = h = c;
    }
    pk_rchunk *ch = &r->chunks[h];
    ch->e[ch->count].p = p;
    ch->e[ch->count].off = off;
    ch->count++;
}

/* The index of the lowest-addressed nonzero byte of the eight loaded into *bits (not 0), which is cleared. */
static inline unsigned take_byte(uint64_t *bits)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    unsigned at = (unsigned)__builtin_clzll(*bits) >> 3;
    *bits &= ~(UINT64_C(0xff) << (56 - 8 * at));
#else
    unsigned at = (unsigned)__builtin_ctzll(*bits) >> 3;
    *bits &= *bits - 1; /* the byte holds 1: its only bit */
#endif
    return at;
}

int pk_range_setup_chunk(pk_range *r, uint64_t *units)
{
    uint64_t lo = r->setup_at; /* odd */
    uint64_t hi = lo + PK_RANGE_SETUP_SPAN - 1;
    if (hi > r->limit)
        hi = r->limit;
    *units = 0;
    if (lo > hi) {
        r->ready = 1;
        return PK_OK;
    }
    /* a chunk adds at most one bucket entry per odd number, and may open one chunk per bucket */
    uint32_t odd = (uint32_t)((hi - lo) / 2 + 1);
    if (reserve_chunks(r, odd / PK_RANGE_CHUNK + 1 + targets(r, odd)) != PK_OK)
        return PK_E_NOMEM;

    uint8_t *b = r->pbuf; /* b[i] stands for lo + 2i */
    /* the multiples of 3 to 13 by copying their pattern (period PK_RANGE_WHEEL in i), then the rest */
    uint32_t phase = (uint32_t)(((lo - 1) / 2) % PK_RANGE_WHEEL);
    for (uint32_t i = 0; i < odd;) {
        uint32_t n = PK_RANGE_WHEEL - phase;
        if (n > odd - i)
            n = odd - i;
        memcpy(b + i, r->wheel + phase, n);
        i += n;
        phase = 0;
    }
    for (uint64_t p = 3; p <= 13 && p <= hi; p += 2)
        if (p >= lo && p != 9)
            b[(p - lo) / 2] = 1; /* the wheel's primes themselves */
    for (size_t j = 0; j < r->nboot; j++) {
        uint64_t p = r->boot[j];
        if (p <= 13)
            continue;
        if (p * p > hi)
            break;
        uint64_t m = p * p;
        if (m < lo) {
            m = lo + (p - lo % p) % p;
            if (!(m & 1))
                m += p;
        }
        for (uint64_t i = (m - lo) / 2; i < odd; i += p)
            b[i] = 0;
    }
    uint64_t span = r->last - r->base; /* offsets relative to base go up to this */
    /* the survivors, eight bytes (each 0 or 1) at a time */
    for (uint32_t w = 0; w < odd; w += 8) {
        uint64_t bits = 0;
        memcpy(&bits, b + w, odd - w < 8 ? odd - w : 8);
        while (bits) {
            uint64_t p = lo + 2 * (uint64_t)(w + take_byte(&bits));
            uint64_t rem = r->base % p;
            uint64_t off = rem ? p - rem : 0; /* not a second division */
            if (p <= PK_RANGE_SEG) {
                size_t k = r->nsmall++;
                r->sp[k] = (uint32_t)p;
                r->sinv[k] = inverse64(p);
                r->slim[k] = UINT64_MAX / p;
                r->soff[k] = (uint32_t)off; /* p <= the segment: fits */
            } else if (off <= span) {
                push(r, (uint32_t)((off / PK_RANGE_SEG) % r->nbuckets), (uint32_t)p, (uint32_t)(off % PK_RANGE_SEG));
            }
        }
    }
    r->setup_at = lo + 2 * (uint64_t)odd;
    *units = hi - lo + 1;
    if (hi >= r->limit)
        r->ready = 1;
    return PK_OK;
}

int pk_range_segment_reserve(pk_range *r)
{
    /* moving a bucket's entries on takes at most one new chunk per CHUNK entries, plus one per
       target bucket whose head is full or missing */
    uint64_t entries = 0;
    for (uint32_t c = r->head[r->seg_index % r->nbuckets]; c != PK_RANGE_NIL; c = r->chunks[c].next)
        entries += r->chunks[c].count;
    uint64_t more = entries / PK_RANGE_CHUNK + 1 + targets(r, entries);
    return reserve_chunks(r, (uint32_t)more);
}

/* Insert prime p with exponent e among number i's sieved primes, ascending. */
static inline void record_sorted(pk_range *r, uint32_t i, uint32_t p, uint8_t e)
{
    uint32_t *fp = r->fp + (size_t)i * PK_RANGE_MAXF;
    uint8_t *fe = r->fe + (size_t)i * PK_RANGE_MAXF;
    unsigned k = r->nf[i]++;
    while (k > 0 && fp[k - 1] > p) {
        fp[k] = fp[k - 1];
        fe[k] = fe[k - 1];
        k--;
    }
    fp[k] = p;
    fe[k] = e;
}

void pk_range_sieve_segment(pk_range *r)
{
    const uint64_t seg_lo = r->base + r->seg_index * PK_RANGE_SEG;
    uint64_t left = r->last - seg_lo;
    const uint32_t len = left >= PK_RANGE_SEG - 1 ? PK_RANGE_SEG : (uint32_t)left + 1;
    uint64_t *cof = r->cof;
    uint8_t *nf = r->nf;

    /* 2: trailing zero bits */
    for (uint32_t i = 0; i < len; i++) {
        uint64_t n = seg_lo + i;
        unsigned z = (unsigned)__builtin_ctzll(n);
        cof[i] = n >> z;
        if (z) {
            r->fp[(size_t)i * PK_RANGE_MAXF] = 2;
            r->fe[(size_t)i * PK_RANGE_MAXF] = (uint8_t)z;
            nf[i] = 1;
        } else {
            nf[i] = 0;
        }
    }

    /* odd primes up to the segment's length: every multiple, exact division by the inverse */
    for (size_t j = 0; j < r->nsmall; j++) {
        const uint32_t p = r->sp[j];
        const uint64_t inv = r->sinv[j], lim = r->slim[j];
        uint32_t off = r->soff[j];
        for (; off < len; off += p) {
            uint64_t c = cof[off] * inv, t;
            unsigned e = 1;
            while ((t = c * inv) <= lim) {
                c = t;
                e++;
            }
            cof[off] = c;
            unsigned k = nf[off]++;
            r->fp[(size_t)off * PK_RANGE_MAXF + k] = p;
            r->fe[(size_t)off * PK_RANGE_MAXF + k] = (uint8_t)e;
        }
        r->soff[j] = off - len;
    }

    /* bucket primes that hit this segment; each moves on to the bucket of its next multiple */
    const uint32_t slot = (uint32_t)(r->seg_index % r->nbuckets);
    const uint64_t span = r->last - r->base;
    const uint64_t seg_rel = r->seg_index * PK_RANGE_SEG;
    uint32_t c = r->head[slot];
    r->head[slot] = PK_RANGE_NIL;
    while (c != PK_RANGE_NIL) {
        pk_rchunk *ch = &r->chunks[c];
        for (uint32_t k = 0; k < ch->count; k++) {
            uint32_t p = ch->e[k].p, off = ch->e[k].off;
            uint64_t q = cof[off] / p;
            unsigned e = 1;
            while (q % p == 0) {
                q /= p;
                e++;
            }
            cof[off] = q;
            record_sorted(r, off, p, (uint8_t)e);
            uint64_t here = seg_rel + off; /* relative to base; at most span */
            if (span - here >= p) {
                uint64_t next = here + p;
                /* the chunk being read is still ours: this push takes a chunk off the free list */
                push(r, (uint32_t)((next / PK_RANGE_SEG) % r->nbuckets), p, (uint32_t)(next % PK_RANGE_SEG));
            }
        }
        uint32_t nx = ch->next;
        ch->next = r->freechunks;
        r->freechunks = c;
        r->nfree++;
        c = nx;
    }

    r->pend_first = seg_lo;
    r->pend_len = len;
    r->pend_at = 0;
    r->pending = 1;
    r->seg_index++;
}

int pk_range_finish(pk_range *r)
{
    /* what is left: 1, a prime, or (below a lowered limit) a product of primes above it */
    const uint64_t *cof = r->cof;
    uint8_t *nb = r->nb;
    uint32_t len = r->pend_len;
    for (uint32_t i = r->pend_at; i < len; i++) {
        if ((i & 255) == 0 && i > r->pend_at && pk_range_take_interrupt(r)) {
            r->pend_at = i;
            return PK_INTERRUPTED;
        }
        uint64_t q = cof[i];
        if (q == 1) {
            nb[i] = 0;
        } else if (q < r->square || pk_word_bpsw64(q)) {
            nb[i] = 1;
            r->bp[(size_t)i * PK_RANGE_MAXBIG] = q;
            r->be[(size_t)i * PK_RANGE_MAXBIG] = 1;
        } else {
            uint64_t pr[15];
            uint8_t ex[15];
            int k = pk_word_factor64(q, pr, ex);
            nb[i] = (uint8_t)k;
            for (int t = 0; t < k && t < PK_RANGE_MAXBIG; t++) {
                r->bp[(size_t)i * PK_RANGE_MAXBIG + t] = pr[t];
                r->be[(size_t)i * PK_RANGE_MAXBIG + t] = ex[t];
            }
        }
    }
    r->pending = 0;
    r->seg_first = r->pend_first;
    r->seg_count = len;
    r->done += len;
    return PK_OK;
}
