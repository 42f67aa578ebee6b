"""A ``factorRange`` job's blocks as a blocking iterator: :meth:`Client.factor_range <primekit.Client.factor_range>`."""

from __future__ import annotations

import collections
from collections.abc import Iterator
from typing import Any, cast

from . import _numbers
from ._connection import Connection
from .errors import BridgeClosedError, PrimeKitError
from .types import RangeBlock, RangeSummary


class RangeJobCancelledError(Exception):
    """The range job was cancelled (``job/cancel``, or leaving the iteration early); ``checkpoint`` is where it
    stopped, if the bridge made one."""

    def __init__(self, job_id: str | None, reason: str | None, checkpoint: str | None) -> None:
        super().__init__(f"range job {job_id} was cancelled ({reason})")
        self.job_id = job_id
        self.reason = reason
        self.checkpoint = checkpoint


class RangeIterator(Iterator[RangeBlock]):
    """The blocks of a ``factorRange`` job, in order, each ``{"first": int, "lines": [str, ...]}`` (the numbers'
    lines as the ``factor`` command prints them, ``"12: 2 2 3"``).

    A block is acknowledged (``job/ack``) when the next one is asked for, so the bridge sends at most 4 blocks the
    reader has not asked for, and a reader that stops stops the job, not the bridge. :meth:`close` (also at the
    end of a ``with`` block) cancels an unfinished job. After the last block, :attr:`summary` holds ``{first, last,
    count, primeCount}``. A failed job raises :class:`~primekit.errors.PrimeKitError`, a cancelled one
    :class:`RangeJobCancelledError`, from the iteration. ``timeout`` bounds each wait for a block
    (``TimeoutError``).
    """

    def __init__(self, connection: Connection, timeout: float | None) -> None:
        self._connection = connection
        self._timeout = timeout
        self._job_id: str | None = None
        self._blocks: collections.deque[dict[str, Any]] = collections.deque()
        self._last_seq = 0
        self._to_acknowledge = 0
        self._error: BaseException | None = None
        self._ended = False
        self.summary: RangeSummary | None = None

    def __enter__(self) -> RangeIterator:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def job_id(self) -> str | None:
        """The bridge's id for the job, None until the submission is answered."""
        return self._job_id

    def __next__(self) -> RangeBlock:
        if self._to_acknowledge and not self._ended and self._job_id is not None:
            seq, self._to_acknowledge = self._to_acknowledge, 0
            try:
                self._connection.send("job/ack", {"jobId": self._job_id, "seq": seq}, _ignore, _ignore)
            except BridgeClosedError:
                pass  # the end is reported below
        if not self._connection.wait_until(lambda: bool(self._blocks) or self._ended, self._timeout):
            raise TimeoutError(f"no block from range job {self._job_id} within {self._timeout} s")
        if self._blocks:
            block = self._blocks.popleft()
            self._to_acknowledge = block["seq"]
            return {"first": _numbers.to_int(block["first"]), "lines": list(block["lines"])}
        if self._error is not None:
            raise self._error
        raise StopIteration

    def close(self) -> None:
        """Cancels the job if it has not ended (the blocks not read are dropped)."""
        if self._ended or self._job_id is None:
            return
        try:
            self._connection.call("job/cancel", {"jobId": self._job_id})
        except (PrimeKitError, BridgeClosedError):
            pass

    # MARK: - What the reader thread reports

    def _on_submitted(self, message: dict[str, Any]) -> None:
        result = message.get("result")
        if result is None:
            self._end(PrimeKitError.from_error(message.get("error") or {}))
        else:
            self._job_id = job_id = result["jobId"]
            self._connection.jobs[job_id] = self
        self._connection.wake()

    def _on_submit_failed(self, error: BridgeClosedError) -> None:
        self._end(error)
        self._connection.wake()

    def _on_block(self, params: dict[str, Any]) -> None:
        if params["seq"] != self._last_seq + 1:
            return  # each block once, in order
        self._last_seq = params["seq"]
        self._blocks.append(params)
        self._connection.wake()

    def _on_progress(self, params: dict[str, Any]) -> None:
        pass

    def _on_finished(self, params: dict[str, Any]) -> None:
        state = params["state"]
        if state == "succeeded":
            raw = params["result"]
            self.summary = cast(RangeSummary, {key: _numbers.to_int(raw[key])
                                               for key in ("first", "last", "count", "primeCount")})
            self._end(None)
        elif state == "cancelled":
            self._end(RangeJobCancelledError(self._job_id, params.get("reason"), params.get("checkpoint")))
        else:
            self._end(PrimeKitError.from_error(params.get("error") or {}))
        self._connection.wake()

    def _on_stopped(self, error: BridgeClosedError, checkpoint: str | None) -> None:
        self._end(error)
        self._connection.wake()

    def _end(self, error: BaseException | None) -> None:
        if not self._ended:
            self._ended = True
            self._error = error


def _ignore(_: Any) -> None:
    pass
