/*
 * job/pipeline.h — the stages of a complete job after trial division
 * (private). See job/pipeline.c and docs/kernel.md.
 */
#ifndef PK_JOB_PIPELINE_H
#define PK_JOB_PIPELINE_H

#include "pk_internal.h"
#include "job/codec.h"

/* Trial-division bound of a complete job for a candidate of `bits` bits. */
uint64_t pk_pipe_trial_bound(size_t bits);

/* Trial division of a complete job has ended (cofactor > 1, not proven
   prime by it): create the pipeline with the cofactor as its one part. */
int pk_pipe_start(pk_job *job);
/* Advance the pipeline within *budget; PK_PATH_* or a negative error. Sets
   job->done (through pk_job_finish) when every part is resolved or left. */
int pk_pipe_step(pk_job *job, uint64_t *budget);
void pk_pipe_free(struct pk_pipe *pipe);

/* Progress: stage name, fraction, composite parts left, percent share. */
const char *pk_pipe_stage(const pk_job *job, pk_progress *out);
/* Units of work done after trial division. */
uint64_t pk_pipe_work(const pk_job *job);
/* Percent of a complete job (never above 99.999 before the end). */
double pk_pipe_percent(const pk_job *job);

/* Parts left by a finished job (result.c). */
size_t pk_pipe_part_count(const pk_job *job);
int pk_pipe_part(const pk_job *job, size_t index, char *buf, size_t cap, size_t *len, pk_part_info *info);

/* Checkpoint lines of a complete job (after the core's lines):
     stage <trial|split|done>
     pipe-work <u64>
     parts <count>
     part <value> <exponent> <new|split|left> <work> <curves> <b1> <b2> <digits> <method>
     split <none|word TEXT|ecm WORDS>
     share <index> <count> <base-curve> <base-curves> <base-work> <allowance> <factor|0>
                                             (a share only; version 3)
   save appends them; load reads them and checks them against the job's core
   (cofactor = product of the parts, ...). */
void pk_pipe_save(const pk_job *job, pk_sbuf *b);
int pk_pipe_load(pk_job *job, pk_reader *r, uint64_t version);
/* A restored complete job's stage agrees with its core (done, status, trial
   division over). PK_OK or PK_E_CHECKPOINT_STATE. */
int pk_pipe_check(pk_job *job);

/* ECM shares (pk_job_ecm_share, pk_job_ecm_merge in share.c). A share is a
   copy of a complete job whose current part is being split by ECM; it runs
   only its curves of that part and is over (pk_job_step: PK_DONE, the job
   itself not done) when it finds a factor, when the curves one job would
   run on the part are done, when its part of the work limit is spent, or
   when concluded. */
/* Make the copy `job` share index of count; PK_E_OPTIONS when no ECM stint is due. */
int pk_pipe_share(pk_job *job, uint64_t index, uint64_t count);
int pk_pipe_is_share(const pk_job *job);
int pk_pipe_share_over(const pk_job *job);
/* PK_OK with the share's place and whether it found a factor; PK_E_OPTIONS for a job that is no share. */
int pk_pipe_share_info(const pk_job *job, uint64_t *index, uint64_t *count, int *found);
/* The count shares are every share of one shared job, and either one found
   a factor or all are over: PK_OK, PK_E_OPTIONS, PK_E_NOT_DONE, PK_E_NOMEM. */
int pk_pipe_share_check(pk_job *const *shares, size_t count);
/* out, a copy of one of the checked shares, becomes the shared job continued:
   work and curves summed, the earliest curve's factor split on, or the
   part's ECM pass over. */
int pk_pipe_share_merge(pk_job *out, pk_job *const *shares, size_t count);

#endif /* PK_JOB_PIPELINE_H */
