"""``primekit.track``: a progress bar for a job (needs the ``progress`` extra, tqdm)."""

from __future__ import annotations

from typing import Any, TypeVar

from .client import Job

R = TypeVar("R")


def track(job: Job[R], *, desc: str | None = None, **tqdm_options: Any) -> R:
    """Shows a tqdm progress bar (0-100 %) while ``job`` runs and returns its result (or raises its error).

    ``tqdm_options`` go to ``tqdm.tqdm`` (e.g. ``file=``, ``leave=``). Needs tqdm: ``pip install
    'primekit[progress]'``.
    """
    try:
        from tqdm import tqdm
    except ImportError as error:
        raise ImportError("primekit.track needs tqdm; install the extra: pip install 'primekit[progress]'") from error
    options: dict[str, Any] = {"total": 100.0, "unit": "%", "bar_format": "{l_bar}{bar}| {n:.1f}/{total:.0f}% "
                               "[{elapsed}<{remaining}]"}
    options.update(tqdm_options)
    with tqdm(desc=desc if desc is not None else f"job {job.job_id}", **options) as bar:
        for report in job.progress():
            bar.update(report["progress"] - bar.n)
        if not job.cancelled() and job.exception() is None:
            bar.update(100.0 - bar.n)
    return job.result()
