"""What a job handle keeps of the bridge's answers and notifications, shared by :class:`primekit.Job` and
:class:`primekit.aio.AsyncJob`: the id, the last state, the last checkpoint and the latest progress report."""

from __future__ import annotations

from typing import Any

from . import _numbers
from .errors import PrimeKitError
from .types import JobResult, State


class JobRecord:
    """The bridge's last word on one job. Each handle updates it from the thread or loop it serves."""

    def __init__(self) -> None:
        super().__init__()  # the next class's (a Future's), so that a handle may also be one
        self._job_id: str | None = None
        self._wire_state: State | None = None
        self._checkpoint: str | None = None
        self._latest: dict[str, Any] | None = None

    @property
    def state(self) -> State | None:
        """The last state the bridge reported (None before the submission is answered)."""
        return self._wire_state

    @property
    def checkpoint(self) -> str | None:
        """The last checkpoint the bridge gave for this job: after ``pause()``, ``cancel()``, or the ``close()``
        that stopped it. Pass it to ``resume_from()``."""
        return self._checkpoint

    def _record_submitted(self, result: dict[str, Any]) -> str:
        """A ``job/submit`` result: the job's id (returned) and first state."""
        self._wire_state = result["state"]
        self._job_id = job_id = str(result["jobId"])
        return job_id

    def _record_progress(self, params: dict[str, Any]) -> None:
        """A ``job/progress`` notification: the latest report and the state it gives."""
        self._latest = params
        self._wire_state = params["state"]

    def _record_paused(self, answer: dict[str, Any]) -> str:
        """A ``job/pause`` answer: the job is paused at the checkpoint it returns."""
        self._wire_state = "paused"
        self._checkpoint = checkpoint = str(answer["checkpoint"])
        return checkpoint

    def _record_finished(self, params: dict[str, Any]) -> JobResult | PrimeKitError | None:
        """A ``job/finished`` notification: the state it gives, and how the job ended: its result, the error it
        failed with, or None when it was cancelled (at the checkpoint it carries, when it has one)."""
        self._wire_state = state = params["state"]
        if state == "succeeded":
            return _numbers.result(params["result"])
        if state == "cancelled":
            self._checkpoint = params.get("checkpoint", self._checkpoint)
            return None
        return PrimeKitError.from_error(params.get("error") or {})

    def _record_cancelled(self, answer: dict[str, Any]) -> None:
        """A ``job/cancel`` answer: the job is cancelled, at its checkpoint when it gave one."""
        self._wire_state = "cancelled"
        self._checkpoint = answer.get("checkpoint", self._checkpoint)

    def _record_stopped(self, checkpoint: str | None) -> None:
        """The bridge closed: a job it saved is paused at that checkpoint."""
        if checkpoint is not None:
            self._checkpoint = checkpoint
            self._wire_state = "paused"
