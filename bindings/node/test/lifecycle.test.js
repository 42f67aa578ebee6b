// Process lifecycle: a server that dies, close(), a client left open, EPIPE, the executable lookup.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import {
  BridgeExitedError, Client, ClientClosedError, ExecutableNotFoundError, findExecutable, JobCancelledError,
} from '../index.js';
import { SOURCE_TREE_BUILD } from '../lib/locate.js';
import { ENDLESS, executable, first, moduleUrl, within } from './helpers.js';

const GUARD_MS = 30_000;

// A stand-in server for what the real one does not do on purpose: it answers `initialize`, then closes its stdin
// before answering the next request (the client's writes then fail with EPIPE), or complains on stderr and exits 7 at the next request, or ignores
// everything, SIGTERM included.
const FAKE_SERVER = `#!${process.execPath}
'use strict';
const fs = require('node:fs');
const mode = process.argv[3];
const buffer = Buffer.alloc(65536);
let text = '';
while (!text.includes('\\n')) {
  const n = fs.readSync(0, buffer);
  if (n === 0) process.exit(1);
  text += buffer.toString('utf8', 0, n);
}
const request = JSON.parse(text.slice(0, text.indexOf('\\n')));
const send = (message) => fs.writeSync(1, JSON.stringify(message) + '\\n');
send({ jsonrpc: '2.0', id: request.id, result: { protocolVersion: 1, server: { name: 'fake' } } });
if (mode === 'close-stdin') {
  const next = JSON.parse(buffer.toString('utf8', 0, fs.readSync(0, buffer)));
  fs.closeSync(0);
  send({ jsonrpc: '2.0', id: next.id, result: { stdin: 'closed' } });
}
if (mode === 'die-on-request') {
  fs.readSync(0, buffer);
  fs.writeSync(2, 'fake: first complaint\\nfake: giving up\\n');
  process.exit(7);
}
if (mode === 'stubborn') process.on('SIGTERM', () => send({ jsonrpc: '2.0', method: 'test/sigterm' }));
setInterval(() => {}, 1000);
setTimeout(() => process.exit(3), 60000);
`;

let fakeDirectory;
let fakeServer;
before(() => {
  fakeDirectory = mkdtempSync(join(tmpdir(), 'primekit-node-test-'));
  fakeServer = join(fakeDirectory, 'primekit');
  writeFileSync(fakeServer, FAKE_SERVER, { mode: 0o755 });
});
after(() => {
  rmSync(fakeDirectory, { recursive: true, force: true });
});

/** Every value an async iterator still gives, once it is done. */
async function drain(iterator) {
  const values = [];
  for await (const value of iterator) values.push(value);
  return values;
}

/** Submits the endless job and resolves once it is running (its first progress notification). */
async function runningJob(client, options = {}) {
  const job = client.submit(ENDLESS.candidate, { bound: ENDLESS.bound, progressIntervalMs: 5, ...options });
  const progress = await within(first(job.progress()), GUARD_MS, 'first progress');
  assert.equal(progress.state, 'running');
  return job;
}

test('a server killed mid-job rejects every pending promise with BridgeExitedError', async () => {
  const client = await Client.spawn({ executable });
  const job = await runningJob(client);
  const dependent = client.submit('97', { kind: 'isPrime', dependsOn: [job] });
  await dependent.accepted;
  const iterator = job.progress();
  const exited = once(client, 'exit');
  process.kill(client.pid, 'SIGKILL');
  const ping = client.request('ping');  // in flight while the process dies
  for (const [what, promise] of [['job', job.result], ['dependent', dependent.result], ['ping', ping]]) {
    const error = await within(promise.then(() => assert.fail(`${what} resolved`), (e) => e), GUARD_MS, what);
    assert.ok(error instanceof BridgeExitedError, `${what}: ${error}`);
    assert.match(error.message, /primekit serve/);
  }
  assert.deepEqual(await within(exited, GUARD_MS, 'exit event'), [null, 'SIGKILL']);
  assert.equal(client.signalCode, 'SIGKILL');
  await within(drain(iterator), GUARD_MS, 'the progress iterator to end');
  // Later calls fail at once, with the same clear error.
  await assert.rejects(client.isPrime('97'), BridgeExitedError);
  assert.deepEqual(await within(client.close(), GUARD_MS, 'close after death'), { jobs: [] });
});

test('the exit message names the signal', async () => {
  const client = await Client.spawn({ executable });
  const job = client.submit(ENDLESS.candidate, { bound: ENDLESS.bound });
  await job.accepted;
  process.kill(client.pid, 'SIGKILL');
  const error = await within(job.result.catch((e) => e), GUARD_MS, 'job after kill');
  assert.ok(error instanceof BridgeExitedError);
  assert.equal(error.signal, 'SIGKILL');
  assert.equal(error.exitCode, null);
  assert.match(error.message, /was killed by SIGKILL/);
});

test('the exit message carries the exit status and the last lines of stderr', async () => {
  const client = await Client.spawn({ executable: fakeServer, args: ['die-on-request'] });
  const error = await within(client.request('ping').catch((e) => e), GUARD_MS, 'ping');
  assert.ok(error instanceof BridgeExitedError, String(error));
  assert.equal(error.exitCode, 7);
  assert.match(error.message, /exited with status 7 unexpectedly/);
  assert.deepEqual(error.stderr.slice(-2), ['fake: first complaint', 'fake: giving up']);
  assert.match(error.message, /last lines on its stderr:\n {2}fake: first complaint\n {2}fake: giving up$/);
});

test('close() with running jobs: shutdown checkpoints them, results reject, the process exits 0', async () => {
  const client = await Client.spawn({ executable });
  const running = await runningJob(client);
  const dependent = client.submit('97', { kind: 'isPrime', dependsOn: [running] });
  await dependent.accepted;
  const iterator = running.progress();
  const report = await within(client.close(), GUARD_MS, 'close');
  assert.deepEqual(report.jobs.map((j) => j.jobId).sort(), [running.id, dependent.id].sort());
  for (const job of [running, dependent]) {
    const entry = report.jobs.find((j) => j.jobId === job.id);
    const error = await job.result.catch((e) => e);
    assert.ok(error instanceof JobCancelledError, String(error));
    assert.equal(error.reason, 'shutdown');
    assert.equal(error.checkpoint, entry.checkpoint);
    assert.equal(job.checkpoint, entry.checkpoint);
  }
  const rest = await within(drain(iterator), GUARD_MS, 'the progress iterator to end');
  assert.ok(rest.every((p) => p.jobId === running.id && p.state === 'running'));
  assert.equal(client.exitCode, 0);
  assert.equal(client.closed, true);
  assert.equal(client.close(), client.close(), 'close() is idempotent');
  await assert.rejects(client.request('ping'), ClientClosedError);
  await assert.rejects(client.factor('1001'), ClientClosedError);

  // The shutdown checkpoint resumes elsewhere.
  const other = await Client.spawn({ executable });
  try {
    const resumed = other.resumeFrom(report.jobs.find((j) => j.jobId === running.id).checkpoint);
    await within(first(resumed.progress()), GUARD_MS, 'resumed job runs');
  } finally {
    await other.close();
  }
});

test('close() terminates a server that does not exit by itself', async () => {
  const client = await Client.spawn({ executable: fakeServer, args: ['stubborn'] });
  assert.equal(client.server.server.name, 'fake');
  const ping = client.request('ping');  // never answered
  const sigterm = new Promise((resolve) => {
    client.on('notification', (method) => method === 'test/sigterm' && resolve());
  });
  await within(client.close({ timeoutMs: 300 }), GUARD_MS, 'close');
  await within(sigterm, GUARD_MS, 'SIGTERM first');
  assert.equal(client.signalCode, 'SIGKILL');
  await assert.rejects(ping, ClientClosedError);
});

test('EPIPE: a server that stops reading rejects the request instead of crashing the process', async () => {
  const client = await Client.spawn({ executable: fakeServer, args: ['close-stdin'] });
  assert.deepEqual(await within(client.request('ping'), GUARD_MS, 'the fake closing its stdin'), { stdin: 'closed' });
  const error = await within(client.request('ping', { pad: 'x'.repeat(1 << 16) }).catch((e) => e), GUARD_MS, 'ping');
  assert.ok(error instanceof BridgeExitedError, String(error));
  assert.match(error.message, /stopped reading its input \(EPIPE\)/);
  await assert.rejects(client.isPrime('97'), BridgeExitedError);
  await within(client.close({ timeoutMs: 1000 }), GUARD_MS, 'close');
});

test('a client left open does not keep node alive, but a pending job does until it ends', async () => {
  const script = `
    import { Client } from ${JSON.stringify(moduleUrl)};
    const client = await Client.spawn({ stderr: 'inherit' });
    const job = client.submit('1000000016000000063');
    job.result.then((r) => console.log('job', r.factors.map((f) => f.prime).join(' ')));
    console.log('isPrime', (await client.isPrime('97')).isPrime);
  `;
  // stderr is shared with the server (stderr: 'inherit'): 'close' comes only when the server has exited as well.
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PRIMEKIT_BIN: executable },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (text) => { stdout += text; });
  child.stderr.on('data', (text) => { stderr += text; });
  const closed = once(child, 'close');
  try {
    const [code] = await within(closed, GUARD_MS, 'the node process (and its server) to exit');
    assert.equal(code, 0, stderr);
  } finally {
    child.kill('SIGKILL');
  }
  assert.deepEqual(stdout.trim().split('\n').sort(), ['isPrime true', 'job 1000000007 1000000009']);
});

test('executable lookup: option, PRIMEKIT_BIN, PATH, then the source tree, with clear errors', async () => {
  assert.equal(findExecutable(fakeServer, {}), fakeServer);
  assert.throws(() => findExecutable('/nonexistent/primekit', {}),
    (e) => e instanceof ExecutableNotFoundError && /not an executable file/.test(e.message));
  assert.equal(findExecutable(undefined, { PRIMEKIT_BIN: fakeServer, PATH: '' }), fakeServer);
  assert.throws(() => findExecutable(undefined, { PRIMEKIT_BIN: '/nonexistent/primekit' }), /PRIMEKIT_BIN/);
  assert.equal(findExecutable(undefined, { PATH: `/nonexistent:${fakeDirectory}` }), fakeServer);
  let fromTree;
  try {
    fromTree = findExecutable(undefined, { PATH: '/nonexistent' });
  } catch (error) {
    fromTree = error;
  }
  if (fromTree instanceof Error) {
    assert.ok(fromTree instanceof ExecutableNotFoundError);
    assert.match(fromTree.message, /PRIMEKIT_BIN/);
    assert.match(fromTree.message, /swift build -c release/);
    assert.ok(fromTree.searched.includes(SOURCE_TREE_BUILD));
  } else {
    assert.equal(fromTree, SOURCE_TREE_BUILD);
  }
  await assert.rejects(Client.spawn({ executable: '/nonexistent/primekit' }), ExecutableNotFoundError);
});

test('an executable that is not a primekit server fails spawn with its exit status', async () => {
  const error = await Client.spawn({ executable: '/bin/false' }).catch((e) => e);
  assert.ok(error instanceof BridgeExitedError, String(error));
  assert.equal(error.exitCode, 1);
  assert.match(error.message, /exited with status 1/);
});
