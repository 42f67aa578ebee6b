// A job on the bridge: created by client.submit()/resumeFrom(), settled by `job/finished`.
import { EventEmitter } from 'node:events';
import { AbortError, JobCancelledError, PrimeKitError } from './errors.js';

// The client drives a job through these keys; they are not part of the public API.
export const kRespond = Symbol('primekit.respond');
export const kFail = Symbol('primekit.fail');
export const kProgress = Symbol('primekit.progress');
export const kFinish = Symbol('primekit.finish');
export const kStopped = Symbol('primekit.stopped');
export const kAborted = Symbol('primekit.aborted');
export const kAccept = Symbol('primekit.accept');

/**
 * What a light handle of a submitted job shares (a job behind a promise, a range job): its id from the `job/submit`
 * response or a batch's acceptance; a refused submission fails the handle through its `kFail`, like a lost bridge.
 */
export class Submission {
  /** The server's job id, null until the submission is answered. */
  id = null;

  [kRespond](message) {
    if (message.error !== undefined) {
      this[kFail](new PrimeKitError(message.error, { method: 'job/submit' }));
      return false;
    }
    this[kAccept](message.result.jobId, message.result.state);
    return true;
  }

  [kAccept](jobId) {
    this.id = jobId;
  }

  [kProgress]() {}
}

const noop = () => {};
/** Progress notifications an iterator keeps while its reader is behind (the oldest are dropped first). */
const ITERATOR_BUFFER = 1024;

/**
 * A job submitted to the bridge. `id` is null until the server has accepted the submission (`await job.accepted`);
 * `result` settles when the job ends. Events: `progress` (the `job/progress` params), `finished` (the `job/finished`
 * params), `accepted` (the id).
 */
export class Job extends EventEmitter {
  /** The server's job id ("j1", …), null until the submission is answered. */
  id = null;
  /** The last state the client knows: `submitting`, then a wire state (queued, running, paused, …). */
  state = 'submitting';
  /** The latest checkpoint text the server sent for this job (pause, cancel, cancelled, shutdown). */
  checkpoint = undefined;
  /** Resolves with the job's result; rejects with PrimeKitError, JobCancelledError, AbortError or a bridge error. */
  result;

  #client;
  #resolve;
  #reject;
  #settled = false;
  #ended = false;
  #quiet;
  #accepted = null;
  #iterators = null;
  #signal = null;
  #cancelWhenAccepted = false;

  /**
   * @param {import('./client.js').Client} client
   * @param {AbortSignal | undefined} signal
   * @param {boolean} quiet mark `result` as handled (the caller holds the Job, not only the promise)
   */
  constructor(client, signal, quiet) {
    super();
    this.#client = client;
    this.#quiet = quiet;
    this.result = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    if (signal) {
      this.#signal = signal;
      if (signal.aborted) this.#abort();
      else signal.addEventListener('abort', this.#abort, { once: true });
    }
  }

  /** Resolves with the job id once the server accepted the submission; rejects if it was refused. */
  get accepted() {
    if (this.#accepted === null) {
      if (this.id !== null) return Promise.resolve(this.id);
      let resolve, reject;
      const promise = new Promise((res, rej) => {
        resolve = res;
        reject = rej;
      });
      promise.catch(noop);
      this.#accepted = { promise, resolve, reject };
      if (this.#ended && this.id === null) reject(this.#endError ?? new Error('the job was not submitted'));
    }
    return this.#accepted.promise;
  }

  /** Whether the job has ended (its iterators are done and `result` is settled). */
  get ended() {
    return this.#ended;
  }

  /** Pauses the job at its next slice boundary; resolves with `{jobId, state: "paused", checkpoint}`. */
  async pause() {
    const jobId = await this.accepted;
    const answer = await this.#client.request('job/pause', { jobId });
    this.checkpoint = answer.checkpoint;
    if (!this.#ended) this.state = answer.state;
    return answer;
  }

  /** Resumes a paused job; resolves with `{jobId, state}`. */
  async resume() {
    const jobId = await this.accepted;
    const answer = await this.#client.request('job/resume', { jobId });
    if (!this.#ended) this.state = answer.state;
    return answer;
  }

  /**
   * Cancels the job; resolves with `{jobId, state: "cancelled", checkpoint}`. `result` then rejects with a
   * JobCancelledError carrying the checkpoint.
   */
  async cancel() {
    const jobId = await this.accepted;
    const answer = await this.#client.request('job/cancel', { jobId });
    if (answer.checkpoint !== undefined) this.checkpoint = answer.checkpoint;
    return answer;
  }

  /** The server's `job/status` answer; `{checkpoint: true}` asks for the current checkpoint as well. */
  async status(options = {}) {
    const jobId = await this.accepted;
    const params = options.checkpoint ? { jobId, checkpoint: true } : { jobId };
    const answer = await this.#client.request('job/status', params);
    if (answer.checkpoint !== undefined) this.checkpoint = answer.checkpoint;
    return answer;
  }

  /**
   * The job's `job/progress` notifications from now on, as an async iterator that ends when the job ends (whatever
   * its outcome: see `result` for that). Each call gives an independent iterator.
   * @returns {AsyncIterableIterator<object>}
   */
  progress() {
    const reader = { queue: [], wake: null, done: this.#ended };
    const remove = () => {
      reader.done = true;
      this.#iterators?.delete(reader);
      if (reader.wake) {
        const wake = reader.wake;
        reader.wake = null;
        wake({ value: undefined, done: true });
      }
    };
    if (!reader.done) (this.#iterators ??= new Set()).add(reader);
    return {
      next() {
        if (reader.queue.length > 0) return Promise.resolve({ value: reader.queue.shift(), done: false });
        if (reader.done) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => {
          reader.wake = resolve;
        });
      },
      return() {
        reader.queue.length = 0;
        remove();
        return Promise.resolve({ value: undefined, done: true });
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  // --- driven by the client -----------------------------------------------------------------------------------

  /** The `job/submit` response (the client registers the job before calling this). */
  [kRespond](message) {
    if (message.error !== undefined) {
      const error = new PrimeKitError(message.error, { method: 'job/submit' });
      this.#end(error);
      return false;
    }
    this[kAccept](message.result.jobId, message.result.state);
    return true;
  }

  /** The server accepted the job under this id. */
  [kAccept](jobId, state) {
    this.id = jobId;
    this.state = state;
    this.#accepted?.resolve(jobId);
    if (this.listenerCount('accepted') > 0) this.emit('accepted', jobId);
    if (this.#cancelWhenAccepted) this.#sendCancel();
  }

  [kProgress](params) {
    this.state = params.state;
    if (this.listenerCount('progress') > 0) this.emit('progress', params);
    if (this.#iterators !== null) {
      for (const reader of this.#iterators) {
        if (reader.wake) {
          const wake = reader.wake;
          reader.wake = null;
          wake({ value: params, done: false });
        } else {
          if (reader.queue.length >= ITERATOR_BUFFER) reader.queue.shift();
          reader.queue.push(params);
        }
      }
    }
  }

  /** The `job/finished` notification. */
  [kFinish](params) {
    this.state = params.state;
    if (params.checkpoint !== undefined) this.checkpoint = params.checkpoint;
    if (this.listenerCount('finished') > 0) this.emit('finished', params);
    if (params.state === 'succeeded') this.#end(null, params.result);
    else this.#end(Job.outcomeError(this.id, params));
  }

  /** The error a `job/finished` that is not a success rejects with. */
  static outcomeError(jobId, params) {
    if (params.state === 'cancelled') {
      return new JobCancelledError(jobId, { reason: params.reason, checkpoint: params.checkpoint });
    }
    return new PrimeKitError(params.error ?? { code: -32603, message: `job ${jobId} ${params.state}` }, { jobId });
  }

  /** The job was stopped by `shutdown` (close) with this checkpoint. */
  [kStopped](checkpoint) {
    this.state = 'paused';
    this.checkpoint = checkpoint;
    this.#end(new JobCancelledError(this.id, { reason: 'shutdown', checkpoint }));
  }

  /** The bridge is gone (or the client closed): the job can no longer finish. */
  [kFail](error) {
    this.#end(error ?? this.#abortError);
  }

  // --- private ------------------------------------------------------------------------------------------------

  #endError = null;

  #end(error, value) {
    if (this.#ended) return;
    this.#ended = true;
    if (this.id === null) {
      this.#endError = error;
      if (this.#accepted) this.#accepted.reject(error);
    }
    if (this.#signal) this.#signal.removeEventListener('abort', this.#abort);
    if (!this.#settled) {
      this.#settled = true;
      if (error === null) {
        this.#resolve(value);
      } else {
        if (this.#quiet) this.result.catch(noop);
        this.#reject(error);
      }
    }
    if (this.#iterators !== null) {
      for (const reader of this.#iterators) {
        reader.done = true;
        if (reader.wake) {
          const wake = reader.wake;
          reader.wake = null;
          wake({ value: undefined, done: true });
        }
      }
      this.#iterators = null;
    }
  }

  #abortError = null;

  #abort = () => {
    if (this.#settled) return;
    this.#settled = true;
    this.#abortError = new AbortError(this.#signal.reason, this.id ?? undefined);
    if (this.#quiet) this.result.catch(noop);
    this.#reject(this.#abortError);
    if (this.id !== null) this.#sendCancel();
    else this.#cancelWhenAccepted = true;
  };

  #sendCancel() {
    this.#client.request('job/cancel', { jobId: this.id }).then((answer) => {
      if (answer.checkpoint !== undefined) this.checkpoint = answer.checkpoint;
    }, noop);
  }

  /** Whether the signal fired before the server accepted the job (the client then does not send it at all). */
  [kAborted]() {
    return this.#cancelWhenAccepted;
  }
}
