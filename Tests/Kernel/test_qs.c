/*
 * test_qs.c — the quadratic sieve (CKernel/factor/qs.h, private; linked
 * into the test binary directly) and the complete jobs that use it for
 * parts of 80 to 230 bits.
 *
 * Oracles: multiplication and GMP's primality test. Numbers come from the
 * run's seeded generator (fixed by default).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkt.h"
#include "factor/qs.h"

/* Split n with pk_qs, `budget` units per call (0: random budgets from rng).
   Returns 1 with factor set, else 0 (a failure is reported). */
static int qs_split(const mpz_t n, uint64_t budget, pkt_rng *rng, mpz_t factor, uint64_t *work, const char *what)
{
    pk_qs *q = pk_qs_new(n);
    PKT_CHECK(q != NULL, "%s: pk_qs_new failed", what);
    if (!q)
        return 0;
    int rc = 0;
    for (unsigned calls = 0; rc == 0 && calls < (1u << 24); calls++) {
        uint64_t b = budget ? budget : 1 + pkt_rand_below(rng, (uint64_t)1 << (pkt_rand_below(rng, 22) + 1));
        uint64_t used = 0, before = pk_qs_work(q);
        double f0 = pk_qs_fraction(q);
        rc = pk_qs_run(q, b, factor, &used);
        PKT_CHECK(pk_qs_work(q) - before == used, "%s: used %llu but work grew by %llu", what,
                  (unsigned long long)used, (unsigned long long)(pk_qs_work(q) - before));
        PKT_CHECK(pk_qs_fraction(q) >= f0 && pk_qs_fraction(q) <= 1, "%s: fraction %g after %g", what,
                  pk_qs_fraction(q), f0);
    }
    PKT_CHECK(rc == 1, "%s: pk_qs_run returned %d", what, rc);
    if (rc == 1)
        PKT_CHECK(mpz_cmp_ui(factor, 1) > 0 && mpz_cmp(factor, n) < 0 && mpz_divisible_p(n, factor),
                  "%s: %s is not a proper factor", what, mpz_get_str(NULL, 10, factor));
    *work = pk_qs_work(q);
    pk_qs_free(q);
    return rc == 1;
}

static void semiprime(pkt_rng *rng, unsigned bits, mpz_t n, mpz_t p, mpz_t q)
{
    do {
        pkt_rand_prime(rng, p, bits / 2);
        pkt_rand_prime(rng, q, bits - bits / 2);
        mpz_mul(n, p, q);
    } while (mpz_sizeinbase(n, 2) != bits || mpz_cmp(p, q) == 0);
}

void test_qs_balanced_semiprimes_of_70_100_128_160_bits_split(void)
{
    pkt_say("checks: pk_qs splits balanced semiprimes of 70, 100, 128 and 160 bits into their two primes "
            "(the factor divides n and both it and n/factor are the planted primes, GMP-prime)");
    static const unsigned bits[] = {70, 100, 128, 160};
    const unsigned counts[] = {PKT_SIZE(6, 3), PKT_SIZE(4, 2), PKT_SIZE(2, 1), 1};
    pkt_rng rng;
    pkt_rng_for(&rng, "qs-balanced");
    mpz_t n, p, q, f, g;
    mpz_inits(n, p, q, f, g, NULL);
    for (size_t b = 0; b < sizeof bits / sizeof bits[0]; b++) {
        for (unsigned k = 0; k < counts[b]; k++) {
            semiprime(&rng, bits[b], n, p, q);
            char what[64];
            snprintf(what, sizeof what, "%u-bit semiprime %u", bits[b], k);
            uint64_t work;
            if (!qs_split(n, (uint64_t)1 << 20, &rng, f, &work, what))
                continue;
            mpz_divexact(g, n, f);
            PKT_CHECK((mpz_cmp(f, p) == 0 && mpz_cmp(g, q) == 0) || (mpz_cmp(f, q) == 0 && mpz_cmp(g, p) == 0),
                      "%s: split into other numbers than the planted primes", what);
            PKT_CHECK(mpz_probab_prime_p(f, 25) && mpz_probab_prime_p(g, 25), "%s: a part is not prime", what);
        }
    }
    mpz_clears(n, p, q, f, g, NULL);
}

void test_qs_three_primes_and_square_times_prime_give_proper_factors(void)
{
    pkt_say("checks: pk_qs finds a proper factor of products of three primes (about 35 bits each) and of "
            "p^2 q (p, q of 40 bits), a product of the planted primes");
    pkt_rng rng;
    pkt_rng_for(&rng, "qs-three");
    mpz_t n, p, q, r, f, t;
    mpz_inits(n, p, q, r, f, t, NULL);
    for (unsigned k = 0; k < PKT_SIZE(4, 2); k++) {
        pkt_rand_prime(&rng, p, 34 + (unsigned)pkt_rand_below(&rng, 4));
        pkt_rand_prime(&rng, q, 34 + (unsigned)pkt_rand_below(&rng, 4));
        pkt_rand_prime(&rng, r, 34 + (unsigned)pkt_rand_below(&rng, 4));
        int square = k % 2 == 1; /* p^2 q */
        if (square)
            mpz_set(r, p);
        mpz_mul(n, p, q);
        mpz_mul(n, n, r);
        if (mpz_cmp(p, q) == 0 || mpz_cmp(q, r) == 0 || mpz_perfect_power_p(n))
            continue;
        const char *what = square ? "p^2 q" : "p q r";
        uint64_t work;
        if (!qs_split(n, (uint64_t)1 << 20, &rng, f, &work, what))
            continue;
        /* f is a product of a sub-multiset of {p, q, r}: dividing them out leaves 1. */
        mpz_set(t, f);
        if (mpz_divisible_p(t, p))
            mpz_divexact(t, t, p);
        if (mpz_divisible_p(t, q))
            mpz_divexact(t, t, q);
        if (mpz_divisible_p(t, r))
            mpz_divexact(t, t, r);
        PKT_CHECK(mpz_cmp_ui(t, 1) == 0, "%s: the factor is not made of the planted primes", what);
    }
    mpz_clears(n, p, q, r, f, t, NULL);
}

void test_qs_any_budget_cut_gives_the_same_factor_and_work(void)
{
    pkt_say("checks: pk_qs run with random budgets (1 to 2^22 units per call) ends with the factor and the work "
            "of a run with one large budget per call (deterministic pieces); a fresh state repeats it exactly");
    pkt_rng rng;
    pkt_rng_for(&rng, "qs-budgets");
    mpz_t n, p, q, f1, f2, f3;
    mpz_inits(n, p, q, f1, f2, f3, NULL);
    static const unsigned bits[] = {84, 112, 124};
    for (size_t b = 0; b < sizeof bits / sizeof bits[0]; b++) {
        semiprime(&rng, bits[b], n, p, q);
        uint64_t w1 = 0, w2 = 0, w3 = 0;
        int ok = qs_split(n, UINT64_MAX, &rng, f1, &w1, "one budget");
        ok &= qs_split(n, 0, &rng, f2, &w2, "random budgets");
        ok &= qs_split(n, 1, &rng, f3, &w3, "one piece per call");
        if (!ok)
            continue;
        PKT_CHECK(mpz_cmp(f1, f2) == 0 && mpz_cmp(f1, f3) == 0, "%u bits: the factors differ", bits[b]);
        PKT_CHECK(w1 == w2 && w1 == w3, "%u bits: work %llu, %llu, %llu", bits[b], (unsigned long long)w1,
                  (unsigned long long)w2, (unsigned long long)w3);
    }
    mpz_clears(n, p, q, f1, f2, f3, NULL);
}

/* ----------------------------------------------------------- complete jobs */

static pk_job *make_job(const mpz_t n)
{
    char *dec = mpz_get_str(NULL, 10, n);
    pk_options o;
    pk_options_init(&o);
    pk_job *job = NULL;
    PKT_CHECK_STATUS(pk_job_create(dec, &o, &job), PK_OK, dec);
    free(dec);
    return job;
}

/* The answer as text "p^e p^e ...", every prime checked with GMP, product n. */
static char *answer_text(pk_job *job, const mpz_t n, const char *what)
{
    pk_result r;
    memset(&r, 0, sizeof r);
    r.size = sizeof r;
    PKT_CHECK_STATUS(pk_job_result(job, &r), PK_OK, what);
    PKT_CHECK(r.complete, "%s: not complete", what);
    char **fs = NULL;
    uint64_t *es = NULL;
    size_t cap = 16;
    char *out = malloc(cap);
    out[0] = 0;
    mpz_t prod, p;
    mpz_inits(prod, p, NULL);
    mpz_set_ui(prod, 1);
    if (pkt_factors_read(job, r.factor_count, &fs, &es) == PK_OK) {
        for (size_t i = 0; i < r.factor_count; i++) {
            mpz_set_str(p, fs[i], 10);
            PKT_CHECK(mpz_probab_prime_p(p, 25), "%s: %s is not prime", what, fs[i]);
            mpz_pow_ui(p, p, es[i]);
            mpz_mul(prod, prod, p);
            size_t need = strlen(out) + strlen(fs[i]) + 32;
            if (need > cap) {
                cap = 2 * need;
                out = realloc(out, cap);
            }
            sprintf(out + strlen(out), "%s^%llu ", fs[i], (unsigned long long)es[i]);
        }
        pkt_factors_free(r.factor_count, fs, es);
    }
    PKT_CHECK(mpz_cmp(prod, n) == 0, "%s: the factors do not multiply back", what);
    mpz_clears(prod, p, NULL);
    return out;
}

typedef struct qs_restores {
    pkt_rng *rng;
    const char *what;
    int seen, restores;
} qs_restores;

static uint64_t qs_budget(void *ctx, uint64_t step)
{
    (void)step;
    return 1 + pkt_rand_below(((qs_restores *)ctx)->rng, (uint64_t)1 << 21);
}

static void qs_after(void *ctx, pk_job **job, int st)
{
    qs_restores *qr = ctx;
    pk_progress pr;
    pkt_progress(*job, &pr);
    if (st != PK_MORE || !pr.stage || strcmp(pr.stage, "qs") != 0 || qr->restores >= 2)
        return;
    qr->seen = 1;
    pk_job *back = pkt_restore_copy(*job, qr->what, "\nsplit qs\n", 0);
    qr->restores += back != *job;
    *job = back;
}

void test_qs_jobs_interrupted_in_the_sieve_restore_to_the_same_answer(void)
{
    pkt_say("checks: complete jobs on balanced semiprimes of 100, 128 and 160 bits and on p q r, p^2 q reach the "
            "stage \"qs\"; interrupted there, checkpointed (the split line says qs), restored in a new job and "
            "finished, they give the answer of an uninterrupted job, which multiplies back into primes");
    pkt_rng rng;
    pkt_rng_for(&rng, "qs-jobs");
    mpz_t n, p, q, r;
    mpz_inits(n, p, q, r, NULL);
    for (unsigned k = 0; k < 5; k++) {
        if (k < 3) {
            semiprime(&rng, k == 0 ? 100 : k == 1 ? 128 : 160, n, p, q);
            if (PKT_SANITIZED && k == 2)
                continue;
        } else {
            pkt_rand_prime(&rng, p, 38);
            pkt_rand_prime(&rng, q, 40);
            pkt_rand_prime(&rng, r, 42);
            if (k == 4)
                mpz_set(r, p);
            mpz_mul(n, p, q);
            mpz_mul(n, n, r);
        }
        char what[48];
        snprintf(what, sizeof what, "job %u (%zu bits)", k, mpz_sizeinbase(n, 2));
        pk_job *job = make_job(n);
        if (!job)
            continue;
        int st;
        while ((st = pk_job_step(job, (uint64_t)1 << 22)) == PK_MORE) {
        }
        PKT_CHECK_STATUS(st, PK_DONE, what);
        char *want = answer_text(job, n, what);
        pk_job_destroy(job);

        /* Again, restored from a checkpoint at the first two steps that leave it in the sieve. */
        job = make_job(n);
        qs_restores qr = {&rng, what, 0, 0};
        pkt_drive d = {0, qs_budget, qs_after, &qr, 1u << 22};
        st = pkt_drive_job(&job, &d);
        int seen = qr.seen;
        PKT_CHECK_STATUS(st, PK_DONE, what);
        PKT_CHECK(seen || k >= 3, "%s: never in the stage qs", what); /* p q r may split before QS */
        char *got = answer_text(job, n, what);
        PKT_CHECK(strcmp(got, want) == 0, "%s: restored answer %s, uninterrupted %s", what, got, want);
        free(got);
        free(want);
        pk_job_destroy(job);
    }
    mpz_clears(n, p, q, r, NULL);
}
