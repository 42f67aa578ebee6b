/*
 * test_cache.c — a pk_cache shared by jobs (also on different threads at the
 * same time) never changes an answer.
 */
#define _POSIX_C_SOURCE 200809L
#include "pkt.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCAND 4

typedef struct cache_run {
    char **cands;
    const char *bound;
    pk_cache *cache;
    pkt_answer got[NCAND];
    int status[NCAND];
    int first, step; /* which candidates this run handles */
} cache_run;

static void *run_jobs(void *p)
{
    cache_run *r = p;
    for (int i = r->first; i < NCAND; i += r->step) {
        pk_options o;
        pk_options_init(&o);
        o.bound = r->bound;
        o.cache = r->cache;
        pk_job *job = NULL;
        pkt_answer_init(&r->got[i]);
        r->status[i] = pk_job_create(r->cands[i], &o, &job);
        if (r->status[i] != PK_OK) continue;
        /* Slices, as a worker would run them. */
        int st;
        do st = pk_job_step(job, 1u << 20);
        while (st == PK_MORE);
        r->status[i] = st == PK_DONE ? pkt_answer_read(job, &r->got[i]) : st;
        pk_job_destroy(job);
    }
    return NULL;
}

static void compare_run(cache_run *r, const pkt_answer *want, const char *how)
{
    for (int i = 0; i < NCAND; i++) {
        PKT_CHECK_STATUS(r->status[i], PK_OK, how);
        if (r->status[i] != PK_OK) continue;
        char why[300];
        PKT_CHECK(pkt_answer_equal(&r->got[i], &want[i], why, sizeof why), "%s: candidate %d (%zu digits): %s",
                  how, i, strlen(r->cands[i]), why);
    }
}

static void clear_run(cache_run *r)
{
    for (int i = 0; i < NCAND; i++) pkt_answer_free(&r->got[i]);
}

void test_cache_shared_by_jobs_and_threads_changes_no_answer(void)
{
    pkt_say("checks: pk_cache_create/destroy arguments; %d GMP-path candidates (2100..3200 digits, bound 10^6) "
            "give the oracle's answer without a cache, with a shared cache (cold, then warm), with a cache too "
            "small to keep anything, and from two threads stepping jobs on one cache at the same time",
            NCAND);
    pk_cache *cache = NULL;
    PKT_CHECK_STATUS(pk_cache_create(0, NULL), PK_E_ARG, "pk_cache_create(out = NULL)");
    pk_cache_destroy(NULL);

    pkt_rng rng;
    pkt_rng_for(&rng, "cache");
    char *cands[NCAND];
    pkt_answer want[NCAND];
    mpz_t n, p;
    mpz_init(n);
    mpz_init(p);
    const char *bound = "1000000";
    for (int i = 0; i < NCAND; i++) {
        unsigned digits = 2100 + 350 * (unsigned)i;
        pkt_rand_bits(&rng, n, (unsigned)(digits * 3.3219280948873623));
        /* Planted factors spread over the range. */
        for (int k = 0; k < 6; k++) {
            mpz_set_ui(p, pkt_rand_range(&rng, 2, 1000000));
            mpz_nextprime(p, p);
            mpz_mul(n, n, p);
        }
        cands[i] = mpz_get_str(NULL, 10, n);
        pkt_oracle(n, 1000000, 0, NULL, 0, &want[i], NULL);
    }
    mpz_clear(n);
    mpz_clear(p);

    cache_run r = {.cands = cands, .bound = bound, .cache = NULL, .first = 0, .step = 1};
    run_jobs(&r);
    compare_run(&r, want, "no cache");
    clear_run(&r);

    PKT_CHECK_STATUS(pk_cache_create(0, &cache), PK_OK, "pk_cache_create(0)");
    if (cache) {
        r.cache = cache;
        run_jobs(&r);
        compare_run(&r, want, "cold shared cache");
        clear_run(&r);
        run_jobs(&r);
        compare_run(&r, want, "warm shared cache");
        clear_run(&r);
        pk_cache_destroy(cache);
    }

    cache = NULL;
    PKT_CHECK_STATUS(pk_cache_create(1, &cache), PK_OK, "pk_cache_create(1 byte)");
    if (cache) {
        r.cache = cache;
        run_jobs(&r);
        compare_run(&r, want, "cache of 1 byte");
        clear_run(&r);
        pk_cache_destroy(cache);
    }

    /* Two threads, one cache, jobs running at the same time. */
    cache = NULL;
    PKT_CHECK_STATUS(pk_cache_create(0, &cache), PK_OK, "pk_cache_create for threads");
    if (cache) {
        cache_run a = {.cands = cands, .bound = bound, .cache = cache, .first = 0, .step = 2};
        cache_run b = {.cands = cands, .bound = bound, .cache = cache, .first = 1, .step = 2};
        cache_run c = {.cands = cands, .bound = bound, .cache = cache, .first = 0, .step = 1};
        pthread_t ta, tb;
        pthread_create(&ta, NULL, run_jobs, &a);
        pthread_create(&tb, NULL, run_jobs, &b);
        run_jobs(&c); /* the main thread runs all four meanwhile */
        pthread_join(ta, NULL);
        pthread_join(tb, NULL);
        for (int i = 0; i < NCAND; i++) {
            cache_run *own = (i % 2 == 0) ? &a : &b;
            PKT_CHECK_STATUS(own->status[i], PK_OK, "threaded job");
            char why[300];
            if (own->status[i] == PK_OK)
                PKT_CHECK(pkt_answer_equal(&own->got[i], &want[i], why, sizeof why), "thread, candidate %d: %s", i,
                          why);
        }
        compare_run(&c, want, "main thread alongside two others");
        clear_run(&a);
        clear_run(&b);
        clear_run(&c);
        pk_cache_destroy(cache);
    }
    for (int i = 0; i < NCAND; i++) {
        free(cands[i]);
        pkt_answer_free(&want[i]);
    }
}
