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

const uint64_t *pk_divisors_ascending(const uint64_t *primes, const uint64_t *exponents, size_t count,
                                      uint64_t *space, size_t total, size_t *have_out)
{
    /* Three lists of `total` take turns: the divisors without p (kept while p's powers are merged in), the
       list so far, and the one being written. Nothing is copied back. */
    uint64_t *list[3] = {space, space + total, space + 2 * total};
    int sofar = 0;
    size_t have = 1;
    list[0][0] = 1;
    for (size_t i = 0; i < count; i++) {
        const uint64_t p = primes[i];
        const uint64_t *without = list[sofar];
        const int w = sofar;
        const size_t base = have;
        uint64_t pk = 1;
        for (uint64_t k = 1; k <= exponents[i]; k++) {
            pk *= p;
            const int into = w == sofar ? (sofar + 1) % 3 : 3 - w - sofar;
            const uint64_t *from = list[sofar];
            uint64_t *next = list[into];
            size_t a = 0, b = 0, at = 0;
            uint64_t run = without[0] * pk;
            while (a < have && b < base) {
                if (from[a] < run) {
                    next[at++] = from[a++];
                } else {
                    next[at++] = run;
                    if (++b < base)
                        run = without[b] * pk;
                }
            }
            while (a < have)
                next[at++] = from[a++];
            for (; b < base; b++)
                next[at++] = without[b] * pk;
            have = at;
            sofar = into;
        }
    }
    *have_out = have;
    return list[sofar];
}

static const char two_digits[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

size_t pk_decimal_length_u64(uint64_t v)
{
    size_t n = 1;
    for (; v >= 10000; v /= 10000)
        n += 4;
    return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

size_t pk_decimal_list(const uint64_t *values, size_t count, char *out)
{
    size_t at = 0;
    for (size_t i = 0; i < count; i++) {
        if (i)
            out[at++] = ' ';
        uint64_t v = values[i];
        at += pk_decimal_length_u64(v);
        char *end = out + at;
        while (v >= 100) {
            const unsigned r = (unsigned)(v % 100);
            v /= 100;
            end -= 2;
            memcpy(end, two_digits + 2 * r, 2);
        }
        if (v >= 10)
            memcpy(end - 2, two_digits + 2 * v, 2);
        else
            end[-1] = (char)('0' + v);
    }
    return at;
}
