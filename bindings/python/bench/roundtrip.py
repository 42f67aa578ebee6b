"""isPrime round trips per second through the Python binding: sequential (one job at a time) and pipelined
(every job submitted first, then all awaited). Median of several runs each.

    PRIMEKIT_BIN=/path/to/primekit python bench/roundtrip.py [--jobs 50000] [--sequential 2000] [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

from primekit import Client


def sequential(client: Client, count: int) -> float:
    start = time.perf_counter()
    for n in range(1_000_000, 1_000_000 + count):
        client.submit(n, kind="isPrime").result()
    return count / (time.perf_counter() - start)


def pipelined(client: Client, count: int) -> float:
    start = time.perf_counter()
    jobs = [client.submit(n, kind="isPrime") for n in range(1_000_000, 1_000_000 + count)]
    for job in jobs:
        job.result()
    return count / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=50_000, help="jobs per pipelined run")
    parser.add_argument("--sequential", type=int, default=2_000, help="jobs per sequential run")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--executable", default=None)
    options = parser.parse_args()
    with Client(options.executable) as client:
        sequential(client, 100)  # warm up
        seq = [sequential(client, options.sequential) for _ in range(options.runs)]
    pipe = []
    for _ in range(options.runs):
        with Client(options.executable) as client:  # a fresh bridge: each run starts from an empty queue
            pipe.append(pipelined(client, options.jobs))
    seq_median, pipe_median = statistics.median(seq), statistics.median(pipe)
    print(f"sequential: {seq_median:10,.0f} round trips/s  (runs: {', '.join(f'{r:,.0f}' for r in seq)})")
    print(f"pipelined:  {pipe_median:10,.0f} round trips/s  (runs: {', '.join(f'{r:,.0f}' for r in pipe)}; "
          f"{options.jobs:,} jobs each)")
    print(f"ratio:      {pipe_median / seq_median:10.1f}x")


if __name__ == "__main__":
    main()
