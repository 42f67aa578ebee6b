"""A W2-style job on Dask: one 100,000-digit candidate (planted primes below 10^7 times a large random odd
number) trial-divided up to 10^9, on a LocalCluster of 1 and of 2 worker processes (one thread each, each worker's
bridge with ``--workers 1``: one core per Dask worker), against the same job on one local ``primekit serve`` with
its default workers (all the machine's cores). The chunk count is primekit.dask's default unless ``--chunks``.

The machine may be shared: before the first round the script waits (polling ``/proc/loadavg``, at most
``--max-wait`` seconds) until the 1-minute load average is at most ``--quiet-load``. The rounds interleave the
three runs, in a rotating order; the medians and the same-round ratios are printed (speed-up: 1 worker / 2
workers; against local: local / 2 workers), with the load average of each round.

    PRIMEKIT_BIN=/path/to/primekit python bench/dask_w2.py [--digits 100000] [--bound 1000000000] [--rounds 3]
        [--chunks N] [--serve-args "--workers 1"] [--local-serve-args ""] [--quiet-load 1.0] [--max-wait 600]
"""

from __future__ import annotations

import argparse
import os
import random
import shlex
import statistics
import time
from collections.abc import Callable
from typing import Any

import distributed

import primekit.dask as pkdask
from primekit import Client, FactorResult
from _quiet import wait_and_say

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


def timed_dask(client: Any, n: int, bound: int, chunks: int | None, serve_args: list[str],
               interval: float) -> tuple[float, FactorResult]:
    start = time.perf_counter()
    result = pkdask.factor(n, bound=bound, chunks=chunks, client=client, serve_args=serve_args,
                           checkpoint_interval=interval)
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--digits", type=int, default=100_000)
    parser.add_argument("--bound", type=int, default=1_000_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--chunks", type=int, default=None,
                        help="chunks per distributed job (default: primekit.dask's own choice)")
    parser.add_argument("--serve-args", default="--workers 1",
                        help="extra `primekit serve` arguments for the Dask workers' bridges")
    parser.add_argument("--local-serve-args", default="",
                        help="extra `primekit serve` arguments for the local baseline's bridge")
    parser.add_argument("--quiet-load", type=float, default=1.0,
                        help="wait until the 1-minute load average is at most this before the first round")
    parser.add_argument("--max-wait", type=float, default=600, help="wait at most this many seconds for it")
    parser.add_argument("--checkpoint-interval", type=float, default=0.5, help="seconds between chunk checkpoints")
    parser.add_argument("--seed", type=int, default=2)
    options = parser.parse_args()
    serve_args = shlex.split(options.serve_args)
    local_args = shlex.split(options.local_serve_args)
    n = candidate(options.digits, options.seed)
    print(f"candidate: {options.digits} digits, planted {PLANTED}; bound {options.bound:,}; "
          f"chunks {options.chunks or 'default'}; checkpoint every {options.checkpoint_interval} s; "
          f"Dask bridges' serve args {serve_args or 'none'}; local serve args {local_args or 'none'}; "
          f"{os.cpu_count()} cores", flush=True)
    wait_and_say(options.quiet_load, options.max_wait)
    load_before = os.getloadavg()
    times: dict[str, list[float]] = {"local": [], "1 worker": [], "2 workers": []}
    speedups: list[float] = []
    against_local: list[float] = []
    loads: list[float] = []
    with Client(args=local_args) as local, \
            distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                     dashboard_address=":0") as one, distributed.Client(one) as c1, \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     dashboard_address=":0") as two, distributed.Client(two) as c2:
        for client in (c1, c2):  # starts every worker's bridge
            pkdask.factor(1000003 * 1000033, chunks=4, client=client, serve_args=serve_args)
        reference: FactorResult | None = None
        runs: dict[str, Callable[[], tuple[float, FactorResult]]] = {
            "local": lambda: timed_local(local, n, options.bound),
            "1 worker": lambda: timed_dask(c1, n, options.bound, options.chunks, serve_args,
                                           options.checkpoint_interval),
            "2 workers": lambda: timed_dask(c2, n, options.bound, options.chunks, serve_args,
                                            options.checkpoint_interval),
        }
        names = list(runs)
        for round_ in range(1, options.rounds + 1):
            order = names[round_ - 1:] + names[:round_ - 1]  # each run goes first in turn
            took: dict[str, float] = {}
            for name in order:
                took[name], result = runs[name]()
                reference = reference or result
                if result != reference:
                    raise SystemExit(f"the {name} result differs from the others")
                times[name].append(took[name])
            t_local, t_one, t_two = took["local"], took["1 worker"], took["2 workers"]
            speedups.append(t_one / t_two)
            against_local.append(t_local / t_two)
            loads.append(os.getloadavg()[0])
            print(f"round {round_} ({', '.join(order)}): local {t_local:.2f} s, 1 worker {t_one:.2f} s, "
                  f"2 workers {t_two:.2f} s; speed-up {t_one / t_two:.2f}, 2 workers vs local "
                  f"{t_local / t_two:.2f}; load average {loads[-1]:.2f}", flush=True)
    load_after = os.getloadavg()
    assert reference is not None
    print(f"found: {[f['prime'] for f in reference['factors']]}, cofactor {reference['cofactorStatus']}")
    for name, values in times.items():
        print(f"median {name}: {statistics.median(values):.2f} s")
    print(f"median speed-up 2 workers vs 1: {statistics.median(speedups):.2f}")
    print(f"median local / 2 workers: {statistics.median(against_local):.2f}")
    print(f"median load average (1 min) after each round: {statistics.median(loads):.2f}")
    print(f"load average before: {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}; "
          f"after: {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}")


if __name__ == "__main__":
    main()
