/*
 * job/core.c — the core of a job (struct pk_job in pk_internal.h) shared by
 * its units: allocation, the candidate, the factor list, the cofactor and
 * its trial-division bound, the interrupt and conclude flags as the units
 * poll them, and the classification of what is left. Everything here works
 * on the core alone; the units (trial/, job/pipeline.c) call in, and the
 * public layer (job.c, checkpoint.c, result.c, share.c) calls them all.
 */
#include <stdlib.h>
#include <string.h>

#include "pk_internal.h"

_Static_assert(sizeof(unsigned long) == 8, "the kernel assumes an LP64 platform");

pk_job *pk_job_alloc(void)
{
    pk_job *job = calloc(1, sizeof *job);
    if (!job)
        return NULL;
    atomic_init(&job->interrupt, 0);
    atomic_init(&job->conclude, 0);
    mpz_init(job->n);
    mpz_init(job->cof);
    pk_sieve_init(&job->sieve);
    job->max_digits = PK_DEFAULT_MAX_DIGITS;
    job->bpsw_digits = PK_DEFAULT_BPSW_DIGITS;
    job->mode = PK_MODE_TRIAL; /* configure or restore sets the job's own */
    job->limit = PK_U64_MAX;
    return job;
}


int pk_job_take_interrupt(pk_job *job)
{
    if (!atomic_load_explicit(&job->interrupt, memory_order_relaxed))
        return 0;
    return atomic_exchange_explicit(&job->interrupt, 0, memory_order_acq_rel) != 0;
}

int pk_job_concluding(pk_job *job)
{
    if (!job->concluded && !job->done && job->mode == PK_MODE_COMPLETE &&
        atomic_load_explicit(&job->conclude, memory_order_acquire))
        job->concluded = 1;
    return job->concluded;
}

int pk_job_stop_requested(pk_job *job)
{
    if (pk_job_concluding(job))
        return 1;
    return pk_job_take_interrupt(job);
}

int pk_job_poll(pk_job *job)
{
    job->polls++;
#ifdef PK_TEST_HOOKS
    if (job->poll_trap && job->polls == job->poll_trap)
        atomic_store_explicit(&job->interrupt, 1, memory_order_release); /* as pk_job_interrupt */
#endif
    return pk_job_stop_requested(job);
}


/* min(cap, floor(sqrt(v))) without a square root of a huge v. */
uint64_t pk_sqrt_capped(const mpz_t v, uint64_t cap)
{
    if (mpz_sizeinbase(v, 2) <= 64) {
        uint64_t r = pk_isqrt_u64(mpz_get_ui(v));
        return r < cap ? r : cap;
    }
    if (mpz_sizeinbase(v, 2) > 128)
        return cap; /* the root is at least 2^64 */
    mpz_t r;
    mpz_init(r);
    mpz_sqrt(r, v);
    if (mpz_cmp_ui(r, cap) < 0)
        cap = mpz_get_ui(r);
    mpz_clear(r);
    return cap;
}

void pk_job_refresh_bound(pk_job *job)
{
    if (job->from <= 2) {
        /* Every prime below next is gone: a prime factor left is above
           sqrt(cof) only if it is cof itself. */
        job->eff_bound = pk_sqrt_capped(job->cof, job->bound);
    } else {
        /* Primes below the range may still divide cof, so a prime of the
           range can exceed sqrt(cof): stop only past cof itself. */
        job->eff_bound = job->bound;
        if (mpz_sizeinbase(job->cof, 2) <= 64 && mpz_get_ui(job->cof) < job->bound)
            job->eff_bound = mpz_get_ui(job->cof);
    }
    if (job->eff_bound > job->limit)
        job->eff_bound = job->limit; /* may fall below from: the range is then empty */
}


int pk_job_add_factor(pk_job *job, const mpz_t p, uint64_t e)
{
    return pk_job_add_prime(job, p, e, PK_CERTAINTY_PROVEN);
}

int pk_job_add_prime(pk_job *job, const mpz_t p, uint64_t e, int certainty)
{
    size_t i = 0;
    while (i < job->factor_count && mpz_cmp(job->factors[i].prime, p) < 0)
        i++;
    if (i < job->factor_count && mpz_cmp(job->factors[i].prime, p) == 0) {
        job->factors[i].exponent += e;
        return PK_OK;
    }
    if (job->factor_count == job->factor_cap) {
        size_t cap = job->factor_cap ? 2 * job->factor_cap : 8;
        pk_factor *f = realloc(job->factors, cap * sizeof *f);
        if (!f)
            return PK_E_NOMEM;
        job->factors = f;
        job->factor_cap = cap;
    }
    memmove(&job->factors[i + 1], &job->factors[i], (job->factor_count - i) * sizeof *job->factors);
    mpz_init_set(job->factors[i].prime, p);
    job->factors[i].exponent = e;
    job->factors[i].certainty = certainty;
    job->factor_count++;
    return PK_OK;
}

int pk_job_divide_out(pk_job *job, uint64_t d)
{
    /* Divisors are tried in ascending order: from 2, every hit is prime. A
       range that starts above 2 can meet composites whose primes lie below
       it: there only proven primes are divided out. */
    if (job->from > 2 && !pk_is_prime_u64(d))
        return 0;
    uint64_t e = 0;
    while (mpz_divisible_ui_p(job->cof, d)) {
        mpz_divexact_ui(job->cof, job->cof, d);
        e++;
    }
    if (e == 0)
        return 0;
    mpz_t p;
    mpz_init_set_ui(p, d);
    int rc = pk_job_add_factor(job, p, e);
    mpz_clear(p);
    if (rc != PK_OK)
        return rc; /* cof already reduced; the factor list is short one entry */
    pk_job_refresh_bound(job);
    return 1;
}

int pk_job_trial_proves(const pk_job *job, const mpz_t v)
{
    int proven = 0;
    if (job->from <= 2) {
        if (mpz_sizeinbase(v, 2) <= 64) {
            pk_u128 sq = (pk_u128)job->next * job->next;
            proven = sq > (pk_u128)mpz_get_ui(v);
        } else {
            mpz_t sq;
            mpz_init_set_ui(sq, job->next);
            mpz_mul(sq, sq, sq);
            proven = mpz_cmp(sq, v) > 0;
            mpz_clear(sq);
        }
    }
    return proven;
}

/* Trial division from 2 up to next-1 with next^2 > cof proves cof prime. */
static int proven_by_trial(const pk_job *job)
{
    return pk_job_trial_proves(job, job->cof);
}

/* What the end of a job concludes about a cofactor above 1. PK_COFACTOR_ONE
   means prime and proven (trial division from 2 past its square root, or BPSW
   below 2^64): it belongs in the factor list. Pure: the same job state gives
   the same answer, which is how a restored checkpoint's status is checked. */
int pk_job_classify_cofactor(const pk_job *job)
{
    if (proven_by_trial(job))
        return PK_COFACTOR_ONE;
    /* sizeinbase may say one digit too many: settle the boundary exactly. */
    if (mpz_sizeinbase(job->cof, 2) <= 64 || mpz_sizeinbase(job->cof, 10) <= job->bpsw_digits ||
        (mpz_sizeinbase(job->cof, 10) == job->bpsw_digits + 1 &&
         pk_decimal_length(job->cof) <= job->bpsw_digits)) {
        switch (pk_bpsw(job->cof)) {
        case 2: return PK_COFACTOR_ONE;
        case 1: return PK_COFACTOR_PROBABLE_PRIME;
        default: return PK_COFACTOR_COMPOSITE;
        }
    }
    return PK_COFACTOR_UNKNOWN;
}

int pk_job_finish(pk_job *job)
{
    int status = PK_COFACTOR_ONE;
    if (mpz_cmp_ui(job->cof, 1) != 0) {
        status = pk_job_classify_cofactor(job);
        if (status == PK_COFACTOR_ONE) {
            int rc = pk_job_add_factor(job, job->cof, 1);
            if (rc != PK_OK)
                return rc;
            mpz_set_ui(job->cof, 1);
        }
    }
    job->cof_status = status;
    job->cof_digits = pk_decimal_length(job->cof);
    job->done = 1;
    job->percent = 100.0;
    return PK_OK;
}


int pk_job_set_candidate(pk_job *job, const char *digits, size_t len)
{
    char *text = malloc(len + 1);
    if (!text)
        return PK_E_NOMEM;
    memcpy(text, digits, len);
    text[len] = '\0';
    if (mpz_set_str(job->n, text, 10) != 0) {
        free(text);
        return PK_E_PARSE;
    }
    free(job->n_text);
    job->n_text = text;
    job->n_len = len;
    return PK_OK;
}

int pk_options_resolve(const pk_options *options, pk_options *out)
{
    if (!options) {
        pk_options_init(out);
        return PK_OK;
    }
    if (options->size < sizeof(pk_options))
        return PK_E_ARG;
    *out = *options;
    out->size = sizeof *out;
    if (out->max_digits == 0 || out->simd < PK_SIMD_AUTO || out->simd > PK_SIMD_AVX512 ||
        (out->mode != PK_MODE_COMPLETE && out->mode != PK_MODE_TRIAL) || out->ecm_digits > 70)
        return PK_E_OPTIONS;
    return PK_OK;
}

