/*
 * peers.c — the plain C programs PrimeKit is compared against. They are
 * deliberately the obvious code a user would write: no wheel, no tricks.
 * Each lives behind a noinline function taking its inputs at run time, so the
 * compiler cannot specialise the loop for a constant candidate.
 */
#include "bench.h"

#include <gmp.h>
#include <stdlib.h>
#include <string.h>

/* Number of odd d with 3 <= d <= last. */
static uint64_t odd_count(uint64_t last)
{
    return last < 3 ? 0 : (last - 3) / 2 + 1;
}

__attribute__((noinline))
uint64_t peer_u64(uint64_t n, uint64_t limit, int stop_at_first, uint64_t *tested)
{
    uint64_t first = 0;
    if (limit >= 2 && n % 2 == 0) {
        first = 2;
        if (stop_at_first) {
            *tested = 1;
            return first;
        }
    }
    uint64_t d;
    for (d = 3; d <= limit; d += 2) {
        if (n % d == 0) {
            if (first == 0)
                first = d;
            if (stop_at_first)
                break;
        }
    }
    *tested = 1 + odd_count(d <= limit ? d : limit);
    return first;
}

#ifdef __SIZEOF_INT128__
__attribute__((noinline))
uint64_t peer_u128(uint64_t n_hi, uint64_t n_lo, uint64_t limit, int stop_at_first,
                   uint64_t *tested)
{
    unsigned __int128 n = ((unsigned __int128)n_hi << 64) | n_lo;
    uint64_t first = 0;
    if (limit >= 2 && (n_lo & 1) == 0) {
        first = 2;
        if (stop_at_first) {
            *tested = 1;
            return first;
        }
    }
    uint64_t d;
    for (d = 3; d <= limit; d += 2) {
        if (n % d == 0) {
            if (first == 0)
                first = d;
            if (stop_at_first)
                break;
        }
    }
    *tested = 1 + odd_count(d <= limit ? d : limit);
    return first;
}
#else
uint64_t peer_u128(uint64_t n_hi, uint64_t n_lo, uint64_t limit, int stop_at_first,
                   uint64_t *tested)
{
    (void)n_hi; (void)n_lo; (void)limit; (void)stop_at_first; (void)tested;
    bench_die("this compiler has no unsigned __int128: the W128 peer cannot run");
}
#endif

__attribute__((noinline))
uint64_t peer_gmp(const char *decimal, uint32_t bound, uint64_t *tested)
{
    mpz_t n;
    if (mpz_init_set_str(n, decimal, 10) != 0)
        bench_die("peer_gmp: the candidate is not decimal");

    /* composite[i] says whether 2i+1 is composite, for 2i+1 <= bound. */
    size_t half = (size_t)bound / 2 + 1;
    unsigned char *composite = bench_xmalloc(half);
    memset(composite, 0, half);
    composite[0] = 1; /* 1 */
    for (uint64_t p = 3; p * p <= bound; p += 2) {
        if (composite[p / 2])
            continue;
        for (uint64_t m = p * p; m <= bound; m += 2 * p)
            composite[m / 2] = 1;
    }

    uint64_t first = 0, count = 0;
    if (bound >= 2) {
        count++;
        if (mpz_even_p(n))
            first = 2;
    }
    for (size_t i = 1; i < half; i++) {
        if (composite[i])
            continue;
        unsigned long p = 2 * (unsigned long)i + 1;
        if (p > bound)
            break;
        count++;
        if (mpz_divisible_ui_p(n, p) && first == 0)
            first = p;
    }
    free(composite);
    mpz_clear(n);
    *tested = count;
    return first;
}

int peer_floor(const char *decimal, const void *primorial)
{
    mpz_t n, r;
    mpz_init(r);
    if (mpz_init_set_str(n, decimal, 10) != 0)
        bench_die("peer_floor: the candidate is not decimal");
    mpz_tdiv_r(r, (mpz_srcptr)primorial, n);
    mpz_gcd(r, r, n);
    int one = mpz_cmp_ui(r, 1) == 0;
    mpz_clear(n);
    mpz_clear(r);
    return one;
}
