// A factorRange job on the bridge: its `job/rangeBlock` notifications as an async iterator, acknowledged as read.
import { Job, kFail, kFinish, kStopped, Submission } from './job.js';
import { JobCancelledError } from './errors.js';

/** The client hands a job/rangeBlock to its range job through this key; not part of the public API. */
export const kBlock = Symbol('primekit.block');

/**
 * The blocks of a `factorRange` job, in order: iterate with `for await`. Each block is `{first, lines}` (`first` a
 * decimal string, `lines` the numbers' lines as the `factor` command prints them, "12: 2 2 3"). A block is
 * acknowledged (`job/ack`) when the iterator is asked for the next one, so the server sends at most 4 blocks the
 * reader has not asked for, and a reader that stops asking stops the job (not the server). Leaving the loop early
 * (break, throw) cancels the job. `result` resolves with the summary `{first, last, count, primeCount}`.
 */
export class RangeJob extends Submission {
  /** Resolves with the range summary; rejects like a job's result (PrimeKitError, JobCancelledError, …). */
  result;

  #client;
  #blocks = [];
  #waiting = null;
  #end = null;  // {error} once the job ended (error null on success)
  #lastSeq = 0;
  #toAcknowledge = 0;
  #iterating = false;
  #resolve;
  #reject;

  constructor(client) {
    super();
    this.#client = client;
    this.result = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.result.catch(() => {});  // the iterator reports the error too
  }

  [Symbol.asyncIterator]() {
    if (this.#iterating) throw new Error('a range job is iterated once');
    this.#iterating = true;
    return {
      next: () => this.#next(),
      return: async () => {
        if (this.#end === null && this.id !== null) {
          await this.#client.request('job/cancel', { jobId: this.id }).catch(() => {});
        }
        return { done: true, value: undefined };
      },
    };
  }

  /** Cancels the job (`job/cancel`); the iterator then ends with a JobCancelledError. */
  cancel() {
    if (this.id === null || this.#end !== null) return Promise.resolve();
    return this.#client.request('job/cancel', { jobId: this.id }).then(() => {});
  }

  #next() {
    if (this.#toAcknowledge > 0 && this.#end === null) {
      const seq = this.#toAcknowledge;
      this.#toAcknowledge = 0;
      this.#client.request('job/ack', { jobId: this.id, seq }).catch(() => {});
    }
    if (this.#blocks.length > 0) return Promise.resolve(this.#take());
    if (this.#end !== null) {
      return this.#end.error === null ? Promise.resolve({ done: true, value: undefined }) : Promise.reject(this.#end.error);
    }
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject };
    });
  }

  #take() {
    const block = this.#blocks.shift();
    this.#toAcknowledge = block.seq;
    return { done: false, value: { first: block.first, lines: block.lines } };
  }

  #finish(error, summary) {
    if (this.#end !== null) return;
    this.#end = { error };
    if (error === null) this.#resolve(summary);
    else this.#reject(error);
    if (this.#waiting !== null && this.#blocks.length === 0) {
      const waiting = this.#waiting;
      this.#waiting = null;
      if (error === null) waiting.resolve({ done: true, value: undefined });
      else waiting.reject(error);
    }
  }

  // --- driven by the client --------------------------------------------------------------------------------

  [kBlock](params) {
    if (params.seq !== this.#lastSeq + 1) return;  // each block once, in order
    this.#lastSeq = params.seq;
    this.#blocks.push(params);
    if (this.#waiting !== null) {
      const waiting = this.#waiting;
      this.#waiting = null;
      waiting.resolve(this.#take());
    }
  }

  [kFinish](params) {
    if (params.state === 'succeeded') this.#finish(null, params.result);
    else this.#finish(Job.outcomeError(this.id, params));
  }

  [kStopped](checkpoint) {
    this.#finish(new JobCancelledError(this.id, { reason: 'shutdown', checkpoint }));
  }

  [kFail](error) {
    this.#finish(error ?? new Error('the range job could not be submitted'));
  }
}
