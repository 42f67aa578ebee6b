"""Finding the ``primekit`` executable."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from .errors import ExecutableNotFoundError


def _source_tree_build() -> Path | None:
    """``<repo>/.build/release/primekit`` when this package runs from the PrimeKit source tree
    (``<repo>/bindings/python/src/primekit/``)."""
    here = Path(__file__).resolve()
    if len(here.parents) < 5:
        return None
    repo = here.parents[4]
    if not (repo / "Package.swift").is_file():
        return None
    return repo / ".build" / "release" / "primekit"


def _bundled() -> Path:
    """``primekit/_bin/primekit``: the executable a wheel built from the source tree ships (see setup.py)."""
    return Path(__file__).resolve().parent / "_bin" / "primekit"


def _runnable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find_executable(executable: str | os.PathLike[str] | None = None) -> str:
    """The path of the ``primekit`` executable to run.

    Looked up in this order: the ``executable`` argument, the ``PRIMEKIT_BIN`` environment variable, the executable
    installed with this package (``primekit/_bin/primekit``, built into the wheel), ``primekit`` on ``PATH``, then
    the project's own release build when this package runs from the source tree (``<repo>/.build/release/primekit``).

    Raises:
        ExecutableNotFoundError: nothing was found, or an explicitly named file does not exist.
    """
    for origin, value in (("executable=", executable), ("PRIMEKIT_BIN", os.environ.get("PRIMEKIT_BIN") or None)):
        if value is None:
            continue
        path = os.fspath(value)
        found = shutil.which(path) if os.sep not in path else path
        if found is None or not os.path.isfile(found) or not os.access(found, os.X_OK):
            raise ExecutableNotFoundError(f"{origin} names {path!r}, which is not an executable file")
        return found
    bundled = _bundled()
    if _runnable(bundled):
        return str(bundled)
    on_path = shutil.which("primekit")
    if on_path is not None:
        return on_path
    build = _source_tree_build()
    if build is not None and _runnable(build):
        return str(build)
    ways = ["pass Client(executable=...)", "set PRIMEKIT_BIN to its path", "put primekit on PATH",
            "install the package from a wheel built in the source tree (`pip install ./bindings/python` ships it)"]
    if build is not None:
        ways.append(f"build it in the source tree with `swift build -c release` (that makes {build})")
    raise ExecutableNotFoundError(f"cannot find the primekit executable: {', '.join(ways[:-1])}, or {ways[-1]}")
