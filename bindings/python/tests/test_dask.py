"""primekit.dask on a LocalCluster of two worker processes, against the real executable: merged results equal
the local client's, early stop, map_candidates, pause/resume through the combined checkpoint, progress, and a
worker killed mid-chunk."""

from __future__ import annotations

import itertools
import json
import os
import signal
from collections.abc import Iterator
from concurrent.futures import CancelledError
from typing import Any, Callable

import pytest

from primekit import Client

try:
    import distributed
except ImportError:
    pytest.skip("primekit.dask needs Dask distributed (pip install 'primekit[dask]')", allow_module_level=True)

import primekit.dask as pkdask

from conftest import GUARD
from dask_support import dask_client, local, start_cluster  # noqa: F401 (fixtures)

MERSENNE_61 = 2**61 - 1
MERSENNE_89 = 2**89 - 1
# Trial division of a 31-digit prime to 10^13 (3.5e11 prime divisors), cut in two chunks: far more than any machine
# does within a test, so both chunks are still running whenever a test pauses, kills or cancels them, however fast
# or loaded the machine is. The tests watch it go on from its checkpoints, then cancel it. (A job short enough to
# wait for can end before a pause or a kill lands.)
ENDLESS = 10**30 + 57
ENDLESS_BOUND = 10**13


@pytest.mark.parametrize(("n", "bound"), [
    (2**10 * 3**5 * 5**3 * 7**2 * 11 * 13 * 17 * 19 * 23, None),            # small, many factors
    (MERSENNE_89 * MERSENNE_61 * 1000003 * 999983 * 104729, 10**7),           # 64 digits, composite cofactor
    (MERSENNE_89 * 1000003 * 999983 * 104729, 10**7),                       # 46 digits, probable-prime cofactor
    (1000000007, None),                                                       # a prime, proven by the range
    (MERSENNE_89, 10**6),                                                     # a probable prime
    (2, None),
    (3 * 2**70, None),
    (2**128 + 1, None),                                                       # complete: a 22-digit factor by ECM
])
def test_factor_equals_local(dask_client: Any, local: Client, n: int, bound: int | None) -> None:
    assert pkdask.factor(n, bound=bound, chunks=6, client=dask_client) == local.factor(n, bound=bound)


@pytest.mark.parametrize(("n", "from_", "bound"), [
    (104729 * 1200007**2 * 1999993 * MERSENNE_89, None, 2 * 10**6),  # factors in three chunks, one squared
    (104729 * 400009 * MERSENNE_61 * MERSENNE_89, None, 2 * 10**6),  # a composite cofactor
    (1000003**3 * 999983, None, 2 * 10**6),                           # a prime power; nothing is left
    (96 * 600851475143, 50, None),                                    # from > 2: 2 and 3 untried, 96 is left
    (3 * 101, 50, 200),                                               # from > 2: a factor above the square root
    (MERSENNE_61 * 1000003, None, None),                              # a prime cofactor below 2^64
])
def test_split_and_merged_answer_equals_the_unsplit_job(dask_client: Any, local: Client, n: int, from_: int | None,
                                                        bound: int | None) -> None:
    job = pkdask.submit(n, from_=from_, bound=bound, chunks=6, client=dask_client)
    expected = local.factor(n, from_=from_, bound=bound, mode="trial" if from_ is None and bound is None else None)
    assert job.result(GUARD) == expected
    chunks = job.chunks
    assert len(chunks) == 6 and chunks[0]["from"] == (from_ or 2)
    assert all(a["bound"] + 1 == b["from"] for a, b in zip(chunks, chunks[1:]))  # the bridge's pieces tile it


def test_long_pieces_merge_in_runs_within_the_message_limit(local: Client, executable: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Pieces too long for one request are merged in runs of adjacent pieces first; the answer is the same."""
    n = 104729 * 400009 * 1200007**2 * MERSENNE_89
    plan = local.request("checkpoint/split", {"candidate": str(n), "bound": "2000000", "pieces": 7})
    finals = [local._submit({"checkpoint": piece["checkpoint"], "finalCheckpoint": True}).result()["checkpoint"]
              for piece in plan["pieces"]]
    monkeypatch.setattr(pkdask, "_MERGE_BYTES", 2 * len(finals[0]) + 1)  # two pieces a request
    monkeypatch.setattr(pkdask, "_bridge", None)  # this process's own bridge, closed below
    try:
        assert pkdask._merge_pieces(finals, executable, []) == local.factor(n, bound=2 * 10**6)
    finally:
        bridge = pkdask._bridge
        if bridge is not None:
            bridge.close()


def test_a_document_of_an_earlier_version_resumes(dask_client: Any, local: Client) -> None:
    """Done chunks there kept only their factors: they run again, from new pieces of their ranges."""
    n = 104729 * 1200007 * MERSENNE_89
    document = json.dumps({"format": pkdask.CHECKPOINT_FORMAT, "version": 1, "kind": "factor", "candidate": str(n),
                           "from": "2", "bound": "2000000", "chunks": [
                               {"from": "2", "bound": "1000000", "state": "done",
                                "factors": [{"prime": "104729", "exponent": 1}]},
                               {"from": "1000001", "bound": "2000000", "state": "stopped", "checkpoint": None}]})
    job = pkdask.resume(document, client=dask_client)
    assert isinstance(job, pkdask.DistributedJob)
    assert job.result(GUARD) == local.factor(n, bound=2 * 10**6)
    assert [(c["from"], c["bound"]) for c in job.chunks] == [(2, 1000000), (1000001, 2000000)]


def test_factor_with_an_effort_limit_gives_the_parts_left(dask_client: Any, local: Client) -> None:
    n = 6415960117443171388947750943700426140790669549014874900828615524789118288355107  # two 40-digit primes
    fractions: list[float] = []
    result = pkdask.factor(n, ecm_digits=1, client=dask_client, on_progress=fractions.append)
    assert result["mode"] == "complete" and result["complete"] is False
    assert [part["value"] for part in result["parts"]] == [n] and result["cofactor"] == n
    assert fractions == [1.0]
    with pytest.raises(ValueError, match="effort limits"):
        pkdask.factor(n, bound=1000, ecm_digits=1, client=dask_client)
    assert pkdask.factor(600851475143, mode="trial", client=dask_client) == local.factor(600851475143, mode="trial")


def test_early_stop_cancels_the_remaining_chunks(dask_client: Any, local: Client) -> None:
    n = 2**3 * 3**2 * 5 * 7 * 11 * 13 * MERSENNE_61  # the first chunk finds everything (M61 by BPSW, < 2^64)
    job = pkdask.submit(n, chunks=40, client=dask_client)
    assert job.result(GUARD) == local.factor(n, mode="trial")
    chunks = job.chunks
    assert chunks[0]["state"] == "done"
    # A chunk here takes about 0.1 s: how many others end before the stop reaches the workers depends on the
    # machine's load (three busy loops beside it let ten of 40 run to their end). What holds: the result does not
    # wait for the rest, and none is left running or pending.
    assert all(chunk["state"] in ("done", "cancelled") for chunk in chunks)
    assert any(chunk["state"] == "cancelled" for chunk in chunks)
    assert job.progress() == 1.0


def test_map_candidates_keeps_the_order(dask_client: Any, local: Client) -> None:
    numbers = range(2, 1500)
    expected = [local.submit(n, kind="isPrime").result() for n in numbers]
    assert list(pkdask.map_candidates(numbers, client=dask_client, block_size=100)) == expected
    expected_factors = [local.factor(n * 1000003) for n in range(2, 200)]
    got = pkdask.map_candidates((n * 1000003 for n in range(2, 200)), kind="factor", client=dask_client,
                                block_size=32)
    assert list(got) == expected_factors


def test_map_candidates_reads_lazily(dask_client: Any) -> None:
    pulled = 0

    def endless() -> Iterator[int]:
        nonlocal pulled
        for n in itertools.count(2):
            pulled += 1
            yield n

    results = pkdask.map_candidates(endless(), client=dask_client, block_size=10, blocks_in_flight=3)
    first = list(itertools.islice(results, 25))
    results.close()  # cancels the blocks still in flight
    assert [r["candidate"] for r in first] == list(range(2, 27))
    assert [r["isPrime"] for r in first[:6]] == [True, True, False, True, False, True]
    assert pulled <= 25 + 3 * 10 + 10  # at most the blocks in flight were read ahead


def _early_checkpoint(chunks: list[dict[str, Any]]) -> bool:
    """A chunk has published a checkpoint and has most of its range still to do."""
    return any(chunk["checkpointed"] and chunk["progress"] < 0.5 for chunk in chunks)


def _running_again(kept: list[bool], runs_before: list[int]) -> Callable[[list[dict[str, Any]]], bool]:
    """Every chunk has run again; one that had a checkpoint (kept) started from it. A chunk paused before it
    published a checkpoint (on a busy machine, one may not have started at all) starts over."""
    assert any(kept), "no chunk had a checkpoint when paused"

    def check(chunks: list[dict[str, Any]]) -> bool:
        return all(len(chunk["runs"]) > before and (chunk["runs"][-1]["resumed"] or not had)
                   for chunk, had, before in zip(chunks, kept, runs_before))

    return check


def test_pause_gives_a_checkpoint_that_resumes_elsewhere(dask_client: Any) -> None:
    job = pkdask.submit(ENDLESS, bound=ENDLESS_BOUND, chunks=2, client=dask_client, checkpoint_interval=0.1)
    try:
        assert job.wait_for(_early_checkpoint, GUARD)
        document = job.pause(GUARD)
    finally:
        assert job.cancel()  # the paused job is dropped; the document alone goes on
    parsed = json.loads(document)
    assert parsed["format"] == pkdask.CHECKPOINT_FORMAT and int(parsed["candidate"]) == ENDLESS
    assert [(int(c["from"]), int(c["bound"])) for c in parsed["chunks"]] == [(c["from"], c["bound"])
                                                                             for c in job.chunks]
    stopped = [c for c in parsed["chunks"] if c["state"] == "stopped"]
    assert len(stopped) == 2 and any(c["checkpoint"] for c in stopped)
    resumed = pkdask.resume(document, client=dask_client)
    try:
        kept = [bool(c["checkpoint"]) for c in parsed["chunks"]]
        assert resumed.wait_for(_running_again(kept, [0] * len(kept)), GUARD)
        assert not resumed.done()
    finally:
        assert resumed.cancel()


def test_pause_and_resume_the_same_job(dask_client: Any) -> None:
    job = pkdask.submit(ENDLESS, bound=ENDLESS_BOUND, chunks=2, client=dask_client, checkpoint_interval=0.1)
    try:
        assert job.wait_for(_early_checkpoint, GUARD)
        job.pause(GUARD)
        assert [chunk["state"] for chunk in job.chunks] == ["paused", "paused"]
        kept = [bool(chunk["checkpointed"]) for chunk in job.chunks]
        runs_before = [len(chunk["runs"]) for chunk in job.chunks]
        job.resume()
        assert job.wait_for(_running_again(kept, runs_before), GUARD)
        assert all(chunk["state"] == "pending" for chunk in job.chunks)  # running again
    finally:
        assert job.cancel()
    with pytest.raises(CancelledError):
        job.result(GUARD)


def test_progress_increases_to_one(dask_client: Any, local: Client) -> None:
    fractions: list[float] = []
    n = MERSENNE_89 * 1000003
    result = pkdask.factor(n, bound=2**32, chunks=4, client=dask_client, on_progress=fractions.append)
    assert result == local.factor(n, bound=2**32)
    assert len(fractions) >= 2 and fractions == sorted(fractions) and fractions[-1] == 1.0
    assert all(0 < f <= 1 for f in fractions)


def test_a_killed_worker_loses_only_the_work_since_its_checkpoint(executable: str) -> None:
    cluster, client = start_cluster(executable)
    try:
        pids: dict[str, int] = client.run(os.getpid)
        job = pkdask.submit(ENDLESS, bound=ENDLESS_BOUND, chunks=2, client=client, checkpoint_interval=0.2)
        try:
            assert job.wait_for(lambda chunks: _early_checkpoint([c for c in chunks if c["runs"]]), GUARD)
            victim = next(c for c in job.chunks if c["checkpointed"] and c["progress"] < 0.5 and c["runs"])
            worker = victim["runs"][-1]["worker"]
            assert pids[worker] == victim["runs"][-1]["pid"]
            os.kill(pids[worker], signal.SIGKILL)

            def restarted(chunks: list[dict[str, Any]]) -> bool:
                """The victim runs again in another process, from the checkpoint the killed run published."""
                runs = chunks[victim["index"]]["runs"]
                return len(runs) >= 2 and runs[-1]["resumed"] and runs[-1]["pid"] != pids[worker]

            assert job.wait_for(restarted, 2 * GUARD)
            assert not job.done()
        finally:
            assert job.cancel()
    finally:
        client.close()
        cluster.close()
