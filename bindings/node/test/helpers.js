// Shared by the test files (no tests here). Tests run against the real executable: PRIMEKIT_BIN, else the
// executable lookup of the binding (PATH, then the source tree's release build).
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { findExecutable } from '../index.js';

export const executable = findExecutable(undefined);
export const vectorsDirectory = fileURLToPath(new URL('../../../Tests/Vectors/', import.meta.url));
export const moduleUrl = new URL('../index.js', import.meta.url).href;

/** A prime just below 2^64. A trial-division factor job (`mode: 'trial'`) on it tries every divisor up to 2^32:
 * about a tenth of a second for a release build, so a test cannot count on seeing it run. The tests use it where
 * it cannot start (the queue is suspended) or where they wait for its end; a complete job answers at once. */
export const SLOW_PRIME = '18446744073709551557';

/** Trial division of a 31-digit prime to 10^13: 3.5·10^11 prime divisors, far more than any machine tries within a
 * test, so it is still running when a test pauses, cancels, shuts down or kills it; only those end it. Its first
 * progress comes within a fraction of a second (a 100-digit candidate takes seconds per batch of divisors), and a
 * pause lands as fast (not so with a higher bound: the job's pieces above the first take long to stop while they
 * start; a pause took 1.4 s with bound 10^15 and 84 s with 10^18 in a release build). */
export const ENDLESS = {
  candidate: '1000000000000000000000000000057',
  bound: '10000000000000',
};

/** RSA-100, the product of two 50-digit primes: a complete job on it does not split it within a test, so with
 * `timeLimitMs` (running time only: not queued, not paused) it runs for that long, then ends with a partial
 * answer that names RSA_100 as the composite part left. */
export const RSA_100 = '1522605027922533360535618378132637429718068114961380688657908494580122963258952897654000350692006139';

/** Checks a partial answer on RSA_100 ended by its time limit: nothing split, the whole number left as one part. */
export function assertUnsplitRsa100(result) {
  assert.equal(result.candidate, RSA_100);
  assert.equal(result.mode, 'complete');
  assert.equal(result.complete, false);
  assert.deepEqual(result.factors, []);
  assert.equal(result.cofactor, RSA_100);
  assert.equal(result.cofactorStatus, 'composite');
  assert.deepEqual(result.parts.map((part) => [part.value, part.exponent]), [[RSA_100, 1]]);
}

/** Resolves like `promise`, or rejects if it has not settled after `ms` (a guard against hangs, not a wait). */
export function within(promise, ms, what) {
  let timer;
  const guard = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing after ${ms} ms`)), ms);
  });
  return Promise.race([promise, guard]).finally(() => clearTimeout(timer));
}

/** The first value of an async iterator (or of an event), as a promise. */
export async function first(iterator) {
  for await (const value of iterator) return value;
  return undefined;
}
