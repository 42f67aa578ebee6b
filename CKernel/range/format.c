/*
 * range/format.c — a delivered segment as the lines the coreutils factor
 * program prints ("n: p p q\n"), written straight into the caller's buffer.
 *
 * The numbers of a segment are consecutive, so n's decimal is kept in a
 * small buffer and incremented in place; primes are converted two digits at
 * a time from a table, and odd primes below PK_RANGE_SEG are copied as one
 * 8-byte word from a per-handle table. A line goes straight to the caller's
 * buffer when PK_RANGE_LINE_MAX + 32 bytes are left (the fast paths write a
 * few bytes ahead), through a local line otherwise.
 */
#include <string.h>

#include "range/range.h"

static const char pk_digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Decimal digits of v >= 1. */
static inline unsigned ndigits(uint64_t v)
{
    static const uint64_t pow10[20] = {UINT64_C(1), UINT64_C(10), UINT64_C(100), UINT64_C(1000),
        UINT64_C(10000), UINT64_C(100000), UINT64_C(1000000), UINT64_C(10000000), UINT64_C(100000000),
        UINT64_C(1000000000), UINT64_C(10000000000), UINT64_C(100000000000), UINT64_C(1000000000000),
        UINT64_C(10000000000000), UINT64_C(100000000000000), UINT64_C(1000000000000000),
        UINT64_C(10000000000000000), UINT64_C(100000000000000000), UINT64_C(1000000000000000000),
        UINT64_C(10000000000000000000)};
    unsigned t = (unsigned)((64 - __builtin_clzll(v | 1)) * 1233) >> 12;
    return t + 1 - (v < pow10[t]);
}

/* " " and v's decimal at out (v >= 1); returns the bytes written. */
static inline size_t put_word(char *out, uint64_t v)
{
    size_t n = ndigits(v);
    char *s = out + 1 + n;
    out[0] = ' ';
    while (v >= UINT64_C(4294967296)) { /* eight digits at a time, then 32-bit arithmetic: cheaper products */
        uint32_t low = (uint32_t)(v % 100000000u);
        v /= 100000000u;
        for (int k = 0; k < 4; k++) {
            s -= 2;
            memcpy(s, pk_digit_pairs + (low % 100) * 2, 2);
            low /= 100;
        }
    }
    uint32_t u = (uint32_t)v;
    while (u >= 100) {
        uint32_t d = (u % 100) * 2;
        u /= 100;
        s -= 2;
        memcpy(s, pk_digit_pairs + d, 2);
    }
    if (u >= 10)
        memcpy(s - 2, pk_digit_pairs + u * 2, 2);
    else
        s[-1] = (char)('0' + u);
    return n + 1;
}

/* " p" repeated e times. Writes up to 8 bytes past the end for small primes (the table's length byte
   lands there: later text overwrites it). */
static inline char *put_factor(char *o, const uint64_t *small, uint64_t p, unsigned e)
{
    if (p < PK_RANGE_SEG) {
        const uint64_t *slot = &small[(p >> 1) & (0 - (p & 1))]; /* 2 sits in slot 0 */
        uint64_t w;
        memcpy(&w, slot, 8);
        size_t l = ((const unsigned char *)slot)[7]; /* the text's length, kept in its last byte */
        do {
            memcpy(o, &w, 8);
            o += l;
        } while (--e);
        return o;
    }
    size_t w = put_word(o, p);
    char *first = o;
    o += w;
    while (--e) {
        memmove(o, first, w);
        o += w;
    }
    return o;
}

/* The decimal of a number and ':' in d[0 .. len] (d[len] == ':'). */
typedef struct numtext {
    char d[32];
    size_t len;
} numtext;

static void num_set(numtext *t, uint64_t v)
{
    memset(t->d, 0, sizeof t->d);
    t->len = put_word(t->d, v) - 1;
    memmove(t->d, t->d + 1, t->len);
    t->d[t->len] = ':';
}

static inline void num_inc(numtext *t)
{
    char *p = t->d + t->len - 1;
    while (*p == '9') {
        *p = '0';
        if (p == t->d) {
            t->d[0] = '1';
            t->d[t->len] = '0';
            t->len++;
            t->d[t->len] = ':';
            return;
        }
        p--;
    }
    (*p)++;
}

/* Writes up to PK_RANGE_LINE_MAX + 32 bytes at out; returns the line's length. */
static inline size_t put_line(const pk_range *r, size_t i, const numtext *t, char *out)
{
    char *o = out;
    memcpy(o, t->d, 32);
    o += t->len + 1;
    const uint32_t *fp = r->fp + i * PK_RANGE_MAXF;
    const uint8_t *fe = r->fe + i * PK_RANGE_MAXF;
    for (unsigned k = 0, nf = r->nf[i]; k < nf; k++)
        o = put_factor(o, r->small_text, fp[k], fe[k]);
    const uint64_t *bp = r->bp + i * PK_RANGE_MAXBIG;
    const uint8_t *be = r->be + i * PK_RANGE_MAXBIG;
    for (unsigned k = 0, nb = r->nb[i]; k < nb; k++)
        o = put_factor(o, r->small_text, bp[k], be[k]);
    *o++ = '\n';
    return (size_t)(o - out);
}

void pk_range_small_text(uint64_t *table)
{
    for (uint64_t p = 1; p < PK_RANGE_SEG; p += 2) {
        char w[8] = {0};
        w[7] = (char)put_word(w, p == 1 ? 2 : p); /* slot 0 (1 is never a factor) holds 2 */
        memcpy(&table[p >> 1], w, 8);
    }
}

int pk_range_format(const pk_range *r, size_t index, char *buf, size_t cap, size_t *len, size_t *lines)
{
    if (len)
        *len = 0;
    if (lines)
        *lines = 0;
    if (!r || (!buf && cap))
        return PK_E_ARG;
    if (index > r->seg_count)
        return PK_E_INDEX;
    numtext t;
    if (index < r->seg_count)
        num_set(&t, r->seg_first + index);
    size_t used = 0, i = index;
    while (i < r->seg_count) {
        if (cap - used >= PK_RANGE_LINE_MAX + 32) {
            used += put_line(r, i, &t, buf + used);
        } else {
            char line[PK_RANGE_LINE_MAX + 32];
            size_t n = put_line(r, i, &t, line);
            if (n > cap - used)
                break;
            memcpy(buf + used, line, n);
            used += n;
        }
        i++;
        if (i < r->seg_count)
            num_inc(&t);
    }
    if (len)
        *len = used;
    if (lines)
        *lines = i - index;
    if (i == r->seg_count)
        return PK_OK;
    return i == index ? PK_E_BUFFER : PK_MORE;
}
