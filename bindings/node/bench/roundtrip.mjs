// isPrime round trips per second through the binding: sequential (await each) and pipelined (submit them all, then
// await all), median of 5 runs each. A third figure, the same pipelined load written straight to a `primekit serve`
// pipe with no client logic (count the job/finished lines), is the server's own ceiling on this machine.
//
//   node bench/roundtrip.mjs [--sequential N] [--pipelined N] [--runs N]
//
// The executable is found like Client.spawn does (PRIMEKIT_BIN, PATH, the source tree's release build).
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Client, findExecutable } from '../index.js';

const { values } = parseArgs({
  options: {
    sequential: { type: 'string', default: '5000' },
    pipelined: { type: 'string', default: '100000' },
    runs: { type: 'string', default: '5' },
    raw: { type: 'boolean', default: true },
  },
  allowNegative: true,
});
const SEQUENTIAL = Number(values.sequential);
const PIPELINED = Number(values.pipelined);
const RUNS = Number(values.runs);

// Small candidates, so that the work per job is negligible and the figure is the round trip.
const CANDIDATES = Array.from({ length: 1024 }, (_, i) => String(1_000_000 + i));

function median(numbers) {
  const sorted = [...numbers].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const format = (rate) => `${Math.round(rate).toLocaleString('en-US')}/s`;

async function sequential(client, count) {
  const start = performance.now();
  for (let i = 0; i < count; i += 1) await client.isPrime(CANDIDATES[i & 1023]);
  return count / ((performance.now() - start) / 1000);
}

/** Microseconds of this process's CPU per pipelined round trip, over all pipelined runs. */
let pipelinedCpu = 0;
let pipelinedCount = 0;

async function pipelined(client, count) {
  const cpu = process.cpuUsage();
  const start = performance.now();
  const results = new Array(count);
  for (let i = 0; i < count; i += 1) results[i] = client.isPrime(CANDIDATES[i & 1023]);
  await Promise.all(results);
  const rate = count / ((performance.now() - start) / 1000);
  const used = process.cpuUsage(cpu);
  pipelinedCpu += used.user + used.system;
  pipelinedCount += count;
  return rate;
}

const request = (i) =>
  `{"jsonrpc":"2.0","id":${i + 1},"method":"job/submit","params":{"kind":"isPrime","candidate":"${CANDIDATES[i & 1023]}"}}\n`;

/**
 * The same load with no client logic: counts `job/finished` lines in the raw output. Pipelined: every request in one
 * write. Sequential: the next request is written when the previous job's `job/finished` has been read.
 */
function rawPipe(executable, count, mode) {
  return new Promise((resolve, reject) => {
    const child = spawn(executable, ['serve'], { stdio: ['pipe', 'pipe', 'ignore'] });
    const marker = '"method":"job/finished"';
    let finished = 0;
    let sent = 0;
    let carry = '';
    let start;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      const text = carry + chunk;
      for (let at = text.indexOf(marker); at !== -1; at = text.indexOf(marker, at + 1)) finished += 1;
      carry = text.slice(-(marker.length - 1));
      if (finished === count) {
        const rate = count / ((performance.now() - start) / 1000);
        child.stdin.end();
        child.once('close', () => resolve(rate));
      } else if (mode === 'sequential' && finished === sent) {
        child.stdin.write(request(sent++));
      }
    });
    child.once('error', reject);
    child.once('spawn', () => {
      start = performance.now();
      if (mode === 'sequential') {
        child.stdin.write(request(sent++));
      } else {
        let input = '';
        for (let i = 0; i < count; i += 1) input += request(i);
        child.stdin.write(input);
      }
    });
  });
}

const client = await Client.spawn();
console.log(`primekit ${client.server.server.version} at ${client.executable}; node ${process.version}`);
console.log(`runs: ${RUNS}; sequential: ${SEQUENTIAL} round trips; pipelined: ${PIPELINED} submissions`);

// Warm up both paths (JIT, server threads).
await sequential(client, Math.min(2000, SEQUENTIAL));
await pipelined(client, Math.min(20000, PIPELINED));
pipelinedCpu = 0;
pipelinedCount = 0;

const sequentialRates = [];
const pipelinedRates = [];
for (let run = 0; run < RUNS; run += 1) {
  sequentialRates.push(await sequential(client, SEQUENTIAL));
  pipelinedRates.push(await pipelined(client, PIPELINED));
  console.log(`run ${run + 1}: sequential ${format(sequentialRates.at(-1))}, pipelined ${format(pipelinedRates.at(-1))}`);
}
await client.close();

const seq = median(sequentialRates);
const pipe = median(pipelinedRates);
console.log(`sequential median: ${format(seq)}`);
console.log(`pipelined median:  ${format(pipe)}`);
console.log(`ratio pipelined/sequential: ${(pipe / seq).toFixed(1)}x`);
const perTrip = pipelinedCpu / pipelinedCount;
console.log(`node CPU per pipelined round trip: ${perTrip.toFixed(1)} µs ` +
  `(the client alone could do about ${format(1e6 / perTrip)})`);

if (values.raw) {
  const executable = findExecutable(undefined);
  const rawSequential = [];
  const rawPipelined = [];
  for (let run = 0; run < RUNS; run += 1) {
    rawSequential.push(await rawPipe(executable, SEQUENTIAL, 'sequential'));
    rawPipelined.push(await rawPipe(executable, PIPELINED, 'pipelined'));
  }
  const rawSeq = median(rawSequential);
  const rawPipe_ = median(rawPipelined);
  console.log('the same load on a bare pipe (no client logic; the server\'s ceiling here):');
  console.log(`  raw sequential median: ${format(rawSeq)} (the binding reaches ${((seq / rawSeq) * 100).toFixed(0)}%)`);
  console.log(`  raw pipelined median:  ${format(rawPipe_)} (the binding reaches ${((pipe / rawPipe_) * 100).toFixed(0)}%)`);
}
