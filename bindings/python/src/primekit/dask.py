"""PrimeKit on Dask distributed: complete answers on a worker, one trial division split over many machines, and huge
batches of candidates.

Every Dask worker process runs its own ``primekit serve`` (started the first time a task needs it, then reused);
the tasks talk to it through :class:`primekit.Client`. Install with ``pip install 'primekit[dask]'``.

- :func:`factor` without a range: a complete answer (every prime factor, or the parts an effort limit left), one
  job on a worker's bridge.
- :func:`factor` with a range, and :func:`submit`: a worker's bridge cuts the divisor range ``[from, bound]`` of one
  candidate into piece checkpoints (``checkpoint/split``), one Dask task each; a bridge merges the pieces' final
  checkpoints (``checkpoint/merge``) into the one job's :class:`~primekit.types.FactorResult`, equal to a local
  ``Client().factor(...)`` (trial division). :class:`DistributedJob` pauses, resumes and cancels the whole job; a
  chunk whose worker died starts again elsewhere from its last checkpoint.
- :func:`map_candidates`: a generator of the results of a long (or endless) stream of candidates, in order,
  computed in blocks with a bounded number of blocks in flight.
- :func:`resume`: goes on from the checkpoint document of :meth:`DistributedJob.pause`, in any process.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Generator, Iterable, Sequence
from concurrent.futures import CancelledError, Future, TimeoutError as FutureTimeoutError
from dataclasses import dataclass, field
from typing import Any, Literal, cast

try:
    import distributed
    from distributed import Variable, get_worker
except ImportError as error:  # pragma: no cover - depends on the installation
    raise ImportError("primekit.dask needs Dask distributed: pip install 'primekit[dask]' "
                      "(or pip install 'dask[distributed]')") from error

from . import _numbers
from .client import Client as BridgeClient
from .client import effort_params
from .errors import PrimeKitError
from .types import FactorResult, JobResult, Mode, PrimeFactor

__all__ = ["CHECKPOINT_FORMAT", "CompleteJob", "DistributedJob", "factor", "map_candidates", "resume", "submit",
           "submit_complete", "worker_bridge"]

#: The ``format`` member of a combined checkpoint document.
CHECKPOINT_FORMAT = "primekit-dask-checkpoint"
_CHECKPOINT_VERSION = 1
# A complete job's document (kind "complete"); trial-division documents keep version 1.
_COMPLETE_VERSION = 2

# How often a running chunk looks at its job's control variable (pause / cancel) and reports its progress.
# Dask has no way to wait on a bridge job and a Dask variable at once, so the chunk waits on its job's future
# for at most this long, then looks: bounded polling, never a sleep.
_TICK = 0.2

# How many times a chunk that stopped without being asked to is submitted again.
_MAX_RESTARTS = 3

# A chunk spends at most about 1/this of its time taking and storing checkpoints (see _run_chunk).
_CHECKPOINT_COST_FACTOR = 20

# How long a task waits for one of its job's variables: they are set before the task is submitted, so only a
# job that has ended (and freed them) makes a task wait this long.
_VARIABLE_TIMEOUT = 10.0


# MARK: - Worker side

_bridge_lock = threading.Lock()
_bridge: BridgeClient | None = None


def worker_bridge(executable: str | None = None, serve_args: Sequence[str] = ()) -> BridgeClient:
    """The ``primekit serve`` of this process (a worker's): started on first use and reused by every task that
    runs here; started again when it has died. ``executable`` and ``serve_args`` count only when it starts."""
    global _bridge
    with _bridge_lock:
        if _bridge is None or _bridge._connection.closed:
            _bridge = BridgeClient(executable, args=list(serve_args))
        return _bridge


def _control_name(run: str) -> str:
    return f"primekit-dask-{run}-control"


def _chunk_name(job: str, index: int) -> str:
    return f"primekit-dask-{job}-chunk-{index}"


def _topic(job: str) -> str:
    return f"primekit-dask-{job}"


def _factor_list(result: FactorResult) -> list[list[int]]:
    return [[f["prime"], f["exponent"]] for f in result["factors"]]


def _read(variable: Variable, default: str) -> str:
    """A variable's value; ``default`` when it is gone (the job ended and freed it) or not set in time."""
    try:
        return cast(str, variable.get(timeout=_VARIABLE_TIMEOUT))
    except Exception:
        return default


def _run_chunk(spec: dict[str, Any]) -> dict[str, Any]:
    """One chunk of a distributed factor job, run as a Dask task on a worker.

    It starts from the chunk's latest published checkpoint when its variable holds one (a retry after a worker
    died, or a resumed job), else from the chunk's piece checkpoint (``checkpoint/split``). While the bridge job
    runs, it publishes progress events on the job's topic and, every ``checkpoint_interval`` seconds, the job's
    checkpoint into the chunk's variable; it stops (with a checkpoint) when the run's control variable says
    ``pause`` or ``cancel``. A chunk that finishes returns its factors and its final checkpoint, which a bridge
    merges with the other pieces' (``checkpoint/merge``).
    """
    worker = get_worker()
    job_token: str = spec["job"]
    index: int = spec["index"]
    topic = _topic(job_token)
    control = Variable(_control_name(spec["run"]))
    saved = Variable(_chunk_name(job_token, index))
    published = _read(saved, "")
    checkpoint: str = published or spec["piece"]
    base = {"index": index, "run": spec["run"], "pid": os.getpid(), "worker": worker.address}

    def stopped(order: str, checkpoint: str | None) -> dict[str, Any]:
        if order == "pause" and checkpoint is not None:
            saved.set(checkpoint)  # a cancelled job frees the variable: leave it alone
        return {**base, "state": "paused" if order == "pause" else "cancelled", "checkpoint": checkpoint}

    order = _read(control, "cancel")
    if order != "run":
        return stopped(order, checkpoint)

    bridge = worker_bridge(spec["executable"], spec["serve_args"])
    job = bridge._submit({"checkpoint": checkpoint, "finalCheckpoint": True})
    worker.log_event(topic, {**base, "event": "started", "resumed": bool(published)})

    interval: float = spec["checkpoint_interval"]
    next_checkpoint = time.monotonic() + interval
    while True:
        try:
            result = cast(FactorResult, job.result(timeout=_TICK))
            break
        except FutureTimeoutError:
            pass
        except CancelledError:  # not by this task: e.g. a queue/reset on the bridge
            if job.checkpoint is not None:
                saved.set(job.checkpoint)
            raise RuntimeError(f"the bridge job of chunk {index} was cancelled on {worker.address}") from None
        order = _read(control, "cancel")
        if order != "run":
            if job.cancel():  # stops the bridge job where it is; its checkpoint says where
                return stopped(order, job.checkpoint)
            continue  # it ended meanwhile: take its result
        asked = time.monotonic()
        due = asked >= next_checkpoint
        try:
            status = bridge.request("job/status", {"jobId": job.job_id, "checkpoint": due})
        except Exception:  # the job ended between the two looks: its result comes next
            continue
        if due and status.get("checkpoint") and _read(control, "cancel") == "run":
            saved.set(status["checkpoint"])
            # A checkpoint holds the candidate: for a long one, taking and storing it costs time. The next one
            # comes after the interval, or after 20 times what this one cost (at most 5 % of the chunk's time).
            now = time.monotonic()
            next_checkpoint = now + max(interval, _CHECKPOINT_COST_FACTOR * (now - asked))
        worker.log_event(topic, {**base, "event": "progress", "progress": status.get("progress", 0),
                                 "checkpointed": bool(due and status.get("checkpoint"))})
    final = result.get("checkpoint")
    if final is None:
        raise RuntimeError("the bridge gave no final checkpoint (it needs protocol minor 4)")
    return {**base, "state": "done", "factors": _factor_list(result), "checkpoint": final,
            "resumed": bool(published)}


def _plan(spec: dict[str, Any]) -> dict[str, Any]:
    """The pieces of a distributed factor job, cut by the worker's bridge (``checkpoint/split``): first the whole
    job in one piece (the bridge resolves its range: the default bound, and no divisor above √n from 2), then
    that piece cut into as many chunks as ``spec`` asks for its width. Returns ``{from, bound, pieces}``."""
    bridge = worker_bridge(spec["executable"], spec["serve_args"])
    params: dict[str, Any] = {"candidate": spec["candidate"], "pieces": 1}
    for key in ("from", "bound"):
        if spec[key] is not None:
            params[key] = spec[key]
    whole: dict[str, Any] = bridge.request("checkpoint/split", params)
    piece = whole["pieces"][0]
    width = max(0, int(piece["bound"]) - int(piece["from"]) + 1)
    if spec["chunk_size"] is not None:
        count = -(-width // max(1, spec["chunk_size"]))
    elif spec["chunks"] is not None:
        count = spec["chunks"]
    else:
        count = _default_chunks(width, len(spec["candidate"]), spec["threads"])
    count = max(1, min(count, _MAX_CHUNKS))
    if count == 1:
        return whole
    return cast(dict[str, Any], bridge.request("checkpoint/split", {"checkpoint": piece["checkpoint"],
                                                                     "pieces": count}))


def _pieces_of(candidate: str, ranges: list[tuple[str, str]], executable: str | None,
               serve_args: Sequence[str]) -> list[str]:
    """A piece checkpoint, not started, for each range (chunks of a document that kept none)."""
    bridge = worker_bridge(executable, serve_args)
    return [bridge.request("checkpoint/split", {"candidate": candidate, "from": start, "bound": stop,
                                                "pieces": 1})["pieces"][0]["checkpoint"] for start, stop in ranges]


# The most checkpoint text one checkpoint/merge request carries: half the bridge's default message limit (16 MiB).
_MERGE_BYTES = 8 * 2**20


def _merge_pieces(pieces: list[str], executable: str | None,
                  serve_args: Sequence[str]) -> FactorResult | list[tuple[int, int]]:
    """The answer of the job the pieces stand for when they decide it (``checkpoint/merge``), else the ranges of
    the pieces that still need divisors.

    Each piece holds the candidate: when together they pass ``_MERGE_BYTES``, runs of adjacent pieces are merged
    first, each run a job over its own range (finished ones come back as one piece), until they fit."""
    bridge = worker_bridge(executable, serve_args)
    while len(pieces) > 1 and sum(map(len, pieces)) > _MERGE_BYTES:
        runs: list[list[str]] = [[]]
        for piece in pieces:
            if runs[-1] and sum(map(len, runs[-1])) + len(piece) > _MERGE_BYTES:
                runs.append([])
            runs[-1].append(piece)
        if len(runs) == len(pieces):  # no two pieces fit in one request: nothing to gain
            break
        shorter = [run[0] if len(run) == 1 else cast(str, bridge.request("checkpoint/merge", {"pieces": run})
                                                     ["checkpoint"]) for run in runs]
        if sum(map(len, shorter)) >= sum(map(len, pieces)):  # runs not over stay as long
            break
        pieces = shorter
    merged = bridge.request("checkpoint/merge", {"pieces": pieces})
    if not merged["merged"]:
        return [(int(piece["from"]), int(piece["bound"])) for piece in merged["needed"]]
    return cast(FactorResult, _numbers.result(merged["result"]))


def _run_complete(candidate: str, effort: dict[str, Any], executable: str | None,
                  serve_args: Sequence[str]) -> FactorResult:
    """A complete factor job (with its effort limits) on the worker's bridge: :func:`factor` without a range."""
    bridge = worker_bridge(executable, serve_args)
    job = bridge._submit({"kind": "factor", "candidate": candidate, "mode": "complete", **effort})
    return cast(FactorResult, job.result())


# MARK: - Complete jobs: ECM shares over the cluster

# How often a task of a complete job looks at its run's control variable: a share that found a factor stops the
# others within about this long (plus one bridge slice).
_SHARE_TICK = 0.05


def _run_phase(spec: dict[str, Any]) -> dict[str, Any]:
    """The part of a distributed complete job between two rounds of ECM shares, run as a Dask task.

    It merges the checkpoints of the last round's shares when given (``checkpoint/merge``), then runs the job on
    the worker's bridge until it ends (``done``, with its result), the run's control says stop (``stopped``, with
    its checkpoint), or its next piece is an ECM piece: it is then stopped and cut into ``count`` share
    checkpoints (``shares``). A job whose checkpoint already stands in ECM is cut at once.
    """
    worker = get_worker()
    base = {"pid": os.getpid(), "worker": worker.address}
    bridge = worker_bridge(spec["executable"], spec["serve_args"])
    control = Variable(_control_name(spec["run"]))
    checkpoint: str | None = spec.get("checkpoint")
    count: int = spec["count"]
    if spec.get("merge"):
        checkpoint = bridge.request("checkpoint/merge", {"shares": spec["merge"]})["checkpoint"]
    if _read(control, "cancel") != "run":
        return {**base, "state": "stopped", "checkpoint": checkpoint}

    def split(text: str) -> list[str] | None:
        try:
            return cast(list[str], bridge.request("checkpoint/split", {"checkpoint": text, "count": count})["shares"])
        except PrimeKitError as error:
            if error.code == 1002:  # its next piece is not an ECM piece
                return None
            raise

    if checkpoint is not None and count >= 2:
        shares = split(checkpoint)
        if shares is not None:
            return {**base, "state": "shares", "shares": shares}
    while True:
        if checkpoint is not None:
            job = bridge._submit({"checkpoint": checkpoint})
        else:
            job = bridge._submit({"kind": "factor", "candidate": spec["candidate"], "mode": "complete",
                                  **spec["effort"]})
        while True:
            try:
                return {**base, "state": "done", "result": job.result(timeout=_SHARE_TICK)}
            except FutureTimeoutError:
                pass
            except CancelledError:  # not by this task: e.g. a queue/reset on the bridge
                raise RuntimeError(f"the bridge job of a complete job was cancelled on {worker.address}") from None
            if _read(control, "cancel") != "run":
                if job.cancel():
                    return {**base, "state": "stopped", "checkpoint": job.checkpoint}
                continue  # it ended meanwhile: take its result
            if count < 2:
                continue
            try:
                status = bridge.request("job/status", {"jobId": job.job_id})
            except Exception:  # it ended between the two looks: its result comes next
                continue
            if status.get("stage") != "ecm" or not job.cancel():
                continue
            checkpoint = job.checkpoint
            if checkpoint is None:
                raise RuntimeError("a cancelled bridge job gave no checkpoint")
            shares = split(checkpoint)
            if shares is not None:
                return {**base, "state": "shares", "shares": shares}
            break  # it had left ECM before it stopped: on from its checkpoint


def _run_share(spec: dict[str, Any]) -> dict[str, Any]:
    """One ECM share of a complete job, run as a Dask task on its worker's bridge until it is over (it found a
    factor — it then tells the other shares to stop — or its curves are done) or the run's control says stop."""
    worker = get_worker()
    control = Variable(_control_name(spec["run"]))
    base = {"index": spec["index"], "pid": os.getpid(), "worker": worker.address}
    if _read(control, "cancel") != "run":
        return {**base, "state": "interrupted", "started": False, "checkpoint": spec["checkpoint"]}
    bridge = worker_bridge(spec["executable"], spec["serve_args"])
    job = bridge._submit({"checkpoint": spec["checkpoint"]})
    while True:
        try:
            result = cast(FactorResult, job.result(timeout=_SHARE_TICK))
            break
        except FutureTimeoutError:
            pass
        except CancelledError:  # not by this task: e.g. a queue/reset on the bridge
            raise RuntimeError(f"the bridge job of ECM share {spec['index']} was cancelled on {worker.address}") \
                from None
        if _read(control, "cancel") != "run" and job.cancel():
            return {**base, "state": "interrupted", "started": True, "checkpoint": job.checkpoint}
    share = result.get("ecmShare")
    if share is None:
        raise RuntimeError("the bridge ran an ECM share as a whole job (it needs protocol minor 3)")
    if share["found"]:
        control.set("stop")  # the other shares stop at their next look, without a round trip through the client
    return {**base, "state": "found" if share["found"] else "over", "started": True,
            "checkpoint": share["checkpoint"]}


def _run_block(kind: str, candidates: list[str], from_: str | None, bound: str | None, executable: str | None,
               serve_args: Sequence[str]) -> list[JobResult]:
    """One block of :func:`map_candidates`: every candidate submitted at once (pipelined), results in order."""
    bridge = worker_bridge(executable, serve_args)
    extra: dict[str, Any] = {}
    if from_ is not None:
        extra["from"] = from_
    if bound is not None:
        extra["bound"] = bound
    jobs = [bridge._submit({"kind": kind, "candidate": text, **extra}) for text in candidates]
    return [cast(JobResult, job.result()) for job in jobs]


# MARK: - Client side

@dataclass
class _Chunk:
    index: int
    start: int
    stop: int
    checkpoint: str  # the latest known: the piece as split, as paused, or (done) as it finished
    state: Literal["pending", "done", "paused", "cancelled"] = "pending"
    factors: list[list[int]] | None = None
    progress: float = 0.0  # 0-1, the most reported
    future: Any = None
    runs: list[dict[str, Any]] = field(default_factory=list)  # one per start: pid, worker, resumed
    checkpointed: bool = False
    submissions: int = 0
    restarts: int = 0
    resumed: bool = False  # the run that finished it started from a checkpoint

    def info(self) -> dict[str, Any]:
        return {"index": self.index, "from": self.start, "bound": self.stop, "state": self.state,
                "progress": self.progress, "checkpointed": self.checkpointed, "runs": list(self.runs),
                "resumed": self.resumed}


def _default_client(client: distributed.Client | None) -> distributed.Client:
    return client if client is not None else distributed.default_client()


class DistributedJob:
    """A factor job spread over a Dask cluster (from :func:`submit` or :func:`resume`).

    :meth:`result` waits for the merged :class:`~primekit.types.FactorResult`; :meth:`progress` is the fraction
    of the divisor range done (0-1); :meth:`pause` stops every chunk at a checkpoint and returns the combined
    checkpoint document (also kept in :attr:`checkpoint`), :meth:`resume` goes on, :meth:`cancel` stops it all.
    :attr:`futures` are the Dask futures of the chunks of the current run (for ``distributed.progress``).
    """

    def __init__(self, candidate: int, from_: int, bound: int, pieces: list[dict[str, Any]], *,
                 client: distributed.Client, on_progress: Callable[[float], None] | None,
                 checkpoint_interval: float, executable: str | None, serve_args: Sequence[str]) -> None:
        self.candidate = candidate
        self.from_ = from_
        self.bound = bound
        self._client = client
        self._on_progress = on_progress
        self._interval = checkpoint_interval
        self._executable = executable
        self._serve_args = list(serve_args)
        self._token = uuid.uuid4().hex[:12]
        self._run = ""
        self._cond = threading.Condition()
        self._events: queue.SimpleQueue[tuple[str, Any] | None] = queue.SimpleQueue()
        self._future: Future[FactorResult] = Future()
        self._checkpoint: str | None = None
        self._reported = 0.0
        self._paused = False
        self._finished = False
        # Each piece: from, bound, checkpoint, state ("done": the checkpoint is its final one, with its factors;
        # else "stopped", "published" when its checkpoint is one a run of it published).
        self._chunks = [_Chunk(i, piece["from"], piece["bound"], piece["checkpoint"]) for i, piece in enumerate(pieces)]
        self._width = sum(max(1, chunk.stop - chunk.start + 1) for chunk in self._chunks)
        self._decimal = _numbers.to_decimal(candidate)
        self._merging = False  # a checkpoint/merge is in flight
        self._merged_all = False  # ... of every chunk done
        self._found = False  # a finished chunk found a factor (the pieces may decide before all are done)
        self._needed: set[int] | None = None  # the chunks the last merge said are still needed (None: unknown)
        self._stale = False  # a chunk found a factor since the last merge was asked for (a lower limit)
        self._report_lock = threading.Lock()
        for chunk, piece in zip(self._chunks, pieces):
            if piece["state"] == "done":
                chunk.state, chunk.factors, chunk.progress = "done", piece["factors"], 1.0
                self._found = self._found or bool(piece["factors"])
            published = piece.get("published", False)
            Variable(_chunk_name(self._token, chunk.index), client=client).set(
                chunk.checkpoint if published and chunk.state != "done" else "")
        client.subscribe_topic(_topic(self._token), self._on_event)
        self._driver = threading.Thread(target=self._drive, name=f"primekit-dask-{self._token}", daemon=True)
        self._driver.start()
        with self._cond:
            self._start_run()
            self._check_finished()

    def __repr__(self) -> str:
        return f"<primekit.dask.DistributedJob {self._token} {len(self._chunks)} chunks>"

    # MARK: Public

    @property
    def futures(self) -> list[Any]:
        """The Dask futures of the chunks still running in the current run (e.g. for ``distributed.progress``)."""
        with self._cond:
            return [chunk.future for chunk in self._chunks if chunk.future is not None and chunk.state == "pending"]

    @property
    def chunks(self) -> list[dict[str, Any]]:
        """Each chunk's range, state (``pending``, ``done``, ``paused``, ``cancelled``), progress (0-1), whether
        it has published a checkpoint, its runs (``pid``, ``worker``, ``resumed``: started from a checkpoint), and
        whether the run that finished it had started from a checkpoint (``resumed``)."""
        with self._cond:
            return [chunk.info() for chunk in self._chunks]

    @property
    def topic(self) -> str:
        """The Dask event topic of the chunks' events (``started``, ``progress``): see ``client.get_events``."""
        return _topic(self._token)

    @property
    def checkpoint(self) -> str | None:
        """The combined checkpoint document of the last :meth:`pause` or :meth:`cancel`."""
        return self._checkpoint

    def result(self, timeout: float | None = None) -> FactorResult:
        """The merged result; ``CancelledError`` after :meth:`cancel`, the first chunk's error when one failed."""
        return self._future.result(timeout)

    def done(self) -> bool:
        return self._future.done()

    def progress(self) -> float:
        """The fraction of the divisor range done, 0-1 (1 once the result is known, also after an early stop)."""
        with self._cond:
            return self._fraction()

    def wait_for(self, predicate: Callable[[list[dict[str, Any]]], bool], timeout: float | None = None) -> bool:
        """Waits until ``predicate(self.chunks)`` is true (checked at every change of a chunk) or the job has
        ended; returns the predicate's last value."""
        with self._cond:
            self._cond.wait_for(lambda: predicate([c.info() for c in self._chunks]) or self._future.done(),
                                timeout)
            return predicate([c.info() for c in self._chunks])

    def pause(self, timeout: float | None = None) -> str:
        """Stops every running chunk at a checkpoint (chunks that had not started stop before starting), waits
        for them, and returns the combined checkpoint document (see ``docs/dask.md``). A finished job's document
        has every chunk done."""
        with self._cond:
            if not self._future.done() and not self._paused:
                self._paused = True
                Variable(_control_name(self._run), client=self._client).set("pause")
                if not self._cond.wait_for(self._idle, timeout):
                    raise TimeoutError(f"the chunks did not stop within {timeout} s")
            self._checkpoint = document = self._document()
            return document

    def resume(self) -> None:
        """Goes on after :meth:`pause`: every unfinished chunk starts again from its checkpoint."""
        with self._cond:
            if self._paused and not self._future.done():
                self._paused = False
                self._start_run()

    def cancel(self) -> bool:
        """Cancels the job: pending chunks are dropped, running ones cancel their bridge jobs. :attr:`checkpoint`
        then holds the combined document of where the chunks were (their last published checkpoints). Returns
        False when the job had already ended."""
        with self._cond:
            if self._future.done():
                return self._future.cancelled()
            self._stop_chunks()
            self._checkpoint = self._document(read_variables=True)
            self._future.cancel()
            self._finish()
            self._cond.notify_all()
            return True

    # MARK: Runs and events

    def _start_run(self) -> None:
        self._run = f"{self._token}-{uuid.uuid4().hex[:8]}"
        Variable(_control_name(self._run), client=self._client).set("run")
        for chunk in self._chunks:
            if chunk.state != "done":
                self._submit_chunk(chunk)

    def _submit_chunk(self, chunk: _Chunk) -> None:
        chunk.state = "pending"
        spec = {"job": self._token, "run": self._run, "index": chunk.index, "piece": chunk.checkpoint,
                "checkpoint_interval": self._interval, "executable": self._executable,
                "serve_args": self._serve_args}
        chunk.submissions += 1
        future = self._client.submit(_run_chunk, spec, key=f"primekit-chunk-{self._run}-{chunk.index}-"
                                     f"{chunk.submissions}", priority=len(self._chunks) - chunk.index, retries=2,
                                     pure=False)
        chunk.future = future
        future.add_done_callback(lambda f, i=chunk.index, run=self._run: self._events.put(("done", (i, run, f))))

    def _on_event(self, event: tuple[float, Any]) -> None:
        self._events.put(("event", event[1]))

    def _drive(self) -> None:
        while True:
            item = self._events.get()
            if item is None:
                return
            kind, payload = item
            try:
                with self._cond:
                    if kind == "event":
                        self._apply_event(payload)
                    elif kind == "merged":
                        self._apply_merged(payload)
                    else:
                        self._apply_done(*payload)
                    fraction = self._fraction()
                    self._cond.notify_all()
                self._report(fraction)
            except BaseException as error:  # a failure here must not leave result() waiting for ever
                with self._cond:
                    if not self._future.done():
                        self._stop_chunks()
                        self._future.set_exception(error)
                        self._finish()
                    self._cond.notify_all()

    def _apply_event(self, message: dict[str, Any]) -> None:
        if not isinstance(message, dict) or message.get("index") is None or self._finished:
            return
        chunk = self._chunks[message["index"]]
        if message.get("event") == "started":
            chunk.runs.append({"pid": message["pid"], "worker": message["worker"], "resumed": message["resumed"]})
        elif message.get("event") == "progress" and chunk.state == "pending":
            chunk.progress = max(chunk.progress, float(message["progress"]) / 100)
            chunk.checkpointed = chunk.checkpointed or bool(message.get("checkpointed"))

    def _apply_done(self, index: int, run: str, future: Any) -> None:
        chunk = self._chunks[index]
        if self._finished or run != self._run or chunk.state == "done":
            return
        if future.status == "cancelled":
            return
        if future.status == "error":
            error = future.exception()
            self._stop_chunks()
            self._future.set_exception(error)
            self._finish()
            return
        outcome: dict[str, Any] = future.result()
        chunk.future = None
        if outcome["state"] == "done":
            chunk.state, chunk.factors, chunk.progress = "done", outcome["factors"], 1.0
            chunk.checkpoint = outcome["checkpoint"]
            chunk.resumed = bool(outcome.get("resumed"))
            if outcome["factors"]:  # a lower limit: other chunks may no longer be needed
                self._found, self._needed, self._stale = True, None, True
            self._check_finished()
        elif self._paused:
            chunk.state = outcome["state"]
            chunk.checkpoint = outcome.get("checkpoint") or chunk.checkpoint
        elif chunk.restarts < _MAX_RESTARTS:
            # It stopped although nobody asked (it could not read its control variable in time): again, from
            # its checkpoint.
            chunk.restarts += 1
            self._submit_chunk(chunk)
        else:
            self._stop_chunks()
            self._future.set_exception(RuntimeError(f"chunk {index} stopped unasked {chunk.restarts + 1} times"))
            self._finish()

    def _idle(self) -> bool:
        return self._future.done() or all(chunk.state != "pending" for chunk in self._chunks)

    # MARK: Merging

    def _check_finished(self) -> None:
        """Asks a worker's bridge to merge the pieces (``checkpoint/merge``: done ones as they finished, the others
        as last known) when they may decide the answer: every chunk is done; or a done chunk found a factor (the
        cofactor left may need no divisor the other chunks still have) and every chunk the last merge said is
        still needed is done. The bridge answers with the one job's result when they do (:meth:`_apply_merged`
        ends the job with it), else with the chunks still needed."""
        if self._future.done():
            return
        if not all(chunk.state == "done" for chunk in self._chunks):
            if not self._found:
                return
            if self._needed is not None and any(self._chunks[i].state != "done" for i in self._needed):
                return
        if self._merging:  # its answer looks again
            return
        self._merging, self._stale = True, False
        self._merged_all = all(chunk.state == "done" for chunk in self._chunks)
        pieces = [chunk.checkpoint for chunk in self._chunks]
        task = self._client.submit(_merge_pieces, pieces, self._executable, self._serve_args, pure=False,
                                   retries=2, priority=len(self._chunks) + 1)
        task.add_done_callback(lambda f: self._events.put(("merged", f)))

    def _apply_merged(self, task: Any) -> None:
        self._merging = False
        if self._future.done():
            return
        try:
            answer: FactorResult | list[tuple[int, int]] = task.result()
        except BaseException as error:  # the merge failed (after Dask's retries), or was cancelled
            self._stop_chunks()
            self._future.set_exception(error)
            self._finish()
            return
        if isinstance(answer, dict):
            self._stop_chunks()
            self._future.set_result(answer)
            self._finish()
            return
        if self._merged_all:
            self._stop_chunks()
            self._future.set_exception(RuntimeError("the finished pieces did not merge into an answer"))
            self._finish()
            return
        if not self._stale:  # else a factor found since lowered the limit: the answer's list is too long
            starts = {start for start, _ in answer}
            self._needed = {chunk.index for chunk in self._chunks if chunk.start in starts}
        self._check_finished()  # chunks may have finished while it ran

    # MARK: Ending

    def _stop_chunks(self) -> None:
        """Tells running chunks to cancel their bridge jobs and drops the ones not started."""
        if self._run:
            Variable(_control_name(self._run), client=self._client).set("cancel")
        pending = [chunk.future for chunk in self._chunks if chunk.future is not None and chunk.state == "pending"]
        if pending:
            self._client.cancel(pending)
        for chunk in self._chunks:
            if chunk.state == "pending":
                chunk.state = "cancelled"

    def _finish(self) -> None:
        """Frees what the job keeps on the scheduler (the control and chunk variables stay for running chunks
        to read until they stop: deleting them is left to :meth:`_cleanup`, after a last round)."""
        self._finished = True
        fraction = self._fraction()
        self._events.put(None)
        threading.Thread(target=self._cleanup, args=(fraction,), daemon=True).start()

    def _cleanup(self, fraction: float) -> None:
        self._report(fraction)
        try:
            self._client.unsubscribe_topic(_topic(self._token))
        except Exception:
            pass
        # The chunks' checkpoints (each holds the candidate) can be large: free them. The control variables (a word
        # each) stay, so that chunks still running read "cancel" rather than wait for a variable that is gone.
        for name in [_chunk_name(self._token, c.index) for c in self._chunks]:
            try:
                Variable(name, client=self._client).delete()
            except Exception:
                pass

    def _fraction(self) -> float:
        if self._future.done() and not self._future.cancelled() and self._future.exception() is None:
            return 1.0
        done = sum(chunk.progress * (chunk.stop - chunk.start + 1) for chunk in self._chunks)
        return min(done / self._width, 1.0) if self._width else 1.0

    def _report(self, fraction: float) -> None:
        with self._report_lock:  # held while calling back: the values arrive in increasing order
            if fraction <= self._reported:
                return
            self._reported = fraction
            if self._on_progress is not None:
                self._on_progress(fraction)

    # MARK: Checkpoints

    def _document(self, read_variables: bool = False) -> str:
        chunks: list[dict[str, Any]] = []
        for chunk in self._chunks:
            entry: dict[str, Any] = {"from": str(chunk.start), "bound": str(chunk.stop)}
            if chunk.state == "done":
                entry["state"] = "done"
                entry["factors"] = [{"prime": str(p), "exponent": e} for p, e in chunk.factors or []]
                entry["checkpoint"] = chunk.checkpoint
            else:
                checkpoint = chunk.checkpoint
                if read_variables:
                    try:
                        checkpoint = Variable(_chunk_name(self._token, chunk.index),
                                              client=self._client).get(timeout=5) or checkpoint
                    except Exception:
                        pass
                entry["state"] = "stopped"
                entry["checkpoint"] = checkpoint
            chunks.append(entry)
        return json.dumps({"format": CHECKPOINT_FORMAT, "version": _CHECKPOINT_VERSION, "kind": "factor",
                           "candidate": self._decimal, "from": str(self.from_), "bound": str(self.bound),
                           "chunks": chunks})


class CompleteJob:
    """A complete factorization spread over a Dask cluster (from :func:`submit_complete`, :func:`factor` of a big
    number, or :func:`resume`): the job runs on one worker until its next piece is ECM, then its curves run as
    ECM shares, one Dask task per share on the workers' bridges; when one finds a factor the others stop, the
    shares are merged and the job goes on (another composite part is cut again).

    :meth:`result` waits for the :class:`~primekit.types.FactorResult` (equal to a local ``Client().factor(n)``);
    :meth:`pause` stops everything at one combined checkpoint document, :meth:`resume` goes on, :meth:`cancel`
    stops it all. :attr:`rounds` tells what ran: one entry per Dask task round.
    """

    def __init__(self, candidate: int, *, client: distributed.Client, shares: int | None, effort: dict[str, Any],
                 executable: str | None, serve_args: Sequence[str], on_progress: Callable[[float], None] | None,
                 checkpoint: str | None = None) -> None:
        self.candidate = candidate
        self._client = client
        self._decimal = _numbers.to_decimal(candidate)
        self._effort = dict(effort)
        self._executable = executable
        self._serve_args = list(serve_args)
        self._on_progress = on_progress
        self._slots = [address for address, threads in sorted(client.nthreads().items()) for _ in range(threads)]
        self._count = shares if shares is not None else max(1, len(self._slots))
        if self._count < 1 or self._count > 64:
            raise ValueError(f"shares must be between 1 and 64, got {self._count}")
        self._token = uuid.uuid4().hex[:12]
        self._cond = threading.Condition()
        self._future: Future[FactorResult] = Future()
        self._job_checkpoint = checkpoint  # where the job stands between runs (None: not started)
        self._document: str | None = None
        self._run = ""
        self._rounds: list[dict[str, Any]] = []
        self._pause_requested = False
        self._paused = False
        self._driver = threading.Thread(target=self._drive, name=f"primekit-dask-{self._token}", daemon=True)
        self._driver.start()

    def __repr__(self) -> str:
        return f"<primekit.dask.CompleteJob {self._token} {self._count} shares>"

    # MARK: Public

    @property
    def checkpoint(self) -> str | None:
        """The combined checkpoint document of the last :meth:`pause`."""
        return self._document

    @property
    def rounds(self) -> list[dict[str, Any]]:
        """One entry per round of Dask tasks: ``{"kind": "phase", "state", "pid", "worker", "seconds"}`` for the
        job run whole (``state``: ``done``, ``stopped``, ``shares``), ``{"kind": "shares", "shares": [...],
        "seconds"}`` for a round of ECM shares, each ``{index, state, started, pid, worker}`` with ``state``
        ``found`` (it found a factor), ``over`` (its curves were done), or ``interrupted`` (stopped by another's
        factor, or by pause/cancel). ``seconds``: the round's wall time, from submission to the last result (a
        round of shares still running has ``"shares": []`` and no ``seconds``)."""
        with self._cond:
            return [dict(entry) for entry in self._rounds]

    def result(self, timeout: float | None = None) -> FactorResult:
        """The complete result (or the partial one an effort limit leaves); ``CancelledError`` after
        :meth:`cancel`; a task's error (after Dask's retries)."""
        return self._future.result(timeout)

    def done(self) -> bool:
        return self._future.done()

    def progress(self) -> float:
        """0 until the result is there, then 1."""
        return 1.0 if self._future.done() else 0.0

    def wait_for(self, predicate: Callable[[list[dict[str, Any]]], bool], timeout: float | None = None) -> bool:
        """Waits until ``predicate(self.rounds)`` is true (checked whenever a round starts or ends) or the job has
        ended; returns the predicate's last value."""
        with self._cond:
            self._cond.wait_for(lambda: predicate(self._rounds) or self._future.done(), timeout)
            return predicate(self._rounds)

    def pause(self, timeout: float | None = None) -> str:
        """Stops every running task at a checkpoint (running shares are merged into one job checkpoint), waits
        for them, and returns the combined checkpoint document (``docs/dask.md``). ``RuntimeError`` when the job
        has ended."""
        with self._cond:
            if self._future.done():
                raise RuntimeError("the job has ended: there is nothing to pause")
            if not self._paused:
                self._pause_requested = True
                if self._run:
                    Variable(_control_name(self._run), client=self._client).set("pause")
                if not self._cond.wait_for(lambda: self._paused or self._future.done(), timeout):
                    raise TimeoutError(f"the tasks did not stop within {timeout} s")
                if not self._paused:
                    raise RuntimeError("the job ended before it could pause")
            return cast(str, self._document)

    def resume(self) -> None:
        """Goes on after :meth:`pause`, from the combined checkpoint."""
        with self._cond:
            if self._paused and not self._future.done():
                self._paused = False
                self._cond.notify_all()

    def cancel(self) -> bool:
        """Cancels the job: running tasks stop their bridge jobs. Returns False when it had already ended."""
        with self._cond:
            if self._future.done():
                return self._future.cancelled()
            if self._run:
                Variable(_control_name(self._run), client=self._client).set("cancel")
            self._future.cancel()
            self._cond.notify_all()
            return True

    # MARK: Driving

    def _next_run(self) -> str | None:
        """A new run (its control variable set), after waiting while paused; None once the job has ended."""
        with self._cond:
            self._cond.wait_for(lambda: not self._paused or self._future.done())
            if self._future.done():
                return None
            self._run = f"{self._token}-{uuid.uuid4().hex[:8]}"
            order = "pause" if self._pause_requested else "run"
            Variable(_control_name(self._run), client=self._client).set(order)
            return self._run

    def _record(self, entry: dict[str, Any]) -> None:
        with self._cond:
            self._rounds.append(entry)
            self._cond.notify_all()

    def _drive(self) -> None:
        merge: list[str] | None = None
        try:
            while True:
                run = self._next_run()
                if run is None:
                    return
                spec = {"run": run, "candidate": self._decimal, "effort": self._effort, "count": self._count,
                        "checkpoint": self._job_checkpoint, "merge": merge, "executable": self._executable,
                        "serve_args": self._serve_args}
                started = time.monotonic()
                outcome: dict[str, Any] = self._client.submit(_run_phase, spec, key=f"primekit-phase-{run}",
                                                              pure=False, retries=2).result()
                merge = None
                self._record({"kind": "phase", "state": outcome["state"], "pid": outcome["pid"],
                              "worker": outcome["worker"], "seconds": time.monotonic() - started})
                if outcome["state"] == "done":
                    self._end(cast(FactorResult, outcome["result"]))
                    return
                if outcome["state"] == "stopped":
                    self._stopped(outcome["checkpoint"])
                    continue
                merge = self._share_round(outcome["shares"])
                if merge is None:
                    return
        except BaseException as error:  # a failure here must not leave result() waiting for ever
            with self._cond:
                if not self._future.done():
                    self._future.set_exception(error)
                self._cond.notify_all()

    def _share_round(self, shares: list[str]) -> list[str] | None:
        """Runs one round of shares; returns their final checkpoints (None when the job was cancelled)."""
        run = self._next_run()
        if run is None:
            return None
        started = time.monotonic()
        futures = []
        for index, share in enumerate(shares):
            spec = {"run": run, "index": index, "checkpoint": share, "executable": self._executable,
                    "serve_args": self._serve_args}
            where = [self._slots[index % len(self._slots)]] if self._slots else None
            futures.append(self._client.submit(_run_share, spec, key=f"primekit-share-{run}-{index}", pure=False,
                                               retries=2, workers=where, allow_other_workers=True))
        self._record({"kind": "shares", "shares": []})
        outcomes: list[dict[str, Any]] = [future.result() for future in futures]
        with self._cond:
            self._rounds[-1] = {"kind": "shares", "shares": [{key: o[key] for key in ("index", "state", "started",
                                                                                    "pid", "worker")}
                                                            for o in outcomes],
                              "seconds": time.monotonic() - started}
            self._cond.notify_all()
        return [cast(str, o["checkpoint"]) for o in outcomes]

    def _stopped(self, checkpoint: str | None) -> None:
        with self._cond:
            self._job_checkpoint = checkpoint
            if self._pause_requested:
                self._pause_requested = False
                self._paused = True
                self._document = json.dumps({"format": CHECKPOINT_FORMAT, "version": _COMPLETE_VERSION,
                                             "kind": "complete", "candidate": self._decimal, "effort": self._effort,
                                             "checkpoint": checkpoint})
            self._cond.notify_all()

    def _end(self, result: FactorResult) -> None:
        with self._cond:
            if not self._future.done():
                self._future.set_result(result)
            self._cond.notify_all()
        if self._on_progress is not None:
            self._on_progress(1.0)


# MARK: - Entry points

# The default chunking (measured by bench/dask_chunks.py: docs/scaling.md). A chunk has a fixed cost — the task's
# dispatch, the bridge's job creation on the candidate, its result and events — of about 0.08 s for 100,000
# digits and 2.2 s for 1,000,000 (it grows faster than the length), while a bridge with one core covers about
# 3·10^7 divisors/s at 100,000 digits and 1.2·10^7 at 1,000,000. For the fixed cost to be at most 5 % of a chunk's
# time, a chunk must span at least 20 · fixed · rate divisors: 5·10^7 and 5·10^8, i.e. about 500 per digit.
_CHUNKS_PER_THREAD = 4  # for balance between workers, and so that early ranges finish (and stop a job) early
_MIN_CHUNK_DIVISORS_PER_DIGIT = 500
_MIN_CHUNK_DIVISORS = 1_000_000  # short candidates: a Dask task's own cost (a few ms) at ~10^8 divisors/s
_MAX_CHUNKS = 4096  # the most pieces a bridge cuts a job into (checkpoint/split)


def _default_chunks(width: int, digits: int, threads: int) -> int:
    """The default number of chunks of a range ``width`` divisors wide: k per worker thread, k = 4 or fewer when
    the chunks would be smaller than the minimum for the candidate's length, but at least 1 (an idle worker costs
    more than a chunk's fixed cost). A whole number per thread: every thread gets as many chunks."""
    threads = max(1, threads)
    smallest = max(_MIN_CHUNK_DIVISORS, _MIN_CHUNK_DIVISORS_PER_DIGIT * digits)
    return threads * max(1, min(_CHUNKS_PER_THREAD, width // (smallest * threads)))


def submit(n: int, *, from_: int | None = None, bound: int | None = None, chunks: int | None = None,
           chunk_size: int | None = None, client: distributed.Client | None = None,
           on_progress: Callable[[float], None] | None = None, checkpoint_interval: float = 0.5,
           executable: str | None = None, serve_args: Sequence[str] = ()) -> DistributedJob:
    """Starts a distributed factor job and returns its :class:`DistributedJob` at once.

    Args:
        n: the candidate (at least 2).
        from_, bound: the divisor range, as for :meth:`primekit.Client.factor` (default 2 and the bridge's default
            bound, √n capped at 2^32). A worker's bridge cuts it into the chunks (``checkpoint/split``) before this
            returns.
        chunks: how many Dask tasks the range is cut into (default: 4 per worker thread, fewer per thread when a
            chunk would span less than 500 divisors per digit of ``n`` (and less than 10^6), at least 1); or
        chunk_size: how many divisors each covers.
        client: a ``dask.distributed.Client`` (default: the current default client).
        on_progress: called with the fraction done (0-1, increasing, 1.0 at the end) from a background thread.
        checkpoint_interval: how often (seconds) a running chunk publishes its checkpoint, at least; a chunk whose
            checkpoints are slow to take (long candidates) waits 20 times as long as the last one took.
        executable, serve_args: the ``primekit`` executable on the workers (default: their ``PRIMEKIT_BIN``, …)
            and extra ``primekit serve`` arguments (e.g. ``["--workers", "1"]``), used when a worker's bridge
            starts.
    """
    if not isinstance(n, int) or n < 2:
        raise ValueError(f"the candidate must be an int of at least 2, got {n!r}")
    if (from_ is not None and from_ < 2) or (bound is not None and bound < (from_ or 2)):
        raise ValueError(f"empty or invalid divisor range [{from_ or 2}, {bound}]")
    dask_client = _default_client(client)
    spec = {"candidate": _numbers.to_decimal(n), "from": None if from_ is None else str(from_),
            "bound": None if bound is None else str(bound), "chunks": chunks, "chunk_size": chunk_size,
            "threads": sum(dask_client.nthreads().values()), "executable": executable, "serve_args": list(serve_args)}
    plan: dict[str, Any] = dask_client.submit(_plan, spec, pure=False, retries=2).result()
    pieces = [{"from": int(piece["from"]), "bound": int(piece["bound"]), "checkpoint": piece["checkpoint"],
               "state": "stopped"} for piece in plan["pieces"]]
    return DistributedJob(n, int(plan["from"]), bound if bound is not None else int(plan["bound"]), pieces,
                          client=dask_client, on_progress=on_progress, checkpoint_interval=checkpoint_interval,
                          executable=executable, serve_args=serve_args)


def factor(n: int, *, from_: int | None = None, bound: int | None = None, mode: Mode | None = None,
           ecm_digits: int | None = None, work_limit: int | None = None, time_limit_ms: int | None = None,
           chunks: int | None = None, chunk_size: int | None = None, client: distributed.Client | None = None,
           on_progress: Callable[[float], None] | None = None, checkpoint_interval: float = 0.5,
           executable: str | None = None, serve_args: Sequence[str] = ()) -> FactorResult:
    """The factorization of ``n`` computed on the Dask cluster, equal to a local ``Client().factor(n, ...)`` with
    the same arguments.

    Without ``from_`` and ``bound`` (and unless ``mode="trial"``) the answer is complete, as the bridge gives it,
    with the effort limits ``ecm_digits``, ``work_limit``, ``time_limit_ms``: from 2^128 on (and without a time
    limit) it is ``submit_complete(...).result()``, the ECM curves of each composite part spread over the cluster;
    below, or with a time limit, one Dask task runs the job on a worker's bridge (a task whose worker dies starts
    again from the beginning elsewhere). ``chunks``, ``chunk_size`` and ``checkpoint_interval`` do not apply;
    ``on_progress`` is called once, with 1.0, at the end.
    With a range, or ``mode="trial"``, it is ``submit(...).result()``: trial division cut into chunks (the effort
    limits do not apply there: ``ValueError``).
    """
    if from_ is None and bound is None and mode != "trial":
        if mode is not None and mode != "complete":
            raise ValueError(f"mode must be \"complete\" or \"trial\", got {mode!r}")
        if not isinstance(n, int) or n < 2:
            raise ValueError(f"the candidate must be an int of at least 2, got {n!r}")
        effort = effort_params(ecm_digits, work_limit, time_limit_ms)
        if n >= _SHARED_FROM and time_limit_ms is None:
            return submit_complete(n, ecm_digits=ecm_digits, work_limit=work_limit, client=client,
                                   on_progress=on_progress, executable=executable, serve_args=serve_args).result()
        task = _default_client(client).submit(_run_complete, _numbers.to_decimal(n), effort, executable,
                                              list(serve_args), pure=False, retries=2)
        result = cast(FactorResult, task.result())
        if on_progress is not None:
            on_progress(1.0)
        return result
    if ecm_digits is not None or work_limit is not None or time_limit_ms is not None:
        raise ValueError("the effort limits (ecm_digits, work_limit, time_limit_ms) apply to complete answers only, "
                         "not to trial division (from_, bound or mode=\"trial\")")
    return submit(n, from_=from_, bound=bound, chunks=chunks, chunk_size=chunk_size, client=client,
                  on_progress=on_progress, checkpoint_interval=checkpoint_interval, executable=executable,
                  serve_args=serve_args).result()


# Below 2^128 the kernel's batch call answers a complete job in milliseconds: nothing to spread.
_SHARED_FROM = 2**128


def submit_complete(n: int, *, ecm_digits: int | None = None, work_limit: int | None = None,
                    shares: int | None = None, client: distributed.Client | None = None,
                    on_progress: Callable[[float], None] | None = None, executable: str | None = None,
                    serve_args: Sequence[str] = ()) -> CompleteJob:
    """Starts a complete factorization of ``n`` on the cluster and returns its :class:`CompleteJob` at once.

    The job runs on one worker until its next piece is ECM; then ``shares`` Dask tasks (default: one per worker
    thread of the cluster) each run a share of the curves on their worker's bridge. The first share to find a
    factor stops the others; the shares are merged and the job goes on. With ``shares=1`` it runs whole on one
    worker. ``ecm_digits`` and ``work_limit`` are the effort limits of :meth:`primekit.Client.factor` (the
    shares split the work limit).
    """
    if not isinstance(n, int) or n < 2:
        raise ValueError(f"the candidate must be an int of at least 2, got {n!r}")
    return CompleteJob(n, client=_default_client(client), shares=shares,
                       effort=effort_params(ecm_digits, work_limit, None), executable=executable,
                       serve_args=serve_args, on_progress=on_progress)


def resume(checkpoint: str, *, client: distributed.Client | None = None,
           on_progress: Callable[[float], None] | None = None, checkpoint_interval: float = 0.5,
           executable: str | None = None, serve_args: Sequence[str] = ()) -> DistributedJob | CompleteJob:
    """Goes on from a combined checkpoint document (``pause()`` or ``.checkpoint``), in this process or another
    one. A trial-division document (version 1) gives a :class:`DistributedJob`: done chunks are kept, every other
    chunk continues from its own checkpoint. A complete job's (version 2, ``"kind": "complete"``) gives a
    :class:`CompleteJob` that goes on from its job checkpoint, its ECM curves cut over this cluster's workers."""
    document = json.loads(checkpoint)
    if not isinstance(document, dict) or document.get("format") != CHECKPOINT_FORMAT:
        raise ValueError("not a primekit.dask checkpoint document")
    if document.get("version") == _COMPLETE_VERSION and document.get("kind") == "complete":
        job_checkpoint = document.get("checkpoint")
        effort = document.get("effort") or {}
        if not isinstance(job_checkpoint, (str, type(None))) or not isinstance(effort, dict):
            raise ValueError("a malformed primekit.dask checkpoint document")
        return CompleteJob(_numbers.to_int(document["candidate"]), client=_default_client(client), shares=None,
                           effort=effort, executable=executable, serve_args=serve_args, on_progress=on_progress,
                           checkpoint=job_checkpoint)
    if document.get("version") != _CHECKPOINT_VERSION:
        raise ValueError(f"unsupported primekit.dask checkpoint version {document.get('version')!r}")
    dask_client = _default_client(client)
    pieces: list[dict[str, Any]] = []
    for chunk in document["chunks"]:
        piece: dict[str, Any] = {"from": int(chunk["from"]), "bound": int(chunk["bound"]),
                                 "checkpoint": chunk.get("checkpoint"), "state": "stopped", "published": True}
        if chunk["state"] == "done" and piece["checkpoint"]:
            piece["state"] = "done"
            piece["factors"] = [[_numbers.to_int(f["prime"]), int(f["exponent"])] for f in chunk["factors"]]
        elif chunk["state"] == "done":
            piece["checkpoint"] = None  # a document of an earlier version: the chunk runs again
        pieces.append(piece)
    # Chunks without a checkpoint (not started, or done in an earlier version's document) start from a new piece.
    missing = [piece for piece in pieces if not piece["checkpoint"]]
    if missing:
        texts: list[str] = dask_client.submit(
            _pieces_of, document["candidate"], [(str(p["from"]), str(p["bound"])) for p in missing], executable,
            list(serve_args), pure=False, retries=2).result()
        for piece, text in zip(missing, texts):
            piece["checkpoint"], piece["published"] = text, False
    return DistributedJob(_numbers.to_int(document["candidate"]), int(document["from"]), int(document["bound"]),
                          pieces, client=dask_client, on_progress=on_progress, checkpoint_interval=checkpoint_interval,
                          executable=executable, serve_args=serve_args)


def map_candidates(candidates: Iterable[int], kind: Literal["isPrime", "factor"] = "isPrime", *,
                   client: distributed.Client | None = None, block_size: int = 10_000,
                   blocks_in_flight: int | None = None, from_: int | None = None, bound: int | None = None,
                   executable: str | None = None, serve_args: Sequence[str] = ()) -> Generator[JobResult, None, None]:
    """Yields the result of each candidate (a :class:`~primekit.types.PrimalityResult` or
    :class:`~primekit.types.FactorResult`, as the local client gives them), in the order of ``candidates``.

    The candidates are read lazily, ``block_size`` at a time; one Dask task computes a block on a worker's bridge.
    At most ``blocks_in_flight`` blocks (default: 2 per worker thread, plus 1) are submitted and not yet yielded,
    so an endless iterable works and memory stays bounded. Closing the generator cancels the blocks in flight.
    """
    dask_client = _default_client(client)
    if block_size < 1:
        raise ValueError("block_size must be at least 1")
    limit = blocks_in_flight or 2 * max(1, sum(dask_client.nthreads().values())) + 1
    first = None if from_ is None else _numbers.to_decimal(from_)
    last = None if bound is None else _numbers.to_decimal(bound)
    source = iter(candidates)
    in_flight: deque[Any] = deque()
    exhausted = False
    try:
        while True:
            while not exhausted and len(in_flight) < limit:
                block = [_numbers.to_decimal(n) for n in itertools.islice(source, block_size)]
                if not block:
                    exhausted = True
                    break
                in_flight.append(dask_client.submit(_run_block, kind, block, first, last, executable,
                                                    list(serve_args), pure=False, retries=2))
            if not in_flight:
                return
            results: list[JobResult] = in_flight[0].result()
            in_flight.popleft()
            yield from results
    finally:
        if in_flight:
            dask_client.cancel(list(in_flight))
