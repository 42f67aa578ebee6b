"""SIGKILL of `primekit serve --state-dir` at random moments: while it recovers, while jobs are submitted, while
they run and checkpoints are written (every 20 ms), and while it shuts down. After every restart:

- every job known to be durable (a `primekit.store.saved` event named it, a `job/finished` was seen, or a
  `shutdown` answer listed it) is there again, under its id, with its priority;
- an unfinished one is paused at a progress no lower than the last durable checkpoint reported for it;
- every result seen before is still answered by `job/status`, unchanged, and never finished a second time;
- a listed job is one that was submitted (a job whose submission was never answered is found by its candidate);
- nothing is quarantined and the errors stream stays silent.

At the end every candidate's result equals the expected one (known by construction) and a clean run's.
"""

from __future__ import annotations

import os
import random
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from conftest import Deadline, Server, checkpoint_candidate, figure, is_probable_prime, random_prime

PRIORITIES = ["veryLow", "low", "normal", "high", "veryHigh"]
CHECKPOINT_MS = 20
UNFINISHED_TARGET = 6   # jobs kept alive across the rounds
MODES = ["running", "running", "running", "submit", "shutdown", "startup"]


@dataclass
class Entry:
    """One candidate of the workload, with its expected result."""
    candidate: int
    bound: int
    priority: str
    expected: dict[str, Any]
    job_id: str | None = None        # the job that carries it now
    done: bool = False


def make_entry(rng: random.Random) -> Entry:
    prime = random_prime(rng, 2**70, 2**100)   # above 2^64: trial division runs to the bound
    bound = rng.randrange(2**29, 2**32)
    priority = rng.choice(PRIORITIES)
    if rng.random() < 0.3:
        small = random_prime(rng, 1000, 2**20)
        candidate = small * prime
        factors = [{"prime": str(small), "exponent": 1, "certainty": "proven"}]
    else:
        candidate, factors = prime, []
    assert is_probable_prime(prime)
    expected = {"candidate": str(candidate), "factors": factors, "cofactor": str(prime),
                "cofactorStatus": "probable-prime", "complete": True, "isPrime": not factors,
                "certainty": "probable", "mode": "trial", "parts": []}
    return Entry(candidate, bound, priority, expected)


def submit_params(entry: Entry) -> dict[str, Any]:
    return {"kind": "factor", "candidate": str(entry.candidate), "bound": str(entry.bound),
            "priority": entry.priority, "progressIntervalMs": 50}


@dataclass
class Knowledge:
    """What the test knows for sure about the state directory."""
    by_candidate: dict[str, Entry]
    durable: dict[str, float] = field(default_factory=dict)       # jobId -> last durable percent (-1: unknown)
    results: dict[str, dict[str, Any]] = field(default_factory=dict)  # jobId -> finished result
    jobs: dict[str, Entry] = field(default_factory=dict)           # jobId -> entry
    unanswered: set[str] = field(default_factory=set)              # candidates whose submission had no answer
    verified_results: set[str] = field(default_factory=set)


def check_restart(server: Server, know: Knowledge, round_: int, full: bool) -> list[str]:
    """Checks the recovered state against what is known; returns the paused job ids."""
    where = f"round {round_}"
    listed = {job["jobId"]: job for job in server.call("job/list", None, 60)["jobs"]}
    for job_id, percent in know.durable.items():
        assert job_id in listed, f"{where}: durable job {job_id} (saved at {percent}%) was not recovered"
    for job_id in know.results:
        assert job_id in listed and listed[job_id]["state"] == "succeeded", \
            f"{where}: finished job {job_id} is listed as {listed.get(job_id)}"
    for job_id, job in listed.items():
        assert job["state"] in ("paused", "succeeded"), f"{where}: {job_id} recovered as {job['state']}"
    # Statuses: every unfinished job, the finished ones not checked yet (all of them when `full`).
    wanted = [j for j, job in listed.items()
              if job["state"] != "succeeded" or full or j not in know.verified_results]
    ids = server.send_many([("job/status", {"jobId": j}) for j in wanted])
    paused = []
    for job_id, request_id in zip(wanted, ids):
        answer = server.wait_response(request_id, 60)
        assert "result" in answer, f"{where}: job/status {job_id}: {answer}"
        status = answer["result"]
        if status["state"] == "succeeded":
            candidate = status["result"]["candidate"]
        else:
            candidate = checkpoint_candidate(status["checkpoint"])
        entry = know.by_candidate.get(candidate)
        assert entry is not None, f"{where}: {job_id} carries a candidate never submitted: {candidate[:60]}"
        known = know.jobs.get(job_id)
        if known is None:
            assert candidate in know.unanswered, f"{where}: {job_id} ({candidate}) appeared from nowhere"
            know.jobs[job_id] = entry
        else:
            assert known is entry, f"{where}: {job_id} now carries {candidate}, was {known.candidate}"
        if entry.job_id is not None and entry.job_id != job_id:
            pytest.fail(f"{where}: {candidate} is carried by both {entry.job_id} and {job_id}")
        entry.job_id = job_id
        if status["state"] == "succeeded":
            assert status["result"] == entry.expected, f"{where}: {job_id} result {status['result']}"
            if job_id in know.results:
                assert status["result"] == know.results[job_id]
            know.results[job_id] = status["result"]
            know.verified_results.add(job_id)
            entry.done = True
        else:
            assert status["priority"] == entry.priority, f"{where}: {job_id} priority {status['priority']}"
            saved = know.durable.get(job_id, -1.0)
            assert status["progress"] >= saved, \
                f"{where}: {job_id} recovered at {status['progress']}%, below its durable checkpoint at {saved}%"
            paused.append(job_id)
    # Entries whose job vanished were never durable: they go back to the pool.
    for entry in know.by_candidate.values():
        if entry.job_id is not None and entry.job_id not in listed:
            assert entry.job_id not in know.durable, f"{where}: durable {entry.job_id} lost"
            entry.job_id = None
    know.unanswered.clear()
    return paused


def run_rounds(tmp_path: Path, seed: int, rounds: int, deadline: Deadline) -> dict[str, Any]:
    rng = random.Random(seed)
    state = tmp_path / "state"
    know = Knowledge(by_candidate={})
    pool: list[Entry] = []
    modes: dict[str, int] = {}
    kills = 0
    clean_exits = 0
    stderr_log = tmp_path / "serve.stderr"
    args = ["--state-dir", str(state), "--checkpoint-interval-ms", str(CHECKPOINT_MS), "--workers", "2"]

    def new_entry() -> Entry:
        while True:
            entry = make_entry(rng)
            if str(entry.candidate) not in know.by_candidate:
                know.by_candidate[str(entry.candidate)] = entry
                pool.append(entry)
                return entry

    for round_ in range(rounds + 1):
        deadline.left()
        last = round_ == rounds
        mode = "final" if last else rng.choice(MODES)
        modes[mode] = modes.get(mode, 0) + 1
        server = Server(args, stderr_path=stderr_log)
        try:
            if mode == "startup":
                time.sleep(rng.uniform(0, 0.03))  # the experiment: a random moment during start and recovery
                kills += 1
                assert server.kill() == -signal.SIGKILL or server.process.returncode == 0
                continue
            server.call("plugin/subscribe", {"streams": ["pluginData", "errors"], "tags": ["primekit.store."]})
            paused = check_restart(server, know, round_, full=last or round_ % 25 == 0)
            for job_id, finished in list(server.finished.items()):
                pytest.fail(f"round {round_}: {job_id} finished before it was resumed: {finished}")
            server.send_many([("job/resume", {"jobId": j}) for j in paused])
            unfinished = sum(1 for e in pool if not e.done and e.job_id is not None)
            missing = [e for e in pool if not e.done and e.job_id is None]
            burst = missing + [new_entry() for _ in range(max(0, UNFINISHED_TARGET - unfinished - len(missing)))]
            if mode == "submit":
                burst += [new_entry() for _ in range(rng.randrange(1, 6))]
            if last:
                burst = missing

            def on_submitted(entry: Entry) -> Any:
                def answered(message: dict[str, Any]) -> None:
                    assert "result" in message, f"submit refused: {message}"
                    job_id = message["result"]["jobId"]
                    entry.job_id = job_id
                    know.jobs[job_id] = entry
                    know.unanswered.discard(str(entry.candidate))
                return answered

            for entry in burst:
                know.unanswered.add(str(entry.candidate))
            for entry in burst:
                server.send("job/submit", submit_params(entry), on_submitted(entry))

            if last:
                server.wait_until(lambda: all(e.job_id in server.finished for e in pool if not e.done),
                                  deadline.left(), "the last jobs' end")
            elif mode == "submit":
                time.sleep(rng.uniform(0, 0.005))  # the experiment: a random moment among the submissions
            elif mode == "running":
                time.sleep(rng.uniform(0, 0.25))   # the experiment: a random moment while jobs run
            elif mode == "shutdown":
                stopped: list[dict[str, Any]] = []

                def on_shutdown(message: dict[str, Any]) -> None:
                    assert "result" in message, f"shutdown: {message}"
                    stopped.append(message["result"])
                    for job in message["result"]["jobs"]:  # durable once answered
                        know.durable.setdefault(job["jobId"], -1.0)

                server.send("shutdown", None, on_shutdown)
                if rng.random() < 0.5:
                    time.sleep(rng.uniform(0, 0.03))  # the experiment: a random moment during the shutdown
                else:
                    server.wait_until(lambda: bool(stopped), deadline.left(), "the shutdown answer")
                    server.notify("exit")
            if last:
                status = server.stop(deadline.left())
                assert status == 0, f"the last server exited with {status}"
                clean_exits += 1
            else:
                status = server.kill()
                if status == 0:
                    clean_exits += 1  # it had exited on its own (after shutdown and exit)
                else:
                    assert status == -signal.SIGKILL, f"round {round_}: exit status {status}"
                    kills += 1
        finally:
            if server.process.poll() is None:
                server.kill()
        # What this run made known.
        with server.changed:
            for job_id, percent in server.saved.items():
                know.durable[job_id] = max(know.durable.get(job_id, -1.0), percent)
            for job_id, finished in server.finished.items():
                assert len(finished) == 1, f"round {round_}: {job_id} finished {len(finished)} times"
                params = finished[0]
                assert job_id not in know.results, f"round {round_}: {job_id} finished again after a restart"
                assert params["state"] == "succeeded", f"round {round_}: {params}"
                entry = know.jobs.get(job_id)
                assert entry is not None, f"round {round_}: finished {job_id} was never submitted"
                assert params["result"] == entry.expected, f"round {round_}: {job_id} {params['result']}"
                know.results[job_id] = params["result"]
                know.durable.setdefault(job_id, 100.0)
                entry.done = True
            assert not server.error_events, f"round {round_}: errors stream: {server.error_events[:3]}"
    quarantine = state / "quarantine"
    assert not quarantine.exists() or not any(quarantine.iterdir()), \
        f"quarantined files: {sorted(os.listdir(quarantine))}"
    assert all(e.done for e in pool), [e.candidate for e in pool if not e.done]
    assert len(know.results) == len(pool)
    return {"kills": kills, "clean_exits": clean_exits, "modes": modes, "jobs": len(pool),
            "entries": pool, "durable_events": sum(1 for _ in know.durable)}


def clean_run(entries: list[Entry], deadline: Deadline) -> None:
    """The same candidates in a fresh server without a state directory: the same results."""
    with Server(["--workers", "2"]) as server:
        ids = server.send_many([("job/submit", submit_params(e)) for e in entries])
        jobs = [server.wait_response(i, deadline.left())["result"]["jobId"] for i in ids]
        server.wait_until(lambda: all(j in server.finished for j in jobs), deadline.left(), "the clean run")
        for entry, job_id in zip(entries, jobs):
            assert server.finished[job_id][0]["result"] == entry.expected
        assert server.stop() == 0


def scenario(tmp_path: Path, seed: int, rounds: int, seconds: float) -> None:
    deadline = Deadline(seconds, f"{rounds} kill rounds")
    started = time.monotonic()
    outcome = run_rounds(tmp_path, seed, rounds, deadline)
    took = time.monotonic() - started
    entries = outcome.pop("entries")
    clean_run(random.Random(seed).sample(entries, min(12, len(entries))), deadline)
    figure(f"SIGKILL x{rounds}: kills survived", outcome["kills"])
    figure(f"SIGKILL x{rounds}: clean exits (shutdown answered before the kill)", outcome["clean_exits"])
    figure(f"SIGKILL x{rounds}: moments", outcome["modes"])
    figure(f"SIGKILL x{rounds}: jobs, all finished with the expected result", outcome["jobs"])
    figure(f"SIGKILL x{rounds}: time", f"{took:.1f} s ({took / (rounds + 1) * 1000:.0f} ms a round)")


def test_sigkill_short(tmp_path: Path, seed: int) -> None:
    scenario(tmp_path, seed, rounds=20, seconds=45)


@pytest.mark.stress
def test_sigkill_many(tmp_path: Path, seed: int) -> None:
    scenario(tmp_path, seed, rounds=500, seconds=420)
