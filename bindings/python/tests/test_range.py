"""Client.factor_range against the real executable: lines against trial division, the credit window, early exit,
refused ranges."""

from __future__ import annotations

import threading

import pytest

from primekit import Client, InvalidParamsError, RangeJobCancelledError

from conftest import GUARD


def oracle_line(n: int) -> str:
    """The factor command's line of n, by trial division."""
    line = f"{n}:"
    rest = n
    d = 2
    while d * d <= rest:
        while rest % d == 0:
            line += f" {d}"
            rest //= d
        d += 1 if d == 2 else 2
    if rest > 1:
        line += f" {rest}"
    return line


def test_factor_range_yields_every_line_in_order_equal_to_trial_division(client: Client) -> None:
    blocks = client.factor_range(2, 30000, timeout=GUARD)
    lines: list[str] = []
    for block in blocks:
        assert block["first"] == 2 + len(lines)
        lines.extend(block["lines"])
    assert lines == [oracle_line(n) for n in range(2, 30001)]
    assert blocks.summary == {"first": 2, "last": 30000, "count": 29999, "primeCount": 3245}


def test_a_reader_that_stops_gets_at_most_the_credit_window_and_close_cancels(client: Client) -> None:
    seen: list[int] = []
    arrived = threading.Condition()

    def on_block(params: dict[str, object]) -> None:
        with arrived:
            seen.append(int(str(params["seq"])))
            arrived.notify_all()

    with client.factor_range(10**12, 10**12 + 10**10, timeout=GUARD) as blocks:
        original = blocks._on_block

        def spy(params: dict[str, object]) -> None:
            on_block(params)
            original(params)

        blocks._on_block = spy  # type: ignore[method-assign]
        first = next(blocks)
        assert first["first"] == 10**12
        with arrived:
            assert arrived.wait_for(lambda: len(seen) >= 4, GUARD)
        client.request("ping")  # answered after block 4: no fifth block came before it (no acknowledgement yet)
        assert seen == [1, 2, 3, 4]
        next(blocks)  # acknowledges block 1: block 5 follows
        with arrived:
            assert arrived.wait_for(lambda: len(seen) >= 5, GUARD)
        client.request("ping")
        assert seen == [1, 2, 3, 4, 5]
    with pytest.raises(RangeJobCancelledError):
        while True:
            next(blocks)


def test_a_refused_range_raises_from_the_first_next(client: Client) -> None:
    with pytest.raises(InvalidParamsError):
        next(client.factor_range(10, 2, timeout=GUARD))
    with pytest.raises(InvalidParamsError) as refused:
        next(client.factor_range(2, 2**128 + 2, timeout=GUARD))
    assert isinstance(refused.value.data, dict) and refused.value.data["field"] == "last"
