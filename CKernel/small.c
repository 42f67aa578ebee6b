/*
 * small.c — candidates below 2^32 answered in one call, without a job.
 *
 * A job costs a dozen allocations (the job, its GMP numbers, one per factor)
 * before it divides anything; for a candidate below 2^32 the whole answer is a
 * few hundred divisibility tests at most, so the allocations would dominate.
 * Here the answer is computed in machine words straight into the caller's
 * struct, and is exactly what a job created with default options would
 * report: every prime factor, cofactor 1, proven.
 *
 * Trial division runs over 2 and then the odd primes up to the square root of
 * what is left; what is left after that is prime. The odd primes below 2^16
 * (6,541 of them, enough for any 32-bit number) are sieved once, on first
 * use, with each one's inverse modulo 2^32: p divides m exactly when
 * m * inverse(p) mod 2^32 <= (2^32 - 1) / p, and then that product is m / p —
 * a multiplication where a division was, and only primes tried (a wheel of 30
 * tries 2.7 times as many numbers). A prime near 2^32 costs 6,542 tests.
 * The answer also says how many primes were tried and where trial division
 * stopped, for progress reports.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "primekit.h"
#include "pk_internal.h"

enum { ODD_PRIMES = 6541 }; /* the odd primes below 2^16 */
static uint32_t odd_primes[ODD_PRIMES], inverses[ODD_PRIMES], limits[ODD_PRIMES];
/* 0: not built, 1: being built by one caller, 2: ready. */
static atomic_int table_state;

static void build_table(void)
{
    static uint8_t composite[1u << 15]; /* index i stands for 2i + 1 */
    size_t count = 0;
    for (uint32_t i = 1; i < (1u << 15); i++) {
        if (composite[i])
            continue;
        const uint32_t p = 2 * i + 1;
        if (p < 256) /* from 256 on, p * p is past 2^16: nothing left to mark */
            for (uint32_t j = (p * p) / 2; j < (1u << 15); j += p)
                composite[j] = 1;
        uint32_t inverse = p; /* right to 3 bits; each step doubles them */
        for (int k = 0; k < 4; k++)
            inverse *= 2 - p * inverse;
        odd_primes[count] = p;
        inverses[count] = inverse;
        limits[count] = UINT32_MAX / p;
        count++;
    }
}

/* The table is built by the first caller; a caller arriving meanwhile waits
   the few tens of microseconds that takes, so every answer is the same. */
static void ensure_table(void)
{
    if (atomic_load_explicit(&table_state, memory_order_acquire) == 2)
        return;
    int expected = 0;
    if (atomic_compare_exchange_strong_explicit(&table_state, &expected, 1, memory_order_acq_rel,
                                                memory_order_acquire)) {
        build_table();
        atomic_store_explicit(&table_state, 2, memory_order_release);
        return;
    }
    while (atomic_load_explicit(&table_state, memory_order_acquire) != 2) {
    }
}

static void record(pk_small_answer *out, uint32_t p, uint32_t e)
{
    out->primes[out->factor_count] = p;
    out->exponents[out->factor_count] = e;
    out->factor_count++;
}

int pk_small_factor(uint32_t n, pk_small_answer *out)
{
    if (!out || out->size < sizeof *out || n < 2)
        return PK_E_ARG;
    ensure_table();
    out->n = n;
    out->factor_count = 0;
    uint32_t m = n, tested = 0, next = 2;
    if (m >= 4) {
        tested++;
        next = 3;
        if (!(m & 1)) {
            const uint32_t e = (uint32_t)__builtin_ctz(m);
            m >>= e;
            record(out, 2, e);
        }
        size_t i = 0;
        for (; i < ODD_PRIMES; i++) {
            const uint32_t p = odd_primes[i];
            if ((uint64_t)p * p > m)
                break;
            tested++;
            if (m * inverses[i] <= limits[i]) {
                uint32_t e = 0;
                do {
                    m *= inverses[i];
                    e++;
                } while (m * inverses[i] <= limits[i]);
                record(out, p, e);
            }
        }
        next = i < ODD_PRIMES ? odd_primes[i] : 65537; /* the first prime not tried */
    }
    if (m > 1)
        record(out, m, 1);
    out->divisors_tested = tested;
    out->next_divisor = next;
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
