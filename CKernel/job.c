/*
 * job.c — the public job API: create, destroy, interrupt, conclude, the step
 * loop and progress. The step loop drives the units in one direction: trial
 * division (trial/) first, then the pipeline of a complete job
 * (job/pipeline.c); both work on the job's core (job/core.c).
 */
#include <stdlib.h>
#include <string.h>

#include "pk_internal.h"
#include "job/pipeline.h"
#include "trial/trial.h"

void pk_job_destroy(pk_job *job)
{
    if (!job)
        return;
    for (size_t i = 0; i < job->factor_count; i++)
        mpz_clear(job->factors[i].prime);
    free(job->factors);
    free(job->n_text);
    free(job->ckpt_text);
    mpz_clear(job->n);
    mpz_clear(job->cof);
    pk_tdgmp_release(job);
    pk_pipe_free(job->pipe);
    pk_sieve_free(&job->sieve);
    free(job);
}

void pk_job_interrupt(pk_job *job)
{
    if (job)
        atomic_store_explicit(&job->interrupt, 1, memory_order_release);
}

int pk_job_conclude(pk_job *job)
{
    if (!job)
        return PK_E_ARG;
    if (job->mode != PK_MODE_COMPLETE)
        return PK_E_OPTIONS; /* the mode is fixed when the job is made */
    atomic_store_explicit(&job->conclude, 1, memory_order_release);
    return PK_OK;
}

void pk_job_update_percent(pk_job *job)
{
    double p;
    if (job->done) {
        p = 100.0;
    } else if (job->next > job->eff_bound) {
        p = 99.999;
    } else {
        uint64_t at = job->win_open && job->win_pos > job->next ? job->win_pos : job->next;
        double span = (double)(job->eff_bound - job->from) + 1.0;
        p = 100.0 * (double)(at - job->from) / span;
        if (p > 99.999)
            p = 99.999;
    }
    if (job->mode == PK_MODE_COMPLETE && !job->done)
        p = job->pipe ? pk_pipe_percent(job) : p * 0.1; /* trial division: the first tenth */
    if (p > job->percent)
        job->percent = p;
}

static int configure(pk_job *job, const char *candidate, const pk_options *o)
{
    size_t len = strlen(candidate);
    if (!pk_is_canonical_decimal(candidate, len))
        return PK_E_PARSE;
    if (len > o->max_digits)
        return PK_E_TOO_LARGE;
    if (len == 1 && candidate[0] < '2')
        return PK_E_RANGE;
    int rc = pk_job_set_candidate(job, candidate, len);
    if (rc != PK_OK)
        return rc;
    mpz_set(job->cof, job->n);

    uint64_t from = 2, bound;
    job->mode = o->from || o->bound ? PK_MODE_TRIAL : o->mode;
    job->ecm_digits = o->ecm_digits;
    job->work_limit = o->work_limit;
    if (o->from) {
        if (pk_parse_u64_saturating(o->from, strlen(o->from), &from) != PK_OK)
            return PK_E_OPTIONS;
        if (from < 2)
            from = 2;
        if (from > PK_BOUND_MAX)
            return PK_E_OPTIONS;
    }
    if (o->bound) {
        if (pk_parse_u64_saturating(o->bound, strlen(o->bound), &bound) != PK_OK)
            return PK_E_OPTIONS;
        if (bound > PK_BOUND_MAX)
            bound = PK_BOUND_MAX;
        if (bound < from)
            return PK_E_OPTIONS;
    } else if (job->mode == PK_MODE_COMPLETE) {
        bound = pk_sqrt_capped(job->n, pk_pipe_trial_bound(mpz_sizeinbase(job->n, 2)));
    } else {
        bound = pk_sqrt_capped(job->n, PK_DEFAULT_BOUND_CAP);
        if (from > 2 && bound < from) /* from above the default bound: an empty range */
            return PK_E_OPTIONS;
    }
    job->from = from;
    job->bound = bound;
    job->next = from;
    job->max_digits = o->max_digits;
    job->bpsw_digits = o->bpsw_digits;
    job->cache = o->cache;
    pk_dispatch_select(o->simd, &job->dispatch);
    pk_job_refresh_bound(job);
    return PK_OK;
}

int pk_job_create(const char *candidate, const pk_options *options, pk_job **out)
{
    if (!out)
        return PK_E_ARG;
    *out = NULL;
    if (!candidate)
        return PK_E_ARG;
    pk_options o;
    int rc = pk_options_resolve(options, &o);
    if (rc != PK_OK)
        return rc;
    pk_job *job = pk_job_alloc();
    if (!job)
        return PK_E_NOMEM;
    rc = configure(job, candidate, &o);
    if (rc != PK_OK) {
        pk_job_destroy(job);
        return rc;
    }
    *out = job;
    return PK_OK;
}

int pk_job_step(pk_job *job, uint64_t budget)
{
    if (!job)
        return PK_E_ARG;
    if (job->done || pk_pipe_share_over(job))
        return PK_DONE;
    job->revision++;
    if (!pk_job_concluding(job) && pk_job_take_interrupt(job))
        return PK_INTERRUPTED;
    uint64_t left = budget;
    for (;;) {
        if (job->pipe) {
            int r = pk_pipe_step(job, &left);
            if (r < 0)
                return r;
            if (job->done || pk_pipe_share_over(job))
                return PK_DONE;
            return r == PK_PATH_INTERRUPT ? PK_INTERRUPTED : PK_MORE;
        }
        if (pk_job_concluding(job)) {
            /* Concluded: trial division ends where it is. An open window's
               range [next, win_pos) was not checked and is not counted. */
            pk_tdgmp_release(job);
            if (mpz_cmp_ui(job->cof, 1) != 0 && !pk_job_trial_proves(job, job->cof)) {
                int rc = pk_pipe_start(job);
                if (rc < 0)
                    return rc;
                continue;
            }
            int rc = pk_job_finish(job);
            return rc < 0 ? rc : PK_DONE;
        }
        if (mpz_cmp_ui(job->cof, 1) == 0 || job->next > job->eff_bound) {
            int rc = pk_tdgmp_check_window(job); /* an open window is checked first */
            if (rc < 0)
                return rc;
            if (rc == PK_PATH_INTERRUPT) {
                if (job->concluded)
                    continue;
                return PK_INTERRUPTED;
            }
            if (mpz_cmp_ui(job->cof, 1) != 0 && job->next <= job->eff_bound)
                continue;
            pk_tdgmp_release(job); /* trial division is over: its scratch is not needed again */
            if (job->mode == PK_MODE_COMPLETE && mpz_cmp_ui(job->cof, 1) != 0 &&
                !pk_job_trial_proves(job, job->cof)) {
                /* The later stages take the cofactor. */
                rc = pk_pipe_start(job);
                if (rc < 0)
                    return rc;
                continue;
            }
            rc = pk_job_finish(job);
            return rc < 0 ? rc : PK_DONE;
        }
        if (left == 0)
            return PK_MORE;
        int r;
        if (mpz_sizeinbase(job->cof, 2) <= 128)
            r = pk_td_word(job, &left);
        else
            r = pk_tdgmp(job, &left);
        pk_job_update_percent(job);
        if (r < 0)
            return r;
        if (r == PK_PATH_INTERRUPT && !job->concluded)
            return PK_INTERRUPTED;
    }
}

int pk_job_progress(const pk_job *job, pk_progress *out)
{
    if (!job || !out || out->size < offsetof(pk_progress, path) + sizeof out->path)
        return PK_E_ARG;
    pk_progress p;
    memset(&p, 0, sizeof p);
    p.size = out->size < sizeof p ? out->size : sizeof p;
    p.percent = job->percent;
    p.next_divisor = job->next;
    p.divisors_tested = job->tested + job->win_tested;
    p.work_done = job->work + job->win_work + pk_pipe_work(job);
    p.factors_found = job->factor_count;
    p.done = job->done;
    size_t bits = mpz_sizeinbase(job->cof, 2);
    p.path = bits <= 64 ? PK_PATH_U64 : bits <= 128 ? PK_PATH_U128 : PK_PATH_GMP;
    if (job->pipe) {
        p.stage = pk_pipe_stage(job, &p);
    } else if (job->done) {
        p.stage = "done";
        p.stage_fraction = 1.0;
    } else {
        p.stage = "trial";
        p.stage_fraction = job->percent / (job->mode == PK_MODE_COMPLETE ? 10.0 : 100.0);
        p.parts_left = 0;
    }
    memcpy(out, &p, p.size);
    return PK_OK;
}
