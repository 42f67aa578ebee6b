/*
 * result.c — answers of a job: result summary, factors, cofactor, divisors,
 * and merging the pieces of a split range.
 */
#include <stdlib.h>
#include <string.h>

#include "pk_internal.h"
#include "job/pipeline.h"

int pk_job_result(const pk_job *job, pk_result *out)
{
    if (!job || !out || out->size < offsetof(pk_result, certainty) + sizeof out->certainty)
        return PK_E_ARG;
    if (!job->done)
        return PK_E_NOT_DONE;
    pk_result r;
    memset(&r, 0, sizeof r);
    r.size = out->size < sizeof r ? out->size : sizeof r;
    r.factor_count = job->factor_count;
    r.cofactor_digits = job->cof_digits;
    r.cofactor_status = job->cof_status;
    r.complete = job->cof_status == PK_COFACTOR_ONE || job->cof_status == PK_COFACTOR_PROBABLE_PRIME;
    r.certainty = job->cof_status == PK_COFACTOR_PROBABLE_PRIME ? PK_CERTAINTY_PROBABLE
                                                                : PK_CERTAINTY_PROVEN;
    for (size_t i = 0; i < job->factor_count; i++)
        if (job->factors[i].certainty == PK_CERTAINTY_PROBABLE && r.complete)
            r.certainty = PK_CERTAINTY_PROBABLE;
    r.part_count = pk_pipe_part_count(job);
    if (job->factor_count == 1 && job->factors[0].exponent == 1 &&
        job->cof_status == PK_COFACTOR_ONE)
        r.is_prime = PK_PRIME_YES;
    else if (job->factor_count == 0 && job->cof_status == PK_COFACTOR_PROBABLE_PRIME)
        r.is_prime = PK_PRIME_YES;
    else if (job->factor_count == 0 && job->cof_status == PK_COFACTOR_UNKNOWN)
        r.is_prime = PK_PRIME_UNKNOWN;
    else
        r.is_prime = PK_PRIME_NO;
    memcpy(out, &r, r.size);
    return PK_OK;
}

int pk_job_factor(const pk_job *job, size_t index, char *buf, size_t cap, size_t *len,
                  uint64_t *exponent)
{
    if (!job)
        return PK_E_ARG;
    if (index >= job->factor_count)
        return PK_E_INDEX;
    if (exponent)
        *exponent = job->factors[index].exponent;
    return pk_emit_mpz(job->factors[index].prime, buf, cap, len);
}

int pk_job_factor_certainty(const pk_job *job, size_t index, int *certainty)
{
    if (!job || !certainty)
        return PK_E_ARG;
    if (index >= job->factor_count)
        return PK_E_INDEX;
    *certainty = job->factors[index].certainty;
    return PK_OK;
}

int pk_job_part(const pk_job *job, size_t index, char *buf, size_t cap, size_t *len, pk_part_info *info)
{
    if (!job)
        return PK_E_ARG;
    return pk_pipe_part(job, index, buf, cap, len, info);
}

int pk_job_cofactor(const pk_job *job, char *buf, size_t cap, size_t *len)
{
    if (!job)
        return PK_E_ARG;
    return pk_emit_mpz(job->cof, buf, cap, len);
}

int pk_job_candidate(const pk_job *job, char *buf, size_t cap, size_t *len)
{
    if (!job)
        return PK_E_ARG;
    return pk_emit(job->n_text, job->n_len, buf, cap, len);
}

static int cmp_mpz(const void *a, const void *b)
{
    return mpz_cmp(*(const mpz_t *)a, *(const mpz_t *)b);
}

/* Every divisor of a 64-bit candidate, in machine words (the common case of
   small isPrime answers: no GMP on the way). */
static int divisors_u64(const pk_job *job, size_t total, char *buf, size_t cap, size_t *len)
{
    uint64_t primes[64], exponents[64]; /* a number below 2^64 has at most 15 distinct primes */
    for (size_t i = 0; i < job->factor_count; i++) {
        primes[i] = mpz_get_ui(job->factors[i].prime);
        exponents[i] = job->factors[i].exponent;
    }
    uint64_t stack[3 * 256];
    uint64_t *d = total <= 256 ? stack : malloc(3 * total * sizeof *d);
    char small[4096];
    char *s = total * 21 <= sizeof small ? small : malloc(total * 21);
    int rc = PK_E_NOMEM;
    if (d && s) {
        size_t have = 0;
        const uint64_t *sorted = pk_divisors_ascending(primes, exponents, job->factor_count, d, total, &have);
        rc = pk_emit(s, pk_decimal_list(sorted, have, s), buf, cap, len);
    }
    if (s != small)
        free(s);
    if (d != stack)
        free(d);
    return rc;
}

int pk_job_divisors(const pk_job *job, size_t max_count, char *buf, size_t cap, size_t *len,
                    size_t *count)
{
    if (!job)
        return PK_E_ARG;
    if (!job->done)
        return PK_E_NOT_DONE;
    if (job->cof_status != PK_COFACTOR_ONE && job->cof_status != PK_COFACTOR_PROBABLE_PRIME)
        return PK_E_INCOMPLETE;
    int extra = job->cof_status == PK_COFACTOR_PROBABLE_PRIME;
    size_t total = extra ? 2 : 1;
    for (size_t i = 0; i < job->factor_count; i++) {
        uint64_t e1 = job->factors[i].exponent + 1;
        if (e1 == 0 || total > SIZE_MAX / e1) {
            total = SIZE_MAX;
            break;
        }
        total *= (size_t)e1;
    }
    if (count)
        *count = total;
    if (total > max_count)
        return PK_E_TOO_MANY;

    if (mpz_sizeinbase(job->n, 2) <= 64 && job->factor_count <= 64 && !extra)
        return divisors_u64(job, total, buf, cap, len);

    mpz_t *d = malloc(total * sizeof *d);
    if (!d)
        return PK_E_NOMEM;
    size_t have = 1;
    mpz_init_set_ui(d[0], 1);
    for (size_t i = 0; i < job->factor_count + (size_t)extra; i++) {
        mpz_srcptr p = i < job->factor_count ? job->factors[i].prime : job->cof;
        uint64_t e = i < job->factor_count ? job->factors[i].exponent : 1;
        size_t base = have;
        for (uint64_t k = 1; k <= e; k++) {
            for (size_t j = 0; j < base; j++) {
                mpz_init(d[have]);
                mpz_mul(d[have], d[(size_t)(k - 1) * base + j], p);
                have++;
            }
        }
    }
    qsort(d, have, sizeof *d, cmp_mpz);
    size_t bytes = 0;
    for (size_t i = 0; i < have; i++)
        bytes += mpz_sizeinbase(d[i], 10) + 1;
    char *s = malloc(bytes + 1);
    int rc = PK_E_NOMEM;
    if (s) {
        size_t at = 0;
        for (size_t i = 0; i < have; i++) {
            if (i)
                s[at++] = ' ';
            mpz_get_str(s + at, 10, d[i]);
            at += strlen(s + at);
        }
        rc = pk_emit(s, at, buf, cap, len);
        free(s);
    }
    for (size_t i = 0; i < have; i++)
        mpz_clear(d[i]);
    free(d);
    return rc;
}

static int cmp_range(const void *a, const void *b)
{
    const pk_job *x = *(pk_job *const *)a, *y = *(pk_job *const *)b;
    return x->from < y->from ? -1 : x->from > y->from;
}

int pk_job_merge(pk_job *const *pieces, size_t count, pk_job **out)
{
    if (!out)
        return PK_E_ARG;
    *out = NULL;
    if (!pieces || count == 0)
        return PK_E_ARG;
    for (size_t i = 0; i < count; i++) {
        if (!pieces[i])
            return PK_E_ARG;
        if (!pieces[i]->done)
            return PK_E_NOT_DONE;
        if (pieces[i]->mode != PK_MODE_TRIAL)
            return PK_E_OPTIONS; /* only divisor ranges merge */
        if (mpz_cmp(pieces[i]->n, pieces[0]->n) != 0)
            return PK_E_OPTIONS;
    }
    pk_job **sorted = malloc(count * sizeof *sorted);
    if (!sorted)
        return PK_E_NOMEM;
    memcpy(sorted, pieces, count * sizeof *sorted);
    qsort(sorted, count, sizeof *sorted, cmp_range);
    uint64_t lo = sorted[0]->from, hi = sorted[0]->bound;
    for (size_t i = 1; i < count; i++) {
        if (sorted[i]->from > hi + 1) {
            free(sorted);
            return PK_E_OPTIONS;
        }
        if (sorted[i]->bound > hi)
            hi = sorted[i]->bound;
    }

    pk_job *job = pk_job_alloc();
    int rc = job ? PK_OK : PK_E_NOMEM;
    if (rc == PK_OK) {
        rc = pk_job_set_candidate(job, sorted[0]->n_text, sorted[0]->n_len);
    }
    if (rc == PK_OK) {
        mpz_set(job->cof, job->n);
        job->from = lo;
        job->bound = hi;
        job->max_digits = sorted[0]->max_digits;
        job->bpsw_digits = sorted[0]->bpsw_digits;
        job->dispatch = sorted[0]->dispatch;
        for (size_t i = 0; i < count; i++) {
            job->tested += sorted[i]->tested;
            job->work += sorted[i]->work;
        }
    }
    /* Union of the factors; a prime found by two pieces must agree. */
    for (size_t i = 0; rc == PK_OK && i < count; i++) {
        for (size_t f = 0; rc == PK_OK && f < sorted[i]->factor_count; f++) {
            const pk_factor *pf = &sorted[i]->factors[f];
            size_t k = 0;
            while (k < job->factor_count && mpz_cmp(job->factors[k].prime, pf->prime) != 0)
                k++;
            if (k < job->factor_count) {
                if (job->factors[k].exponent != pf->exponent)
                    rc = PK_E_CHECKPOINT_STATE;
                continue;
            }
            for (uint64_t e = 0; rc == PK_OK && e < pf->exponent; e++) {
                if (!mpz_divisible_p(job->cof, pf->prime))
                    rc = PK_E_CHECKPOINT_STATE;
                else
                    mpz_divexact(job->cof, job->cof, pf->prime);
            }
            if (rc == PK_OK)
                rc = pk_job_add_factor(job, pf->prime, pf->exponent);
        }
    }
    free(sorted);
    if (rc == PK_OK) {
        /* Every piece either reached its bound or stopped past the square root
           of its own cofactor, which is at least the merged one's: the union
           counts as tried up to hi. */
        pk_job_refresh_bound(job);
        job->next = hi + 1;
        rc = pk_job_finish(job);
    }
    if (rc != PK_OK) {
        pk_job_destroy(job);
        return rc;
    }
    *out = job;
    return PK_OK;
}
