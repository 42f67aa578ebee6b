"""The size limits at their edges: 10,000,000 digits accepted, one more refused (1004), a 20 MB line refused
(-32001) without the server keeping it in memory."""

from __future__ import annotations

import random

import pytest

from conftest import Deadline, RpcError, Server, figure, mib

MAX_DIGITS = 10_000_000
# A line over the limit is buffered up to the limit (16 MiB), then the rest is thrown away. Three 20 MB lines may
# raise the server's peak resident memory by at most twice the limit plus 8 MiB (measured: +16.3 MiB after the
# first, +31.9 MiB from the second on: the buffer is kept for reuse), and a 100 MB line after them by at most 4 MiB
# more (measured: +0).
LINE_GROWTH_BOUND = 2 * 16 * 1048576 + 8 * 1048576
LONGER_LINE_GROWTH_BOUND = 4 * 1048576
# A 10,000,000-digit job (request line, candidate, result with candidate and cofactor) peaks below this many
# times its decimal length (measured about 16x, see docs/reliability.md).
HUGE_JOB_MULTIPLE = 24


def random_digits(rng: random.Random, count: int) -> bytes:
    """`count` random decimal digits, the first not 0, as ASCII (no Python int: it would take minutes)."""
    table = bytes(48 + i % 10 for i in range(256))
    digits = bytearray(rng.randbytes(count).translate(table))
    digits[0] = 49 + digits[0] % 9
    return bytes(digits)


def small_divisors(digits: bytes) -> set[int]:
    """Which of 2, 3, 5 and 11 divide the number, from its digits alone."""
    last = digits[-1] - 48
    values = [d - 48 for d in digits]
    out = set()
    if last % 2 == 0:
        out.add(2)
    if sum(values) % 3 == 0:
        out.add(3)
    if last in (0, 5):
        out.add(5)
    alternating = sum(values[-1::-2]) - sum(values[-2::-2])
    if alternating % 11 == 0:
        out.add(11)
    return out


def submit_line(request_id: int, digits: bytes, bound: str) -> bytes:
    return (b'{"jsonrpc":"2.0","id":%d,"method":"job/submit","params":{"kind":"factor","bound":"%s","candidate":"'
            % (request_id, bound.encode()) + digits + b'"}}\n')


@pytest.mark.stress
def test_ten_million_digits_at_the_limit(seed: int) -> None:
    rng = random.Random(seed)
    deadline = Deadline(240, "the 10,000,000-digit job")
    digits = random_digits(rng, MAX_DIGITS)
    with Server(["--workers", "1"]) as server:
        server.call("initialize", {"protocolVersion": 1})
        base = server.memory()["VmRSS"]

        # One digit more: refused with 1004 and the limits in data.
        request_id = server.next_id()
        server.write(submit_line(request_id, digits + b"7", "1000"))
        refused = server.wait_response(request_id, deadline.left())
        assert refused["error"]["code"] == 1004, refused["error"]
        assert refused["error"]["data"] == {"field": "candidate", "digits": MAX_DIGITS + 1, "maxDigits": MAX_DIGITS}

        # Exactly the limit: accepted, and it runs to a correct result (trial division by the primes below 1000).
        request_id = server.next_id()
        server.write(submit_line(request_id, digits, "1000"))
        accepted = server.wait_response(request_id, deadline.left())
        assert "result" in accepted, accepted
        job_id = accepted["result"]["jobId"]
        server.wait_until(lambda: job_id in server.finished, deadline.left(), "the 10,000,000-digit job's end")
        (done,) = server.finished[job_id]
        assert done["state"] == "succeeded", str(done)[:500]
        result = done["result"]
        assert result["candidate"] == digits.decode()
        found = {int(f["prime"]) for f in result["factors"]}
        assert all(p < 1000 for p in found)
        assert found & {2, 3, 5, 11} == small_divisors(digits)
        assert result["cofactorStatus"] == "unknown" and result["complete"] is False
        assert len(result["cofactor"]) >= MAX_DIGITS - 3 * sum(f["exponent"] for f in result["factors"])
        peak = server.memory()["VmHWM"]
        figure("10M-digit job: server VmRSS before", mib(base))
        figure("10M-digit job: server VmHWM", f"{mib(peak)} = {peak / MAX_DIGITS:.1f}x the digits")
        assert peak <= HUGE_JOB_MULTIPLE * MAX_DIGITS, f"peak {mib(peak)}"
        server.call("ping")
        assert server.stop() == 0


def long_line(size: int) -> bytes:
    """A job/submit line of `size` bytes (its candidate makes up nearly all of it)."""
    head = b'{"jsonrpc":"2.0","id":"big","method":"job/submit","params":{"kind":"factor","candidate":"1'
    tail = b'"}}\n'
    return head + b"3" * (size - len(head) - len(tail) + 1) + tail


def refuse_line(server: Server, line: bytes, deadline: Deadline) -> None:
    server.write(line)
    ping = server.send("ping")
    server.wait_until(lambda: None in server.responses, deadline.left(), "the -32001 answer")
    refused = server.responses.pop(None)
    assert refused["error"]["code"] == -32001, refused
    assert "result" in server.wait_response(ping, deadline.left())


def test_twenty_megabyte_line_is_refused_without_growing() -> None:
    deadline = Deadline(120, "the 20 MB lines")
    with Server() as server:
        server.call("initialize", {"protocolVersion": 1})
        before = server.memory()["VmHWM"]
        for _ in range(3):
            refuse_line(server, long_line(20_000_000), deadline)
        after = server.memory()["VmHWM"]
        figure("3 x 20 MB lines: server VmHWM before / after", f"{mib(before)} / {mib(after)} "
               f"(+{mib(after - before)})")
        assert after - before <= LINE_GROWTH_BOUND, f"VmHWM grew by {mib(after - before)}"
        refuse_line(server, long_line(100_000_000), deadline)
        longer = server.memory()["VmHWM"]
        figure("100 MB line after them: server VmHWM", f"{mib(longer)} (+{mib(longer - after)})")
        assert longer - after <= LONGER_LINE_GROWTH_BOUND, f"VmHWM grew by {mib(longer - after)} more"
        # The server goes on serving normally.
        assert server.call("job/list") == {"jobs": []}
        assert server.stop() == 0


def test_refusals_keep_the_server_usable() -> None:
    with Server(["--max-digits", "50"]) as server:
        with pytest.raises(RpcError) as refused:
            server.call("job/submit", {"kind": "factor", "candidate": "1" * 51})
        assert refused.value.code == 1004
        assert server.call("job/submit", {"kind": "factor", "candidate": "1" * 50})["jobId"] == "j1"
        server.wait_until(lambda: "j1" in server.finished, 30, "j1's end")
        assert server.finished["j1"][0]["state"] == "succeeded"
        assert server.stop() == 0
