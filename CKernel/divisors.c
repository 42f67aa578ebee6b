/*
 * divisors.c — every divisor of a factored number below 2^64, ascending, as
 * decimal text.
 *
 * Divisors are built in order rather than sorted afterwards: multiplying a
 * sorted list by p keeps it sorted, so each power of each prime adds one
 * sorted run that is merged into the list so far. That is linear per power,
 * needs no comparison callback, and (unlike qsort, which allocates a work
 * buffer for larger arrays) touches only the caller's memory. The text is
 * written two digits at a time from a table.
 */
#include <string.h>

#include "pk_internal.h"

size_t pk_divisors_ascending(const uint64_t *primes, const uint64_t *exponents, size_t count,
                             uint64_t *d, uint64_t *run, uint64_t *merged)
{
    size_t have = 1;
    d[0] = 1;
    for (size_t i = 0; i < count; i++) {
        const uint64_t p = primes[i];
        const size_t base = have;  /* the divisors without p: run = base · p^k */
        memcpy(run, d, base * sizeof *d);
        for (uint64_t k = 1; k <= exponents[i]; k++) {
            for (size_t j = 0; j < base; j++)
                run[j] *= p;
            size_t a = 0, b = 0, at = 0;
            while (a < have && b < base)
                merged[at++] = d[a] < run[b] ? d[a++] : run[b++];
            while (a < have)
                merged[at++] = d[a++];
            while (b < base)
                merged[at++] = run[b++];
            memcpy(d, merged, at * sizeof *d);
            have = at;
        }
    }
    return have;
}

static const char two_digits[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

size_t pk_u64_decimal(uint64_t v, char out[20])
{
    char tmp[20];
    char *end = tmp + sizeof tmp, *at = end;
    while (v >= 100) {
        const unsigned r = (unsigned)(v % 100);
        v /= 100;
        at -= 2;
        memcpy(at, two_digits + 2 * r, 2);
    }
    if (v >= 10) {
        at -= 2;
        memcpy(at, two_digits + 2 * v, 2);
    } else {
        *--at = (char)('0' + v);
    }
    const size_t n = (size_t)(end - at);
    memcpy(out, at, n);
    return n;
}

size_t pk_decimal_list(const uint64_t *values, size_t count, char *out)
{
    size_t at = 0;
    for (size_t i = 0; i < count; i++) {
        if (i)
            out[at++] = ' ';
        at += pk_u64_decimal(values[i], out + at);
    }
    return at;
}
