/*
 * latency.c — interrupt latency: how long after pk_job_interrupt() does a
 * running pk_job_step() return?
 *
 * The main thread runs one step with a huge budget; a second thread sleeps a
 * pseudo-random delay, reads the main thread's CPU clock (c0) and
 * CLOCK_MONOTONIC (t0) and calls pk_job_interrupt; the main thread reads both
 * clocks as soon as the step returns (t1, c1). The wall sample is t1 - t0;
 * the CPU sample c1 - c0 is the work the stepping thread did before it
 * returned, which a busy machine cannot inflate by descheduling it. The mutex
 * and condition variable only hand over the job and the clock readings
 * between samples; neither is on the measured path.
 */
#include "bench.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include <unistd.h>

/* Reading another thread's CPU clock needs pthread_getcpuclockid (POSIX
 * thread CPU-time clocks); without it only wall latency is reported. */
#if defined(_POSIX_THREAD_CPUTIME) && _POSIX_THREAD_CPUTIME >= 0
#define HAVE_THREAD_CPU_CLOCK 1
#else
#define HAVE_THREAD_CPU_CLOCK 0
#endif

typedef struct lat_shared {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pk_job *job;          /* the job the next interrupt goes to */
    int armed;            /* main -> interrupter: a step is about to start */
    int fired;            /* interrupter -> main: the interrupt was sent, t0 set */
    int quit;
    uint64_t t0_ns;
    double c0;            /* the main thread's CPU time at the interrupt */
#if HAVE_THREAD_CPU_CLOCK
    clockid_t main_cpu;   /* the main thread's CPU-time clock */
#endif
    uint64_t lo_ns, hi_ns, rng;
} lat_shared;

static void *interrupter(void *arg)
{
    lat_shared *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->armed && !s->quit)
            pthread_cond_wait(&s->cv, &s->mu);
        if (s->quit)
            break;
        s->armed = 0;
        pk_job *job = s->job;
        uint64_t delay = s->lo_ns + bench_rng(&s->rng) % (s->hi_ns - s->lo_ns + 1);
        pthread_mutex_unlock(&s->mu);

        bench_sleep_ns(delay);
        struct timespec c = {0, 0};
#if HAVE_THREAD_CPU_CLOCK
        if (clock_gettime(s->main_cpu, &c) != 0)
            c.tv_sec = 0, c.tv_nsec = 0;
#endif
        uint64_t t0 = bench_now_ns();
        pk_job_interrupt(job);

        pthread_mutex_lock(&s->mu);
        s->t0_ns = t0;
        s->c0 = (double)c.tv_sec + (double)c.tv_nsec * 1e-9;
        s->fired = 1;
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

bench_latency bench_interrupt_latency(const char *workload, const char *candidate,
                                      const pk_options *opt, const bench_expect *expect,
                                      size_t want, double min_delay, double max_delay,
                                      double time_cap, uint64_t seed)
{
    bench_latency out;
    memset(&out, 0, sizeof out);
    double *lat = bench_xmalloc(want * sizeof *lat);
    double *cpu = bench_xmalloc(want * sizeof *cpu);

    lat_shared s;
    memset(&s, 0, sizeof s);
    pthread_mutex_init(&s.mu, NULL);
    pthread_cond_init(&s.cv, NULL);
    s.lo_ns = (uint64_t)(min_delay * 1e9);
    s.hi_ns = (uint64_t)(max_delay * 1e9);
    if (s.hi_ns < s.lo_ns)
        s.hi_ns = s.lo_ns;
    s.rng = seed;
#if HAVE_THREAD_CPU_CLOCK
    if (pthread_getcpuclockid(pthread_self(), &s.main_cpu) != 0)
        bench_die("%s: pthread_getcpuclockid failed", workload);
#endif

    pthread_t th;
    if (pthread_create(&th, NULL, interrupter, &s) != 0)
        bench_die("%s: pthread_create failed", workload);

    pk_job *job = NULL;
    double start = bench_now();
    while (out.samples < want && bench_now() - start < time_cap) {
        if (job == NULL) {
            int st = pk_job_create(candidate, opt, &job);
            if (st != PK_OK)
                bench_die("%s: pk_job_create returned %s", workload, pk_status_name(st));
            pk_progress pg;
            memset(&pg, 0, sizeof pg);
            pg.size = sizeof pg;
            if (pk_job_progress(job, &pg) != PK_OK)
                bench_die("%s: pk_job_progress failed", workload);
            out.path = pg.path;
        }

        pthread_mutex_lock(&s.mu);
        s.job = job;
        s.fired = 0;
        s.armed = 1;
        pthread_cond_broadcast(&s.cv);
        pthread_mutex_unlock(&s.mu);

        int st;
        do
            st = pk_job_step(job, BENCH_BIG_BUDGET);
        while (st == PK_MORE);
        uint64_t t1 = bench_now_ns();
        double c1 = bench_thread_cpu();

        pthread_mutex_lock(&s.mu);
        while (!s.fired)
            pthread_cond_wait(&s.cv, &s.mu);
        uint64_t t0 = s.t0_ns;
        double c0 = s.c0;
        pthread_mutex_unlock(&s.mu);

        if (st != PK_INTERRUPTED && st != PK_DONE)
            bench_die("%s: pk_job_step returned %d (%s)", workload, st, pk_status_name(st));
        if (st == PK_INTERRUPTED && t1 < t0)
            bench_die("%s: the step returned PK_INTERRUPTED before the interrupt", workload);
        if (t0 <= t1) {
            /* The step returned t1 - t0 after the request: interrupted, or
             * done with its last piece of work (which it could not cut). */
            lat[out.samples] = (double)(t1 - t0) * 1e-9;
            cpu[out.samples] = c1 > c0 ? c1 - c0 : 0.0;
            out.samples++;
        } else {
            out.missed++;   /* the job finished before the interrupt was sent */
        }
        if (st == PK_DONE) {
            /* The job went through many interrupted steps, so its answer is
             * also a resume test. */
            out.finished++;
            bench_pk_check(workload, job, candidate, expect);
            pk_job_destroy(job);
            job = NULL;
        }
    }

    pthread_mutex_lock(&s.mu);
    s.quit = 1;
    pthread_cond_broadcast(&s.cv);
    pthread_mutex_unlock(&s.mu);
    pthread_join(th, NULL);
    pk_job_destroy(job);
    pthread_mutex_destroy(&s.mu);
    pthread_cond_destroy(&s.cv);

    out.median_s = bench_median(lat, out.samples);
    out.p99_s = bench_quantile(lat, out.samples, 0.99);
    out.worst_s = bench_max(lat, out.samples);
    out.cpu_median_s = out.cpu_p99_s = out.cpu_worst_s = NAN;
    if (HAVE_THREAD_CPU_CLOCK) {
        out.cpu_median_s = bench_median(cpu, out.samples);
        out.cpu_p99_s = bench_quantile(cpu, out.samples, 0.99);
        out.cpu_worst_s = bench_max(cpu, out.samples);
    }
    free(lat);
    free(cpu);
    return out;
}
