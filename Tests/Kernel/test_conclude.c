/*
 * test_conclude.c — pk_job_conclude: a complete job asked to conclude during
 * trial division, a word-size split, ECM or the quadratic sieve, from another
 * thread while it steps, or across a checkpoint, finishes with an honest
 * partial answer: the listed primes are prime, every part left is composite
 * and says what was tried on it, and everything multiplies back to n.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkt.h"

static pk_job *make(const char *n)
{
    pk_job *job = NULL;
    int st = pk_job_create(n, NULL, &job);
    PKT_CHECK_STATUS(st, PK_OK, n);
    return st == PK_OK ? job : NULL;
}

static char *mpz_text(const mpz_t v)
{
    return mpz_get_str(NULL, 10, v);
}

/* Step with budget until the job's stage is `stage` (and, when want_fraction,
   its fraction is above 0); 1 when it got there. */
static int step_until_stage(pk_job *job, const char *stage, uint64_t budget, int want_fraction)
{
    pk_progress pr;
    for (int i = 0; i < (1 << 16); i++) {
        pkt_progress(job, &pr);
        if (pr.stage && strcmp(pr.stage, stage) == 0 && (!want_fraction || pr.stage_fraction > 0))
            return 1;
        int st = pk_job_step(job, budget);
        if (st != PK_MORE)
            return 0;
    }
    return 0;
}

/* What a concluded (finished) job answers: the facts hold, the parts
   multiply to the cofactor, each part is composite with its record, and the
   result says complete exactly when no part is left. Returns the number of
   parts; *method_out gets the first part's method (static), NULL if none. */
static size_t check_concluded(const pk_job *job, const char *what, pk_part_info *first)
{
    pkt_answer a;
    pkt_answer_init(&a);
    PKT_CHECK_STATUS(pkt_answer_read(job, &a), PK_OK, what);
    char cand[4096];
    PKT_CHECK_STATUS(pk_job_candidate(job, cand, sizeof cand, NULL), PK_OK, what);
    mpz_t n, prod, v, t, cof;
    mpz_init_set_str(n, cand, 10);
    mpz_inits(prod, v, t, cof, NULL);
    pkt_check_answer_facts(n, &a, what);
    mpz_set_str(cof, a.cofactor, 10);
    mpz_set_ui(prod, 1);
    size_t parts = a.res.part_count;
    for (size_t i = 0; i < parts; i++) {
        char buf[4096];
        pk_part_info info;
        info.size = sizeof info;
        PKT_CHECK_STATUS(pk_job_part(job, i, buf, sizeof buf, NULL, &info), PK_OK, what);
        mpz_set_str(v, buf, 10);
        PKT_CHECK(mpz_probab_prime_p(v, 30) == 0, "%s: part %s is prime", what, buf);
        mpz_pow_ui(t, v, info.exponent);
        mpz_mul(prod, prod, t);
        PKT_CHECK(info.trial_from == 2 && info.trial_bound <= 65536, "%s: part %s trial [%llu, %llu]", what, buf,
                  (unsigned long long)info.trial_from, (unsigned long long)info.trial_bound);
        if (i == 0 && first)
            *first = info;
    }
    PKT_CHECK(mpz_cmp(prod, cof) == 0, "%s: the parts do not multiply to the cofactor %s", what, a.cofactor);
    PKT_CHECK(a.res.complete == (parts == 0), "%s: complete %d with %zu parts", what, a.res.complete, parts);
    if (parts)
        PKT_CHECK(a.res.cofactor_status == PK_COFACTOR_COMPOSITE, "%s: status %d", what, a.res.cofactor_status);
    mpz_clears(n, prod, v, t, cof, NULL);
    pkt_answer_free(&a);
    return parts;
}

void test_conclude_in_trial_division_keeps_the_range_covered(void)
{
    pkt_say("checks: complete jobs concluded after 64 units of trial division (on the 128-bit and the GMP path) "
            "finish at the next step with the small primes found, the composite part left with the trial range "
            "actually covered and method none; a prime remainder is listed as a (probable) prime, not left; "
            "a remainder below 2^64 is still factored");
    pkt_rng rng;
    pkt_rng_for(&rng, "conclude-trial");
    mpz_t p, q, r, n;
    mpz_inits(p, q, r, n, NULL);
    for (int shape = 0; shape < 4; shape++) {
        mpz_set_ui(n, 3 * 5);
        if (shape == 0) {               /* 128-bit path: 15 * p50 * q50 */
            pkt_rand_prime(&rng, p, 50);
            pkt_rand_prime(&rng, q, 50);
            mpz_mul(n, n, p);
            mpz_mul(n, n, q);
        } else if (shape == 1) {        /* GMP path: 15 * three 60-bit primes */
            pkt_rand_prime(&rng, p, 60);
            pkt_rand_prime(&rng, q, 60);
            pkt_rand_prime(&rng, r, 60);
            mpz_mul(n, n, p);
            mpz_mul(n, n, q);
            mpz_mul(n, n, r);
        } else if (shape == 2) {        /* a 150-bit prime remainder */
            pkt_rand_prime(&rng, p, 150);
            mpz_mul(n, n, p);
        } else {                        /* a remainder below 2^64: p30 * q30 */
            pkt_rand_prime(&rng, p, 30);
            pkt_rand_prime(&rng, q, 30);
            mpz_mul(n, n, p);
            mpz_mul(n, n, q);
        }
        char *ns = mpz_text(n);
        pk_job *job = make(ns);
        if (!job) {
            free(ns);
            continue;
        }
        PKT_CHECK_STATUS(pk_job_step(job, 64), PK_MORE, "64 units of trial division");
        pk_progress pr;
        pkt_progress(job, &pr);
        PKT_CHECK(pr.stage && strcmp(pr.stage, "trial") == 0, "shape %d: stage %s after 64 units", shape, pr.stage);
        uint64_t next = pr.next_divisor;
        PKT_CHECK_STATUS(pk_job_conclude(job), PK_OK, "conclude");
        PKT_CHECK_STATUS(pk_job_step(job, 1), PK_DONE, "the step after conclude");
        pk_part_info info;
        memset(&info, 0, sizeof info);
        size_t parts = check_concluded(job, ns, &info);
        pk_result res;
        res.size = sizeof res;
        pk_job_result(job, &res);
        PKT_CHECK(res.factor_count >= 2, "shape %d: %zu factors (3 and 5 first)", shape, res.factor_count);
        if (shape <= 1) {
            PKT_CHECK(parts == 1 && info.trial_bound == next - 1 && strcmp(info.method, "none") == 0 &&
                          info.curves == 0 && info.work == 0,
                      "shape %d: %zu parts, trial to %llu (next was %llu), method %s, curves %llu", shape, parts,
                      (unsigned long long)info.trial_bound, (unsigned long long)next, info.method,
                      (unsigned long long)info.curves);
        } else {
            PKT_CHECK(parts == 0 && res.complete == 1 && res.factor_count == (shape == 2 ? 3u : 4u),
                      "shape %d: %zu parts, complete %d, %zu factors", shape, parts, res.complete, res.factor_count);
        }
        pk_job_destroy(job);
        free(ns);
    }
    mpz_clears(p, q, r, n, NULL);
}

void test_conclude_during_splitting_leaves_each_part_with_its_record(void)
{
    pkt_say("checks: jobs concluded while a word-size split, ECM or the quadratic sieve runs finish at the next "
            "step with the part left, its method, work (and for ECM curves and B1/B2) recorded; trial division "
            "to its bound; conclude on a finished job is PK_OK and changes nothing; on a trial-division job it "
            "is PK_E_OPTIONS");
    static const struct {
        const char *n, *stage, *method;
        uint64_t budget;
    } cases[] = {
        {"150877741366717398497521917692071611467", "split", "split", 1u << 10}, /* two 64-bit primes */
        {"150877741366717398497521917692071611467", "qs", "qs", 1u << 14},
        {"19089646418076700638093652483960256172813760522736775650563", "ecm", "ecm", 1u << 18}, /* p20 * p40 */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        pk_job *job = make(cases[k].n);
        if (!job)
            continue;
        int there = step_until_stage(job, cases[k].stage, cases[k].budget, 1);
        PKT_CHECK(there, "%s: never reached stage %s", cases[k].n, cases[k].stage);
        if (there) {
            PKT_CHECK_STATUS(pk_job_conclude(job), PK_OK, "conclude");
            PKT_CHECK_STATUS(pk_job_step(job, cases[k].budget), PK_DONE, "the step after conclude");
            pk_part_info info;
            memset(&info, 0, sizeof info);
            size_t parts = check_concluded(job, cases[k].stage, &info);
            PKT_CHECK(parts == 1 && strcmp(info.method, cases[k].method) == 0 && info.work > 0 &&
                          info.trial_bound == 65536,
                      "%s: %zu parts, method %s, work %llu, trial to %llu", cases[k].stage, parts, info.method,
                      (unsigned long long)info.work, (unsigned long long)info.trial_bound);
            if (strcmp(cases[k].stage, "ecm") == 0)
                PKT_CHECK(info.curves > 0 && info.b1 > 0 && info.b2 > info.b1, "ecm: curves %llu B1 %llu B2 %llu",
                          (unsigned long long)info.curves, (unsigned long long)info.b1,
                          (unsigned long long)info.b2);
            /* Finished: conclude again is PK_OK and the checkpoint does not change. */
            size_t l1 = 0, l2 = 0;
            char *c1 = pkt_checkpoint(job, &l1);
            PKT_CHECK_STATUS(pk_job_conclude(job), PK_OK, "conclude on a finished job");
            PKT_CHECK_STATUS(pk_job_step(job, 1), PK_DONE, "step of a finished job");
            char *c2 = pkt_checkpoint(job, &l2);
            PKT_CHECK(c1 && c2 && l1 == l2 && memcmp(c1, c2, l1) == 0, "a finished job changed");
            free(c1);
            free(c2);
        }
        pk_job_destroy(job);
    }

    /* A job that finished on its own is not changed by a late conclude. */
    pk_job *job = make("1494567203952363107041");
    if (job) {
        PKT_CHECK_STATUS(pkt_run(job, UINT64_MAX, 100), PK_DONE, "run");
        size_t l1 = 0, l2 = 0;
        char *c1 = pkt_checkpoint(job, &l1);
        PKT_CHECK_STATUS(pk_job_conclude(job), PK_OK, "conclude after the end");
        char *c2 = pkt_checkpoint(job, &l2);
        PKT_CHECK(c1 && c2 && l1 == l2 && memcmp(c1, c2, l1) == 0, "a late conclude changed a finished job");
        PKT_CHECK(check_concluded(job, "finished", NULL) == 0, "a finished job has parts");
        free(c1);
        free(c2);
        pk_job_destroy(job);
    }

    /* Trial-division jobs refuse it and stay as they were. */
    pk_options o;
    pk_options_init(&o);
    o.mode = PK_MODE_TRIAL;
    job = NULL;
    PKT_CHECK_STATUS(pk_job_create("99999999100000001881", &o, &job), PK_OK, "trial job");
    if (job) {
        size_t l1 = 0, l2 = 0;
        char *c1 = pkt_checkpoint(job, &l1);
        PKT_CHECK_STATUS(pk_job_conclude(job), PK_E_OPTIONS, "conclude on a PK_MODE_TRIAL job");
        char *c2 = pkt_checkpoint(job, &l2);
        PKT_CHECK(c1 && c2 && l1 == l2 && memcmp(c1, c2, l1) == 0, "a refused conclude changed the job");
        PKT_CHECK_STATUS(pkt_run(job, UINT64_MAX, 100), PK_DONE, "the trial job runs on");
        free(c1);
        free(c2);
        pk_job_destroy(job);
    }
    PKT_CHECK_STATUS(pk_job_conclude(NULL), PK_E_ARG, "conclude(NULL)");
}

typedef struct conclude_ctx {
    pk_job *job;
    atomic_int stepping;
} conclude_ctx;

static void *concluder(void *arg)
{
    conclude_ctx *c = arg;
    while (!atomic_load(&c->stepping))
        ; /* the main thread is about to step: no sleep, just wait for it */
    pk_job_conclude(c->job);
    return NULL;
}

void test_conclude_from_another_thread_while_stepping(void)
{
    pkt_say("checks: a job with two 115-bit prime factors (far beyond what it can finish here) concluded from "
            "another thread while the main thread steps it in large budgets ends with PK_DONE and one part, "
            "the product of the two");
    pkt_rng rng;
    pkt_rng_for(&rng, "conclude-thread");
    mpz_t p, q, n;
    mpz_inits(p, q, n, NULL);
    for (int round = 0; round < PKT_SIZE(4, 2); round++) {
        pkt_rand_prime(&rng, p, 115);
        pkt_rand_prime(&rng, q, 115);
        mpz_mul(n, p, q);
        if (round & 1)
            mpz_mul_ui(n, n, 1000003); /* with a prime trial division finds */
        char *ns = mpz_text(n);
        conclude_ctx c;
        c.job = make(ns);
        atomic_init(&c.stepping, 0);
        if (!c.job) {
            free(ns);
            continue;
        }
        pthread_t th;
        PKT_CHECK(pthread_create(&th, NULL, concluder, &c) == 0, "pthread_create");
        atomic_store(&c.stepping, 1);
        int st = PK_MORE;
        uint64_t steps = 0;
        while (st == PK_MORE && steps < (UINT64_C(1) << 30)) {
            st = pk_job_step(c.job, (uint64_t)1 << 22);
            steps++;
        }
        pthread_join(th, NULL);
        PKT_CHECK_STATUS(st, PK_DONE, "stepping after a concluding thread");
        size_t parts = check_concluded(c.job, ns, NULL);
        PKT_CHECK(parts == 1, "round %d: %zu parts", round, parts);
        pk_job_destroy(c.job);
        free(ns);
    }
    mpz_clears(p, q, n, NULL);
}

void test_conclude_survives_checkpoint_and_restore(void)
{
    pkt_say("checks: a job concluded between steps (in trial division and in ECM) checkpoints with the request "
            "(\"concluded 1\"), restores in a new job that checkpoints identically, and both the original and "
            "the restored job finish with the same partial answer; the finished answer restores too");
    static const struct {
        const char *n, *stage;
        uint64_t budget;
    } cases[] = {
        {"19089646418076700638093652483960256172813760522736775650563", "ecm", 1u << 18},
        {"19089646418076700638093652483960256172813760522736775650563", "trial", 32},
        {"150877741366717398497521917692071611467", "split", 1u << 10},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        pk_job *job = make(cases[k].n);
        if (!job)
            continue;
        if (strcmp(cases[k].stage, "trial") == 0)
            PKT_CHECK_STATUS(pk_job_step(job, cases[k].budget), PK_MORE, "a little trial division");
        else
            PKT_CHECK(step_until_stage(job, cases[k].stage, cases[k].budget, 1), "never reached %s", cases[k].stage);
        size_t l0 = 0;
        char *before = pkt_checkpoint(job, &l0);
        PKT_CHECK(before && !strstr(before, "\nconcluded "), "%s: concluded before the request", cases[k].stage);
        PKT_CHECK_STATUS(pk_job_conclude(job), PK_OK, "conclude");
        size_t len = 0;
        char *text = pkt_checkpoint(job, &len);
        PKT_CHECK(text && strstr(text, "\nconcluded 1\n"), "%s: the checkpoint does not record the request",
                  cases[k].stage);
        pk_job *back = NULL;
        PKT_CHECK_STATUS(pk_job_restore(text, len, NULL, &back), PK_OK, "restore a concluded job");
        if (back) {
            size_t l2 = 0;
            char *again = pkt_checkpoint(back, &l2);
            PKT_CHECK(again && l2 == len && memcmp(again, text, len) == 0, "the restored job checkpoints differently");
            free(again);
            PKT_CHECK_STATUS(pk_job_step(back, cases[k].budget), PK_DONE, "the restored job's first step");
            PKT_CHECK_STATUS(pk_job_step(job, cases[k].budget), PK_DONE, "the original's next step");
            pkt_answer a, b;
            pkt_answer_init(&a);
            pkt_answer_init(&b);
            pkt_answer_read(job, &a);
            pkt_answer_read(back, &b);
            char why[256];
            PKT_CHECK(pkt_answer_equal(&a, &b, why, sizeof why), "%s: restored answer differs: %s", cases[k].stage,
                      why);
            PKT_CHECK(check_concluded(back, cases[k].stage, NULL) >= 1, "%s: no part left", cases[k].stage);
            pkt_answer_free(&a);
            pkt_answer_free(&b);
            /* The finished partial answer restores as well. */
            size_t l3 = 0;
            char *fin = pkt_checkpoint(back, &l3);
            pk_job *back2 = NULL;
            PKT_CHECK_STATUS(pk_job_restore(fin, l3, NULL, &back2), PK_OK, "restore the concluded answer");
            if (back2)
                check_concluded(back2, "restored answer", NULL);
            pk_job_destroy(back2);
            free(fin);
            pk_job_destroy(back);
        }
        free(before);
        free(text);
        pk_job_destroy(job);
    }
}
