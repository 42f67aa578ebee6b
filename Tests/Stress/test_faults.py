"""Faults around the server: the client vanishes mid-stream, the state directory's disk fills up or turns
read-only."""

from __future__ import annotations

import ctypes
import json
import os
import random
import select
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, Deadline, RpcError, Server, checkpoint_candidate, executable, figure, random_prime


def long_jobs(rng: random.Random, count: int) -> list[int]:
    """Primes above 2^64: factoring one by trial division ("mode": "trial") to the default bound (2^32) is a second
    or more of work (a complete job proves it a probable prime at once)."""
    return [random_prime(rng, 2**70, 2**100) for _ in range(count)]


def recovered(state: Path, deadline: Deadline) -> dict[str, dict[str, Any]]:
    """The jobs a fresh server lists on the state directory, each with its status; the server then stops."""
    with Server(["--state-dir", str(state)]) as server:
        jobs = {job["jobId"]: job for job in server.call("job/list", None, deadline.left())["jobs"]}
        for job_id in jobs:
            jobs[job_id]["status"] = server.call("job/status", {"jobId": job_id}, deadline.left())
        assert server.stop(deadline.left()) == 0
    return jobs


# MARK: - The client vanishes


def test_client_closes_stdout_mid_stream(tmp_path: Path, seed: int) -> None:
    """The client closes its end of the server's stdout (stdin stays open) while progress floods it: the server
    checkpoints every job and exits 0, and the state directory has them all."""
    deadline = Deadline(90, "the server's exit after its client closed stdout")
    rng = random.Random(seed)
    state = tmp_path / "state"
    candidates = long_jobs(rng, 8)
    process = subprocess.Popen([executable(), "serve", "--state-dir", str(state), "--workers", "2"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdin is not None and process.stdout is not None
    lines = [json.dumps({"jsonrpc": "2.0", "id": i + 1, "method": "job/submit",
                         "params": {"kind": "factor", "candidate": str(c), "mode": "trial", "progressIntervalMs": 1}})
             for i, c in enumerate(candidates)]
    process.stdin.write(("\n".join(lines) + "\n").encode())
    process.stdin.flush()
    # Read until every submission is answered and progress is flowing, then go away mid-stream.
    answered: set[int] = set()
    progress = 0
    fd = process.stdout.fileno()
    buffer = b""
    while len(answered) < len(candidates) or progress < 50:
        ready, _, _ = select.select([fd], [], [], deadline.left())
        assert ready, "no output"
        chunk = os.read(fd, 65536)
        assert chunk, f"the server ended early ({process.poll()})"
        buffer += chunk
        *complete, buffer = buffer.split(b"\n")
        for line in complete:
            message = json.loads(line)
            if "id" in message:
                assert "result" in message, message
                answered.add(message["id"])
            elif message.get("method") == "job/progress":
                progress += 1
    process.stdout.close()
    status = process.wait(deadline.left())
    assert status == 0, f"exit status {status} after the client closed stdout"
    process.stdin.close()
    jobs = recovered(state, deadline)
    assert sorted(jobs) == [f"j{i}" for i in range(1, len(candidates) + 1)]
    for job_id, job in jobs.items():
        status_ = job["status"]
        assert status_["state"] in ("paused", "succeeded"), status_
        if status_["state"] == "paused":
            assert checkpoint_candidate(status_["checkpoint"]) == str(candidates[int(job_id[1:]) - 1])
    figure("client closed stdout: exit status, jobs on disk", f"0, {len(jobs)} of {len(candidates)} "
           f"({progress} progress lines read first)")


CLIENT_SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    from primekit import Client
    client = Client(sys.argv[2], args=["--state-dir", sys.argv[3], "--workers", "2"])
    jobs = [client.submit(int(c), mode="trial", progress_interval_ms=1) for c in sys.argv[4:]]
    for job in jobs:
        job.job_id
    next(iter(jobs[0].progress(timeout=60)))
    print(client.pid, flush=True)
    sys.stdin.read()   # until killed
""")


def _subreaper() -> None:
    """Orphaned descendants of this process are re-parented to it, so it can wait for them."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
        pytest.skip("prctl(PR_SET_CHILD_SUBREAPER) failed")


def test_client_process_killed(tmp_path: Path, seed: int) -> None:
    """A Python client using the binding is SIGKILLed while its server streams progress: both pipes close at once;
    the server checkpoints and exits 0 with its jobs in the state directory."""
    deadline = Deadline(90, "the server's exit after its client was killed")
    _subreaper()
    rng = random.Random(seed)
    state = tmp_path / "state"
    candidates = long_jobs(rng, 6)
    client = subprocess.Popen([sys.executable, "-c", CLIENT_SCRIPT, str(REPO / "bindings" / "python" / "src"),
                               executable(), str(state), *map(str, candidates)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert client.stdout is not None
    ready, _, _ = select.select([client.stdout], [], [], deadline.left())
    assert ready, "the client did not start"
    server_pid = int(client.stdout.readline())
    client.kill()
    client.wait(deadline.left())
    # The orphaned server is now this process's child: wait for it with a deadline (pidfd), then reap it.
    pidfd = os.pidfd_open(server_pid)
    try:
        exited, _, _ = select.select([pidfd], [], [], deadline.left())
        assert exited, "the server did not exit after its client was killed"
    finally:
        os.close(pidfd)
    _, raw = os.waitpid(server_pid, 0)
    assert os.waitstatus_to_exitcode(raw) == 0, f"server exit status {os.waitstatus_to_exitcode(raw)}"
    jobs = recovered(state, deadline)
    assert sorted(jobs) == [f"j{i}" for i in range(1, len(candidates) + 1)]
    for job_id, job in jobs.items():
        assert job["status"]["state"] in ("paused", "succeeded"), job
    figure("client process killed: server exit status, jobs on disk", f"0, {len(jobs)} of {len(candidates)}")


# MARK: - Disk full and read-only


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs (skipped when it cannot be mounted)."""
    mount = tmp_path / "mnt"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def fill(mount: Path) -> Path:
    """Fills the file system; returns the filler file."""
    filler = mount / "filler"
    with open(filler, "wb") as out:
        try:
            while True:
                out.write(b"\0" * 65536)
                out.flush()
        except OSError:
            pass
    # Take the last blocks too (a partial block may be left).
    try:
        with open(filler, "ab") as out:
            out.write(b"\0" * 1024)
    except OSError:
        pass
    return filler


def store_setup(state: Path, rng: random.Random, deadline: Deadline) -> tuple[Server, dict[str, Any]]:
    """A server on `state` with one stored result and one durable unfinished job."""
    server = Server(["--state-dir", str(state), "--checkpoint-interval-ms", "50", "--workers", "2"])
    server.call("plugin/subscribe", {"streams": ["pluginData", "errors"], "tags": ["primekit.store."]})
    done = server.call("job/submit", {"kind": "factor", "candidate": "600851475143"})["jobId"]
    slow_prime = random_prime(rng, 2**70, 2**100)
    slow = server.call("job/submit", {"kind": "factor", "candidate": str(slow_prime), "mode": "trial",
                                      "priority": "high", "progressIntervalMs": 20})["jobId"]
    server.wait_until(lambda: done in server.finished and slow in server.saved, deadline.left(), "the first writes")
    return server, {"done": done, "slow": slow, "slow_prime": slow_prime,
                    "done_result": server.finished[done][0]["result"]}


def check_earlier_jobs(state: Path, before: dict[str, Any], deadline: Deadline) -> None:
    jobs = recovered(state, deadline)
    assert jobs[before["done"]]["status"]["result"] == before["done_result"]
    slow = jobs[before["slow"]]["status"]
    if slow["state"] == "succeeded":  # it finished before the server stopped
        assert slow["result"]["cofactor"] == str(before["slow_prime"]), slow
    else:
        assert slow["state"] == "paused" and slow["priority"] == "high", slow
        assert checkpoint_candidate(slow["checkpoint"]) == str(before["slow_prime"])
    quarantine = state / "quarantine"
    assert not quarantine.exists() or not any(quarantine.iterdir())


def break_store(fault: str, mount: Path) -> Callable[[], None]:
    """Fills the tmpfs or remounts it read-only; returns what undoes it."""
    if fault == "disk full":
        filler = fill(mount)
        return filler.unlink
    subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)

    def writable() -> None:
        subprocess.run(["mount", "-o", "remount,rw", str(mount)], check=True)
    return writable


@pytest.mark.parametrize(("fault", "message"), [("disk full", "No space left on device"),
                                                ("read-only", "Read-only file system")],
                         ids=["disk-full", "read-only"])
def test_store_write_fault(tmpfs: Path, seed: int, fault: str, message: str) -> None:
    deadline = Deadline(90, f"the {fault} scenario")
    rng = random.Random(seed)
    state = tmpfs / "state"
    server, before = store_setup(state, rng, deadline)
    with server:
        undo = break_store(fault, tmpfs)
        try:
            # New work while the store cannot write: a job that needs its first checkpoint written.
            prime = random_prime(rng, 2**70, 2**100)
            job = server.call("job/submit", {"kind": "factor", "candidate": str(prime), "bound": str(2**32),
                                             "progressIntervalMs": 20})["jobId"]
            server.wait_until(lambda: bool(server.error_events), deadline.left(), "an error event")
            error = server.error_events[0]
            assert error["kind"] == "storeWriteFailed", error
            assert message in error["message"], error
            # The jobs keep running in memory.
            seen = server.progress_count
            server.wait_until(lambda: server.progress_count >= seen + 5 or job in server.finished, deadline.left(),
                              f"progress while {fault}")
            figure(f"{fault}: first error event", f"{error['kind']}: {error['message'][:100]}")
        finally:
            undo()
        # The store catches up once it can write again: the job's outcome is written and it is answered after a
        # restart.
        server.wait_until(lambda: job in server.finished, deadline.left(), "the job's end")
        figure(f"{fault}: error events", len(server.error_events))
        assert server.finished[job][0]["result"]["cofactor"] == str(prime)
        assert server.stop(deadline.left()) == 0
    check_earlier_jobs(state, before, deadline)
    with Server(["--state-dir", str(state)]) as again:
        assert again.call("job/status", {"jobId": job}, deadline.left())["state"] == "succeeded"


def test_full_disk_result_says_it_is_not_stored(tmpfs: Path, seed: int) -> None:
    """On a full disk a job's answer still comes, with "stored": false; after SIGKILL a restart does not know the
    job (as it said). With room again the next answer is stored, and a restart after SIGKILL answers it."""
    deadline = Deadline(90, "the full-disk result scenario")
    state = tmpfs / "state"
    server = Server(["--state-dir", str(state), "--checkpoint-interval-ms", "60000"])
    with server:
        server.call("initialize", {"protocolVersion": 1}, deadline.left())
        filler = fill(tmpfs)
        lost = server.call("job/submit", {"kind": "factor", "candidate": "600851475143"}, deadline.left())["jobId"]
        server.wait_until(lambda: lost in server.finished, deadline.left(), "the job's end on a full disk")
        finished = server.finished[lost][0]
        assert finished["state"] == "succeeded" and finished["stored"] is False, finished
        assert server.call("initialize", None, deadline.left())["capabilities"]["stateDirectoryWritable"] is False
        server.kill()
    with Server(["--state-dir", str(state), "--checkpoint-interval-ms", "60000"]) as again:
        with pytest.raises(RpcError) as unknown:
            again.call("job/status", {"jobId": lost}, deadline.left())
        assert unknown.value.code == 1001
        filler.unlink()
        kept = again.call("job/submit", {"kind": "factor", "candidate": "600851475143"}, deadline.left())["jobId"]
        again.wait_until(lambda: kept in again.finished, deadline.left(), "the job's end with room")
        assert again.finished[kept][0]["stored"] is True, again.finished[kept][0]
        again.kill()
    with Server(["--state-dir", str(state)]) as third:
        status = third.call("job/status", {"jobId": kept}, deadline.left())
        assert status["state"] == "succeeded" and status["result"]["cofactor"] == "1", status


def test_read_only_state_directory_is_read(tmpfs: Path, seed: int) -> None:
    """A server started on a state directory whose file system is read-only recovers its jobs and results,
    changes nothing, and says it cannot write."""
    deadline = Deadline(90, "the read-only start scenario")
    rng = random.Random(seed)
    state = tmpfs / "state"
    server, before = store_setup(state, rng, deadline)
    with server:
        assert server.stop(deadline.left()) == 0
    files = {path.name: path.read_bytes() for path in state.iterdir() if path.is_file()}
    subprocess.run(["mount", "-o", "remount,ro", str(tmpfs)], check=True)
    try:
        with Server(["--state-dir", str(state)]) as again:
            capabilities = again.call("initialize", {"protocolVersion": 1}, deadline.left())["capabilities"]
            assert capabilities["stateDirectory"] is True and capabilities["stateDirectoryWritable"] is False
            status = again.call("job/status", {"jobId": before["done"]}, deadline.left())
            assert status["result"] == before["done_result"], status
            slow = again.call("job/status", {"jobId": before["slow"]}, deadline.left())
            assert slow["state"] in ("paused", "succeeded"), slow
            assert again.stop(deadline.left()) == 0
        assert {path.name: path.read_bytes() for path in state.iterdir() if path.is_file()} == files
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(tmpfs)], check=True)
