"""The executable lookup order: executable=, PRIMEKIT_BIN, the installed one, PATH, the source tree's build."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from primekit import ExecutableNotFoundError, _locate, find_executable

from conftest import REPO


def fake(directory: Path, name: str = "primekit") -> str:
    path = directory / name
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return str(path)


def test_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "arg").mkdir()
    (tmp_path / "env").mkdir()
    (tmp_path / "path").mkdir()
    (tmp_path / "package" / "_bin").mkdir(parents=True)
    argument, variable, on_path = fake(tmp_path / "arg"), fake(tmp_path / "env"), fake(tmp_path / "path")
    bundled = tmp_path / "package" / "_bin" / "primekit"
    monkeypatch.setattr(_locate, "_bundled", lambda: bundled)
    monkeypatch.setenv("PATH", str(tmp_path / "path"))
    monkeypatch.setenv("PRIMEKIT_BIN", variable)
    fake(bundled.parent)
    assert find_executable(argument) == argument
    assert find_executable() == variable
    monkeypatch.delenv("PRIMEKIT_BIN")
    assert find_executable() == str(bundled)  # the installed executable comes before PATH
    bundled.chmod(0o644)  # not executable: skipped
    assert find_executable() == on_path
    bundled.unlink()
    assert find_executable() == on_path
    monkeypatch.setenv("PATH", str(tmp_path))
    build = tmp_path / "repo" / ".build" / "release" / "primekit"
    monkeypatch.setattr(_locate, "_source_tree_build", lambda: build)
    with pytest.raises(ExecutableNotFoundError) as caught:
        find_executable()
    message = str(caught.value)
    assert "PRIMEKIT_BIN" in message and "PATH" in message and "swift build -c release" in message
    build.parent.mkdir(parents=True)
    built = fake(build.parent)
    assert find_executable() == built


def test_source_tree_build_is_found_from_the_package() -> None:
    assert _locate._source_tree_build() == REPO / ".build" / "release" / "primekit"
    assert _locate._bundled().parent.parent == Path(_locate.__file__).resolve().parent


def test_a_named_file_must_exist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ExecutableNotFoundError, match="executable="):
        find_executable(tmp_path / "missing")
    monkeypatch.setenv("PRIMEKIT_BIN", str(tmp_path / "missing"))
    with pytest.raises(ExecutableNotFoundError, match="PRIMEKIT_BIN"):
        find_executable()
    assert not os.path.exists(tmp_path / "missing")
