// Types of the PrimeKit Node.js binding. Shapes follow the bridge protocol (docs/protocol.md); every big integer is a
// decimal string.

import { EventEmitter } from 'node:events';

/** A candidate (or `from`/`bound`): decimal digits, a BigInt, or a Number no larger than 2^53 - 1. */
export type BigIntegerLike = string | bigint | number;

/** Wire job states. */
export type JobState = 'pending' | 'queued' | 'running' | 'paused' | 'succeeded' | 'failed' | 'cancelled';

export type JobKind = 'factor' | 'isPrime';

export type Priority = 'veryLow' | 'low' | 'normal' | 'high' | 'veryHigh' | 0 | 1 | 2 | 3 | 4;

/** `initialize` result. */
export interface ServerInfo {
  protocolVersion: number;
  /** The protocol's minor version (additions within version 1); absent from servers before minor 1, read it as 0. */
  protocolMinor?: number;
  server: { name: string; version: string; kernel: string };
  limits: { maxMessageBytes: number; maxDigits: number; maxActiveJobs: number; maxBatch: number };
  capabilities: { methods: string[]; kinds: JobKind[]; streams: string[]; stateDirectory: boolean };
}

/** How a job searches: `'complete'` (every prime factor, the default) or `'trial'` (trial division only). */
export type FactorMode = 'complete' | 'trial';

/** A prime factor of a factor result. */
export interface PrimeFactor {
  prime: string;
  exponent: number;
  /** `'proven'`, or `'probable'` for a BPSW probable prime (protocol minor 1; absent before: read as proven). */
  certainty?: 'proven' | 'probable';
}

/** A composite part a complete job left unsplit (an effort limit stopped it), with what was tried on it. */
export interface CompositePart {
  value: string;
  exponent: number;
  /** The divisor range trial division covered. */
  trialFrom: string;
  trialBound: string;
  /** Work units spent on the part. */
  work: string;
  /** ECM curves run, and their stage 1 and stage 2 bounds. */
  curves: number;
  b1: string;
  b2: string;
  /** Factors up to about this many digits were searched for (ECM). */
  ecmDigits: number;
  /** The last method tried: `'split'`, `'ecm'`, `'qs'` or `'none'`. */
  method: 'split' | 'ecm' | 'qs' | 'none';
}

/** The result of a `factor` job. */
export interface FactorResult {
  candidate: string;
  /** Primes, ascending. */
  factors: PrimeFactor[];
  /** The product of the `parts` (each to its exponent), or a cofactor left by trial division; `"1"` when none. */
  cofactor: string;
  cofactorStatus: 'one' | 'probable-prime' | 'composite' | 'unknown';
  complete: boolean;
  isPrime: boolean | null;
  certainty: 'proven' | 'probable';
  /** `'complete'` or `'trial'` (protocol minor 1). */
  mode?: FactorMode;
  /** Composite parts left by an effort limit; `[]` when none (protocol minor 1). */
  parts?: CompositePart[];
  /**
   * The job's final checkpoint, only for a trial-division job submitted with `finalCheckpoint: true` over the raw
   * protocol (`client.request('job/submit', …)`): a divisor piece for `checkpoint/merge` (protocol minor 4).
   */
  checkpoint?: string;
}

/** The result of an `isPrime` job (docs/protocol.md, "isPrime result"). */
export interface PrimalityResult {
  candidate: string;
  isPrime: boolean | null;
  /** True when the question is answered; false exactly when `isPrime` is null. */
  complete: boolean;
  progress: number;
  /** Every divisor, ascending, 1 and n included ([] for a prime), when known and at most 100,000 of them. */
  factors?: string[];
  /** The number of divisors when `factors` is left out. */
  divisorCount?: number;
  /** Absent when `isPrime` is null. */
  certainty?: 'proven' | 'probable';
}

/** `job/progress` params. */
export interface Progress {
  jobId: string;
  seq: number;
  state: JobState;
  /** 0-100. */
  progress: number;
  next: string;
  tested: string;
  factors: string[];
  /** The stage the job is in (protocol minor 1). */
  stage?: 'trial' | 'power' | 'prime' | 'split' | 'ecm' | 'qs' | 'done';
  /** 0-1 through the current stage of the current part, never decreasing within them. */
  stageFraction?: number;
  /** Composite parts still to split. */
  partsLeft?: number;
  /** In stage `ecm` only (protocol minor 3): curve `curve` of the `curves` its B1 level expects to run to find a
   *  factor of `digits` digits; `b1` is a decimal string. */
  ecm?: { curve: number; curves: number; b1: string; digits: number };
}

/** `job/finished` params. */
export interface Finished {
  jobId: string;
  state: 'succeeded' | 'failed' | 'cancelled';
  result?: FactorResult | PrimalityResult;
  error?: { code: number; message: string; data?: unknown };
  reason?: string;
  checkpoint?: string;
}

/** `job/status` result. */
export interface JobStatus {
  jobId: string;
  kind: JobKind;
  state: JobState;
  priority?: string;
  progress?: number;
  next?: string;
  tested?: string;
  factors?: string[];
  dependsOn?: string[];
  checkpoint?: string;
  result?: FactorResult | PrimalityResult;
  error?: { code: number; message: string; data?: unknown };
  reason?: string;
}

/** `engine/event` params. */
export interface EngineEvent {
  stream: 'errors' | 'lifecycle' | 'pluginData' | string;
  event: Record<string, unknown>;
}

export type EngineStream = 'errors' | 'lifecycle' | 'pluginData';

/** `shutdown` result (what `close()` resolves with). */
export interface ShutdownReport {
  jobs: { jobId: string; state: 'paused'; checkpoint: string }[];
}

export interface SpawnOptions {
  /** The primekit executable; else PRIMEKIT_BIN, `primekit` on PATH, then `<repo>/.build/release/primekit`. */
  executable?: string;
  /** Extra arguments after `serve`, e.g. `['--workers', '2']`. */
  args?: string[];
  /** Environment of the server (and of the executable lookup); default `process.env`. */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /**
   * The server's stderr: `'pipe'` (default) reads it and keeps its last lines for error messages; `'inherit'` shares
   * this process's stderr; `'ignore'` drops it.
   */
  stderr?: 'pipe' | 'inherit' | 'ignore';
  /** How long close() waits at each step (shutdown answer, exit after SIGTERM) before the next; default 5000. */
  closeTimeoutMs?: number;
}

export interface JobOptions {
  priority?: Priority;
  progressIntervalMs?: number;
  /** Jobs (or their ids) that must succeed first. */
  dependsOn?: (Job | string)[];
  /** Aborting cancels the job; its result rejects with an AbortError carrying `signal.reason`. */
  signal?: AbortSignal;
}

export interface RunOptions extends JobOptions {
  /** Trial division from this divisor (a trial-division job). */
  from?: BigIntegerLike;
  /** Trial division up to this divisor (a trial-division job). */
  bound?: BigIntegerLike;
  /** Default `'complete'`; `'trial'` is trial division up to the default bound. */
  mode?: FactorMode;
  /** Effort limit: search for factors of up to this many digits (1-70), then stop with the parts left. */
  ecmDigits?: number;
  /** Effort limit: at most this many work units (at least 1). */
  workLimit?: BigIntegerLike;
  /** Effort limit: at most this much running time, in milliseconds (at least 1). */
  timeLimitMs?: number;
}

export interface SubmitOptions extends RunOptions {
  /** Default `'factor'`. */
  kind?: JobKind;
}

export type ResumeOptions = JobOptions;

export interface JobEvents {
  progress: [Progress];
  finished: [Finished];
  accepted: [string];
}

/** A submitted job. */
/** One block of a factorRange job: consecutive numbers from `first`, one line each ("12: 2 2 3"). */
export interface RangeBlock {
  first: string;
  lines: string[];
}

/** The result of a factorRange job (protocol minor 2). */
export interface RangeSummary {
  first: string;
  last: string;
  count: string;
  primeCount: string;
}

/** A factorRange job: its blocks in order (acknowledged as read); leaving the loop early cancels it. */
export declare class RangeJob implements AsyncIterable<RangeBlock> {
  readonly id: string | null;
  readonly result: Promise<RangeSummary>;
  cancel(): Promise<void>;
  [Symbol.asyncIterator](): AsyncIterator<RangeBlock>;
}

export declare class Job<R = FactorResult | PrimalityResult> extends EventEmitter<JobEvents> {
  private constructor();
  /** The server's id ("j1", …), null until the submission is answered. */
  readonly id: string | null;
  /** `'submitting'`, then the last wire state the client saw. */
  readonly state: JobState | 'submitting';
  /** The latest checkpoint the server sent for this job (pause, cancel, cancelled, shutdown). */
  readonly checkpoint: string | undefined;
  /**
   * The job's result. Rejects with PrimeKitError (refused or failed), JobCancelledError, AbortError,
   * BridgeExitedError or ClientClosedError. Marked as handled: an unobserved rejection does not crash the process.
   */
  readonly result: Promise<R>;
  /** Resolves with the id once the server accepted the job. */
  readonly accepted: Promise<string>;
  /** Whether the job has ended. */
  readonly ended: boolean;
  pause(): Promise<{ jobId: string; state: 'paused'; checkpoint: string }>;
  resume(): Promise<{ jobId: string; state: JobState }>;
  cancel(): Promise<{ jobId: string; state: 'cancelled'; checkpoint?: string }>;
  status(options?: { checkpoint?: boolean }): Promise<JobStatus>;
  /** Progress notifications from now on; ends when the job ends, whatever the outcome. */
  progress(): AsyncIterableIterator<Progress>;
}

export interface ClientEvents {
  notification: [method: string, params: any];
  'engine/event': [EngineEvent];
  exit: [code: number | null, signal: NodeJS.Signals | null];
}

/** One `primekit serve` process. */
export declare class Client extends EventEmitter<ClientEvents> {
  private constructor();
  /** Starts `primekit serve` and performs `initialize`. */
  static spawn(options?: SpawnOptions): Promise<Client>;
  /** The `initialize` result. */
  readonly server: ServerInfo;
  readonly executable: string;
  readonly pid: number | undefined;
  readonly exitCode: number | null;
  readonly signalCode: NodeJS.Signals | null;
  /** The last lines of the server's stderr (when piped). */
  readonly stderrTail: string[];
  /** Whether close() was called or the process is gone. */
  readonly closed: boolean;

  /** A raw JSON-RPC request; a JSON-RPC error rejects with PrimeKitError. */
  request<T = any>(method: string, params?: object): Promise<T>;
  /** A raw JSON-RPC notification. */
  notify(method: string, params?: object): void;

  isPrime(n: BigIntegerLike, options?: RunOptions): Promise<PrimalityResult>;
  factor(n: BigIntegerLike, options?: RunOptions): Promise<FactorResult>;
  submit(n: BigIntegerLike, options: SubmitOptions & { kind: 'isPrime' }): Job<PrimalityResult>;
  submit(n: BigIntegerLike, options?: SubmitOptions & { kind?: 'factor' }): Job<FactorResult>;
  /** Continues a job from a checkpoint (from this server or another). */
  resumeFrom(checkpoint: string, options?: ResumeOptions): Job;
  /** Factors every number from `first` to `last` (fewer than 2^128 numbers, of any size); blocks in order (protocol minor 2). */
  factorRange(first: BigIntegerLike, last: BigIntegerLike,
              options?: { priority?: Priority; progressIntervalMs?: number }): RangeJob;
  suspend(): Promise<{ state: 'suspended' }>;
  resume(): Promise<{ state: 'running' }>;
  subscribe(streams: EngineStream[], tags?: string[]): Promise<{ streams: EngineStream[] }>;
  unsubscribe(streams: EngineStream[]): Promise<{ streams: EngineStream[] }>;
  /** Graceful shutdown: shutdown, exit, end of stdin, then SIGTERM/SIGKILL after timeouts. */
  close(options?: { timeoutMs?: number }): Promise<ShutdownReport>;
}

/** A JSON-RPC error from the server, or the error of a failed job. */
export declare class PrimeKitError extends Error {
  name: 'PrimeKitError';
  code: number;
  data?: any;
  /** The method whose request was answered with this error. */
  method?: string;
  /** The job that failed. */
  jobId?: string;
}

/** A job ended cancelled (cancel(), a cancelled dependency, queue/reset, or close() with reason "shutdown"). */
export declare class JobCancelledError extends Error {
  name: 'JobCancelledError';
  jobId: string;
  reason: string;
  /** `client.resumeFrom(checkpoint)` continues the job. */
  checkpoint?: string;
}

/** The job's AbortSignal fired. */
export declare class AbortError extends Error {
  name: 'AbortError';
  code: 'ABORT_ERR';
  reason: unknown;
  cause: unknown;
  jobId?: string;
}

/** The server process ended (or stopped reading) while something waited for it. */
export declare class BridgeExitedError extends Error {
  name: 'BridgeExitedError';
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stderr: string[];
}

/** The client was closed. */
export declare class ClientClosedError extends Error {
  name: 'ClientClosedError';
}

/** No executable found; `message` says what to do. */
export declare class ExecutableNotFoundError extends Error {
  name: 'ExecutableNotFoundError';
  searched: string[];
}

/** The executable the client would start (explicit path, PRIMEKIT_BIN, PATH, source-tree build). */
export declare function findExecutable(explicit?: string, env?: NodeJS.ProcessEnv): string;

/** The wire form of a big integer: strings as they are, BigInt as digits, a safe Number as digits. */
export declare function toDecimal(value: BigIntegerLike, field?: string): string;
