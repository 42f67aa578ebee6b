/*
 * complete.c — complete factorization rows of pk-bench: default (complete)
 * jobs on a 60-digit number with a 20-digit factor, on four 60-63 digit
 * numbers with a 22-digit factor and on 10 balanced 160-bit semiprimes, the
 * interrupt latency while ECM runs, and checkpoint +
 * restore + finish against an uninterrupted run (same-run alternating pairs,
 * medians). PARI/GP's times for the same numbers are measured by hand and
 * kept in RESULTS.md: the benchmark does not need PARI.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gmp.h>

#include "bench.h"

/* p20 * p40, and ten products of two random 80-bit primes (PARI/GP, setrand(160)). */
#define C60 "19089646418076700638093652483960256172813760522736775650563"
static const char *const c60_factors[] = {"10813529981841569911", "1765348267414309086364365829377183608533"};
static const char *const semi160[] = {
    "662220955604450545210333394672345716449860024509", "832532511854548572189187000177313197121588460827",
    "806943643448852908206513114632508045232287972391", "706539308711031276351185687809408832308739789651",
    "1180430673897778676760266444363353249784629764253", "694232972822844745126474996286277762962021846509",
    "825519339254435470384109503946139030131746774097", "613628349602982425090209250576193724139082606443",
    "992538904839550918951789643226070946536601607313", "904433963952194645778372910716157053926416130501",
};

/* p22 * p39-41 (GMP's mpz_nextprime on seeded random values; RESULTS.md,
   2026-11-26 22:00): ECM finds the 22-digit prime in the curves of the
   B1 = 50,000 level that run before the quadratic sieve from 55 digits. */
static const char *const c62[] = {
    "79757798689962737181209938985907891074440747059501042682871389",
    "657968613974507798177804902596817351620023075518387141903424351",
    "18193568798657493834829036825596895921287806262865932082239919",
    "1695273892701853422092875231634529110758515946798654968595043",
};

/* Steps a complete job to the end; checks that its answer multiplies back to
   n with two or more prime factors and cofactor 1. Returns the job (finished). */
static pk_job *run_complete(const char *what, const char *n, uint64_t budget, int checkpoint_every)
{
    pk_options o;
    pk_options_init(&o);
    pk_job *job = NULL;
    int st = pk_job_create(n, &o, &job);
    if (st != PK_OK)
        bench_die("%s: pk_job_create returned %s", what, pk_status_name(st));
    for (int steps = 1;; steps++) {
        st = pk_job_step(job, budget);
        if (st == PK_DONE)
            break;
        if (st != PK_MORE)
            bench_die("%s: pk_job_step returned %s", what, pk_status_name(st));
        if (checkpoint_every && steps % checkpoint_every == 0) {
            size_t len = 0;
            pk_job_checkpoint(job, NULL, 0, &len);
            char *text = bench_xmalloc(len + 1);
            if (pk_job_checkpoint(job, text, len + 1, NULL) != PK_OK)
                bench_die("%s: checkpoint failed", what);
            pk_job_destroy(job);
            job = NULL;
            st = pk_job_restore(text, len, &o, &job);
            free(text);
            if (st != PK_OK)
                bench_die("%s: restore returned %s", what, pk_status_name(st));
        }
    }
    pk_result r;
    memset(&r, 0, sizeof r);
    r.size = sizeof r;
    pk_job_result(job, &r);
    mpz_t prod, p, want;
    mpz_inits(prod, p, want, NULL);
    mpz_set_ui(prod, 1);
    mpz_set_str(want, n, 10);
    for (size_t i = 0; i < r.factor_count; i++) {
        char buf[256];
        uint64_t e;
        pk_job_factor(job, i, buf, sizeof buf, NULL, &e);
        mpz_set_str(p, buf, 10);
        if (!mpz_probab_prime_p(p, 25))
            bench_die("%s: listed factor %s is not prime", what, buf);
        mpz_pow_ui(p, p, e);
        mpz_mul(prod, prod, p);
    }
    if (!r.complete || mpz_cmp(prod, want) != 0 || r.factor_count < 2)
        bench_die("%s: the answer is not a complete factorization of %s", what, n);
    mpz_clears(prod, p, want, NULL);
    return job;
}

static double timed(const char *what, const char *n, uint64_t budget, int checkpoint_every, double *cpu)
{
    double c0 = bench_thread_cpu(), t0 = bench_now();
    pk_job *job = run_complete(what, n, budget, checkpoint_every);
    double t = bench_now() - t0;
    *cpu = bench_thread_cpu() - c0;
    pk_job_destroy(job);
    return t;
}

void bench_complete(int quick, uint64_t seed)
{
    int runs = quick ? 3 : 5;
    double t[16], c[16];
    printf("\nComplete factorization (default jobs, budget 2^22 a step):\n");
    printf("  %-44s %10s %10s  %s\n", "workload", "median s", "cpu s", "notes");

    for (int i = 0; i < runs; i++)
        t[i] = timed("C60", C60, (uint64_t)1 << 22, 0, &c[i]);
    printf("  %-44s %10.3f %10.3f  %d runs; PARI/GP: see RESULTS.md\n", "60 digits with a 20-digit factor",
           bench_median(t, (size_t)runs), bench_median(c, (size_t)runs), runs);
    fflush(stdout);

    size_t nsemi = quick ? 2 : 10;
    double each[10], each_cpu[10], total = 0;
    for (size_t i = 0; i < nsemi; i++) {
        each[i] = timed("S160", semi160[i], (uint64_t)1 << 22, 0, &each_cpu[i]);
        total += each[i];
    }
    printf("  %-44s %10.3f %10.3f  %zu numbers, %.2f s in all\n", "balanced 160-bit semiprime (each)",
           bench_median(each, nsemi), bench_median(each_cpu, nsemi), nsemi, total);
    fflush(stdout);

    size_t n62 = sizeof c62 / sizeof c62[0];
    double t62[4], c62cpu[4];
    for (size_t i = 0; i < n62; i++)
        t62[i] = timed("C62", c62[i], (uint64_t)1 << 22, 0, &c62cpu[i]);
    printf("  %-44s %10.3f %10.3f  %zu numbers; PARI/GP: see RESULTS.md\n", "60-63 digits with a 22-digit factor (each)",
           bench_median(t62, n62), bench_median(c62cpu, n62), n62);
    fflush(stdout);

    /* Checkpoint + restore after every step vs uninterrupted, alternating. */
    double ratio[16], plain[16], ck[16];
    for (int i = 0; i < runs; i++) {
        double cp;
        plain[i] = timed("C60 plain", C60, (uint64_t)1 << 22, 0, &cp);
        ck[i] = timed("C60 checkpointed", C60, (uint64_t)1 << 22, 1, &cp);
        ratio[i] = ck[i] / plain[i];
    }
    printf("  %-44s %10.3f %10s  uninterrupted %.3f s; ratio (median of pairs) %.4f; identical answers\n",
           "C60 checkpoint+restore after every step", bench_median(ck, (size_t)runs), "-",
           bench_median(plain, (size_t)runs), bench_median(ratio, (size_t)runs));
    fflush(stdout);

    /* Interrupt latency while ECM runs (the 60-digit number spends nearly all
       its time there). */
    pk_options o;
    pk_options_init(&o);
    bench_expect ex = {PK_PRIME_NO, 2, c60_factors, "1", PK_COFACTOR_ONE};
    bench_latency l = bench_interrupt_latency("C60 latency", C60, &o, &ex, quick ? 200 : 500, 1e-3, 20e-3,
                                              quick ? 10.0 : 30.0, seed);
    printf("  %-44s %10s %10s  %zu samples: median %.0f us, p99 %.0f us, worst %.0f us (cpu median %.0f, p99 "
           "%.0f us); %zu jobs finished\n",
           "interrupt latency in ECM (200 bits)", "-", "-", l.samples, l.median_s * 1e6, l.p99_s * 1e6,
           l.worst_s * 1e6, l.cpu_median_s * 1e6, l.cpu_p99_s * 1e6, l.finished);
    fflush(stdout);

    /* The same for a 128-bit semiprime: its one part is split by the word-size unit. */
    static const char *const w128_factors[] = {"10559746080387105187", "14288008463285552441"};
    bench_expect wex = {PK_PRIME_NO, 2, w128_factors, "1", PK_COFACTOR_ONE};
    l = bench_interrupt_latency("W128 split latency", "150877741366717398497521917692071611467", &o, &wex,
                                quick ? 200 : 500, 50e-6, 2e-3, quick ? 10.0 : 30.0, seed + 1);
    printf("  %-44s %10s %10s  %zu samples: median %.0f us, p99 %.0f us, worst %.0f us (cpu median %.0f, p99 "
           "%.0f us); %zu jobs finished\n",
           "interrupt latency in a word-size split (128 b)", "-", "-", l.samples, l.median_s * 1e6,
           l.p99_s * 1e6, l.worst_s * 1e6, l.cpu_median_s * 1e6, l.cpu_p99_s * 1e6, l.finished);
    fflush(stdout);
}
