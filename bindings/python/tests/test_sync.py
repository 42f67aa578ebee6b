"""The blocking client against the real executable."""

from __future__ import annotations

import concurrent.futures
import gc
import io
import os
import signal
import subprocess
import sys
import threading
from typing import Any

import pytest

import primekit
from primekit import BridgeClosedError, Client, InvalidParamsError, PrimeKitError
from primekit._numbers import to_decimal, to_int

from conftest import GUARD, PAUSABLE_MS, RSA_100, SLOW_PRIME, SLOW_RESULT, assert_unsplit_rsa_100


def oracle_factors(n: int) -> list[tuple[int, int]]:
    """Trial division, the slow obvious way."""
    factors: list[tuple[int, int]] = []
    d = 2
    while d * d <= n:
        exponent = 0
        while n % d == 0:
            n //= d
            exponent += 1
        if exponent:
            factors.append((d, exponent))
        d += 1
    if n > 1:
        factors.append((n, 1))
    return factors


def test_known_answers(client: Client) -> None:
    assert client.is_prime(6801534321) is False
    assert client.is_prime(1000003) is True
    euler = client.factor(600851475143)
    assert euler == {"candidate": 600851475143,
                     "factors": [{"prime": p, "exponent": 1, "certainty": "proven"} for p in (71, 839, 1471, 6857)],
                     "cofactor": 1, "cofactorStatus": "one", "complete": True, "isPrime": False,
                     "certainty": "proven", "mode": "complete", "parts": []}
    fermat = client.factor(2**64 + 1)
    assert [(f["prime"], f["exponent"]) for f in fermat["factors"]] == [(274177, 1), (67280421310721, 1)]
    assert fermat["complete"] is True
    divisors = client.submit(6801534321, kind="isPrime").result()
    assert divisors["factors"] == [1, 3, 41, 123, 55297027, 165891081, 2267178107, 6801534321]
    assert divisors["certainty"] == "proven"


# 2^128 + 1 = 59649589127497217 · 5704689200685129054721; a product of two 40-digit primes (79 digits).
F7 = 2**128 + 1
SEMIPRIME_79 = 6415960117443171388947750943700426140790669549014874900828615524789118288355107


def test_complete_answers_by_default(client: Client) -> None:
    assert client.server_info["protocolMinor"] == 4
    assert client.factor(F7) == {
        "candidate": F7, "factors": [{"prime": 59649589127497217, "exponent": 1, "certainty": "proven"},
                                     {"prime": 5704689200685129054721, "exponent": 1, "certainty": "probable"}],
        "cofactor": 1, "cofactorStatus": "one", "complete": True, "isPrime": False, "certainty": "probable",
        "mode": "complete", "parts": []}
    bounded = client.factor(F7, bound=1000)
    assert (bounded["mode"], bounded["cofactor"], bounded["cofactorStatus"]) == ("trial", F7, "composite")
    trial = client.factor(600851475143, mode="trial")
    assert trial["mode"] == "trial" and [f["prime"] for f in trial["factors"]] == [71, 839, 1471, 6857]


def test_an_effort_limit_gives_the_parts_left(client: Client) -> None:
    result = client.factor(SEMIPRIME_79, ecm_digits=1, work_limit=2**64 - 1)
    assert (result["mode"], result["complete"], result["factors"]) == ("complete", False, [])
    assert result["cofactor"] == SEMIPRIME_79
    [part] = result["parts"]
    assert (part["value"], part["exponent"], part["method"], part["ecmDigits"]) == (SEMIPRIME_79, 1, "ecm", 15)
    assert part["curves"] > 0 and part["b1"] > 0 and part["b2"] >= part["b1"]
    assert all(isinstance(part[key], int) for key in ("trialFrom", "trialBound", "work", "b1", "b2"))


def test_progress_says_the_stage(client: Client) -> None:
    p, q = 8651054483542753, 9537513983584714622399864022142622086501  # a 16-digit factor: found by ECM
    job = client.submit(p * q, progress_interval_ms=1)
    reports = list(job.progress(timeout=GUARD))
    assert [f["prime"] for f in job.result(timeout=GUARD)["factors"]] == [p, q]
    assert "ecm" in {report["stage"] for report in reports}, reports[-3:]
    assert all(0 <= report["stageFraction"] <= 1 and report["partsLeft"] >= 0 for report in reports)


def test_bad_effort_options_are_refused_and_submit_nothing(client: Client) -> None:
    before = len(client.request("job/list")["jobs"])
    cases: list[tuple[dict[str, Any], str]] = [
        ({"ecm_digits": 0}, "ecmDigits"), ({"ecm_digits": 71}, "ecmDigits"), ({"work_limit": 0}, "workLimit"),
        ({"time_limit_ms": 0}, "timeLimitMs"), ({"mode": "fast"}, "mode"), ({"mode": "complete", "bound": 10}, "mode"),
        ({"mode": "trial", "time_limit_ms": 100}, "timeLimitMs")]
    for options, field in cases:
        with pytest.raises(InvalidParamsError) as caught:
            client.factor(1001, **options)
        assert caught.value.code == -32602 and caught.value.data["field"] == field, options
    assert len(client.request("job/list")["jobs"]) == before


def test_against_brute_force(client: Client) -> None:
    numbers = range(2, 1500)
    factor_jobs = [client.submit(n) for n in numbers]
    prime_jobs = [client.submit(n, kind="isPrime") for n in numbers]
    for n, factor_job, prime_job in zip(numbers, factor_jobs, prime_jobs):
        expected = oracle_factors(n)
        factored = factor_job.result(timeout=GUARD)
        assert [(f["prime"], f["exponent"]) for f in factored["factors"]] == expected, n
        assert factored["cofactor"] == 1 and factored["complete"] is True
        primality = prime_job.result(timeout=GUARD)
        is_prime = expected == [(n, 1)]
        assert primality["isPrime"] is is_prime, n
        assert primality["factors"] == ([] if is_prime else [d for d in range(1, n + 1) if n % d == 0]), n


def test_sixty_digit_product(client: Client) -> None:
    mersenne = 2**127 - 1  # a 39-digit prime
    small = [1000003, 1000033, 1000037]
    n = small[0] * small[1] * small[2] * mersenne
    assert len(str(n)) == 57 + 3 or len(str(n)) >= 57
    result = client.factor(n, bound=2_000_000)
    assert result["candidate"] == n
    assert [f["prime"] for f in result["factors"]] == small
    assert result["cofactor"] == mersenne
    assert result["cofactorStatus"] == "probable-prime"
    assert result["complete"] is True and result["isPrime"] is False


def test_numbers_beyond_the_conversion_limit(client: Client) -> None:
    """5,000 digits: more than Python converts to or from str by default (4,300)."""
    n = 10**5000
    result = client.factor(n, bound=10)
    assert result["candidate"] == n
    assert [(f["prime"], f["exponent"]) for f in result["factors"]] == [(2, 5000), (5, 5000)]
    assert result["cofactor"] == 1


def test_decimal_conversion_both_ways() -> None:
    limit = sys.get_int_max_str_digits()
    samples = [0, 7, 10**4299, 10**4300 - 1, 3**20000, 2**30000 + 12345, 10**9000 + 1]
    sys.set_int_max_str_digits(0)
    try:
        expected = [str(n) for n in samples]
    finally:
        sys.set_int_max_str_digits(limit)
    assert [to_decimal(n) for n in samples] == expected
    assert [to_int(text) for text in expected] == samples


def test_progress_ends_with_the_job(client: Client) -> None:
    client.suspend()
    # 300 ms of running time in slices of 10 ms: progress reports come whatever the machine's speed.
    job = client.submit(RSA_100, time_limit_ms=300, progress_interval_ms=10)
    assert job.job_id.startswith("j") and job.state == "queued"
    client.resume()
    reports = list(job.progress(timeout=GUARD))
    assert job.done()
    assert_unsplit_rsa_100(job.result())
    assert reports, "no progress report from a job of 300 ms with a 10 ms interval"
    seqs = [report["seq"] for report in reports]
    assert seqs == sorted(set(seqs))
    assert all(report["jobId"] == job.job_id for report in reports)
    assert all(0 <= report["progress"] <= 100 and isinstance(report["tested"], int) for report in reports)


def test_pause_midway_then_resume_from_in_another_client(client: Client, executable: str) -> None:
    # A complete job that ends only by its time limit: it is still running when the pause lands.
    job = client.submit(RSA_100, time_limit_ms=PAUSABLE_MS, progress_interval_ms=10)
    for report in job.progress(timeout=GUARD):
        if report["progress"] > 0:
            break  # past trial division, into ECM
    checkpoint = job.pause()
    assert job.state == "paused" and job.checkpoint == checkpoint
    status = client.request("job/status", {"jobId": job.job_id})
    assert status["state"] == "paused" and 0 < float(status["progress"]) < 100
    # The checkpoint keeps the time limit and the running time so far: the job ends in another client too.
    with Client(executable) as other:
        resumed = other.resume_from(checkpoint)
        assert_unsplit_rsa_100(resumed.result(timeout=GUARD))
    assert job.cancel() is True


def test_pause_and_resume_in_place(client: Client) -> None:
    client.suspend()  # the job stays queued: pausing it cannot race with its end
    job = client.submit(SLOW_PRIME, mode="trial")
    checkpoint = job.pause()
    assert job.state == "paused" and checkpoint.startswith("primekit-")
    client.resume()
    assert client.request("job/status", {"jobId": job.job_id})["state"] == "paused"
    job.resume()
    assert job.result(timeout=GUARD) == SLOW_RESULT


def test_cancel(client: Client) -> None:
    client.suspend()
    job = client.submit(SLOW_PRIME, mode="trial")
    assert job.cancel() is True
    assert job.cancelled()
    with pytest.raises(concurrent.futures.CancelledError):
        job.result(timeout=GUARD)
    assert job.checkpoint is not None
    assert client.request("job/status", {"jobId": job.job_id})["state"] == "cancelled"
    done, _ = concurrent.futures.wait([job], timeout=GUARD)
    assert done == {job}
    client.resume()
    finished = client.submit(15)
    finished.result(timeout=GUARD)
    assert finished.cancel() is False


def test_depends_on(client: Client) -> None:
    client.suspend()
    first = client.submit(SLOW_PRIME, mode="trial")
    second = client.submit(91, depends_on=[first])
    assert second.job_id and second.state == "pending"
    assert client.request("job/status", {"jobId": second.job_id})["dependsOn"] == [first.job_id]
    blocked = client.submit(SLOW_PRIME, mode="trial")
    waiting = client.submit(91, depends_on=[blocked.job_id])
    assert waiting.job_id and waiting.state == "pending"
    assert blocked.cancel()
    with pytest.raises(concurrent.futures.CancelledError):
        waiting.result(timeout=GUARD)
    assert not second.done()
    client.resume()
    assert second.result(timeout=GUARD)["factors"] == [{"prime": 7, "exponent": 1, "certainty": "proven"},
                                                       {"prime": 13, "exponent": 1, "certainty": "proven"}]
    assert first.done()  # the dependent cannot have run before its dependency succeeded


def test_invalid_candidates_raise_value_error(client: Client) -> None:
    for bad, reason in ((-15, "negative numbers are not accepted"), (1, "must be at least 2"),
                        (0, "must be at least 2")):
        with pytest.raises(ValueError, match=reason) as caught:
            client.is_prime(bad)
        assert isinstance(caught.value, InvalidParamsError)
        assert caught.value.code == -32602 and caught.value.data["field"] == "candidate"
    job = client.submit(-7)
    with pytest.raises(ValueError):
        job.job_id
    with pytest.raises(ValueError, match="bound"):
        client.factor(12, bound=-5)


def test_other_errors_are_primekit_errors(client: Client) -> None:
    with pytest.raises(PrimeKitError) as caught:
        client.request("job/status", {"jobId": "j99"})
    assert caught.value.code == 1001 and caught.value.data == {"jobId": "j99"}
    assert not isinstance(caught.value, ValueError)
    with pytest.raises(PrimeKitError) as caught:
        client.request("job/launch")
    assert caught.value.code == -32601
    with pytest.raises(PrimeKitError) as caught:
        client.resume_from("primekit-checkpoint 1\ngarbage\n").result(timeout=GUARD)
    assert caught.value.code == 1003
    done = client.submit(15)
    done.result(timeout=GUARD)
    with pytest.raises(PrimeKitError) as caught:
        done.pause()
    assert caught.value.code == 1002 and caught.value.data["state"] == "succeeded"


def test_request_and_events(client: Client) -> None:
    assert client.request("ping") == {}
    assert client.server_info["protocolVersion"] == 1
    events = client.events(["lifecycle"])
    client.suspend()
    first = events.get(timeout=GUARD)
    assert first["stream"] == "lifecycle" and first["event"]["event"] == "suspended"
    client.resume()
    assert events.get(timeout=GUARD)["event"]["event"] == "resumed"
    events.close()
    client.suspend()
    with pytest.raises(StopIteration):
        events.get(timeout=GUARD)


def test_killed_bridge_fails_pending_futures(client: Client) -> None:
    client.suspend()
    jobs = [client.submit(n) for n in (SLOW_PRIME, 15, 1000003)]
    assert all(job.job_id for job in jobs)
    os.kill(client.pid, signal.SIGSTOP)  # a stopped bridge answers nothing: the next submission stays unanswered
    jobs.append(client.submit(91))
    os.kill(client.pid, signal.SIGKILL)
    for job in jobs:
        with pytest.raises(BridgeClosedError, match="exited unexpectedly"):
            job.result(timeout=GUARD)
    with pytest.raises(BridgeClosedError):
        client.request("ping")


def test_close_stops_unfinished_jobs_at_a_checkpoint(executable: str) -> None:
    client = Client(executable)
    client.suspend()
    job = client.submit(SLOW_PRIME, mode="trial")
    assert job.job_id
    stopped = client.close()
    assert [entry["jobId"] for entry in stopped] == [job.job_id]
    with pytest.raises(BridgeClosedError):
        job.result(timeout=GUARD)
    assert job.checkpoint == stopped[0]["checkpoint"]
    assert client._connection.process.returncode == 0
    assert client.close() == []


def test_dropped_client_stops_its_bridge(executable: str) -> None:
    client = Client(executable)
    process = client._connection.process
    assert process.poll() is None
    del client
    gc.collect()
    try:
        process.wait(timeout=GUARD)
    except subprocess.TimeoutExpired:
        process.kill()
        pytest.fail("the bridge of a dropped client kept running")


def test_bridge_runs_in_its_own_session(client: Client) -> None:
    assert os.getsid(client.pid) == client.pid != os.getsid(0)


def test_twenty_thousand_requests_without_reading(client: Client) -> None:
    jobs: list[primekit.Job[primekit.PrimalityResult]] = []

    def submit_all() -> None:
        for n in range(2, 20_002):
            jobs.append(client.submit(n, kind="isPrime"))

    writer = threading.Thread(target=submit_all, daemon=True)
    writer.start()
    writer.join(timeout=GUARD)
    assert not writer.is_alive(), "submitting 20,000 jobs without reading blocked"
    done, not_done = concurrent.futures.wait(jobs, timeout=GUARD)
    assert not not_done
    primes = {n for n in range(2, 20_002) if oracle_factors(n) == [(n, 1)]}
    assert {job.result()["candidate"] for job in jobs if job.result()["isPrime"]} == primes


def test_track_shows_a_bar(client: Client) -> None:
    out = io.StringIO()
    result = primekit.track(client.submit(SLOW_PRIME, mode="trial", progress_interval_ms=10), file=out, mininterval=0)
    assert result == SLOW_RESULT
    assert "100.0/100%" in out.getvalue()


def test_track_without_tqdm(client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tqdm", None)
    job = client.submit(15)
    with pytest.raises(ImportError, match=r"primekit\[progress\]"):
        primekit.track(job)


def test_a_callback_cannot_wait(client: Client) -> None:
    seen: list[Any] = []
    client.suspend()
    job = client.submit(15)

    def callback(future: concurrent.futures.Future[Any]) -> None:
        try:
            client.request("ping")
        except RuntimeError as error:
            seen.append(error)

    job.add_done_callback(callback)  # the job cannot end before: the queue is suspended
    client.resume()
    job.result(timeout=GUARD)
    client.request("ping")  # the reader still serves
    assert len(seen) == 1 and "callback" in str(seen[0])
