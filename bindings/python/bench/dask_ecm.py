"""A complete factorization whose ECM curves run as shares over Dask: a 60-digit product of a 25-digit and a
35-digit prime (one pair per seed), factored by ``primekit.dask.factor`` on a LocalCluster of 1 and of 2 worker
processes (one thread each, each worker's bridge with ``--workers 1``: one core per Dask worker), and by one local
``primekit serve`` with its default workers (all the machine's cores, sharing the curves between its own threads)
as a reference. With 2 workers the curves of each ECM pass run as 2 shares; with 1 the job runs whole.

The machine may be shared: before the first seed the script waits (polling ``/proc/loadavg``, at most
``--max-wait`` seconds) until the 1-minute load average is at most ``--quiet-load``. For each seed the three runs
follow each other in a rotating order; the per-seed ratios are of the same seed, and the medians are printed,
with the 2-worker runs' time in rounds of shares (ECM) and in the rest (trial division, the quadratic sieve).

    PRIMEKIT_BIN=/path/to/primekit python bench/dask_ecm.py [--seeds 5] [--digits 60] [--factor-digits 25]
        [--quiet-load 2.0] [--max-wait 300]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

import distributed

import primekit.dask as pkdask
from _quiet import wait_and_say
from primekit import Client, FactorResult

SERVE_ARGS = ["--workers", "1"]


def prime_of(digits: int, rng: random.Random, client: Client) -> int:
    """The first prime from a random odd number of ``digits`` digits on (the tool's primality test decides)."""
    n = rng.randrange(10 ** (digits - 1), 10**digits) | 1
    while not client.is_prime(n):
        n += 2
    return n


def timed_local(client: Client, n: int) -> tuple[float, FactorResult, dict[str, float]]:
    start = time.perf_counter()
    result = client.factor(n)
    return time.perf_counter() - start, result, {}


def timed_dask(client: Any, n: int) -> tuple[float, FactorResult, dict[str, float]]:
    start = time.perf_counter()
    job = pkdask.submit_complete(n, client=client, serve_args=SERVE_ARGS)
    result = job.result()
    took = time.perf_counter() - start
    rounds = job.rounds
    shares = sum(entry["seconds"] for entry in rounds if entry["kind"] == "shares")
    found = any(share["state"] == "found" for entry in rounds if entry["kind"] == "shares" for share in entry["shares"])
    return took, result, {"shares": shares, "rounds": float(sum(entry["kind"] == "shares" for entry in rounds)),
                          "found": float(found)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--digits", type=int, default=60)
    parser.add_argument("--factor-digits", type=int, default=25)
    parser.add_argument("--quiet-load", type=float, default=2.0,
                        help="wait until the 1-minute load average is at most this before the first seed")
    parser.add_argument("--max-wait", type=float, default=300, help="wait at most this many seconds for it")
    options = parser.parse_args()
    numbers = []
    with Client() as maker:
        for seed in range(1, options.seeds + 1):
            rng = random.Random(seed)
            numbers.append((prime_of(options.factor_digits, rng, maker),
                            prime_of(options.digits - options.factor_digits, rng, maker)))
    print(f"{options.seeds} numbers p{options.factor_digits} * p{options.digits - options.factor_digits} "
          f"(seeds 1-{options.seeds}); Dask bridges' serve args {SERVE_ARGS}; {os.cpu_count()} cores", flush=True)
    wait_and_say(options.quiet_load, options.max_wait)
    load_before = os.getloadavg()
    times: dict[str, list[float]] = {"local": [], "1 worker": [], "2 workers": []}
    speedups: list[float] = []
    against_local: list[float] = []
    share_seconds: list[float] = []
    rest_seconds: list[float] = []
    loads: list[float] = []
    with Client() as local, \
            distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                     dashboard_address=":0") as one, distributed.Client(one) as c1, \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     dashboard_address=":0") as two, distributed.Client(two) as c2:
        for client in (c1, c2):  # starts every worker's bridge
            pkdask.factor(2**128 + 1, client=client, serve_args=SERVE_ARGS)
        names = ["local", "1 worker", "2 workers"]
        for index, (p, q) in enumerate(numbers):
            n = p * q
            runs: dict[str, Callable[[], tuple[float, FactorResult, dict[str, float]]]] = {
                "local": lambda: timed_local(local, n),
                "1 worker": lambda: timed_dask(c1, n),
                "2 workers": lambda: timed_dask(c2, n),
            }
            order = names[index % 3:] + names[:index % 3]  # each run goes first in turn
            took: dict[str, float] = {}
            reference: FactorResult | None = None
            detail: dict[str, float] = {}
            for name in order:
                took[name], result, extra = runs[name]()
                if name == "2 workers":
                    detail = extra
                reference = reference or result
                if result != reference or [f["prime"] for f in result["factors"]] != sorted([p, q]):
                    raise SystemExit(f"seed {index + 1}: the {name} result differs")
                times[name].append(took[name])
            t_local, t_one, t_two = took["local"], took["1 worker"], took["2 workers"]
            speedups.append(t_one / t_two)
            against_local.append(t_local / t_two)
            share_seconds.append(detail["shares"])
            rest_seconds.append(t_two - detail["shares"])
            loads.append(os.getloadavg()[0])
            print(f"seed {index + 1} ({', '.join(order)}): local {t_local:.2f} s, 1 worker {t_one:.2f} s, "
                  f"2 workers {t_two:.2f} s (in {detail['rounds']:.0f} rounds of shares {detail['shares']:.2f} s, "
                  f"{'a share found the factor' if detail['found'] else 'no share found it'}); "
                  f"speed-up {t_one / t_two:.2f}, 2 workers vs local {t_local / t_two:.2f}; "
                  f"load average {loads[-1]:.2f}", flush=True)
    load_after = os.getloadavg()
    for name, values in times.items():
        print(f"median {name}: {statistics.median(values):.2f} s")
    print(f"median 2 workers in rounds of shares: {statistics.median(share_seconds):.2f} s, the rest: "
          f"{statistics.median(rest_seconds):.2f} s")
    print(f"median speed-up 2 workers vs 1: {statistics.median(speedups):.2f}")
    print(f"median local / 2 workers: {statistics.median(against_local):.2f}")
    print(f"median load average (1 min) after each seed: {statistics.median(loads):.2f}")
    print(f"load average before: {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}; "
          f"after: {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}")


if __name__ == "__main__":
    main()
