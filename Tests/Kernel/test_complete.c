/*
 * test_complete.c — complete factorization (the default mode): answers
 * against PARI/GP's (complete_vectors.h), interrupts at random polls of every
 * stage with checkpoints restored in new jobs, version-2 checkpoint
 * corruption, effort limits and their partial answers, and trial division
 * alone when a range or PK_MODE_TRIAL is asked for.
 *
 * The interrupt tests look inside the kernel (pk_internal.h) to raise the
 * flag at a chosen poll, as another thread would.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkt.h"
#include "pk_internal.h"
#include "complete_vectors.h"

#define NVEC (sizeof complete_vectors / sizeof complete_vectors[0])

static const complete_vector *vector_named(const char *what)
{
    for (size_t i = 0; i < NVEC; i++)
        if (strcmp(complete_vectors[i].what, what) == 0)
            return &complete_vectors[i];
    return NULL;
}

static pk_job *create(const char *n, const pk_options *o)
{
    pk_job *job = NULL;
    int st = pk_job_create(n, o, &job);
    PKT_CHECK_STATUS(st, PK_OK, n);
    return st == PK_OK ? job : NULL;
}

/* "p^e p^e ..." with "?" after a factor marked probable. */
static char *factor_text(const pk_job *job, int with_certainty)
{
    pk_progress pr;
    pkt_progress(job, &pr);
    size_t cap = 64, len = 0;
    char *s = malloc(cap);
    s[0] = 0;
    for (size_t i = 0; i < pr.factors_found; i++) {
        char buf[2048];
        uint64_t e = 0;
        int c = -1;
        PKT_CHECK_STATUS(pk_job_factor(job, i, buf, sizeof buf, NULL, &e), PK_OK, "pk_job_factor");
        PKT_CHECK_STATUS(pk_job_factor_certainty(job, i, &c), PK_OK, "pk_job_factor_certainty");
        char item[2100];
        int n = snprintf(item, sizeof item, "%s%s^%llu%s", i ? " " : "", buf, (unsigned long long)e,
                         with_certainty && c == PK_CERTAINTY_PROBABLE ? "?" : "");
        while (len + (size_t)n + 1 > cap)
            s = realloc(s, cap *= 2);
        memcpy(s + len, item, (size_t)n + 1);
        len += (size_t)n;
    }
    return s;
}

/* Step to the end with budget, checking progress: percent never decreases,
   and the stage fraction never decreases while the stage, the parts and the
   factors found stay the same. */
static int run_checked(pk_job *job, uint64_t budget, uint64_t max_steps, const char *what)
{
    pk_progress b, a;
    pkt_progress(job, &b);
    for (uint64_t i = 0; i < max_steps; i++) {
        int st = pk_job_step(job, budget);
        pkt_progress(job, &a);
        PKT_CHECK(a.percent >= b.percent, "%s: percent went back %.17g -> %.17g", what, b.percent, a.percent);
        PKT_CHECK(a.stage != NULL, "%s: no stage name", what);
        PKT_CHECK(a.stage_fraction >= 0 && a.stage_fraction <= 1, "%s: stage fraction %g", what, a.stage_fraction);
        if (a.stage && b.stage && strcmp(a.stage, b.stage) == 0 && a.parts_left == b.parts_left &&
            a.factors_found == b.factors_found)
            PKT_CHECK(a.stage_fraction >= b.stage_fraction, "%s: stage %s fraction went back %g -> %g", what,
                      a.stage, b.stage_fraction, a.stage_fraction);
        PKT_CHECK(a.work_done >= b.work_done, "%s: work went back", what);
        if (st == PK_DONE) {
            PKT_CHECK(a.done && a.percent == 100.0 && strcmp(a.stage, "done") == 0, "%s: done but progress says %d %g %s",
                      what, a.done, a.percent, a.stage);
            return st;
        }
        if (st != PK_MORE && st != PK_INTERRUPTED)
            return st;
        b = a;
    }
    PKT_CHECK(0, "%s: not done after %llu steps", what, (unsigned long long)max_steps);
    return PK_MORE;
}

/* The answer's facts: every listed prime is prime (GMP), probable exactly
   above 2^64, and the primes to their exponents times the cofactor give n. */
static void check_facts(const pk_job *job, const char *what)
{
    pk_result r;
    r.size = sizeof r;
    PKT_CHECK_STATUS(pk_job_result(job, &r), PK_OK, what);
    char buf[4096];
    PKT_CHECK_STATUS(pk_job_candidate(job, buf, sizeof buf, NULL), PK_OK, what);
    mpz_t n, p, prod;
    mpz_init_set_str(n, buf, 10);
    mpz_inits(p, prod, NULL);
    PKT_CHECK_STATUS(pk_job_cofactor(job, buf, sizeof buf, NULL), PK_OK, what);
    mpz_set_str(prod, buf, 10);
    int any_probable = 0;
    for (size_t i = 0; i < r.factor_count; i++) {
        uint64_t e;
        int c;
        pk_job_factor(job, i, buf, sizeof buf, NULL, &e);
        pk_job_factor_certainty(job, i, &c);
        mpz_set_str(p, buf, 10);
        PKT_CHECK(mpz_probab_prime_p(p, 30) > 0, "%s: listed factor %s is not prime", what, buf);
        PKT_CHECK((c == PK_CERTAINTY_PROBABLE) == (mpz_sizeinbase(p, 2) > 64), "%s: %s marked %s", what, buf,
                  c == PK_CERTAINTY_PROBABLE ? "probable" : "proven");
        any_probable |= c == PK_CERTAINTY_PROBABLE;
        for (uint64_t k = 0; k < e; k++)
            mpz_mul(prod, prod, p);
    }
    PKT_CHECK(mpz_cmp(prod, n) == 0, "%s: the answer does not multiply back to n", what);
    if (r.complete)
        PKT_CHECK(r.certainty == (any_probable ? PK_CERTAINTY_PROBABLE : PK_CERTAINTY_PROVEN),
                  "%s: certainty %d", what, r.certainty);
    mpz_clears(n, p, prod, NULL);
}

static void check_vector(const complete_vector *v, uint64_t budget)
{
    pk_job *job = create(v->n, NULL);
    if (!job)
        return;
    int st = run_checked(job, budget, 1u << 22, v->what);
    PKT_CHECK_STATUS(st, PK_DONE, v->what);
    if (st == PK_DONE) {
        char *got = factor_text(job, 0);
        PKT_CHECK(strcmp(got, v->factors) == 0, "%s: got %s, want %s", v->what, got, v->factors);
        free(got);
        pk_result r;
        r.size = sizeof r;
        pk_job_result(job, &r);
        char *cof = pkt_cofactor(job);
        PKT_CHECK(r.complete == 1 && r.cofactor_status == PK_COFACTOR_ONE && r.part_count == 0 &&
                      strcmp(cof, "1") == 0,
                  "%s: complete %d status %d parts %zu cofactor %s", v->what, r.complete, r.cofactor_status,
                  r.part_count, cof);
        int single = r.factor_count == 1 && strstr(v->factors, "^1") && !strchr(v->factors, ' ');
        PKT_CHECK(r.is_prime == (single ? PK_PRIME_YES : PK_PRIME_NO), "%s: is_prime %d", v->what, r.is_prime);
        free(cof);
        check_facts(job, v->what);
    }
    pk_job_destroy(job);
}

void test_complete_factorizations_match_known_answers(void)
{
    pkt_say("checks: default jobs factor F7, M101, 10^40+1, a 60-digit number with a 20-digit factor, random "
            "products of primes of 8 to 70 bits, prime powers, Carmichael numbers, M127 and two-word semiprimes "
            "completely: the primes and exponents PARI/GP gives, cofactor 1, every prime prime, probable "
            "exactly above 2^64, the product is n; progress never goes back");
    for (size_t i = 0; i < NVEC; i++) {
        if (strcmp(complete_vectors[i].what, "M137") == 0)
            continue; /* its own test */
        check_vector(&complete_vectors[i], (uint64_t)1 << 20);
        PKT_BAIL_IF_MANY();
    }
    pkt_say("%zu candidates", NVEC - 1);
}

void test_m137_factors_completely(void)
{
    pkt_say("checks: 2^137 - 1 (two factors of 20 and 22 digits, found by ECM above 128 bits) factors as PARI/GP "
            "says");
    check_vector(vector_named("M137"), (uint64_t)1 << 22);
}

/* ------------------------------------------------------------ interrupts */

/* Rewrite the checksum line of t (len bytes, ends in the checksum line). */
static void reseal(char *t, size_t len)
{
    size_t last = len - 1;
    while (last > 0 && t[last - 1] != '\n')
        last--;
    if (len - last != 9 + 16 + 1)
        return;
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)pkt_fnv1a64(t, last));
    memcpy(t + last + 9, hex, 16);
}

static pk_job *checkpoint_and_restore(pk_job *job, const char *what)
{
    return pkt_restore_copy(job, what, "primekit-checkpoint 2\n", 1);
}

typedef struct stage_count {
    const char *name;
    unsigned count;
} stage_count;

static void count_stage(stage_count *sc, size_t n, const char *stage)
{
    for (size_t i = 0; i < n; i++)
        if (stage && strcmp(sc[i].name, stage) == 0)
            sc[i].count++;
}

/* One interrupted run: random budgets and interrupts between steps, a trap
   at a random poll, and after each interrupt a checkpoint restored in a new
   job half of the time. */
typedef struct interrupt_run {
    pkt_rng *rng;
    const char *what;
    uint64_t polls;             /* polls of an uninterrupted run */
    unsigned run;
    uint64_t step;              /* the step being made */
    stage_count *sc;
    size_t nsc;
    unsigned *interrupts, *restores;
} interrupt_run;

static uint64_t interrupt_budget(void *ctx, uint64_t step)
{
    interrupt_run *ir = ctx;
    ir->step = step;
    /* The first run of each candidate is also interrupted inside trial division, whose short stage random
       traps rarely reach: 64 units of it, then an interrupt before the next step (interrupt_after). */
    if (ir->run == 0 && step == 0)
        return 64;
    return pkt_rand_below(ir->rng, 4) == 0 ? 1 + pkt_rand_below(ir->rng, 1u << 12) : (uint64_t)1 << 20;
}

static void interrupt_after(void *ctx, pk_job **job, int st)
{
    interrupt_run *ir = ctx;
    if (st == PK_INTERRUPTED) {
        (*ir->interrupts)++;
        pk_progress pr;
        pkt_progress(*job, &pr);
        count_stage(ir->sc, ir->nsc, pr.stage);
        if (strcmp(pr.stage, "ecm") == 0) /* the ECM position: the first level aims at 15 digits with B1 = 2000 */
            PKT_CHECK(pr.ecm_curve >= 1 && pr.ecm_curves >= 1 && pr.ecm_b1 >= 2000 && pr.ecm_digits >= 15,
                      "%s: in ECM at curve %llu of %llu, B1 %llu, %u digits", ir->what,
                      (unsigned long long)pr.ecm_curve, (unsigned long long)pr.ecm_curves,
                      (unsigned long long)pr.ecm_b1, pr.ecm_digits);
        else
            PKT_CHECK(pr.ecm_curve == 0 && pr.ecm_curves == 0 && pr.ecm_b1 == 0 && pr.ecm_digits == 0,
                      "%s: an ECM position outside ECM (stage %s)", ir->what, pr.stage);
        if (pkt_rand_below(ir->rng, 2) == 0) {
            *job = checkpoint_and_restore(*job, ir->what);
            (*ir->restores)++;
        }
        /* The next trap: somewhere in what is left (the counter restarts in a restored job). */
        (*job)->poll_trap = (*job)->polls + 1 + pkt_rand_below(ir->rng, ir->polls ? ir->polls : 1);
    }
    if (pkt_rand_below(ir->rng, 50) == 0 || (ir->run == 0 && ir->step == 0))
        pk_job_interrupt(*job);
}

void test_complete_jobs_interrupted_at_random_polls_restore_to_the_same_answer(void)
{
    pkt_say("checks: complete jobs interrupted at random polls (and between steps of random budgets) in every "
            "stage — trial division, the examination of a part, word-size splitting, ECM, the quadratic sieve — are "
            "checkpointed "
            "(version 2), restored in a new job (which checkpoints identically) or stepped on, and end with the "
            "answer and certainties of an uninterrupted run");
    static const char *names[] = {
        "F7", "10^40+1", "mixed product 1", "mixed product 6", "mixed product 12", "p66^2 q40^3",
        "Carmichael (6k+1)(12k+1)(18k+1), 131 bits", "p33^2 q34 (word size)", "p90^2", "four 45-bit primes",
        "60 digits, a 20-digit factor",
        "Carmichael (6k+1)(12k+1)(18k+1), 70 bits", /* below the sieve's 80 bits: word-size split throughout */
    };
    stage_count sc[] = {{"trial", 0}, {"prime", 0}, {"split", 0}, {"ecm", 0}, {"qs", 0}};
    pkt_rng rng;
    pkt_rng_for(&rng, "complete-interrupts");
    unsigned restores = 0, interrupts = 0, runs = PKT_SIZE(3, 2);
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        const complete_vector *v = vector_named(names[k]);
        pk_job *job = create(v->n, NULL);
        if (!job)
            continue;
        PKT_CHECK_STATUS(run_checked(job, (uint64_t)1 << 20, 1u << 22, v->what), PK_DONE, v->what);
        uint64_t polls = job->polls;
        char *want = factor_text(job, 1);
        pk_job_destroy(job);
        for (unsigned r = 0; r < runs; r++) {
            job = create(v->n, NULL);
            job->poll_trap = 1 + pkt_rand_below(&rng, polls ? polls : 1);
            interrupt_run ir = {&rng, v->what, polls, r, 0, sc, sizeof sc / sizeof sc[0], &interrupts, &restores};
            pkt_drive d = {0, interrupt_budget, interrupt_after, &ir, (uint64_t)1 << 22};
            int st = pkt_drive_job(&job, &d);
            PKT_CHECK_STATUS(st, PK_DONE, v->what);
            char *got = factor_text(job, 1);
            PKT_CHECK(strcmp(got, want) == 0, "%s: interrupted run gives %s, uninterrupted %s", v->what, got, want);
            free(got);
            check_facts(job, v->what);
            pk_job_destroy(job);
            PKT_BAIL_IF_MANY();
        }
        free(want);
    }
    pkt_say("%u interrupts, %u restores; interrupted in: trial %u, prime %u, split %u, ecm %u, qs %u", interrupts,
            restores, sc[0].count, sc[1].count, sc[2].count, sc[3].count, sc[4].count);
    PKT_CHECK(sc[0].count > 0 && sc[1].count > 0 && sc[2].count > 0 && sc[3].count > 0 && sc[4].count > 0,
              "some stage was never interrupted");
}

/* ------------------------------------------------------------ corruption */

static void single_character_changes(const char *name, const char *stage, uint64_t budget, int conclude);

void test_v2_checkpoint_single_character_changes_are_refused_or_harmless(void)
{
    pkt_say("checks: version-2 checkpoints of jobs paused inside ECM (also after pk_job_conclude) and inside a "
            "word-size split, with every "
            "single character replaced (three ways): as is, the checksum refuses it; re-sealed, it is refused "
            "with a checkpoint status or restores to a job that steps without error, checkpoints and restores "
            "again, and whose answer, if it ends, has true facts");
    single_character_changes("60 digits, a 20-digit factor", "ecm", (uint64_t)1 << 18, 0);
    single_character_changes("two 64-bit primes", "split", (uint64_t)1 << 12, 0);
    /* Concluded (pk_job_conclude) before the checkpoint: the request's line too. */
    single_character_changes("60 digits, a 20-digit factor", "ecm", (uint64_t)1 << 18, 1);
}

static void single_character_changes(const char *name, const char *stage, uint64_t budget, int conclude)
{
    const complete_vector *v = vector_named(name);
    pk_job *job = create(v->n, NULL);
    if (!job)
        return;
    pk_progress pr;
    for (int i = 0; i < 4000; i++) {
        pk_job_step(job, budget);
        pkt_progress(job, &pr);
        if (pr.stage && strcmp(pr.stage, stage) == 0 && pr.stage_fraction > 0)
            break;
    }
    PKT_CHECK(pr.stage && strcmp(pr.stage, stage) == 0, "%s: the job never reached %s (stage %s)", name, stage,
              pr.stage);
    if (conclude)
        PKT_CHECK_STATUS(pk_job_conclude(job), PK_OK, "conclude");
    size_t len = 0;
    char *text = pkt_checkpoint(job, &len);
    pk_job_destroy(job);
    PKT_CHECK(!conclude || strstr(text, "\nconcluded 1\n"), "%s: the request is not in the checkpoint", name);
    pkt_say("%s: checkpoint of %zu bytes in stage %s%s", name, len, stage, conclude ? ", concluded" : "");
    static const char subst[] = {'1', '0', ' '};
    unsigned refused = 0, restored = 0, finished = 0;
    size_t stride = PKT_SIZE(1, 3);
    char *t = malloc(len);
    for (size_t i = 0; i + 26 < len; i += stride) {
        for (size_t s = 0; s < sizeof subst; s++) {
            char c = subst[s] == text[i] ? '7' : subst[s];
            memcpy(t, text, len);
            t[i] = c;
            pk_job *back = (pk_job *)&back;
            int st = pk_job_restore(t, len, NULL, &back);
            /* The version is read before the checksum is checked. */
            if (!(st == PK_E_CHECKPOINT_VERSION && i < 22))
                PKT_CHECK_STATUS(st, PK_E_CHECKPOINT, "unsealed change");
            if (st == PK_OK)
                pk_job_destroy(back);
            reseal(t, len);
            back = NULL;
            st = pk_job_restore(t, len, NULL, &back);
            if (st != PK_OK) {
                PKT_CHECK(st == PK_E_CHECKPOINT || st == PK_E_CHECKPOINT_STATE || st == PK_E_CHECKPOINT_VERSION,
                          "offset %zu '%c': refused with %s", i, c, pk_status_name(st));
                PKT_CHECK(back == NULL, "refused restore left *out set");
                refused++;
                continue;
            }
            restored++;
            for (int k = 0; k < 3 && st != PK_DONE; k++) {
                st = pk_job_step(back, (uint64_t)1 << 16);
                PKT_CHECK(st == PK_MORE || st == PK_DONE, "offset %zu '%c': step gave %s", i, c, pk_status_name(st));
            }
            if (st == PK_DONE) {
                finished++;
                check_facts(back, "changed checkpoint");
            }
            back = checkpoint_and_restore(back, "changed checkpoint, stepped");
            pk_job_destroy(back);
            PKT_BAIL_IF_MANY();
        }
    }
    pkt_say("%u changes refused, %u restored (%u of them finished)", refused, restored, finished);
    free(t);
    free(text);
}

/* ---------------------------------------------------------- effort limits */

static void partial_answer(const char *n, const pk_options *o, const char *what, char **part_out,
                           pk_part_info *info)
{
    *part_out = NULL;
    pk_job *job = create(n, o);
    if (!job)
        return;
    PKT_CHECK_STATUS(run_checked(job, (uint64_t)1 << 20, 1u << 20, what), PK_DONE, what);
    pk_result r;
    r.size = sizeof r;
    pk_job_result(job, &r);
    PKT_CHECK(r.complete == 0 && r.cofactor_status == PK_COFACTOR_COMPOSITE && r.part_count == 1 &&
                  r.is_prime == PK_PRIME_NO && r.certainty == PK_CERTAINTY_PROVEN,
              "%s: complete %d status %d parts %zu is_prime %d certainty %d", what, r.complete, r.cofactor_status,
              r.part_count, r.is_prime, r.certainty);
    check_facts(job, what);
    if (r.part_count == 1) {
        size_t need = 0;
        PKT_CHECK_STATUS(pk_job_part(job, 0, NULL, 0, &need, NULL), PK_E_BUFFER, "part size query");
        *part_out = malloc(need + 1);
        info->size = sizeof *info;
        PKT_CHECK_STATUS(pk_job_part(job, 0, *part_out, need + 1, NULL, info), PK_OK, "pk_job_part");
        char *cof = pkt_cofactor(job);
        PKT_CHECK(strcmp(cof, *part_out) == 0, "%s: the part %s is not the cofactor %s", what, *part_out, cof);
        free(cof);
        PKT_CHECK_STATUS(pk_job_part(job, 1, NULL, 0, &need, NULL), PK_E_INDEX, "part index 1");
    }
    /* The finished partial answer survives a checkpoint. */
    char *before = factor_text(job, 1);
    job = checkpoint_and_restore(job, what);
    char *after = factor_text(job, 1);
    PKT_CHECK(strcmp(before, after) == 0, "%s: restored factors differ", what);
    pk_result r2;
    r2.size = sizeof r2;
    pk_job_result(job, &r2);
    PKT_CHECK(r2.part_count == r.part_count && r2.cofactor_status == r.cofactor_status, "%s: restored result differs",
              what);
    free(before);
    free(after);
    pk_job_destroy(job);
}

void test_effort_limits_give_the_partial_answer(void)
{
    pkt_say("checks: ecm_digits 15 on 2^3 * 3 * p * q (p, q of 100 bits) lists 2 and 3 and leaves p*q with 25 "
            "curves at B1 = 2000 and level 15 recorded; work_limit 1 leaves the composite with the work done; "
            "the partial answers survive a checkpoint; out-of-range limits and modes are PK_E_OPTIONS");
    pkt_rng rng;
    pkt_rng_for(&rng, "effort-limits");
    mpz_t p, q, n, pq;
    mpz_inits(p, q, n, pq, NULL);
    pkt_rand_prime(&rng, p, 100);
    pkt_rand_prime(&rng, q, 100);
    mpz_mul(pq, p, q);
    mpz_mul_ui(n, pq, 24);
    char *ns = mpz_get_str(NULL, 10, n), *pqs = mpz_get_str(NULL, 10, pq);

    pk_options o;
    pk_options_init(&o);
    o.ecm_digits = 15;
    char *part = NULL;
    pk_part_info info;
    partial_answer(ns, &o, "ecm_digits 15", &part, &info);
    if (part) {
        PKT_CHECK(strcmp(part, pqs) == 0, "the part left is %s, want p*q", part);
        PKT_CHECK(info.exponent == 1 && info.curves == 25 && info.b1 == 2000 && info.b2 > 2000 &&
                      info.ecm_digits == 15 && strcmp(info.method, "ecm") == 0 && info.trial_from == 2 &&
                      info.trial_bound >= 1000 && info.work > 0,
                  "tried: e %llu curves %llu B1 %llu B2 %llu digits %u method %s trial [%llu, %llu] work %llu",
                  (unsigned long long)info.exponent, (unsigned long long)info.curves, (unsigned long long)info.b1,
                  (unsigned long long)info.b2, info.ecm_digits, info.method, (unsigned long long)info.trial_from,
                  (unsigned long long)info.trial_bound, (unsigned long long)info.work);
        pkt_say("left %s after %llu curves, B1 %llu, B2 %llu (level %u digits)", part,
                (unsigned long long)info.curves, (unsigned long long)info.b1, (unsigned long long)info.b2,
                info.ecm_digits);
    }
    free(part);

    pk_options_init(&o);
    o.work_limit = 1;
    partial_answer(ns, &o, "work_limit 1", &part, &info);
    if (part) {
        PKT_CHECK(strcmp(part, pqs) == 0, "work_limit: the part left is %s, want p*q", part);
        PKT_CHECK(info.work >= 1 && info.curves == 0 && info.ecm_digits == 0, "work_limit: work %llu curves %llu",
                  (unsigned long long)info.work, (unsigned long long)info.curves);
    }
    free(part);

    pk_job *job = (pk_job *)&job;
    pk_options_init(&o);
    o.ecm_digits = 71;
    PKT_CHECK_STATUS(pk_job_create("12", &o, &job), PK_E_OPTIONS, "ecm_digits 71");
    PKT_CHECK(job == NULL, "out not NULL");
    pk_options_init(&o);
    o.mode = 2;
    PKT_CHECK_STATUS(pk_job_create("12", &o, &job), PK_E_OPTIONS, "mode 2");
    free(ns);
    free(pqs);
    mpz_clears(p, q, n, pq, NULL);
}

/* ------------------------------------------------------------ trial mode */

void test_a_range_or_trial_mode_keeps_trial_division_alone(void)
{
    pkt_say("checks: 99999999100000001881 (two 10-digit primes) is factored by a default job, but left as a "
            "composite cofactor by PK_MODE_TRIAL (bound sqrt capped at 2^32) and by an explicit bound, whose "
            "checkpoints stay version 1; pk_job_merge refuses a complete job as a piece");
    const char *n = "99999999100000001881";
    pk_job *job = create(n, NULL);
    PKT_CHECK_STATUS(pkt_run(job, UINT64_MAX, 8), PK_DONE, "default");
    char *got = factor_text(job, 1);
    PKT_CHECK(strcmp(got, "9999999943^1 9999999967^1") == 0, "default job: %s", got);
    free(got);
    pk_job *merged = (pk_job *)&merged;
    PKT_CHECK_STATUS(pk_job_merge(&job, 1, &merged), PK_E_OPTIONS, "merging a complete job");
    PKT_CHECK(merged == NULL, "merge left *out set");
    pk_job_destroy(job);

    pk_options o;
    for (int k = 0; k < 2; k++) {
        pk_options_init(&o);
        if (k == 0)
            o.mode = PK_MODE_TRIAL;
        else
            o.bound = "1000000";
        job = create(n, &o);
        PKT_CHECK_STATUS(pkt_run(job, UINT64_MAX, 8), PK_DONE, "trial");
        pk_result r;
        r.size = sizeof r;
        pk_job_result(job, &r);
        char *cof = pkt_cofactor(job);
        PKT_CHECK(r.factor_count == 0 && r.cofactor_status == PK_COFACTOR_COMPOSITE && strcmp(cof, n) == 0 &&
                      r.part_count == 0,
                  "trial job %d: %zu factors, status %d, cofactor %s", k, r.factor_count, r.cofactor_status, cof);
        free(cof);
        size_t len;
        char *text = pkt_checkpoint(job, &len);
        PKT_CHECK(text && strncmp(text, "primekit-checkpoint 1\n", 22) == 0, "trial job %d: checkpoint not version 1",
                  k);
        free(text);
        pk_job_destroy(job);
    }
}

/* Products of a 20-22 digit prime and a 38-41 digit prime (GMP's
   mpz_nextprime from seeded random values; PARI/GP agrees): ECM above 128
   bits must find the small prime, and the answer must be exactly the two
   primes the product was made of. */
static const struct {
    const char *p, *q;
} ecm_products[] = {
    {"89884113125209933001", "59202086112788262190797894472058065688549"},
    {"45751039524737890313", "67817608507098888026703822148488086887"},
    {"7548262738006965340313", "26273855244495517027526992340283006607307"}
};

void test_ecm_finds_the_20_to_22_digit_prime_of_60_digit_products(void)
{
    size_t count = PKT_SIZE(sizeof ecm_products / sizeof ecm_products[0], 2);
    pkt_say("checks: %zu products p·q with p of 20-22 digits and q of 38-41 digits factor completely into "
            "exactly p and q (products multiplied back, primality by GMP), through the ECM levels above 128 bits",
            count);
    for (size_t i = 0; i < count; i++) {
        mpz_t p, q, n, f;
        mpz_inits(p, q, n, f, NULL);
        mpz_set_str(p, ecm_products[i].p, 10);
        mpz_set_str(q, ecm_products[i].q, 10);
        PKT_CHECK(mpz_probab_prime_p(p, 30) && mpz_probab_prime_p(q, 30), "vector %zu: p or q is not prime", i);
        mpz_mul(n, p, q);
        char *text = mpz_get_str(NULL, 10, n);
        pk_job *job = create(text, NULL);
        if (job) {
            PKT_CHECK_STATUS(run_checked(job, (uint64_t)1 << 24, 1u << 20, text), PK_DONE, text);
            check_facts(job, text);
            pk_result r;
            r.size = sizeof r;
            pk_job_result(job, &r);
            PKT_CHECK(r.complete == 1 && r.cofactor_status == PK_COFACTOR_ONE && r.factor_count == 2,
                      "%s: complete %d, cofactor status %d, %zu factors", text, r.complete, r.cofactor_status,
                      r.factor_count);
            char buf[128];
            uint64_t e = 0;
            for (size_t k = 0; k < 2 && k < r.factor_count; k++) {
                PKT_CHECK_STATUS(pk_job_factor(job, k, buf, sizeof buf, NULL, &e), PK_OK, "pk_job_factor");
                mpz_set_str(f, buf, 10);
                PKT_CHECK(e == 1 && mpz_cmp(f, k == 0 ? p : q) == 0, "%s: factor %zu is %s^%llu", text, k, buf,
                          (unsigned long long)e);
            }
            pk_job_destroy(job);
        }
        free(text);
        mpz_clears(p, q, n, f, NULL);
        PKT_BAIL_IF_MANY();
    }
}
