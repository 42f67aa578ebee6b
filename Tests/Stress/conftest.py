"""Helpers for the stress, load and fault suite.

`Server` drives one `primekit serve` process over a raw pipe (no binding in between), so a test can count every
notification, kill the process at any moment and read its memory from /proc. Every wait has a deadline
(`Deadline`); nothing here sleeps to synchronise.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bindings" / "python" / "src"))

from primekit import ExecutableNotFoundError, find_executable  # noqa: E402  (after the path is set)

# Numbers above this many digits are never turned into Python ints by these helpers.
PIECE = 4000


def executable() -> str:
    """The primekit under test: PRIMEKIT_BIN, else this tree's release build (never one found on PATH).

    The Python binding's lookup checks that it is an executable file."""
    build = REPO / ".build" / "release" / "primekit"
    try:
        return find_executable(None if os.environ.get("PRIMEKIT_BIN") else build)
    except ExecutableNotFoundError as error:
        pytest.exit(f"no primekit executable ({error}): set PRIMEKIT_BIN or run swift build -c release", 2)


def figure(name: str, value: Any) -> None:
    """Records a measured figure: printed (pytest -s) and appended to $STRESS_FIGURES when set."""
    line = f"FIGURE {name} = {value}"
    print(line, flush=True)
    path = os.environ.get("STRESS_FIGURES")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(line + "\n")


def scaled(long: int, short: int, request: pytest.FixtureRequest) -> int:
    """The long suite's size for tests marked stress, else the always-on size."""
    return long if request.node.get_closest_marker("stress") else short


# MARK: - Deadlines


class Deadline:
    """A point in time every wait of a scenario must meet; a miss fails the test (the watchdog)."""

    def __init__(self, seconds: float, what: str = "the scenario") -> None:
        self.end = time.monotonic() + seconds
        self.what = what
        self.seconds = seconds

    def left(self) -> float:
        left = self.end - time.monotonic()
        if left <= 0:
            pytest.fail(f"watchdog: {self.what} did not finish within {self.seconds:.0f} s")
        return left


# MARK: - Memory


def proc_status(pid: int) -> dict[str, int]:
    """VmRSS, VmHWM (and the other Vm* lines) of a process, in bytes."""
    values: dict[str, int] = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("Vm") or line.startswith("Rss"):
                name, _, rest = line.partition(":")
                parts = rest.split()
                if parts and parts[-1] == "kB":
                    values[name] = int(parts[0]) * 1024
    return values


def mib(n: float) -> str:
    return f"{n / 1048576:.1f} MiB"


# MARK: - Primes and oracles


def is_probable_prime(n: int) -> bool:
    """Miller-Rabin; deterministic below 3.3e24 with these bases."""
    if n < 2:
        return False
    small = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)
    for p in small:
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    for a in small:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def random_prime(rng: random.Random, low: int, high: int) -> int:
    while True:
        n = rng.randrange(low, high) | 1
        if is_probable_prime(n):
            return n


def primes_below(limit: int) -> list[int]:
    sieve = bytearray([1]) * limit
    sieve[0:2] = b"\x00\x00"
    for i in range(2, int(limit**0.5) + 1):
        if sieve[i]:
            sieve[i * i::i] = bytearray(len(range(i * i, limit, i)))
    return [i for i, flag in enumerate(sieve) if flag]


def expected_factor_result(candidate: int, primes: dict[int, int]) -> dict[str, Any]:
    """The wire form of a complete factor result whose primes (all below 2^64, or proven by construction) are known."""
    factors = [{"prime": str(p), "exponent": e, "certainty": "proven"} for p, e in sorted(primes.items())]
    return {"candidate": str(candidate), "factors": factors, "cofactor": "1", "cofactorStatus": "one",
            "complete": True, "isPrime": len(primes) == 1 and next(iter(primes.values())) == 1,
            "certainty": "proven", "mode": "complete", "parts": []}


def checkpoint_candidate(checkpoint: str) -> str:
    """The candidate written in a job checkpoint text."""
    for line in checkpoint.splitlines():
        if line.startswith("candidate "):
            return line.split(" ", 1)[1]
    raise AssertionError(f"no candidate in checkpoint {checkpoint[:200]!r}")


# MARK: - A raw protocol client


class RpcError(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.code = error.get("code")
        self.data = error.get("data")
        self.error = error


class Server:
    """One `primekit serve` process: a reader thread files every line it writes.

    - `finished[jobId]`: every `job/finished` params of that job (a list, to catch duplicates);
    - `progress[jobId]`: the last `job/progress` params; `progress_count`;
    - `saved[jobId]`: the highest `percent` of a `primekit.store.saved` event (durable checkpoints);
    - `error_events`: `errors` stream events; `events`: every other `engine/event` params.
    """

    def __init__(self, args: Iterable[str] = (), *, binary: str | None = None, stderr_path: Path | None = None,
                 keep_lines: bool = False) -> None:
        self.args = ["serve", *args]
        self._stderr = open(stderr_path, "ab") if stderr_path else subprocess.DEVNULL
        self.process = subprocess.Popen([binary or executable(), *self.args], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=self._stderr, start_new_session=True)
        self.pid = self.process.pid
        self._ids = 0
        self._write_lock = threading.Lock()
        self.changed = threading.Condition()
        self.responses: dict[Any, Any] = {}
        self.callbacks: dict[Any, Callable[[dict[str, Any]], None]] = {}
        self.finished: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.finished_count = 0
        self.progress: dict[str, dict[str, Any]] = {}
        self.progress_count = 0
        self.saved: dict[str, float] = {}
        self.saved_count = 0
        self.error_events: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []
        self.lines: list[str] | None = [] if keep_lines else None
        self.eof = False
        self.bytes_read = 0
        self.reader = threading.Thread(target=self._read, daemon=True, name=f"stress-reader-{self.pid}")
        self.reader.start()

    # MARK: writing

    def _line(self, method: str, params: dict[str, Any] | None, request_id: Any) -> bytes:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if request_id is not None:
            message["id"] = request_id
        if params is not None:
            message["params"] = params
        return (json.dumps(message, separators=(",", ":")) + "\n").encode()

    def next_id(self) -> int:
        with self._write_lock:
            self._ids += 1
            return self._ids

    def write(self, data: bytes) -> None:
        """Writes bytes to the server's stdin (BrokenPipeError when it is gone)."""
        assert self.process.stdin is not None
        with self._write_lock:
            self.process.stdin.write(data)
            self.process.stdin.flush()

    def send(self, method: str, params: dict[str, Any] | None = None,
             on_response: Callable[[dict[str, Any]], None] | None = None) -> int:
        request_id = self.next_id()
        if on_response is not None:
            self.callbacks[request_id] = on_response
        self.write(self._line(method, params, request_id))
        return request_id

    def send_many(self, requests: list[tuple[str, dict[str, Any] | None]]) -> list[int]:
        """Writes many requests in one go (pipelined); returns their ids."""
        ids = []
        chunks = []
        for method, params in requests:
            request_id = self.next_id()
            ids.append(request_id)
            chunks.append(self._line(method, params, request_id))
        self.write(b"".join(chunks))
        return ids

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self.write(self._line(method, params, None))

    def wait_response(self, request_id: int, timeout: float) -> dict[str, Any]:
        with self.changed:
            if not self.changed.wait_for(lambda: request_id in self.responses or self.eof, timeout):
                raise TimeoutError(f"no response to request {request_id} within {timeout:.1f} s")
            if request_id not in self.responses:
                raise EOFError(f"the server exited before answering request {request_id} "
                               f"(status {self.process.poll()})")
            return self.responses.pop(request_id)

    def call(self, method: str, params: dict[str, Any] | None = None, timeout: float = 60.0) -> Any:
        message = self.wait_response(self.send(method, params), timeout)
        if "error" in message:
            raise RpcError(message["error"])
        return message["result"]

    def wait_until(self, predicate: Callable[[], bool], timeout: float, what: str = "a condition") -> None:
        with self.changed:
            if not self.changed.wait_for(lambda: predicate() or self.eof, timeout):
                raise TimeoutError(f"{what} did not happen within {timeout:.1f} s")
            if not predicate():
                raise EOFError(f"the server exited before {what} (status {self.process.poll()})")

    # MARK: reading

    def _read(self) -> None:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        rest = b""
        while True:
            try:
                chunk = os.read(fd, 1 << 20)
            except OSError:
                chunk = b""
            if not chunk:
                break
            self.bytes_read += len(chunk)
            end = chunk.rfind(b"\n")
            if end < 0:
                rest += chunk
                continue
            lines = (rest + chunk[:end]).split(b"\n")
            rest = chunk[end + 1:]
            with self.changed:
                for raw in lines:
                    if raw:
                        self._dispatch(raw.decode())
                self.changed.notify_all()
        with self.changed:
            self.eof = True
            self.changed.notify_all()

    def _dispatch(self, line: str) -> None:
        if self.lines is not None:
            self.lines.append(line)
        message = json.loads(line)
        if isinstance(message, list):
            for item in message:
                self._dispatch_one(item)
        else:
            self._dispatch_one(message)

    def _dispatch_one(self, message: dict[str, Any]) -> None:
        if "id" in message and "method" not in message:
            callback = self.callbacks.pop(message["id"], None)
            if callback is not None:
                callback(message)
            else:
                self.responses[message["id"]] = message
            return
        method = message.get("method")
        params = message.get("params", {})
        if method == "job/finished":
            self.finished[params["jobId"]].append(params)
            self.finished_count += 1
        elif method == "job/progress":
            self.progress[params["jobId"]] = params
            self.progress_count += 1
        elif method == "engine/event":
            event = params.get("event", {})
            if params.get("stream") == "errors":
                self.error_events.append(event)
            elif event.get("tag") == "primekit.store.saved":
                data = event.get("data") or {}
                job_id = data.get("jobId")
                if job_id is not None:
                    self.saved[job_id] = max(self.saved.get(job_id, -1.0), float(data.get("percent", 0)))
                    self.saved_count += 1
            else:
                self.events.append(params)

    # MARK: the process

    def memory(self) -> dict[str, int]:
        return proc_status(self.pid)

    def kill(self) -> int:
        """SIGKILL, then reap; returns the exit status."""
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        return self.wait(30)

    def close_stdin(self) -> None:
        assert self.process.stdin is not None
        with self._write_lock:
            try:
                self.process.stdin.close()
            except OSError:
                pass

    def wait(self, timeout: float) -> int:
        status = self.process.wait(timeout)
        self.reader.join(timeout)
        return status

    def stop(self, timeout: float = 60.0) -> int:
        """End of input: the server checkpoints and exits; returns the exit status (killed after timeout)."""
        if self.process.poll() is None:
            self.close_stdin()
            try:
                return self.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
                raise
        return self.wait(timeout)

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            try:
                self.stop(30)
            except subprocess.TimeoutExpired:
                pass
        if self._stderr is not subprocess.DEVNULL:
            self._stderr.close()  # type: ignore[union-attr]


def list_jobs(server: Server, timeout: float = 60.0) -> dict[str, dict[str, Any]]:
    return {job["jobId"]: job for job in server.call("job/list", None, timeout)["jobs"]}


def chunks(items: list[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


# MARK: - pytest


@pytest.fixture
def seed(request: pytest.FixtureRequest) -> Iterator[int]:
    """A seed for the test's randomness: $STRESS_SEED or a fresh one; printed when the test fails."""
    value = int(os.environ.get("STRESS_SEED") or random.SystemRandom().randrange(1, 2**31))
    print(f"seed {value} (STRESS_SEED={value} repeats it)")
    yield value
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        sys.stderr.write(f"\n{request.node.nodeid} failed with STRESS_SEED={value}\n")


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if report.when == "call":
        item.rep_call = report  # type: ignore[attr-defined]
        seed_value = item.funcargs.get("seed") if hasattr(item, "funcargs") else None  # type: ignore[attr-defined]
        if report.failed and seed_value is not None:
            report.sections.append(("seed", f"STRESS_SEED={seed_value}"))
    return report
