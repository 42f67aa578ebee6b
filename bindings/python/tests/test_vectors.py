"""Replays every golden transcript in Tests/Vectors/*.jsonl (format: Tests/Vectors/README.md) over a pipe."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import VECTORS, executable_path

WAIT = 10.0  # the README's limit for an expected message, and for the exit at the end


def matches(expected: Any, actual: Any) -> bool:
    """Deep equality, object members in any order; "$any" matches any value, "$string" any string."""
    if expected == "$any":
        return True
    if expected == "$string":
        return isinstance(actual, str)
    if isinstance(expected, dict):
        return (isinstance(actual, dict) and expected.keys() == actual.keys()
                and all(matches(value, actual[key]) for key, value in expected.items()))
    if isinstance(expected, list):
        return (isinstance(actual, list) and len(expected) == len(actual)
                and all(matches(e, a) for e, a in zip(expected, actual)))
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, (int, float)):
        return isinstance(actual, (int, float)) and expected == actual
    return type(expected) is type(actual) and bool(expected == actual)


class Session:
    """A fresh ``primekit serve`` with a thread that sorts its output into responses and notifications."""

    def __init__(self, executable: str) -> None:
        self.process = subprocess.Popen([executable, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, start_new_session=True)
        self.responses: queue.Queue[Any] = queue.Queue()
        self.notifications: list[Any] = []
        self.arrived = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            message = json.loads(line)
            if isinstance(message, list) or "id" in message:
                self.responses.put(message)
            else:
                with self.arrived:
                    self.notifications.append(message)
                    self.arrived.notify_all()

    def write(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data + b"\n")
        self.process.stdin.flush()

    def expect(self, expected: Any, where: str) -> None:
        try:
            actual = self.responses.get(timeout=WAIT)
        except queue.Empty:
            pytest.fail(f"{where}: no response within {WAIT} s; expected {json.dumps(expected)}")
        assert matches(expected, actual), f"{where}: expected {json.dumps(expected)}\n got {json.dumps(actual)}"

    def expect_notification(self, expected: Any, where: str) -> None:
        deadline = time.monotonic() + WAIT
        with self.arrived:
            while True:
                for index, message in enumerate(self.notifications):
                    if matches(expected, message):
                        del self.notifications[index]  # each is matched once
                        return
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    seen = [m for m in self.notifications if m.get("method") != "job/progress"]
                    pytest.fail(f"{where}: no notification {json.dumps(expected)} within {WAIT} s; "
                                f"unmatched: {json.dumps(seen)[:2000]}")
                self.arrived.wait(remaining)

    def finish(self, where: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            status = self.process.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            pytest.fail(f"{where}: the server did not exit within {WAIT} s after stdin closed")
        self.reader.join(timeout=WAIT)
        assert status == 0, f"{where}: exit status {status} after stdin closed"


def vector_files() -> list[Path]:
    return sorted(VECTORS.glob("*.jsonl"))


def test_there_are_vectors() -> None:
    assert vector_files(), f"no *.jsonl in {VECTORS}"


@pytest.mark.parametrize("path", vector_files(), ids=lambda path: path.name)
def test_vector(path: Path) -> None:
    session = Session(executable_path())
    try:
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not text.strip():
                continue
            step = json.loads(text)
            where = f"{path.name}:{number}"
            assert isinstance(step, dict) and len(step) == 1, f"{where}: a line has exactly one member"
            (kind, value), = step.items()
            if kind == "send":
                session.write(json.dumps(value, separators=(",", ":")).encode())
            elif kind == "sendRaw":
                session.write(value.encode())
            elif kind == "sendHex":
                session.write(bytes.fromhex(value.replace(" ", "")))
            elif kind == "expect":
                session.expect(value, where)
            elif kind == "expectNotification":
                session.expect_notification(value, where)
            elif kind != "comment":
                pytest.fail(f"{where}: unknown line kind {kind!r}")
        session.finish(path.name)
    finally:
        if session.process.poll() is None:
            session.process.kill()
            session.process.wait()


def test_matcher() -> None:
    """The matcher itself, so that a replay cannot pass by matching everything."""
    assert matches({"a": [1, "$string"], "b": "$any"}, {"b": None, "a": [1, "x"]})
    assert not matches({"a": "$string"}, {"a": 1})
    assert not matches({"a": "$any"}, {})
    assert not matches({"a": 1}, {"a": 1, "b": 2})
    assert not matches(True, 1)
    assert not matches(1, True)
    assert not matches([1, 2], [2, 1])
    assert not matches("1", 1)
