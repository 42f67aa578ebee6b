"""A W2-style job on Dask: one 100,000-digit candidate (planted primes below 10^7 times a large random odd
number) trial-divided up to a large bound, on a LocalCluster of 1 and of 2 worker processes (one thread each),
against the same job on one local ``primekit serve``. Each round runs the three in turn; the medians and the
same-round ratios are printed (speed-up: 1 worker / 2 workers; overhead: 1 worker / local), with the load average.

    PRIMEKIT_BIN=/path/to/primekit python bench/dask_w2.py [--digits 100000] [--bound 500000000] [--rounds 3]
        [--chunks 8] [--checkpoint-interval 0.5] [--serve-args "--workers 1"]
"""

from __future__ import annotations

import argparse
import os
import random
import shlex
import statistics
import time
from typing import Any

import distributed

import primekit.dask as pkdask
from primekit import Client, FactorResult

PLANTED = [3, 7, 9973, 104729, 1000003, 9999991]


def candidate(digits: int, seed: int) -> int:
    rng = random.Random(seed)
    planted = 1
    for prime in PLANTED:
        planted *= prime
    bits = int(digits * 3.321928094887362) - planted.bit_length()
    return planted * (rng.getrandbits(bits) | (1 << (bits - 1)) | 1)


def timed_local(client: Client, n: int, bound: int) -> tuple[float, FactorResult]:
    start = time.perf_counter()
    result = client.factor(n, bound=bound)
    return time.perf_counter() - start, result


def timed_dask(client: Any, n: int, bound: int, chunks: int, serve_args: list[str],
               interval: float) -> tuple[float, FactorResult]:
    start = time.perf_counter()
    result = pkdask.factor(n, bound=bound, chunks=chunks, client=client, serve_args=serve_args,
                           checkpoint_interval=interval)
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--digits", type=int, default=100_000)
    parser.add_argument("--bound", type=int, default=500_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--chunks", type=int, default=8, help="chunks per distributed job (both cluster sizes)")
    parser.add_argument("--serve-args", default="", help="extra `primekit serve` arguments for every bridge")
    parser.add_argument("--checkpoint-interval", type=float, default=0.5, help="seconds between chunk checkpoints")
    parser.add_argument("--seed", type=int, default=2)
    options = parser.parse_args()
    serve_args = shlex.split(options.serve_args)
    n = candidate(options.digits, options.seed)
    print(f"candidate: {options.digits} digits, planted {PLANTED}; bound {options.bound:,}; "
          f"{options.chunks} chunks; checkpoint every {options.checkpoint_interval} s; "
          f"serve args {serve_args or 'none'}; {os.cpu_count()} cores")
    load_before = os.getloadavg()
    times: dict[str, list[float]] = {"local": [], "1 worker": [], "2 workers": []}
    speedups: list[float] = []
    overheads: list[float] = []
    with Client(args=serve_args) as local, \
            distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                     dashboard_address=":0") as one, distributed.Client(one) as c1, \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     dashboard_address=":0") as two, distributed.Client(two) as c2:
        for client in (c1, c2):  # starts every worker's bridge
            pkdask.factor(1000003 * 1000033, chunks=4, client=client, serve_args=serve_args)
        reference: FactorResult | None = None
        for round_ in range(1, options.rounds + 1):
            t_local, r_local = timed_local(local, n, options.bound)
            t_one, r_one = timed_dask(c1, n, options.bound, options.chunks, serve_args, options.checkpoint_interval)
            t_two, r_two = timed_dask(c2, n, options.bound, options.chunks, serve_args, options.checkpoint_interval)
            reference = reference or r_local
            if not r_local == r_one == r_two == reference:
                raise SystemExit("the distributed results differ from the local one")
            times["local"].append(t_local)
            times["1 worker"].append(t_one)
            times["2 workers"].append(t_two)
            speedups.append(t_one / t_two)
            overheads.append(t_one / t_local)
            print(f"round {round_}: local {t_local:.2f} s, 1 worker {t_one:.2f} s, 2 workers {t_two:.2f} s; "
                  f"speed-up {t_one / t_two:.2f}, overhead {t_one / t_local:.2f}", flush=True)
    load_after = os.getloadavg()
    assert reference is not None
    print(f"found: {[f['prime'] for f in reference['factors']]}, cofactor {reference['cofactorStatus']}")
    for name, values in times.items():
        print(f"median {name}: {statistics.median(values):.2f} s")
    print(f"median speed-up 2 workers vs 1: {statistics.median(speedups):.2f}")
    print(f"median overhead 1 worker vs local: {statistics.median(overheads):.2f}")
    print(f"load average before: {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}; "
          f"after: {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}")


if __name__ == "__main__":
    main()
