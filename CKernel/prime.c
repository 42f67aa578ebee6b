/*
 * prime.c — primality of remainders and of factors read from checkpoints.
 *
 * GMP's mpz_probab_prime_p (GMP >= 6.2) runs a Baillie-PSW test. No BPSW
 * pseudoprime exists below 2^64, so there a pass is a proof.
 */
#include "pk_internal.h"
#include "factor/word.h"

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
    return pk_word_isqrt64(n); /* one integer square root below 2^64: the word-size unit's */
}
