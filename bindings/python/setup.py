"""Builds the package with the ``primekit`` executable inside it.

A wheel built from the PrimeKit source tree (``pip install ./bindings/python``, ``pip wheel``) runs
``swift build -c release --static-swift-stdlib --product primekit`` at the repository's root and ships the executable as
``primekit/_bin/primekit``, which ``Client()`` finds before ``PATH``. The wheel is then specific to the platform it
was built on (``py3-none-<platform>``). An editable install (``pip install -e``) builds nothing: it uses the source
tree's own ``.build/release/primekit``. ``PRIMEKIT_WHEEL_TOOL=0`` builds a pure-Python wheel without the executable.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def ships_tool() -> bool:
    return os.environ.get("PRIMEKIT_WHEEL_TOOL", "1") != "0"


def build_tool() -> Path:
    """Builds the release ``primekit`` at the repository's root; returns its path."""
    if not (REPO / "Package.swift").is_file():
        raise SystemExit(f"primekit: no PrimeKit source tree at {REPO} to build the executable from (build the "
                         "wheel from the repository's bindings/python, or set PRIMEKIT_WHEEL_TOOL=0 for a wheel "
                         "without it)")
    swift = shutil.which("swift")
    if swift is None:
        raise SystemExit("primekit: building the wheel needs the Swift toolchain (`swift` on PATH) to build the "
                         "primekit executable, or PRIMEKIT_WHEEL_TOOL=0 for a wheel without it")
    # The Swift runtime and Foundation inside the executable: the wheel's tool runs where Swift is not installed.
    command = [swift, "build", "-c", "release", "--static-swift-stdlib", "--product", "primekit"]
    print(f"primekit: {' '.join(command)} (in {REPO})", file=sys.stderr, flush=True)
    subprocess.run(command, cwd=REPO, check=True, stdout=sys.stderr)
    bin_dir = subprocess.run([swift, "build", "-c", "release", "--static-swift-stdlib", "--show-bin-path"], cwd=REPO, check=True,
                             capture_output=True, text=True).stdout.strip()
    return Path(bin_dir) / "primekit"


class BuildPyWithTool(build_py):
    """``build_py`` that also places the release executable in the built package (not for editable installs)."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False) or not ships_tool():
            return
        built = build_tool()
        target = Path(self.build_lib) / "primekit" / "_bin" / "primekit"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)
        target.chmod(0o755)


class PlatformWheel(bdist_wheel):
    """A wheel tagged for this platform (``py3-none-<platform>``) when it holds the executable."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if ships_tool():
            self.root_is_pure = False

    def get_tag(self) -> tuple[str, str, str]:
        python, abi, platform = super().get_tag()
        return ("py3", "none", platform) if ships_tool() else (python, abi, platform)


setup(cmdclass={"build_py": BuildPyWithTool, "bdist_wheel": PlatformWheel})
