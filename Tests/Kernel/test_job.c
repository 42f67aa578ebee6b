/*
 * test_job.c — the life of a job: progress, budgets, interrupts, divisor
 * ranges and merging.
 */
#define _POSIX_C_SOURCE 200809L
#include "pkt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *mpz_dec(const mpz_t z) { return mpz_get_str(NULL, 10, z); }


/* After each step: the progress invariants, and every factor listed so far
   is prime, divides n and has an exponent. */
typedef struct watch {
    const char *cand;
    pk_progress pr;
    unsigned steps;
    size_t listed_max;
} watch;

static void watch_step(void *ctx, pk_job **job, int st)
{
    watch *w = ctx;
    (void)st;
    pk_progress before = w->pr;
    w->steps++;
    pkt_progress(*job, &w->pr);
    pkt_check_progress_step(&before, &w->pr, w->cand);
    if (w->pr.factors_found <= w->listed_max)
        return;
    char **f;
    uint64_t *e;
    mpz_t n, p;
    mpz_init_set_str(n, w->cand, 10);
    mpz_init(p);
    if (pkt_factors_read(*job, w->pr.factors_found, &f, &e) == PK_OK) {
        for (size_t k = 0; k < w->pr.factors_found; k++) {
            mpz_set_str(p, f[k], 10);
            PKT_CHECK(mpz_divisible_p(n, p) && mpz_probab_prime_p(p, 25) && e[k] >= 1, "running job lists %s^%llu",
                      f[k], (unsigned long long)e[k]);
        }
        pkt_factors_free(w->pr.factors_found, f, e);
    } else {
        PKT_CHECK(0, "pk_job_factor on a running job failed");
    }
    mpz_clears(n, p, NULL);
    w->listed_max = w->pr.factors_found;
}

void test_progress_never_decreases_and_is_100_when_done(void)
{
    pkt_say("checks: progress on each path (64-bit, 128-bit, GMP): the starting path matches the candidate's "
            "size, percent/next/tested/work/factors never decrease over small steps, percent is 100 exactly "
            "when done, and the found factors are listed while the job runs");
    pkt_rng rng;
    pkt_rng_for(&rng, "progress");
    static const struct { unsigned bits; int path; const char *bound; } cases[] = {
        {60, PK_PATH_U64, "3000000"},   {64, PK_PATH_U64, "3000000"},  {100, PK_PATH_U128, "2000000"},
        {128, PK_PATH_U128, "2000000"}, {129, PK_PATH_GMP, "500000"},  {700, PK_PATH_GMP, "300000"},
    };
    mpz_t n, p;
    mpz_init(n);
    mpz_init(p);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* Small factors spread over the range so factors appear while running. */
        for (int tries = 0;; tries++) {
            mpz_set_ui(n, 1);
            for (int k = 0; k < 3; k++) {
                pkt_rand_prime(&rng, p, (unsigned)pkt_rand_range(&rng, 8, 20));
                mpz_mul(n, n, p);
            }
            size_t have = mpz_sizeinbase(n, 2);
            if (have + 2 > cases[i].bits) continue;
            pkt_rand_prime(&rng, p, cases[i].bits - (unsigned)have);
            mpz_mul(n, n, p);
            if (mpz_sizeinbase(n, 2) == cases[i].bits || tries > 50) break;
        }
        char *cand = mpz_dec(n);
        pk_options o;
        pk_options_init(&o);
        o.bound = cases[i].bound;
        pk_job *job = NULL;
        PKT_CHECK_STATUS(pk_job_create(cand, &o, &job), PK_OK, cand);
        if (!job) {
            free(cand);
            continue;
        }
        pk_progress pr;
        PKT_CHECK_STATUS(pkt_progress(job, &pr), PK_OK, "progress of a fresh job");
        int want_path = mpz_sizeinbase(n, 2) <= 64 ? PK_PATH_U64 : mpz_sizeinbase(n, 2) <= 128 ? PK_PATH_U128 : PK_PATH_GMP;
        PKT_CHECK(pr.path == want_path && want_path == cases[i].path, "%u-bit candidate starts on path %d, want %d",
                  cases[i].bits, pr.path, want_path);
        PKT_CHECK(pr.done == 0 && pr.percent >= 0.0 && pr.percent < 100.0 && pr.factors_found == 0,
                  "fresh job progress: done %d percent %.17g factors %zu", pr.done, pr.percent, pr.factors_found);
        PKT_CHECK(pr.next_divisor == 2, "fresh job next_divisor %llu", (unsigned long long)pr.next_divisor);
        /* Step in pieces of ~1/20 of the work, watching the invariants. */
        watch w = {cand, pr, 0, 0};
        pkt_drive d = {40000, NULL, watch_step, &w, 100001};
        int st = pkt_drive_job(&job, &d);
        PKT_CHECK_STATUS(st, PK_DONE, "step");
        unsigned steps = w.steps + 1; /* and the last step, which ended the job: */
        pkt_progress(job, &pr);
        pkt_check_progress_step(&w.pr, &pr, cand);
        PKT_CHECK(pr.done && pr.percent == 100.0, "%s: done %d percent %.17g", cand, pr.done, pr.percent);
        pkt_say("%u-bit candidate: %u steps, %llu divisors, %llu work units, %zu factors, ends on path %d",
                cases[i].bits, steps, (unsigned long long)pr.divisors_tested, (unsigned long long)pr.work_done,
                pr.factors_found, pr.path);
        pk_job_destroy(job);
        free(cand);
        PKT_BAIL_IF_MANY();
    }
    mpz_clear(n);
    mpz_clear(p);
}

void test_step_budget_zero_does_no_work_and_small_budgets_finish(void)
{
    pkt_say("checks: step(0) changes nothing; budgets 1, 7, 100, 1000 reach the same answer as one big step, "
            "on the 64-bit, 128-bit and GMP paths");
    static const struct { const char *n, *bound; } cases[] = {
        {"1000036000099", "20000"},                                    /* 1000003 * 1000033 */
        {"340282366920938463463374607431768211457", "20000"},          /* 2^128 + 1 */
        {"115792089237316195423570985008687907853269984665640564039457584007913129639937", "20000"}, /* 2^256+1 */
        {"600851475143", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pkt_answer ref;
        PKT_CHECK_STATUS(pkt_factor(cases[i].n, NULL, cases[i].bound, 0, 0, &ref), PK_OK, cases[i].n);
        static const uint64_t budgets[] = {1, 7, 100, 1000};
        for (size_t b = 0; b < 4; b++) {
            pk_options o;
            pk_options_init(&o);
            o.bound = cases[i].bound;
            pk_job *job = NULL;
            PKT_CHECK_STATUS(pk_job_create(cases[i].n, &o, &job), PK_OK, cases[i].n);
            if (!job) continue;
            pk_progress a, c;
            pkt_progress(job, &a);
            int st = pk_job_step(job, 0);
            pkt_progress(job, &c);
            PKT_CHECK(st == PK_MORE, "step(0) on a fresh job: %s", pk_status_name(st));
            PKT_CHECK(a.work_done == c.work_done && a.next_divisor == c.next_divisor &&
                          a.divisors_tested == c.divisors_tested && a.percent == c.percent,
                      "step(0) did work");
            st = pkt_run(job, budgets[b], 2000000);
            PKT_CHECK_STATUS(st, PK_DONE, "run with a small budget");
            if (st == PK_DONE) {
                pkt_answer got;
                char why[200];
                if (pkt_answer_read(job, &got) == PK_OK)
                    PKT_CHECK(pkt_answer_equal(&got, &ref, why, sizeof why), "%s budget %llu: %s", cases[i].n,
                              (unsigned long long)budgets[b], why);
                pkt_answer_free(&got);
                pkt_progress(job, &a);
                st = pk_job_step(job, 0);
                pkt_progress(job, &c);
                PKT_CHECK(st == PK_DONE && a.work_done == c.work_done, "step(0) on a done job: %s",
                          pk_status_name(st));
            }
            pk_job_destroy(job);
        }
        pkt_answer_free(&ref);
    }
}

void test_interrupt_before_step_is_seen_then_consumed(void)
{
    pkt_say("checks: pk_job_interrupt before a step makes that step return PK_INTERRUPTED; the interrupt is "
            "consumed (the next step continues) and the answer is unchanged");
    const char *n = "1000036000099";
    pkt_answer ref;
    PKT_CHECK_STATUS(pkt_factor(n, NULL, NULL, 0, 0, &ref), PK_OK, n);
    pk_job *job = NULL;
    PKT_CHECK_STATUS(pk_job_create(n, NULL, &job), PK_OK, n);
    if (!job) return;
    pk_job_interrupt(job);
    int st = pk_job_step(job, UINT64_MAX);
    PKT_CHECK_STATUS(st, PK_INTERRUPTED, "step after interrupt");
    /* Twice before one step: still a single interruption. */
    pk_job_interrupt(job);
    pk_job_interrupt(job);
    st = pk_job_step(job, UINT64_MAX);
    PKT_CHECK_STATUS(st, PK_INTERRUPTED, "step after two interrupts");
    st = pk_job_step(job, UINT64_MAX);
    PKT_CHECK_STATUS(st, PK_DONE, "next step runs to the end");
    pkt_answer got;
    char why[200];
    if (pkt_answer_read(job, &got) == PK_OK)
        PKT_CHECK(pkt_answer_equal(&got, &ref, why, sizeof why), "interrupted answer differs: %s", why);
    pkt_answer_free(&got);
    pkt_answer_free(&ref);
    pk_job_destroy(job);
}

/* ------------------------------------------------------------------ ranges */

static int cmp_mpz_str(const void *a, const void *b)
{
    const char *x = *(char *const *)a, *y = *(char *const *)b;
    size_t lx = strlen(x), ly = strlen(y);
    return lx != ly ? (lx < ly ? -1 : 1) : strcmp(x, y);
}

/* Merge pieces by hand: union of factors (exponents must agree), remainder
 * classified as a single job over [2, B] would. */
static int merge_by_hand(const mpz_t n, pk_job **pieces, size_t k, uint64_t B, pkt_answer *out)
{
    pkt_answer_init(out);
    char **all = NULL;
    uint64_t *alle = NULL;
    size_t nall = 0;
    int ok = 1;
    for (size_t i = 0; i < k; i++) {
        pkt_answer a;
        if (pkt_answer_read(pieces[i], &a) != PK_OK) {
            PKT_CHECK(0, "reading piece %zu", i);
            ok = 0;
            continue;
        }
        pkt_check_answer_facts(n, &a, "piece");
        for (size_t j = 0; j < a.nfactors; j++) {
            size_t m;
            for (m = 0; m < nall; m++)
                if (strcmp(all[m], a.factors[j]) == 0) break;
            if (m < nall) {
                PKT_CHECK(alle[m] == a.exponents[j], "pieces disagree on the exponent of %s", all[m]);
                continue;
            }
            all = realloc(all, (nall + 1) * sizeof *all);
            alle = realloc(alle, (nall + 1) * sizeof *alle);
            all[nall] = strdup(a.factors[j]);
            alle[nall++] = a.exponents[j];
        }
        pkt_answer_free(&a);
    }
    /* Sort by value, keeping exponents alongside. */
    for (size_t i = 1; i < nall; i++)
        for (size_t j = i; j > 0 && cmp_mpz_str(&all[j - 1], &all[j]) > 0; j--) {
            char *t = all[j];
            all[j] = all[j - 1];
            all[j - 1] = t;
            uint64_t u = alle[j];
            alle[j] = alle[j - 1];
            alle[j - 1] = u;
        }
    mpz_t c, p;
    mpz_init_set(c, n);
    mpz_init(p);
    for (size_t i = 0; i < nall; i++) {
        mpz_set_str(p, all[i], 10);
        for (uint64_t e = 0; e < alle[i]; e++) mpz_divexact(c, c, p);
    }
    out->factors = all;
    out->exponents = alle;
    out->nfactors = nall;
    pkt_oracle_finish(n, c, 2, B, 0, out);
    mpz_clear(c);
    mpz_clear(p);
    return ok;
}

void test_split_ranges_merge_to_the_unsplit_answer(void)
{
    unsigned trials = PKT_SIZE(300u, 200u);
    pkt_say("checks: %u candidates (64-bit, 128-bit and GMP-sized) split into 2..6 random, possibly overlapping "
            "divisor ranges, each run alone: pk_job_merge (pieces in random order) and a merge by hand both "
            "equal the unsplit answer",
            trials);
    pkt_rng rng;
    pkt_rng_for(&rng, "ranges");
    pkt_planted pl;
    pkt_planted_init(&pl);
    unsigned merged_ok = 0;
    for (unsigned t = 0; t < trials; t++) {
        static const unsigned sizes[][2] = {{30, 64}, {65, 128}, {129, 260}};
        unsigned cls = t % 3;
        pkt_planted_make(&rng, &pl, sizes[cls][0], sizes[cls][1], 20);
        uint64_t B = pkt_rand_range(&rng, 1u << 10, 1u << 20);
        char *cand = mpz_dec(pl.n), bstr[24];
        pkt_u64(B, bstr);
        pkt_answer whole;
        int st = pkt_factor(cand, NULL, bstr, 0, 0, &whole);
        PKT_CHECK_STATUS(st, PK_OK, "unsplit");
        /* Split points 2 = s0 < s1 < ... < s(k-1) <= B. */
        size_t k = (size_t)pkt_rand_range(&rng, 2, 6);
        uint64_t cut[7];
        cut[0] = 2;
        for (size_t i = 1; i < k; i++) cut[i] = pkt_rand_range(&rng, 3, B);
        for (size_t i = 1; i < k; i++) /* sort */
            for (size_t j = i; j > 1 && cut[j - 1] > cut[j]; j--) {
                uint64_t x = cut[j];
                cut[j] = cut[j - 1];
                cut[j - 1] = x;
            }
        cut[k] = B + 1;
        pk_job *pieces[6] = {0};
        size_t np = 0;
        for (size_t i = 0; i < k; i++) {
            if (cut[i] >= cut[i + 1]) continue; /* empty piece (repeated cut) */
            uint64_t lo = cut[i], hi = cut[i + 1] - 1;
            if (pkt_rand_below(&rng, 4) == 0) hi += pkt_rand_below(&rng, 1000); /* overlap the next */
            if (hi > B) hi = B;
            char fs[24], bs[24];
            pkt_u64(lo, fs);
            pkt_u64(hi, bs);
            pk_options o;
            pk_options_init(&o);
            o.from = fs;
            o.bound = (hi == B && pkt_rand_below(&rng, 2)) ? bstr : bs;
            pk_job *job = NULL;
            st = pk_job_create(cand, &o, &job);
            PKT_CHECK_STATUS(st, PK_OK, "create piece");
            if (!job) continue;
            st = pkt_run(job, pkt_rand_below(&rng, 2) ? UINT64_MAX : 5000, 10000000);
            PKT_CHECK_STATUS(st, PK_DONE, "run piece");
            pieces[np++] = job;
        }
        /* Shuffle, then merge. */
        for (size_t i = np; i > 1; i--) {
            size_t j = (size_t)pkt_rand_below(&rng, i);
            pk_job *x = pieces[i - 1];
            pieces[i - 1] = pieces[j];
            pieces[j] = x;
        }
        pk_job *merged = NULL;
        st = pk_job_merge(pieces, np, &merged);
        PKT_CHECK_STATUS(st, PK_OK, "pk_job_merge");
        char why[300], g[600], w[600];
        if (merged && whole.cofactor) {
            PKT_CHECK_STATUS(pk_job_step(merged, UINT64_MAX), PK_DONE, "merged job is finished");
            pk_progress pr;
            pkt_progress(merged, &pr);
            PKT_CHECK(pr.done && pr.percent == 100.0, "merged progress: done %d %.17g%%", pr.done, pr.percent);
            pkt_answer m;
            if (pkt_answer_read(merged, &m) == PK_OK) {
                int eq = pkt_answer_equal(&m, &whole, why, sizeof why);
                if (!eq) {
                    pkt_answer_format(&m, g, sizeof g);
                    pkt_answer_format(&whole, w, sizeof w);
                }
                PKT_CHECK(eq, "n=%s B=%s k=%zu: merge differs: %s\n      merged %s\n      whole  %s", cand, bstr,
                          np, why, g, w);
                merged_ok += (unsigned)eq;
            } else {
                PKT_CHECK(0, "reading the merged answer");
            }
            pkt_answer_free(&m);
            char *mc = NULL;
            size_t len = 0;
            if (pk_job_candidate(merged, NULL, 0, &len) == PK_E_BUFFER) {
                mc = malloc(len + 1);
                pk_job_candidate(merged, mc, len + 1, &len);
                PKT_CHECK(strcmp(mc, cand) == 0, "merged candidate %s", mc);
            }
            free(mc);
        }
        pk_job_destroy(merged);
        pkt_answer hand;
        merge_by_hand(pl.n, pieces, np, B, &hand);
        if (whole.cofactor) {
            int eq = pkt_answer_equal(&hand, &whole, why, sizeof why);
            if (!eq) {
                pkt_answer_format(&hand, g, sizeof g);
                pkt_answer_format(&whole, w, sizeof w);
            }
            PKT_CHECK(eq, "n=%s B=%s: merge by hand differs: %s\n      hand  %s\n      whole %s", cand, bstr, why, g,
                      w);
        }
        pkt_answer_free(&hand);
        for (size_t i = 0; i < np; i++) pk_job_destroy(pieces[i]);
        pkt_answer_free(&whole);
        free(cand);
        PKT_BAIL_IF_MANY();
    }
    pkt_say("%u of %u merges equal the unsplit answer", merged_ok, trials);
    pkt_planted_clear(&pl);
}

static pk_job *run_range(const char *n, const char *from, const char *bound, int finish)
{
    pk_options o;
    pk_options_init(&o);
    o.from = from;
    o.bound = bound;
    pk_job *job = NULL;
    if (pk_job_create(n, &o, &job) != PK_OK) {
        PKT_CHECK(0, "create %s [%s, %s]", n, from, bound);
        return NULL;
    }
    if (finish) PKT_CHECK_STATUS(pkt_run(job, UINT64_MAX, 4), PK_DONE, "run piece");
    return job;
}

void test_merge_rejects_unfinished_mismatched_and_gapped_pieces(void)
{
    pkt_say("checks: pk_job_merge gives PK_E_NOT_DONE for an unfinished piece, PK_E_OPTIONS for different "
            "candidates or a gap between ranges, PK_E_ARG for a NULL piece, and *out == NULL each time; one "
            "piece alone merges to itself");
    const char *n = "1000036000099"; /* 1000003 * 1000033 */
    pk_job *a = run_range(n, "2", "500000", 1);
    pk_job *b = run_range(n, "500001", "1000017", 1);
    pk_job *gap = run_range(n, "600000", "1000017", 1);
    pk_job *other = run_range("1000036000097", "500001", "1000017", 1);
    pk_job *unfinished = run_range(n, "500001", "1000017", 0);
    pk_job *out = (pk_job *)&out;
    if (!a || !b || !gap || !other || !unfinished) goto done;
    if (pk_job_step(unfinished, 10) != PK_MORE) PKT_CHECK(0, "could not leave a piece unfinished");

    pk_job *set1[2] = {a, unfinished};
    PKT_CHECK_STATUS(pk_job_merge(set1, 2, &out), PK_E_NOT_DONE, "unfinished piece");
    PKT_CHECK(out == NULL, "*out not NULL");
    pk_job *set2[2] = {a, other};
    out = (pk_job *)&out;
    PKT_CHECK_STATUS(pk_job_merge(set2, 2, &out), PK_E_OPTIONS, "different candidates");
    PKT_CHECK(out == NULL, "*out not NULL");
    pk_job *set3[2] = {gap, a};
    out = (pk_job *)&out;
    PKT_CHECK_STATUS(pk_job_merge(set3, 2, &out), PK_E_OPTIONS, "gap between 500000 and 600000");
    PKT_CHECK(out == NULL, "*out not NULL");
    pk_job *set4[2] = {a, NULL};
    out = (pk_job *)&out;
    PKT_CHECK_STATUS(pk_job_merge(set4, 2, &out), PK_E_ARG, "NULL piece");
    PKT_CHECK(out == NULL, "*out not NULL");

    pk_job *set5[2] = {b, a};
    out = NULL;
    PKT_CHECK_STATUS(pk_job_merge(set5, 2, &out), PK_OK, "adjacent pieces");
    if (out) {
        pkt_answer m;
        if (pkt_answer_read(out, &m) == PK_OK)
            PKT_CHECK(m.nfactors == 2 && strcmp(m.factors[0], "1000003") == 0 &&
                          strcmp(m.factors[1], "1000033") == 0 && m.res.cofactor_status == PK_COFACTOR_ONE,
                      "merged [2,500000]+[500001,1000017] of 1000003*1000033: %zu factors", m.nfactors);
        pkt_answer_free(&m);
        pk_job_destroy(out);
    }
    pk_job *set6[1] = {b};
    out = NULL;
    PKT_CHECK_STATUS(pk_job_merge(set6, 1, &out), PK_OK, "single piece");
    if (out) {
        pkt_answer x, y;
        char why[200];
        if (pkt_answer_read(out, &x) == PK_OK && pkt_answer_read(b, &y) == PK_OK)
            PKT_CHECK(pkt_answer_equal(&x, &y, why, sizeof why), "single piece merge changed the answer: %s", why);
        pkt_answer_free(&x);
        pkt_answer_free(&y);
        pk_job_destroy(out);
    }
done:
    pk_job_destroy(a);
    pk_job_destroy(b);
    pk_job_destroy(gap);
    pk_job_destroy(other);
    pk_job_destroy(unfinished);
}

void test_range_starting_above_2_lists_only_fully_divided_primes(void)
{
    unsigned trials = PKT_SIZE(2000u, 1000u);
    pkt_say("checks: %u smooth candidates (prime powers below 100, times a larger prime) over ranges [a, b] with "
            "3 <= a <= 60, where composite divisors in the range divide n: every listed factor is prime, divided "
            "out completely, and factors x cofactor == n",
            trials);
    pkt_rng rng;
    pkt_rng_for(&rng, "range-above-2");
    mpz_t n, p;
    mpz_init(n);
    mpz_init(p);
    unsigned listed = 0;
    for (unsigned t = 0; t < trials; t++) {
        unsigned k = (unsigned)pkt_rand_range(&rng, 1, 5);
        mpz_set_ui(n, 1);
        for (unsigned i = 0; i < k; i++) {
            mpz_set_ui(p, pkt_rand_range(&rng, 1, 100));
            mpz_nextprime(p, p);
            for (unsigned e = (unsigned)pkt_rand_range(&rng, 1, 6); e > 0; e--) mpz_mul(n, n, p);
        }
        if (pkt_rand_below(&rng, 2)) {
            pkt_rand_prime(&rng, p, (unsigned)pkt_rand_range(&rng, 8, 90));
            mpz_mul(n, n, p);
        }
        if (mpz_cmp_ui(n, 2) < 0) continue;
        uint64_t a = pkt_rand_range(&rng, 3, 60), b = a + pkt_rand_below(&rng, 2000);
        char fs[24], bs[24], *cand = mpz_get_str(NULL, 10, n);
        pkt_u64(a, fs);
        pkt_u64(b, bs);
        pkt_answer got;
        int st = pkt_factor(cand, fs, bs, 0, 0, &got);
        PKT_CHECK(st == PK_OK || st == PK_E_OPTIONS, "n=%s [%s, %s]: %s", cand, fs, bs, pk_status_name(st));
        if (st == PK_OK) {
            char what[200];
            snprintf(what, sizeof what, "n=%s [%s, %s]", cand, fs, bs);
            pkt_check_answer_facts(n, &got, what);
            listed += (unsigned)got.nfactors;
        }
        pkt_answer_free(&got);
        free(cand);
        PKT_BAIL_IF_MANY();
    }
    pkt_say("%u factors listed in all", listed);
    mpz_clear(n);
    mpz_clear(p);
}
