"""Shared fixtures: the real ``primekit`` executable (PRIMEKIT_BIN, else the source tree's release build)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from primekit import Client

REPO = Path(__file__).resolve().parents[3]
VECTORS = REPO / "Tests" / "Vectors"

# A prime just below 2^64. Factoring it by trial division (mode="trial") tries every divisor up to 2^32: about a
# tenth of a second for a release build, too quick for a test to count on seeing it run. The tests use it where it
# cannot start (the queue is suspended) or where they wait for its end; a complete job answers at once.
SLOW_PRIME = 18446744073709551557
SLOW_RESULT = {"candidate": SLOW_PRIME, "factors": [{"prime": SLOW_PRIME, "exponent": 1, "certainty": "proven"}],
               "cofactor": 1, "cofactorStatus": "one", "complete": True, "isPrime": True, "certainty": "proven",
               "mode": "trial", "parts": []}

# RSA-100, the product of two 50-digit primes: a complete job on it does not split it within a test, so with
# time_limit_ms (running time only: not queued, not paused) it runs for that long, then ends with a partial answer
# that names RSA_100 as the composite part left.
RSA_100 = 1522605027922533360535618378132637429718068114961380688657908494580122963258952897654000350692006139
# The running time of the RSA-100 jobs a test pauses while they run: far longer than a pause takes to land after
# the first progress report, even on a loaded machine.
PAUSABLE_MS = 3000


def assert_unsplit_rsa_100(result: Any) -> None:
    """A partial answer on RSA_100 ended by its time limit: nothing split, the whole number left as one part."""
    assert (result["candidate"], result["mode"], result["complete"]) == (RSA_100, "complete", False)
    assert (result["factors"], result["cofactor"], result["cofactorStatus"]) == ([], RSA_100, "composite")
    assert [(part["value"], part["exponent"]) for part in result["parts"]] == [(RSA_100, 1)]


# Failure guards only: nothing waits for them to pass.
GUARD = 30.0


def executable_path() -> str:
    explicit = os.environ.get("PRIMEKIT_BIN")
    if explicit:
        return explicit
    build = REPO / ".build" / "release" / "primekit"
    if not build.is_file():
        pytest.exit(f"no primekit executable: set PRIMEKIT_BIN or build {build} (swift build -c release)", 2)
    return str(build)


@pytest.fixture(scope="session")
def executable() -> str:
    return executable_path()


@pytest.fixture
def client(executable: str) -> Iterator[Client]:
    with Client(executable) as client:
        yield client
