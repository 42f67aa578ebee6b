// client.factorRange(): blocks in order against trial division, the credit window, early exit, refused ranges.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client, JobCancelledError, PrimeKitError } from '../index.js';
import { executable, within } from './helpers.js';

/** The factor command's line of n, by trial division. */
function oracleLine(n) {
  let line = `${n}:`;
  let rest = n;
  for (let divisor = 2n; divisor * divisor <= rest; divisor += divisor === 2n ? 1n : 2n) {
    while (rest % divisor === 0n) {
      line += ` ${divisor}`;
      rest /= divisor;
    }
  }
  if (rest > 1n) line += ` ${rest}`;
  return line;
}

test('factorRange yields every line in order, equal to trial division, and a summary', async () => {
  const client = await Client.spawn({ executable });
  try {
    const range = client.factorRange(2, 40000n);
    const lines = [];
    for await (const block of range) {
      assert.equal(block.first, String(2 + lines.length));
      lines.push(...block.lines);
    }
    assert.equal(lines.length, 39999);
    for (let n = 2n; n <= 40000n; n += 1n) assert.equal(lines[Number(n - 2n)], oracleLine(n));
    assert.deepEqual(await range.result, { first: '2', last: '40000', count: '39999', primeCount: '4203' });
  } finally {
    await client.close();
  }
});

test('a reader that stops asking gets no more than the credit window, and leaving the loop cancels', async () => {
  const client = await Client.spawn({ executable });
  try {
    const blocks = [];
    let reached = null;  // {count, resolve}: resolved once `count` blocks have arrived
    client.on('notification', (method, params) => {
      if (method !== 'job/rangeBlock') return;
      blocks.push(params.seq);
      if (reached !== null && blocks.length >= reached.count) reached.resolve();
    });
    const arrived = (count) => new Promise((resolve) => {
      if (blocks.length >= count) resolve();
      else reached = { count, resolve };
    });
    const range = client.factorRange('1000000000000', '1010000000000');
    const iterator = range[Symbol.asyncIterator]();
    const firstBlock = await within(iterator.next(), 10_000, 'the first block');
    assert.equal(firstBlock.value.first, '1000000000000');
    // Nothing acknowledged: the server sends blocks 1-4 and then waits. A ping answered after block 4 arrived shows
    // no fifth one came before it (block n + 4 goes out only after the acknowledgement of block n).
    await within(arrived(4), 10_000, 'four blocks');
    await client.request('ping');
    assert.deepEqual(blocks, [1, 2, 3, 4]);
    // Asking for the next block acknowledges block 1: block 5 follows.
    await iterator.next();
    await within(arrived(5), 10_000, 'block 5');
    await client.request('ping');
    assert.deepEqual(blocks, [1, 2, 3, 4, 5]);
    await iterator.return();
    await assert.rejects(range.result, JobCancelledError);
  } finally {
    await client.close();
  }
});

test('a refused range rejects its result and its iterator', async () => {
  const client = await Client.spawn({ executable });
  try {
    const range = client.factorRange('10', '2');
    await assert.rejects(range.result, (error) => error instanceof PrimeKitError && error.code === -32602);
    await assert.rejects(async () => {
      for await (const block of range) assert.fail(`no block expected, got ${block.first}`);
    }, PrimeKitError);
    const above = client.factorRange('2', '340282366920938463463374607431768211458'); // 2^128 + 1 numbers
    await assert.rejects(above.result, (error) => error.data?.field === 'last');
  } finally {
    await client.close();
  }
});
