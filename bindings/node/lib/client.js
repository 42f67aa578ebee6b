// The client: one `primekit serve` child process, JSON-RPC 2.0 over its stdin/stdout, one JSON message per line.
import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { BridgeExitedError, ClientClosedError, PrimeKitError } from './errors.js';
import { Job, kAborted, kAccept, kFail, kFinish, kProgress, kRespond, kStopped, Submission } from './job.js';
import { findExecutable } from './locate.js';
import { kBlock, RangeJob } from './range.js';

const PROTOCOL_VERSION = 1;
const STDERR_LINES = 20;
/** Output is written once per tick, or as soon as this much of it waits. */
const FLUSH_BYTES = 1 << 16;
const DEFAULT_CLOSE_TIMEOUT_MS = 5000;
const constructing = Symbol('primekit.constructing');
/** A job/submit acknowledgement exactly as the server writes it: id, jobId, state. */
const SUBMIT_ACK = /^\{"jsonrpc":"2\.0","id":(\d{1,15}),"result":\{"jobId":"(j\d+)","state":"([a-z]+)"\}\}$/;

/** A plain request waiting for its response. */
class Call {
  constructor(resolve, reject, method) {
    this.resolve = resolve;
    this.reject = reject;
    this.method = method;
  }

  [kRespond](message) {
    if (message.error !== undefined) this.reject(new PrimeKitError(message.error, { method: this.method }));
    else this.resolve(message.result);
    return false;
  }

  [kFail](error) {
    this.reject(error);
  }
}

/**
 * A job started by isPrime()/factor() without a signal: nobody can reach it but through the promise, so it carries
 * only what settles that promise (no events, no iterators).
 */
class Run extends Submission {
  constructor(resolve, reject) {
    super();
    this.resolve = resolve;
    this.reject = reject;
  }

  [kFinish](params) {
    if (params.state === 'succeeded') this.resolve(params.result);
    else this.reject(Job.outcomeError(this.id, params));
  }

  [kFail](error) {
    this.reject(error);
  }
}

/**
 * A big integer for the wire: strings go as they are (the server checks them), a BigInt as its decimal digits, a
 * Number as its digits when it is exact. A Number beyond 2^53 - 1 has already lost digits: that is a RangeError.
 */
export function toDecimal(value, field = 'candidate') {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') {
    if (Math.abs(value) > Number.MAX_SAFE_INTEGER) {
      throw new RangeError(`${field} ${value} is beyond Number.MAX_SAFE_INTEGER (2^53 - 1) and has lost digits; ` +
        'pass it as a string or a BigInt');
    }
    return String(value);
  }
  return value;
}

/**
 * Copies a job's divisor range and effort options into `job/submit` params. Values are passed on as they are (the
 * server checks them); `from`, `bound` and `workLimit` become decimal strings.
 */
function addRunOptions(params, options) {
  if (options.from !== undefined) params.from = toDecimal(options.from, 'from');
  if (options.bound !== undefined) params.bound = toDecimal(options.bound, 'bound');
  if (options.mode !== undefined) params.mode = options.mode;
  if (options.ecmDigits !== undefined) params.ecmDigits = options.ecmDigits;
  if (options.workLimit !== undefined) params.workLimit = toDecimal(options.workLimit, 'workLimit');
  if (options.timeLimitMs !== undefined) params.timeLimitMs = options.timeLimitMs;
}

function timeout(ms) {
  let timer;
  const promise = new Promise((resolve) => {
    timer = setTimeout(resolve, ms, 'timeout');
  });
  return { promise, cancel: () => clearTimeout(timer) };
}

/**
 * A connection to one `primekit serve` process. Create it with `await Client.spawn(options)`.
 * Events: `notification` (method, params) for every notification, `engine/event` (params) for subscribed engine
 * streams, `exit` (code, signal) when the process ends.
 */
export class Client extends EventEmitter {
  /** The `initialize` result: protocolVersion, server, limits, capabilities. */
  server = null;
  /** The path of the executable that was started. */
  executable;
  /** The exit code of the process once it ended (null before, or when a signal ended it). */
  exitCode = null;
  /** The signal that ended the process, if one did. */
  signalCode = null;

  #child;
  #nextId = 1;
  /** Requests waiting for a response, in the order they were sent: Call or Job. */
  #requests = new Map();
  /** Accepted jobs that have not finished, by id. */
  #jobs = new Map();
  /** Jobs waiting for their dependencies' ids before they can be sent. */
  #preparing = 0;
  #output = '';
  #flushQueued = false;
  #partial = '';
  #stderrLines = [];
  #stderrPartial = '';
  #referenced = true;
  #holding = false;
  /** Set once nothing more can be sent: the error every new call rejects with. */
  #gone = null;
  #closing = false;
  #closed = null;
  #exited;
  #resolveExited;
  #closeTimeoutMs;
  /** The error writing to the server's stdin failed with (EPIPE), if it did. */
  #stdinError = null;
  /** Whether this client signalled the process. */
  #killed = false;
  #notificationListeners = 0;

  /**
   * Starts `primekit serve` and performs `initialize`.
   * @param {import('../index.js').SpawnOptions} [options]
   * @returns {Promise<Client>}
   */
  static async spawn(options = {}) {
    const executable = findExecutable(options.executable, options.env ?? process.env);
    const client = new Client(constructing, executable, options);
    try {
      client.server = await client.request('initialize', {
        protocolVersion: PROTOCOL_VERSION,
        client: { name: 'primekit-node' },
      });
    } catch (error) {
      client.#kill();
      throw error;
    }
    return client;
  }

  /** @private use Client.spawn */
  constructor(token, executable, options = {}) {
    if (token !== constructing) throw new TypeError('use `await Client.spawn(options)` to create a Client');
    super();
    this.on('newListener', (event) => {
      if (event === 'notification') this.#notificationListeners += 1;
    });
    this.on('removeListener', (event) => {
      if (event === 'notification') this.#notificationListeners -= 1;
    });
    this.executable = executable;
    this.#closeTimeoutMs = options.closeTimeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS;
    this.#exited = new Promise((resolve) => {
      this.#resolveExited = resolve;
    });
    const stderr = options.stderr ?? 'pipe';
    const child = spawn(executable, ['serve', ...(options.args ?? [])], {
      stdio: ['pipe', 'pipe', stderr === 'pipe' ? 'pipe' : stderr],
      env: options.env,
      cwd: options.cwd,
      windowsHide: true,
    });
    this.#child = child;
    child.on('error', this.#onSpawnError);
    child.on('close', this.#onClose);
    child.stdin.on('error', this.#onStdinError);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', this.#onData);
    if (child.stderr) {
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', this.#onStderr);
    }
  }

  /** The process id of `primekit serve` (undefined if it could not be started). */
  get pid() {
    return this.#child.pid;
  }

  /** The last lines the server wrote on stderr (when stderr is piped, the default). */
  get stderrTail() {
    return this.#stderrPartial ? [...this.#stderrLines, this.#stderrPartial] : [...this.#stderrLines];
  }

  /** Whether close() was called or the process is gone. */
  get closed() {
    return this.#closing || this.#gone !== null;
  }

  // --- requests -------------------------------------------------------------------------------------------------

  /**
   * Sends one JSON-RPC request and resolves with its result; a JSON-RPC error rejects with a PrimeKitError.
   * @param {string} method
   * @param {object} [params]
   */
  request(method, params) {
    if (this.#gone !== null) return Promise.reject(this.#gone);
    if (this.#closing) return Promise.reject(new ClientClosedError());
    return new Promise((resolve, reject) => {
      this.#send(method, params, new Call(resolve, reject, method));
    });
  }

  /** Sends a JSON-RPC notification (no response). */
  notify(method, params) {
    if (this.#gone !== null) throw this.#gone;
    if (this.#closing) throw new ClientClosedError();
    this.#write(this.#line(undefined, method, params));
  }

  /** Whether `n` is prime: the plugin-shaped isPrime result (`{candidate, isPrime, complete, progress, …}`). */
  isPrime(n, options) {
    return this.#run('isPrime', n, options);
  }

  /** The factorization of `n`: `{candidate, factors: [{prime, exponent}], cofactor, cofactorStatus, …}`. */
  factor(n, options) {
    return this.#run('factor', n, options);
  }

  /**
   * Factors every number from `first` to `last` (fewer than 2^128 numbers, of any size): an async iterator of blocks `{first, lines}` in
   * order, acknowledged as they are read (protocol minor 2). `result` resolves with `{first, last, count,
   * primeCount}`; leaving the loop early cancels the job.
   * @param {string | bigint | number} first
   * @param {string | bigint | number} last
   * @param {{priority?: string | number, progressIntervalMs?: number}} [options]
   * @returns {RangeJob}
   */
  factorRange(first, last, options = {}) {
    const range = new RangeJob(this);
    const params = { kind: 'factorRange', first: toDecimal(first, 'first'), last: toDecimal(last, 'last') };
    if (options.priority !== undefined) params.priority = options.priority;
    if (options.progressIntervalMs !== undefined) params.progressIntervalMs = options.progressIntervalMs;
    const failure = this.#gone ?? (this.#closing ? new ClientClosedError() : null);
    if (failure !== null) range[kFail](failure);
    else this.#send('job/submit', params, range);
    return range;
  }

  /**
   * Submits a job and returns its handle at once (`job.id` is set when the server answers).
   * @param {string | bigint | number} n
   * @param {import('../index.js').SubmitOptions} [options]
   * @returns {Job}
   */
  submit(n, options = {}) {
    const params = { kind: options.kind ?? 'factor', candidate: toDecimal(n, 'candidate') };
    addRunOptions(params, options);
    return this.#submit(params, options, true);
  }

  /**
   * Submits a job from a checkpoint (a pause, cancel or shutdown checkpoint, from this or another server).
   * @param {string} checkpoint
   * @param {import('../index.js').ResumeOptions} [options]
   */
  resumeFrom(checkpoint, options = {}) {
    return this.#submit({ checkpoint }, options, true);
  }

  /** `queue/suspend`: running jobs pause at their next slice; nothing starts until `resume()`. */
  suspend() {
    return this.request('queue/suspend');
  }

  /** `queue/resume`. */
  resume() {
    return this.request('queue/resume');
  }

  /** `plugin/subscribe`: engine events of these streams arrive as `engine/event` events on the client. */
  subscribe(streams, tags) {
    return this.request('plugin/subscribe', tags === undefined ? { streams } : { streams, tags });
  }

  /** `plugin/unsubscribe`. */
  unsubscribe(streams) {
    return this.request('plugin/unsubscribe', { streams });
  }

  /**
   * Shuts the server down gracefully: `shutdown` (unfinished jobs are checkpointed; their `result` rejects with a
   * JobCancelledError whose reason is "shutdown"), `exit`, end of stdin; SIGTERM then SIGKILL if it does not end
   * within `timeoutMs`. Resolves with the shutdown result `{jobs: [{jobId, state, checkpoint}]}`.
   */
  close(options = {}) {
    this.#closed ??= this.#shutdown(options.timeoutMs ?? this.#closeTimeoutMs);
    return this.#closed;
  }

  // --- internals ------------------------------------------------------------------------------------------------

  #run(kind, n, options) {
    if (options === undefined) {
      let candidate;
      try {
        candidate = toDecimal(n, 'candidate');
      } catch (error) {
        return Promise.reject(error);
      }
      if (typeof candidate === 'string') {
        if (this.#gone !== null) return Promise.reject(this.#gone);
        if (this.#closing) return Promise.reject(new ClientClosedError());
        return new Promise((resolve, reject) => {
          this.#sendRun(kind, candidate, new Run(resolve, reject));
        });
      }
    }
    let params;
    try {
      params = { kind, candidate: toDecimal(n, 'candidate') };
      if (options !== undefined) addRunOptions(params, options);
    } catch (error) {
      return Promise.reject(error);
    }
    if (options !== undefined && (options.signal !== undefined || options.dependsOn !== undefined)) {
      return this.#submit(params, options, false).result;
    }
    if (options !== undefined) {
      if (options.priority !== undefined) params.priority = options.priority;
      if (options.progressIntervalMs !== undefined) params.progressIntervalMs = options.progressIntervalMs;
    }
    if (this.#gone !== null) return Promise.reject(this.#gone);
    if (this.#closing) return Promise.reject(new ClientClosedError());
    return new Promise((resolve, reject) => {
      this.#send('job/submit', params, new Run(resolve, reject));
    });
  }

  #submit(params, options, quiet) {
    const job = new Job(this, options.signal, quiet);
    if (options.priority !== undefined) params.priority = options.priority;
    if (options.progressIntervalMs !== undefined) params.progressIntervalMs = options.progressIntervalMs;
    const failure = this.#gone ?? (this.#closing ? new ClientClosedError() : null);
    if (failure !== null) {
      job[kFail](failure);
      return job;
    }
    const dependsOn = options.dependsOn;
    if (Array.isArray(dependsOn) && dependsOn.some((d) => d instanceof Job && d.id === null)) {
      // The ids of jobs still being submitted are known after their responses, which come in order.
      this.#preparing += 1;
      Promise.all(dependsOn.map((d) => (d instanceof Job ? d.accepted : d))).then(
        (ids) => {
          this.#preparing -= 1;
          params.dependsOn = ids;
          this.#sendJob(job, params);
        },
        (error) => {
          this.#preparing -= 1;
          job[kFail](error);
          this.#updateReference();
        });
      return job;
    }
    if (dependsOn !== undefined) {
      params.dependsOn = Array.isArray(dependsOn) ? dependsOn.map((d) => (d instanceof Job ? d.id : d)) : dependsOn;
    }
    this.#sendJob(job, params);
    return job;
  }

  #sendJob(job, params) {
    if (job[kAborted]()) {
      job[kFail](null);
      this.#updateReference();
      return;
    }
    const failure = this.#gone ?? (this.#closing ? new ClientClosedError() : null);
    if (failure !== null) {
      job[kFail](failure);
      this.#updateReference();
      return;
    }
    this.#send('job/submit', params, job);
  }

  /** The common case of isPrime()/factor(), written without a params object. */
  #sendRun(kind, candidate, run) {
    const id = this.#nextId++;
    this.#requests.set(id, run);
    this.#write(`{"jsonrpc":"2.0","id":${id},"method":"job/submit","params":{"kind":"${kind}","candidate":${
      JSON.stringify(candidate)}}}\n`);
    if (!this.#referenced) this.#updateReference();
  }

  #line(id, method, params) {
    let line = id === undefined ? '{"jsonrpc":"2.0","method":' : `{"jsonrpc":"2.0","id":${id},"method":`;
    line += JSON.stringify(method);
    if (params !== undefined) line += ',"params":' + JSON.stringify(params);
    return line + '}\n';
  }

  #send(method, params, entry) {
    const line = this.#line(this.#nextId, method, params);  // may throw (a BigInt in raw params): nothing sent
    this.#requests.set(this.#nextId++, entry);
    this.#write(line);
    if (!this.#referenced) this.#updateReference();
  }

  /** Lines written in one tick go out in one write(). */
  #write(line) {
    this.#output += line;
    if (this.#output.length >= FLUSH_BYTES) {
      this.#flush();  // a long burst goes out in large pieces rather than as one string held until the tick ends
    } else if (!this.#flushQueued) {
      this.#flushQueued = true;
      process.nextTick(this.#onTick);
    }
  }

  #onTick = () => {
    this.#flushQueued = false;
    this.#flush();
  };

  #flush() {
    const output = this.#output;
    this.#output = '';
    if (output.length > 0 && this.#child.stdin.writable) this.#child.stdin.write(output);
  }

  #onData = (chunk) => {
    let text = chunk;
    let end = text.indexOf('\n');
    if (end === -1) {
      this.#partial += text;
      return;
    }
    if (this.#partial.length > 0) {
      end += this.#partial.length;
      text = this.#partial + text;
      this.#partial = '';
    }
    let start = 0;
    while (end !== -1) {
      if (end > start) this.#onLine(text.slice(start, end));
      start = end + 1;
      end = text.indexOf('\n', start);
    }
    if (start < text.length) this.#partial = text.slice(start);
    this.#updateReference();
  };

  #onLine(line) {
    // Most lines of a busy client are job/submit acknowledgements; the server writes them in exactly this form, so
    // they are read without building objects. Anything else (or any variation) goes through JSON.parse.
    const ack = SUBMIT_ACK.exec(line);
    if (ack !== null) {
      this.#onAck(Number(ack[1]), ack[2], ack[3]);
      return;
    }
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      return;  // stdout carries protocol messages only; a line that is not JSON has nothing to answer
    }
    if (message === null || typeof message !== 'object') return;
    if (Array.isArray(message)) {
      for (const element of message) this.#onResponse(element);
      return;
    }
    if (message.method !== undefined) this.#onNotification(message.method, message.params);
    else this.#onResponse(message);
  }

  #onAck(id, jobId, state) {
    const entry = this.#requests.get(id);
    if (entry === undefined) return;
    this.#requests.delete(id);
    if (entry[kAccept] === undefined) {
      entry[kRespond]({ jsonrpc: '2.0', id, result: { jobId, state } });  // a raw request('job/submit')
      return;
    }
    entry[kAccept](jobId, state);
    this.#jobs.set(jobId, entry);  // registered before the next line: its notifications may follow in this chunk
  }

  #onResponse(message) {
    let id = message.id;
    if (id === null) {
      // Responses come in request order, and this client only sends valid JSON: an error without an id (a line the
      // server could not read, e.g. over maxMessageBytes) answers the oldest request still waiting.
      const oldest = this.#requests.keys().next();
      if (oldest.done) return;
      id = oldest.value;
    }
    const entry = this.#requests.get(id);
    if (entry === undefined) return;
    this.#requests.delete(id);
    // A job is registered here, synchronously, so that its notifications in the same chunk find it.
    if (entry[kRespond](message)) this.#jobs.set(entry.id, entry);
  }

  #onNotification(method, params) {
    if (method === 'job/progress') {
      const job = this.#jobs.get(params.jobId);
      if (job !== undefined) job[kProgress](params);
    } else if (method === 'job/finished') {
      const job = this.#jobs.get(params.jobId);
      if (job !== undefined) {
        this.#jobs.delete(params.jobId);
        job[kFinish](params);
      }
    } else if (method === 'job/rangeBlock') {
      const job = this.#jobs.get(params.jobId);
      if (job !== undefined && job[kBlock] !== undefined) job[kBlock](params);
    } else if (method === 'engine/event') {
      this.emit('engine/event', params);
    }
    if (this.#notificationListeners > 0) this.emit('notification', method, params);
  }

  #onStderr = (chunk) => {
    const text = this.#stderrPartial + chunk;
    const lines = text.split('\n');
    this.#stderrPartial = lines.pop();
    for (const line of lines) {
      if (line.length === 0) continue;
      this.#stderrLines.push(line);
      if (this.#stderrLines.length > STDERR_LINES) this.#stderrLines.shift();
    }
    if (this.#stderrPartial.length > 4096) this.#stderrPartial = this.#stderrPartial.slice(-4096);
  };

  /** Keeps the event loop alive only while something waits for the server. */
  #updateReference() {
    const busy = this.#requests.size > 0 || this.#jobs.size > 0 || this.#preparing > 0 || this.#holding;
    if (busy === this.#referenced) return;
    this.#referenced = busy;
    const child = this.#child;
    if (busy) {
      child.ref();
      child.stdout.ref();
      child.stdin.ref();
      child.stderr?.ref();
    } else {
      child.unref();
      child.stdout.unref();
      child.stdin.unref();
      child.stderr?.unref();
    }
  }

  /** Rejects everything that waits, with `error`; nothing can be sent any more. */
  #failAll(error) {
    this.#gone ??= error;
    const requests = [...this.#requests.values()];
    const jobs = [...this.#jobs.values()];
    this.#requests.clear();
    this.#jobs.clear();
    for (const entry of requests) entry[kFail](error);
    for (const job of jobs) job[kFail](error);
    this.#output = '';
    this.#updateReference();
  }

  #describe() {
    return `primekit serve (${this.executable}, pid ${this.#child.pid ?? 'none'})`;
  }

  #onSpawnError = (error) => {
    // The process could not be started (or, rarely, could not be signalled); 'close' may not follow.
    if (this.#child.pid !== undefined && this.#child.exitCode === null && this.#child.signalCode === null) return;
    this.#failAll(new BridgeExitedError(`could not start ${this.executable}: ${error.message}`, { cause: error }));
    this.#resolveExited();
  };

  #onStdinError = (error) => {
    // EPIPE: the server stopped reading (it may be exiting, or alive with its input closed). Nothing sent from now on
    // can be answered; the error everything rejects with is made when the process has ended (see #onClose).
    if (this.#stdinError !== null || this.#gone !== null) return;
    this.#stdinError = error;
    this.#kill();
  };

  #onClose = (code, signal) => {
    this.exitCode = code;
    this.signalCode = signal;
    if (this.#partial.length > 0) {
      const rest = this.#partial;
      this.#partial = '';
      this.#onLine(rest);
    }
    let error;
    const stdinError = this.#stdinError;
    if (this.#closing) {
      error = new ClientClosedError('the PrimeKit client was closed before this was answered');
    } else if (stdinError !== null && this.#killed && signal !== null) {
      error = new BridgeExitedError(
        `${this.#describe()} stopped reading its input (${stdinError.code ?? stdinError.message}) and was stopped`,
        { exitCode: code, signal, stderr: this.stderrTail, cause: stdinError });
    } else {
      const how = signal ? `was killed by ${signal}` : `exited with status ${code}`;
      error = new BridgeExitedError(`${this.#describe()} ${how} unexpectedly`,
        { exitCode: code, signal, stderr: this.stderrTail, cause: stdinError ?? undefined });
    }
    this.#failAll(error);
    this.#resolveExited();
    this.emit('exit', code, signal);
  };

  #kill(signal = 'SIGKILL') {
    if (this.#child.exitCode === null && this.#child.signalCode === null) {
      this.#killed = true;
      try {
        this.#child.kill(signal);
      } catch {
        // already gone
      }
    }
  }

  async #waitForExit(ms) {
    const timer = timeout(ms);
    const outcome = await Promise.race([this.#exited, timer.promise]);
    timer.cancel();
    return outcome !== 'timeout';
  }

  async #shutdown(timeoutMs) {
    this.#holding = true;
    this.#updateReference();
    let report = { jobs: [] };
    if (this.#gone === null) {
      const answer = new Promise((resolve, reject) => this.#send('shutdown', undefined, new Call(resolve, reject, 'shutdown')));
      this.#closing = true;
      const timer = timeout(timeoutMs);
      const outcome = await Promise.race([answer.catch((error) => error), timer.promise]);
      timer.cancel();
      if (outcome !== 'timeout' && !(outcome instanceof Error)) report = outcome;
      for (const stopped of report.jobs ?? []) {
        const job = this.#jobs.get(stopped.jobId);
        if (job === undefined) continue;
        this.#jobs.delete(stopped.jobId);
        job[kStopped](stopped.checkpoint);
      }
      if (this.#gone === null) {
        this.#write(this.#line(undefined, 'exit'));
        this.#flush();
        this.#child.stdin.end();
      }
    }
    this.#closing = true;
    if (!(await this.#waitForExit(timeoutMs))) {
      this.#kill('SIGTERM');
      if (!(await this.#waitForExit(timeoutMs))) {
        this.#kill('SIGKILL');
        await this.#exited;
      }
    }
    this.#gone ??= new ClientClosedError();
    this.#holding = false;
    this.#updateReference();
    return report;
  }
}
