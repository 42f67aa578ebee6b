/*
 * range/checkpoint.c — a range handle's position as text:
 *
 *   primekit-range 1
 *   first <u64>
 *   last <u64>
 *   done <u64: numbers delivered, at most last - first + 1>
 *   checksum <16 lower-case hex digits: FNV-1a 64 of every byte before this line>
 *
 * Lines end in "\n"; every field is required, in this order, canonical
 * decimal. Restoring checks the checksum first, then the syntax, then the
 * state; the sieve is set up again from first + done (the limit is a
 * function of first and last alone).
 */
#include <stdio.h>
#include <string.h>

#include "range/range.h"
#include "pk_internal.h"

#define PK_RANGE_MAGIC "primekit-range "
#define PK_RANGE_VERSION 1

static size_t render(const pk_range *r, char *out, size_t cap)
{
    char body[160];
    int n = snprintf(body, sizeof body, "%s%d\nfirst %llu\nlast %llu\ndone %llu\n", PK_RANGE_MAGIC,
                     PK_RANGE_VERSION, (unsigned long long)r->first, (unsigned long long)r->last,
                     (unsigned long long)r->done);
    int m = snprintf(body + n, sizeof body - (size_t)n, "checksum %016llx\n",
                     (unsigned long long)pk_fnv(body, (size_t)n));
    size_t total = (size_t)n + (size_t)m;
    if (cap > total)
        memcpy(out, body, total + 1);
    return total;
}

int pk_range_checkpoint(const pk_range *r, char *buf, size_t cap, size_t *len)
{
    if (!r)
        return PK_E_ARG;
    char text[160];
    size_t n = render(r, text, sizeof text);
    return pk_emit(text, n, buf, cap, len);
}

/* "key <canonical u64>\n" at *p; moves *p past it. */
static int field(const char **p, const char *end, const char *key, uint64_t *out)
{
    size_t k = strlen(key);
    const char *s = *p;
    if ((size_t)(end - s) < k + 2 || memcmp(s, key, k) != 0 || s[k] != ' ')
        return PK_E_CHECKPOINT;
    const char *v = s + k + 1;
    const char *nl = memchr(v, '\n', (size_t)(end - v));
    if (!nl)
        return PK_E_CHECKPOINT;
    size_t n = (size_t)(nl - v);
    if (n == 0 || n > 20 || !pk_is_canonical_decimal(v, n))
        return PK_E_CHECKPOINT;
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t d = (uint64_t)(v[i] - '0');
        if (x > (UINT64_MAX - d) / 10)
            return PK_E_CHECKPOINT;
        x = x * 10 + d;
    }
    *out = x;
    *p = nl + 1;
    return PK_OK;
}

int pk_range_restore(const char *text, size_t length, pk_range **out)
{
    if (!out)
        return PK_E_ARG;
    *out = NULL;
    if (!text)
        return PK_E_ARG;
    const char *end = text + length;
    size_t mlen = strlen(PK_RANGE_MAGIC);
    if (length < mlen || memcmp(text, PK_RANGE_MAGIC, mlen) != 0)
        return PK_E_CHECKPOINT;
    const char *nl = memchr(text + mlen, '\n', length - mlen);
    if (!nl)
        return PK_E_CHECKPOINT;
    const char *ver = text + mlen;
    size_t vlen = (size_t)(nl - ver);
    if (vlen == 0 || vlen > 9 || !pk_is_canonical_decimal(ver, vlen))
        return PK_E_CHECKPOINT;
    uint64_t version = 0;
    for (size_t i = 0; i < vlen; i++)
        version = version * 10 + (uint64_t)(ver[i] - '0');

    /* the checksum: the last line */
    size_t last = pk_checkpoint_checked_body(text, length);
    if (last == 0)
        return PK_E_CHECKPOINT;
    if (version != PK_RANGE_VERSION)
        return PK_E_CHECKPOINT_VERSION;

    const char *p = nl + 1, *body_end = text + last;
    uint64_t first, lastn, done;
    if (field(&p, body_end, "first", &first) != PK_OK || field(&p, body_end, "last", &lastn) != PK_OK ||
        field(&p, body_end, "done", &done) != PK_OK || p != body_end)
        return PK_E_CHECKPOINT;
    (void)end;
    if (first < 2 || first > lastn || done > lastn - first + 1)
        return PK_E_CHECKPOINT_STATE;
    pk_range *r;
    int rc = pk_range_create(first, lastn, &r);
    if (rc != PK_OK)
        return rc;
    pk_range_seek(r, done);
    *out = r;
    return PK_OK;
}

int pk_range_seek(pk_range *r, uint64_t done)
{
    if (!r)
        return PK_E_ARG;
    if (done > r->last - r->first + 1)
        return PK_E_OPTIONS;
    r->done = done;
    pk_range_reset(r);
    return PK_OK;
}
