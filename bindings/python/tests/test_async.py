"""The asyncio client against the real executable."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Coroutine
from typing import Any

import pytest

from primekit import AsyncClient, BridgeClosedError, InvalidParamsError, PrimeKitError

from conftest import GUARD, PAUSABLE_MS, RSA_100, SLOW_PRIME, SLOW_RESULT, assert_unsplit_rsa_100


def run(coroutine: Coroutine[Any, Any, None]) -> None:
    asyncio.run(asyncio.wait_for(coroutine, GUARD))


def test_known_answers(executable: str) -> None:
    async def main() -> None:
        async with AsyncClient(executable) as client:
            assert await client.is_prime(6801534321) is False
            assert await client.is_prime(1000003) is True
            result = await client.factor(600851475143)
            assert [f["prime"] for f in result["factors"]] == [71, 839, 1471, 6857]
            jobs = await asyncio.gather(*(client.submit(n, kind="isPrime") for n in range(2, 500)))
            results = await asyncio.gather(*jobs)
            assert [r["candidate"] for r in results if r["isPrime"]] == [
                n for n in range(2, 500) if all(n % d for d in range(2, n))]
            assert await client.request("ping") == {}
    run(main())


def test_progress_ends_with_the_job(executable: str) -> None:
    async def main() -> None:
        async with AsyncClient(executable) as client:
            await client.suspend()
            # 300 ms of running time in slices of 10 ms: progress reports come whatever the machine's speed.
            job = await client.submit(RSA_100, time_limit_ms=300, progress_interval_ms=10)
            assert job.state == "queued"
            await client.resume()
            seqs = [report["seq"] async for report in job.progress()]
            assert job.done()
            assert_unsplit_rsa_100(await job)
            assert seqs and seqs == sorted(set(seqs))
    run(main())


def test_cancelling_the_awaiting_task_cancels_the_job(executable: str) -> None:
    async def main() -> None:
        async with AsyncClient(executable) as client:
            await client.suspend()  # the job cannot end on its own meanwhile
            job = await client.submit(SLOW_PRIME, mode="trial")
            waiter = asyncio.ensure_future(job)
            await asyncio.sleep(0)  # one turn of the loop: the task starts awaiting the job (not a timed wait)
            waiter.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiter
            status = await client.request("job/status", {"jobId": job.job_id})
            assert status["state"] == "cancelled"
            with pytest.raises(asyncio.CancelledError):
                await job
            assert job.cancelled() and job.checkpoint is not None
    run(main())


def test_pause_midway_cancel_resume_from(executable: str) -> None:
    async def main() -> None:
        async with AsyncClient(executable) as client, AsyncClient(executable) as other:
            # A complete job that ends only by its time limit: it is still running when the pause lands.
            job = await client.submit(RSA_100, time_limit_ms=PAUSABLE_MS, progress_interval_ms=10)
            async for report in job.progress():
                if report["tested"] > 0:
                    break
            checkpoint = await job.pause()
            assert job.state == "paused"
            assert await job.cancel() is True
            with pytest.raises(asyncio.CancelledError):
                await job
            resumed = await other.resume_from(checkpoint)
            assert_unsplit_rsa_100(await resumed)
            done = await client.submit(15)
            await done
            assert await done.cancel() is False
    run(main())


def test_depends_on(executable: str) -> None:
    async def main() -> None:
        async with AsyncClient(executable) as client:
            await client.suspend()
            first = await client.submit(SLOW_PRIME, mode="trial")
            second = await client.submit(91, depends_on=[first])
            assert second.state == "pending"
            await client.resume()
            assert (await second)["factors"] == [{"prime": 7, "exponent": 1, "certainty": "proven"},
                                                 {"prime": 13, "exponent": 1, "certainty": "proven"}]
            assert first.done() and await first == SLOW_RESULT
    run(main())


def test_errors(executable: str) -> None:
    async def main() -> None:
        async with AsyncClient(executable) as client:
            with pytest.raises(ValueError, match="negative numbers are not accepted") as caught:
                await client.submit(-15)
            assert isinstance(caught.value, InvalidParamsError)
            with pytest.raises(PrimeKitError) as other:
                await client.request("job/cancel", {"jobId": "j42"})
            assert other.value.code == 1001
    run(main())


def test_events(executable: str) -> None:
    async def main() -> None:
        async with AsyncClient(executable) as client:
            events = await client.events(["lifecycle"])
            await client.suspend()
            first = await anext(events)
            assert first["stream"] == "lifecycle" and first["event"]["event"] == "suspended"
            await client.resume()
            assert (await anext(events))["event"]["event"] == "resumed"
    run(main())


def test_killed_bridge_fails_pending_jobs(executable: str) -> None:
    async def main() -> None:
        async with AsyncClient(executable) as client:
            await client.suspend()
            job = await client.submit(SLOW_PRIME, mode="trial")
            os.kill(client.pid, signal.SIGSTOP)
            unanswered = asyncio.ensure_future(client.submit(91))
            await asyncio.sleep(0)  # one turn of the loop: the submission is sent (not a timed wait)
            os.kill(client.pid, signal.SIGKILL)
            with pytest.raises(BridgeClosedError, match="exited unexpectedly"):
                await job
            with pytest.raises(BridgeClosedError, match="exited unexpectedly"):
                await unanswered
            with pytest.raises(BridgeClosedError):
                await client.request("ping")
    run(main())


def test_close_stops_jobs(executable: str) -> None:
    async def main() -> None:
        client = await AsyncClient(executable).start()
        await client.suspend()
        job = await client.submit(SLOW_PRIME, mode="trial")
        stopped = await client.aclose()
        assert [entry["jobId"] for entry in stopped] == [job.job_id]
        with pytest.raises(BridgeClosedError):
            await job
        assert job.checkpoint == stopped[0]["checkpoint"]
    run(main())
