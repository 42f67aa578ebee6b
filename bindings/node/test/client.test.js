// Results, inputs and errors of the Client against the real `primekit serve`.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client, PrimeKitError } from '../index.js';
import { executable, within } from './helpers.js';

let client;
before(async () => {
  client = await Client.spawn({ executable });
});
after(async () => {
  await client?.close();
});

const M89 = 2n ** 89n - 1n;  // a Mersenne prime beyond 2^64

test('spawn performs initialize and keeps its answer', () => {
  assert.equal(client.server.protocolVersion, 1);
  assert.equal(client.server.protocolMinor, 4);
  assert.equal(client.server.server.name, 'primekit');
  assert.ok(client.server.capabilities.methods.includes('job/submit'));
  assert.equal(client.executable, executable);
  assert.equal(typeof client.pid, 'number');
});

test('isPrime gives the plugin-shaped result, divisors as strings', async () => {
  assert.deepEqual(await client.isPrime('6801534321'), {
    candidate: '6801534321',
    isPrime: false,
    complete: true,
    progress: 100,
    factors: ['1', '3', '41', '123', '55297027', '165891081', '2267178107', '6801534321'],
    certainty: 'proven',
  });
  const prime = await client.isPrime('1000000007');
  assert.equal(prime.isPrime, true);
  assert.deepEqual(prime.factors, []);
});

test('factor gives prime factors with exponents, big integers as strings', async () => {
  assert.deepEqual(await client.factor('600851475143'), {
    candidate: '600851475143',
    factors: [
      { prime: '71', exponent: 1, certainty: 'proven' },
      { prime: '839', exponent: 1, certainty: 'proven' },
      { prime: '1471', exponent: 1, certainty: 'proven' },
      { prime: '6857', exponent: 1, certainty: 'proven' },
    ],
    cofactor: '1',
    cofactorStatus: 'one',
    complete: true,
    isPrime: false,
    certainty: 'proven',
    mode: 'complete',
    parts: [],
  });
  const powers = await client.factor('1024');
  assert.deepEqual(powers.factors, [{ prime: '2', exponent: 10, certainty: 'proven' }]);
});

test('a candidate beyond 2^64 stays a string; its primality is probable', async () => {
  const result = await client.factor(M89.toString(), { mode: 'trial' });
  assert.equal(result.candidate, '618970019642690137449562111');
  assert.equal(result.isPrime, true);
  assert.equal(result.cofactor, '618970019642690137449562111');
  assert.equal(result.certainty, 'probable');
});

// 2^128 + 1 = 59649589127497217 · 5704689200685129054721; a product of two 40-digit primes (79 digits).
const F7 = 2n ** 128n + 1n;
const SEMIPRIME_79 = '6415960117443171388947750943700426140790669549014874900828615524789118288355107';

test('factor answers completely by default; each factor says how it is known', async () => {
  assert.deepEqual(await client.factor(F7), {
    candidate: F7.toString(),
    factors: [
      { prime: '59649589127497217', exponent: 1, certainty: 'proven' },
      { prime: '5704689200685129054721', exponent: 1, certainty: 'probable' },
    ],
    cofactor: '1',
    cofactorStatus: 'one',
    complete: true,
    isPrime: false,
    certainty: 'probable',
    mode: 'complete',
    parts: [],
  });
});

test('mode "trial" and a bound keep trial division: the remainder is classified, not split', async () => {
  const bounded = await client.factor(F7, { bound: 1000 });
  assert.equal(bounded.mode, 'trial');
  assert.equal(bounded.cofactor, F7.toString());
  assert.equal(bounded.cofactorStatus, 'composite');
  assert.deepEqual(bounded.parts, []);
  const trial = await client.factor('600851475143', { mode: 'trial' });
  assert.equal(trial.mode, 'trial');
  assert.deepEqual(trial.factors.map((f) => f.prime), ['71', '839', '1471', '6857']);
});

test('an effort limit gives the partial answer: the parts left and what was tried on them', async () => {
  const result = await client.factor(SEMIPRIME_79, { ecmDigits: 1, workLimit: 2n ** 64n - 1n });
  assert.equal(result.mode, 'complete');
  assert.equal(result.complete, false);
  assert.deepEqual(result.factors, []);
  assert.equal(result.cofactor, SEMIPRIME_79);
  assert.equal(result.parts.length, 1);
  const [part] = result.parts;
  assert.equal(part.value, SEMIPRIME_79);
  assert.equal(part.exponent, 1);
  assert.equal(part.method, 'ecm');
  assert.equal(part.ecmDigits, 15);
  assert.ok(part.curves > 0, `curves ${part.curves}`);
  for (const key of ['trialFrom', 'trialBound', 'work', 'b1', 'b2']) assert.match(part[key], /^[0-9]+$/, key);
});

test('progress says the stage: a 16-digit factor of a 56-digit number is found by ECM', async () => {
  const [p, q] = ['8651054483542753', '9537513983584714622399864022142622086501'];
  const job = client.submit((BigInt(p) * BigInt(q)).toString(), { progressIntervalMs: 1 });
  const reports = [];
  for await (const report of job.progress()) reports.push(report);
  assert.deepEqual((await job.result).factors.map((f) => f.prime), [p, q]);
  assert.ok(reports.some((r) => r.stage === 'ecm'), JSON.stringify(reports.slice(-3)));
  assert.ok(reports.every((r) => r.stageFraction >= 0 && r.stageFraction <= 1 && r.partsLeft >= 0));
});

test('bad effort options reject with the member named, and submit nothing', async () => {
  const cases = [
    [{ ecmDigits: 0 }, 'ecmDigits'],
    [{ ecmDigits: 71 }, 'ecmDigits'],
    [{ workLimit: 0n }, 'workLimit'],
    [{ timeLimitMs: 0 }, 'timeLimitMs'],
    [{ mode: 'fast' }, 'mode'],
    [{ mode: 'complete', bound: 10 }, 'mode'],
    [{ mode: 'trial', timeLimitMs: 100 }, 'timeLimitMs'],
  ];
  const before = (await client.request('job/list')).jobs.length;
  for (const [options, field] of cases) {
    const error = await client.factor('1001', options).then(() => assert.fail(`bad ${field} was accepted`), (e) => e);
    assert.ok(error instanceof PrimeKitError, String(error));
    assert.equal(error.code, -32602);
    assert.equal(error.data.field, field);
  }
  assert.equal((await client.request('job/list')).jobs.length, before);
});

test('BigInt candidates are sent as their digits', async () => {
  const result = await client.factor(600851475143n);
  assert.equal(result.candidate, '600851475143');
  assert.equal(result.factors.length, 4);
  const big = await client.isPrime(M89);
  assert.equal(big.candidate, M89.toString());
  assert.equal(big.isPrime, true);
});

test('safe-integer Numbers are accepted, up to 2^53 - 1', async () => {
  assert.equal((await client.isPrime(97)).isPrime, true);
  const result = await client.factor(Number.MAX_SAFE_INTEGER);
  assert.equal(result.candidate, '9007199254740991');
  assert.deepEqual(result.factors.map((f) => f.prime), ['6361', '69431', '20394401']);
});

test('a Number beyond 2^53 - 1 is a RangeError (it has lost digits), before anything is sent', async () => {
  await assert.rejects(client.isPrime(2 ** 53), RangeError);
  await assert.rejects(client.factor(1e21), /MAX_SAFE_INTEGER/);
  await assert.rejects(client.factor('1001', { bound: 2 ** 60 }), RangeError);
  assert.throws(() => client.submit(-(2 ** 53)), RangeError);
  const { jobs } = await client.request('job/list', { state: ['queued', 'running', 'failed'] });
  assert.deepEqual(jobs, []);
});

test('invalid candidates reject with the bridge\'s code, message and data', async () => {
  const cases = [
    ['-15', 'negative numbers are not accepted, a candidate is at least 2'],
    ['twelve', 'not a decimal number'],
    [12.5, 'not a whole number'],
    ['1', 'must be at least 2'],
  ];
  for (const [candidate, reason] of cases) {
    const error = await client.factor(candidate).then(() => assert.fail(`${candidate} was accepted`), (e) => e);
    assert.ok(error instanceof PrimeKitError, `${candidate}: ${error}`);
    assert.equal(error.code, -32602);
    assert.equal(error.message, `invalid params: candidate: ${reason}`);
    assert.equal(error.data.field, 'candidate');
    assert.equal(error.data.reason, reason);
  }
});

test('request() is the raw JSON-RPC call; errors become PrimeKitError', async () => {
  assert.deepEqual(await client.request('ping'), {});
  const error = await client.request('job/launch', {}).then(() => assert.fail('answered'), (e) => e);
  assert.ok(error instanceof PrimeKitError);
  assert.equal(error.name, 'PrimeKitError');
  assert.equal(error.code, -32601);
  assert.equal(error.method, 'job/launch');
  assert.deepEqual(error.data, { method: 'job/launch' });
  const missing = await client.request('job/status', { jobId: 'j999999' }).catch((e) => e);
  assert.equal(missing.code, 1001);
});

test('a raw job/submit resolves with the server\'s answer; its job is not tracked, its notifications still seen', async () => {
  const finished = new Promise((resolve) => {
    const listener = (method, params) => {
      if (method === 'job/finished' && params.result?.candidate === '1000000007') {
        client.off('notification', listener);
        resolve(params);
      }
    };
    client.on('notification', listener);
  });
  const answer = await client.request('job/submit', { kind: 'isPrime', candidate: '1000000007' });
  assert.deepEqual(Object.keys(answer).sort(), ['jobId', 'state']);
  assert.match(answer.jobId, /^j\d+$/);
  const params = await within(finished, 10_000, 'job/finished of the raw submission');
  assert.equal(params.jobId, answer.jobId);
  assert.equal(params.result.isPrime, true);
});

test('engine events arrive as `engine/event` after plugin/subscribe', async () => {
  assert.deepEqual(await client.subscribe(['lifecycle']), { streams: ['lifecycle'] });
  // engine/event is not ordered with the responses, so events are collected from before the requests that cause them.
  const seen = [];
  let wake = () => {};
  const onEvent = (params) => {
    seen.push(params);
    wake();
  };
  const notifications = [];
  const onNotification = (method, params) => notifications.push([method, params]);
  client.on('engine/event', onEvent);
  client.on('notification', onNotification);
  const lifecycle = (name) => within(new Promise((resolve) => {
    wake = () => seen.some((p) => p.stream === 'lifecycle' && p.event.event === name) && resolve();
    wake();
  }), 10_000, `lifecycle event ${name}`);
  try {
    await client.suspend();
    await lifecycle('suspended');
    await client.resume();
    await lifecycle('resumed');
    assert.ok(notifications.some(([method, params]) => method === 'engine/event' && params.event.event === 'resumed'));
    await client.unsubscribe(['lifecycle']);
    const count = seen.length;
    await client.suspend();
    await client.resume();
    await client.request('ping');
    assert.ok(seen.length === count || seen.slice(count).every((p) => p.stream !== 'lifecycle'),
      'no lifecycle events after unsubscribing');
  } finally {
    client.off('engine/event', onEvent);
    client.off('notification', onNotification);
  }
});

test('many requests in one tick are all answered, in order', async () => {
  const candidates = Array.from({ length: 2000 }, (_, i) => String(1_000_000 + i));
  const results = await Promise.all(candidates.map((n) => client.isPrime(n)));
  assert.deepEqual(results.map((r) => r.candidate), candidates);
  assert.equal(results.filter((r) => r.isPrime).length, 152);  // primes in [10^6, 10^6 + 2000)
});
