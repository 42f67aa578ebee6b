/*
 * prime.c — primality of remainders and of factors read from checkpoints.
 *
 * GMP's mpz_probab_prime_p (GMP >= 6.2) runs a Baillie-PSW test. No BPSW
 * pseudoprime exists below 2^64, so there a pass is a proof.
 */
#include "pk_internal.h"

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
    if (n < 2)
        return 0;
    static const uint8_t small[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37};
    for (size_t i = 0; i < sizeof small; i++) {
        if (n == small[i])
            return 1;
        if (n % small[i] == 0)
            return 0;
    }
    if (n < 41 * 41)
        return 1;
    mpz_t v;
    mpz_init_set_ui(v, n);
    int r = pk_bpsw(v);
    mpz_clear(v);
    return r != 0;
}
