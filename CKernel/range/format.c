/*
 * range/format.c — a delivered segment as the lines the coreutils factor
 * program prints ("n: p p q\n"), written straight into the caller's buffer.
 *
 * The numbers of a segment are consecutive, so n's decimal is kept in a
 * small buffer and incremented in place; primes are converted two digits at
 * a time from a table. A line goes straight to the caller's buffer when
 * PK_RANGE_LINE_MAX bytes are left, through a local line otherwise.
 */
#include <string.h>

#include "range/range.h"

static const char pk_digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* " " and v's decimal at out; returns the bytes written. */
static inline size_t put_word(char *out, uint64_t v)
{
    char tmp[24];
    char *e = tmp + sizeof tmp, *s = e;
    while (v >= 100) {
        unsigned d = (unsigned)(v % 100) * 2;
        v /= 100;
        s -= 2;
        s[0] = pk_digit_pairs[d];
        s[1] = pk_digit_pairs[d + 1];
    }
    if (v >= 10) {
        s -= 2;
        s[0] = pk_digit_pairs[v * 2];
        s[1] = pk_digit_pairs[v * 2 + 1];
    } else {
        *--s = (char)('0' + v);
    }
    *--s = ' ';
    size_t n = (size_t)(e - s);
    memcpy(out, s, n);
    return n;
}

/* " p" repeated e times. */
static inline size_t put_factor(char *out, uint64_t p, unsigned e)
{
    size_t w = put_word(out, p);
    size_t n = w;
    for (unsigned k = 1; k < e; k++, n += w)
        memcpy(out + n, out, w);
    return n;
}

/* The decimal of a number, kept right-aligned in d[PK_NUM - len .. PK_NUM). */
#define PK_NUM 24
typedef struct numtext {
    char d[PK_NUM];
    size_t len;
} numtext;

static void num_set(numtext *t, uint64_t v)
{
    char *s = t->d + PK_NUM;
    do {
        *--s = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    t->len = (size_t)(t->d + PK_NUM - s);
}

static inline void num_inc(numtext *t)
{
    char *p = t->d + PK_NUM - 1;
    while (*p == '9') {
        *p-- = '0';
        if (p < t->d + PK_NUM - t->len) {
            *p = '1';
            t->len++;
            return;
        }
    }
    (*p)++;
}

static inline size_t put_line(const pk_range *r, size_t i, const numtext *t, char *out)
{
    char *o = out;
    memcpy(o, t->d + PK_NUM - t->len, t->len);
    o += t->len;
    *o++ = ':';
    const uint32_t *fp = r->fp + i * PK_RANGE_MAXF;
    const uint8_t *fe = r->fe + i * PK_RANGE_MAXF;
    for (unsigned k = 0, nf = r->nf[i]; k < nf; k++)
        o += put_factor(o, fp[k], fe[k]);
    const uint64_t *bp = r->bp + i * PK_RANGE_MAXBIG;
    const uint8_t *be = r->be + i * PK_RANGE_MAXBIG;
    for (unsigned k = 0, nb = r->nb[i]; k < nb; k++)
        o += put_factor(o, bp[k], be[k]);
    *o++ = '\n';
    return (size_t)(o - out);
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
        if (cap - used >= PK_RANGE_LINE_MAX) {
            used += put_line(r, i, &t, buf + used);
        } else {
            char line[PK_RANGE_LINE_MAX];
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
