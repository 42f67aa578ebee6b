"""primekit.dask complete answers whose ECM curves run as shares on a LocalCluster of two worker processes: the
answer equals the local client's, a share that finds a factor stops the other, and a job paused while its shares
run resumes from the combined document in a new cluster to the same answer."""

from __future__ import annotations

import json
from typing import Any

import pytest

from primekit import Client

try:
    import distributed
except ImportError:
    pytest.skip("primekit.dask needs Dask distributed (pip install 'primekit[dask]')", allow_module_level=True)

import primekit.dask as pkdask

from conftest import GUARD
from dask_support import dask_client, local, start_cluster  # noqa: F401 (fixtures)

# 61 digits with a 16-digit factor: ECM finds it in well under a second.
N16 = 3136829524542719 * 955812480096314879617956987616869321439743449
# 60 digits with a 20- and a 21-digit factor: ECM finds them in a second or a few.
N20 = 19885278224986867877 * 6754074122841601108787036974910545971743
N21 = 192925393275891119567 * 181893375405980552852944293490503935891
# 60 digits with a 22-digit factor that the ECM pass usually misses (the quadratic sieve then splits it): its
# shares run for seconds, far longer than a pause takes to land.
N22 = 1561233319067789651671 * 47615123736804472220734702580405164619
# One core per worker's bridge: each runs its share alone.
SERVE_ARGS = ["--workers", "1"]


def _share_rounds(job: pkdask.CompleteJob) -> list[dict[str, Any]]:
    return [entry for entry in job.rounds if entry["kind"] == "shares"]


def _check_round(entry: dict[str, Any]) -> None:
    """Two shares, on the two worker processes, each found, stopped or over. A share beside the one that found a
    factor may still end "over": both run the same curves side by side, so when the factor comes from the last
    curves, the other's may end before the stop reaches it (more often on a busy machine)."""
    shares = entry["shares"]
    assert [share["index"] for share in shares] == [0, 1]
    assert len({share["pid"] for share in shares if share["started"]}) == sum(share["started"] for share in shares)
    assert {share["state"] for share in shares} <= {"found", "interrupted", "over"}


def test_shares_give_the_local_answer(dask_client: Any, local: Client) -> None:
    job = pkdask.submit_complete(N16, client=dask_client, serve_args=SERVE_ARGS)
    assert job.result(GUARD) == local.factor(N16)
    rounds = _share_rounds(job)
    assert rounds, "the ECM curves did not run as shares"
    for entry in rounds:
        _check_round(entry)
    # factor() takes the same path for a number this big.
    assert pkdask.factor(N16, client=dask_client, serve_args=SERVE_ARGS) == local.factor(N16)


def test_a_share_that_finds_a_factor_stops_the_other(dask_client: Any, local: Client) -> None:
    rounds: list[dict[str, Any]] = []
    for n in (N16, N20, N21):
        job = pkdask.submit_complete(n, client=dask_client, serve_args=SERVE_ARGS)
        assert job.result(GUARD) == local.factor(n)
        rounds += _share_rounds(job)
    for entry in rounds:
        _check_round(entry)
    # A share that found a factor stopped the other while it still had curves to run. N16's factor comes within
    # its first curves, long before the other share's end; the others' may come at the end of a level, where the
    # other share can be over first.
    assert any({share["state"] for share in entry["shares"]} == {"found", "interrupted"} for entry in rounds)


def test_pause_while_shares_run_resumes_in_a_new_cluster(executable: str, dask_client: Any, local: Client) -> None:
    job = pkdask.submit_complete(N22, client=dask_client, serve_args=SERVE_ARGS)
    try:
        # The first round of shares has started (its entry is there, its outcomes not yet).
        assert job.wait_for(lambda rounds: any(r["kind"] == "shares" for r in rounds), GUARD)
        document = job.pause(GUARD)
        assert not job.done()
    finally:
        assert job.cancel()
    parsed = json.loads(document)
    assert (parsed["format"], parsed["version"], parsed["kind"]) == (pkdask.CHECKPOINT_FORMAT, 2, "complete")
    assert int(parsed["candidate"]) == N22 and parsed["checkpoint"].startswith("primekit-job-checkpoint ")
    # Paused while its shares ran: they were stopped, and the document holds them merged into one job checkpoint.
    assert [share["state"] for share in _share_rounds(job)[-1]["shares"]] == ["interrupted", "interrupted"]

    cluster, other = start_cluster(executable)
    try:
        resumed = pkdask.resume(document, client=other, serve_args=SERVE_ARGS)
        assert isinstance(resumed, pkdask.CompleteJob)
        assert resumed.result(GUARD) == local.factor(N22)
        # It went on with shares at once: its first task cut the checkpoint, which stood in ECM.
        assert (resumed.rounds[0]["kind"], resumed.rounds[0]["state"]) == ("phase", "shares")
        for entry in _share_rounds(resumed):
            _check_round(entry)
    finally:
        other.close()
        cluster.close()
