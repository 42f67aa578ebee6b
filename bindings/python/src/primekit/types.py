"""The shapes of results, progress and events, as Python sees them.

They are the wire shapes of the bridge protocol (the same member names) with one change: every member that holds
a number as a decimal string on the wire (candidate, prime, cofactor, divisors, next, tested) is a Python ``int``.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

#: A job's kind, as the protocol names it.
Kind: TypeAlias = Literal["factor", "isPrime"]

#: A job's state on the wire.
State: TypeAlias = Literal["pending", "queued", "running", "paused", "succeeded", "failed", "cancelled"]

#: A priority by name, or 0 (veryLow) to 4 (veryHigh).
Priority: TypeAlias = Literal["veryLow", "low", "normal", "high", "veryHigh", 0, 1, 2, 3, 4]


class PrimeFactor(TypedDict):
    """One prime factor of a factorization and its exponent."""

    prime: int
    exponent: int


class FactorResult(TypedDict):
    """The result of a ``factor`` job.

    ``factors`` are proven primes, ascending. ``cofactor`` is what is left above the bound (1 when nothing is);
    ``cofactorStatus`` says what is known about it. ``complete`` is true when every prime factor is known;
    ``isPrime`` is None when nothing was found and the remainder could not be classified.
    """

    candidate: int
    factors: list[PrimeFactor]
    cofactor: int
    cofactorStatus: Literal["one", "probable-prime", "composite", "unknown"]
    complete: bool
    isPrime: bool | None
    certainty: Literal["proven", "probable"]


class PrimalityResult(TypedDict):
    """The result of an ``isPrime`` job.

    ``factors`` lists every divisor, ascending, 1 and the candidate included ([] for a prime), when the
    factorization is complete and not too large; otherwise ``divisorCount`` may say how many there are.
    ``certainty`` is absent when ``isPrime`` is None, and ``complete`` is then false (the question is left open).
    """

    candidate: int
    isPrime: bool | None
    complete: bool
    progress: float
    factors: NotRequired[list[int]]
    divisorCount: NotRequired[int]
    certainty: NotRequired[Literal["proven", "probable"]]


#: Either result; a job restored from a checkpoint can be of either kind.
JobResult: TypeAlias = FactorResult | PrimalityResult


class Progress(TypedDict):
    """A ``job/progress`` notification: ``seq`` increases strictly per job, ``progress`` is 0-100."""

    jobId: str
    seq: int
    state: State
    progress: float
    next: int
    tested: int
    factors: list[int]


class EngineEvent(TypedDict):
    """An ``engine/event`` notification (after ``plugin/subscribe``): the stream's name and the event object."""

    stream: Literal["errors", "lifecycle", "pluginData"]
    event: dict[str, Any]


class StoppedJob(TypedDict):
    """A job the ``shutdown`` of ``close()`` stopped, with the checkpoint to resume it from."""

    jobId: str
    state: Literal["paused"]
    checkpoint: str
