/*
 * td_gmp.c — trial division of a cofactor above 128 bits.
 *
 * Divisors are the primes of a segmented sieve (sieve.c), one segment of
 * PK_SIEVE_SPAN integers at a time. Primes are packed into word-size
 * products (two or three primes per 64-bit word), and the cofactor is read
 * once per product with mpn_mod_1; the word remainder then tells which of
 * its primes divide. Products are taken in groups sized to about
 * PK_GROUP_LIMB_OPS limb operations; the interrupt flag and the budget are
 * checked between groups, and every group boundary is a resume point.
 */
#include <stdlib.h>

#include "pk_internal.h"

#define PK_GROUP_LIMB_OPS (UINT64_C(1) << 17)

void pk_tdgmp_release(pk_job *job)
{
    free(job->primes);
    job->primes = NULL;
    job->prime_count = job->prime_pos = 0;
    job->primes_lo = job->primes_hi = 0;
    pk_sieve_free(&job->sieve);
}

/* Make primes[prime_pos] the first prime >= job->next, sieving as needed. */
static int load_primes(pk_job *job)
{
    if (job->primes && job->next >= job->primes_lo && job->next < job->primes_hi) {
        while (job->prime_pos < job->prime_count && job->primes[job->prime_pos] < job->next)
            job->prime_pos++;
        if (job->prime_pos < job->prime_count)
            return 0;
        /* the segment is used up: sieve the next one */
        job->next = job->primes_hi;
    }
    if (!job->primes) {
        job->primes = malloc((PK_SIEVE_SPAN / 2 + 2) * sizeof *job->primes);
        if (!job->primes)
            return PK_E_NOMEM;
    }
    for (;;) {
        uint64_t lo = job->next;
        uint64_t hi = job->eff_bound + 1;
        if (hi - lo > PK_SIEVE_SPAN)
            hi = lo + PK_SIEVE_SPAN;
        long count = pk_sieve_primes(&job->sieve, lo, hi, job->primes);
        if (count < 0)
            return PK_E_NOMEM;
        job->primes_lo = lo;
        job->primes_hi = hi;
        job->prime_count = count;
        job->prime_pos = 0;
        if (count > 0)
            return 0;
        job->next = hi; /* a segment without primes */
        if (job->next > job->eff_bound)
            return 1;
    }
}

int pk_tdgmp(pk_job *job, uint64_t *budget)
{
    while (job->next <= job->eff_bound) {
        if (pk_job_take_interrupt(job))
            return PK_PATH_INTERRUPT;
        int rc = load_primes(job);
        if (rc < 0)
            return rc;
        if (rc > 0)
            break;
        uint64_t limbs = (uint64_t)mpz_size(job->cof);
        if (*budget < limbs) {
            *budget = 0;
            return PK_PATH_BUDGET;
        }
        uint64_t max_primes = *budget / limbs;
        uint64_t group = PK_GROUP_LIMB_OPS / limbs * 2 + 2;
        if (max_primes > group)
            max_primes = group;

        const mp_limb_t *np = mpz_limbs_read(job->cof);
        mp_size_t nn = (mp_size_t)limbs;
        uint64_t tested = 0, hit = 0, last = 0;
        while (tested < max_primes && job->prime_pos < job->prime_count) {
            const uint64_t *p = &job->primes[job->prime_pos];
            long avail = job->prime_count - job->prime_pos;
            if ((uint64_t)avail > max_primes - tested)
                avail = (long)(max_primes - tested);
            /* Pack as many primes as fit into one word. */
            pk_u128 prod = p[0];
            long k = 1;
            while (k < avail && k < 4 && prod * p[k] <= (pk_u128)PK_U64_MAX)
                prod *= p[k++];
            uint64_t r = mpn_mod_1(np, nn, (mp_limb_t)prod);
            for (long i = 0; i < k; i++) {
                if (r % p[i] == 0) {
                    hit = p[i];
                    tested += (uint64_t)i + 1;
                    job->prime_pos += i + 1;
                    last = p[i];
                    goto found;
                }
            }
            tested += (uint64_t)k;
            job->prime_pos += k;
            last = p[k - 1];
        }
    found:
        job->tested += tested;
        job->work += tested * limbs;
        *budget = *budget > tested * limbs ? *budget - tested * limbs : 0;
        job->next = last + 1;
        if (job->prime_pos >= job->prime_count && job->next < job->primes_hi)
            job->next = job->primes_hi;
        if (job->next > job->eff_bound + 1)
            job->next = job->eff_bound + 1;
        if (hit) {
            rc = pk_job_divide_out(job, hit);
            if (rc < 0)
                return rc;
            return PK_PATH_CONTINUE; /* the cofactor changed: re-dispatch */
        }
    }
    return PK_PATH_CONTINUE;
}
