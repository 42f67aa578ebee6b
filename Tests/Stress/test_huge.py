"""Huge numbers from Python: a 1,000,000-digit candidate with planted factors below 10^7, and 50 jobs of
100,000 digits at once sharing the machine fairly."""

from __future__ import annotations

import decimal
import random
import time
from typing import Any

import pytest

from conftest import Deadline, Server, executable, figure, mib, primes_below, proc_status
from primekit import Client, _numbers

DIGITS = 1_000_000
BOUND = 10**7
# The server's peak resident memory above its idle size, for the 1,000,000-digit job, is at most this many times
# the decimal length (measured 20x to 31x, see docs/reliability.md).
MEMORY_MULTIPLE = 48


def random_decimal(rng: random.Random, digits: int) -> str:
    text = "".join(rng.choices("0123456789", k=digits))
    return rng.choice("123456789") + text[1:]


def multiply_decimal(a: str, b: str) -> str:
    """a * b for decimal strings, fast (the decimal module multiplies and prints in quasi-linear time)."""
    context = decimal.Context(prec=decimal.MAX_PREC, Emax=decimal.MAX_EMAX)
    return str(context.multiply(decimal.Decimal(a), decimal.Decimal(b)))


@pytest.mark.stress
def test_million_digits_with_planted_factors(seed: int) -> None:
    deadline = Deadline(300, "the 1,000,000-digit job")
    rng = random.Random(seed)
    primes = primes_below(BOUND)
    planted: dict[int, int] = {2: rng.randrange(1, 4), 3: rng.randrange(1, 3)}
    for p in rng.sample(primes[100:], 10):
        planted[p] = rng.choice([1, 1, 2, 3])
    product = 1
    for p, e in planted.items():
        product *= p**e
    cofactor_text = random_decimal(rng, DIGITS - len(str(product)))
    text = multiply_decimal(cofactor_text, str(product))
    assert len(text) in (DIGITS, DIGITS - 1)
    candidate = _numbers.to_int(text)
    with Client(executable(), args=["--workers", "2"], timeout=60) as client:
        idle = proc_status(client.pid)["VmRSS"]
        started = time.monotonic()
        job = client.submit(candidate, bound=BOUND, progress_interval_ms=50)
        job_id = job.job_id
        submitted = time.monotonic() - started
        # Progress flows; pause part-way, check it stays paused, resume.
        reports = []
        for report in job.progress(timeout=deadline.left()):
            reports.append(report)
            if report["progress"] > 0 and len(reports) >= 2:
                break
        assert not job.done(), "the job ended before it could be paused"
        checkpoint = job.pause()
        at_pause = client.request("job/status", {"jobId": job_id})
        assert at_pause["state"] == "paused"
        assert len(checkpoint) > DIGITS, "the checkpoint holds the candidate"
        client.request("ping")
        held = client.request("job/status", {"jobId": job_id})
        assert held["tested"] == at_pause["tested"] and held["progress"] == at_pause["progress"]
        job.resume()
        after = []
        for report in job.progress(timeout=deadline.left()):
            after.append(report)
        result = job.result(timeout=deadline.left())
        took = time.monotonic() - started
        peak = proc_status(client.pid)["VmHWM"]
    assert all(int(r["tested"]) >= int(at_pause["tested"]) for r in after)
    found = {f["prime"]: f["exponent"] for f in result["factors"]}
    for p, e in planted.items():
        assert found.get(p, 0) >= e, f"planted {p}^{e}, found {p}^{found.get(p)}"
    rest = 1
    for p, e in found.items():
        assert p < BOUND
        assert candidate % p**e == 0 and candidate % p**(e + 1) != 0, f"{p}^{e} is not exact"
        rest *= p**e
    assert rest * result["cofactor"] == candidate
    assert result["cofactorStatus"] == "unknown" and result["complete"] is False
    # Spot checks: primes below 10^7 the server did not report do not divide the cofactor.
    cofactor = result["cofactor"]
    sample = rng.sample(primes, 2000)
    assert all(cofactor % p != 0 for p in sample if p not in found)
    growth = peak - idle
    figure("1,000,000 digits to 10^7: planted / found", f"{len(planted)} primes / {len(found)} primes")
    figure("1,000,000 digits to 10^7: progress reports before pause / after resume", f"{len(reports)} / {len(after)}")
    figure("1,000,000 digits to 10^7: time (submit incl. binding's decimal conversion / total)",
           f"{submitted:.1f} s / {took:.1f} s")
    figure("1,000,000 digits to 10^7: server VmRSS idle / VmHWM",
           f"{mib(idle)} / {mib(peak)}: growth {growth / DIGITS:.1f}x the digits, peak {peak / DIGITS:.1f}x")
    assert growth <= MEMORY_MULTIPLE * DIGITS, f"grew by {mib(growth)}"


def fairness(count: int, digits: int, bound: int, seed: int, seconds: float) -> None:
    """`count` big jobs at once, as many workers as jobs: when the first job is 30 % done, every job has made
    progress and the spread of their percentages is bounded. Then every job is cancelled (with a checkpoint), or
    has succeeded meanwhile."""
    deadline = Deadline(seconds, f"{count} x {digits}-digit jobs")
    rng = random.Random(seed)
    texts = [random_decimal(rng, digits) for _ in range(count)]
    with Server(["--workers", str(count)]) as server:
        server.call("ping")
        idle = server.memory()["VmRSS"]
        # Submitted to a suspended queue (each candidate takes a moment to read), then started together.
        server.call("queue/suspend")
        ids = server.send_many([("job/submit", {"kind": "factor", "candidate": t, "bound": str(bound),
                                                "progressIntervalMs": 50}) for t in texts])
        jobs = [server.wait_response(i, deadline.left())["result"]["jobId"] for i in ids]
        server.call("queue/resume")
        started = time.monotonic()
        server.wait_until(lambda: any(j in server.progress and server.progress[j]["progress"] >= 30
                                      for j in jobs) or bool(server.finished),
                          deadline.left(), "the first job 30 % done")
        window = time.monotonic() - started
        listed = {j["jobId"]: j["progress"] for j in server.call("job/list", None, deadline.left())["jobs"]}
        percents = [listed[j] for j in jobs]
        peak = server.memory()["VmHWM"]
        cancels = server.send_many([("job/cancel", {"jobId": j}) for j in jobs])
        answers = [server.wait_response(i, deadline.left()) for i in cancels]
        server.wait_until(lambda: all(j in server.finished for j in jobs), deadline.left(), "every job's end")
        for job_id, answer in zip(jobs, answers):
            (finished,) = server.finished[job_id]
            if "result" in answer:
                assert finished["state"] == "cancelled" and finished["checkpoint"], str(finished)[:300]
            else:
                assert answer["error"]["code"] == 1002 and finished["state"] == "succeeded", str(finished)[:300]
        assert server.stop(deadline.left()) == 0
    spread = max(percents) - min(percents)
    figure(f"{count} x {digits} digits to {bound:.0e}: progress when the first reached 30 %",
           f"min {min(percents)} %, max {max(percents)} %, spread {spread:.1f} points after {window:.1f} s")
    figure(f"{count} x {digits} digits: server VmRSS idle {mib(idle)}, VmHWM {mib(peak)}",
           f"{(peak - idle) / (count * digits):.1f}x the digits in flight")
    assert min(percents) > 0, f"a job made no progress: {percents}"
    assert spread <= 30, f"progress spread {spread}: {percents}"


def test_fair_progress_short(seed: int) -> None:
    fairness(10, 20_000, 10**8, seed, 60)


@pytest.mark.stress
def test_fair_progress(seed: int) -> None:
    fairness(50, 100_000, 10**7, seed, 300)
