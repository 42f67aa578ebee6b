// Jobs: progress, pause/checkpoint/resumeFrom, cancel, AbortSignal, dependencies, queue suspend/resume.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import { AbortError, Client, Job, JobCancelledError, PrimeKitError } from '../index.js';
import { assertUnsplitRsa100, executable, RSA_100, SLOW_PRIME, within } from './helpers.js';

const GUARD_MS = 30_000;
/** Running time of the RSA-100 jobs that are paused while they run: far longer than a pause takes to land after the
 * first progress notification, even on a loaded machine (the time spent paused does not count). */
const PAUSABLE_MS = 3000;
let client;
before(async () => {
  client = await Client.spawn({ executable });
});
after(async () => {
  await client?.close();
});

/** Runs `body` with the server's queue suspended (nothing starts), resuming it afterwards whatever happens. */
async function suspended(body) {
  assert.deepEqual(await client.suspend(), { state: 'suspended' });
  try {
    return await body();
  } finally {
    await client.resume();
  }
}

test('submit returns a Job at once; its id comes with the response', async () => {
  const job = client.submit('1001');
  assert.ok(job instanceof Job);
  assert.equal(job.id, null);
  assert.equal(job.state, 'submitting');
  const id = await job.accepted;
  assert.match(id, /^j\d+$/);
  assert.equal(job.id, id);
  const result = await job.result;
  assert.deepEqual(result.factors.map((f) => f.prime), ['7', '11', '13']);
  assert.equal(job.state, 'succeeded');
  assert.equal(job.ended, true);
});

test('the progress iterator yields job/progress and ends when the job ends', async () => {
  // 300 ms of running time in slices of 10 ms: progress notifications come whatever the machine's speed.
  const job = client.submit(RSA_100, { timeLimitMs: 300, progressIntervalMs: 10 });
  const events = [];
  job.on('progress', (p) => events.push(p.seq));
  const seen = [];
  await within((async () => {
    for await (const progress of job.progress()) {
      assert.equal(progress.jobId, job.id);
      seen.push(progress);
    }
  })(), GUARD_MS, 'progress iterator');
  // The loop ended: the job must have ended too, successfully (the time limit gives a partial answer).
  assert.equal(job.ended, true);
  assert.equal(job.state, 'succeeded');
  assertUnsplitRsa100(await job.result);
  assert.ok(seen.length >= 1, 'at least one progress notification in a job of 300 ms at 10 ms');
  for (let i = 1; i < seen.length; i += 1) assert.ok(seen[i].seq > seen[i - 1].seq, 'seq increases');
  assert.deepEqual(events, seen.map((p) => p.seq), 'the event and the iterator see the same notifications');
  // An iterator made after the end is done at once.
  assert.deepEqual(await job.progress().next(), { value: undefined, done: true });
});

test('a progress iterator also ends when the job is cancelled, and can be left early', async () => {
  await suspended(async () => {
    const job = client.submit(SLOW_PRIME, { mode: 'trial' });
    const iterator = job.progress();
    const early = job.progress();
    await job.accepted;
    assert.equal(job.state, 'queued');
    assert.deepEqual(await early.return(), { value: undefined, done: true });
    const pending = iterator.next();
    await job.cancel();
    assert.deepEqual(await within(pending, GUARD_MS, 'iterator end'), { value: undefined, done: true });
    await assert.rejects(job.result, JobCancelledError);
  });
});

test('pause gives a checkpoint; resumeFrom in a second client finishes with the same result', async () => {
  // A complete job that ends only by its time limit: it is still running when the pause lands.
  const job = client.submit(RSA_100, { timeLimitMs: PAUSABLE_MS, progressIntervalMs: 1 });
  let progress;
  await within((async () => {
    for await (progress of job.progress()) if (progress.progress > 0) break;  // past trial division, into ECM
  })(), GUARD_MS, 'progress above 0');
  assert.equal(progress.state, 'running');
  const paused = await job.pause();
  assert.equal(paused.state, 'paused');
  assert.equal(paused.jobId, job.id);
  assert.equal(typeof paused.checkpoint, 'string');
  assert.equal(job.checkpoint, paused.checkpoint);
  assert.equal(job.state, 'paused');
  const status = await job.status();
  assert.equal(status.state, 'paused');
  assert.equal(status.checkpoint, paused.checkpoint);
  assert.ok(status.progress > 0 && status.progress < 100, `paused mid-way (progress ${status.progress})`);

  // The checkpoint keeps the time limit and the running time so far: a second client finishes the job, and so
  // does the paused original when it goes on where it stopped.
  const other = await Client.spawn({ executable });
  try {
    const resumed = other.resumeFrom(paused.checkpoint, { progressIntervalMs: 1 });
    await job.resume();
    const [copy, original] = await within(Promise.all([resumed.result, job.result]), GUARD_MS, 'resumed jobs');
    assertUnsplitRsa100(copy);
    assertUnsplitRsa100(original);
  } finally {
    await other.close();
  }
});

test('cancel: the result rejects with JobCancelledError carrying the server\'s checkpoint', async () => {
  await suspended(async () => {
    const job = client.submit(SLOW_PRIME, { mode: 'trial' });
    const answer = await job.cancel();
    assert.equal(answer.state, 'cancelled');
    assert.equal(typeof answer.checkpoint, 'string');
    const error = await job.result.then(() => assert.fail('resolved'), (e) => e);
    assert.ok(error instanceof JobCancelledError);
    assert.equal(error.name, 'JobCancelledError');
    assert.equal(error.jobId, job.id);
    assert.equal(error.reason, 'cancelled');
    assert.equal(typeof error.checkpoint, 'string');
    assert.ok(error.checkpoint.length > 0);
    assert.equal(job.state, 'cancelled');
    // The checkpoint is a real one: another submission resumes from it.
    const again = client.resumeFrom(error.checkpoint);
    assert.match(await again.accepted, /^j\d+$/);
    await again.cancel();
    await assert.rejects(again.result, JobCancelledError);
    // A finished job cannot be paused: the server says why.
    await assert.rejects(job.pause(), (e) => e instanceof PrimeKitError && e.code === 1002);
  });
});

test('an invalid checkpoint rejects with the bridge\'s 1003', async () => {
  const job = client.resumeFrom('primekit-checkpoint 1\ngarbage\n');
  const error = await job.result.catch((e) => e);
  assert.ok(error instanceof PrimeKitError);
  assert.equal(error.code, 1003);
  await assert.rejects(job.accepted, PrimeKitError);
});

test('AbortSignal already aborted: rejects with AbortError and nothing is submitted', async () => {
  const before = (await client.request('job/list')).jobs.length;
  const reason = new Error('no longer needed');
  const error = await client.isPrime('97', { signal: AbortSignal.abort(reason) }).catch((e) => e);
  assert.ok(error instanceof AbortError);
  assert.equal(error.name, 'AbortError');
  assert.equal(error.reason, reason);
  assert.equal(error.cause, reason);
  assert.equal((await client.request('job/list')).jobs.length, before);
});

test('AbortSignal after acceptance cancels the job on the server', async () => {
  await suspended(async () => {
    const controller = new AbortController();
    const job = client.submit(SLOW_PRIME, { mode: 'trial', signal: controller.signal });
    await job.accepted;
    const finished = once(job, 'finished');
    controller.abort('user left');
    const error = await job.result.catch((e) => e);
    assert.ok(error instanceof AbortError);
    assert.equal(error.reason, 'user left');
    assert.equal(error.jobId, job.id);
    const [params] = await within(finished, GUARD_MS, 'job/finished');
    assert.equal(params.state, 'cancelled');
    assert.equal(job.state, 'cancelled');
    assert.equal((await job.status()).state, 'cancelled');
  });
});

test('AbortSignal before the submission is answered still cancels the job', async () => {
  await suspended(async () => {
    const controller = new AbortController();
    const job = client.submit(SLOW_PRIME, { mode: 'trial', signal: controller.signal });
    controller.abort();
    const error = await job.result.catch((e) => e);
    assert.ok(error instanceof AbortError);
    assert.equal(error.reason.name, 'AbortError');  // the default reason of abort()
    await within(once(job, 'finished'), GUARD_MS, 'job/finished');
    assert.equal(job.state, 'cancelled');
  });
});

test('dependsOn: a job waits (pending) for the jobs it names, Job objects or ids', async () => {
  const order = [];
  const [a, b, c] = await suspended(async () => {
    const a = client.submit('1000000016000000063');
    const b = client.submit('1000000007', { kind: 'isPrime', dependsOn: [a] });  // a's id is not known yet
    await b.accepted;
    const c = client.submit('101', { kind: 'isPrime', dependsOn: [a.id, b.id] });
    await c.accepted;
    assert.equal(a.state, 'queued');
    assert.equal(b.state, 'pending');
    assert.equal(c.state, 'pending');
    assert.deepEqual((await b.status()).dependsOn, [a.id]);
    for (const [name, job] of [['a', a], ['b', b], ['c', c]]) job.result.then(() => order.push(name));
    return [a, b, c];
  });
  await within(Promise.all([a.result, b.result, c.result]), GUARD_MS, 'dependent jobs');
  assert.deepEqual(order, ['a', 'b', 'c']);
});

test('dependsOn a cancelled job: the dependent job is cancelled too', async () => {
  await suspended(async () => {
    const a = client.submit(SLOW_PRIME, { mode: 'trial' });
    const b = client.submit('97', { kind: 'isPrime', dependsOn: [a] });
    await b.accepted;
    await a.cancel();
    const error = await within(b.result.catch((e) => e), GUARD_MS, 'dependent job');
    assert.ok(error instanceof JobCancelledError);
    assert.match(error.reason, new RegExp(`dependency ${a.id}`));
  });
});

test('dependsOn a job whose submission failed fails without submitting', async () => {
  const a = client.submit('-4');
  const b = client.submit('97', { kind: 'isPrime', dependsOn: [a] });
  await assert.rejects(b.result, (e) => e instanceof PrimeKitError && e.code === -32602);
  assert.equal(b.id, null);
});

test('suspend and resume: jobs wait queued, then run', async () => {
  const job = await suspended(async () => {
    const job = client.submit('1001', { priority: 'high' });
    await job.accepted;
    assert.equal(job.state, 'queued');
    assert.equal((await job.status()).state, 'queued');
    assert.equal(job.ended, false);
    return job;
  });
  assert.deepEqual((await within(job.result, GUARD_MS, 'job after resume')).factors.length, 3);
});

test('priority and progressIntervalMs are passed through; the server checks them', async () => {
  const error = await client.isPrime('97', { priority: 'urgent' }).catch((e) => e);
  assert.ok(error instanceof PrimeKitError);
  assert.equal(error.data.field, 'priority');
  const interval = await client.isPrime('97', { progressIntervalMs: 0 }).catch((e) => e);
  assert.equal(interval.data.field, 'progressIntervalMs');
  assert.equal((await client.isPrime('97', { priority: 4, progressIntervalMs: 5 })).isPrime, true);
});
