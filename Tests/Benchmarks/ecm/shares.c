/*
 * shares.c — the kernel's side of Tests/Benchmarks/ecm/run.sh: one complete job (ecm_digits 30) stepped to its
 * ECM stage, then either stepped alone until its ECM pass is over ("alone"), or cut into one share per thread
 * (pk_job_ecm_share), each stepped on its own thread until one finds a factor, the others interrupted, and merged
 * (pk_job_ecm_merge) and stepped to the end ("shares"). Prints the wall seconds of that part and the answer.
 *
 *   shares N alone|shares [THREADS]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "primekit.h"

#define BUDGET (UINT64_C(1) << 22)

typedef struct run {
    pk_job *share;
    pk_job **all;
    unsigned count;
    int status;
} run;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *step_share(void *arg)
{
    run *r = arg;
    for (;;) {
        int st = pk_job_step(r->share, BUDGET);
        if (st == PK_DONE) {
            int found = 0;
            pk_job_ecm_share_info(r->share, NULL, NULL, &found);
            if (found)
                for (unsigned i = 0; i < r->count; i++)
                    pk_job_interrupt(r->all[i]);
            r->status = st;
            return NULL;
        }
        if (st != PK_MORE) {
            r->status = st;
            return NULL;
        }
    }
}

static int in_ecm(const pk_job *job)
{
    pk_progress p;
    p.size = sizeof p;
    return pk_job_progress(job, &p) == PK_OK && p.stage && strcmp(p.stage, "ecm") == 0;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    unsigned threads = argc > 3 ? (unsigned)atoi(argv[3]) : 2;
    if (threads < 2 || threads > 64)
        return 2;
    pk_options o;
    pk_options_init(&o);
    o.ecm_digits = 30;
    pk_job *job = NULL;
    if (pk_job_create(argv[1], &o, &job) != PK_OK)
        return 1;
    while (!in_ecm(job))
        if (pk_job_step(job, BUDGET) == PK_DONE)
            return 1;
    double t0 = now();
    if (strcmp(argv[2], "alone") == 0) {
        while (pk_job_step(job, BUDGET) != PK_DONE)
            ;
    } else {
        for (;;) {
            if (!in_ecm(job)) {
                if (pk_job_step(job, BUDGET) == PK_DONE)
                    break;
                continue;
            }
            pk_job *shares[64];
            run runs[64];
            pthread_t th[64];
            for (unsigned i = 0; i < threads; i++)
                if (pk_job_ecm_share(job, i, threads, &shares[i]) != PK_OK)
                    return 1;
            for (unsigned i = 0; i < threads; i++) {
                runs[i] = (run){shares[i], shares, threads, 0};
                pthread_create(&th[i], NULL, step_share, &runs[i]);
            }
            for (unsigned i = 0; i < threads; i++)
                pthread_join(th[i], NULL);
            pk_job *merged = NULL;
            if (pk_job_ecm_merge(shares, threads, &merged) != PK_OK)
                return 1;
            for (unsigned i = 0; i < threads; i++)
                pk_job_destroy(shares[i]);
            pk_job_destroy(job);
            job = merged;
            if (pk_job_step(job, BUDGET) == PK_DONE)
                break;
        }
    }
    double t = now() - t0;
    printf("%.4f", t);
    pk_result r;
    r.size = sizeof r;
    pk_job_result(job, &r);
    for (size_t i = 0; i < r.factor_count; i++) {
        char buf[256];
        uint64_t e;
        pk_job_factor(job, i, buf, sizeof buf, NULL, &e);
        printf(" %s^%llu", buf, (unsigned long long)e);
    }
    printf("\n");
    pk_job_destroy(job);
    return 0;
}
