// Replays every Tests/Vectors/*.jsonl transcript against `primekit serve` over a pipe (format: Tests/Vectors/README.md).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { executable, vectorsDirectory } from './helpers.js';

const WAIT_MS = 10_000;

/** Deep equality ignoring member order; "$any" matches any present value, "$string" any string. */
export function matches(expected, actual) {
  if (expected === '$any') return actual !== undefined;
  if (expected === '$string') return typeof actual === 'string';
  if (Array.isArray(expected)) {
    return Array.isArray(actual) && actual.length === expected.length &&
      expected.every((value, index) => matches(value, actual[index]));
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false;
    const keys = Object.keys(expected);
    return keys.length === Object.keys(actual).length &&
      keys.every((key) => Object.hasOwn(actual, key) && matches(expected[key], actual[key]));
  }
  return Object.is(expected, actual) || expected === actual;
}

/** The server side of a replay: responses in a queue, notifications in a pool, waiters woken on every message. */
class Session {
  responses = [];
  notifications = [];
  wake = null;
  stderr = '';

  constructor() {
    this.child = spawn(executable, ['serve'], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.exited = new Promise((resolve) => this.child.on('close', (code, signal) => resolve({ code, signal })));
    this.child.stdin.on('error', () => {});  // a failed write shows up as a missing response
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (text) => { this.stderr = (this.stderr + text).slice(-4000); });
    let partial = '';
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (text) => {
      const lines = (partial + text).split('\n');
      partial = lines.pop();
      for (const line of lines) {
        if (line.trim() === '') continue;
        const message = JSON.parse(line);
        if (!Array.isArray(message) && message.method !== undefined) this.notifications.push(message);
        else this.responses.push(message);
      }
      if (this.wake) this.wake();
    });
  }

  write(bytes) {
    this.child.stdin.write(bytes);
  }

  /** Waits until `take` returns something (checked now and after every message), for at most WAIT_MS. */
  async until(take, what) {
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const found = take();
      if (found !== undefined) return found;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${what}: nothing matching within ${WAIT_MS} ms${this.context()}`);
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          this.wake = null;
          resolve();
        };
      });
    }
  }

  context() {
    const seen = this.notifications.map((n) => JSON.stringify(n).slice(0, 300)).join('\n  ');
    return `\nunmatched notifications:\n  ${seen || '(none)'}\nstderr: ${this.stderr || '(empty)'}`;
  }
}

const files = readdirSync(vectorsDirectory).filter((name) => name.endsWith('.jsonl')).sort();

test('there are transcripts to replay', () => {
  assert.ok(files.length > 0, `no *.jsonl in ${vectorsDirectory}`);
});

for (const file of files) {
  test(`vector ${file}`, { timeout: 120_000 }, async () => {
    const steps = readFileSync(join(vectorsDirectory, file), 'utf8').split('\n')
      .map((line, index) => ({ line: index + 1, text: line.trim() }))
      .filter((step) => step.text !== '')
      .map((step) => ({ ...step, value: JSON.parse(step.text) }));
    const session = new Session();
    try {
      for (const { line, value } of steps) {
        const where = `${file}:${line}`;
        if ('comment' in value) continue;
        if ('send' in value) {
          session.write(JSON.stringify(value.send) + '\n');
        } else if ('sendRaw' in value) {
          session.write(value.sendRaw + '\n');
        } else if ('sendHex' in value) {
          session.write(Buffer.concat([Buffer.from(value.sendHex.replace(/\s+/g, ''), 'hex'), Buffer.from('\n')]));
        } else if ('expect' in value) {
          const response = await session.until(() => session.responses.shift(), `${where} expect`);
          assert.ok(matches(value.expect, response),
            `${where}: response differs\nexpected ${JSON.stringify(value.expect)}\nactual   ${JSON.stringify(response)}`);
        } else if ('expectNotification' in value) {
          await session.until(() => {
            const index = session.notifications.findIndex((n) => matches(value.expectNotification, n));
            return index === -1 ? undefined : session.notifications.splice(index, 1)[0];
          }, `${where} expectNotification ${JSON.stringify(value.expectNotification).slice(0, 200)}`);
        } else {
          assert.fail(`${where}: unknown step ${JSON.stringify(value)}`);
        }
      }
      session.child.stdin.end();
      const timer = setTimeout(() => session.child.kill('SIGKILL'), WAIT_MS);
      const { code, signal } = await session.exited;
      clearTimeout(timer);
      assert.equal(signal, null, `${file}: the server did not exit within ${WAIT_MS} ms of the end of its input`);
      assert.equal(code, 0, `${file}: exit status${session.context()}`);
    } finally {
      session.child.kill('SIGKILL');
    }
  });
}

test('the matcher can fail', () => {
  assert.equal(matches({ a: '$string' }, { a: 1 }), false);
  assert.equal(matches({ a: '$any' }, {}), false);
  assert.equal(matches({ a: 1 }, { a: 1, b: 2 }), false);
  assert.equal(matches([1, 2], [2, 1]), false);
  assert.equal(matches({ a: [1, { b: '$any' }] }, { a: [1, { b: null }] }), true);
});
