// Error classes of the binding. Server errors keep the JSON-RPC `code`, `message` and `data` as the bridge sent them.

/** An error answered by `primekit serve` (a JSON-RPC error object), or the error of a job that failed. */
export class PrimeKitError extends Error {
  /**
   * @param {{code: number, message: string, data?: unknown}} error the JSON-RPC error object
   * @param {{method?: string, jobId?: string}} [context]
   */
  constructor(error, context = {}) {
    super(error.message);
    this.name = 'PrimeKitError';
    this.code = error.code;
    if (error.data !== undefined) this.data = error.data;
    if (context.method !== undefined) this.method = context.method;
    if (context.jobId !== undefined) this.jobId = context.jobId;
  }
}

/** A job ended as cancelled: by `job.cancel()`, a cancelled dependency, `queue/reset`, or `client.close()`. */
export class JobCancelledError extends Error {
  /**
   * @param {string} jobId
   * @param {{reason?: string, checkpoint?: string}} details
   */
  constructor(jobId, details = {}) {
    const why = details.reason ? ` (${details.reason})` : '';
    super(`job ${jobId} was cancelled${why}`);
    this.name = 'JobCancelledError';
    this.jobId = jobId;
    this.reason = details.reason ?? 'cancelled';
    /** The server's checkpoint of the job: `client.resumeFrom(error.checkpoint)` continues it. */
    this.checkpoint = details.checkpoint;
  }
}

/** The AbortSignal given to `submit` (or `isPrime`/`factor`) fired; `cause` and `reason` are the signal's reason. */
export class AbortError extends Error {
  constructor(reason, jobId) {
    super(jobId ? `job ${jobId} was aborted` : 'the job was aborted', { cause: reason });
    this.name = 'AbortError';
    this.code = 'ABORT_ERR';
    this.reason = reason;
    if (jobId !== undefined) this.jobId = jobId;
  }
}

/** The `primekit serve` process ended (or stopped reading) while something was still waiting for it. */
export class BridgeExitedError extends Error {
  /**
   * @param {string} message
   * @param {{exitCode?: number|null, signal?: string|null, stderr?: string[], cause?: unknown}} details
   */
  constructor(message, details = {}) {
    const tail = details.stderr?.length ? `\nlast lines on its stderr:\n  ${details.stderr.join('\n  ')}` : '';
    super(message + tail, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'BridgeExitedError';
    this.exitCode = details.exitCode ?? null;
    this.signal = details.signal ?? null;
    this.stderr = details.stderr ?? [];
  }
}

/** The client was closed before the request was answered (or the request came after `close()`). */
export class ClientClosedError extends Error {
  constructor(message = 'the PrimeKit client is closed') {
    super(message);
    this.name = 'ClientClosedError';
  }
}

/** No `primekit` executable was found; the message says where the binding looked and what to do. */
export class ExecutableNotFoundError extends Error {
  /**
   * @param {string} message
   * @param {string[]} searched the places looked at, in order
   */
  constructor(message, searched) {
    super(message);
    this.name = 'ExecutableNotFoundError';
    this.searched = searched;
  }
}
