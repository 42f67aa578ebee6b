"""What the Dask test modules share: a two-worker local cluster whose workers find this source tree's tool, and the
fixtures built on it. Imported only by modules that skipped themselves when Dask is missing."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import distributed
import pytest

from primekit import Client


def start_cluster(executable: str) -> tuple[Any, Any]:
    """A LocalCluster of two single-threaded worker processes and a client of it."""
    os.environ["PRIMEKIT_BIN"] = executable  # the worker processes inherit it and find their bridge with it
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    return cluster, distributed.Client(cluster)


@pytest.fixture(scope="module")
def dask_client(executable: str) -> Iterator[Any]:
    cluster, client = start_cluster(executable)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


@pytest.fixture(scope="module")
def local(executable: str) -> Iterator[Client]:
    with Client(executable) as client:
        yield client
