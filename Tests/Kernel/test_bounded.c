/*
 * test_bounded.c — the GMP window work in stints (CKernel/bounded.c and the
 * window check of trial/gmp.c): the gcd, the Barrett reduction and the products
 * against GMP, every stint's operands within the cap, and interrupts raised at
 * many points of big-cofactor jobs (segment products, pairing, folding, gcd)
 * resuming to the answer of an uninterrupted run on every dispatch path, with
 * and without a cache, with checkpoint/restore in between.
 *
 * These tests look inside the kernel (pk_internal.h): the optimised build
 * links bounded.o next to the shared library for the first two, and reads job
 * fields (poll counters, the window check's state) for the others.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkt.h"
#include "pk_internal.h"
#include "trial/trial.h"

/* ------------------------------------------------------------ helpers */

/* A poll that asks to stop with probability 1/every (0: never). */
typedef struct stopper {
    pkt_rng *rng;
    uint64_t every;
    uint64_t polls, stops;
} stopper;

static int stop_sometimes(void *ctx)
{
    stopper *s = ctx;
    s->polls++;
    if (s->every && pkt_rand_below(s->rng, s->every) == 0) {
        s->stops++;
        return 1;
    }
    return 0;
}

static size_t limbs_of_bits(size_t bits) { return (bits + 63) / 64; }

/* A random number of exactly `bits` bits (0 bits: zero); sometimes with long
   runs of ones and zeros, which make carries and quotients unusual. */
static void rand_number(pkt_rng *rng, mpz_t out, unsigned bits)
{
    if (bits == 0) {
        mpz_set_ui(out, 0);
        return;
    }
    if (pkt_rand_below(rng, 4) == 0) {
        mpz_set_ui(out, 0);
        mpz_setbit(out, bits - 1);
        unsigned pos = 0;
        while (pos < bits - 1) {
            unsigned run = (unsigned)pkt_rand_range(rng, 1, 200);
            int one = (int)pkt_rand_below(rng, 2);
            for (unsigned i = 0; i < run && pos < bits - 1; i++, pos++)
                if (one) mpz_setbit(out, pos);
        }
        return;
    }
    pkt_rand_bits(rng, out, bits);
}

/* gcd(a, b) in stints with a random cap, stopping now and then and resuming;
   compares with mpz_gcd and checks the stints' operand sizes. */
static void gcd_case(pkt_rng *rng, const mpz_t a, const mpz_t b, const char *what, uint64_t *stops)
{
    size_t big = mpz_size(a) > mpz_size(b) ? mpz_size(a) : mpz_size(b);
    size_t cap = 4 + (size_t)pkt_rand_below(rng, big / 2 + 8);
    mpz_t want, got;
    mpz_init(want);
    mpz_init(got);
    mpz_gcd(want, a, b);
    pk_gcd g;
    pk_gcd_init(&g);
    stopper s = {rng, pkt_rand_below(rng, 3) ? 40 : 0, 0, 0};
    int rc = pk_gcd_start(&g, a, b, cap);
    PKT_CHECK_STATUS(rc, PK_OK, "pk_gcd_start");
    unsigned calls = 0;
    while (rc == PK_OK && (rc = pk_gcd_run(&g, got, stop_sometimes, &s)) == 0 && ++calls < 10000000)
        ;
    PKT_CHECK(rc == 1, "%s: pk_gcd_run returned %d", what, rc);
    if (rc == 1 && mpz_cmp(got, want) != 0) {
        char *as = mpz_get_str(NULL, 16, a), *bs = mpz_get_str(NULL, 16, b);
        PKT_CHECK(0, "%s: gcd in stints differs from mpz_gcd (cap %zu, %zu/%zu bits): a=%.60s... b=%.60s...",
                  what, cap, mpz_sizeinbase(a, 2), mpz_sizeinbase(b, 2), as, bs);
        free(as);
        free(bs);
    }
    PKT_CHECK(g.mp.max_limbs <= cap, "%s: a product stint had %zu-limb operands, cap %zu", what, g.mp.max_limbs,
              cap);
    *stops += s.stops;
    pk_gcd_clear(&g);
    mpz_clear(want);
    mpz_clear(got);
}

void test_gcd_in_stints_matches_mpz_gcd(void)
{
    unsigned rounds = PKT_SIZE(400u, 120u), max_bits = PKT_SIZE(200000u, 40000u);
    pkt_say("checks: pk_gcd (half-gcd on an explicit stack, any unimodular step accepted) against mpz_gcd on "
            "%u random pairs up to %u bits with random caps, stopped and resumed at random stints, and on "
            "adversarial pairs: zero, equal, one dividing the other, consecutive Fibonacci numbers, 2^k +- 1, "
            "huge quotients, large common factors, negative inputs; no product stint exceeds the cap",
            rounds, max_bits);
    pkt_rng rng;
    pkt_rng_for(&rng, "gcd-pieces");
    mpz_t a, b, c, t;
    mpz_init(a);
    mpz_init(b);
    mpz_init(c);
    mpz_init(t);
    uint64_t stops = 0;
    char what[96];
    for (unsigned r = 0; r < rounds; r++) {
        unsigned bits = (unsigned)pkt_rand_range(&rng, 1, r < rounds / 2 ? 20000 : max_bits);
        rand_number(&rng, a, bits);
        rand_number(&rng, b, (unsigned)pkt_rand_range(&rng, 0, bits + 64));
        if (r % 3 == 0) { /* a common factor */
            rand_number(&rng, c, (unsigned)pkt_rand_range(&rng, 1, bits / 2 + 2));
            mpz_mul(a, a, c);
            mpz_mul(b, b, c);
        }
        if (r % 7 == 0)
            mpz_neg(a, a);
        snprintf(what, sizeof what, "random pair %u (%u bits)", r, bits);
        gcd_case(&rng, a, b, what, &stops);
        PKT_BAIL_IF_MANY();
    }
    unsigned big = PKT_SIZE(150000u, 30000u);
    /* zero and equal */
    mpz_set_ui(a, 0);
    mpz_set_ui(b, 0);
    gcd_case(&rng, a, b, "0, 0", &stops);
    rand_number(&rng, a, big);
    gcd_case(&rng, a, b, "a, 0", &stops);
    gcd_case(&rng, b, a, "0, a", &stops);
    gcd_case(&rng, a, a, "a, a", &stops);
    /* one divides the other, small and huge quotients */
    rand_number(&rng, b, big / 3);
    mpz_mul_ui(a, b, 3);
    gcd_case(&rng, a, b, "3b, b", &stops);
    rand_number(&rng, c, big);
    mpz_mul(a, b, c);
    gcd_case(&rng, a, b, "b*c, b", &stops);
    mpz_add_ui(a, a, 1);
    gcd_case(&rng, a, b, "b*c + 1, b", &stops);
    /* a huge quotient in the middle of the run */
    rand_number(&rng, b, big / 2);
    mpz_mul_2exp(a, b, big / 2);
    rand_number(&rng, c, big / 4);
    mpz_add(a, a, c);
    gcd_case(&rng, a, b, "b*2^k + c, b", &stops);
    /* consecutive Fibonacci numbers: every quotient is 1 */
    mpz_fib2_ui(a, b, PKT_SIZE(200000ul, 40000ul));
    gcd_case(&rng, a, b, "F(n), F(n-1)", &stops);
    mpz_mul_ui(c, a, 12345);
    mpz_mul_ui(t, b, 12345);
    gcd_case(&rng, c, t, "12345 F(n), 12345 F(n-1)", &stops);
    /* powers of two and their neighbours */
    mpz_set_ui(a, 0);
    mpz_setbit(a, big);
    mpz_sub_ui(b, a, 1);
    gcd_case(&rng, a, b, "2^k, 2^k - 1", &stops);
    mpz_add_ui(c, a, 1);
    gcd_case(&rng, c, b, "2^k + 1, 2^k - 1", &stops);
    mpz_set_ui(b, 0);
    mpz_setbit(b, big / 2);
    gcd_case(&rng, a, b, "2^k, 2^j", &stops);
    mpz_sub_ui(b, b, 1);
    mpz_sub_ui(a, a, 1);
    gcd_case(&rng, a, b, "2^k - 1, 2^j - 1", &stops);
    /* a large common factor and cofactors differing in one bit */
    rand_number(&rng, c, big);
    mpz_mul_ui(a, c, 65537);
    mpz_mul_ui(b, c, 65539);
    gcd_case(&rng, a, b, "65537 c, 65539 c", &stops);
    mpz_mul(a, c, c);
    gcd_case(&rng, a, c, "c^2, c", &stops);
    pkt_say("%llu stops resumed", (unsigned long long)stops);
    PKT_CHECK(stops >= PKT_SIZE(1000u, 20u), "the gcd was hardly ever stopped (%llu): resumption untested",
              (unsigned long long)stops);
    mpz_clear(a);
    mpz_clear(b);
    mpz_clear(c);
    mpz_clear(t);
}

void test_barrett_reduction_and_products_in_stints_match_gmp(void)
{
    unsigned rounds = PKT_SIZE(300u, 80u);
    pkt_say("checks: pk_bmul_stint and pk_karatsuba against mpz_mul (signs, zero, unbalanced operands; stints counted, "
            "no stint above the cap), the Barrett reciprocal within a few units of floor(2^(n + block) / m), and "
            "pk_reduce, and pk_fold followed by pk_reduce, against mpz_fdiv_r for %u random and edge-case dividends (below m, m, k*m, k*m - 1, "
            "all ones; moduli of all ones and powers of two), with random caps",
            rounds);
    pkt_rng rng;
    pkt_rng_for(&rng, "barrett-pieces");
    mpz_t x, y, want, got, tmp, m, e;
    mpz_init(x);
    mpz_init(y);
    mpz_init(want);
    mpz_init(got);
    mpz_init(tmp);
    mpz_init(m);
    mpz_init(e);
    for (unsigned r = 0; r < rounds; r++) {
        rand_number(&rng, x, (unsigned)pkt_rand_range(&rng, 0, 60000));
        rand_number(&rng, y, (unsigned)pkt_rand_range(&rng, 0, 60000));
        if (r & 1) mpz_neg(x, x);
        if (r & 2) mpz_neg(y, y);
        size_t cap = 1 + (size_t)pkt_rand_below(&rng, 400);
        mpz_mul(want, x, y);
        pk_bmul st;
        memset(&st, 0, sizeof st);
        unsigned stints = 1;
        while (!pk_bmul_stint(got, x, y, cap, &st, tmp))
            stints++;
        PKT_CHECK(mpz_cmp(got, want) == 0, "pk_bmul_stint round %u differs (cap %zu)", r, cap);
        size_t xn = mpz_size(x), yn = mpz_size(y), hi = xn > yn ? xn : yn, lo = xn > yn ? yn : xn;
        if (lo <= cap || 2 * lo < hi) { /* slices (balanced ones above the cap go by Karatsuba) */
            size_t expect = lo == 0 || hi <= cap ? 1 : ((hi + cap - 1) / cap) * ((lo + cap - 1) / cap);
            PKT_CHECK(stints == expect, "pk_bmul_stint: %u stints, expected %zu (%zu x %zu limbs, cap %zu)", stints,
                      expect, xn, yn, cap);
        }
        PKT_CHECK(st.max_limbs <= cap || st.max_limbs <= 1, "pk_bmul_stint: a %zu-limb operand, cap %zu",
                  st.max_limbs, cap);
        pk_bmul_clear(&st);
        if (mpz_sgn(x) >= 0 && mpz_sgn(y) >= 0) {
            pk_karatsuba km;
            pk_karatsuba_init(&km);
            pk_karatsuba_start(&km, got, x, y, cap);
            while (!pk_karatsuba_stint(&km))
                ;
            PKT_CHECK(mpz_cmp(got, want) == 0, "pk_karatsuba round %u differs (cap %zu)", r, cap);
            PKT_CHECK(km.max_limbs <= cap || km.max_limbs <= 1, "pk_karatsuba: a %zu-limb operand, cap %zu",
                      km.max_limbs, cap);
            pk_karatsuba_clear(&km);
        }
        PKT_BAIL_IF_MANY();
    }
    for (unsigned r = 0; r < rounds; r++) {
        unsigned nbits = (unsigned)pkt_rand_range(&rng, 65, 40000);
        if (r % 10 == 0) { /* all ones */
            mpz_set_ui(m, 0);
            mpz_setbit(m, nbits);
            mpz_sub_ui(m, m, 1);
        } else if (r % 10 == 1) { /* a power of two */
            mpz_set_ui(m, 0);
            mpz_setbit(m, nbits - 1);
        } else {
            rand_number(&rng, m, nbits);
        }
        size_t n = mpz_sizeinbase(m, 2);
        size_t cap = 1 + (size_t)pkt_rand_below(&rng, limbs_of_bits(n) + 4);
        pk_modulus md;
        pk_modulus_init(&md);
        pk_modulus_set(&md, m, cap);
        while (!pk_modulus_stint(&md))
            ;
        mpz_set_ui(e, 0);
        mpz_setbit(e, n + md.cmax);
        mpz_fdiv_q(e, e, m);
        mpz_sub(e, e, md.mu);
        PKT_CHECK(mpz_cmpabs_ui(e, 8) <= 0, "Barrett reciprocal of a %zu-bit modulus (blocks of %zu bits) is off "
                  "by more than 8", n, md.cmax);
        for (unsigned k = 0; k < 6; k++) {
            switch (k) {
            case 0: rand_number(&rng, x, (unsigned)pkt_rand_range(&rng, 0, (unsigned)n)); break;
            case 1: mpz_set(x, m); break;
            case 2:
                rand_number(&rng, y, (unsigned)pkt_rand_range(&rng, 1, 3 * (unsigned)n));
                mpz_mul(x, m, y);
                break;
            case 3: mpz_sub_ui(x, x, 1); break;
            case 4:
                mpz_set_ui(x, 0);
                mpz_setbit(x, (unsigned)pkt_rand_range(&rng, n, 8 * n));
                mpz_sub_ui(x, x, 1);
                break;
            default: rand_number(&rng, x, (unsigned)pkt_rand_range(&rng, n, 12 * n)); break;
            }
            pk_reduce rd;
            pk_reduce_init(&rd);
            pk_reduce_start(&rd, x, &md);
            while (!pk_reduce_stint(&rd, x, &md, tmp))
                ;
            mpz_fdiv_r(want, x, m);
            PKT_CHECK(mpz_cmp(rd.r, want) == 0, "pk_reduce differs: %zu-bit x mod %zu-bit m, case %u, cap %zu",
                      mpz_sizeinbase(x, 2), n, k, cap);
            PKT_CHECK(rd.mp.max_limbs <= cap + 1, "pk_reduce: a %zu-limb operand, cap %zu", rd.mp.max_limbs, cap);
            /* Folding with F = 2^split mod m, then Barrett: the same remainder, the state bounded. */
            size_t fc = 64 * cap, split = n + 1 + fc;
            mpz_set_ui(e, 0);
            mpz_setbit(e, split);
            mpz_fdiv_r(e, e, m);
            pk_fold fd;
            pk_fold_init(&fd);
            pk_fold_start(&fd, x, split, fc);
            while (!pk_fold_stint(&fd, x, e, split, fc, cap, tmp))
                ;
            PKT_CHECK(mpz_sgn(fd.r) >= 0 && mpz_sizeinbase(fd.r, 2) <= split + 2,
                      "pk_fold left %zu bits (split %zu)", mpz_sizeinbase(fd.r, 2), split);
            PKT_CHECK(fd.mp.max_limbs <= cap, "pk_fold: a %zu-limb operand, cap %zu", fd.mp.max_limbs, cap);
            pk_reduce_start(&rd, fd.r, &md);
            while (!pk_reduce_stint(&rd, fd.r, &md, tmp))
                ;
            PKT_CHECK(mpz_cmp(rd.r, want) == 0, "folding then Barrett differs: %zu-bit x mod %zu-bit m, cap %zu",
                      mpz_sizeinbase(x, 2), n, cap);
            pk_fold_clear(&fd);
            pk_reduce_clear(&rd);
        }
        PKT_CHECK(md.mp.max_limbs <= cap, "reciprocal: a %zu-limb operand, cap %zu", md.mp.max_limbs, cap);
        pk_modulus_clear(&md);
        PKT_BAIL_IF_MANY();
    }
    mpz_clear(x);
    mpz_clear(y);
    mpz_clear(want);
    mpz_clear(got);
    mpz_clear(tmp);
    mpz_clear(m);
    mpz_clear(e);
}

/* ------------------------------------------------------- jobs, interrupted */

/* Where an interrupt raised at a poll found the job. */
enum { AT_SEGMENT, AT_PAIRING, AT_MODULUS, AT_FOLD, AT_GCD, AT_OTHER, AT_COUNT };
static const char *const at_name[AT_COUNT] = {"segment products", "pairing", "reciprocal", "folding", "gcd",
                                              "between segments"};

static int where(const pk_job *job)
{
    const pk_window_check *wc = job->wc;
    if (wc && (wc->stage == PK_CHECK_MODULUS || wc->stage == PK_CHECK_CONSTANT)) return AT_MODULUS;
    if (wc && wc->stage == PK_CHECK_FOLD) return AT_FOLD;
    if (wc && wc->stage == PK_CHECK_GCD) return AT_GCD;
    if (wc && wc->pairing) return AT_PAIRING;
    if (job->rp_active) return AT_SEGMENT;
    return AT_OTHER;
}

/* A candidate of about `digits` digits with planted primes below bound
   (some squared, one at the very start and one near the bound). */
static char *planted_candidate(pkt_rng *rng, unsigned digits, uint64_t bound, mpz_t n)
{
    mpz_t p;
    mpz_init(p);
    pkt_rand_bits(rng, n, (unsigned)(digits * 3.3219280948873623));
    mpz_mul_ui(n, n, 4);
    mpz_set_ui(p, bound - pkt_rand_range(rng, 1000, 50000));
    mpz_nextprime(p, p);
    mpz_mul(n, n, p);
    for (int k = 0; k < 6; k++) {
        mpz_set_ui(p, pkt_rand_range(rng, 3, bound - 1));
        mpz_nextprime(p, p);
        if (mpz_cmp_ui(p, bound) > 0) continue;
        mpz_mul(n, n, p);
        if (k % 3 == 0) mpz_mul(n, n, p);
    }
    mpz_clear(p);
    return mpz_get_str(NULL, 10, n);
}

static pk_job *make_job(const char *cand, const char *bound, int simd, pk_cache *cache)
{
    pk_options o;
    pk_options_init(&o);
    o.bound = bound;
    o.simd = simd;
    o.cache = cache;
    pk_job *job = NULL;
    PKT_CHECK_STATUS(pk_job_create(cand, &o, &job), PK_OK, "create");
    return job;
}

static pk_job *restore_job(pk_job *job, int simd, pk_cache *cache)
{
    size_t len = 0;
    char *text = pkt_checkpoint(job, &len);
    if (!text) {
        PKT_CHECK(0, "checkpoint failed");
        return job;
    }
    pk_options o;
    pk_options_init(&o);
    o.simd = simd;
    o.cache = cache;
    pk_job *next = NULL;
    int st = pk_job_restore(text, len, &o, &next);
    free(text);
    PKT_CHECK_STATUS(st, PK_OK, "restore of a checkpoint written between interrupted steps");
    if (st != PK_OK || !next) return job;
    pk_job_destroy(job);
    return next;
}

/* Run job to the end with an interrupt raised at a random poll of every step
   (the poll counter of the job; `span` polls apart on average, every fourth
   poll when span is 0), a checkpoint
   and restore after every eighth interrupted step; count where each interrupt
   landed and check the step returned at that very poll. */
static pk_job *run_interrupted(pk_job *job, pkt_rng *rng, uint64_t span, int simd, pk_cache *cache,
                               unsigned long *at, unsigned *restores, unsigned *steps)
{
    int st;
    unsigned n = 0, run_restores = 0;
    do {
        /* Some work per step: a step polls before any work, and up to three polls can
           follow one another with no stint between them (the step, a segment, a stage). */
        uint64_t trap = job->polls + 4 + pkt_rand_below(rng, 2 * span + 1);
        job->poll_trap = trap;
        st = pk_job_step(job, UINT64_MAX);
        n++;
        if (st == PK_INTERRUPTED) {
            PKT_CHECK(job->polls == trap, "an interrupt raised at poll %llu returned at poll %llu",
                      (unsigned long long)trap, (unsigned long long)job->polls);
            at[where(job)]++;
            /* A restored job starts its window check over (the checkpoint keeps the window's
               residue, not the check's progress): a few restores per run. */
            if (run_restores < 3 && pkt_rand_below(rng, 16) == 0) {
                job = restore_job(job, simd, cache);
                (*restores)++;
                run_restores++;
            }
        }
        job->poll_trap = 0;
    } while (st == PK_INTERRUPTED && n < 200000);
    PKT_CHECK_STATUS(st, PK_DONE, "run with interrupts");
    *steps += n;
    return job;
}

static void check_same(pk_job *job, const pkt_answer *ref, const char *what)
{
    pkt_answer got;
    char why[300];
    int st = pkt_answer_read(job, &got);
    PKT_CHECK_STATUS(st, PK_OK, "read answer");
    if (st == PK_OK)
        PKT_CHECK(pkt_answer_equal(&got, ref, why, sizeof why), "%s: answer differs from the uninterrupted run: %s",
                  what, why);
    pkt_answer_free(&got);
}

void test_interrupts_inside_window_work_resume_to_the_same_answer(void)
{
    unsigned digits = PKT_SIZE(30000u, 8000u);
    const uint64_t bound = 2000000;
    const char *bound_s = "2000000";
    pkt_say("checks: a %u-digit candidate with planted primes below %s (GMP windows): interrupts raised at "
            "random polls of every step (segment products, Karatsuba pairing, the reciprocal, folding, the gcd) "
            "return at that very poll, and the job, resumed (and a few times checkpointed and restored), "
            "ends with the answer of an uninterrupted run (itself checked against GMP facts), on every dispatch path, "
            "without a cache and with a shared cache (cold, then warm)",
            digits, bound_s);
    pkt_rng rng;
    pkt_rng_for(&rng, "window-interrupts");
    mpz_t n;
    mpz_init(n);
    char *cand = planted_candidate(&rng, digits, bound, n);
    pkt_answer ref;
    pkt_answer_init(&ref);
    pk_job *job = make_job(cand, bound_s, PK_SIMD_AUTO, NULL);
    uint64_t total_polls = 0;
    if (job) {
        PKT_CHECK_STATUS(pkt_run(job, UINT64_MAX, 4), PK_DONE, "uninterrupted run");
        total_polls = job->polls;
        PKT_CHECK_STATUS(pkt_answer_read(job, &ref), PK_OK, "answer");
        pkt_check_answer_facts(n, &ref, "uninterrupted run");
        pk_job_destroy(job);
    }
    PKT_CHECK(ref.nfactors >= 3, "the planted primes were not found (%zu factors)", ref.nfactors);
    unsigned long at[AT_COUNT] = {0};
    unsigned restores = 0, steps = 0, runs = 0;
    const int paths[3] = {PK_SIMD_PORTABLE, PK_SIMD_AVX2, PK_SIMD_AVX512};
    uint64_t span = total_polls / 100 + 1;
    for (int pi = 0; pi < 3; pi++) {
        for (int mode = 0; mode < 2; mode++) {
            pk_cache *cache = NULL;
            if (mode == 1) PKT_CHECK_STATUS(pk_cache_create(0, &cache), PK_OK, "cache");
            for (int pass = 0; pass < (mode ? 2 : 1); pass++) {
                /* Cold passes interrupt often; the warm pass (far less work) about as often per poll. */
                job = make_job(cand, bound_s, paths[pi], cache);
                if (!job) continue;
                job = run_interrupted(job, &rng, span, paths[pi], cache, at, &restores, &steps);
                char what[80];
                snprintf(what, sizeof what, "simd %d, %s", paths[pi],
                         mode == 0 ? "no cache" : pass == 0 ? "cache, cold" : "cache, warm");
                check_same(job, &ref, what);
                pk_job_destroy(job);
                runs++;
            }
            pk_cache_destroy(cache);
        }
    }
    /* And once with an interrupt at every fourth poll (cold cache): a stint or two per step. */
    {
        pk_cache *cache = NULL;
        PKT_CHECK_STATUS(pk_cache_create(0, &cache), PK_OK, "cache");
        job = make_job(cand, bound_s, PK_SIMD_AUTO, cache);
        if (job) {
            job = run_interrupted(job, &rng, 0, PK_SIMD_AUTO, cache, at, &restores, &steps);
            check_same(job, &ref, "an interrupt at every poll");
            pk_job_destroy(job);
            runs++;
        }
        pk_cache_destroy(cache);
    }
    pkt_say("%u runs, %u steps, %u restores; an uninterrupted run polls %llu times", runs, steps, restores,
            (unsigned long long)total_polls);
    for (int k = 0; k < AT_COUNT; k++)
        pkt_say("  interrupts during %-18s %lu", at_name[k], at[k]);
    PKT_CHECK(at[AT_SEGMENT] > 0 && at[AT_PAIRING] > 0 && at[AT_FOLD] > 0 && at[AT_GCD] > 0 && at[AT_MODULUS] > 0,
              "some stage of the window work was never interrupted");
    pkt_answer_free(&ref);
    free(cand);
    mpz_clear(n);
}

void test_window_check_is_cut_into_bounded_stints(void)
{
    unsigned digits = PKT_SIZE(100000u, 20000u);
    const char *bound_s = PKT_SANITIZED ? "1000000" : "10000000";
    pkt_say("checks: a %u-digit candidate, bound %s, cold with a cache then warm: an interrupt raised at a poll "
            "inside the window check returns there with the check still in progress, every multiplication "
            "stint of the window work (segment pairing, reciprocal, reduction, folding, gcd) has operands of "
            "at most the cap, and the window check is cut into many stints (counted, not timed)",
            digits, bound_s);
    pkt_rng rng;
    pkt_rng_for(&rng, "bounded-pieces");
    mpz_t n;
    mpz_init(n);
    pkt_rand_bits(&rng, n, (unsigned)(digits * 3.3219280948873623));
    mpz_setbit(n, 0);
    char *cand = mpz_get_str(NULL, 10, n);
    pk_cache *cache = NULL;
    PKT_CHECK_STATUS(pk_cache_create(0, &cache), PK_OK, "cache");
    for (int pass = 0; pass < 2; pass++) {
        pk_job *job = make_job(cand, bound_s, PK_SIMD_AUTO, cache);
        if (!job) break;
        /* Interrupt every 97 polls; look at the state after each. */
        uint64_t check_polls = 0, checks_seen = 0, in_check = 0;
        size_t worst = 0, cap = 0;
        int st;
        unsigned guard = 0;
        do {
            job->poll_trap = job->polls + 97;
            uint64_t before = job->polls;
            int was_checking = job->wc && job->wc->stage != 0;
            st = pk_job_step(job, UINT64_MAX);
            const pk_window_check *wc = job->wc;
            if (st == PK_INTERRUPTED && wc) {
                PKT_CHECK(job->polls == job->poll_trap, "returned at poll %llu, interrupt raised at %llu",
                          (unsigned long long)job->polls, (unsigned long long)job->poll_trap);
                if (wc->stage != 0) {
                    in_check++;
                    if (was_checking) check_polls += job->polls - before;
                }
                size_t m = wc->mp.max_limbs;
                if (wc->rd.mp.max_limbs > m) m = wc->rd.mp.max_limbs;
                if (wc->fd.mp.max_limbs > m) m = wc->fd.mp.max_limbs;
                if (wc->md.mp.max_limbs > m) m = wc->md.mp.max_limbs;
                if (wc->gcd.mp.max_limbs > m) m = wc->gcd.mp.max_limbs;
                if (wc->km.max_limbs > m) m = wc->km.max_limbs;
                if (m > worst) worst = m;
                if (wc->cap) cap = wc->cap;
                if (wc->stage == PK_CHECK_GCD) checks_seen = 1;
            }
            job->poll_trap = 0;
        } while (st == PK_INTERRUPTED && ++guard < 1000000);
        PKT_CHECK_STATUS(st, PK_DONE, "run");
        pkt_say("%s: cap %zu limbs, largest stint operand %zu limbs, %llu interrupts inside the window check, "
                "%llu polls counted inside it",
                pass ? "warm" : "cold", cap, worst, (unsigned long long)in_check, (unsigned long long)check_polls);
        PKT_CHECK(cap > 0 && worst <= cap + 1, "a stint had %zu-limb operands, cap %zu", worst, cap);
        PKT_CHECK(checks_seen, "no interrupt landed in the gcd");
        PKT_CHECK(in_check >= 10 && check_polls >= PKT_SIZE(5000u, 1000u),
                  "the window check was interrupted only %llu times, %llu polls: stints too few",
                  (unsigned long long)in_check, (unsigned long long)check_polls);
        pkt_answer a;
        pkt_answer_init(&a);
        PKT_CHECK_STATUS(pkt_answer_read(job, &a), PK_OK, "answer");
        pkt_check_answer_facts(n, &a, "bounded stints");
        pkt_answer_free(&a);
        pk_job_destroy(job);
    }
    pk_cache_destroy(cache);
    free(cand);
    mpz_clear(n);
}

/* Steps a trial division of n over [from, from + 10^6] to the end, with `budget` per step or, when trap_every
   is not 0, an unlimited budget and an interrupt raised trap_every polls into each step. Returns the steps
   taken before the first divisor was tested; the answer goes to got. */
static unsigned long high_start_run(const char *n, const char *from, const char *bound, uint64_t budget,
                                    uint64_t trap_every, pkt_answer *got)
{
    pk_options o;
    pk_options_init(&o);
    o.from = from;
    o.bound = bound;
    pk_job *job = NULL;
    PKT_CHECK_STATUS(pk_job_create(n, &o, &job), PK_OK, "create");
    if (!job) return 0;
    unsigned long steps = 0, before_first = 0;
    int st;
    do {
        if (trap_every) job->poll_trap = job->polls + trap_every;
        st = pk_job_step(job, trap_every ? UINT64_MAX : budget);
        job->poll_trap = 0;
        steps++;
        pk_progress p;
        pkt_progress(job, &p);
        if (p.divisors_tested == 0) before_first = steps;
    } while ((st == PK_MORE || st == PK_INTERRUPTED) && steps < 1000000);
    PKT_CHECK_STATUS(st, PK_DONE, "high-start run");
    PKT_CHECK_STATUS(pkt_answer_read(job, got), PK_OK, "answer");
    pk_job_destroy(job);
    return before_first;
}

void test_sieve_set_up_far_from_zero_yields_to_budget_and_interrupts(void)
{
    pkt_say("checks: trial division of p * (2^127 - 1) * (2^89 - 1) over [10^14, 10^14 + 10^6] (p the first prime "
            "above 10^14 + 5 * 10^5): the sieve's set-up (base primes to 10^7, aligned to 10^14) is cut by a "
            "budget of 1 and by interrupts, and each way finds p alone");
    mpz_t p, n, m;
    mpz_inits(p, n, m, NULL);
    mpz_set_str(p, "100000000500000", 10);
    mpz_nextprime(p, p);
    mpz_ui_pow_ui(n, 2, 127);
    mpz_sub_ui(n, n, 1);
    mpz_ui_pow_ui(m, 2, 89);
    mpz_sub_ui(m, m, 1);
    mpz_mul(m, m, n); /* the cofactor expected */
    mpz_mul(n, m, p);
    char *cand = mpz_get_str(NULL, 10, n), *ps = mpz_get_str(NULL, 10, p), *ms = mpz_get_str(NULL, 10, m);
    const char *from = "100000000000000", *bound = "100000001000000";
    pkt_answer by_budget, by_interrupt, whole;
    pkt_answer_init(&by_budget);
    pkt_answer_init(&by_interrupt);
    pkt_answer_init(&whole);
    unsigned long waited = high_start_run(cand, from, bound, 1, 0, &by_budget);
    /* 10^7 / 2^18 growth chunks and 620,000 base primes / 65,536 aligned per chunk, one chunk a step. */
    PKT_CHECK(waited >= 20, "the set-up took %lu steps of budget 1 (not cut into chunks)", waited);
    high_start_run(cand, from, bound, 0, 3, &by_interrupt);
    high_start_run(cand, from, bound, UINT64_MAX, 0, &whole);
    const pkt_answer *answers[] = {&by_budget, &by_interrupt, &whole};
    for (size_t i = 0; i < 3; i++) {
        const pkt_answer *a = answers[i];
        PKT_CHECK(a->nfactors == 1 && strcmp(a->factors[0], ps) == 0 && a->exponents[0] == 1,
                  "answer %zu: %zu factors, first %s (want %s)", i, a->nfactors,
                  a->nfactors ? a->factors[0] : "-", ps);
        PKT_CHECK(a->cofactor && strcmp(a->cofactor, ms) == 0, "answer %zu: cofactor %s", i,
                  a->cofactor ? a->cofactor : "-");
    }
    pkt_say("set-up over %lu steps of budget 1", waited);
    pkt_answer_free(&by_budget);
    pkt_answer_free(&by_interrupt);
    pkt_answer_free(&whole);
    free(cand);
    free(ps);
    free(ms);
    mpz_clears(p, n, m, NULL);
}
