// Finding the `primekit` executable.
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ExecutableNotFoundError } from './errors.js';

const NAME = process.platform === 'win32' ? 'primekit.exe' : 'primekit';

/** `<repo>/.build/release/primekit` when this module runs from the PrimeKit source tree (bindings/node/lib). */
export const SOURCE_TREE_BUILD = fileURLToPath(new URL(`../../../.build/release/${NAME}`, import.meta.url));

function isExecutableFile(path) {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The executable to start, in this order: `explicit` (the `executable` option), the `PRIMEKIT_BIN` environment
 * variable, `primekit` on `PATH`, then the source tree's release build. An explicit choice that is not an executable
 * file is an error rather than a reason to look elsewhere.
 * @param {string | undefined} explicit
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {string} an absolute path
 */
export function findExecutable(explicit, env = process.env) {
  if (explicit) {
    const path = resolve(explicit);
    if (isExecutableFile(path)) return path;
    throw new ExecutableNotFoundError(
      `the executable option names ${path}, which is not an executable file`, [path]);
  }
  if (env.PRIMEKIT_BIN) {
    const path = resolve(env.PRIMEKIT_BIN);
    if (isExecutableFile(path)) return path;
    throw new ExecutableNotFoundError(
      `PRIMEKIT_BIN is ${env.PRIMEKIT_BIN}, which is not an executable file; point it at a primekit build or unset it`,
      [path]);
  }
  const searched = [];
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const path = join(dir, NAME);
    searched.push(path);
    if (isExecutableFile(path)) return resolve(path);
  }
  searched.push(SOURCE_TREE_BUILD);
  if (isExecutableFile(SOURCE_TREE_BUILD)) return SOURCE_TREE_BUILD;
  throw new ExecutableNotFoundError(
    'primekit executable not found. Pass { executable: "/path/to/primekit" } to Client.spawn, set PRIMEKIT_BIN, ' +
      `put primekit on PATH, or build it in the PrimeKit source tree with "swift build -c release" ` +
      `(looked on PATH and at ${SOURCE_TREE_BUILD})`,
    searched);
}
