/*
 * test_threads.c — jobs stepped on several threads at once. The kernel keeps
 * no state of its own between jobs, but the libraries it calls may: these
 * tests run the stages that call them on two threads together and check
 * that every answer is the one a job alone gives.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkt.h"

typedef struct ecm_run {
    const char *n;
    unsigned ecm_digits; /* effort limit (0: none) */
    atomic_int *go;      /* both threads start together */
    int status;          /* last pk_job_step status */
    pkt_answer answer;
} ecm_run;

static void *run_job(void *arg)
{
    ecm_run *r = arg;
    pk_options options;
    pk_options_init(&options);
    options.ecm_digits = r->ecm_digits;
    pk_job *job = NULL;
    r->status = pk_job_create(r->n, &options, &job);
    while (!atomic_load(r->go))
        ; /* wait for the other thread without sleeping */
    if (r->status != PK_OK)
        return NULL;
    /* Small budgets: many GMP-ECM stage-2 calls of the two jobs overlap. */
    do
        r->status = pk_job_step(job, (uint64_t)1 << 16);
    while (r->status == PK_MORE);
    if (r->status == PK_DONE)
        r->status = pkt_answer_read(job, &r->answer);
    pk_job_destroy(job);
    return NULL;
}

void test_ecm_stage_two_on_two_threads_at_once(void)
{
    pkt_say("checks: two complete jobs in ECM above 128 bits (2^128 + 1, a Fermat number, and a 79-digit "
            "semiprime with an effort limit of 15 digits) stepped on two threads at once, three times, give "
            "the answers of jobs run alone: the library's stage 2 keeps state of its own that two threads "
            "must not share");
    static const char *const fermat = "340282366920938463463374607431768211457";
    static const char *const semiprime =
        "6415960117443171388947750943700426140790669549014874900828615524789118288355107";
    mpz_t n;
    mpz_init(n);
    for (int round = 0; round < PKT_SIZE(3, 1); round++) {
        atomic_int go;
        atomic_init(&go, 0);
        ecm_run runs[2] = {{fermat, 0, &go, 0, {0}}, {semiprime, 15, &go, 0, {0}}};
        pthread_t threads[2];
        for (int k = 0; k < 2; k++) {
            pkt_answer_init(&runs[k].answer);
            PKT_CHECK(pthread_create(&threads[k], NULL, run_job, &runs[k]) == 0, "pthread_create");
        }
        atomic_store(&go, 1);
        for (int k = 0; k < 2; k++)
            pthread_join(threads[k], NULL);
        for (int k = 0; k < 2; k++) {
            PKT_CHECK_STATUS(runs[k].status, PK_OK, runs[k].n);
            mpz_set_str(n, runs[k].n, 10);
            pkt_check_answer_facts(n, &runs[k].answer, runs[k].n);
        }
        /* 2^128 + 1 = 59649589127497217 * 5704689200685129054721, found by ECM. */
        PKT_CHECK(runs[0].answer.nfactors == 2 && strcmp(runs[0].answer.factors[0], "59649589127497217") == 0
                      && strcmp(runs[0].answer.factors[1], "5704689200685129054721") == 0,
                  "round %d: 2^128 + 1 was not factored completely", round);
        /* The semiprime's factors have about 40 digits: level 15 leaves it whole. */
        PKT_CHECK(runs[1].answer.nfactors == 0 && strcmp(runs[1].answer.cofactor, semiprime) == 0,
                  "round %d: the 79-digit semiprime was not left whole at the effort limit", round);
        for (int k = 0; k < 2; k++)
            pkt_answer_free(&runs[k].answer);
    }
    mpz_clear(n);
}
