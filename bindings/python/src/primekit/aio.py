"""The asyncio client: :class:`AsyncClient` and its awaitable :class:`AsyncJob`.

It shares the blocking client's connection (a reader thread drains the bridge's stdout) and hands every answer
and notification to the event loop with ``call_soon_threadsafe``, in the order they arrived.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import AsyncIterator, Callable, Generator, Iterable, Sequence
from typing import Any, Generic, Literal, TypeVar, cast, overload

from . import _numbers
from ._connection import Connection, environment_with, unwrap
from ._job import JobRecord
from ._locate import find_executable
from .client import CLIENT_INFO, checkpoint_params, submit_params
from .errors import BridgeClosedError, PrimeKitError
from .types import EngineEvent, FactorResult, JobResult, Mode, PrimalityResult, Priority, Progress, StoppedJob

R = TypeVar("R")


def _post(loop: asyncio.AbstractEventLoop, callback: Callable[..., None], *args: Any) -> None:
    """Runs ``callback(*args)`` on the loop (from the reader thread); a closed loop has nobody to tell."""
    try:
        loop.call_soon_threadsafe(callback, *args)
    except RuntimeError:
        pass


def _settle(future: asyncio.Future[Any], outcome: Any) -> None:
    if not future.done():
        if isinstance(outcome, BaseException):
            future.set_exception(outcome)
        else:
            future.set_result(outcome)


def _retrieve(future: asyncio.Future[Any]) -> None:
    """Marks a job's error as seen: a job nobody awaits must not log "exception was never retrieved"."""
    if not future.cancelled():
        future.exception()


class AsyncJob(JobRecord, Generic[R]):
    """A submitted job. ``await job`` gives its result (or raises as :class:`primekit.Job`'s ``result()`` does);
    cancelling the task that awaits it cancels the job on the bridge."""

    def __init__(self, connection: Connection, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self._connection = connection
        self._loop = loop
        self._future: asyncio.Future[R] = loop.create_future()
        self._future.add_done_callback(_retrieve)
        self._submitted: asyncio.Future[None] = loop.create_future()
        self._waiters: list[asyncio.Future[None]] = []

    def __repr__(self) -> str:
        return f"<primekit.AsyncJob {self._job_id or '(submitting)'} {self._wire_state or ''}>"

    # MARK: - Reported on the reader thread

    def _on_submitted(self, message: dict[str, Any]) -> None:
        result = message.get("result")
        if result is None:
            _post(self._loop, _settle, self._submitted, PrimeKitError.from_error(message.get("error") or {}))
            return
        self._connection.jobs[self._record_submitted(result)] = self
        _post(self._loop, _settle, self._submitted, None)

    def _on_submit_failed(self, error: BridgeClosedError) -> None:
        _post(self._loop, _settle, self._submitted, error)

    def _on_progress(self, params: dict[str, Any]) -> None:
        _post(self._loop, self._progressed, params)

    def _on_finished(self, params: dict[str, Any]) -> None:
        _post(self._loop, self._finished, params)

    def _on_stopped(self, error: BridgeClosedError, checkpoint: str | None) -> None:
        _post(self._loop, self._stopped, error, checkpoint)

    # MARK: - The same, on the loop

    def _progressed(self, params: dict[str, Any]) -> None:
        self._record_progress(params)
        self._wake()

    def _finished(self, params: dict[str, Any]) -> None:
        outcome = self._record_finished(params)
        if not self._future.done():
            if isinstance(outcome, PrimeKitError):
                self._future.set_exception(outcome)
            elif outcome is None:
                self._future.cancel()
            else:
                self._future.set_result(cast(R, outcome))
        self._wake()

    def _stopped(self, error: BridgeClosedError, checkpoint: str | None) -> None:
        self._record_stopped(checkpoint)
        if not self._future.done():
            self._future.set_exception(error)
        self._wake()

    def _wake(self) -> None:
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._waiters.clear()

    # MARK: - Public

    def __await__(self) -> Generator[Any, None, R]:
        return self._wait().__await__()

    async def _wait(self) -> R:
        try:
            return await asyncio.shield(self._future)
        except asyncio.CancelledError:
            if not self._future.done():
                self._send_cancel()  # the awaiting task was cancelled: so is the job
            raise

    def _send_cancel(self) -> None:
        """Sends ``job/cancel`` without waiting: the request is written before this returns, so later requests
        see the job cancelled; its ``job/finished`` settles the future."""
        if self._job_id is None:
            return
        try:
            self._connection.send("job/cancel", {"jobId": self._job_id}, lambda _: None, lambda _: None)
        except PrimeKitError:
            pass

    @property
    def job_id(self) -> str:
        """The bridge's id for the job ("j1", …)."""
        assert self._job_id is not None
        return self._job_id

    def done(self) -> bool:
        return self._future.done()

    def cancelled(self) -> bool:
        return self._future.cancelled()

    def result(self) -> R:
        """The result of a finished job (``asyncio.InvalidStateError`` before)."""
        return self._future.result()

    async def progress(self) -> AsyncIterator[Progress]:
        """Yields the job's progress reports as they arrive and ends when the job ends. Each item is the latest
        report (slower readers skip some); ``seq`` increases strictly."""
        seen = 0
        while True:
            latest = self._latest
            if latest is not None and latest["seq"] > seen:
                seen = latest["seq"]
                yield _numbers.progress(latest)
                continue
            if self._future.done():
                return
            waiter: asyncio.Future[None] = self._loop.create_future()
            self._waiters.append(waiter)
            await waiter

    async def pause(self) -> str:
        """Pauses the job; returns (and keeps) its checkpoint."""
        return self._record_paused(await _call(self._connection, self._loop, "job/pause", {"jobId": self.job_id}))

    async def resume(self) -> None:
        """Resumes a paused job."""
        answer = await _call(self._connection, self._loop, "job/resume", {"jobId": self.job_id})
        self._wire_state = answer["state"]

    async def cancel(self) -> bool:
        """Cancels the job on the bridge: True when it is cancelled (awaiting it raises ``CancelledError``),
        False when it had already ended."""
        if self._future.done():
            return self._future.cancelled()
        try:
            answer = await _call(self._connection, self._loop, "job/cancel", {"jobId": self.job_id})
        except PrimeKitError as error:
            if error.code == 1002 and isinstance(error.data, dict) and error.data.get("state") == "cancelled":
                self._future.cancel()
            return self._future.cancelled()
        self._record_cancelled(answer)
        self._future.cancel()
        self._wake()
        return True


async def _call(connection: Connection, loop: asyncio.AbstractEventLoop, method: str,
                params: dict[str, Any] | None) -> Any:
    future: asyncio.Future[Any] = loop.create_future()
    connection.send(method, params, lambda message: _post(loop, _settle, future, message),
                    lambda error: _post(loop, _settle, future, error))
    return unwrap(await future)


class AsyncEventStream(AsyncIterator[EngineEvent]):
    """The ``engine/event`` notifications that arrive after it was made; ends when the bridge closes."""

    def __init__(self, connection: Connection, loop: asyncio.AbstractEventLoop) -> None:
        self._connection = connection
        self._queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._ended = connection.closed
        self._sink = lambda item: _post(loop, self._queue.put_nowait, item)
        connection.event_sinks.append(self._sink)

    async def __anext__(self) -> EngineEvent:
        if self._ended:
            raise StopAsyncIteration
        item = await self._queue.get()
        if item is None:
            self._ended = True
            raise StopAsyncIteration
        return cast(EngineEvent, item)

    def close(self) -> None:
        try:
            self._connection.event_sinks.remove(self._sink)
        except ValueError:
            pass
        self._ended = True


class AsyncClient:
    """A ``primekit serve`` process and an asyncio API over it: ``async with AsyncClient() as client``.
    Arguments as for :class:`primekit.Client`."""

    def __init__(self, executable: str | os.PathLike[str] | None = None, *, args: Sequence[str] = (),
                 env: dict[str, str] | None = None, timeout: float = 10.0) -> None:
        self._executable = find_executable(executable)
        self._args = tuple(args)
        self._env = environment_with(env)
        self._timeout = timeout
        self._connection_: Connection | None = None
        self._loop_: asyncio.AbstractEventLoop | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None
        #: The ``initialize`` result (after :meth:`start`).
        self.server_info: dict[str, Any] = {}

    async def start(self) -> AsyncClient:
        """Starts the bridge (``async with`` does it)."""
        if self._connection_ is not None:
            return self
        self._loop_ = asyncio.get_running_loop()
        self._connection_ = connection = Connection(self._executable, self._args, self._env)
        self._finalizer = weakref.finalize(self, connection.stop, self._timeout)
        try:
            self.server_info = await asyncio.wait_for(
                self.request("initialize", {"protocolVersion": 1, "client": CLIENT_INFO}), self._timeout)
        except BaseException:
            self._finalizer()
            raise
        return self

    async def __aenter__(self) -> AsyncClient:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    @property
    def _connection(self) -> Connection:
        if self._connection_ is None:
            raise BridgeClosedError("the AsyncClient is not started: use `async with` or `await client.start()`")
        return self._connection_

    @property
    def _loop(self) -> asyncio.AbstractEventLoop:
        assert self._loop_ is not None
        return self._loop_

    @property
    def pid(self) -> int:
        """The bridge process's id."""
        return self._connection.pid

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Sends any request; returns its ``result`` as sent (raises :class:`PrimeKitError` for an error)."""
        return await _call(self._connection, self._loop, method, params)

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Sends a notification."""
        self._connection.notify(method, params)

    @overload
    async def submit(self, n: int, *, kind: Literal["factor"] = ..., from_: int | None = ...,
                     bound: int | None = ..., priority: Priority | None = ..., progress_interval_ms: int | None = ...,
                     mode: Mode | None = ..., ecm_digits: int | None = ..., work_limit: int | None = ...,
                     time_limit_ms: int | None = ...,
                     depends_on: Iterable[AsyncJob[Any] | str] | None = ...) -> AsyncJob[FactorResult]: ...

    @overload
    async def submit(self, n: int, *, kind: Literal["isPrime"], from_: int | None = ..., bound: int | None = ...,
                     priority: Priority | None = ..., progress_interval_ms: int | None = ...,
                     mode: Mode | None = ..., ecm_digits: int | None = ..., work_limit: int | None = ...,
                     time_limit_ms: int | None = ...,
                     depends_on: Iterable[AsyncJob[Any] | str] | None = ...) -> AsyncJob[PrimalityResult]: ...

    async def submit(self, n: int, *, kind: Literal["factor", "isPrime"] = "factor", from_: int | None = None,
                     bound: int | None = None, priority: Priority | None = None,
                     progress_interval_ms: int | None = None, mode: Mode | None = None,
                     ecm_digits: int | None = None, work_limit: int | None = None, time_limit_ms: int | None = None,
                     depends_on: Iterable[AsyncJob[Any] | str] | None = None) -> AsyncJob[Any]:
        """Submits a job and returns it once the bridge accepted it (``ValueError`` for an invalid candidate or
        option). Arguments as for :meth:`primekit.Client.submit`."""
        ids = None if depends_on is None else [d if isinstance(d, str) else d.job_id for d in depends_on]
        return await self._submit(submit_params(n, kind, from_, bound, priority, progress_interval_ms, ids, mode=mode,
                                                ecm_digits=ecm_digits, work_limit=work_limit,
                                                time_limit_ms=time_limit_ms))

    async def resume_from(self, checkpoint: str, *, priority: Priority | None = None,
                          progress_interval_ms: int | None = None,
                          depends_on: Iterable[AsyncJob[Any] | str] | None = None) -> AsyncJob[JobResult]:
        """Submits a job that goes on from a checkpoint."""
        ids = None if depends_on is None else [d if isinstance(d, str) else d.job_id for d in depends_on]
        return await self._submit(checkpoint_params(checkpoint, priority, progress_interval_ms, ids))

    async def _submit(self, params: dict[str, Any]) -> AsyncJob[Any]:
        job: AsyncJob[Any] = AsyncJob(self._connection, self._loop)
        self._connection.send("job/submit", params, job._on_submitted, job._on_submit_failed)
        await job._submitted
        return job

    async def is_prime(self, n: int, *, from_: int | None = None, bound: int | None = None, mode: Mode | None = None,
                       ecm_digits: int | None = None, work_limit: int | None = None,
                       time_limit_ms: int | None = None) -> bool | None:
        """Whether ``n`` is prime (None when the bridge could not tell)."""
        result = await (await self.submit(n, kind="isPrime", from_=from_, bound=bound, mode=mode,
                                          ecm_digits=ecm_digits, work_limit=work_limit, time_limit_ms=time_limit_ms))
        return result["isPrime"]

    async def factor(self, n: int, *, from_: int | None = None, bound: int | None = None, mode: Mode | None = None,
                     ecm_digits: int | None = None, work_limit: int | None = None,
                     time_limit_ms: int | None = None) -> FactorResult:
        """The factorization of ``n``; options as for :meth:`primekit.Client.submit`."""
        return await (await self.submit(n, kind="factor", from_=from_, bound=bound, mode=mode, ecm_digits=ecm_digits,
                                        work_limit=work_limit, time_limit_ms=time_limit_ms))

    async def suspend(self) -> None:
        """Suspends the queue."""
        await self.request("queue/suspend")

    async def resume(self) -> None:
        """Resumes the queue."""
        await self.request("queue/resume")

    async def events(self, streams: Sequence[str] | None = None,
                     tags: Sequence[str] | None = None) -> AsyncEventStream:
        """A stream of ``engine/event`` notifications; with ``streams``, also subscribes to them."""
        stream = AsyncEventStream(self._connection, self._loop)
        if streams is not None:
            params: dict[str, Any] = {"streams": list(streams)}
            if tags is not None:
                params["tags"] = list(tags)
            await self.request("plugin/subscribe", params)
        return stream

    async def aclose(self, timeout: float | None = None) -> list[StoppedJob]:
        """Shuts the bridge down as :meth:`primekit.Client.close` does."""
        if self._finalizer is None or not self._finalizer.alive:
            return []
        self._finalizer.detach()
        connection = self._connection
        stopped = await asyncio.to_thread(connection.shutdown, self._timeout if timeout is None else timeout)
        return cast(list[StoppedJob], stopped)
