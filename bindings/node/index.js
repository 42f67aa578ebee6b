// PrimeKit for Node.js: a thin client of `primekit serve` (JSON-RPC 2.0 over a child process's stdin/stdout).
export { Client, toDecimal } from './lib/client.js';
export { Job } from './lib/job.js';
export { RangeJob } from './lib/range.js';
export {
  AbortError,
  BridgeExitedError,
  ClientClosedError,
  ExecutableNotFoundError,
  JobCancelledError,
  PrimeKitError,
} from './lib/errors.js';
export { findExecutable } from './lib/locate.js';
