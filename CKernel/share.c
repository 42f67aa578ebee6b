/*
 * share.c — what the pieces of one split candidate tell each other: a job's
 * range, a lower limit for a running job, and the root of the cofactor the
 * factors found by every piece leave; and the shares of a complete job's
 * ECM curves (job/pipeline.c does the work).
 */
#include <stdlib.h>
#include <string.h>

#include "pk_internal.h"
#include "job/pipeline.h"

int pk_job_range(const pk_job *job, uint64_t *from, uint64_t *bound)
{
    if (!job || !from || !bound)
        return PK_E_ARG;
    *from = job->from;
    *bound = job->bound;
    return PK_OK;
}

int pk_job_limit(pk_job *job, uint64_t limit)
{
    if (!job)
        return PK_E_ARG;
    if (limit < job->limit) {
        job->limit = limit;
        pk_job_refresh_bound(job);
        pk_job_update_percent(job);
        job->revision++;
    }
    return PK_OK;
}

/* v = min(v, cap) as a u64. */
static uint64_t capped(const mpz_t v, uint64_t cap)
{
    if (mpz_sizeinbase(v, 2) > 64)
        return cap;
    uint64_t x = mpz_get_ui(v);
    return x < cap ? x : cap;
}

int pk_cofactor_root(const char *candidate, const char *const *primes, const uint64_t *exponents, size_t count,
                     uint64_t *root, uint64_t *cofactor)
{
    if (!candidate || (count && (!primes || !exponents)))
        return PK_E_ARG;
    size_t len = strlen(candidate);
    if (!pk_is_canonical_decimal(candidate, len))
        return PK_E_PARSE;
    mpz_t c, p;
    mpz_init(c);
    mpz_init(p);
    int rc = mpz_set_str(c, candidate, 10) == 0 ? PK_OK : PK_E_PARSE;
    if (rc == PK_OK && mpz_cmp_ui(c, 2) < 0)
        rc = PK_E_RANGE;
    for (size_t i = 0; rc == PK_OK && i < count; i++) {
        if (!primes[i] || !pk_is_canonical_decimal(primes[i], strlen(primes[i])) ||
            mpz_set_str(p, primes[i], 10) != 0 || mpz_cmp_ui(p, 2) < 0) {
            rc = PK_E_PARSE;
            break;
        }
        for (uint64_t e = 0; rc == PK_OK && e < exponents[i]; e++) {
            if (!mpz_divisible_p(c, p))
                rc = PK_E_OPTIONS;
            else
                mpz_divexact(c, c, p);
        }
    }
    if (rc == PK_OK) {
        if (cofactor)
            *cofactor = capped(c, PK_U64_MAX);
        if (root) {
            /* Past 2^128 the root is past 2^64: no need to take it. */
            if (mpz_sizeinbase(c, 2) > 128) {
                *root = PK_U64_MAX;
            } else {
                mpz_sqrt(p, c);
                *root = capped(p, PK_U64_MAX);
            }
        }
    }
    mpz_clear(p);
    mpz_clear(c);
    return rc;
}

int pk_job_ecm_share(const pk_job *job, unsigned index, unsigned count, pk_job **out)
{
    if (!out)
        return PK_E_ARG;
    *out = NULL;
    if (!job || count < 2 || index >= count)
        return PK_E_ARG;
    if (job->mode != PK_MODE_COMPLETE || !job->pipe || job->done || pk_pipe_is_share(job))
        return PK_E_OPTIONS;
    pk_job *s;
    int rc = pk_job_clone(job, &s);
    if (rc != PK_OK)
        return rc;
    rc = pk_pipe_share(s, index, count);
    if (rc != PK_OK) {
        pk_job_destroy(s);
        return rc;
    }
    *out = s;
    return PK_OK;
}

int pk_job_ecm_share_info(const pk_job *job, unsigned *index, unsigned *count, int *found)
{
    if (!job)
        return PK_E_ARG;
    uint64_t i, c;
    int f;
    int rc = pk_pipe_share_info(job, &i, &c, &f);
    if (rc != PK_OK)
        return rc;
    if (index)
        *index = (unsigned)i;
    if (count)
        *count = (unsigned)c;
    if (found)
        *found = f;
    return PK_OK;
}

int pk_job_ecm_merge(pk_job *const *shares, size_t count, pk_job **out)
{
    if (!out)
        return PK_E_ARG;
    *out = NULL;
    if (!shares || count == 0)
        return PK_E_ARG;
    for (size_t i = 0; i < count; i++)
        if (!shares[i])
            return PK_E_ARG;
    int rc = pk_pipe_share_check(shares, count);
    if (rc != PK_OK)
        return rc;
    pk_job *m;
    if ((rc = pk_job_clone(shares[0], &m)) != PK_OK)
        return rc;
    rc = pk_pipe_share_merge(m, shares, count);
    if (rc != PK_OK) {
        pk_job_destroy(m);
        return rc;
    }
    *out = m;
    return PK_OK;
}
