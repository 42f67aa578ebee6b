/*
 * test_ecmshare.c — shares of a complete job's ECM curves
 * (pk_job_ecm_share, pk_job_ecm_share_info, pk_job_ecm_merge): shares
 * stepped in turns and merged give the unsplit job's answer, a share
 * checkpoints and restores mid-curve, merge refuses what does not belong
 * together, and the effort limits count every share's curves and work.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkt.h"

/* A product of primes of the given digit counts, each the next prime after
   a seeded random number of that many digits (the seed is fixed). */
static char *product(unsigned seed, const unsigned *digits, size_t count, mpz_t *primes)
{
    gmp_randstate_t st;
    gmp_randinit_default(st);
    gmp_randseed_ui(st, seed);
    mpz_t n, lo;
    mpz_init_set_ui(n, 1);
    mpz_init(lo);
    for (size_t i = 0; i < count; i++) {
        mpz_ui_pow_ui(lo, 10, digits[i] - 1);
        mpz_urandomm(primes[i], st, lo);
        mpz_add(primes[i], primes[i], lo);
        mpz_nextprime(primes[i], primes[i]);
        mpz_mul(n, n, primes[i]);
    }
    char *s = mpz_get_str(NULL, 10, n);
    mpz_clears(n, lo, NULL);
    gmp_randclear(st);
    return s;
}

static pk_job *create(const char *n, unsigned ecm_digits, uint64_t work_limit)
{
    pk_options o;
    pk_options_init(&o);
    o.ecm_digits = ecm_digits;
    o.work_limit = work_limit;
    pk_job *job = NULL;
    PKT_CHECK_STATUS(pk_job_create(n, &o, &job), PK_OK, n);
    return job;
}

static int in_ecm(const pk_job *job)
{
    pk_progress p;
    return pkt_progress(job, &p) == PK_OK && p.stage && strcmp(p.stage, "ecm") == 0 && !p.done;
}

/* The phase word (0 set-up, 1 stage 1, 2 stage 2) of the checkpoint's split line. */
static int ecm_phase(const pk_job *job)
{
    size_t len;
    char *t = pkt_checkpoint(job, &len);
    int phase = -1;
    const char *s = t ? strstr(t, "\nsplit ecm ") : NULL;
    if (s) {
        unsigned long long w[5];
        if (sscanf(s, "\nsplit ecm %llu %llu %llu %llu %llu", &w[0], &w[1], &w[2], &w[3], &w[4]) == 5)
            phase = (int)w[4];
    }
    free(t);
    return phase;
}

typedef struct share_run {
    unsigned count;           /* shares per ECM pass */
    uint64_t budget;
    unsigned passes;          /* ECM passes run as shares */
    unsigned found;           /* passes ended by a share's factor */
    int restore_share;        /* checkpoint and restore share 1 once, mid-curve */
    unsigned restored;
} share_run;

/* Step the shares in turns until one finds a factor or all are over, then
   merge them. Returns the merged job, or NULL (a test failure). */
static pk_job *run_shares(pk_job **shares, share_run *sr, const char *what)
{
    unsigned k = sr->count;
    int over[16] = {0};
    for (unsigned step = 0; step < (1u << 22); step++) {
        unsigned i = step % k, n_over = 0;
        int any_found = 0;
        for (unsigned j = 0; j < k; j++) {
            int found = 0;
            PKT_CHECK_STATUS(pk_job_ecm_share_info(shares[j], NULL, NULL, &found), PK_OK, what);
            any_found |= found;
            n_over += (unsigned)over[j];
        }
        if (any_found || n_over == k)
            break;
        if (over[i])
            continue;
        /* Small steps until the restore is done, to stop inside a curve. */
        uint64_t budget = sr->restore_share && !sr->restored ? sr->budget : (uint64_t)1 << 20;
        int st = pk_job_step(shares[i], budget);
        if (st == PK_DONE) {
            over[i] = 1;
            pk_result r;
            r.size = sizeof r;
            PKT_CHECK_STATUS(pk_job_result(shares[i], &r), PK_E_NOT_DONE, "a share reports no results");
        } else {
            PKT_CHECK(st == PK_MORE, "%s: share %u stepped to %s", what, i, pk_status_name(st));
            if (st != PK_MORE)
                return NULL;
        }
        if (sr->restore_share && !sr->restored && i == 1 && !over[i] && ecm_phase(shares[i]) == 1) {
            /* Mid-curve: the restored share checkpoints to the same text, and
               both go on identically (compared again after a step each). */
            size_t l0, l1;
            char *t0 = pkt_checkpoint(shares[i], &l0);
            PKT_CHECK(t0 && strncmp(t0, "primekit-checkpoint 3\n", 22) == 0, "%s: a share writes version 3", what);
            pk_job *copy = NULL;
            PKT_CHECK_STATUS(pk_job_restore(t0, l0, NULL, &copy), PK_OK, "restore a share mid-curve");
            if (copy) {
                unsigned idx = 9, cnt = 9;
                PKT_CHECK_STATUS(pk_job_ecm_share_info(copy, &idx, &cnt, NULL), PK_OK, "restored share info");
                PKT_CHECK(idx == 1 && cnt == k, "%s: restored share says %u of %u", what, idx, cnt);
                int a = pk_job_step(shares[i], sr->budget), b = pk_job_step(copy, sr->budget);
                PKT_CHECK(a == b, "%s: the share and its copy stepped to %d and %d", what, a, b);
                free(t0);
                t0 = pkt_checkpoint(shares[i], &l0);
                char *t1 = pkt_checkpoint(copy, &l1);
                PKT_CHECK(t0 && t1 && l0 == l1 && memcmp(t0, t1, l0) == 0, "%s: the restored share went its own way",
                          what);
                free(t1);
                pk_job_destroy(shares[i]);
                shares[i] = copy; /* the restored one goes on */
                over[i] = a == PK_DONE;
                sr->restored++;
            }
            free(t0);
        }
    }
    int any_found = 0;
    for (unsigned j = 0; j < k; j++) {
        int found = 0;
        pk_job_ecm_share_info(shares[j], NULL, NULL, &found);
        any_found |= found;
    }
    if (any_found) {
        /* Every share, the one that found a factor too (its curve may stand at the
           end of stage 1), checkpoints to text that restores to the same share. */
        for (unsigned j = 0; j < k; j++)
            shares[j] = pkt_restore_copy(shares[j], "a share when one found a factor", "\nshare ", 1);
        /* The others are interrupted where they stand, as an engine would. */
        for (unsigned j = 0; j < k; j++) {
            if (over[j])
                continue;
            pk_job_interrupt(shares[j]);
            int st = pk_job_step(shares[j], sr->budget);
            PKT_CHECK(st == PK_INTERRUPTED || st == PK_DONE, "%s: interrupted share stepped to %s", what,
                      pk_status_name(st));
        }
        sr->found++;
    }
    pk_job *m = NULL;
    PKT_CHECK_STATUS(pk_job_ecm_merge(shares, k, &m), PK_OK, what);
    return m;
}

/* Run job to the end, its ECM passes (each time the stage is "ecm") as
   sr->count shares stepped in turns. Returns the finished job (job itself
   is consumed) or NULL. */
static pk_job *run_shared(pk_job *job, share_run *sr, const char *what)
{
    for (unsigned guard = 0; job && guard < (1u << 20); guard++) {
        if (in_ecm(job)) {
            pk_job *shares[16];
            unsigned made = 0;
            for (unsigned i = 0; i < sr->count; i++) {
                int st = pk_job_ecm_share(job, i, sr->count, &shares[i]);
                if (st != PK_OK)
                    break;
                made++;
            }
            if (made == sr->count) {
                pk_job *m = run_shares(shares, sr, what);
                sr->passes++;
                for (unsigned i = 0; i < made; i++)
                    pk_job_destroy(shares[i]);
                pk_job_destroy(job);
                job = m;
                continue;
            }
            for (unsigned i = 0; i < made; i++)
                pk_job_destroy(shares[i]);
            /* No ECM piece is due (the pass just ended): one step on. */
        }
        int st = pk_job_step(job, sr->budget);
        if (st == PK_DONE)
            return job;
        PKT_CHECK(st == PK_MORE, "%s: stepped to %s", what, pk_status_name(st));
        if (st != PK_MORE)
            break;
    }
    pk_job_destroy(job);
    PKT_CHECK(0, "%s: did not finish", what);
    return NULL;
}

static pk_job *run_alone(const char *n, unsigned ecm_digits, uint64_t work_limit, uint64_t budget)
{
    pk_job *job = create(n, ecm_digits, work_limit);
    if (job)
        PKT_CHECK_STATUS(pkt_run(job, budget, 1u << 22), PK_DONE, n);
    return job;
}

static void same_answer(const pk_job *a, const pk_job *b, const char *what)
{
    pkt_answer x, y;
    pkt_answer_init(&x);
    pkt_answer_init(&y);
    PKT_CHECK_STATUS(pkt_answer_read(a, &x), PK_OK, what);
    PKT_CHECK_STATUS(pkt_answer_read(b, &y), PK_OK, what);
    char why[512];
    PKT_CHECK(pkt_answer_equal(&x, &y, why, sizeof why), "%s: shared and unsplit answers differ: %s", what, why);
    pkt_answer_free(&x);
    pkt_answer_free(&y);
}

/* What was tried on part 0 of a finished job. */
static pk_part_info part_info(const pk_job *job)
{
    pk_part_info info;
    memset(&info, 0, sizeof info);
    info.size = sizeof info;
    char buf[512];
    PKT_CHECK_STATUS(pk_job_part(job, 0, buf, sizeof buf, NULL, &info), PK_OK, "pk_job_part");
    return info;
}

void test_ecm_shares_stepped_in_turns_give_the_unsplit_answer(void)
{
    static const struct {
        unsigned seed;
        unsigned digits[3];
        size_t count;
    } cases[] = {
        {5, {15, 40, 0}, 2}, /* the factor comes at the end of a curve's stage 1 */
        {2, {19, 40, 0}, 2},
        {3, {16, 18, 40}, 3}, /* two ECM passes: the second part is split again */
    };
    size_t n_cases = PKT_SIZE(sizeof cases / sizeof cases[0], 2);
    pkt_say("checks: %zu products of primes of 15-19 and 40 digits (one of three primes, one whose factor a curve's stage 1 finds) (ecm_digits 30): the job with each ECM pass run "
            "as 2 and as 3 shares stepped in turns and merged lists exactly the unsplit job's answer, which is "
            "exactly the primes multiplied",
            n_cases);
    for (size_t c = 0; c < n_cases; c++) {
        mpz_t primes[3];
        for (int i = 0; i < 3; i++)
            mpz_init(primes[i]);
        char *n = product(cases[c].seed, cases[c].digits, cases[c].count, primes);
        pk_job *alone = run_alone(n, 30, 0, (uint64_t)1 << 22);
        pk_result r;
        r.size = sizeof r;
        if (alone) {
            PKT_CHECK_STATUS(pk_job_result(alone, &r), PK_OK, n);
            PKT_CHECK(r.complete && r.factor_count == cases[c].count, "%s: unsplit job lists %zu factors", n,
                      r.factor_count);
        }
        for (unsigned k = 2; k <= 3 && alone; k++) {
            share_run sr = {k, (uint64_t)1 << 20, 0, 0, 0, 0};
            pk_job *job = run_shared(create(n, 30, 0), &sr, n);
            PKT_CHECK(sr.passes >= cases[c].count - 1 && sr.found >= cases[c].count - 1,
                      "%s: %u shares: %u ECM passes, %u ended by a factor", n, k, sr.passes, sr.found);
            if (job) {
                same_answer(alone, job, n);
                pk_job_destroy(job);
            }
        }
        pk_job_destroy(alone);
        free(n);
        for (int i = 0; i < 3; i++)
            mpz_clear(primes[i]);
        PKT_BAIL_IF_MANY();
    }
}

void test_ecm_share_checkpoints_and_restores_mid_curve(void)
{
    pkt_say("checks: a share paused in stage 1 of a curve writes a version-3 checkpoint that restores to the same "
            "share (same index and count, the same text after one more step each); the restored share merges with "
            "the others to the unsplit answer; a complete job that is no share still writes version 2");
    static const unsigned digits[2] = {17, 40};
    mpz_t primes[2];
    mpz_inits(primes[0], primes[1], NULL);
    char *n = product(5, digits, 2, primes);
    pk_job *alone = run_alone(n, 30, 0, (uint64_t)1 << 22);
    share_run sr = {3, (uint64_t)1 << 12, 0, 0, 1, 0};
    pk_job *job = create(n, 30, 0);
    size_t len;
    char *t = job ? pkt_checkpoint(job, &len) : NULL;
    PKT_CHECK(t && strncmp(t, "primekit-checkpoint 2\n", 22) == 0, "a complete job writes version 2");
    free(t);
    job = run_shared(job, &sr, n);
    PKT_CHECK(sr.restored == 1, "no share was restored mid-curve (%u passes)", sr.passes);
    if (job && alone)
        same_answer(alone, job, n);
    pk_job_destroy(job);
    pk_job_destroy(alone);
    free(n);
    mpz_clears(primes[0], primes[1], NULL);
}

/* Step job until it is in ECM. */
static int to_ecm(pk_job *job, uint64_t budget)
{
    for (unsigned i = 0; i < (1u << 20); i++) {
        if (in_ecm(job))
            return 1;
        if (pk_job_step(job, budget) != PK_MORE)
            return 0;
    }
    return 0;
}

void test_ecm_merge_refuses_shares_that_do_not_belong_together(void)
{
    pkt_say("checks: pk_job_ecm_share refuses bad arguments, trial-division jobs, jobs not in ECM and shares; "
            "pk_job_ecm_merge refuses NULL, a job that is no share, shares of different candidates, of different "
            "states of one job, of different counts, an index twice, and shares not over without a factor; the "
            "shares' checkpoints are unchanged by the refusals");
    static const unsigned d1[2] = {30, 30}, d2[2] = {30, 31};
    mpz_t primes[2];
    mpz_inits(primes[0], primes[1], NULL);
    char *n1 = product(5, d1, 2, primes), *n2 = product(6, d2, 2, primes);
    pk_job *a = create(n1, 15, 0), *b = create(n2, 15, 0), *s = NULL;
    pk_options o;
    pk_options_init(&o);
    o.mode = PK_MODE_TRIAL;
    pk_job *trial = NULL;
    PKT_CHECK_STATUS(pk_job_create(n1, &o, &trial), PK_OK, "trial job");
    if (!a || !b || !trial)
        goto out;
    PKT_CHECK_STATUS(pk_job_ecm_share(a, 0, 2, &s), PK_E_OPTIONS, "share before ECM");
    PKT_CHECK(s == NULL, "out not NULL on error");
    PKT_CHECK(to_ecm(a, (uint64_t)1 << 14) && to_ecm(b, (uint64_t)1 << 14), "jobs reach ECM");
    PKT_CHECK_STATUS(pk_job_ecm_share(NULL, 0, 2, &s), PK_E_ARG, "NULL job");
    PKT_CHECK_STATUS(pk_job_ecm_share(a, 0, 2, NULL), PK_E_ARG, "NULL out");
    PKT_CHECK_STATUS(pk_job_ecm_share(a, 0, 1, &s), PK_E_ARG, "count 1");
    PKT_CHECK_STATUS(pk_job_ecm_share(a, 2, 2, &s), PK_E_ARG, "index = count");
    PKT_CHECK_STATUS(pk_job_ecm_share(trial, 0, 2, &s), PK_E_OPTIONS, "trial job");
    PKT_CHECK_STATUS(pk_job_ecm_share_info(a, NULL, NULL, NULL), PK_E_OPTIONS, "info of a job that is no share");
    pk_job *a2[2] = {0}, *a3[3] = {0}, *b2[2] = {0}, *late[2] = {0};
    for (unsigned i = 0; i < 2; i++) {
        PKT_CHECK_STATUS(pk_job_ecm_share(a, i, 2, &a2[i]), PK_OK, "share a");
        PKT_CHECK_STATUS(pk_job_ecm_share(b, i, 2, &b2[i]), PK_OK, "share b");
    }
    for (unsigned i = 0; i < 3; i++)
        PKT_CHECK_STATUS(pk_job_ecm_share(a, i, 3, &a3[i]), PK_OK, "share a in 3");
    if (a2[0]) {
        pk_job *ss = NULL;
        PKT_CHECK_STATUS(pk_job_ecm_share(a2[0], 0, 2, &ss), PK_E_OPTIONS, "share of a share");
    }
    /* The same job a few curves later: another state. */
    for (int i = 0; i < 40; i++)
        pk_job_step(a, (uint64_t)1 << 16);
    if (in_ecm(a))
        for (unsigned i = 0; i < 2; i++)
            PKT_CHECK_STATUS(pk_job_ecm_share(a, i, 2, &late[i]), PK_OK, "share a later");
    if (!a2[0] || !a2[1] || !b2[0] || !b2[1] || !a3[0] || !late[0] || !late[1])
        goto free_shares;
    size_t l0, l1;
    char *t0 = pkt_checkpoint(a2[0], &l0), *t1 = pkt_checkpoint(a2[1], &l1);
    pk_job *m = NULL;
    PKT_CHECK_STATUS(pk_job_ecm_merge(NULL, 2, &m), PK_E_ARG, "NULL shares");
    PKT_CHECK_STATUS(pk_job_ecm_merge(a2, 0, &m), PK_E_ARG, "no shares");
    PKT_CHECK_STATUS(pk_job_ecm_merge(a2, 2, NULL), PK_E_ARG, "NULL out");
    pk_job *mixed[3];
    mixed[0] = a2[0];
    mixed[1] = a;
    PKT_CHECK_STATUS(pk_job_ecm_merge(mixed, 2, &m), PK_E_OPTIONS, "a job that is no share");
    mixed[1] = b2[1];
    PKT_CHECK_STATUS(pk_job_ecm_merge(mixed, 2, &m), PK_E_OPTIONS, "different candidates");
    mixed[1] = late[1];
    PKT_CHECK_STATUS(pk_job_ecm_merge(mixed, 2, &m), PK_E_OPTIONS, "different states of one job");
    mixed[1] = a3[1];
    PKT_CHECK_STATUS(pk_job_ecm_merge(mixed, 2, &m), PK_E_OPTIONS, "different counts");
    PKT_CHECK_STATUS(pk_job_ecm_merge(a3, 2, &m), PK_E_OPTIONS, "two of three shares");
    mixed[1] = a2[0];
    PKT_CHECK_STATUS(pk_job_ecm_merge(mixed, 2, &m), PK_E_OPTIONS, "an index twice");
    PKT_CHECK_STATUS(pk_job_ecm_merge(a2, 2, &m), PK_E_NOT_DONE, "shares not over");
    PKT_CHECK(m == NULL, "out not NULL on error");
    size_t l2, l3;
    char *t2 = pkt_checkpoint(a2[0], &l2), *t3 = pkt_checkpoint(a2[1], &l3);
    PKT_CHECK(t0 && t2 && l0 == l2 && memcmp(t0, t2, l0) == 0 && t1 && t3 && l1 == l3 && memcmp(t1, t3, l1) == 0,
              "a refused merge changed a share");
    free(t0);
    free(t1);
    free(t2);
    free(t3);
free_shares:
    for (unsigned i = 0; i < 2; i++) {
        pk_job_destroy(a2[i]);
        pk_job_destroy(b2[i]);
        pk_job_destroy(late[i]);
    }
    for (unsigned i = 0; i < 3; i++)
        pk_job_destroy(a3[i]);
out:
    pk_job_destroy(a);
    pk_job_destroy(b);
    pk_job_destroy(trial);
    free(n1);
    free(n2);
    mpz_clears(primes[0], primes[1], NULL);
}

void test_ecm_effort_limits_count_every_share(void)
{
    pkt_say("checks: on p·q with two 30-digit primes, ecm_digits 15 run as 2 and 3 shares leaves the part with "
            "the unsplit job's record (25 curves at B1 2000, level 15, method ecm) and answer; work_limit 2^22 run "
            "as shares leaves the part too, with the work of all shares together at least the limit");
    static const unsigned d[2] = {30, 30};
    mpz_t primes[2];
    mpz_inits(primes[0], primes[1], NULL);
    char *n = product(7, d, 2, primes);
    pk_job *alone = run_alone(n, 15, 0, (uint64_t)1 << 20);
    if (alone) {
        pk_part_info ia = part_info(alone);
        PKT_CHECK(ia.curves == 25 && ia.b1 == 2000 && ia.ecm_digits == 15 && strcmp(ia.method, "ecm") == 0,
                  "unsplit record: %llu curves at B1 %llu, level %u, %s", (unsigned long long)ia.curves,
                  (unsigned long long)ia.b1, ia.ecm_digits, ia.method);
        for (unsigned k = 2; k <= 3; k++) {
            share_run sr = {k, (uint64_t)1 << 16, 0, 0, 0, 0};
            pk_job *job = run_shared(create(n, 15, 0), &sr, "ecm_digits 15 in shares");
            PKT_CHECK(sr.passes == 1 && sr.found == 0, "%u shares: %u passes, %u found", k, sr.passes, sr.found);
            if (!job)
                continue;
            same_answer(alone, job, "ecm_digits 15");
            pk_part_info is = part_info(job);
            PKT_CHECK(is.curves == ia.curves && is.b1 == ia.b1 && is.b2 == ia.b2 && is.ecm_digits == ia.ecm_digits &&
                          strcmp(is.method, ia.method) == 0,
                      "%u shares: record %llu curves B1 %llu B2 %llu level %u %s", k, (unsigned long long)is.curves,
                      (unsigned long long)is.b1, (unsigned long long)is.b2, is.ecm_digits, is.method);
            pk_job_destroy(job);
        }
    }
    uint64_t limit = (uint64_t)1 << 22;
    pk_job *wa = run_alone(n, 0, limit, (uint64_t)1 << 18);
    for (unsigned k = 2; k <= 3 && wa; k++) {
        share_run sr = {k, (uint64_t)1 << 16, 0, 0, 0, 0};
        pk_job *job = run_shared(create(n, 0, limit), &sr, "work_limit in shares");
        PKT_CHECK(sr.passes == 1 && sr.found == 0, "work limit, %u shares: %u passes, %u found", k, sr.passes,
                  sr.found);
        if (!job)
            continue;
        pk_result r;
        r.size = sizeof r;
        pk_progress p;
        PKT_CHECK_STATUS(pk_job_result(job, &r), PK_OK, "work limit result");
        pkt_progress(job, &p);
        pk_part_info is = part_info(job);
        PKT_CHECK(r.part_count == 1 && r.cofactor_status == PK_COFACTOR_COMPOSITE && is.work >= limit &&
                      strcmp(is.method, "ecm") == 0 && is.curves > 0,
                  "work limit, %u shares: %zu parts, status %d, part work %llu, %llu curves, %s", k, r.part_count,
                  r.cofactor_status, (unsigned long long)is.work, (unsigned long long)is.curves, is.method);
        same_answer(wa, job, "work_limit");
        pk_job_destroy(job);
    }
    pk_job_destroy(wa);
    pk_job_destroy(alone);
    free(n);
    mpz_clears(primes[0], primes[1], NULL);
}

/* Rewrite the checksum line for the changed body (FNV-1a 64), so that the
   change reaches the parser. */
static void reseal(char *t, size_t len)
{
    char *c = NULL;
    for (char *p = strstr(t, "\nchecksum "); p; p = strstr(p + 1, "\nchecksum "))
        c = p + 1;
    if (!c || (size_t)(c - t) + 26 > len)
        return;
    char line[32];
    snprintf(line, sizeof line, "checksum %016llx\n", (unsigned long long)pkt_fnv1a64(t, (size_t)(c - t)));
    memcpy(c, line, 26);
}

void test_ecm_share_checkpoint_changes_are_refused_or_restore(void)
{
    pkt_say("checks: every single-character change of a share's version-3 checkpoint (paused in stage 1), with "
            "the checksum made right again, is refused or restores to a share that steps on without error; none "
            "crashes");
    static const unsigned d[2] = {20, 40};
    mpz_t primes[2];
    mpz_inits(primes[0], primes[1], NULL);
    char *n = product(8, d, 2, primes);
    pk_job *job = create(n, 30, 0), *s = NULL;
    if (job && to_ecm(job, (uint64_t)1 << 14) && pk_job_ecm_share(job, 1, 2, &s) == PK_OK) {
        for (int i = 0; i < 200 && ecm_phase(s) != 1; i++)
            pk_job_step(s, (uint64_t)1 << 12);
        size_t len;
        char *t = pkt_checkpoint(s, &len);
        PKT_CHECK(t && strstr(t, "\nshare 1 2 ") != NULL, "share line present");
        size_t refused = 0, restored = 0;
        for (size_t i = 0; t && i < len; i++) {
            char saved = t[i];
            char *u = malloc(len + 1);
            memcpy(u, t, len);
            u[len] = 0; /* reseal looks for the checksum line with strstr */
            u[i] = saved == '9' ? '0' : (char)(saved + 1);
            reseal(u, len);
            pk_job *r = NULL;
            int st = pk_job_restore(u, len, NULL, &r);
            free(u);
            if (st == PK_OK) {
                restored++;
                for (int k = 0; k < 3; k++) {
                    int s2 = pk_job_step(r, (uint64_t)1 << 12);
                    PKT_CHECK(s2 == PK_MORE || s2 == PK_DONE, "changed byte %zu: restored share stepped to %s", i,
                              pk_status_name(s2));
                }
                size_t l2;
                char *t2 = pkt_checkpoint(r, &l2);
                PKT_CHECK(t2 != NULL, "restored copy checkpoints");
                free(t2);
                pk_job_destroy(r);
            } else {
                refused++;
                PKT_CHECK(r == NULL, "out not NULL on error");
            }
        }
        PKT_CHECK(refused > 0, "nothing refused");
        pkt_say("%zu changes refused, %zu restored", refused, restored);
        free(t);
    }
    pk_job_destroy(s);
    pk_job_destroy(job);
    free(n);
    mpz_clears(primes[0], primes[1], NULL);
}
