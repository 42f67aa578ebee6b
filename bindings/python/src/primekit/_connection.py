"""One ``primekit serve`` process and the pipes to it, shared by :class:`Client` and :class:`AsyncClient`.

A reader thread always drains the bridge's stdout and hands each message to whoever waits for it; a second thread
keeps the last lines of its stderr for error messages. Requests are written whole, under one lock, from the
calling thread. Nothing here holds a reference to the client objects, so a client that is dropped can be
finalized (which stops its bridge).
"""

from __future__ import annotations

import collections
import itertools
import json
import os
import subprocess
import threading
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from .errors import BridgeClosedError, PrimeKitError

# What a response is handed to (on the reader thread), and what is told when the bridge goes away.
OnResponse = Callable[[dict[str, Any]], None]
OnFailure = Callable[[BridgeClosedError], None]

def _encoder() -> Callable[[Any], str]:
    """Compact JSON text. One C encoder made once (``json.dumps`` makes a new one per call, which costs more than
    the encoding of a small request); the pure-Python encoder where the C one is missing."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return json.JSONEncoder(separators=(",", ":")).encode
    encode = make(None, None, json.encoder.encode_basestring_ascii, None, ":", ",", False, False, True)
    return lambda value: "".join(encode(value, 0))


_dumps = _encoder()
_decode = json.JSONDecoder().raw_decode  # a line holds one value and nothing else: no need to check the rest


class JobSink(Protocol):
    """What the reader thread tells a job about (a sync or an async job)."""

    def _on_progress(self, params: dict[str, Any]) -> None: ...

    def _on_finished(self, params: dict[str, Any]) -> None: ...

    def _on_stopped(self, error: BridgeClosedError, checkpoint: str | None) -> None: ...


class Connection:
    """The bridge process, its reader thread and the table of requests awaiting an answer."""

    def __init__(self, executable: str, args: Sequence[str] = (), env: dict[str, str] | None = None) -> None:
        self.executable = executable
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[OnResponse, OnFailure]] = {}
        self.jobs: dict[str, JobSink] = {}
        self.event_sinks: list[Callable[[dict[str, Any] | None], None]] = []
        # Woken when a job gets its id, a progress report or its end (waiters are counted: no waiter, no lock).
        self.changed = threading.Condition(threading.Lock())
        self.waiting = 0
        self._write_lock = threading.Lock()
        self.closed = False
        self.closing = False
        self.close_error: BridgeClosedError | None = None
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=20)
        self.process = subprocess.Popen(
            [executable, "serve", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            # Its own session: a Ctrl-C in the terminal reaches this program, which can still shut it down cleanly.
            start_new_session=True,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self._stdin = self.process.stdin
        self.pid = self.process.pid
        for pipe in (self.process.stdin, self.process.stdout):
            _widen(pipe.fileno())
        # Lines waiting for the writer thread, which writes all that piled up in one call.
        self._outgoing: list[bytes] = []
        self._flush = threading.Event()
        self._io_lock = threading.Lock()  # held by whoever writes to stdin, so writes never interleave
        self.reader = threading.Thread(target=self._read, name=f"primekit-reader-{self.pid}", daemon=True)
        self._writer = threading.Thread(target=self._write, name=f"primekit-writer-{self.pid}", daemon=True)
        self._stderr_reader = threading.Thread(target=self._read_stderr, name=f"primekit-stderr-{self.pid}",
                                               daemon=True)
        self.reader.start()
        self._writer.start()
        self._stderr_reader.start()

    # MARK: - Writing

    def send(self, method: str, params: dict[str, Any] | None, on_response: OnResponse,
             on_failure: OnFailure) -> int:
        """Queues a request for writing; ``on_response`` gets the response message on the reader thread
        (``on_failure`` the error if the bridge goes away first). Returns the request id.

        Never blocks on the pipe: the writer thread writes, so a caller that sends without reading cannot
        deadlock with a bridge that waits for its output to be read."""
        request_id = next(self._ids)
        head = _heads.get(method)
        if head is None:
            head = _heads[method] = '"method":%s' % _dumps(method)
        if params is None:
            line = ('{"jsonrpc":"2.0","id":%d,%s}\n' % (request_id, head)).encode()
        else:
            line = ('{"jsonrpc":"2.0","id":%d,%s,"params":%s}\n' % (request_id, head, _dumps(params))).encode()
        with self._write_lock:
            if self.closed or self.closing:
                raise self._closed_error()
            self._pending[request_id] = (on_response, on_failure)
            outgoing = self._outgoing
            outgoing.append(line)
            if len(outgoing) == 1:
                self._flush.set()
        return request_id

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Queues a notification (no answer comes)."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        with self._write_lock:
            if self.closed:
                raise self._closed_error()
            self._outgoing.append(_dumps(message).encode() + b"\n")
            if len(self._outgoing) == 1:
                self._flush.set()

    def _take(self) -> bytes:
        with self._write_lock:
            self._flush.clear()
            data = b"".join(self._outgoing)
            self._outgoing.clear()
        return data

    def _write(self) -> None:
        fd = self._stdin.fileno()
        while True:
            self._flush.wait()
            with self._io_lock:
                if self._stdin.closed:
                    return
                data = self._take()
                try:
                    _write_all(fd, data)
                except OSError:
                    return  # the bridge is gone: the reader sees the end of its output and fails what waits

    def call(self, method: str, params: dict[str, Any] | None = None, timeout: float | None = None) -> Any:
        """Sends a request and blocks until its result (raises :class:`PrimeKitError` for an error answer)."""
        if threading.current_thread() is self.reader:
            raise RuntimeError("a primekit callback cannot wait for the bridge (it runs on the thread that reads "
                               "the answers); send the request from another thread")
        done = threading.Event()
        box: list[Any] = []

        def answered(message: dict[str, Any]) -> None:
            box.append(message)
            done.set()

        def failed(error: BridgeClosedError) -> None:
            box.append(error)
            done.set()

        self.send(method, params, answered, failed)
        if not done.wait(timeout):
            raise TimeoutError(f"no answer to {method} within {timeout} s")
        return unwrap(box[0])

    def _closed_error(self) -> BridgeClosedError:
        if self.close_error is not None:
            return self.close_error
        return BridgeClosedError("the primekit client is closed" if self.closing or self.closed
                                 else "the primekit bridge is not running")

    # MARK: - Reading

    def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        fd = stdout.fileno()
        rest = b""
        dispatch = self._dispatch
        try:
            while True:
                chunk = os.read(fd, _READ_SIZE)
                if not chunk:
                    break
                end = chunk.rfind(b"\n")
                if end < 0:
                    rest += chunk
                    continue
                # Whole lines only, decoded at once (a UTF-8 sequence never spans a newline).
                text = (rest + chunk[:end] if rest else chunk[:end]).decode("utf-8", "replace")
                rest = chunk[end + 1:]
                for line in text.split("\n"):
                    if line:
                        dispatch(line)
        except Exception as error:  # a bug in a handler must not leave every future hanging
            self._on_eof(f"the primekit reader failed: {error!r}")
            raise
        self._on_eof(None)

    def _dispatch(self, line: str) -> None:
        try:
            message = _decode(line)[0]
        except ValueError:
            return  # not a protocol message (stdout carries nothing else)
        if type(message) is dict:
            request_id = message.get("id")
            if request_id is not None:
                entry = self._pending.pop(request_id, None)
                if entry is not None:
                    entry[0](message)
                return
            method = message.get("method")
            if method == "job/finished":
                params = message["params"]
                job = self.jobs.pop(params["jobId"], None)
                if job is not None:
                    job._on_finished(params)
            elif method == "job/progress":
                params = message["params"]
                job = self.jobs.get(params["jobId"])
                if job is not None:
                    job._on_progress(params)
            elif method == "job/rangeBlock":
                params = message["params"]
                on_block = getattr(self.jobs.get(params["jobId"]), "_on_block", None)
                if on_block is not None:
                    on_block(params)
            elif method == "engine/event":
                for sink in list(self.event_sinks):
                    sink(message.get("params"))
        elif type(message) is list:
            for item in message:
                if type(item) is dict:
                    entry = self._pending.pop(item.get("id"), None)  # type: ignore[arg-type]
                    if entry is not None:
                        entry[0](item)

    def _read_stderr(self) -> None:
        stderr = self.process.stderr
        assert stderr is not None
        for line in stderr:
            self._stderr_tail.append(line.decode("utf-8", "replace").rstrip())

    def _on_eof(self, why: str | None) -> None:
        """The bridge's stdout ended: every request and job still waiting fails."""
        try:
            status: int | None = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            status = None
        with self._write_lock:
            if self.closing:
                message = "the primekit client was closed"
            else:
                message = why or ("the primekit bridge exited unexpectedly" +
                                  (f" (status {status})" if status is not None else ""))
                self._stderr_reader.join(timeout=1)
                tail = [line for line in self._stderr_tail if line]
                if tail:
                    message += "; its last output: " + " | ".join(tail[-5:])
            self.close_error = BridgeClosedError(message, None, {"returncode": status})
            self.closed = True
            pending, self._pending = self._pending, {}
        for _, on_failure in pending.values():
            on_failure(self.close_error)
        jobs = list(self.jobs.values())
        self.jobs.clear()
        for job in jobs:
            job._on_stopped(self.close_error, None)
        for sink in list(self.event_sinks):
            sink(None)
        self.wake()

    def wait_until(self, predicate: Callable[[], bool], timeout: float | None = None) -> bool:
        """Blocks until ``predicate()`` holds (re-checked at each :meth:`wake`); False on timeout."""
        if threading.current_thread() is self.reader:
            raise RuntimeError("a primekit callback cannot wait for the bridge (it runs on the thread that reads "
                               "the answers)")
        with self.changed:
            self.waiting += 1
            try:
                return self.changed.wait_for(predicate, timeout)
            finally:
                self.waiting -= 1

    def wake(self) -> None:
        """Wakes every thread waiting on :attr:`changed` (cheap when none does)."""
        if self.waiting:
            with self.changed:
                self.changed.notify_all()

    # MARK: - Ending

    def shutdown(self, timeout: float) -> list[dict[str, Any]]:
        """``shutdown`` → ``exit`` → close stdin → terminate, then kill, after ``timeout`` each.
        Returns the jobs the shutdown stopped, with their checkpoints."""
        stopped: list[dict[str, Any]] = []
        if not self.closed and not self.closing:
            try:
                stopped = list(self.call("shutdown", None, timeout=timeout).get("jobs", []))
            except (PrimeKitError, TimeoutError, RuntimeError):
                pass
            for entry in stopped:
                job = self.jobs.pop(entry.get("jobId", ""), None)
                if job is not None:
                    checkpoint = entry.get("checkpoint")
                    job._on_stopped(BridgeClosedError(
                        f"the primekit client was closed; job {entry.get('jobId')} was stopped at a checkpoint",
                        None, {"checkpoint": checkpoint}), checkpoint)
            try:
                self.notify("exit")
            except PrimeKitError:
                pass
        self.closing = True
        self.stop(timeout)
        return stopped

    def stop(self, timeout: float) -> None:
        """Closes stdin (which also means shutdown + exit to the bridge), then terminates and kills after
        ``timeout`` each. Safe to call more than once, from a finalizer too."""
        self.closing = True
        with self._io_lock:
            data = self._take()
            try:
                if data:
                    _write_all(self._stdin.fileno(), data)
            except (OSError, ValueError):
                pass
            try:
                self._stdin.close()
            except OSError:
                pass
        self._flush.set()  # the writer thread sees stdin closed and ends
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if threading.current_thread() is not self.reader:
            self.reader.join(timeout=timeout)


_READ_SIZE = 1 << 20
_heads: dict[str, str] = {}  # '"method":"job/submit"' by method name


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _widen(fd: int) -> None:
    """Asks Linux for 1 MiB pipe buffers (fewer wake-ups and system calls when many messages flow)."""
    try:
        import fcntl
        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
    except (ImportError, OSError):
        pass


def unwrap(message: dict[str, Any] | BaseException) -> Any:
    """The ``result`` of a response, or its error raised as a :class:`PrimeKitError`."""
    if isinstance(message, BaseException):
        raise message
    if "error" in message:
        raise PrimeKitError.from_error(message["error"])
    return message.get("result")


def environment_with(extra: dict[str, str] | None) -> dict[str, str] | None:
    """The child's environment: this process's, with ``extra`` on top (None: inherit as is)."""
    if not extra:
        return None
    env = dict(os.environ)
    env.update(extra)
    return env
