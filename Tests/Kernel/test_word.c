/*
 * test_word.c — word-size factoring: pk_word_factor64, word primality, the
 * resumable splitter pk_wsplit_* (CKernel/factor/word.h, private; linked
 * into the test binary directly) and the public batch calls
 * pk_factor_u64_array / pk_factor_u128_array.
 *
 * Oracles: brute force (a smallest-factor sieve) below 10^6, GMP elsewhere:
 * every answer multiplies back, primes ascend, and every listed prime passes
 * mpz_probab_prime_p (below 2^64 GMP's answer is exact). Planted semiprimes
 * check that the planted primes come back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkt.h"
#include "factor/word.h"

static void u128_to_mpz(mpz_t z, pk_u128 v)
{
    uint64_t w[2] = {(uint64_t)v, (uint64_t)(v >> 64)};
    mpz_import(z, 2, -1, sizeof(uint64_t), 0, 0, w);
}

static pk_u128 mpz_to_u128(const mpz_t z)
{
    uint64_t w[2] = {0, 0};
    size_t n = 0;
    if (mpz_sizeinbase(z, 2) <= 128)
        mpz_export(w, &n, -1, sizeof(uint64_t), 0, 0, z);
    return (pk_u128)w[0] | ((pk_u128)w[1] << 64);
}

static void u128_str(pk_u128 v, char buf[48])
{
    mpz_t z;
    mpz_init(z);
    u128_to_mpz(z, v);
    mpz_get_str(buf, 10, z);
    mpz_clear(z);
}

static int gmp_prime(pk_u128 p)
{
    mpz_t z;
    mpz_init(z);
    u128_to_mpz(z, p);
    int r = mpz_probab_prime_p(z, 30) != 0;
    mpz_clear(z);
    return r;
}

/* Checks a factorization of n: ascending primes, each prime (GMP), product n. Returns 1 when fine. */
static int check_factors(pk_u128 n, const pk_u128 *primes, const unsigned *exps, int count, const char *what)
{
    char nb[48];
    pk_u128 prod = 1;
    for (int i = 0; i < count; i++) {
        if ((i > 0 && primes[i] <= primes[i - 1]) || exps[i] == 0 || !gmp_prime(primes[i])) {
            u128_str(n, nb);
            pkt_fail_at(__FILE__, __LINE__, "%s: n = %s: factor %d bad (order, exponent or not prime)", what,
                        nb, i);
            return 0;
        }
        for (unsigned e = 0; e < exps[i]; e++)
            prod *= primes[i];
    }
    if (prod != n) {
        u128_str(n, nb);
        pkt_fail_at(__FILE__, __LINE__, "%s: n = %s: factors do not multiply back", what, nb);
        return 0;
    }
    return 1;
}

static int check64(uint64_t n, const char *what)
{
    uint64_t p[15];
    uint8_t e[15];
    int k = pk_word_factor64(n, p, e);
    pk_u128 pp[15];
    unsigned ee[15];
    for (int i = 0; i < k; i++) {
        pp[i] = p[i];
        ee[i] = e[i];
    }
    return check_factors(n, pp, ee, k, what);
}

/* Factor through the public 128-bit batch call and check; returns the answer's factor count. */
static int check128(pk_u128 n, pk_u128_answer *a, const char *what)
{
    pk_uint128 in = {(uint64_t)n, (uint64_t)(n >> 64)};
    int rc = pk_factor_u128_array(&in, 1, a, sizeof *a);
    PKT_CHECK_STATUS(rc, PK_OK, what);
    if (rc != PK_OK)
        return -1;
    pk_u128 pp[PK_U128_MAX_FACTORS];
    unsigned ee[PK_U128_MAX_FACTORS];
    uint32_t probable = 0;
    for (uint32_t i = 0; i < a->factor_count; i++) {
        pp[i] = ((pk_u128)a->primes[i].hi << 64) | a->primes[i].lo;
        ee[i] = a->exponents[i];
        int want = (pp[i] >> 64) ? PK_CERTAINTY_PROBABLE : PK_CERTAINTY_PROVEN;
        PKT_CHECK(a->certainty[i] == want, "%s: certainty of factor %u", what, i);
        probable += a->certainty[i] == PK_CERTAINTY_PROBABLE;
    }
    PKT_CHECK(a->probable_count == probable, "%s: probable_count", what);
    PKT_CHECK(a->n.lo == (uint64_t)n && a->n.hi == (uint64_t)(n >> 64), "%s: n echoed", what);
    check_factors(n, pp, ee, (int)a->factor_count, what);
    return (int)a->factor_count;
}

/* ------------------------------------------------------------------ tests */

void test_word_factor64_matches_brute_force_below_a_million(void)
{
    enum { LIMIT = 1000000 };
    uint32_t *spf = calloc(LIMIT, sizeof *spf); /* smallest prime factor */
    for (uint32_t i = 2; i < LIMIT; i++)
        if (!spf[i])
            for (uint32_t j = i; j < LIMIT; j += i)
                if (!spf[j])
                    spf[j] = i;
    uint64_t p[15];
    uint8_t e[15];
    PKT_CHECK(pk_word_factor64(1, p, e) == 0, "1 has no prime factors");
    for (uint32_t n = 2; n < LIMIT; n++) {
        int k = pk_word_factor64(n, p, e), want = 0;
        uint32_t m = n;
        while (m > 1) {
            uint32_t q = spf[m], x = 0;
            while (m % q == 0) {
                m /= q;
                x++;
            }
            if (want >= k || p[want] != q || e[want] != x) {
                pkt_fail_at(__FILE__, __LINE__, "n = %u: factor %d should be %u^%u", n, want, q, x);
                break;
            }
            want++;
        }
        PKT_CHECK(k == want, "n = %u: %d factors, want %d", n, k, want);
        PKT_BAIL_IF_MANY();
    }
    free(spf);
}

void test_word_factor64_random_numbers_multiply_back_into_primes(void)
{
    pkt_rng rng;
    pkt_rng_for(&rng, "word64 random");
    const int count = PKT_SIZE(100000, 10000);
    for (int i = 0; i < count; i++) {
        uint64_t n = pkt_rand(&rng);
        /* every size, not only 64-bit numbers */
        n >>= pkt_rand_below(&rng, 63);
        if (n < 2)
            n = 2;
        check64(n, "random");
        PKT_BAIL_IF_MANY();
    }
}

/* n odd > 2: strong probable prime to base 2 (GMP arithmetic, independent of the kernel's). */
static int gmp_sprp2(uint64_t n)
{
    mpz_t z, d, x, m1;
    mpz_inits(z, d, x, m1, NULL);
    mpz_set_ui(z, n);
    mpz_sub_ui(m1, z, 1);
    mpz_set(d, m1);
    unsigned long s = mpz_scan1(d, 0);
    mpz_tdiv_q_2exp(d, d, s);
    mpz_set_ui(x, 2);
    mpz_powm(x, x, d, z);
    int pass = mpz_cmp_ui(x, 1) == 0 || mpz_cmp(x, m1) == 0;
    for (unsigned long r = 1; r < s && !pass; r++) {
        mpz_powm_ui(x, x, 2, z);
        pass = mpz_cmp(x, m1) == 0;
    }
    mpz_clears(z, d, x, m1, NULL);
    return pass;
}

/* Below 1,122,004,669,633 the word primality test proves with fixed strong-test bases after base 2; the
   numbers that pass base 2 are exactly where a wrong base set would show. */
void test_word_primality_base_sets_reject_strong_pseudoprimes_to_base_2(void)
{
    pkt_rng rng;
    pkt_rng_for(&rng, "word primality base sets");
    /* random odd numbers below 2^41, every size */
    const int count = PKT_SIZE(1000000, 30000);
    for (int i = 0; i < count; i++) {
        uint64_t n = (pkt_rand(&rng) >> (23 + pkt_rand_below(&rng, 36))) | 1;
        PKT_CHECK(pk_word_is_prime64(n) == gmp_prime(n), "is_prime64(%llu)", (unsigned long long)n);
        PKT_BAIL_IF_MANY();
    }
    /* every odd number around the two bounds where the base sets change (both bounds are composite) */
    static const uint64_t bounds[] = {UINT64_C(4759123141), UINT64_C(1122004669633)};
    for (size_t b = 0; b < 2; b++) {
        PKT_CHECK(!pk_word_is_prime64(bounds[b]) && gmp_sprp2(bounds[b]), "bound %zu is a base-2 pseudoprime", b);
        for (uint64_t n = bounds[b] - PKT_SIZE(20001, 2001); n < bounds[b] + PKT_SIZE(20000, 2000); n += 2) {
            PKT_CHECK(pk_word_is_prime64(n) == gmp_prime(n), "is_prime64(%llu)", (unsigned long long)n);
            PKT_BAIL_IF_MANY();
        }
    }
    /* strong pseudoprimes to base 2 of the form p (1 + j (p - 1)) (2047 = 23 * 89 is one, j = 4), below and
       above 4,759,123,141: each must be called composite */
    unsigned found_low = 0, found_high = 0;
    const uint64_t pmax = PKT_SIZE(500000, 60000);
    for (uint64_t p = 3; p < pmax; p += 2) {
        if (!gmp_prime(p))
            continue;
        for (uint64_t j = 2; j <= 4; j++) {
            uint64_t q = 1 + j * (p - 1);
            uint64_t n = p * q;
            if (!gmp_sprp2(n) || !gmp_prime(q))
                continue;
            PKT_CHECK(pk_word_is_prime64(n) == 0, "%llu = %llu * %llu is composite", (unsigned long long)n,
                      (unsigned long long)p, (unsigned long long)q);
            if (n < UINT64_C(4759123141))
                found_low++;
            else
                found_high++;
        }
        PKT_BAIL_IF_MANY();
    }
    PKT_CHECK(found_low >= 10 && found_high >= PKT_SIZE(5u, 1u), "pseudoprimes met: %u below, %u above 4759123141",
              found_low, found_high);
}

void test_word_primality_agrees_with_gmp_and_known_pseudoprimes(void)
{
    pkt_rng rng;
    pkt_rng_for(&rng, "word primality");
    const int count = PKT_SIZE(200000, 20000);
    for (int i = 0; i < count; i++) {
        uint64_t n = pkt_rand(&rng) >> pkt_rand_below(&rng, 60);
        PKT_CHECK(pk_word_is_prime64(n) == gmp_prime(n), "is_prime64(%llu)", (unsigned long long)n);
        pk_u128 m = ((pk_u128)pkt_rand(&rng) << 64) | pkt_rand(&rng);
        m >>= pkt_rand_below(&rng, 64);
        PKT_CHECK((pk_word_is_prime128(m) != 0) == gmp_prime(m), "is_prime128 disagrees with GMP");
        PKT_BAIL_IF_MANY();
    }
    /* strong pseudoprimes to base 2, Lucas pseudoprimes, Carmichael numbers: all composite */
    static const uint64_t tricky[] = {2047, 3277, 4033, 4681, 8321, 15841, 29341, 42799, 49141, 52633, 65281,
                                      74665, 80581, 85489, 88357, 90751, 561, 1105, 1729, 2465, 2821, 6601,
                                      8911, 323, 377, 1159, 1829, 5459, 5777, 9071, 9179, 10877, 3215031751u,
                                      UINT64_C(2152302898747), UINT64_C(3474749660383), UINT64_C(341550071728321),
                                      UINT64_C(3825123056546413051)};
    for (size_t i = 0; i < sizeof tricky / sizeof tricky[0]; i++)
        PKT_CHECK(pk_word_is_prime64(tricky[i]) == 0 && gmp_prime(tricky[i]) == 0, "%llu is composite",
                  (unsigned long long)tricky[i]);
    /* primes at the edges */
    PKT_CHECK(pk_word_is_prime64(UINT64_C(18446744073709551557)), "largest 64-bit prime");
    PKT_CHECK(!pk_word_is_prime64(UINT64_MAX), "2^64 - 1");
    pk_u128 big = ~(pk_u128)0 - 158; /* 2^128 - 159, the largest prime below 2^128 */
    PKT_CHECK(pk_word_is_prime128(big) == 2, "2^128 - 159 is a probable prime");
    PKT_CHECK(pk_word_is_prime128(~(pk_u128)0) == 0, "2^128 - 1");
    PKT_CHECK(pk_word_is_prime128((pk_u128)1 << 64 | 13) == 2 && gmp_prime((pk_u128)1 << 64 | 13), "2^64 + 13");
}

void test_word_balanced_64_bit_semiprimes_split_through_the_batch_call(void)
{
    pkt_rng rng;
    pkt_rng_for(&rng, "word balanced 64");
    const size_t count = PKT_SIZE(10000, 500);
    uint64_t *n = malloc(count * sizeof *n), *p = malloc(count * sizeof *p);
    pk_u64_answer *a = malloc(count * sizeof *a);
    mpz_t x;
    mpz_init(x);
    for (size_t i = 0; i < count; i++) {
        unsigned bits = (unsigned)pkt_rand_range(&rng, 20, 32);
        pkt_rand_prime(&rng, x, bits);
        uint64_t q1 = mpz_get_ui(x);
        pkt_rand_prime(&rng, x, 64 - bits - (pkt_rand_below(&rng, 2)));
        uint64_t q2 = mpz_get_ui(x);
        n[i] = q1 * q2;
        p[i] = q1 < q2 ? q1 : q2;
    }
    mpz_clear(x);
    PKT_CHECK_STATUS(pk_factor_u64_array(n, count, a, sizeof *a), PK_OK, "batch");
    for (size_t i = 0; i < count; i++) {
        PKT_CHECK(a[i].size == sizeof a[i] && a[i].n == n[i], "answer %zu header", i);
        int two = a[i].factor_count == 2 && a[i].primes[0] == p[i] && a[i].primes[1] == n[i] / p[i] &&
                  a[i].exponents[0] == 1 && a[i].exponents[1] == 1;
        int square = a[i].factor_count == 1 && a[i].primes[0] == p[i] && a[i].exponents[0] == 2 &&
                     p[i] * p[i] == n[i];
        PKT_CHECK(two || square, "n = %llu: want %llu * %llu", (unsigned long long)n[i],
                  (unsigned long long)p[i], (unsigned long long)(n[i] / p[i]));
        PKT_BAIL_IF_MANY();
    }
    free(n);
    free(p);
    free(a);
}

/* Half of the 10^3 semiprimes (and as many random numbers) per call: each test has its own time limit. */
static void semiprimes_65_to_128(const char *label)
{
    pkt_rng rng;
    pkt_rng_for(&rng, label);
    const int count = PKT_SIZE(500, 30);
    mpz_t x, y;
    mpz_inits(x, y, NULL);
    pk_u128_answer a;
    for (int i = 0; i < count; i++) {
        /* a semiprime of 65..128 bits, factor sizes at random */
        unsigned bits = (unsigned)pkt_rand_range(&rng, 65, 128);
        unsigned b1 = (unsigned)pkt_rand_range(&rng, 2, bits / 2);
        pkt_rand_prime(&rng, x, b1);
        do
            pkt_rand_prime(&rng, y, bits - b1);
        while (mpz_sizeinbase(y, 2) + mpz_sizeinbase(x, 2) > 129);
        mpz_mul(y, y, x);
        if (mpz_sizeinbase(y, 2) > 128)
            mpz_tdiv_q_2exp(y, x, 0); /* too large: factor the prime alone */
        pk_u128 n = mpz_to_u128(y), p = mpz_to_u128(x);
        int k = check128(n, &a, "semiprime");
        if (n != p && k > 0) {
            int has = 0;
            for (int j = 0; j < k; j++)
                has |= (((pk_u128)a.primes[j].hi << 64) | a.primes[j].lo) == p;
            PKT_CHECK(has, "semiprime %d: planted prime missing", i);
        }
        /* a random number of 65..128 bits */
        pkt_rand_bits(&rng, y, (unsigned)pkt_rand_range(&rng, 65, 128));
        check128(mpz_to_u128(y), &a, "random");
        PKT_BAIL_IF_MANY();
    }
    mpz_clears(x, y, NULL);
}

void test_word_65_to_128_bit_semiprimes_and_numbers_factor_completely(void)
{
    semiprimes_65_to_128("word 128");
}

void test_word_more_65_to_128_bit_semiprimes_and_numbers_factor_completely(void)
{
    semiprimes_65_to_128("word 128 more");
}

void test_word_prime_powers_carmichael_numbers_and_edges_factor(void)
{
    pk_u128_answer a;
    /* prime powers of every size */
    static const uint64_t bases[] = {2, 3, 251, 257, 65521, 65537, 4294967291u, 4294967311u};
    for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++) {
        pk_u128 q = 1;
        for (unsigned k = 1; k <= 127; k++) {
            if (q > (~(pk_u128)0) / bases[i])
                break;
            q *= bases[i];
            int c = check128(q, &a, "prime power");
            PKT_CHECK(c == 1 && a.exponents[0] == k, "%llu^%u", (unsigned long long)bases[i], k);
            if ((q >> 64) == 0)
                check64((uint64_t)q, "prime power 64");
        }
    }
    /* Carmichael numbers */
    static const uint64_t carmichael[] = {561, 1105, 1729, 2465, 2821, 6601, 8911, 41041, 825265, 321197185,
                                          UINT64_C(5394826801), UINT64_C(232250619601),
                                          UINT64_C(9746347772161)};
    for (size_t i = 0; i < sizeof carmichael / sizeof carmichael[0]; i++) {
        check64(carmichael[i], "carmichael");
        PKT_CHECK(check128(carmichael[i], &a, "carmichael") >= 3, "a Carmichael number has >= 3 factors");
    }
    /* squares of primes near 2^32 and 2^64, products of neighbours */
    static const uint64_t near32[] = {4294967291u, 4294967279u, 4294967311u, 4294967357u};
    static const uint64_t near64[] = {UINT64_C(18446744073709551557), UINT64_C(18446744073709551533),
                                      UINT64_C(9223372036854775783)};
    for (size_t i = 0; i < 4; i++) {
        pk_u128 s = (pk_u128)near32[i] * near32[i];
        if ((s >> 64) == 0) {
            uint64_t p[15];
            uint8_t e[15];
            PKT_CHECK(pk_word_factor64((uint64_t)s, p, e) == 1 && p[0] == near32[i] && e[0] == 2,
                      "square of %llu", (unsigned long long)near32[i]);
        }
        PKT_CHECK(check128(s, &a, "square near 2^32") == 1 && a.exponents[0] == 2, "square near 2^32");
        PKT_CHECK(check128((pk_u128)near32[i] * near32[(i + 1) % 4], &a, "neighbours") == 2, "neighbours");
    }
    for (size_t i = 0; i < 3; i++) {
        pk_u128 s = (pk_u128)near64[i] * near64[i];
        PKT_CHECK(check128(s, &a, "square near 2^64") == 1 && a.exponents[0] == 2 && a.probable_count == 0,
                  "square near 2^64");
    }
    /* 2^64 - 1 = 3·5·17·257·641·65537·6700417 and 2^128 - 1 (adds 274177·67280421310721) */
    PKT_CHECK(check64(UINT64_MAX, "2^64-1"), "2^64 - 1");
    PKT_CHECK(check128(UINT64_MAX, &a, "2^64-1") == 7, "2^64 - 1 has 7 prime factors");
    PKT_CHECK(check128(~(pk_u128)0, &a, "2^128-1") == 9, "2^128 - 1 has 9 prime factors");
    PKT_CHECK(check128(((pk_u128)1 << 127), &a, "2^127") == 1 && a.exponents[0] == 127, "2^127");
    /* the most distinct prime factors */
    uint64_t primorial = 1;
    static const uint64_t first[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47};
    for (size_t i = 0; i < 15; i++)
        primorial *= first[i];
    uint64_t p[15];
    uint8_t e[15];
    PKT_CHECK(pk_word_factor64(primorial, p, e) == 15 && p[14] == 47, "primorial 47");
}

void test_word_batch_calls_reject_bad_arguments_and_write_nothing(void)
{
    uint64_t nums[3] = {10, 1, 12};
    pk_u64_answer a[3];
    memset(a, 0x5a, sizeof a);
    PKT_CHECK_STATUS(pk_factor_u64_array(nums, 3, a, sizeof a[0]), PK_E_RANGE, "a 1 in the batch");
    PKT_CHECK(a[0].size == (size_t)0x5a5a5a5a5a5a5a5aull, "nothing written");
    PKT_CHECK_STATUS(pk_factor_u64_array(nums, 1, a, sizeof a[0] - 1), PK_E_ARG, "answer_size");
    PKT_CHECK_STATUS(pk_factor_u64_array(NULL, 1, a, sizeof a[0]), PK_E_ARG, "NULL numbers");
    PKT_CHECK_STATUS(pk_factor_u64_array(nums, 1, NULL, sizeof a[0]), PK_E_ARG, "NULL answers");
    PKT_CHECK_STATUS(pk_factor_u64_array(NULL, 0, NULL, 0), PK_OK, "empty batch");
    PKT_CHECK_STATUS(pk_factor_u64_array(nums, 1, a, sizeof a[0]), PK_OK, "10");
    PKT_CHECK(a[0].factor_count == 2 && a[0].primes[0] == 2 && a[0].primes[1] == 5, "10 = 2 * 5");
    pk_uint128 big[2] = {{0, 0}, {1, 0}};
    pk_u128_answer b[2];
    PKT_CHECK_STATUS(pk_factor_u128_array(big, 2, b, sizeof b[0]), PK_E_RANGE, "0 in the batch");
    PKT_CHECK_STATUS(pk_factor_u128_array(big, 1, b, 8), PK_E_ARG, "answer_size");
    big[0].hi = 1; /* 2^64 */
    PKT_CHECK_STATUS(pk_factor_u128_array(big, 1, b, sizeof b[0]), PK_OK, "2^64");
    PKT_CHECK(b[0].factor_count == 1 && b[0].primes[0].lo == 2 && b[0].exponents[0] == 64, "2^64 = 2^64");
}

/* ------------------------------------------------------------- splitter */

/* Run to a factor with the given budget per call; when save_between, every pause goes through text. */
static pk_u128 split_with(pk_u128 n, pkt_rng *rng, uint64_t max_budget, int save_between, uint64_t *work,
                          const char **method)
{
    pk_wsplit s;
    pk_wsplit_init(&s, n);
    pk_u128 f = 0;
    char text[2048];
    for (long calls = 0; calls < 100000000L; calls++) {
        uint64_t budget = max_budget == UINT64_MAX ? UINT64_MAX : pkt_rand_below(rng, max_budget + 1);
        uint64_t before = pk_wsplit_work(&s);
        int r = pk_wsplit_run(&s, budget, &f);
        if (budget != UINT64_MAX && pk_wsplit_work(&s) - before > budget + s.credit + 100000) {
            pkt_fail_at(__FILE__, __LINE__, "work exceeded the budget");
            return 0;
        }
        if (r) {
            *work = pk_wsplit_work(&s);
            *method = pk_wsplit_method(&s);
            return f;
        }
        if (save_between) {
            size_t need = pk_wsplit_save(&s, NULL, 0);
            size_t len = pk_wsplit_save(&s, text, sizeof text);
            if (need != len || len >= sizeof text || pk_wsplit_save(&s, text, len - 1) != len) {
                pkt_fail_at(__FILE__, __LINE__, "save lengths: %zu %zu", need, len);
                return 0;
            }
            pk_wsplit t;
            memset(&t, 0xa5, sizeof t);
            if (pk_wsplit_load(&t, n, text, len) != 0) {
                pkt_fail_at(__FILE__, __LINE__, "load refused a saved state: %.*s", (int)len, text);
                return 0;
            }
            char again[2048];
            size_t len2 = pk_wsplit_save(&t, again, sizeof again);
            PKT_CHECK(len2 == len && memcmp(text, again, len) == 0, "load + save is the identity");
            s = t;
        }
    }
    pkt_fail_at(__FILE__, __LINE__, "no factor");
    return 0;
}

static pk_u128 make_semiprime(pkt_rng *rng, unsigned bits1, unsigned bits2)
{
    mpz_t x, y;
    mpz_inits(x, y, NULL);
    pkt_rand_prime(rng, x, bits1);
    pkt_rand_prime(rng, y, bits2);
    mpz_mul(x, x, y);
    pk_u128 n = mpz_to_u128(x);
    mpz_clears(x, y, NULL);
    return n;
}

void test_wsplit_interrupted_saved_and_resumed_finds_the_same_factor(void)
{
    pkt_rng rng;
    pkt_rng_for(&rng, "wsplit resume");
    const int count = PKT_SIZE(40, 8);
    for (int i = 0; i < count; i++) {
        /* every method: trial division (a small factor), rho (below 2^48), ECM (both stages) */
        static const unsigned sizes[][2] = {{9, 60}, {20, 26}, {30, 34}, {36, 40}, {40, 50}, {48, 52}};
        const unsigned *sz = sizes[i % 6];
        pk_u128 n = make_semiprime(&rng, sz[0], sz[1]);
        uint64_t w1 = 0, w2 = 0, w3 = 0;
        const char *m1 = "", *m2 = "", *m3 = "";
        pk_u128 f1 = split_with(n, &rng, UINT64_MAX, 0, &w1, &m1);
        pk_u128 f2 = split_with(n, &rng, 1 + pkt_rand_below(&rng, 5000), 1, &w2, &m2);
        pk_u128 f3 = split_with(n, &rng, 3, 0, &w3, &m3);
        char nb[48];
        u128_str(n, nb);
        PKT_CHECK(f1 > 1 && f1 < n && n % f1 == 0, "n = %s: not a factor", nb);
        PKT_CHECK(f1 == f2 && f1 == f3, "n = %s: factors differ between budget sequences", nb);
        PKT_CHECK(w1 == w2 && w1 == w3 && strcmp(m1, m2) == 0, "n = %s: work %llu %llu %llu", nb,
                  (unsigned long long)w1, (unsigned long long)w2, (unsigned long long)w3);
        PKT_BAIL_IF_MANY();
    }
}

/* Saved states at points of every kind, for the tampering test. */
static size_t state_after(pk_u128 n, uint64_t budget, char *text, size_t cap)
{
    pk_wsplit s;
    pk_wsplit_init(&s, n);
    pk_u128 f;
    if (pk_wsplit_run(&s, budget, &f))
        return 0;
    return pk_wsplit_save(&s, text, cap);
}

/* The first budget (from 2200, in steps of 200) after which the splitter on n is in ECM stage `stage`
   (so the points below follow the ECM schedule's B1 and B2); 0 when none below 10^6 is. */
static uint64_t budget_in_stage(pk_u128 n, uint32_t stage)
{
    for (uint64_t budget = 2200; budget < 1000000; budget += 200) {
        pk_wsplit s;
        pk_wsplit_init(&s, n);
        pk_u128 f;
        if (pk_wsplit_run(&s, budget, &f))
            return 0;
        if (s.method == PK_WSPLIT_ECM && s.ecm.stage == stage)
            return budget;
    }
    return 0;
}

void test_wsplit_load_refuses_every_single_character_change(void)
{
    pkt_rng rng;
    pkt_rng_for(&rng, "wsplit tamper");
    pk_u128 ecm_n = make_semiprime(&rng, 60, 62), rho_n = make_semiprime(&rng, 22, 26);
    const uint64_t stage1 = budget_in_stage(ecm_n, 1), stage2 = budget_in_stage(ecm_n, 2);
    PKT_CHECK(stage1 > 0 && stage2 > 0, "budgets reaching stages 1 and 2 (%llu, %llu)", (unsigned long long)stage1,
              (unsigned long long)stage2);
    struct {
        pk_u128 n;
        uint64_t budget;
    } points[] = {{ecm_n, 0},      {ecm_n, 50},    {ecm_n, 2200}, {ecm_n, stage1},
                  {ecm_n, stage2}, {ecm_n, 30000}, {rho_n, 2400}, {rho_n, 4000}};
    const char alphabet[] = "0123456789abcdefABCDEFws -+xz\x01\x7f";
    size_t tried = 0, stages = 0;
    for (size_t k = 0; k < sizeof points / sizeof points[0]; k++) {
        char text[2048], changed[2048];
        /* a budget that happens to reach a factor (seeds differ) is cut towards the end of trial division */
        uint64_t budget = points[k].budget;
        size_t len = state_after(points[k].n, budget, text, sizeof text);
        while (len == 0 && budget > 2300) {
            budget = 2250 + (budget - 2250) / 2;
            len = state_after(points[k].n, budget, text, sizeof text);
        }
        PKT_CHECK(len > 0 && len < sizeof text, "state %zu saved", k);
        if (len == 0 || len >= sizeof text)
            continue;
        pk_wsplit s;
        PKT_CHECK(pk_wsplit_load(&s, points[k].n, text, len) == 0, "state %zu loads: %.*s", k, (int)len, text);
        stages |= 1u << (s.method == PK_WSPLIT_ECM ? 3 + s.ecm.stage : s.method);
        PKT_CHECK(pk_wsplit_load(&s, points[k].n + 2, text, len) != 0, "state %zu refused for another n", k);
        for (size_t i = 0; i < len; i++) {
            for (size_t c = 0; c + 1 < sizeof alphabet; c++) {
                if (alphabet[c] == text[i])
                    continue;
                memcpy(changed, text, len);
                changed[i] = alphabet[c];
                pk_wsplit t;
                tried++;
                if (pk_wsplit_load(&t, points[k].n, changed, len) == 0) {
                    char again[2048];
                    size_t l2 = pk_wsplit_save(&t, again, sizeof again);
                    PKT_CHECK(l2 == len && memcmp(again, text, len) == 0,
                              "state %zu: change at %zu to '%c' accepted as a different state", k, i, alphabet[c]);
                }
            }
            /* a character dropped */
            memcpy(changed, text, i);
            memcpy(changed + i, text + i + 1, len - i - 1);
            pk_wsplit t;
            PKT_CHECK(pk_wsplit_load(&t, points[k].n, changed, len - 1) != 0, "state %zu: drop at %zu", k, i);
            PKT_BAIL_IF_MANY();
        }
        /* truncations */
        for (size_t i = 0; i < len; i++) {
            pk_wsplit t;
            PKT_CHECK(pk_wsplit_load(&t, points[k].n, text, i) != 0, "state %zu: truncated to %zu", k, i);
        }
    }
    /* trial division, rho, and ECM at a new curve, in stage 1 and in stage 2 */
    PKT_CHECK(stages == (1u | 2u | 8u | 16u | 32u), "the saved states cover every kind (mask %zx)", stages);
    pkt_say("%zu changed states, all refused or equivalent", tried);
}
