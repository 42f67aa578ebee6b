/*
 * text.c — decimal parsing and the caller-buffer convention.
 */
#include <stdlib.h>
#include <string.h>

#include "pk_internal.h"

int pk_is_canonical_decimal(const char *s, size_t len)
{
    if (!s || len == 0)
        return 0;
    if (s[0] == '0')
        return len == 1;
    for (size_t i = 0; i < len; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return 1;
}

int pk_parse_u64_saturating(const char *s, size_t len, uint64_t *out)
{
    if (!pk_is_canonical_decimal(s, len))
        return PK_E_PARSE;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        uint64_t digit = (uint64_t)(s[i] - '0');
        if (v > (PK_U64_MAX - digit) / 10) {
            *out = PK_U64_MAX;
            return PK_OK;
        }
        v = v * 10 + digit;
    }
    *out = v;
    return PK_OK;
}

int pk_emit(const char *s, size_t n, char *buf, size_t cap, size_t *len)
{
    if (len)
        *len = n;
    if (!buf || cap <= n)
        return PK_E_BUFFER;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return PK_OK;
}

int pk_emit_mpz(const mpz_t v, char *buf, size_t cap, size_t *len)
{
    /* mpz_sizeinbase may overstate by one: write to scratch when it could matter. */
    size_t guess = mpz_sizeinbase(v, 10);
    if (buf && cap > guess) {
        mpz_get_str(buf, 10, v);
        size_t n = strlen(buf);
        if (len)
            *len = n;
        return PK_OK;
    }
    char *tmp = malloc(guess + 2);
    if (!tmp)
        return PK_E_NOMEM;
    mpz_get_str(tmp, 10, v);
    int rc = pk_emit(tmp, strlen(tmp), buf, cap, len);
    free(tmp);
    return rc;
}

size_t pk_decimal_length(const mpz_t v)
{
    size_t k = mpz_sizeinbase(v, 10); /* exact or one too many */
    if (k <= 1)
        return 1;
    mpz_t p;
    mpz_init(p);
    mpz_ui_pow_ui(p, 10, (unsigned long)(k - 1));
    int below = mpz_cmpabs(v, p) < 0;
    mpz_clear(p);
    return below ? k - 1 : k;
}
