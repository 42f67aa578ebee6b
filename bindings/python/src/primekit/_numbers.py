"""Decimal strings on the wire, Python ints in the API (of any size: Python's 4300-digit conversion limit is
worked around by converting long numbers in halves)."""

from __future__ import annotations

from typing import Any, cast

from .types import FactorResult, JobResult, PrimalityResult, Progress

# Below the interpreter's default limit on int <-> str conversion (sys.get_int_max_str_digits(), 4300).
_PIECE = 4000


def to_decimal(n: int) -> str:
    """``str(n)`` for any size of int (also when the interpreter limits int-to-str conversion)."""
    try:
        return str(n)
    except ValueError:
        if not isinstance(n, int) or n < 0:
            raise
    # Split in two near the middle of the digits; both halves convert in turn.
    low_digits = int(n.bit_length() * 0.30102999566398120) // 2
    scale: int = 10**low_digits
    high, low = divmod(n, scale)
    return to_decimal(high) + to_decimal(low).rjust(low_digits, "0")


def to_int(text: str) -> int:
    """``int(text)`` for a decimal string of any length."""
    if len(text) <= _PIECE:
        return int(text)
    split = len(text) // 2
    scale: int = 10 ** (len(text) - split)
    return to_int(text[:split]) * scale + to_int(text[split:])


def to_ints(texts: list[str]) -> list[int]:
    """``int`` of each decimal string (the fast way while they are short, which they nearly always are)."""
    try:
        return list(map(int, texts))
    except ValueError:
        return [to_int(text) for text in texts]


# The members of a composite part that are decimal strings on the wire.
_PART_NUMBERS = ("value", "trialFrom", "trialBound", "work", "b1", "b2")


def result(raw: dict[str, Any]) -> JobResult:
    """A ``factor`` or ``isPrime`` result from the wire (told apart by their members)."""
    out = dict(raw)
    out["candidate"] = to_int(raw["candidate"])
    if "cofactor" in raw:
        out["cofactor"] = to_int(raw["cofactor"])
        out["factors"] = [{**f, "prime": to_int(f["prime"])} for f in raw["factors"]]
        if "parts" in raw:
            out["parts"] = [{**part, **{key: to_int(part[key]) for key in _PART_NUMBERS}} for part in raw["parts"]]
        return cast(FactorResult, out)
    factors = raw.get("factors")
    if factors is not None:
        out["factors"] = to_ints(factors)
    return cast(PrimalityResult, out)


def progress(raw: dict[str, Any]) -> Progress:
    """A ``job/progress`` notification's params."""
    out = dict(raw)
    out["next"] = to_int(raw["next"])
    out["tested"] = to_int(raw["tested"])
    out["factors"] = to_ints(raw["factors"])
    if isinstance(raw.get("ecm"), dict):
        out["ecm"] = dict(raw["ecm"], b1=to_int(raw["ecm"]["b1"]))
    return cast(Progress, out)
