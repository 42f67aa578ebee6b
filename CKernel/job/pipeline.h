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
const char *pk_pipe_stage(const pk_job *job, double *fraction, size_t *parts_left);
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
   save appends them; load reads them and checks them against the job's core
   (cofactor = product of the parts, ...). */
void pk_pipe_save(const pk_job *job, pk_sbuf *b);
int pk_pipe_load(pk_job *job, pk_reader *r);
/* A restored complete job's stage agrees with its core (done, status, trial
   division over). PK_OK or PK_E_CHECKPOINT_STATE. */
int pk_pipe_check(pk_job *job);

#endif /* PK_JOB_PIPELINE_H */
