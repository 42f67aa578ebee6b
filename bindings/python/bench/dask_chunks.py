"""The constants behind primekit.dask's default chunking and docs/scaling.md, measured on LocalClusters of 1 and
2 worker processes (one thread each, every bridge with ``--workers 1``: one core per worker).

- Dask's own cost per task: trivial tasks, in a batch (throughput) and one after the other (round trip).
- Candidate distribution: the client's int-to-decimal conversion, ``Variable.set`` of the decimal text, and a
  worker's ``Variable.get`` of it (alone, and all workers at once), for each candidate length.
- Per-chunk fixed cost: distributed jobs of C tiny chunks (a few thousand divisors each) for several C; the
  slope of the job's time against C/workers is the cost of one chunk (dispatch, the bridge's job creation on the
  piece checkpoint, its result and final checkpoint, the events), the intercept the job's serial part (the
  bridge's split, the merge on a bridge).
- Throughput per chunk: jobs of one chunk per worker, each ``width`` divisors wide, starting at 2 and ending at
  2^32; rate = width / (time - the tiny job's time with as many chunks).
- The bridge's split of a job into 8 pieces (checkpoint/split) and its merge of their final checkpoints into the
  answer (checkpoint/merge).

    PRIMEKIT_BIN=/path/to/primekit python bench/dask_chunks.py [--digits 100000 1000000] [--reps 3]

Prints one line per measurement and a summary of the constants; ``--json FILE`` also writes them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

import distributed
from distributed import Variable

import primekit.dask as pkdask
from primekit import _numbers

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dask_w2 import PLANTED, candidate  # noqa: E402

SERVE_ARGS = ["--workers", "1"]
# The top of the range where the throughput is also measured: the largest divisor a long candidate is trial-divided
# by today (above 2^32 the engine fails on multi-word candidates), and the closest to the 10^11 of docs/scaling.md.
HIGH = 2**32


def _noop(i: int) -> int:
    return i


def _fetch(name: str) -> tuple[float, int]:
    """On a worker: how long reading a Variable takes, and the length of what it holds."""
    start = time.perf_counter()
    text = Variable(name).get(timeout=60)
    return time.perf_counter() - start, len(text)


def median_of(reps: int, run: Callable[[], float]) -> tuple[float, list[float]]:
    values = [run() for _ in range(reps)]
    return statistics.median(values), values


def fit(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least-squares line: (intercept, slope)."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - slope * mx, slope


def job_time(client: Any, n: int, from_: int, bound: int, chunks: int) -> float:
    start = time.perf_counter()
    pkdask.factor(n, from_=from_, bound=bound, chunks=chunks, client=client, serve_args=SERVE_ARGS)
    return time.perf_counter() - start


def task_overhead(client: Any, reps: int) -> dict[str, float]:
    count = 1000
    def batch() -> float:
        start = time.perf_counter()
        client.gather(client.map(_noop, range(count), pure=False))
        return (time.perf_counter() - start) / count
    def round_trip() -> float:
        start = time.perf_counter()
        for i in range(50):
            client.submit(_noop, i, pure=False).result()
        return (time.perf_counter() - start) / 50
    per_task, _ = median_of(reps, batch)
    latency, _ = median_of(reps, round_trip)
    return {"per_task_batch_s": per_task, "round_trip_s": latency}


def distribution(client: Any, n: int, workers: int, reps: int) -> dict[str, float]:
    start = time.perf_counter()
    text = _numbers.to_decimal(n)
    to_decimal = time.perf_counter() - start
    sets: list[float] = []
    gets: list[float] = []
    gets_all: list[float] = []
    for _ in range(reps):
        name = f"primekit-bench-{uuid.uuid4().hex[:8]}"
        variable = Variable(name, client=client)
        start = time.perf_counter()
        variable.set(text)
        sets.append(time.perf_counter() - start)
        took, length = client.submit(_fetch, name, pure=False).result()
        assert length == len(text)
        gets.append(took)
        addresses = list(client.scheduler_info()["workers"])
        start = time.perf_counter()
        client.gather([client.submit(_fetch, name, pure=False, workers=[a]) for a in addresses])
        gets_all.append(time.perf_counter() - start)
        variable.delete()
    return {"to_decimal_s": to_decimal, "variable_set_s": statistics.median(sets),
            "worker_get_s": statistics.median(gets), f"all_{workers}_workers_get_s": statistics.median(gets_all)}


def _split_and_merge(text: str, pieces: int, reps: int) -> dict[str, float]:
    """On a worker: the bridge's checkpoint/split of the job into ``pieces`` pieces of 2,000 divisors, and its
    checkpoint/merge of their final checkpoints into the answer (medians of ``reps``)."""
    bridge = pkdask.worker_bridge(None, SERVE_ARGS)
    params = {"candidate": text, "bound": str(2 + pieces * 2000 - 1), "pieces": pieces}
    splits: list[float] = []
    merges: list[float] = []
    for _ in range(reps):
        start = time.perf_counter()
        plan = bridge.request("checkpoint/split", params)
        splits.append(time.perf_counter() - start)
        finals = [bridge._submit({"checkpoint": piece["checkpoint"], "finalCheckpoint": True}).result()["checkpoint"]
                  for piece in plan["pieces"]]
        start = time.perf_counter()
        bridge.request("checkpoint/merge", {"pieces": finals})
        merges.append(time.perf_counter() - start)
    return {"split_s": statistics.median(splits), "merge_s": statistics.median(merges)}


def split_and_merge(client: Any, n: int, reps: int) -> dict[str, float]:
    """The bridge's cut of a job into 8 pieces and its merge of them, in one task on a worker."""
    result: dict[str, float] = client.submit(_split_and_merge, _numbers.to_decimal(n), 8, reps, pure=False).result()
    return result


def chunk_costs(client: Any, n: int, workers: int, multiples: list[int], width: int, reps: int) -> dict[str, Any]:
    tiny = 2000  # divisors per tiny chunk
    xs: list[float] = []
    ys: list[float] = []
    for multiple in multiples:
        chunks = multiple * workers
        took, values = median_of(reps, lambda: job_time(client, n, 2, 2 + chunks * tiny, chunks))
        print(f"  {workers} worker(s): {chunks} tiny chunks: {took:.3f} s (rounds {', '.join(f'{v:.3f}' for v in values)})",
              flush=True)
        xs.append(multiple)
        ys.append(took)
    intercept, slope = fit(xs, ys)
    base = intercept + slope  # a tiny job of one chunk per worker
    rates: dict[str, float] = {}
    for label, start in (("from 2", 2), ("near 2^32", HIGH - workers * width)):
        took, values = median_of(max(1, reps - 1),
                                 lambda: job_time(client, n, start, start + workers * width - 1, workers))
        rates[label] = width / max(took - base, 1e-9)
        print(f"  {workers} worker(s): {workers} chunk(s) of {width:,} divisors {label}: {took:.3f} s "
              f"(rounds {', '.join(f'{v:.3f}' for v in values)}): {rates[label]:.3e} divisors/s per chunk", flush=True)
    return {"serial_s": intercept, "fixed_per_chunk_s": slope, "tiny_job_s": dict(zip(xs, ys)),
            "rate_from_2": rates["from 2"], "rate_near_2_32": rates["near 2^32"], "width": width}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--digits", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--width", type=int, default=200_000_000, help="divisors per chunk in the rate jobs")
    parser.add_argument("--json", help="also write the constants to this file")
    options = parser.parse_args()
    candidates = {digits: candidate(digits, 2) for digits in options.digits}
    results: dict[str, Any] = {"cores": os.cpu_count(), "load_before": os.getloadavg()}
    print(f"{os.cpu_count()} cores; load average {results['load_before']}", flush=True)
    for workers in options.workers:
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                      dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
            pkdask.factor(1000003 * 1000033, chunks=2 * workers, client=client, serve_args=SERVE_ARGS)  # bridges up
            entry: dict[str, Any] = {"tasks": task_overhead(client, options.reps)}
            print(f"{workers} worker(s): Dask per task {entry['tasks']}", flush=True)
            for digits, n in candidates.items():
                part: dict[str, Any] = {"distribution": distribution(client, n, workers, options.reps)}
                print(f" {digits} digits: distribution {part['distribution']}", flush=True)
                part["merge"] = split_and_merge(client, n, options.reps)
                print(f" {digits} digits: merge {part['merge']}", flush=True)
                big = digits > 300_000
                part["chunks"] = chunk_costs(client, n, workers, [1, 3] if big else [1, 4, 8],
                                             options.width, 1 if big else options.reps)
                print(f" {digits} digits, {workers} worker(s): serial {part['chunks']['serial_s']:.3f} s, "
                      f"fixed per chunk {part['chunks']['fixed_per_chunk_s']:.3f} s, "
                      f"rate {part['chunks']['rate_from_2']:.3e} (from 2) / "
                      f"{part['chunks']['rate_near_2_32']:.3e} (near 2^32) divisors/s", flush=True)
                entry[str(digits)] = part
            results[f"{workers} workers"] = entry
    results["load_after"] = os.getloadavg()
    print(f"load average after {results['load_after']}")
    print(json.dumps(results, indent=1))
    if options.json:
        with open(options.json, "w") as file:
            json.dump(results, file, indent=1)


if __name__ == "__main__":
    main()
