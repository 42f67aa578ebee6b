/*
 * pkrun.c — running PrimeKit jobs through the public API, timing them, and
 * checking every answer (a benchmark of a wrong answer is worthless, so any
 * mismatch aborts the whole run).
 */
#include "bench.h"

#include <gmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bench_options(pk_options *o, int simd, const char *from, const char *bound)
{
    pk_options_init(o);
    o->mode = PK_MODE_TRIAL; /* these rows time trial division */
    o->simd = simd;
    o->from = from;
    o->bound = bound;
}

void bench_pk_finish(const char *workload, pk_job *job)
{
    for (;;) {
        int st = pk_job_step(job, BENCH_BIG_BUDGET);
        if (st == PK_DONE)
            return;
        if (st != PK_MORE)
            bench_die("%s: pk_job_step returned %d (%s: %s)", workload, st,
                      pk_status_name(st), pk_status_message(st));
    }
}

bench_pk_run bench_pk_timed(const char *workload, const char *candidate,
                            const pk_options *opt, const bench_expect *expect)
{
    bench_pk_run run = {0};
    pk_job *job = NULL;
    pk_progress pg;
    pk_result res;

    double c0 = bench_thread_cpu();
    double t0 = bench_now();
    int st = pk_job_create(candidate, opt, &job);
    if (st != PK_OK)
        bench_die("%s: pk_job_create returned %d (%s)", workload, st, pk_status_name(st));
    /* The path right after create is what this workload exercises (a found
     * factor may move the job to a narrower path later). Reading it costs a
     * struct copy; it stays inside the timed region on purpose. */
    memset(&pg, 0, sizeof pg);
    pg.size = sizeof pg;
    if (pk_job_progress(job, &pg) != PK_OK)
        bench_die("%s: pk_job_progress failed", workload);
    run.path = pg.path;
    bench_pk_finish(workload, job);
    memset(&res, 0, sizeof res);
    res.size = sizeof res;
    st = pk_job_result(job, &res);
    double t1 = bench_now();
    run.cpu = bench_thread_cpu() - c0;
    if (st != PK_OK)
        bench_die("%s: pk_job_result returned %d (%s)", workload, st, pk_status_name(st));

    run.seconds = t1 - t0;
    memset(&pg, 0, sizeof pg);
    pg.size = sizeof pg;
    if (pk_job_progress(job, &pg) != PK_OK)
        bench_die("%s: pk_job_progress failed", workload);
    if (!pg.done || pg.percent != 100.0)
        bench_die("%s: finished job reports done=%d percent=%g", workload, pg.done, pg.percent);
    run.divisors_tested = pg.divisors_tested;

    bench_pk_check(workload, job, candidate, expect);
    pk_job_destroy(job);
    return run;
}

/* Fetches a string through the caller-buffer convention. */
static char *fetch_factor(const char *workload, const pk_job *job, size_t i, uint64_t *exp)
{
    size_t len = 0;
    int st = pk_job_factor(job, i, NULL, 0, &len, exp);
    if (st != PK_E_BUFFER)
        bench_die("%s: pk_job_factor(%zu) size query returned %s", workload, i,
                  pk_status_name(st));
    char *buf = bench_xmalloc(len + 1);
    st = pk_job_factor(job, i, buf, len + 1, &len, exp);
    if (st != PK_OK)
        bench_die("%s: pk_job_factor(%zu) returned %s", workload, i, pk_status_name(st));
    return buf;
}

static char *fetch_cofactor(const char *workload, const pk_job *job)
{
    size_t len = 0;
    int st = pk_job_cofactor(job, NULL, 0, &len);
    if (st != PK_E_BUFFER)
        bench_die("%s: pk_job_cofactor size query returned %s", workload, pk_status_name(st));
    char *buf = bench_xmalloc(len + 1);
    st = pk_job_cofactor(job, buf, len + 1, &len);
    if (st != PK_OK)
        bench_die("%s: pk_job_cofactor returned %s", workload, pk_status_name(st));
    return buf;
}

static const char *short_str(const char *s)
{
    static _Thread_local char pool[2][64];
    static _Thread_local unsigned turn;
    char *b = pool[turn++ % 2];
    size_t n = strlen(s);
    if (n <= 40)
        return s;
    snprintf(b, sizeof pool[0], "%.12s...%.12s (%zu digits)", s, s + n - 12, n);
    return b;
}

void bench_pk_check(const char *workload, const pk_job *job, const char *candidate,
                    const bench_expect *ex)
{
    pk_result r;
    memset(&r, 0, sizeof r);
    r.size = sizeof r;
    int st = pk_job_result(job, &r);
    if (st != PK_OK)
        bench_die("%s: pk_job_result returned %s", workload, pk_status_name(st));

    if (r.is_prime != ex->is_prime)
        bench_die("%s: WRONG ANSWER: is_prime=%d, expected %d", workload, r.is_prime,
                  ex->is_prime);
    if (r.cofactor_status != ex->cofactor_status)
        bench_die("%s: WRONG ANSWER: cofactor_status=%d, expected %d", workload,
                  r.cofactor_status, ex->cofactor_status);
    int want_complete = ex->cofactor_status == PK_COFACTOR_ONE ||
                        ex->cofactor_status == PK_COFACTOR_PROBABLE_PRIME;
    if (r.complete != want_complete)
        bench_die("%s: WRONG ANSWER: complete=%d, expected %d", workload, r.complete,
                  want_complete);
    if (r.factor_count != ex->factor_count)
        bench_die("%s: WRONG ANSWER: %zu factors, expected %zu", workload, r.factor_count,
                  ex->factor_count);

    mpz_t prod, t, n;
    mpz_inits(prod, t, n, NULL);
    mpz_set_ui(prod, 1);
    for (size_t i = 0; i < r.factor_count; i++) {
        uint64_t e = 0;
        char *f = fetch_factor(workload, job, i, &e);
        if (strcmp(f, ex->factors[i]) != 0 || e != 1)
            bench_die("%s: WRONG ANSWER: factor %zu is %s^%llu, expected %s^1", workload, i,
                      short_str(f), (unsigned long long)e, short_str(ex->factors[i]));
        mpz_set_str(t, f, 10);
        mpz_pow_ui(t, t, (unsigned long)e);
        mpz_mul(prod, prod, t);
        free(f);
    }
    char *c = fetch_cofactor(workload, job);
    if (strcmp(c, ex->cofactor) != 0)
        bench_die("%s: WRONG ANSWER: cofactor %s, expected %s", workload, short_str(c),
                  short_str(ex->cofactor));
    if (r.cofactor_digits != strlen(c))
        bench_die("%s: cofactor_digits=%zu but the cofactor has %zu digits", workload,
                  r.cofactor_digits, strlen(c));
    mpz_set_str(t, c, 10);
    mpz_mul(prod, prod, t);
    mpz_set_str(n, candidate, 10);
    if (mpz_cmp(prod, n) != 0)
        bench_die("%s: WRONG ANSWER: factors x cofactor != candidate", workload);
    int want_certainty = ex->cofactor_status == PK_COFACTOR_PROBABLE_PRIME
                             ? PK_CERTAINTY_PROBABLE : PK_CERTAINTY_PROVEN;
    for (size_t i = 0; i < ex->factor_count; i++) { /* a complete job lists primes above 2^64 as probable */
        mpz_set_str(t, ex->factors[i], 10);
        if (mpz_sizeinbase(t, 2) > 64)
            want_certainty = PK_CERTAINTY_PROBABLE;
    }
    if (r.certainty != want_certainty)
        bench_die("%s: WRONG ANSWER: certainty=%d, expected %d", workload, r.certainty,
                  want_certainty);
    free(c);
    mpz_clears(prod, t, n, NULL);
}
