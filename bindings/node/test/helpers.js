// Shared by the test files (no tests here). Tests run against the real executable: PRIMEKIT_BIN, else the
// executable lookup of the binding (PATH, then the source tree's release build).
import { fileURLToPath } from 'node:url';
import { findExecutable } from '../index.js';

export const executable = findExecutable(undefined);
export const vectorsDirectory = fileURLToPath(new URL('../../../Tests/Vectors/', import.meta.url));
export const moduleUrl = new URL('../index.js', import.meta.url).href;

/** A prime just below 2^64: a trial-division factor job (`mode: 'trial'`) on it takes about 0.1-1 s (it tries every
 * divisor up to 2^32); a complete job answers at once. */
export const SLOW_PRIME = '18446744073709551557';
/** 4294967279 × 4294967291: as slow, and the factors are found only at the end. */
export const SLOW_COMPOSITE = '18446743979220271189';
export const SLOW_COMPOSITE_FACTORS = [
  { prime: '4294967279', exponent: 1, certainty: 'proven' },
  { prime: '4294967291', exponent: 1, certainty: 'proven' },
];

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
