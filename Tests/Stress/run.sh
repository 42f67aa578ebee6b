#!/usr/bin/env bash
# The stress, load and fault suite (docs/reliability.md, "Stress, load and faults").
#   bash Tests/Stress/run.sh           the always-on subset (under a minute)
#   bash Tests/Stress/run.sh --all     everything, the long scenarios too (about 10 minutes)
# Extra arguments go to pytest. PRIMEKIT_BIN chooses the executable (default: <repo>/.build/release/primekit);
# STRESS_SEED repeats a failed run; STRESS_FIGURES=file collects the measured figures.
# Needs the Python binding's venv (bash bindings/python/test.sh creates it); the disk-full and read-only tests
# mount a tmpfs (root), else they are skipped.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
python="$repo/bindings/python/.venv/bin/python"
if [ ! -x "$python" ]; then
    echo "no $python: run bash bindings/python/test.sh first" >&2
    exit 2
fi
export PRIMEKIT_BIN="${PRIMEKIT_BIN:-$repo/.build/release/primekit}"
selection=(-m "not stress")
if [ "${1:-}" = "--all" ]; then
    selection=()
    shift
fi
cd "$here"
exec "$python" -m pytest -q "${selection[@]}" "$@" .
