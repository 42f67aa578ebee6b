"""Waiting for a quiet machine before a benchmark's first run (shared by the Dask benchmarks)."""

from __future__ import annotations

import os
import time


def wait_for_quiet(threshold: float, limit: float) -> tuple[float, float]:
    """Polls the 1-minute load average every 10 s until it is at most ``threshold`` or ``limit`` seconds have
    passed; returns (seconds waited, the last load average)."""
    start = time.monotonic()
    load = os.getloadavg()[0]
    while load > threshold and time.monotonic() - start < limit:
        time.sleep(min(10.0, max(0.0, limit - (time.monotonic() - start))))
        load = os.getloadavg()[0]
    return time.monotonic() - start, load


def wait_and_say(threshold: float, limit: float) -> None:
    """``wait_for_quiet``, then a line saying how long it waited and the load average it found."""
    waited, load = wait_for_quiet(threshold, limit)
    print(f"waited {waited:.0f} s for a quiet machine: load average {load:.2f} (threshold {threshold})", flush=True)
