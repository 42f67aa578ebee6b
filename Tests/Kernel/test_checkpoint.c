/*
 * test_checkpoint.c — checkpoint/restore: round trips after interrupts at
 * random points (from another thread, from a signal handler, and through
 * small budgets), and hostile input (flipped bytes, truncations, inconsistent
 * but well-formed text).
 *
 * The crafted-inconsistency test edits the documented text format (one
 * "key value" field per line, ending in "checksum <FNV-1a 64 of the bytes
 * before that line, 16 lower-case hex digits>") and re-seals it, so that the
 * restore gets past the checksum and has to find the contradiction itself.
 */
#define _POSIX_C_SOURCE 200809L
#include "pkt.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- candidates */

typedef struct rt_case {
    char *n;
    char bound[24];
    pkt_answer ref;
} rt_case;

/* Candidates on each path with factors spread over a bound of ~2^21..2^23. */
static size_t make_cases(pkt_rng *rng, rt_case *cases, size_t max)
{
    static const unsigned bits[] = {62, 64, 100, 127, 180, 400};
    mpz_t n, p;
    mpz_init(n);
    mpz_init(p);
    size_t count = 0;
    for (size_t i = 0; i < sizeof bits / sizeof bits[0] && count < max; i++) {
        mpz_set_ui(n, 1);
        unsigned small = (unsigned)pkt_rand_range(rng, 1, 3);
        for (unsigned k = 0; k < small; k++) {
            pkt_rand_prime(rng, p, (unsigned)pkt_rand_range(rng, 6, 21));
            mpz_mul(n, n, p);
            if (pkt_rand_below(rng, 3) == 0) mpz_mul(n, n, p);
        }
        size_t have = mpz_sizeinbase(n, 2);
        if (have + 8 < bits[i]) {
            pkt_rand_prime(rng, p, bits[i] - (unsigned)have);
            mpz_mul(n, n, p);
        }
        rt_case *c = &cases[count];
        c->n = mpz_get_str(NULL, 10, n);
        uint64_t bound = PKT_SANITIZED ? pkt_rand_range(rng, 1u << 23, 1u << 25)
                                       : pkt_rand_range(rng, 1u << 24, 1u << 26);
        if (bits[i] > 128) bound /= 4; /* the GMP path costs more per divisor */
        pkt_u64(bound, c->bound);
        if (pkt_factor(c->n, NULL, c->bound, 0, 0, &c->ref) != PK_OK) {
            PKT_CHECK(0, "reference run of %s failed", c->n);
            free(c->n);
            continue;
        }
        count++;
    }
    mpz_clear(n);
    mpz_clear(p);
    return count;
}

static void free_cases(rt_case *cases, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        free(cases[i].n);
        pkt_answer_free(&cases[i].ref);
    }
}

/* Check that the factors a paused job lists are a prefix-compatible part of the final answer. */
static void check_partial_factors(const pk_job *job, const pkt_answer *ref)
{
    pk_progress pr;
    pkt_progress(job, &pr);
    char **f;
    uint64_t *e;
    if (pkt_factors_read(job, pr.factors_found, &f, &e) != PK_OK) {
        PKT_CHECK(0, "listing factors of a paused job");
        pkt_factors_free(pr.factors_found, f, e);
        return;
    }
    for (size_t i = 0; i < pr.factors_found; i++) {
        size_t j;
        for (j = 0; j < ref->nfactors; j++)
            if (strcmp(ref->factors[j], f[i]) == 0) break;
        PKT_CHECK(j < ref->nfactors && ref->exponents[j] == e[i], "paused job lists %s^%llu, not in the answer",
                  f[i], (unsigned long long)e[i]);
    }
    pkt_factors_free(pr.factors_found, f, e);
}

/* Restores whose percent came back lower than the checkpointed job's (one
 * report per test, with the first example). */
static unsigned g_percent_back;
static double g_percent_before, g_percent_after;

static void report_percent_back(unsigned restores)
{
    PKT_CHECK(g_percent_back == 0,
              "percent went back across checkpoint/restore in %u of %u restores (first: %.17g -> %.17g)",
              g_percent_back, restores, g_percent_before, g_percent_after);
    g_percent_back = 0;
}

/* Checkpoint job, restore a new one from the text alone, compare, and swap. */
static pk_job *checkpoint_and_restore(pk_job *job, pkt_rng *rng, unsigned *count)
{
    size_t len = 0;
    char *text = pkt_checkpoint(job, &len);
    if (!text) {
        PKT_CHECK(0, "pk_job_checkpoint failed");
        return job;
    }
    /* Restore from an exact-size copy that is not NUL-terminated. */
    char *copy = malloc(len ? len : 1);
    memcpy(copy, text, len);
    pk_options o;
    pk_options_init(&o);
    if (pkt_rand_below(rng, 2)) o.simd = PK_SIMD_PORTABLE;
    pk_job *next = NULL;
    int st = pk_job_restore(copy, len, pkt_rand_below(rng, 2) ? &o : NULL, &next);
    free(copy);
    PKT_CHECK_STATUS(st, PK_OK, "pk_job_restore of a fresh checkpoint");
    if (st != PK_OK || !next) {
        free(text);
        return job;
    }
    (*count)++;
    pk_progress a, b;
    pkt_progress(job, &a);
    pkt_progress(next, &b);
    PKT_CHECK(a.next_divisor == b.next_divisor && a.divisors_tested == b.divisors_tested &&
                  a.work_done == b.work_done && a.factors_found == b.factors_found && a.done == b.done &&
                  a.path == b.path,
              "restored progress differs: next %llu/%llu tested %llu/%llu work %llu/%llu factors %zu/%zu path %d/%d",
              (unsigned long long)a.next_divisor, (unsigned long long)b.next_divisor,
              (unsigned long long)a.divisors_tested, (unsigned long long)b.divisors_tested,
              (unsigned long long)a.work_done, (unsigned long long)b.work_done, a.factors_found, b.factors_found,
              a.path, b.path);
    if (b.percent < a.percent && g_percent_back++ == 0) {
        g_percent_before = a.percent;
        g_percent_after = b.percent;
    }
    /* The restored job writes the same text. */
    size_t len2 = 0;
    char *text2 = pkt_checkpoint(next, &len2);
    if (!text2 || len2 != len || memcmp(text, text2, len) != 0) {
        /* Show the first differing line of each. */
        size_t i = 0, ls = 0;
        while (text2 && i < len && i < len2 && text[i] == text2[i]) {
            if (text[i] == '\n') ls = i + 1;
            i++;
        }
        const char *e1 = memchr(text + ls, '\n', len - ls), *e2 = text2 ? memchr(text2 + ls, '\n', len2 - ls) : NULL;
        PKT_CHECK(0, "checkpoint of the restored job differs: \"%.*s\" became \"%.*s\"", e1 ? (int)(e1 - text - ls) : 0,
                  text + ls, e2 ? (int)(e2 - text2 - ls) : 0, text2 ? text2 + ls : "");
    }
    free(text2);
    free(text);
    pk_job_destroy(job);
    return next;
}

static void compare_final(pk_job *job, const rt_case *c, const char *how)
{
    pkt_answer got;
    char why[300];
    int st = pkt_answer_read(job, &got);
    PKT_CHECK_STATUS(st, PK_OK, "read answer");
    if (st == PK_OK) {
        int eq = pkt_answer_equal(&got, &c->ref, why, sizeof why);
        PKT_CHECK(eq, "%s: n=%s bound=%s: resumed answer differs: %s", how, c->n, c->bound, why);
    }
    pkt_answer_free(&got);
}

static pk_job *create_case(const rt_case *c)
{
    pk_options o;
    pk_options_init(&o);
    o.bound = c->bound;
    pk_job *job = NULL;
    PKT_CHECK_STATUS(pk_job_create(c->n, &o, &job), PK_OK, c->n);
    return job;
}

/* ------------------------------------------------------- thread interrupts */

typedef struct intr_arg {
    pk_job *job;
    uint64_t spins;
    int use_signal;
    pthread_t target;
} intr_arg;

static pk_job *volatile g_signal_job;

static void on_sigusr1(int sig)
{
    (void)sig;
    pk_job *job = g_signal_job;
    if (job) pk_job_interrupt(job);
}

static void *interrupter(void *p)
{
    intr_arg *a = p;
    volatile uint64_t x = 0;
    for (uint64_t i = 0; i < a->spins; i++) x += i; /* a random delay, not synchronisation */
    if (a->use_signal) pthread_kill(a->target, SIGUSR1);
    else pk_job_interrupt(a->job);
    return NULL;
}

static void round_trip_with_interrupts(int use_signal)
{
    pkt_rng rng;
    pkt_rng_for(&rng, use_signal ? "rt-signal" : "rt-thread");
    rt_case cases[8];
    size_t nc = make_cases(&rng, cases, 8);
    unsigned reps = PKT_SIZE(3u, 2u), interrupted = 0, restored = 0, rounds_total = 0;
    if (use_signal) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_sigusr1;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGUSR1, &sa, NULL);
    }
    for (size_t ci = 0; ci < nc; ci++) {
        for (unsigned r = 0; r < reps; r++) {
            pk_job *job = create_case(&cases[ci]);
            if (!job) continue;
            g_signal_job = job;
            int st = PK_MORE;
            for (unsigned round = 0; round < 40; round++) {
                intr_arg a = {job, 0, use_signal, pthread_self()};
                a.spins = pkt_rand_below(&rng, (uint64_t)1 << pkt_rand_range(&rng, 4, 21));
                pthread_t th;
                pthread_create(&th, NULL, interrupter, &a);
                pk_progress before, after;
                pkt_progress(job, &before);
                st = pk_job_step(job, UINT64_MAX);
                pthread_join(th, NULL);
                pkt_progress(job, &after);
                pkt_check_progress_step(&before, &after, "interrupted step");
                rounds_total++;
                if (st == PK_DONE) break;
                PKT_CHECK(st == PK_INTERRUPTED, "step with an unbounded budget returned %s", pk_status_name(st));
                if (st != PK_INTERRUPTED) break;
                interrupted++;
                check_partial_factors(job, &cases[ci].ref);
                /* A signal still in flight must not reach the job being destroyed:
                 * hold it until the handler points at the new job. */
                sigset_t usr1, old;
                sigemptyset(&usr1);
                sigaddset(&usr1, SIGUSR1);
                pthread_sigmask(SIG_BLOCK, &usr1, &old);
                job = checkpoint_and_restore(job, &rng, &restored);
                g_signal_job = job;
                pthread_sigmask(SIG_SETMASK, &old, NULL);
            }
            if (use_signal) {
                /* A signal sent after the last step may still mark this job: drain it. */
                st = pk_job_step(job, UINT64_MAX);
                if (st == PK_INTERRUPTED) st = pk_job_step(job, UINT64_MAX);
            } else if (st != PK_DONE) {
                st = pk_job_step(job, UINT64_MAX);
                if (st == PK_INTERRUPTED) st = pk_job_step(job, UINT64_MAX);
            }
            PKT_CHECK_STATUS(st, PK_DONE, "finishing after interrupts");
            if (st == PK_DONE) compare_final(job, &cases[ci], use_signal ? "signal" : "thread");
            sigset_t usr1, old;
            sigemptyset(&usr1);
            sigaddset(&usr1, SIGUSR1);
            pthread_sigmask(SIG_BLOCK, &usr1, &old);
            g_signal_job = NULL;
            pthread_sigmask(SIG_SETMASK, &old, NULL);
            pk_job_destroy(job);
            PKT_BAIL_IF_MANY();
        }
    }
    pkt_say("%zu candidates x %u runs: %u steps, %u interrupted, %u checkpoint/restore round trips", nc, reps,
            rounds_total, interrupted, restored);
    PKT_CHECK(interrupted > 0, "no step was ever interrupted: the test exercised nothing");
    report_percent_back(restored);
    free_cases(cases, nc);
}

void test_checkpoint_restore_round_trip_after_thread_interrupts(void)
{
    pkt_say("checks: pk_job_interrupt from a second thread after a random delay; each interrupted job is "
            "checkpointed, restored from the text alone into a new job and finished: factors, exponents, "
            "cofactor, status, certainty identical to an uninterrupted run");
    round_trip_with_interrupts(0);
}

void test_checkpoint_restore_round_trip_after_signal_interrupts(void)
{
    pkt_say("checks: the same, with pk_job_interrupt called from a SIGUSR1 handler (async-signal-safe)");
    round_trip_with_interrupts(1);
}

void test_checkpoint_restore_round_trip_with_small_random_budgets(void)
{
    pkt_say("checks: random budgets (1..2^16 units), random checkpoint/restore between steps and interrupts "
            "before steps; the finished answer is identical to an uninterrupted run");
    pkt_rng rng;
    pkt_rng_for(&rng, "rt-budget");
    rt_case cases[8];
    size_t nc = make_cases(&rng, cases, 8);
    unsigned restored = 0, steps = 0;
    for (size_t ci = 0; ci < nc; ci++) {
        pk_job *job = create_case(&cases[ci]);
        if (!job) continue;
        int st;
        uint64_t max_steps = 200000;
        do {
            uint64_t budget = pkt_rand_below(&rng, (uint64_t)1 << pkt_rand_range(&rng, 0, 16)) + 1;
            /* Mostly large budgets so the run ends; some tiny ones. */
            if (pkt_rand_below(&rng, 4) != 0) budget = pkt_rand_range(&rng, 1u << 16, 1u << 20);
            int expect_intr = pkt_rand_below(&rng, 10) == 0;
            if (expect_intr) pk_job_interrupt(job);
            pk_progress before, after;
            pkt_progress(job, &before);
            st = pk_job_step(job, budget);
            pkt_progress(job, &after);
            pkt_check_progress_step(&before, &after, "budgeted step");
            steps++;
            if (expect_intr) PKT_CHECK(st == PK_INTERRUPTED, "interrupt before step: %s", pk_status_name(st));
            else PKT_CHECK(st == PK_MORE || st == PK_DONE, "budgeted step: %s", pk_status_name(st));
            if (st != PK_DONE && pkt_rand_below(&rng, 3) == 0) {
                check_partial_factors(job, &cases[ci].ref);
                job = checkpoint_and_restore(job, &rng, &restored);
            }
        } while ((st == PK_MORE || st == PK_INTERRUPTED) && --max_steps);
        PKT_CHECK_STATUS(st, PK_DONE, "finishing with small budgets");
        if (st == PK_DONE) compare_final(job, &cases[ci], "budgets");
        pk_job_destroy(job);
        PKT_BAIL_IF_MANY();
    }
    pkt_say("%zu candidates: %u steps, %u checkpoint/restore round trips", nc, steps, restored);
    report_percent_back(restored);
    free_cases(cases, nc);
}

void test_checkpoint_of_fresh_and_finished_jobs_restores(void)
{
    pkt_say("checks: a fresh job's checkpoint restores and finishes to the reference answer; a finished job's "
            "checkpoint restores finished (step returns PK_DONE at once, same answer); max_digits below the "
            "candidate's length gives PK_E_TOO_LARGE");
    pkt_rng rng;
    pkt_rng_for(&rng, "rt-fresh");
    rt_case cases[8];
    size_t nc = make_cases(&rng, cases, 8);
    for (size_t ci = 0; ci < nc; ci++) {
        pk_job *job = create_case(&cases[ci]);
        if (!job) continue;
        unsigned restored = 0;
        job = checkpoint_and_restore(job, &rng, &restored);
        int st = pkt_run(job, UINT64_MAX, 4);
        PKT_CHECK_STATUS(st, PK_DONE, "run restored fresh job");
        if (st == PK_DONE) compare_final(job, &cases[ci], "fresh");
        job = checkpoint_and_restore(job, &rng, &restored);
        pk_progress a, b;
        pkt_progress(job, &a);
        PKT_CHECK(a.done == 1 && a.percent == 100.0, "restored finished job: done %d percent %.17g", a.done,
                  a.percent);
        st = pk_job_step(job, UINT64_MAX);
        pkt_progress(job, &b);
        PKT_CHECK(st == PK_DONE && a.work_done == b.work_done, "restored finished job stepped: %s",
                  pk_status_name(st));
        compare_final(job, &cases[ci], "finished");
        PKT_CHECK(restored == 2, "restores: %u", restored);

        size_t len = 0;
        char *text = pkt_checkpoint(job, &len);
        if (text) {
            pk_options o;
            pk_options_init(&o);
            o.max_digits = strlen(cases[ci].n) - 1;
            pk_job *out = (pk_job *)&out;
            PKT_CHECK_STATUS(pk_job_restore(text, len, &o, &out), PK_E_TOO_LARGE, "restore with max_digits too small");
            PKT_CHECK(out == NULL, "*out not NULL after PK_E_TOO_LARGE");
            o.max_digits = strlen(cases[ci].n);
            out = NULL;
            PKT_CHECK_STATUS(pk_job_restore(text, len, &o, &out), PK_OK, "restore with max_digits == length");
            pk_job_destroy(out);
            /* Only max_digits and simd are read: the range fields are ignored. */
            pk_options_init(&o);
            o.from = "not a number";
            o.bound = "1";
            out = NULL;
            PKT_CHECK_STATUS(pk_job_restore(text, len, &o, &out), PK_OK, "restore ignores options.from/bound");
            pk_job_destroy(out);
            pk_options_init(&o);
            o.size = 0;
            out = (pk_job *)&out;
            PKT_CHECK_STATUS(pk_job_restore(text, len, &o, &out), PK_E_ARG, "restore with options.size = 0");
            PKT_CHECK(out == NULL, "*out not NULL after PK_E_ARG");
        }
        free(text);
        pk_job_destroy(job);
    }
    free_cases(cases, nc);
}

/* ------------------------------------------------------------- corruption */

static int is_restore_error(int st)
{
    return st == PK_E_CHECKPOINT || st == PK_E_CHECKPOINT_VERSION || st == PK_E_CHECKPOINT_STATE;
}

/* Restore from an exact-size heap copy (so ASan sees any read past length).
 * Accepting is allowed only when the text means the same job as `orig`. */
static int try_restore(const char *text, size_t len, const char *orig, size_t orig_len, int *accepted_same)
{
    char *copy = malloc(len ? len : 1);
    if (len) memcpy(copy, text, len);
    pk_job *job = (pk_job *)&job;
    int st = pk_job_restore(copy, len, NULL, &job);
    free(copy);
    if (st == PK_OK) {
        size_t l2 = 0;
        char *again = job ? pkt_checkpoint(job, &l2) : NULL;
        int same = again && l2 == orig_len && memcmp(again, orig, l2) == 0;
        free(again);
        pk_job_destroy(job);
        if (same) (*accepted_same)++;
        return same ? 1 : 0;
    }
    PKT_CHECK(job == NULL, "restore failed with %s but left *out set", pk_status_name(st));
    return is_restore_error(st) ? 1 : 0;
}

/* A checkpoint of a modest candidate, paused with factors found: on the
 * 128-bit path (gmp = 0) or the GMP path (gmp = 1). */
static const char *const modest[2] = {
    /* 2^3 * 3 * 1009 * 10007 * 100003 * (a prime near 2^70) */
    "28610077408547896623577062924578328",
    /* 2^3 * 3 * 1009 * 10007 * 100003 * (a prime near 2^200) */
    "38942019433487790055028175423581365696798487631094291081730330970410420808",
};

static char *modest_checkpoint(int gmp, size_t *len)
{
    pk_options o;
    pk_options_init(&o);
    o.bound = "200000";
    pk_job *job = NULL;
    if (pk_job_create(modest[gmp], &o, &job) != PK_OK) {
        PKT_CHECK(0, "create modest candidate");
        return NULL;
    }
    int st = pk_job_step(job, gmp ? 40000 : 20000);
    PKT_CHECK(st == PK_MORE, "modest candidate: first step returned %s, want PK_MORE", pk_status_name(st));
    char *text = pkt_checkpoint(job, len);
    pk_job_destroy(job);
    return text;
}

static void corrupt_one(int gmp)
{
    size_t len = 0;
    char *text = modest_checkpoint(gmp, &len);
    if (!text) return;
    pkt_say("checkpoint of %zu bytes:\n%s", len, text);
    char *buf = malloc(len + 64);
    unsigned bad_flip = 0, bad_trunc = 0, flips = 0;
    int same = 0;
    for (size_t i = 0; i < len; i++) {
        for (int bit = 0; bit < 8; bit++) {
            memcpy(buf, text, len);
            buf[i] ^= (char)(1 << bit);
            flips++;
            if (!try_restore(buf, len, text, len, &same)) {
                if (bad_flip++ < 5) PKT_CHECK(0, "flip of bit %d at byte %zu ('%c') was accepted as a different job", bit, i, text[i]);
            }
        }
    }
    PKT_CHECK(bad_flip == 0, "%u of %u bit flips accepted", bad_flip, flips);
    for (size_t l = 0; l < len; l++) {
        if (!try_restore(text, l, text, len, &same)) {
            if (bad_trunc++ < 5) PKT_CHECK(0, "truncation to %zu bytes accepted", l);
        }
    }
    PKT_CHECK(bad_trunc == 0, "%u truncations accepted", bad_trunc);
    static const char *suffix[] = {"x", "\n", "checksum 0000000000000000\n", "\0"};
    for (int s = 0; s < 4; s++) {
        memcpy(buf, text, len);
        size_t sl = s == 3 ? 1 : strlen(suffix[s]);
        memcpy(buf + len, suffix[s], sl);
        PKT_CHECK(try_restore(buf, len + sl, text, len, &same), "appending %zu bytes was accepted", sl);
    }
    /* Random garbage, and random garbage after a valid first line. */
    pkt_rng rng;
    pkt_rng_for(&rng, gmp ? "garbage-gmp" : "garbage");
    char junk[512];
    for (int t = 0; t < 2000; t++) {
        size_t jl = (size_t)pkt_rand_below(&rng, sizeof junk);
        for (size_t i = 0; i < jl; i++) {
            unsigned r = (unsigned)pkt_rand_below(&rng, 20);
            junk[i] = r < 10 ? (char)('0' + r) : r < 12 ? ' ' : r < 14 ? '\n' : (char)pkt_rand(&rng);
        }
        if (t & 1 && jl > 22) memcpy(junk, "primekit-checkpoint 1\n", 22);
        PKT_CHECK(try_restore(junk, jl, text, len, &same), "random text of %zu bytes accepted", jl);
    }
    pkt_say("%u flips, %zu truncations, 2000 garbage inputs; %d accepted as the same job", flips, len, same);
    free(buf);
    free(text);
}

void test_corrupted_checkpoints_are_rejected_never_crash(void)
{
    pkt_say("checks: every single-bit flip of every byte, every truncation length, appended bytes and random "
            "garbage are rejected with PK_E_CHECKPOINT/_VERSION/_STATE and *out == NULL (never a crash, never "
            "a different job), for a paused 115-bit job and a paused 250-bit (GMP path) job");
    corrupt_one(0);
    corrupt_one(1);
}

/* ------------------------------------------------------------ crafted text */

/* Is this text sealed the way the documented format says? */
static int sealed_as_documented(const char *t, size_t len)
{
    if (len < 27 || t[len - 1] != '\n') return 0;
    size_t last = len - 1;
    while (last > 0 && t[last - 1] != '\n') last--;
    if (len - last != 26 || memcmp(t + last, "checksum ", 9) != 0) return 0;
    char want[17];
    snprintf(want, sizeof want, "%016llx", (unsigned long long)pkt_fnv1a64(t, last));
    return memcmp(t + last + 9, want, 16) == 0;
}

/* Replace the first line starting with `key ` by `key value` (value NULL:
 * delete the line), then re-seal. Returns malloc'd text or NULL. */
static char *edit(const char *t, size_t len, const char *key, const char *value, size_t *out_len)
{
    size_t last = len - 1;
    while (last > 0 && t[last - 1] != '\n') last--;
    size_t cap = len + 512 + (value ? strlen(value) : 0);
    char *o = malloc(cap);
    size_t ol = 0, k = strlen(key);
    int done = 0;
    for (size_t p = 0; p < last;) {
        const char *nl = memchr(t + p, '\n', last - p);
        size_t ll = (size_t)(nl - (t + p)) + 1;
        if (!done && ll > k && memcmp(t + p, key, k) == 0 && t[p + k] == ' ') {
            done = 1;
            if (value) ol += (size_t)snprintf(o + ol, cap - ol, "%s %s\n", key, value);
        } else {
            memcpy(o + ol, t + p, ll);
            ol += ll;
        }
        p += ll;
    }
    if (!done) {
        free(o);
        return NULL;
    }
    ol += (size_t)snprintf(o + ol, cap - ol, "checksum %016llx\n", (unsigned long long)pkt_fnv1a64(o, ol));
    *out_len = ol;
    return o;
}

/* Replace the "factors"/"factor" lines by `factor_lines` and the cofactor by
 * `cofactor`, keeping everything else, then re-seal. */
static char *rebuild_factors(const char *t, size_t len, const char *factor_lines, const char *cofactor,
                             size_t *out_len)
{
    size_t last = len - 1;
    while (last > 0 && t[last - 1] != '\n') last--;
    size_t cap = len + strlen(factor_lines) + strlen(cofactor) + 64;
    char *o = malloc(cap);
    size_t ol = 0;
    for (size_t p = 0; p < last;) {
        const char *nl = memchr(t + p, '\n', last - p);
        size_t ll = (size_t)(nl - (t + p)) + 1;
        if (ll > 8 && memcmp(t + p, "factors ", 8) == 0) {
            ol += (size_t)snprintf(o + ol, cap - ol, "%s", factor_lines);
        } else if (ll > 9 && memcmp(t + p, "cofactor ", 9) == 0) {
            ol += (size_t)snprintf(o + ol, cap - ol, "cofactor %s\n", cofactor);
        } else if (!(ll > 7 && memcmp(t + p, "factor ", 7) == 0)) {
            memcpy(o + ol, t + p, ll);
            ol += ll;
        }
        p += ll;
    }
    ol += (size_t)snprintf(o + ol, cap - ol, "checksum %016llx\n", (unsigned long long)pkt_fnv1a64(o, ol));
    *out_len = ol;
    return o;
}

/* The value of the first `key ` line, copied into buf. */
static int field_of(const char *t, size_t len, const char *key, char *buf, size_t cap)
{
    size_t k = strlen(key);
    for (size_t p = 0; p < len;) {
        const char *nl = memchr(t + p, '\n', len - p);
        if (!nl) return 0;
        size_t ll = (size_t)(nl - (t + p));
        if (ll > k && memcmp(t + p, key, k) == 0 && t[p + k] == ' ') {
            snprintf(buf, cap, "%.*s", (int)(ll - k - 1), t + p + k + 1);
            return 1;
        }
        p += ll + 1;
    }
    return 0;
}

static void expect_restore(const char *t, size_t len, int want, const char *what)
{
    if (!t) {
        PKT_CHECK(0, "%s: the field to edit is missing from the checkpoint", what);
        return;
    }
    char *copy = malloc(len);
    memcpy(copy, t, len);
    pk_job *job = (pk_job *)&job;
    int st = pk_job_restore(copy, len, NULL, &job);
    free(copy);
    PKT_CHECK_STATUS(st, want, what);
    if (st == PK_OK) pk_job_destroy(job);
    else PKT_CHECK(job == NULL, "%s: *out not NULL", what);
}

void test_inconsistent_checkpoints_are_rejected_with_state_or_version(void)
{
    pkt_say("checks: well-formed, correctly sealed checkpoints that contradict themselves (factors that do not "
            "multiply back, a composite factor, next outside the range, from > bound, wrong cofactor, status "
            "contradicting the cofactor) give PK_E_CHECKPOINT_STATE; unknown versions give "
            "PK_E_CHECKPOINT_VERSION; a factor count that does not match the lines gives PK_E_CHECKPOINT");
    size_t len = 0;
    char *text = modest_checkpoint(0, &len);
    if (!text) return;
    if (!sealed_as_documented(text, len)) {
        PKT_CHECK(0, "checkpoint is not sealed as documented (last line \"checksum <FNV-1a 64 hex>\"): the "
                     "crafted cases cannot run");
        free(text);
        return;
    }
    char *e;
    size_t el = 0;
    /* The untouched text, re-sealed by this test, is accepted. */
    e = edit(text, len, "candidate", "28610077408547896623577062924578328", &el);
    expect_restore(e, el, PK_OK, "re-sealed unchanged text");
    free(e);

    char from[32] = "", bound[32] = "", next[32] = "", factors[32] = "", cof[200] = "";
    field_of(text, len, "from", from, sizeof from);
    field_of(text, len, "bound", bound, sizeof bound);
    field_of(text, len, "next", next, sizeof next);
    field_of(text, len, "factors", factors, sizeof factors);
    field_of(text, len, "cofactor", cof, sizeof cof);
    pkt_say("paused at from %s bound %s next %s with %s factors, cofactor %s", from, bound, next, factors, cof);

    static const struct { const char *key, *value; int want; const char *what; } cases[] = {
        {"primekit-checkpoint", "3", PK_E_CHECKPOINT, "a version-1 body under version 3 (lacks its lines)"},
        {"primekit-checkpoint", "4", PK_E_CHECKPOINT_VERSION, "version 4"},
        {"primekit-checkpoint", "2", PK_E_CHECKPOINT, "a version-1 body under version 2 (lacks its lines)"},
        {"primekit-checkpoint", "0", PK_E_CHECKPOINT_VERSION, "version 0"},
        {"primekit-checkpoint", "999999", PK_E_CHECKPOINT_VERSION, "version 999999"},
        {"factor", "3 2", PK_E_CHECKPOINT_STATE, "first factor 3^2 (does not multiply back)"},
        {"factor", "5 1", PK_E_CHECKPOINT_STATE, "first factor 5 (does not divide n)"},
        {"factor", "2 4", PK_E_CHECKPOINT_STATE, "2^4 instead of 2^3"},
        {"cofactor", "7", PK_E_CHECKPOINT_STATE, "cofactor 7"},
        {"next", "1", PK_E_CHECKPOINT_STATE, "next 1, below from"},
        {"next", "18446744073709551614", PK_E_CHECKPOINT_STATE, "next far above bound"},
        {"from", "300000", PK_E_CHECKPOINT_STATE, "from above bound"},
        {"candidate", "28610077408547896623577062924578330", PK_E_CHECKPOINT_STATE, "candidate + 2"},
        {"done", "1", PK_E_CHECKPOINT_STATE, "done with status ONE but cofactor != 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        e = edit(text, len, cases[i].key, cases[i].value, &el);
        expect_restore(e, el, cases[i].want, cases[i].what);
        free(e);
    }
    /* next = bound + 2: just outside the range. */
    char v[64];
    snprintf(v, sizeof v, "%llu", strtoull(bound, NULL, 10) + 2);
    e = edit(text, len, "next", v, &el);
    expect_restore(e, el, PK_E_CHECKPOINT_STATE, "next = bound + 2");
    free(e);
    /* A composite listed as a factor, with the cofactor adjusted so the product still matches. */
    {
        mpz_t n, c;
        mpz_init(n);
        mpz_init(c);
        mpz_set_str(n, "28610077408547896623577062924578328", 10);
        mpz_divexact_ui(c, n, 6);
        char *cs = mpz_get_str(NULL, 10, c);
        e = rebuild_factors(text, len, "factors 1\nfactor 6 1\n", cs, &el);
        expect_restore(e, el, PK_E_CHECKPOINT_STATE, "composite factor 6 listed, product consistent");
        free(e);
        /* A factor that still divides the cofactor: 2^2 listed, cofactor n/4 (even).
         * Factors are divided out completely, so this state is impossible. */
        mpz_divexact_ui(c, n, 4);
        free(cs);
        cs = mpz_get_str(NULL, 10, c);
        e = rebuild_factors(text, len, "factors 1\nfactor 2 2\n", cs, &el);
        expect_restore(e, el, PK_E_CHECKPOINT_STATE, "2^2 listed but the cofactor is still even");
        free(e);
        /* The same rebuild with the job's own factor lines and cofactor is accepted. */
        char lines[1024];
        size_t ll = 0;
        for (size_t q = 0; q < len;) {
            const char *nl = memchr(text + q, '\n', len - q);
            size_t l = (size_t)(nl - (text + q)) + 1;
            if (l > 7 && memcmp(text + q, "factor", 6) == 0 && (text[q + 6] == ' ' || text[q + 6] == 's') &&
                ll + l < sizeof lines) {
                memcpy(lines + ll, text + q, l);
                ll += l;
            }
            q += l;
        }
        lines[ll] = 0;
        e = rebuild_factors(text, len, lines, cof, &el);
        expect_restore(e, el, PK_OK, "rebuilt with the job's own factors and cofactor");
        PKT_CHECK(el == len && memcmp(e, text, len) == 0, "rebuilding with the same fields changed the text");
        free(e);
        free(cs);
        mpz_clear(n);
        mpz_clear(c);
    }
    /* Factor count larger than the factor lines: malformed. */
    snprintf(v, sizeof v, "%llu", strtoull(factors, NULL, 10) + 1);
    e = edit(text, len, "factors", v, &el);
    expect_restore(e, el, PK_E_CHECKPOINT, "factor count one more than the lines");
    free(e);
    free(text);
}

/* A finished job of n to bound 10, checkpointed; its status line edited to each status in turn. */
static void expect_status_edits(const char *n, int concluded, const char *what)
{
    pk_options o;
    pk_options_init(&o);
    o.bound = "10";
    pk_job *job = NULL;
    if (pk_job_create(n, &o, &job) != PK_OK) {
        PKT_CHECK(0, "%s: create", what);
        return;
    }
    int st;
    while ((st = pk_job_step(job, 1u << 20)) == PK_MORE)
        ;
    PKT_CHECK_STATUS(st, PK_DONE, what);
    size_t len = 0;
    char *text = pkt_checkpoint(job, &len);
    pk_job_destroy(job);
    if (!text) return;
    char status[8] = "";
    field_of(text, len, "status", status, sizeof status);
    PKT_CHECK(atoi(status) == concluded, "%s: the job concluded status %s, want %d", what, status, concluded);
    for (int s = PK_COFACTOR_ONE; s <= PK_COFACTOR_UNKNOWN; s++) {
        char value[8], label[160];
        snprintf(value, sizeof value, "%d", s);
        snprintf(label, sizeof label, "%s, status edited to %d", what, s);
        size_t el = 0;
        char *e = edit(text, len, "status", value, &el);
        expect_restore(e, el, s == concluded ? PK_OK : PK_E_CHECKPOINT_STATE, label);
        free(e);
    }
    free(text);
}

void test_checkpoint_status_must_be_the_one_the_job_concluded(void)
{
    pkt_say("checks: an unfinished checkpoint restores only with status 0; a finished one only with the status its "
            "end concluded from the same state (composite, probable prime): a composite cofactor claimed probable "
            "prime, or a probable prime claimed composite, is PK_E_CHECKPOINT_STATE");
    size_t len = 0;
    char *text = modest_checkpoint(0, &len);
    if (text) {
        for (int s = PK_COFACTOR_PROBABLE_PRIME; s <= PK_COFACTOR_UNKNOWN; s++) {
            char value[8], label[64];
            snprintf(value, sizeof value, "%d", s);
            snprintf(label, sizeof label, "unfinished with status %d", s);
            size_t el = 0;
            char *e = edit(text, len, "status", value, &el);
            expect_restore(e, el, PK_E_CHECKPOINT_STATE, label);
            free(e);
        }
        free(text);
    }
    /* 2 * 71 * 839: the cofactor 59569 is composite and has no prime below 11. */
    expect_status_edits("119138", PK_COFACTOR_COMPOSITE, "2 * 59569 to bound 10");
    /* 2 * (2^89 - 1): a prime cofactor above 2^64, probable prime by BPSW. */
    expect_status_edits("1237940039285380274899124222", PK_COFACTOR_PROBABLE_PRIME, "2 * (2^89 - 1) to bound 10");
}

void test_large_candidate_round_trip_on_the_gmp_path(void)
{
    unsigned digits = PKT_SIZE(20000u, 10000u);
    pkt_say("checks: a %u-digit candidate with planted factors up to 10^6 (bound 10^6): the answer matches the "
            "oracle, and a run paused every ~1/8 of its work, checkpointed, restored from the text alone and "
            "finished gives the identical answer within 3x the steps; the checkpoint stays a few times the "
            "candidate's size",
            digits);
    pkt_rng rng;
    pkt_rng_for(&rng, "large");
    mpz_t n, p;
    mpz_init(n);
    mpz_init(p);
    pkt_rand_bits(&rng, n, (unsigned)(digits * 3.3219280948873623));
    for (int k = 0; k < 8; k++) {
        mpz_set_ui(p, pkt_rand_range(&rng, 2, 1000000));
        mpz_nextprime(p, p);
        mpz_mul(n, n, p);
        if (k % 3 == 0) mpz_mul(n, n, p);
    }
    rt_case c;
    c.n = mpz_get_str(NULL, 10, n);
    snprintf(c.bound, sizeof c.bound, "1000000");
    pkt_oracle(n, 1000000, 0, NULL, 0, &c.ref, NULL);
    pk_job *job = create_case(&c);
    if (!job) goto out;
    pk_progress pr;
    pkt_progress(job, &pr);
    PKT_CHECK(pr.path == PK_PATH_GMP, "path %d", pr.path);
    /* Measure the whole run's work on a twin job, then pause at ~1/8 steps. */
    pk_job *twin = create_case(&c);
    uint64_t total = 0;
    if (twin) {
        PKT_CHECK_STATUS(pkt_run(twin, UINT64_MAX, 4), PK_DONE, "twin run");
        pk_progress tp;
        pkt_progress(twin, &tp);
        total = tp.work_done;
        compare_final(twin, &c, "uninterrupted large candidate");
        pk_job_destroy(twin);
    }
    unsigned restored = 0, steps = 0;
    size_t max_text = 0;
    int st;
    do {
        st = pk_job_step(job, total / 8 + 1);
        steps++;
        if (st == PK_MORE) {
            size_t len = 0;
            char *t = pkt_checkpoint(job, &len);
            if (len > max_text) max_text = len;
            free(t);
            job = checkpoint_and_restore(job, &rng, &restored);
        }
    } while (st == PK_MORE && steps < 24);
    PKT_CHECK_STATUS(st, PK_DONE, "paused run");
    if (st == PK_DONE) compare_final(job, &c, "paused and restored large candidate");
    /* Candidate, cofactor and at most a cofactor-sized accumulator: a few times the candidate. */
    PKT_CHECK(max_text < strlen(c.n) * 4 + 4096, "checkpoint text of %zu bytes for a %zu-digit candidate", max_text,
              strlen(c.n));
    pkt_say("%u steps, %u checkpoint/restore round trips, largest checkpoint %zu bytes", steps, restored, max_text);
    report_percent_back(restored);
    pk_job_destroy(job);
out:
    free(c.n);
    pkt_answer_free(&c.ref);
    mpz_clear(n);
    mpz_clear(p);
}
