"""The blocking client: :class:`Client` and its :class:`Job` futures."""

from __future__ import annotations

import os
import queue
import weakref
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, InvalidStateError
from typing import Any, Generic, Literal, TypeVar, cast, overload

from . import _numbers
from ._connection import Connection, environment_with
from ._job import JobRecord
from ._locate import find_executable
from .errors import BridgeClosedError, PrimeKitError
from .range import RangeIterator
from .types import (EngineEvent, FactorResult, JobResult, Mode, PrimalityResult, Priority, Progress,
                    StoppedJob)

R = TypeVar("R")

__version__ = "0.1.0"
CLIENT_INFO = {"name": "primekit-python", "version": __version__}


def effort_params(ecm_digits: int | None, work_limit: int | None, time_limit_ms: int | None) -> dict[str, Any]:
    """The effort limits among the ``job/submit`` params (those given)."""
    effort: dict[str, Any] = {}
    if ecm_digits is not None:
        effort["ecmDigits"] = ecm_digits
    if work_limit is not None:
        effort["workLimit"] = _numbers.to_decimal(work_limit)
    if time_limit_ms is not None:
        effort["timeLimitMs"] = time_limit_ms
    return effort


def submit_params(n: int, kind: str, from_: int | None, bound: int | None, priority: Priority | None,
                  progress_interval_ms: int | None, depends_on: list[str] | None, *, mode: Mode | None = None,
                  ecm_digits: int | None = None, work_limit: int | None = None,
                  time_limit_ms: int | None = None) -> dict[str, Any]:
    """The ``job/submit`` params for a candidate (values are passed on; the bridge checks them)."""
    params: dict[str, Any] = {"kind": kind, "candidate": _numbers.to_decimal(n)}
    if from_ is not None:
        params["from"] = _numbers.to_decimal(from_)
    if bound is not None:
        params["bound"] = _numbers.to_decimal(bound)
    if mode is not None:
        params["mode"] = mode
    params.update(effort_params(ecm_digits, work_limit, time_limit_ms))
    return _with_scheduling(params, priority, progress_interval_ms, depends_on)


def checkpoint_params(checkpoint: str, priority: Priority | None, progress_interval_ms: int | None,
                      depends_on: list[str] | None) -> dict[str, Any]:
    """The ``job/submit`` params that restore a job from its checkpoint text."""
    return _with_scheduling({"checkpoint": checkpoint}, priority, progress_interval_ms, depends_on)


def _with_scheduling(params: dict[str, Any], priority: Priority | None, progress_interval_ms: int | None,
                     depends_on: list[str] | None) -> dict[str, Any]:
    """Adds the submission's priority, progress interval and dependencies, those that are set."""
    if priority is not None:
        params["priority"] = priority
    if progress_interval_ms is not None:
        params["progressIntervalMs"] = progress_interval_ms
    if depends_on is not None:
        params["dependsOn"] = depends_on
    return params


class Job(JobRecord, Future[R], Generic[R]):
    """A submitted job: a :class:`concurrent.futures.Future` of its result.

    ``result()`` returns the converted result (:class:`~primekit.types.FactorResult` or
    :class:`~primekit.types.PrimalityResult`), raises :class:`~primekit.errors.PrimeKitError` when the job or its
    submission failed (:class:`~primekit.errors.InvalidParamsError`, a ``ValueError``, for an invalid candidate),
    :class:`concurrent.futures.CancelledError` after a cancellation, and
    :class:`~primekit.errors.BridgeClosedError` when the bridge went away first.
    """

    def __init__(self, connection: Connection) -> None:
        super().__init__()
        self._connection = connection

    def __repr__(self) -> str:
        return f"<primekit.Job {self._job_id or '(submitting)'} {self._wire_state or ''}>"

    # MARK: - What the reader thread reports

    def _on_submitted(self, message: dict[str, Any]) -> None:
        result = message.get("result")
        if result is None:
            self._fail(PrimeKitError.from_error(message.get("error") or {}))
        else:
            self._connection.jobs[self._record_submitted(result)] = self
        self._connection.wake()

    def _on_submit_failed(self, error: BridgeClosedError) -> None:
        self._fail(error)
        self._connection.wake()

    def _on_progress(self, params: dict[str, Any]) -> None:
        self._record_progress(params)
        self._connection.wake()

    def _on_finished(self, params: dict[str, Any]) -> None:
        outcome = self._record_finished(params)
        if isinstance(outcome, PrimeKitError):
            self._fail(outcome)
        elif outcome is None:
            self._mark_cancelled()
        else:
            try:
                self.set_result(cast(R, outcome))
            except InvalidStateError:
                pass
        self._connection.wake()

    def _on_stopped(self, error: BridgeClosedError, checkpoint: str | None) -> None:
        self._record_stopped(checkpoint)
        self._fail(error)
        self._connection.wake()

    def _fail(self, error: BaseException) -> None:
        try:
            self.set_exception(error)
        except InvalidStateError:
            pass

    def _mark_cancelled(self) -> None:
        if not self.cancelled() and super().cancel():
            try:
                self.set_running_or_notify_cancel()  # tells concurrent.futures.wait() and as_completed()
            except RuntimeError:
                pass  # another thread did it first

    # MARK: - Public

    @property
    def job_id(self) -> str:
        """The bridge's id for the job ("j1", …); waits for the submission's answer.
        Raises the submission's error when it was refused."""
        if self._job_id is None:
            self._connection.wait_until(lambda: self._job_id is not None or self.done())
            if self._job_id is None:
                self.result()  # raises the submission's error
                raise AssertionError("unreachable")
        return self._job_id

    def progress(self, timeout: float | None = None) -> Iterator[Progress]:
        """Yields the job's progress reports as they arrive and ends when the job ends (its result is then
        ready). Reports that arrive faster than they are read are skipped: each item is the latest, and ``seq``
        increases strictly. ``timeout`` bounds each wait for the next report (``TimeoutError``)."""
        seen = 0

        def ready() -> bool:
            latest = self._latest
            return (latest is not None and latest["seq"] > seen) or self.done()

        while True:
            if not self._connection.wait_until(ready, timeout):
                raise TimeoutError(f"no progress from job {self._job_id} within {timeout} s")
            latest = self._latest
            if latest is not None and latest["seq"] > seen:
                seen = latest["seq"]
                yield _numbers.progress(latest)
                continue
            return

    def pause(self) -> str:
        """Pauses the job at its next slice boundary; returns (and keeps) its checkpoint."""
        return self._record_paused(self._connection.call("job/pause", {"jobId": self.job_id}))

    def resume(self) -> None:
        """Resumes a paused job."""
        answer = self._connection.call("job/resume", {"jobId": self.job_id})
        self._wire_state = answer["state"]

    def cancel(self) -> bool:
        """Cancels the job on the bridge. Returns True when it is cancelled (``result()`` then raises
        ``CancelledError`` and :attr:`checkpoint` holds where it stopped), False when it had already ended."""
        if self.done():
            return self.cancelled()
        try:
            job_id = self.job_id
        except (PrimeKitError, BridgeClosedError):
            return False
        if self.done():
            return self.cancelled()
        try:
            answer = self._connection.call("job/cancel", {"jobId": job_id})
        except PrimeKitError as error:
            if error.code == 1002 and isinstance(error.data, dict) and error.data.get("state") == "cancelled":
                self._mark_cancelled()
            return self.cancelled()
        self._record_cancelled(answer)
        self._mark_cancelled()
        self._connection.wake()
        return True


class EventStream(Iterator[EngineEvent]):
    """The ``engine/event`` notifications that arrive after it was made, in order; it ends when the bridge
    closes. Iterating blocks; :meth:`get` takes a timeout. :meth:`close` stops collecting."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._queue: queue.SimpleQueue[dict[str, Any] | None] = queue.SimpleQueue()
        self._ended = connection.closed
        connection.event_sinks.append(self._queue.put)

    def get(self, timeout: float | None = None) -> EngineEvent:
        """The next event; ``TimeoutError`` when none comes in time, ``StopIteration`` after the bridge closed."""
        if self._ended:
            raise StopIteration
        try:
            item = self._queue.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no engine event within {timeout} s") from None
        if item is None:
            self._ended = True
            raise StopIteration
        return cast(EngineEvent, item)

    def __next__(self) -> EngineEvent:
        return self.get()

    def close(self) -> None:
        try:
            self._connection.event_sinks.remove(self._queue.put)
        except ValueError:
            pass
        self._ended = True


class Client:
    """A ``primekit serve`` process and a blocking API over it. Use it as a context manager, or call
    :meth:`close`; a client dropped without closing stops its bridge when it is garbage-collected.

    Args:
        executable: the ``primekit`` executable (else ``PRIMEKIT_BIN``, ``primekit`` on ``PATH``, the source
            tree's release build: see :func:`primekit.find_executable`).
        args: extra arguments after ``primekit serve`` (e.g. ``["--state-dir", path]``).
        env: environment variables to set for the bridge, on top of this process's.
        timeout: how long :meth:`close` waits at each step (shutdown answer, exit) before going further.
    """

    def __init__(self, executable: str | os.PathLike[str] | None = None, *, args: Sequence[str] = (),
                 env: dict[str, str] | None = None, timeout: float = 10.0) -> None:
        self._connection = connection = Connection(find_executable(executable), args, environment_with(env))
        self._timeout = timeout
        self._finalizer = weakref.finalize(self, connection.stop, timeout)
        try:
            #: The ``initialize`` result: protocolVersion, server, limits, capabilities.
            self.server_info: dict[str, Any] = connection.call(
                "initialize", {"protocolVersion": 1, "client": CLIENT_INFO}, timeout)
        except BaseException:
            self._finalizer()
            raise

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def pid(self) -> int:
        """The bridge process's id."""
        return self._connection.pid

    @property
    def executable(self) -> str:
        """The path of the executable that runs the bridge."""
        return self._connection.executable

    # MARK: - Requests

    def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Sends any request and returns its ``result`` as the bridge sent it (decimal strings stay strings).
        Raises :class:`~primekit.errors.PrimeKitError` for an error answer."""
        return self._connection.call(method, params)

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Sends a notification (no answer)."""
        self._connection.notify(method, params)

    @overload
    def submit(self, n: int, *, kind: Literal["factor"] = ..., from_: int | None = ..., bound: int | None = ...,
               priority: Priority | None = ..., progress_interval_ms: int | None = ...,
               mode: Mode | None = ..., ecm_digits: int | None = ..., work_limit: int | None = ...,
               time_limit_ms: int | None = ...,
               depends_on: Iterable[Job[Any] | str] | None = ...) -> Job[FactorResult]: ...

    @overload
    def submit(self, n: int, *, kind: Literal["isPrime"], from_: int | None = ..., bound: int | None = ...,
               priority: Priority | None = ..., progress_interval_ms: int | None = ...,
               mode: Mode | None = ..., ecm_digits: int | None = ..., work_limit: int | None = ...,
               time_limit_ms: int | None = ...,
               depends_on: Iterable[Job[Any] | str] | None = ...) -> Job[PrimalityResult]: ...

    def submit(self, n: int, *, kind: Literal["factor", "isPrime"] = "factor", from_: int | None = None,
               bound: int | None = None, priority: Priority | None = None, progress_interval_ms: int | None = None,
               mode: Mode | None = None, ecm_digits: int | None = None, work_limit: int | None = None,
               time_limit_ms: int | None = None, depends_on: Iterable[Job[Any] | str] | None = None) -> Job[Any]:
        """Submits a job and returns at once (the request is written; the answer is read in the background).

        Args:
            n: the candidate (at least 2).
            kind: ``"factor"`` or ``"isPrime"``.
            from_: the first trial divisor (a trial-division job).
            bound: the last trial divisor (a trial-division job; default: √n, capped at 2^32).
            mode: ``"complete"`` (every prime factor; the default) or ``"trial"`` (trial division to the default
                bound, as ``from_``/``bound`` give).
            ecm_digits: effort limit: search for factors of up to this many digits (1-70), then stop.
            work_limit: effort limit: at most this many work units (at least 1).
            time_limit_ms: effort limit: at most this much running time, in milliseconds (at least 1).
            priority: ``"veryLow"`` … ``"veryHigh"`` or 0-4.
            progress_interval_ms: how often ``job/progress`` reports come (default 250 ms).
            depends_on: jobs (or job ids) that must succeed before this one starts.

        A job an effort limit stops succeeds with a partial answer: the composite ``parts`` left, with what was
        tried on each. A refused submission (an invalid candidate or option: ``ValueError``) is raised by
        ``result()`` and ``job_id``.
        """
        params = submit_params(n, kind, from_, bound, priority, progress_interval_ms, _ids(depends_on), mode=mode,
                               ecm_digits=ecm_digits, work_limit=work_limit, time_limit_ms=time_limit_ms)
        return self._submit(params)

    def resume_from(self, checkpoint: str, *, priority: Priority | None = None,
                    progress_interval_ms: int | None = None,
                    depends_on: Iterable[Job[Any] | str] | None = None) -> Job[JobResult]:
        """Submits a job that goes on from a checkpoint (from :meth:`Job.pause`, :meth:`Job.cancel`,
        :attr:`Job.checkpoint` or :meth:`close`), in this bridge or another one."""
        return self._submit(checkpoint_params(checkpoint, priority, progress_interval_ms, _ids(depends_on)))

    def factor_range(self, first: int, last: int, *, priority: Priority | None = None,
                     progress_interval_ms: int | None = None, timeout: float | None = None) -> RangeIterator:
        """Factors every number from ``first`` to ``last`` (2 <= first <= last, fewer than 2^128 numbers, of any size; protocol minor 2) and
        returns an iterator of their blocks, in order (see :class:`~primekit.range.RangeIterator`). A refused range
        (``ValueError``, an :class:`~primekit.errors.InvalidParamsError`) is raised by the first ``next()``."""
        params: dict[str, Any] = {"kind": "factorRange", "first": _numbers.to_decimal(first),
                                  "last": _numbers.to_decimal(last)}
        if priority is not None:
            params["priority"] = priority
        if progress_interval_ms is not None:
            params["progressIntervalMs"] = progress_interval_ms
        blocks = RangeIterator(self._connection, timeout)
        self._connection.send("job/submit", params, blocks._on_submitted, blocks._on_submit_failed)
        return blocks

    def _submit(self, params: dict[str, Any]) -> Job[Any]:
        job: Job[Any] = Job(self._connection)
        self._connection.send("job/submit", params, job._on_submitted, job._on_submit_failed)
        return job

    def is_prime(self, n: int, *, from_: int | None = None, bound: int | None = None, mode: Mode | None = None,
                 ecm_digits: int | None = None, work_limit: int | None = None,
                 time_limit_ms: int | None = None) -> bool | None:
        """Whether ``n`` is prime (None when the bridge could not tell, e.g. above a ``bound``)."""
        return self.submit(n, kind="isPrime", from_=from_, bound=bound, mode=mode, ecm_digits=ecm_digits,
                           work_limit=work_limit, time_limit_ms=time_limit_ms).result()["isPrime"]

    def factor(self, n: int, *, from_: int | None = None, bound: int | None = None, mode: Mode | None = None,
               ecm_digits: int | None = None, work_limit: int | None = None,
               time_limit_ms: int | None = None) -> FactorResult:
        """The factorization of ``n`` (see :class:`~primekit.types.FactorResult`); options as for :meth:`submit`."""
        return self.submit(n, kind="factor", from_=from_, bound=bound, mode=mode, ecm_digits=ecm_digits,
                           work_limit=work_limit, time_limit_ms=time_limit_ms).result()

    def suspend(self) -> None:
        """Suspends the queue: running jobs stop at their next slice, nothing new starts."""
        self._connection.call("queue/suspend")

    def resume(self) -> None:
        """Resumes the queue after :meth:`suspend`."""
        self._connection.call("queue/resume")

    def events(self, streams: Sequence[str] | None = None, tags: Sequence[str] | None = None) -> EventStream:
        """A stream of ``engine/event`` notifications. With ``streams`` (``"errors"``, ``"lifecycle"``,
        ``"pluginData"``), it also subscribes to them (``plugin/subscribe``, with ``tags`` prefixes)."""
        stream = EventStream(self._connection)
        if streams is not None:
            params: dict[str, Any] = {"streams": list(streams)}
            if tags is not None:
                params["tags"] = list(tags)
            self._connection.call("plugin/subscribe", params)
        return stream

    # MARK: - Ending

    def close(self, timeout: float | None = None) -> list[StoppedJob]:
        """Shuts the bridge down: ``shutdown`` (unfinished jobs stop at a checkpoint, and their futures fail
        with :class:`~primekit.errors.BridgeClosedError`), ``exit``, stdin closed, then terminate and kill after
        ``timeout`` each. Returns the jobs that were stopped, with their checkpoints. Safe to call twice."""
        if not self._finalizer.alive:
            return []
        self._finalizer.detach()
        stopped = self._connection.shutdown(self._timeout if timeout is None else timeout)
        return cast(list[StoppedJob], stopped)


def _ids(jobs: Iterable[Any] | None) -> list[str] | None:
    """Job ids from jobs or ids."""
    if jobs is None:
        return None
    return [job if isinstance(job, str) else job.job_id for job in jobs]
