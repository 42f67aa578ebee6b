"""The shapes of results, progress and events, as Python sees them.

They are the wire shapes of the bridge protocol (the same member names) with one change: every member that holds
a number as a decimal string on the wire (candidate, prime, cofactor, divisors, next, tested, and a part's value,
trialFrom, trialBound, work, b1, b2) is a Python ``int``. Members marked ``NotRequired`` came with protocol minor 1
(a server that answers ``initialize`` without ``protocolMinor`` leaves them out).
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

#: A job's kind, as the protocol names it.
Kind: TypeAlias = Literal["factor", "isPrime", "factorRange"]

#: A job's state on the wire.
State: TypeAlias = Literal["pending", "queued", "running", "paused", "succeeded", "failed", "cancelled"]

#: How a job searches: every prime factor (``"complete"``, the default), or trial division only (``"trial"``).
Mode: TypeAlias = Literal["complete", "trial"]

#: ``"proven"``, or ``"probable"`` for a BPSW probable prime.
Certainty: TypeAlias = Literal["proven", "probable"]

#: The stage a job is in (``Progress.stage``).
Stage: TypeAlias = Literal["trial", "power", "prime", "split", "ecm", "qs", "range", "done"]

#: A priority by name, or 0 (veryLow) to 4 (veryHigh).
Priority: TypeAlias = Literal["veryLow", "low", "normal", "high", "veryHigh", 0, 1, 2, 3, 4]


class PrimeFactor(TypedDict):
    """One prime factor of a factorization and its exponent."""

    prime: int
    exponent: int
    certainty: NotRequired[Certainty]


class CompositePart(TypedDict):
    """A composite part a complete job left unsplit because an effort limit stopped it, with what was tried on it:
    the trial-division range, the work units spent, the ECM curves run with their bounds and the factor size
    (``ecmDigits``) they searched for, and the last method tried (``"split"``, ``"ecm"``, ``"qs"`` or ``"none"``)."""

    value: int
    exponent: int
    trialFrom: int
    trialBound: int
    work: int
    curves: int
    b1: int
    b2: int
    ecmDigits: int
    method: Literal["split", "ecm", "qs", "none"]


class EcmShare(TypedDict):
    """In the result of a job that ran one ECM share checkpoint (``checkpoint/split``, protocol minor 3): the
    share is over. ``found``: it found a factor; ``checkpoint``: where it ended, for ``checkpoint/merge``."""

    index: int
    count: int
    found: bool
    checkpoint: str


class FactorResult(TypedDict):
    """The result of a ``factor`` job.

    ``factors`` are primes, ascending, each ``proven`` or ``probable`` (``certainty``). ``cofactor`` is what is
    left (1 when nothing is): above the bound for a trial-division job (``mode == "trial"``), the product of the
    ``parts`` (each to its exponent) for a complete job an effort limit stopped. ``cofactorStatus`` says what is
    known about it. ``complete`` is true when every prime factor is known; ``isPrime`` is None when nothing was
    found and the remainder could not be classified.
    """

    candidate: int
    factors: list[PrimeFactor]
    cofactor: int
    cofactorStatus: Literal["one", "probable-prime", "composite", "unknown"]
    complete: bool
    isPrime: bool | None
    certainty: Certainty
    mode: NotRequired[Mode]
    parts: NotRequired[list[CompositePart]]
    ecmShare: NotRequired[EcmShare]
    checkpoint: NotRequired[str]


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


class EcmPosition(TypedDict):
    """Where a part's ECM stands (protocol minor 3): curve ``curve`` (from 1) of the ``curves`` its B1 level
    expects to run to find a factor of ``digits`` digits, at stage 1 bound ``b1``."""

    curve: int
    curves: int
    b1: int
    digits: int


class Progress(TypedDict):
    """A ``job/progress`` notification: ``seq`` increases strictly per job, ``progress`` is 0-100; ``stage`` is
    what the job does now, ``stageFraction`` (0-1) how far it is in that stage of the current part, ``partsLeft``
    how many composite parts are still to split, ``ecm`` (in stage ``"ecm"`` only) where its curves stand."""

    jobId: str
    seq: int
    state: State
    progress: float
    next: int
    tested: int
    factors: list[int]
    stage: NotRequired[Stage]
    stageFraction: NotRequired[float]
    partsLeft: NotRequired[int]
    ecm: NotRequired[EcmPosition]


class EngineEvent(TypedDict):
    """An ``engine/event`` notification (after ``plugin/subscribe``): the stream's name and the event object."""

    stream: Literal["errors", "lifecycle", "pluginData"]
    event: dict[str, Any]


class StoppedJob(TypedDict):
    """A job the ``shutdown`` of ``close()`` stopped, with the checkpoint to resume it from."""

    jobId: str
    state: Literal["paused"]
    checkpoint: str


class RangeBlock(TypedDict):
    """One block of a ``factorRange`` job (protocol minor 2): the numbers ``first``, ``first + 1``, …, one line
    each as the ``factor`` command prints it (``"12: 2 2 3"``)."""

    first: int
    lines: list[str]


class RangeSummary(TypedDict):
    """The result of a ``factorRange`` job (protocol minor 2): what was factored and how many numbers are prime."""

    first: int
    last: int
    count: int
    primeCount: int
