/*
 * prime.c — primality of remainders and of factors read from checkpoints.
 *
 * GMP's mpz_probab_prime_p (GMP >= 6.2) runs a Baillie-PSW test. No BPSW
 * pseudoprime exists below 2^64, so there a pass is a proof.
 */
#include "pk_internal.h"
#include "factor/word.h"

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

int pk_bpsw(const mpz_t n)
{
    if (mpz_cmp_ui(n, 2) < 0)
        return 0;
    int r = mpz_probab_prime_p(n, 24);
    if (r == 0)
        return 0;
    if (mpz_sizeinbase(n, 2) <= 64)
        return 2;
    return r;
}

int pk_is_prime_u64(uint64_t n)
{
    return pk_word_is_prime64(n) != 0; /* one deterministic test below 2^64: the word-size unit's */
}

uint64_t pk_isqrt_u64(uint64_t n)
{
    if (n < 2)
        return n;
    uint64_t r;
#if defined(__x86_64__)
    /* The SSE2 square root (no libm), then exact correction below. */
    r = (uint64_t)_mm_cvtsd_f64(_mm_sqrt_sd(_mm_setzero_pd(), _mm_set_sd((double)n)));
    if (r > UINT64_C(0xFFFFFFFF))
        r = UINT64_C(0xFFFFFFFF);
#else
    /* Newton's iteration from above. */
    r = UINT64_C(1) << ((64 - __builtin_clzll(n) + 1) / 2);
    for (;;) {
        uint64_t y = (r + n / r) / 2;
        if (y >= r)
            break;
        r = y;
    }
#endif
    while (r * r > n)
        r--;
    while (r < UINT64_C(0xFFFFFFFF) && (r + 1) * (r + 1) <= n)
        r++;
    return r;
}
