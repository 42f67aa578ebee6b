"""PrimeKit for Python: a client for ``primekit serve`` (JSON-RPC 2.0 over a pipe).

>>> with Client() as client:
...     client.factor(600851475143)["factors"][-1]["prime"]
6857
"""

from ._locate import find_executable
from .client import Client, EventStream, Job, __version__
from .errors import BridgeClosedError, ExecutableNotFoundError, InvalidParamsError, PrimeKitError
from .progress import track
from .range import RangeIterator, RangeJobCancelledError
from .types import (Certainty, CompositePart, EcmPosition, EcmShare, EngineEvent, FactorResult, JobResult, Mode,
                    PrimalityResult, PrimeFactor, Priority, Progress, RangeBlock, RangeSummary, Stage, State, StoppedJob)
from .aio import AsyncClient, AsyncJob, AsyncEventStream

__all__ = [
    "AsyncClient", "AsyncEventStream", "AsyncJob", "BridgeClosedError", "Certainty", "Client", "CompositePart",
    "EcmPosition", "EcmShare", "EngineEvent", "EventStream", "ExecutableNotFoundError", "FactorResult",
    "InvalidParamsError", "Job", "JobResult", "Mode", "PrimalityResult", "PrimeFactor", "PrimeKitError", "Priority",
    "Progress", "RangeBlock", "RangeIterator", "RangeJobCancelledError", "RangeSummary", "Stage", "State", "StoppedJob",
    "__version__", "find_executable", "track",
]
