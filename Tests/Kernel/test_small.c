/*
 * test_small.c — pk_small_factor and pk_small_divisors against jobs.
 *
 * The contract is "the answer a job with default options reports", so the
 * oracle is a job: every n below 2^20, random n up to 2^32 and the edge cases
 * (largest prime below 2^32, prime squares near it, the most distinct factors)
 * must give the same factors, exponents and divisor text both ways.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkt.h"

/* Primes up to 65,537 by a sieve of their own, for the progress fields. */
static uint8_t small_composite[65538];
static uint32_t small_prime_count[65538]; /* primes below the index */
static void small_sieve(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    small_composite[0] = small_composite[1] = 1;
    for (uint32_t i = 2; i * i < 65538; i++)
        if (!small_composite[i])
            for (uint32_t j = i * i; j < 65538; j += i)
                small_composite[j] = 1;
    for (uint32_t i = 1; i < 65538; i++)
        small_prime_count[i] = small_prime_count[i - 1] + !small_composite[i - 1];
}
static int is_small_prime(uint32_t x) { small_sieve(); return x < 65538 && !small_composite[x]; }
static uint32_t primes_below(uint32_t x) { small_sieve(); return small_prime_count[x]; }
static uint32_t prime_before(uint32_t x)
{
    small_sieve();
    while (x > 2 && small_composite[--x]) {
    }
    return x;
}

/* Compare the small answer for n with a default job's; returns 0 on a mismatch (reported). */
static int same_as_job(uint32_t n)
{
    char text[16];
    snprintf(text, sizeof text, "%u", n);
    pkt_answer want;
    pkt_answer_init(&want);
    int status = pkt_factor(text, NULL, NULL, 0, 0, &want);
    PKT_CHECK_STATUS(status, PK_OK, "job for the oracle");
    pk_small_answer got = {.size = sizeof got};
    PKT_CHECK_STATUS(pk_small_factor(n, &got), PK_OK, "pk_small_factor");
    int ok = want.res.complete == 1 && want.res.cofactor_status == PK_COFACTOR_ONE &&
             want.res.certainty == PK_CERTAINTY_PROVEN && strcmp(want.cofactor, "1") == 0 &&
             got.n == n && got.factor_count == want.nfactors;
    for (size_t i = 0; ok && i < got.factor_count; i++) {
        char p[16];
        snprintf(p, sizeof p, "%u", got.primes[i]);
        ok = strcmp(p, want.factors[i]) == 0 && got.exponents[i] == want.exponents[i];
    }
    int prime = got.factor_count == 1 && got.exponents[0] == 1;
    ok = ok && want.res.is_prime == (prime ? PK_PRIME_YES : PK_PRIME_NO);
    /* The primes tried are those below next_divisor, and a prime is known prime once they pass its square root,
       and no sooner. */
    uint64_t next = got.next_divisor;
    ok = ok && next <= 65537 && is_small_prime((uint32_t)next) && got.divisors_tested == primes_below((uint32_t)next);
    ok = ok && (!prime || (next * next > n && (next == 2 || (uint64_t)prime_before((uint32_t)next) * prime_before((uint32_t)next) <= n)));
    PKT_CHECK(ok, "n = %u: the small answer differs from the job's", n);
    pkt_answer_free(&want);
    return ok;
}

/* The divisor text of both ways, for n (its job must be complete). */
static void same_divisors_as_job(uint32_t n)
{
    char text[16];
    snprintf(text, sizeof text, "%u", n);
    pk_options options;
    pk_options_init(&options);
    pk_job *job = NULL;
    PKT_CHECK_STATUS(pk_job_create(text, &options, &job), PK_OK, "pk_job_create");
    if (!job)
        return;
    PKT_CHECK_STATUS(pkt_run(job, UINT64_MAX, 4), PK_DONE, "run");
    static char a[1920 * 11 + 1], b[1920 * 11 + 1];
    size_t alen = 0, blen = 0, acount = 0, bcount = 0;
    PKT_CHECK_STATUS(pk_job_divisors(job, SIZE_MAX, a, sizeof a, &alen, &acount), PK_OK, "pk_job_divisors");
    pk_small_answer small = {.size = sizeof small};
    PKT_CHECK_STATUS(pk_small_factor(n, &small), PK_OK, "pk_small_factor");
    PKT_CHECK_STATUS(pk_small_divisors(&small, SIZE_MAX, b, sizeof b, &blen, &bcount), PK_OK, "pk_small_divisors");
    PKT_CHECK(alen == blen && acount == bcount && memcmp(a, b, alen) == 0,
              "n = %u: divisors differ (%zu vs %zu divisors)", n, acount, bcount);
    pk_job_destroy(job);
}

void test_small_candidates_answer_as_jobs_do(void)
{
    uint32_t limit = PKT_SIZE(1u << 20, 1u << 14);
    pkt_say("checks: pk_small_factor gives a default job's factors, exponents and is_prime for every n in [2, %u), "
            "random n up to 2^32 and the edge cases; pk_small_divisors gives pk_job_divisors' text for a sample",
            limit);
    for (uint32_t n = 2; n < limit; n++) {
        if (!same_as_job(n))
            PKT_BAIL_IF_MANY();
        if (n < 20000 || n % 997 == 0)
            same_divisors_as_job(n);
    }
    pkt_rng rng;
    pkt_rng_for(&rng, "small");
    for (int i = 0; i < PKT_SIZE(100000, 2000); i++) {
        uint32_t n = (uint32_t)pkt_rand_range(&rng, limit, UINT32_MAX);
        same_as_job(n);
        if (i % 50 == 0)
            same_divisors_as_job(n);
    }
    /* Largest prime below 2^32, prime squares and powers near it, the most
       distinct factors, the most divisors (1,920, at 3,491,888,400), 2^32 - 1. */
    static const uint32_t edges[] = {4294967291u, 4293001441u, 4294967295u, 2147483648u, 3486784401u,
                                     223092870u, 3491888400u, 65521u, 65537u, 4294836225u, 2u, 3u, 4u};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        same_as_job(edges[i]);
        same_divisors_as_job(edges[i]);
    }
}

void test_small_calls_reject_bad_arguments_and_follow_the_buffer_convention(void)
{
    pkt_say("checks: n < 2, NULL and short structs are PK_E_ARG; max_count gives PK_E_TOO_MANY with the count; "
            "a short buffer gives PK_E_BUFFER with the length and is left untouched");
    pk_small_answer answer = {.size = sizeof answer};
    PKT_CHECK_STATUS(pk_small_factor(0, &answer), PK_E_ARG, "n = 0");
    PKT_CHECK_STATUS(pk_small_factor(1, &answer), PK_E_ARG, "n = 1");
    PKT_CHECK_STATUS(pk_small_factor(12, NULL), PK_E_ARG, "NULL answer");
    pk_small_answer old = {.size = sizeof old - 1};
    PKT_CHECK_STATUS(pk_small_factor(12, &old), PK_E_ARG, "size too small");
    PKT_CHECK_STATUS(pk_small_divisors(NULL, 10, NULL, 0, NULL, NULL), PK_E_ARG, "NULL answer for divisors");

    PKT_CHECK_STATUS(pk_small_factor(360, &answer), PK_OK, "360");
    size_t len = 0, count = 0;
    PKT_CHECK_STATUS(pk_small_divisors(&answer, 23, NULL, 0, &len, &count), PK_E_TOO_MANY, "24 divisors, 23 allowed");
    PKT_CHECK(count == 24, "count %zu, want 24", count);
    PKT_CHECK_STATUS(pk_small_divisors(&answer, 24, NULL, 0, &len, &count), PK_E_BUFFER, "ask for the length");
    const char *want = "1 2 3 4 5 6 8 9 10 12 15 18 20 24 30 36 40 45 60 72 90 120 180 360";
    PKT_CHECK(len == strlen(want), "length %zu, want %zu", len, strlen(want));
    char buf[128];
    memset(buf, 'x', sizeof buf);
    PKT_CHECK_STATUS(pk_small_divisors(&answer, 24, buf, len, &len, NULL), PK_E_BUFFER, "no room for the NUL");
    PKT_CHECK(buf[0] == 'x', "nothing is written when the buffer is short");
    PKT_CHECK_STATUS(pk_small_divisors(&answer, 24, buf, len + 1, &len, NULL), PK_OK, "exact room");
    PKT_CHECK(strcmp(buf, want) == 0, "360's divisors: %s", buf);
}

/* The divisors of n in decimal by a scan up to its square root (the pairs d, n / d), written independently of
   the kernel: the small ones ascending, then the large ones in reverse. Returns the count. */
static size_t scanned_divisors(uint64_t n, char *out, size_t cap)
{
    static uint64_t small[1 << 16];
    size_t count = 0, at = 0;
    uint64_t d = 1;
    for (; d * d < n; d++)
        if (n % d == 0)
            small[count++] = d;
    int square = d * d == n;
    size_t total = 2 * count + (size_t)square;
    for (size_t i = 0; i < total; i++) {
        uint64_t v = i < count ? small[i] : i == count && square ? d : n / small[total - 1 - i];
        at += (size_t)snprintf(out + at, cap - at, i ? " %llu" : "%llu", (unsigned long long)v);
    }
    return total;
}

void test_divisor_lists_match_a_square_root_scan(void)
{
    pkt_say("checks: pk_small_divisors for random n below 2^32 and the most-divisor numbers, and pk_job_divisors for "
            "64-bit n with thousands of divisors, against a scan of every d up to the square root");
    static char want[200000], got[200000];
    pkt_rng rng;
    pkt_rng_for(&rng, "divisor-scan");
    static const uint32_t most[] = {3491888400u, 2205403200u, 1102701600u, 735134400u, 4294967295u, 4294967291u};
    for (int i = 0; i < PKT_SIZE(600, 60) + (int)(sizeof most / sizeof most[0]); i++) {
        uint32_t n = i < (int)(sizeof most / sizeof most[0]) ? most[i] : (uint32_t)pkt_rand_range(&rng, 2, UINT32_MAX);
        size_t count = scanned_divisors(n, want, sizeof want), len = 0, got_count = 0;
        pk_small_answer answer = {.size = sizeof answer};
        PKT_CHECK_STATUS(pk_small_factor(n, &answer), PK_OK, "pk_small_factor");
        int st = pk_small_divisors(&answer, SIZE_MAX, got, sizeof got, &len, &got_count);
        PKT_CHECK(st == PK_OK && got_count == count && len == strlen(want) && strcmp(got, want) == 0,
                  "divisors of %u: %s, %zu of %zu", n, pk_status_name(st), got_count, count);
        PKT_BAIL_IF_MANY();
    }
    /* Past 2^32 through a job: 2^6·3^4·5^2·7·11·13·17·19·23 (6,720 divisors) and other highly composite n, 10^12,
       3 times a prime, random n below 2^42. */
    static const uint64_t wide[] = {963761198400ull, 1035150916800ull, 1173274502400ull, 1000000000000ull, 999999999989ull * 3};
    for (int i = 0; i < PKT_SIZE(24, 6) + (int)(sizeof wide / sizeof wide[0]); i++) {
        uint64_t n = i < (int)(sizeof wide / sizeof wide[0]) ? wide[i] : pkt_rand_range(&rng, 1ull << 32, 1ull << 42);
        char text[24];
        pkt_u64(n, text);
        pk_job *job = NULL;
        PKT_CHECK_STATUS(pk_job_create(text, NULL, &job), PK_OK, "pk_job_create");
        if (!job)
            continue;
        PKT_CHECK_STATUS(pkt_run(job, UINT64_MAX, 8), PK_DONE, "run");
        size_t count = scanned_divisors(n, want, sizeof want), len = 0, got_count = 0;
        int st = pk_job_divisors(job, SIZE_MAX, got, sizeof got, &len, &got_count);
        PKT_CHECK(st == PK_OK && got_count == count && strcmp(got, want) == 0, "divisors of %s: %s, %zu of %zu",
                  text, pk_status_name(st), got_count, count);
        pk_job_destroy(job);
    }
}
