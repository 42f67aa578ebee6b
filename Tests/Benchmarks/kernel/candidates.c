/*
 * candidates.c — deterministic construction of the benchmark candidates.
 *
 * The W2 survivors must have no prime factor up to 10^7 and be the same on
 * every run and machine. Rather than searching random numbers for one that
 * survives the sieve (which costs as much as the benchmark itself at a million
 * digits), we build one: multiply pseudo-random primes above 2^63 drawn from
 * a fixed-seed Mersenne Twister until the product is 26 to 45 digits short of the
 * length wanted, then multiply by the next prime after
 * ceil(10^(digits-1) / product). Every prime factor exceeds 10^7 by
 * construction; the digits look random, so the trial-division work is that of
 * any survivor of the same length.
 */
#include "bench.h"

#include <gmp.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Product of v[lo..hi) by a balanced tree; v is clobbered. Result in v[lo]. */
static void product_tree(mpz_t *v, size_t lo, size_t hi)
{
    if (hi - lo <= 1)
        return;
    size_t mid = lo + (hi - lo) / 2;
    product_tree(v, lo, mid);
    product_tree(v, mid, hi);
    mpz_mul(v[lo], v[lo], v[mid]);
}

char *make_survivor(size_t digits, unsigned long seed)
{
    if (digits < 60)
        bench_die("make_survivor: %zu digits is too short", digits);

    gmp_randstate_t rs;
    gmp_randinit_mt(rs);
    gmp_randseed_ui(rs, seed);

    size_t cap = digits / 18 + 16, count = 0;
    mpz_t *primes = bench_xmalloc(cap * sizeof *primes);
    double log10_sum = 0.0;
    while (log10_sum < (double)digits - 45.0) {
        if (count == cap)
            bench_die("make_survivor: prime table overflow");
        mpz_init(primes[count]);
        mpz_urandomb(primes[count], rs, 64);
        mpz_setbit(primes[count], 63);             /* >= 2^63 */
        mpz_nextprime(primes[count], primes[count]);
        log10_sum += log10(mpz_get_d(primes[count]));
        count++;
    }
    product_tree(primes, 0, count);

    mpz_t lo, hi, f, n;
    mpz_inits(lo, hi, f, n, NULL);
    mpz_ui_pow_ui(lo, 10, digits - 1);
    mpz_ui_pow_ui(hi, 10, digits);
    mpz_cdiv_q(f, lo, primes[0]);
    if (mpz_sizeinbase(f, 2) < 64)
        bench_die("make_survivor: last factor too small");
    mpz_nextprime(f, f);
    mpz_mul(n, primes[0], f);
    if (mpz_cmp(n, lo) < 0 || mpz_cmp(n, hi) >= 0 || mpz_even_p(n))
        bench_die("make_survivor: construction missed %zu digits", digits);

    char *s = mpz_get_str(NULL, 10, n);
    if (strlen(s) != digits)
        bench_die("make_survivor: %zu digits instead of %zu", strlen(s), digits);
    /* mpz_get_str allocates with GMP's allocator (malloc by default); copy
     * so the caller can free() it whatever GMP is configured with. */
    char *out = bench_xmalloc(digits + 1);
    memcpy(out, s, digits + 1);
    void (*gmp_free)(void *, size_t);
    mp_get_memory_functions(NULL, NULL, &gmp_free);
    gmp_free(s, digits + 1);

    for (size_t i = 0; i < count; i++)
        mpz_clear(primes[i]);
    free(primes);
    mpz_clears(lo, hi, f, n, NULL);
    gmp_randclear(rs);
    return out;
}

static char *mpz_to_malloced(const mpz_t x)
{
    size_t cap = mpz_sizeinbase(x, 10) + 2;
    char *s = bench_xmalloc(cap);
    mpz_get_str(s, 10, x);
    return s;
}

char *make_w128(char **cofactor_out)
{
    mpz_t q, n;
    mpz_inits(q, n, NULL);
    mpz_setbit(q, 95);
    mpz_nextprime(q, q);
    mpz_mul_ui(n, q, 4294967291UL);
    *cofactor_out = mpz_to_malloced(q);
    char *s = mpz_to_malloced(n);
    mpz_clears(q, n, NULL);
    return s;
}

uint64_t decimal_isqrt_u64(const char *decimal)
{
    mpz_t n;
    if (mpz_init_set_str(n, decimal, 10) != 0)
        bench_die("decimal_isqrt_u64: not decimal: %s", decimal);
    if (mpz_sizeinbase(n, 2) > 128)
        bench_die("decimal_isqrt_u64: above 2^128: %s", decimal);
    mpz_sqrt(n, n);
    uint64_t r = 0;
    mpz_export(&r, NULL, -1, sizeof r, 0, 0, n);
    mpz_clear(n);
    return r;
}
