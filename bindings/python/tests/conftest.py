"""Shared fixtures: the real ``primekit`` executable (PRIMEKIT_BIN, else the source tree's release build)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from primekit import Client

REPO = Path(__file__).resolve().parents[3]
VECTORS = REPO / "Tests" / "Vectors"

# A prime just below 2^64: factoring it by trial division (mode="trial") tries every divisor up to 2^32 (about a
# second), slow enough to watch; a complete job answers at once.
SLOW_PRIME = 18446744073709551557
SLOW_RESULT = {"candidate": SLOW_PRIME, "factors": [{"prime": SLOW_PRIME, "exponent": 1, "certainty": "proven"}],
               "cofactor": 1, "cofactorStatus": "one", "complete": True, "isPrime": True, "certainty": "proven",
               "mode": "trial", "parts": []}

# A Mersenne prime above 2^64 with a bound of 2^31: a factor job of about a second, long enough to pause midway.
MERSENNE_89 = 2**89 - 1
MERSENNE_BOUND = 2**31
MERSENNE_RESULT = {"candidate": MERSENNE_89, "factors": [], "cofactor": MERSENNE_89, "cofactorStatus": "probable-prime",
                   "complete": True, "isPrime": True, "certainty": "probable", "mode": "trial", "parts": []}

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
