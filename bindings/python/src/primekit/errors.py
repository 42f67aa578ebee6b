"""The exceptions the binding raises."""

from __future__ import annotations

from typing import Any


class PrimeKitError(Exception):
    """An error answer from the bridge: ``code`` is the JSON-RPC error code, ``data`` its ``data`` member (or None).

    Codes: -32700 parse error, -32600 invalid request, -32601 unknown method, -32602 invalid params, -32603 internal
    error, -32000 busy, -32001 message too large, -32002 shutting down, 1001 job not found, 1002 job not in a state
    that allows this, 1003 invalid checkpoint, 1004 candidate too large.
    """

    code: int | None
    data: Any

    def __init__(self, message: str, code: int | None = None, data: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.data = data

    @staticmethod
    def from_error(error: dict[str, Any]) -> PrimeKitError:
        """The exception for a JSON-RPC error object: :class:`InvalidParamsError` (also a ``ValueError``) for
        -32602 and 1004, :class:`PrimeKitError` otherwise."""
        code = error.get("code")
        message = str(error.get("message", "unknown error"))
        data = error.get("data")
        if code in (-32602, 1004):
            return InvalidParamsError(message, code, data)
        return PrimeKitError(message, code if isinstance(code, int) else None, data)


class InvalidParamsError(PrimeKitError, ValueError):
    """The bridge refused a value (-32602 invalid params, 1004 candidate too large): an invalid candidate, bound,
    priority and the like. ``data`` usually holds ``{field, reason, got}``."""


class BridgeClosedError(PrimeKitError):
    """The bridge is gone: the client was closed, or the ``primekit serve`` process exited or was killed.
    ``code`` is None; ``data`` holds the process's exit status (``returncode``) when it is known, and
    ``checkpoint`` when the job was stopped at one by ``close()``."""


class ExecutableNotFoundError(FileNotFoundError):
    """No ``primekit`` executable was found (see :func:`primekit.find_executable` for the lookup order)."""
