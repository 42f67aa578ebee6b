"""Load: many queued jobs from one client and from several (one bridge process each), and a storm of pause,
resume, cancel and submit requests against live jobs."""

from __future__ import annotations

import random
import threading
import time
from typing import Any

import pytest

from conftest import (Deadline, Server, checkpoint_candidate, chunks, expected_factor_result, figure, mib,
                      primes_below, random_prime)

PRIMES = primes_below(50_000)
# Composites below 10^12 are factored in a few microseconds each: the load tests measure the bridge and the queue.
LIMIT = 10**12
# Memory a queued job may cost the server (measured about 2 KiB, see docs/reliability.md).
BYTES_PER_QUEUED_JOB_BOUND = 6 * 1024


def small_composite(rng: random.Random) -> tuple[int, dict[int, int]]:
    """A number below LIMIT made of 1-4 primes below 50,000: its factorization is known."""
    while True:
        factors: dict[int, int] = {}
        n = 1
        for _ in range(rng.randrange(1, 5)):
            p = rng.choice(PRIMES)
            e = rng.randrange(1, 3)
            factors[p] = factors.get(p, 0) + e
            n *= p**e
        if 2 <= n < LIMIT:
            return n, factors


def queue_jobs(server: Server, rng: random.Random, count: int, deadline: Deadline,
               measure: bool) -> dict[str, Any]:
    """Submits `count` jobs to a suspended queue, then runs them; checks every result and that each job finished
    exactly once. Returns the figures."""
    server.call("queue/suspend", None, deadline.left())
    before = server.memory()["VmRSS"] if measure else 0
    work = [small_composite(rng) for _ in range(count)]
    started = time.monotonic()
    ids: list[int] = []
    for part in chunks(work, 5000):
        ids += server.send_many([("job/submit", {"kind": "factor", "candidate": str(n)}) for n, _ in part])
    jobs: dict[str, tuple[int, dict[int, int]]] = {}
    for request_id, item in zip(ids, work):
        answer = server.wait_response(request_id, deadline.left())
        assert "result" in answer, answer
        jobs[answer["result"]["jobId"]] = item
    submitted = time.monotonic() - started
    assert len(jobs) == count
    queued_rss = server.memory()["VmRSS"] if measure else 0
    started = time.monotonic()
    server.call("queue/resume", None, deadline.left())
    server.wait_until(lambda: server.finished_count >= count, deadline.left(), f"{count} job/finished")
    ran = time.monotonic() - started
    assert server.call("ping", None, deadline.left()) == {}
    assert server.finished_count == count
    assert set(server.finished) == set(jobs), "job/finished for a job never submitted"
    for job_id, (n, factors) in jobs.items():
        finished = server.finished[job_id]
        assert len(finished) == 1, f"{job_id} finished {len(finished)} times"
        assert finished[0]["state"] == "succeeded", finished[0]
        assert finished[0]["result"] == expected_factor_result(n, factors), finished[0]
    return {"submitted_s": submitted, "ran_s": ran, "rss_before": before, "rss_queued": queued_rss}


def one_client(count: int, seed: int, seconds: float) -> None:
    deadline = Deadline(seconds, f"{count} queued jobs")
    with Server(["--workers", "2"]) as server:
        server.call("initialize", {"protocolVersion": 1})
        out = queue_jobs(server, random.Random(seed), count, deadline, measure=True)
        per_job = (out["rss_queued"] - out["rss_before"]) / count
        figure(f"{count} queued jobs, one client: submitted in", f"{out['submitted_s']:.1f} s "
               f"({count / out['submitted_s']:.0f} submissions/s, answered)")
        figure(f"{count} queued jobs, one client: ran in", f"{out['ran_s']:.1f} s ({count / out['ran_s']:.0f} jobs/s)")
        figure(f"{count} queued jobs, one client: server VmRSS idle / queued",
               f"{mib(out['rss_before'])} / {mib(out['rss_queued'])} = {per_job:.0f} bytes a queued job")
        assert per_job <= BYTES_PER_QUEUED_JOB_BOUND, f"{per_job:.0f} bytes a queued job"
        assert server.stop(deadline.left()) == 0


def several_clients(clients: int, count: int, seed: int, seconds: float) -> None:
    deadline = Deadline(seconds, f"{clients} x {count} queued jobs")
    servers = [Server(["--workers", "2"]) for _ in range(clients)]
    failures: list[BaseException] = []
    results: list[dict[str, Any]] = []

    def run(server: Server, index: int) -> None:
        try:
            results.append(queue_jobs(server, random.Random(seed * 100 + index), count, deadline, measure=False))
        except BaseException as error:  # reported by the main thread
            failures.append(error)

    started = time.monotonic()
    threads = [threading.Thread(target=run, args=(s, i), daemon=True) for i, s in enumerate(servers)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(deadline.left())
            assert not thread.is_alive(), "watchdog: a client thread did not finish"
        if failures:
            raise failures[0]
        took = time.monotonic() - started
        figure(f"{clients} clients x {count} queued jobs: all done in",
               f"{took:.1f} s ({clients * count / took:.0f} jobs/s overall)")
        for server in servers:
            assert server.stop(deadline.left()) == 0
    finally:
        for server in servers:
            if server.process.poll() is None:
                server.kill()


def test_queued_jobs_one_client_short(seed: int) -> None:
    one_client(5_000, seed, 45)


def test_queued_jobs_several_clients_short(seed: int) -> None:
    several_clients(2, 2_000, seed, 45)


@pytest.mark.stress
def test_queued_jobs_one_client(seed: int) -> None:
    one_client(100_000, seed, 300)


@pytest.mark.stress
def test_queued_jobs_several_clients(seed: int) -> None:
    several_clients(4, 25_000, seed, 300)


# MARK: - The storm

PRIORITIES = ["veryLow", "low", "normal", "high", "veryHigh", 0, 1, 2, 3, 4]


def storm(seed: int, live: int, operations: int, seconds: float) -> None:
    """`operations` random pause/resume/cancel requests and submissions with random priorities against `live`
    jobs; every job ends exactly once, with the expected result or a checkpoint that resumes to it."""
    deadline = Deadline(seconds, f"the storm of {operations} operations")
    rng = random.Random(seed)
    expected: dict[str, dict[str, Any]] = {}   # jobId -> expected result
    params_by_id: dict[str, dict[str, Any]] = {}
    counts: dict[str, int] = {}

    def new_params() -> tuple[dict[str, Any], dict[str, Any]]:
        prime = random_prime(rng, 2**70, 2**100)
        if rng.random() < 0.3:
            small = rng.choice(PRIMES)
            candidate, factors = small * prime, [{"prime": str(small), "exponent": 1, "certainty": "proven"}]
        else:
            candidate, factors = prime, []
        params = {"kind": "factor", "candidate": str(candidate), "bound": str(rng.randrange(2**23, 2**26)),
                  "priority": rng.choice(PRIORITIES), "progressIntervalMs": rng.choice([5, 50, 250])}
        result = {"candidate": str(candidate), "factors": factors, "cofactor": str(prime),
                  "cofactorStatus": "probable-prime", "complete": True, "isPrime": not factors,
                  "certainty": "probable", "mode": "trial", "parts": []}
        return params, result

    def submit(server: Server, batch: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
        ids = server.send_many([("job/submit", p) for p, _ in batch])
        for request_id, (params, result) in zip(ids, batch):
            answer = server.wait_response(request_id, deadline.left())
            assert "result" in answer, answer
            job_id = answer["result"]["jobId"]
            expected[job_id] = result
            params_by_id[job_id] = params

    started = time.monotonic()
    with Server(["--workers", "2"]) as server:
        submit(server, [new_params() for _ in range(live)])
        for part in range(0, operations, 250):
            ops: list[tuple[str, dict[str, Any]]] = []
            fresh: list[tuple[dict[str, Any], dict[str, Any]]] = []
            for _ in range(min(250, operations - part)):
                kind = rng.choices(["job/pause", "job/resume", "job/cancel", "job/submit"], [4, 4, 1.5, 0.5])[0]
                counts[kind] = counts.get(kind, 0) + 1
                if kind == "job/submit":
                    fresh.append(new_params())
                else:
                    ops.append((kind, {"jobId": rng.choice(list(expected))}))
            ids = server.send_many(ops)
            for (kind, params), request_id in zip(ops, ids):
                answer = server.wait_response(request_id, deadline.left())
                if "error" in answer:
                    assert answer["error"]["code"] == 1002, (kind, params, answer)
                    continue
                result = answer["result"]
                if kind == "job/pause":
                    assert result["state"] == "paused" and result["checkpoint"], result
                elif kind == "job/resume":
                    assert result["state"] in ("queued", "running", "succeeded"), result
                else:
                    assert result["state"] == "cancelled", result
            if fresh:
                submit(server, fresh)
        storm_took = time.monotonic() - started
        # Let everything end: resume what is paused, then wait for every job/finished.
        paused = [job["jobId"] for job in server.call("job/list", {"state": "paused"}, deadline.left())["jobs"]]
        server.send_many([("job/resume", {"jobId": j}) for j in paused])
        server.wait_until(lambda: all(j in server.finished for j in expected), deadline.left(), "every job's end")
        assert server.call("ping", None, deadline.left()) == {}
        assert set(server.finished) == set(expected)
        cancelled = []
        for job_id, result in expected.items():
            finished = server.finished[job_id]
            assert len(finished) == 1, f"{job_id} finished {len(finished)} times: {finished}"
            params = finished[0]
            if params["state"] == "succeeded":
                assert params["result"] == result, (job_id, params)
            else:
                assert params["state"] == "cancelled" and params["reason"] == "cancelled", params
                assert checkpoint_candidate(params["checkpoint"]) == result["candidate"]
                cancelled.append(job_id)
        assert server.stop(deadline.left()) == 0
    # The cancelled jobs' checkpoints resume to the right results (a sample, in a fresh server).
    sample = rng.sample(cancelled, min(20, len(cancelled)))
    with Server(["--workers", "2"]) as fresh_server:
        ids = fresh_server.send_many([("job/submit", {"checkpoint": server.finished[j][0]["checkpoint"]})
                                      for j in sample])
        resumed = {}
        for job_id, request_id in zip(sample, ids):
            resumed[fresh_server.wait_response(request_id, deadline.left())["result"]["jobId"]] = job_id
        fresh_server.wait_until(lambda: all(j in fresh_server.finished for j in resumed), deadline.left(),
                                "the resumed checkpoints")
        for new_id, old_id in resumed.items():
            assert fresh_server.finished[new_id][0]["result"] == expected[old_id]
        assert fresh_server.stop(deadline.left()) == 0
    took = time.monotonic() - started
    states: dict[str, int] = {}
    for job_id in expected:
        state = server.finished[job_id][0]["state"]
        states[state] = states.get(state, 0) + 1
    figure(f"storm {operations} ops / {live} live jobs: requests", counts)
    figure(f"storm {operations} ops / {live} live jobs: outcomes", states)
    figure(f"storm {operations} ops / {live} live jobs: time", f"storm {storm_took:.1f} s, all ended and "
           f"{len(sample)} checkpoints resumed {took:.1f} s")


def test_storm_short(seed: int) -> None:
    storm(seed, live=100, operations=1_000, seconds=45)


@pytest.mark.stress
def test_storm(seed: int) -> None:
    storm(seed, live=1_000, operations=10_000, seconds=300)
