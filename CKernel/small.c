/*
 * small.c — candidates below 2^32 answered in one call, without a job.
 *
 * A job costs a dozen allocations (the job, its GMP numbers, one per factor)
 * before it divides anything; for a candidate below 2^32 the whole answer is a
 * few hundred divisions at most, so the allocations would dominate. Here the
 * answer is computed in machine words straight into the caller's struct, and
 * is exactly what a job created with default options would report: every
 * prime factor, cofactor 1, proven.
 *
 * Trial division runs over 2, 3, 5 and then the wheel of 30 up to the square
 * root of what is left; what is left after that is prime. The answer also
 * says how many divisors were tried and where trial division stopped, for
 * progress reports. The square root of
 * a 32-bit number is below 2^16, so the worst case (a prime near 2^32) is
 * about 17,500 divisions.
 */
#include <stdlib.h>

#include "primekit.h"
#include "pk_internal.h"

static void take(uint32_t *m, uint32_t p, pk_small_answer *out)
{
    uint32_t e = 0;
    do {
        *m /= p;
        e++;
    } while (*m % p == 0);
    out->primes[out->factor_count] = p;
    out->exponents[out->factor_count] = e;
    out->factor_count++;
}

int pk_small_factor(uint32_t n, pk_small_answer *out)
{
    if (!out || out->size < sizeof *out || n < 2)
        return PK_E_ARG;
    out->n = n;
    out->factor_count = 0;
    uint32_t m = n, tested = 0, d = 2;
    static const uint8_t first[] = {2, 3, 5};
    for (size_t i = 0; i < sizeof first && (uint32_t)first[i] * first[i] <= m; i++) {
        d = first[i];
        tested++;
        if (m % d == 0)
            take(&m, d, out);
        d = i + 1 < sizeof first ? first[i + 1] : 7;
    }
    /* Offsets of the numbers prime to 30 in one turn of the wheel (7 opens the first turn). */
    static const uint8_t wheel[] = {7, 11, 13, 17, 19, 23, 29, 31};
    for (uint32_t base = 0; (uint64_t)d * d <= m; base += 30) {
        for (size_t i = 0; i < sizeof wheel; i++) {
            d = base + wheel[i];
            if ((uint64_t)d * d > m)
                break;
            tested++;
            if (m % d == 0)
                take(&m, d, out);
        }
    }
    if (m > 1) {
        out->primes[out->factor_count] = m;
        out->exponents[out->factor_count] = 1;
        out->factor_count++;
    }
    out->divisors_tested = tested;
    out->next_divisor = d;
    return PK_OK;
}

int pk_small_divisors(const pk_small_answer *answer, size_t max_count, char *buf, size_t cap,
                      size_t *len, size_t *count)
{
    if (!answer || answer->size < sizeof *answer || answer->factor_count > PK_SMALL_MAX_FACTORS)
        return PK_E_ARG;
    /* No number below 2^32 has more than 1,920 divisors (3,491,888,400 has that many). */
    size_t total = 1;
    for (size_t i = 0; i < answer->factor_count; i++) {
        if (answer->exponents[i] >= 1920 || (total *= (size_t)answer->exponents[i] + 1) > 1920)
            return PK_E_ARG; /* not the answer of a number below 2^32 */
    }
    if (count)
        *count = total;
    if (total > max_count)
        return PK_E_TOO_MANY;
    uint64_t primes[PK_SMALL_MAX_FACTORS], exponents[PK_SMALL_MAX_FACTORS];
    for (size_t i = 0; i < answer->factor_count; i++) {
        primes[i] = answer->primes[i];
        exponents[i] = answer->exponents[i];
    }
    /* Three lists of `total` values: on the stack for all but the rare n with more than 384 divisors. */
    uint64_t stack[3 * 384];
    uint64_t *space = total <= 384 ? stack : malloc(3 * total * sizeof *space);
    if (!space)
        return PK_E_NOMEM;
    size_t have = 0;
    const uint64_t *d = pk_divisors_ascending(primes, exponents, answer->factor_count, space, total, &have);
    /* The length first, then the text straight into the caller's buffer. */
    size_t need = have - 1;
    for (size_t i = 0; i < have; i++)
        need += pk_decimal_length_u64(d[i]);
    if (len)
        *len = need;
    int rc = PK_E_BUFFER;
    if (buf && cap > need) {
        buf[pk_decimal_list(d, have, buf)] = 0;
        rc = PK_OK;
    }
    if (space != stack)
        free(space);
    return rc;
}
