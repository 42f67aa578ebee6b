/*
 * td_gmp.c — trial division of a cofactor above 128 bits.
 *
 * Divisors are the primes of a segmented sieve (sieve.c), one segment of
 * PK_SIEVE_SPAN integers at a time. Two strategies, chosen by the size of the
 * cofactor:
 *
 * Word products (cofactors below PK_ACC_MIN_LIMBS limbs). Primes are packed
 * into word-size products (two to four primes per 64-bit word) and the
 * cofactor is read once per product with mpn_mod_1; the word remainder tells
 * which of its primes divide. Products are taken in groups of about
 * PK_GROUP_LIMB_OPS limb operations; the interrupt flag and the budget are
 * checked between groups, and every group boundary is a resume point.
 *
 * Accumulate (larger cofactors). The product P of all primes of a segment is
 * built once (a product tree, or taken from a pk_cache) and folded into an
 * accumulator, acc = acc * P mod cof, so the cofactor is read once per
 * segment instead of once per word. Every few segments (the window grows
 * with the size of the cofactor, keeping the gcd a small share of the time)
 * g = gcd(acc, cof) is the product of the primes of the window that divide
 * the cofactor; g is split by word-product trial division over the window,
 * which is quick because g is small. Segment boundaries are resume points:
 * the accumulator and the start of its window are part of the checkpoint.
 */
#include <stdlib.h>

#include "pk_internal.h"

#define PK_GROUP_LIMB_OPS (UINT64_C(1) << 17)
#define PK_ACC_MIN_LIMBS 192u
/* Accumulate mode does a prime's work in a fraction of a word-product read:
   its units are scaled so that a unit costs about the same time on both. */
#define PK_ACC_UNIT_DIVISOR 8u

void pk_tdgmp_release(pk_job *job)
{
    free(job->primes);
    job->primes = NULL;
    job->prime_count = job->prime_pos = 0;
    job->primes_lo = job->primes_hi = 0;
    pk_sieve_free(&job->sieve);
    for (size_t i = 0; i < job->tree_cap; i++)
        mpz_clear(job->tree[i]);
    free(job->tree);
    job->tree = NULL;
    job->tree_cap = 0;
}

static int ensure_primes_buffer(pk_job *job)
{
    if (!job->primes) {
        job->primes = malloc((PK_SIEVE_SPAN / 2 + 2) * sizeof *job->primes);
        if (!job->primes)
            return PK_E_NOMEM;
    }
    return PK_OK;
}

/* End of the segment holding lo: segments are aligned to PK_SIEVE_SPAN. */
static uint64_t segment_end(const pk_job *job, uint64_t lo)
{
    uint64_t end = (lo / PK_SIEVE_SPAN + 1) * PK_SIEVE_SPAN;
    return end > job->eff_bound ? job->eff_bound + 1 : end;
}

/* ------------------------------------------------------- word products */

/* Make primes[prime_pos] the first prime >= job->next, sieving as needed.
   Returns 1 when no prime is left up to eff_bound. */
static int load_primes(pk_job *job)
{
    if (job->primes && job->next >= job->primes_lo && job->next < job->primes_hi) {
        while (job->prime_pos < job->prime_count && job->primes[job->prime_pos] < job->next)
            job->prime_pos++;
        if (job->prime_pos < job->prime_count)
            return 0;
        job->next = job->primes_hi; /* the segment is used up */
    }
    int rc = ensure_primes_buffer(job);
    if (rc != PK_OK)
        return rc;
    while (job->next <= job->eff_bound) {
        uint64_t lo = job->next, hi = segment_end(job, lo);
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
    }
    return 1;
}

static int word_products(pk_job *job, uint64_t *budget)
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
        while (tested < max_primes && job->prime_pos < job->prime_count && !hit) {
            const uint64_t *p = &job->primes[job->prime_pos];
            long avail = job->prime_count - job->prime_pos;
            if ((uint64_t)avail > max_primes - tested)
                avail = (long)(max_primes - tested);
            pk_u128 prod = p[0];
            long k = 1;
            while (k < avail && k < 4 && prod * p[k] <= (pk_u128)PK_U64_MAX)
                prod *= p[k++];
            uint64_t r = mpn_mod_1(np, nn, (mp_limb_t)prod);
            long used = k;
            for (long i = 0; i < k; i++) {
                if (r % p[i] == 0) {
                    hit = p[i];
                    used = i + 1;
                    break;
                }
            }
            tested += (uint64_t)used;
            job->prime_pos += used;
            last = p[used - 1];
        }
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
            return rc < 0 ? rc : PK_PATH_CONTINUE; /* the cofactor changed */
        }
    }
    return PK_PATH_CONTINUE;
}

/* ------------------------------------------------------------ accumulate */

static int ensure_tree(pk_job *job, size_t n)
{
    if (n <= job->tree_cap)
        return PK_OK;
    mpz_t *t = realloc(job->tree, n * sizeof *t);
    if (!t)
        return PK_E_NOMEM;
    for (size_t i = job->tree_cap; i < n; i++)
        mpz_init(t[i]);
    job->tree = t;
    job->tree_cap = n;
    return PK_OK;
}

/*
 * The product of the primes in [lo, hi) (one segment at most). Returns a
 * pointer to it (job scratch or a cache entry) and the prime count, or NULL
 * when memory runs out.
 */
static mpz_srcptr segment_product(pk_job *job, uint64_t lo, uint64_t hi, long *count)
{
    uint64_t k = lo / PK_SIEVE_SPAN;
    int whole = lo % PK_SIEVE_SPAN == 0 && hi == lo + PK_SIEVE_SPAN;
    if (whole) {
        const pk_cache_entry *e = pk_cache_get(job->cache, k);
        if (e) {
            *count = e->count;
            return e->product;
        }
    }
    if (ensure_primes_buffer(job) != PK_OK)
        return NULL;
    long n = pk_sieve_primes(&job->sieve, lo, hi, job->primes);
    if (n < 0 || ensure_tree(job, (size_t)n / 2 + 2) != PK_OK)
        return NULL;
    /* Leaves: word products. */
    size_t words = 0;
    for (long i = 0; i < n;) {
        pk_u128 prod = job->primes[i++];
        while (i < n && prod * job->primes[i] <= (pk_u128)PK_U64_MAX)
            prod *= job->primes[i++];
        mpz_set_ui(job->tree[words++], (unsigned long)prod);
    }
    if (words == 0)
        mpz_set_ui(job->tree[words++], 1);
    /* Pairwise products, level by level, in place. */
    while (words > 1) {
        size_t half = 0;
        for (size_t i = 0; i + 1 < words; i += 2)
            mpz_mul(job->tree[half++], job->tree[i], job->tree[i + 1]);
        if (words & 1)
            mpz_swap(job->tree[half++], job->tree[words - 1]);
        words = half;
    }
    *count = n;
    if (whole)
        pk_cache_put(job->cache, k, job->tree[0], n);
    return job->tree[0];
}

/* Segments per gcd: the gcd costs about as much as a few dozen folds at
   100,000 digits and a few hundred at 1,000,000. */
static uint64_t window_segments(size_t limbs)
{
    uint64_t w = limbs / 32;
    return w < 4 ? 4 : w > 4096 ? 4096 : w;
}

/* Split g (a product of distinct primes of [lo, hi)) and divide them out. */
static int split_window(pk_job *job, const mpz_t g, uint64_t lo, uint64_t hi)
{
    pk_job *sub = pk_job_alloc();
    if (!sub)
        return PK_E_NOMEM;
    mpz_set(sub->n, g);
    mpz_set(sub->cof, g);
    sub->from = lo;
    sub->bound = hi - 1;
    sub->next = lo;
    sub->bpsw_digits = 0;
    sub->no_accumulate = 1;
    sub->dispatch = job->dispatch;
    pk_job_refresh_bound(sub);
    int rc;
    while ((rc = pk_job_step(sub, PK_U64_MAX)) == PK_MORE)
        ;
    if (rc == PK_DONE) {
        rc = PK_OK;
        for (size_t i = 0; i < sub->factor_count && rc == PK_OK; i++) {
            if (!mpz_fits_ulong_p(sub->factors[i].prime)) {
                rc = PK_E_INTERNAL;
                break;
            }
            int r = pk_job_divide_out(job, mpz_get_ui(sub->factors[i].prime));
            if (r < 0)
                rc = r;
        }
    }
    pk_job_destroy(sub);
    return rc;
}

int pk_tdgmp_flush(pk_job *job)
{
    if (job->acc_from == PK_ACC_IDLE)
        return PK_OK;
    if (job->acc_from >= job->next) {
        job->acc_from = PK_ACC_IDLE;
        return PK_OK;
    }
    int rc = PK_OK;
    mpz_t g;
    mpz_init(g);
    mpz_gcd(g, job->acc, job->cof);
    uint64_t lo = job->acc_from, hi = job->next;
    mpz_set_ui(job->acc, 1);
    job->acc_from = PK_ACC_IDLE;
    if (mpz_cmp_ui(g, 1) != 0)
        rc = split_window(job, g, lo, hi);
    mpz_clear(g);
    return rc;
}

static int accumulate(pk_job *job, uint64_t *budget)
{
    size_t limbs = mpz_size(job->cof);
    uint64_t window = window_segments(limbs) * PK_SIEVE_SPAN;
    if (job->acc_from == PK_ACC_IDLE) {
        job->acc_from = job->next;
        mpz_set_ui(job->acc, 1);
    }
    while (job->next <= job->eff_bound) {
        if (pk_job_take_interrupt(job))
            return PK_PATH_INTERRUPT;
        if (*budget < limbs) {
            *budget = 0;
            return PK_PATH_BUDGET;
        }
        uint64_t lo = job->next, hi = segment_end(job, lo);
        long count;
        mpz_srcptr p = segment_product(job, lo, hi, &count);
        if (!p)
            return PK_E_NOMEM;
        if (mpz_cmp(p, job->cof) >= 0) {
            mpz_t r;
            mpz_init(r);
            mpz_tdiv_r(r, p, job->cof);
            mpz_mul(job->acc, job->acc, r);
            mpz_clear(r);
        } else {
            mpz_mul(job->acc, job->acc, p);
        }
        mpz_tdiv_r(job->acc, job->acc, job->cof);
        uint64_t units = (uint64_t)count * limbs / PK_ACC_UNIT_DIVISOR + 1;
        job->tested += (uint64_t)count;
        job->work += units;
        *budget = *budget > units ? *budget - units : 0;
        job->next = hi;
        if (job->next > job->eff_bound || job->next - job->acc_from >= window) {
            size_t before = job->factor_count;
            int rc = pk_tdgmp_flush(job);
            if (rc < 0)
                return rc;
            if (job->factor_count != before)
                return PK_PATH_CONTINUE; /* the cofactor changed */
        }
    }
    return PK_PATH_CONTINUE;
}

int pk_tdgmp(pk_job *job, uint64_t *budget)
{
    if (job->acc_from != PK_ACC_IDLE || (!job->no_accumulate && mpz_size(job->cof) >= PK_ACC_MIN_LIMBS))
        return accumulate(job, budget);
    return word_products(job, budget);
}
