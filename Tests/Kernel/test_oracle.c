/*
 * test_oracle.c — answers checked against oracles: brute force below 10^6,
 * GMP for planted random candidates, and known facts at the edges (2^64,
 * 2^128, Carmichael numbers, pseudoprimes, prime powers near 2^32).
 */
#define _POSIX_C_SOURCE 200809L
#include "pkt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Run one candidate and compare with the oracle; returns 1 when equal. */
static int check_against_oracle(const mpz_t n, uint64_t bound, size_t bpsw_digits, const mpz_t *hints,
                                size_t nhints, int simd, const char *what)
{
    pkt_answer want, got;
    pkt_oracle(n, bound, bpsw_digits, hints, nhints, &want, NULL);
    char *cand = mpz_get_str(NULL, 10, n);
    char bstr[24];
    pkt_u64(bound, bstr);
    int st = pkt_factor(cand, NULL, bound ? bstr : NULL, bpsw_digits, simd, &got);
    int ok = 0;
    if (st != PK_OK) {
        PKT_CHECK(0, "%s: n=%s bound=%s: %s", what, cand, bound ? bstr : "default", pk_status_name(st));
    } else {
        char why[256];
        ok = pkt_answer_equal(&got, &want, why, sizeof why);
        if (!ok) {
            char g[512], w[512];
            pkt_answer_format(&got, g, sizeof g);
            pkt_answer_format(&want, w, sizeof w);
            PKT_CHECK(0, "%s: n=%s bound=%s: %s\n      got  %s\n      want %s", what, cand,
                      bound ? bstr : "default", why, g, w);
        }
        ok &= pkt_check_answer_facts(n, &got, what);
    }
    free(cand);
    pkt_answer_free(&want);
    pkt_answer_free(&got);
    return ok;
}

void test_every_n_below_a_million_matches_brute_force(void)
{
    uint32_t limit = PKT_SIZE(1000000u, 500000u);
    pkt_say("checks: every n in [2, %u) with default options: factors, exponents, cofactor 1, is_prime, "
            "certainty against a smallest-prime-factor table%s",
            limit, PKT_SANITIZED ? " (limit reduced from 10^6 for the sanitizer build)" : "");
    uint32_t *spf = calloc(limit, sizeof *spf);
    for (uint32_t i = 2; i < limit; i++)
        if (!spf[i])
            for (uint32_t j = i; j < limit; j += i)
                if (!spf[j]) spf[j] = i;
    char cand[16], buf[32];
    uint32_t primes = 0;
    for (uint32_t n = 2; n < limit; n++) {
        snprintf(cand, sizeof cand, "%u", n);
        pk_job *job = NULL;
        int st = pk_job_create(cand, NULL, &job);
        if (st != PK_OK) {
            PKT_CHECK(0, "create %u: %s", n, pk_status_name(st));
            PKT_BAIL_IF_MANY();
            continue;
        }
        st = pk_job_step(job, UINT64_MAX);
        PKT_CHECK_STATUS(st, PK_DONE, cand);
        pk_result r;
        r.size = sizeof r;
        st = pk_job_result(job, &r);
        if (st != PK_OK) {
            PKT_CHECK(0, "result %u: %s", n, pk_status_name(st));
            pk_job_destroy(job);
            PKT_BAIL_IF_MANY();
            continue;
        }
        int is_prime = spf[n] == n;
        primes += (uint32_t)is_prime;
        /* Expected factorization from the table. */
        uint32_t m = n, want_p[16], want_e[16], k = 0;
        while (m > 1) {
            uint32_t p = spf[m], e = 0;
            while (m % p == 0) m /= p, e++;
            want_p[k] = p;
            want_e[k++] = e;
        }
        PKT_CHECK(r.factor_count == k, "%u: %zu factors, want %u", n, r.factor_count, k);
        for (uint32_t i = 0; i < k && i < r.factor_count; i++) {
            uint64_t e = 0;
            size_t len = 0;
            st = pk_job_factor(job, i, buf, sizeof buf, &len, &e);
            unsigned long got = strtoul(buf, NULL, 10);
            PKT_CHECK(st == PK_OK && got == want_p[i] && e == want_e[i], "%u: factor %u is %s^%llu, want %u^%u", n,
                      i, st == PK_OK ? buf : pk_status_name(st), (unsigned long long)e, want_p[i], want_e[i]);
        }
        PKT_CHECK(r.cofactor_status == PK_COFACTOR_ONE && r.complete == 1 && r.cofactor_digits == 1,
                  "%u: cofactor status %d complete %d digits %zu", n, r.cofactor_status, r.complete,
                  r.cofactor_digits);
        PKT_CHECK(r.is_prime == (is_prime ? PK_PRIME_YES : PK_PRIME_NO), "%u: is_prime %d", n, r.is_prime);
        PKT_CHECK(r.certainty == PK_CERTAINTY_PROVEN, "%u: certainty %d", n, r.certainty);
        pk_progress p;
        pkt_progress(job, &p);
        PKT_CHECK(p.done == 1 && p.percent == 100.0 && p.factors_found == k, "%u: progress done %d %.17g%% %zu",
                  n, p.done, p.percent, p.factors_found);
        pk_job_destroy(job);
        PKT_BAIL_IF_MANY();
    }
    pkt_say("%u candidates, %u of them prime", limit - 2, primes);
    free(spf);
}

/* Random planted candidates of a size class, bound chosen per case. */
static void planted_sweep(const char *label, unsigned count, unsigned min_bits, unsigned max_bits,
                          unsigned small_bits)
{
    pkt_rng rng;
    pkt_rng_for(&rng, label);
    pkt_planted pl;
    pkt_planted_init(&pl);
    unsigned with_default = 0, complete = 0, statuses[4] = {0};
    for (unsigned i = 0; i < count; i++) {
        pkt_planted_make(&rng, &pl, min_bits, max_bits, small_bits);
        /* Default bound when the run stays short; otherwise a random bound. */
        pkt_answer want;
        uint64_t stop = 0, bound;
        pkt_oracle(pl.n, 0, 0, (const mpz_t *)pl.primes, pl.nprimes, &want, &stop);
        pkt_answer_free(&want);
        if (stop <= (1u << 18) && pkt_rand_below(&rng, 3) != 0) {
            bound = 0;
            with_default++;
        } else {
            bound = pkt_rand_range(&rng, 2, (uint64_t)1 << pkt_rand_range(&rng, 2, 16));
        }
        pkt_oracle(pl.n, bound, 0, (const mpz_t *)pl.primes, pl.nprimes, &want, NULL);
        complete += (unsigned)want.res.complete;
        statuses[want.res.cofactor_status & 3]++;
        pkt_answer_free(&want);
        check_against_oracle(pl.n, bound, 0, (const mpz_t *)pl.primes, pl.nprimes, 0, label);
        PKT_BAIL_IF_MANY();
    }
    pkt_say("%u candidates (%u with the default bound); cofactor one %u, probable prime %u, composite %u; "
            "%u complete",
            count, with_default, statuses[0], statuses[1], statuses[2], complete);
    pkt_planted_clear(&pl);
}

void test_random_64_bit_planted_factors_match_gmp(void)
{
    unsigned count = PKT_SIZE(10000u, 10000u);
    pkt_say("checks: %u random n < 2^64 built from planted primes (2..16-bit small ones and a tail of 0-2 "
            "larger primes) against the GMP oracle, multiplied back to n",
            count);
    planted_sweep("random64", count, 20, 64, 16);
}

void test_random_65_to_200_bit_planted_factors_match_gmp(void)
{
    unsigned count = PKT_SIZE(1000u, 1000u);
    pkt_say("checks: %u random 65..200-bit n from planted primes against the GMP oracle (factors prime per "
            "mpz_probab_prime_p, product x cofactor == n)",
            count);
    planted_sweep("random200", count, 65, 200, 20);
}

static void set_str(mpz_t z, const char *s) { mpz_set_str(z, s, 10); }

void test_carmichael_and_pseudoprime_remainders_are_composite(void)
{
    pkt_say("checks: Carmichael numbers (Korselt's criterion below 10^5, Chernick (6k+1)(12k+1)(18k+1) near 2^50 "
            "and 2^80), strong pseudoprimes to many bases and strong Lucas pseudoprimes: fully factored with the "
            "default bound, and COMPOSITE when left above a small bound");
    /* Carmichael numbers below 10^5 by Korselt's criterion, computed here. */
    uint32_t lim = 100000, *spf = calloc(lim, sizeof *spf);
    for (uint32_t i = 2; i < lim; i++)
        if (!spf[i])
            for (uint32_t j = i; j < lim; j += i)
                if (!spf[j]) spf[j] = i;
    mpz_t n;
    mpz_init(n);
    unsigned found = 0;
    for (uint32_t c = 3; c < lim; c += 2) {
        if (spf[c] == c) continue;
        uint32_t m = c;
        int ok = 1, factors = 0;
        while (m > 1 && ok) {
            uint32_t p = spf[m];
            m /= p;
            factors++;
            if (m % p == 0 || (c - 1) % (p - 1) != 0) ok = 0;
        }
        if (!ok || factors < 3) continue;
        found++;
        mpz_set_ui(n, c);
        check_against_oracle(n, 0, 0, NULL, 0, 0, "carmichael default bound");
        check_against_oracle(n, spf[c] - 1 >= 2 ? spf[c] - 1 : 2, 0, NULL, 0, 0, "carmichael above bound");
    }
    pkt_say("%u Carmichael numbers below %u (561 first)", found, lim);
    PKT_CHECK(found == 16, "Korselt's criterion found %u Carmichael numbers below 10^5, expected 16", found);
    free(spf);

    /* Chernick's form: 6k+1, 12k+1, 18k+1 all prime. */
    pkt_rng rng;
    pkt_rng_for(&rng, "chernick");
    mpz_t f[3];
    for (int i = 0; i < 3; i++) mpz_init(f[i]);
    static const unsigned kbits[] = {14, 14, 22, 22};
    for (int t = 0; t < 4; t++) {
        uint64_t k = pkt_rand_range(&rng, (uint64_t)1 << (kbits[t] - 1), (uint64_t)1 << kbits[t]);
        for (;; k++) {
            mpz_set_ui(f[0], 6 * k + 1);
            mpz_set_ui(f[1], 12 * k + 1);
            mpz_set_ui(f[2], 18 * k + 1);
            if (mpz_probab_prime_p(f[0], 30) && mpz_probab_prime_p(f[1], 30) && mpz_probab_prime_p(f[2], 30)) break;
        }
        mpz_mul(n, f[0], f[1]);
        mpz_mul(n, n, f[2]);
        char *s = mpz_get_str(NULL, 10, n);
        pkt_say("Chernick k=%llu: %s (%zu bits)", (unsigned long long)k, s, mpz_sizeinbase(n, 2));
        free(s);
        if (kbits[t] == 14) check_against_oracle(n, 0, 0, (const mpz_t *)f, 3, 0, "chernick default bound");
        check_against_oracle(n, 1000, 0, (const mpz_t *)f, 3, 0, "chernick above bound 1000");
    }
    /* Largest one: default bound needs ~2^26 divisors; run it once in the optimised build. */
    if (!PKT_SANITIZED) check_against_oracle(n, 0, 0, (const mpz_t *)f, 3, 0, "chernick 2^80 default bound");
    for (int i = 0; i < 3; i++) mpz_clear(f[i]);

    /* Strong pseudoprimes to the first 9 and 12 prime bases (known factorizations, checked here). */
    static const struct { const char *n, *p[3]; } spsp[] = {
        {"3825123056546413051", {"149491", "747451", "34233211"}},
        {"318665857834031151167461", {"399165290221", "798330580441", NULL}},
    };
    mpz_t prod, p;
    mpz_init(prod);
    mpz_init(p);
    for (int i = 0; i < 2; i++) {
        set_str(n, spsp[i].n);
        mpz_set_ui(prod, 1);
        for (int j = 0; j < 3 && spsp[i].p[j]; j++) {
            set_str(p, spsp[i].p[j]);
            mpz_mul(prod, prod, p);
        }
        PKT_CHECK(mpz_cmp(prod, n) == 0, "fixture: %s is not the product of its listed factors", spsp[i].n);
        check_against_oracle(n, 1000, 0, NULL, 0, 0, "strong pseudoprime above bound 1000");
        check_against_oracle(n, 2, 0, NULL, 0, 0, "strong pseudoprime above bound 2");
    }
    mpz_clear(prod);
    mpz_clear(p);
    /* Base-2 strong pseudoprimes and strong Lucas pseudoprimes: BPSW must see through each half. */
    static const unsigned small[] = {2047, 3277, 4033, 4681, 8321, 5459, 5777, 10877, 16109, 18971, 22499, 24569,
                                     25199, 40309, 58519};
    for (size_t i = 0; i < sizeof small / sizeof small[0]; i++) {
        mpz_set_ui(n, small[i]);
        PKT_CHECK(!mpz_probab_prime_p(n, 30), "fixture: %u is prime", small[i]);
        check_against_oracle(n, 2, 0, NULL, 0, 0, "pseudoprime above bound 2");
        check_against_oracle(n, 0, 0, NULL, 0, 0, "pseudoprime default bound");
    }
    mpz_clear(n);
}

/* A job over [from, bound] (bound NULL: default) must find p^k times a small part. */
static void check_power_from_near(const mpz_t p, unsigned k, unsigned long small, const char *from,
                                  const char *bound)
{
    mpz_t n, q;
    mpz_init(n);
    mpz_init(q);
    mpz_pow_ui(n, p, k);
    mpz_mul_ui(n, n, small);
    char *cand = mpz_get_str(NULL, 10, n), *ps = mpz_get_str(NULL, 10, p);
    pkt_answer a;
    int st = pkt_factor(cand, from, bound, 0, 0, &a);
    PKT_CHECK_STATUS(st, PK_OK, cand);
    if (st == PK_OK) {
        pkt_check_answer_facts(n, &a, cand);
        /* small is 1 or a prime below 2^64: it is BPSW-proven and listed too. */
        size_t want_n = small > 1 ? 2 : 1, ip = small > 1 ? 1 : 0;
        PKT_CHECK(a.nfactors == want_n && strcmp(a.factors[ip], ps) == 0 && a.exponents[ip] == k,
                  "%s^%u*%lu from %s: %zu factors, [%zu] = %s^%llu", ps, k, small, from, a.nfactors, ip,
                  a.nfactors > ip ? a.factors[ip] : "-", a.nfactors > ip ? (unsigned long long)a.exponents[ip] : 0ull);
        PKT_CHECK(a.res.cofactor_status == PK_COFACTOR_ONE && a.res.complete && a.res.is_prime == PK_PRIME_NO &&
                      a.res.certainty == PK_CERTAINTY_PROVEN,
                  "%s^%u*%lu: status %d complete %d is_prime %d certainty %d", ps, k, small,
                  a.res.cofactor_status, a.res.complete, a.res.is_prime, a.res.certainty);
    }
    pkt_answer_free(&a);
    free(cand);
    free(ps);
    mpz_clear(n);
    mpz_clear(q);
}

void test_prime_powers_near_2_32_are_found_with_their_exponent(void)
{
    pkt_say("checks: p^k (k = 2..5) and 3*p^2 for the three largest primes below 2^32 and the smallest above, "
            "from a range starting just below p (default bound = floor(sqrt(n)) must reach p exactly), and "
            "4294967291*4294967279");
    mpz_t p, two32, q;
    mpz_init(p);
    mpz_init(q);
    mpz_init_set_ui(two32, 1);
    mpz_mul_2exp(two32, two32, 32);
    /* The three largest primes below 2^32, found with GMP. */
    mpz_t below[3];
    mpz_set(p, two32);
    for (int i = 0; i < 3; i++) {
        mpz_init(below[i]);
        do mpz_sub_ui(p, p, 1); while (!mpz_probab_prime_p(p, 30));
        mpz_set(below[i], p);
    }
    PKT_CHECK(mpz_cmp_ui(below[0], 4294967291ul) == 0, "largest prime below 2^32 is 4294967291");
    char from[24], bound[24];
    for (int i = 0; i < 3; i++) {
        pkt_u64(mpz_get_ui(below[i]) - 3000, from);
        for (unsigned k = 2; k <= 5; k++) check_power_from_near(below[i], k, 1, from, NULL);
        check_power_from_near(below[i], 2, 3, from, NULL);
        /* p^2 with the range ending exactly at p. */
        pkt_u64(mpz_get_ui(below[i]), bound);
        check_power_from_near(below[i], 2, 1, from, bound);
    }
    /* Above 2^32 the default bound is capped at 2^32: give the bound explicitly. */
    mpz_nextprime(p, two32);
    pkt_u64(mpz_get_ui(p) - 3000, from);
    pkt_u64(mpz_get_ui(p) + 1000, bound);
    for (unsigned k = 2; k <= 5; k++) check_power_from_near(p, k, 1, from, bound);

    /* Product of the two largest 32-bit primes. */
    mpz_mul(q, below[0], below[1]);
    char *cand = mpz_get_str(NULL, 10, q);
    pkt_u64(mpz_get_ui(below[1]) - 5000, from);
    pkt_answer a;
    PKT_CHECK_STATUS(pkt_factor(cand, from, NULL, 0, 0, &a), PK_OK, cand);
    if (a.cofactor) {
        pkt_check_answer_facts(q, &a, cand);
        PKT_CHECK(a.nfactors == 2 && a.res.cofactor_status == PK_COFACTOR_ONE, "%s: %zu factors, status %d", cand,
                  a.nfactors, a.res.cofactor_status);
    }
    pkt_answer_free(&a);
    free(cand);
    for (int i = 0; i < 3; i++) mpz_clear(below[i]);
    mpz_clear(p);
    mpz_clear(q);
    mpz_clear(two32);
}

void test_numbers_around_2_64_and_2_128_match_gmp(void)
{
    int span = PKT_SIZE(64, 64);
    pkt_say("checks: 2^64-1, 2^64, 2^64+1 = 274177 x 67280421310721, 2^128-1, 2^128, 2^128+1, 2^64+-k and "
            "2^128+-k for k < %d (bound 2^16), the largest prime below 2^64 and the smallest above", span);
    mpz_t n, h[3];
    mpz_init(n);
    for (int i = 0; i < 3; i++) mpz_init(h[i]);

    /* Default bound, full factorizations (known facts, checked by the oracle's GMP products). */
    mpz_ui_pow_ui(n, 2, 64);
    mpz_sub_ui(n, n, 1);
    mpz_set_ui(h[0], 6700417);
    check_against_oracle(n, 0, 0, (const mpz_t *)h, 1, 0, "2^64-1");
    mpz_add_ui(n, n, 1);
    check_against_oracle(n, 0, 0, NULL, 0, 0, "2^64");
    mpz_add_ui(n, n, 1);
    set_str(h[0], "67280421310721");
    {
        pkt_answer a;
        char *cand = mpz_get_str(NULL, 10, n);
        PKT_CHECK_STATUS(pkt_factor(cand, NULL, NULL, 0, 0, &a), PK_OK, "2^64+1");
        PKT_CHECK(a.nfactors == 2 && strcmp(a.factors[0], "274177") == 0 &&
                      strcmp(a.factors[1], "67280421310721") == 0 && a.res.cofactor_status == PK_COFACTOR_ONE,
                  "2^64+1 is not 274177 x 67280421310721 (%zu factors)", a.nfactors);
        pkt_answer_free(&a);
        free(cand);
    }
    check_against_oracle(n, 0, 0, (const mpz_t *)h, 1, 0, "2^64+1");
    mpz_ui_pow_ui(n, 2, 128);
    mpz_sub_ui(n, n, 1);
    mpz_set_ui(h[0], 6700417);
    set_str(h[1], "67280421310721");
    check_against_oracle(n, 0, 0, (const mpz_t *)h, 2, 0, "2^128-1");
    mpz_add_ui(n, n, 1);
    check_against_oracle(n, 0, 0, NULL, 0, 0, "2^128");
    mpz_add_ui(n, n, 1);
    check_against_oracle(n, 1u << 16, 0, NULL, 0, 0, "2^128+1 (bound 2^16)");

    /* Neighbourhoods with an explicit bound. */
    static const unsigned exps[] = {64, 128};
    for (int e = 0; e < 2; e++) {
        for (int k = -span; k <= span; k++) {
            mpz_ui_pow_ui(n, 2, exps[e]);
            if (k < 0) mpz_sub_ui(n, n, (unsigned long)-k);
            else mpz_add_ui(n, n, (unsigned long)k);
            char what[40];
            snprintf(what, sizeof what, "2^%u%+d", exps[e], k);
            check_against_oracle(n, 1u << 16, 0, NULL, 0, 0, what);
            PKT_BAIL_IF_MANY();
        }
    }

    /* The largest prime below 2^64 and the smallest above, from a range near 2^32
     * (no divisor there divides a prime; below 2^64 BPSW proves it). */
    mpz_ui_pow_ui(n, 2, 64);
    do mpz_sub_ui(n, n, 1); while (!mpz_probab_prime_p(n, 30));
    char from[24];
    pkt_u64(((uint64_t)1 << 32) - PKT_SIZE(200000, 200000), from);
    for (int side = 0; side < 2; side++) {
        if (side == 1) {
            mpz_ui_pow_ui(n, 2, 64);
            mpz_nextprime(n, n);
        }
        pkt_answer want, got;
        pkt_oracle(n, 1u << 16, 0, NULL, 0, &want, NULL);
        char *cand = mpz_get_str(NULL, 10, n);
        int st = pkt_factor(cand, from, NULL, 0, 0, &got);
        PKT_CHECK_STATUS(st, PK_OK, cand);
        char why[200];
        if (st == PK_OK) {
            PKT_CHECK(pkt_answer_equal(&got, &want, why, sizeof why), "%s from %s: %s", cand, from, why);
            PKT_CHECK(got.res.is_prime == PK_PRIME_YES &&
                          got.res.certainty == (side ? PK_CERTAINTY_PROBABLE : PK_CERTAINTY_PROVEN),
                      "%s: is_prime %d certainty %d", cand, got.res.is_prime, got.res.certainty);
        }
        pkt_answer_free(&want);
        pkt_answer_free(&got);
        free(cand);
    }
    for (int i = 0; i < 3; i++) mpz_clear(h[i]);
    mpz_clear(n);
}

void test_remainder_above_bound_is_composite_prime_or_unknown(void)
{
    pkt_say("checks: a remainder left above the bound is COMPOSITE, a proven factor (below 2^64), "
            "PROBABLE_PRIME (above 2^64) or UNKNOWN (longer than bpsw_digits), including the bpsw_digits "
            "boundary, the default 2000-digit limit, and the GMP path");
    pkt_rng rng;
    pkt_rng_for(&rng, "remainders");
    mpz_t p, q, n;
    mpz_init(p);
    mpz_init(q);
    mpz_init(n);
    struct { unsigned pbits, qbits, mult; uint64_t bound; size_t bpsw; const char *what; } cases[] = {
        {20, 21, 1, 1000, 0, "composite < 2^64 above bound"},
        {40, 41, 6, 1000, 0, "composite > 2^64 above bound"},
        {120, 130, 30, 1000, 0, "composite ~2^250 above bound"},
        {50, 0, 6, 1000, 0, "prime < 2^64 above bound is proven"},
        {63, 0, 1, 1000, 0, "prime < 2^64 alone"},
        {100, 0, 6, 1000, 0, "probable prime > 2^64"},
        {100, 0, 1, 1000, 0, "probable prime > 2^64 alone"},
        {600, 0, 2 * 3 * 5 * 7 * 11, 100000, 0, "probable prime, 180 digits, GMP path"},
        {133, 0, 6, 1000, 5, "unknown: 40 digits, bpsw_digits 5"},
        {133, 0, 1, 1000, 5, "unknown prime alone: is_prime unknown"},
        {70, 70, 1, 1000, 5, "unknown composite alone"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pkt_rand_prime(&rng, p, cases[i].pbits);
        mpz_mul_ui(n, p, cases[i].mult);
        if (cases[i].qbits) {
            pkt_rand_prime(&rng, q, cases[i].qbits);
            mpz_mul(n, n, q);
        }
        check_against_oracle(n, cases[i].bound, cases[i].bpsw, NULL, 0, 0, cases[i].what);
    }
    /* The bpsw_digits boundary: exactly as many digits is classified, one fewer
     * is not. A random prime, and one just below a power of ten, where a
     * digit count estimated from the bit length is one too many. */
    for (int k = 0; k < 2; k++) {
        if (k == 0) {
            pkt_rand_prime(&rng, p, 150);
        } else {
            mpz_ui_pow_ui(p, 10, 44);
            mpz_mul_ui(p, p, 95);
            mpz_nextprime(p, p);
        }
        mpz_mul_ui(n, p, 10);
        char *ps = mpz_get_str(NULL, 10, p);
        size_t d = strlen(ps);
        free(ps);
        check_against_oracle(n, 100, d, NULL, 0, 0, k ? "bpsw_digits == digits (9.5e45)" : "bpsw_digits == digits");
        check_against_oracle(n, 100, d - 1, NULL, 0, 0,
                             k ? "bpsw_digits == digits - 1 (9.5e45)" : "bpsw_digits == digits - 1");
    }
    /* Default limit (2000 digits): random odd numbers with no prime factor
     * below 1000 (so composite, or prime, with every factor above the bound)
     * of 1900 digits are classified; of 2100 digits they stay unknown. */
    mpz_t primorial, g;
    mpz_init(primorial);
    mpz_init(g);
    mpz_primorial_ui(primorial, 1000);
    static const unsigned digits[] = {1900, 2100};
    for (int i = 0; i < 2; i++) {
        do {
            pkt_rand_bits(&rng, n, (unsigned)(digits[i] * 3.3219280948873623) + 2);
            mpz_gcd(g, n, primorial);
        } while (mpz_cmp_ui(g, 1) != 0);
        char *s = mpz_get_str(NULL, 10, n);
        pkt_say("%zu-digit candidate with no factor below 1000, default bpsw_digits", strlen(s));
        free(s);
        check_against_oracle(n, 1000, 0, NULL, 0, 0, digits[i] < 2000 ? "1900 digits, default bpsw_digits"
                                                                         : "2100 digits, default bpsw_digits");
    }
    mpz_clear(primorial);
    mpz_clear(g);
    mpz_clear(p);
    mpz_clear(q);
    mpz_clear(n);
}

void test_gmp_windows_above_2_32_find_planted_primes(void)
{
    pkt_say("checks: a 5000-digit candidate (the GMP window path) with two planted primes just above 2^32, "
            "searched over [2^32 + 1, 2^32 + 3*10^6] with small budgets: both found with their exponents, "
            "every factor prime, product x cofactor == n (no two primes share a word above 2^32)");
    pkt_rng rng;
    pkt_rng_for(&rng, "above-2-32");
    mpz_t n, p, q;
    mpz_init(n);
    mpz_init(p);
    mpz_init(q);
    pkt_rand_bits(&rng, n, 16600);
    mpz_set_ui(p, (UINT64_C(1) << 32) + pkt_rand_range(&rng, 1, 1000000));
    mpz_nextprime(p, p);
    mpz_set_ui(q, (UINT64_C(1) << 32) + pkt_rand_range(&rng, 1000000, 2900000));
    mpz_nextprime(q, q);
    mpz_mul(n, n, p);
    mpz_mul(n, n, q);
    mpz_mul(n, n, q);
    char *text = mpz_get_str(NULL, 10, n);
    char from[32], bound[32];
    snprintf(from, sizeof from, "%llu", (unsigned long long)((UINT64_C(1) << 32) + 1));
    snprintf(bound, sizeof bound, "%llu", (unsigned long long)((UINT64_C(1) << 32) + 3000000));
    pk_options o;
    pk_options_init(&o);
    o.from = from;
    o.bound = bound;
    pk_job *job = NULL;
    PKT_CHECK_STATUS(pk_job_create(text, &o, &job), PK_OK, "create");
    if (job) {
        PKT_CHECK_STATUS(pkt_run(job, 5000, 1000000), PK_DONE, "run with small budgets");
        pkt_answer a;
        pkt_answer_init(&a);
        PKT_CHECK_STATUS(pkt_answer_read(job, &a), PK_OK, "answer");
        pkt_check_answer_facts(n, &a, "above 2^32");
        char *ps = mpz_get_str(NULL, 10, p), *qs = mpz_get_str(NULL, 10, q);
        int found_p = 0, found_q = 0;
        for (size_t i = 0; i < a.nfactors; i++) {
            if (strcmp(a.factors[i], ps) == 0) found_p = a.exponents[i] >= 1;
            if (strcmp(a.factors[i], qs) == 0) found_q = a.exponents[i] >= 2;
        }
        PKT_CHECK(found_p && found_q, "planted %s^1 and %s^2 not both found", ps, qs);
        free(ps);
        free(qs);
        pkt_answer_free(&a);
        pk_job_destroy(job);
    }
    free(text);
    mpz_clear(q);
    mpz_clear(p);
    mpz_clear(n);
}
