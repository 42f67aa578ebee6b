/*
 * job/codec.c — the checkpoint text codec's shared parts (see codec.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/codec.h"

void pk_sb_reserve(pk_sbuf *b, size_t more)
{
    if (b->failed || b->len + more + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + more + 1)
        cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s) {
        b->failed = 1;
        return;
    }
    b->s = s;
    b->cap = cap;
}

void pk_sb_bytes(pk_sbuf *b, const char *t, size_t n)
{
    pk_sb_reserve(b, n);
    if (b->failed)
        return;
    memcpy(b->s + b->len, t, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void pk_sb_text(pk_sbuf *b, const char *t)
{
    pk_sb_bytes(b, t, strlen(t));
}

void pk_sb_u64(pk_sbuf *b, const char *key, uint64_t v)
{
    char line[64];
    snprintf(line, sizeof line, "%s %llu\n", key, (unsigned long long)v);
    pk_sb_text(b, line);
}

void pk_sb_u64_word(pk_sbuf *b, uint64_t v)
{
    char w[32];
    snprintf(w, sizeof w, " %llu", (unsigned long long)v);
    pk_sb_text(b, w);
}

void pk_sb_mpz(pk_sbuf *b, const mpz_t v)
{
    pk_sb_reserve(b, mpz_sizeinbase(v, 10) + 1);
    if (b->failed)
        return;
    mpz_get_str(b->s + b->len, 10, v);
    b->len += strlen(b->s + b->len);
}

int pk_field(pk_reader *r, const char *key, const char **val, size_t *vlen)
{
    size_t k = strlen(key);
    if ((size_t)(r->end - r->p) < k + 1 || memcmp(r->p, key, k) != 0 || r->p[k] != ' ')
        return PK_E_CHECKPOINT;
    const char *v = r->p + k + 1;
    const char *nl = memchr(v, '\n', (size_t)(r->end - v));
    if (!nl)
        return PK_E_CHECKPOINT;
    *val = v;
    *vlen = (size_t)(nl - v);
    r->p = nl + 1;
    return PK_OK;
}

int pk_word_u64(const char *w, size_t n, uint64_t *out)
{
    uint64_t x;
    if (!pk_is_canonical_decimal(w, n) || n > 20 || pk_parse_u64_saturating(w, n, &x) != PK_OK ||
        x == PK_U64_MAX)
        return PK_E_CHECKPOINT;
    *out = x;
    return PK_OK;
}

int pk_field_u64(pk_reader *r, const char *key, uint64_t *out)
{
    const char *v;
    size_t n;
    int rc = pk_field(r, key, &v, &n);
    return rc != PK_OK ? rc : pk_word_u64(v, n, out);
}

int pk_next_word(const char **v, const char *end, const char **w, size_t *wlen)
{
    if (*v >= end)
        return PK_E_CHECKPOINT;
    const char *sp = memchr(*v, ' ', (size_t)(end - *v));
    const char *stop = sp ? sp : end;
    if (stop == *v)
        return PK_E_CHECKPOINT;
    *w = *v;
    *wlen = (size_t)(stop - *v);
    *v = sp ? sp + 1 : end;
    if (sp && *v == end)
        return PK_E_CHECKPOINT; /* a trailing space */
    return PK_OK;
}

int pk_parse_u64_list(const char *v, size_t n, uint64_t *out, int count)
{
    const char *end = v + n;
    for (int i = 0; i < count; i++) {
        const char *w;
        size_t wl;
        if (pk_next_word(&v, end, &w, &wl) != PK_OK || pk_word_u64(w, wl, &out[i]) != PK_OK)
            return PK_E_CHECKPOINT;
    }
    return v == end ? PK_OK : PK_E_CHECKPOINT;
}

int pk_set_mpz(mpz_t z, const char *v, size_t n)
{
    if (!pk_is_canonical_decimal(v, n))
        return PK_E_CHECKPOINT;
    char *tmp = malloc(n + 1);
    if (!tmp)
        return PK_E_NOMEM;
    memcpy(tmp, v, n);
    tmp[n] = '\0';
    int ok = mpz_set_str(z, tmp, 10) == 0;
    free(tmp);
    return ok ? PK_OK : PK_E_CHECKPOINT;
}
