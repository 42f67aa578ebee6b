#!/usr/bin/env bash
# Type-checks and tests the Python binding against the real primekit executable
# (PRIMEKIT_BIN, else <repo>/.build/release/primekit). Creates bindings/python/.venv when missing.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
python="${PYTHON:-python3.11}"
if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[test]"
.venv/bin/python -m mypy --strict src tests
.venv/bin/python -m pytest -q
