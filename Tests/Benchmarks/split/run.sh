#!/usr/bin/env bash
# One big number on every core: the default `primekit factor` (split, cooperating pieces) against the same build
# on one core (taskset: one worker, so one piece), in alternating runs, with medians and same-run ratios.
#
#   bash Tests/Benchmarks/split/run.sh [RUNS]        (default 11 runs of each; needs a release build and taskset)
#
# Every row names --bound: without it the tool factors numbers below 2^128 completely through the batch path
# (microseconds), and these rows measure splitting trial division. Rows: W1b (4294967279 · 4294967291, nothing
# found before 2^32) must be >= 1.8x faster on two cores; numbers
# whose small factor is found early must be no slower split than unsplit (ratio >= 0.95). Answers must be equal.
set -euo pipefail
cd "$(dirname "$0")/../../.."
RUNS=${1:-11}
BIN=${PRIMEKIT_BIN:-.build/release/primekit}
[ -x "$BIN" ] || { echo "build first: swift build -c release --product primekit" >&2; exit 1; }
CORES=$(nproc)

now() { date +%s%N; }

# median of the numbers on stdin
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

row() {
    local name=$1; shift
    local one=() all=() ratios=() a b t0 out1 out2
    out1=$(taskset -c 0 "$BIN" factor --no-progress "$@")
    out2=$("$BIN" factor --no-progress "$@")
    if [ "$out1" != "$out2" ]; then echo "$name: answers differ: [$out1] [$out2]" >&2; exit 1; fi
    for ((i = 0; i < RUNS; i++)); do
        t0=$(now); taskset -c 0 "$BIN" factor --no-progress "$@" >/dev/null; a=$(( $(now) - t0 ))
        t0=$(now); "$BIN" factor --no-progress "$@" >/dev/null; b=$(( $(now) - t0 ))
        one+=("$a"); all+=("$b"); ratios+=("$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.4f", a / b}')")
    done
    local m1 m2 mr
    m1=$(printf '%s\n' "${one[@]}" | median)
    m2=$(printf '%s\n' "${all[@]}" | median)
    mr=$(printf '%s\n' "${ratios[@]}" | median)
    printf '%-34s %9.1f ms %9.1f ms %7.2fx   %s\n' "$name" "$(awk -v x="$m1" 'BEGIN {print x / 1e6}')" \
        "$(awk -v x="$m2" 'BEGIN {print x / 1e6}')" "$mr" "$out2"
}

echo "primekit factor: 1 core (taskset -c 0) vs $CORES cores (default), $RUNS alternating runs each, medians;"
echo "ratio = median of the per-pair ratios (1 core / all cores)"
printf '%-34s %12s %12s %8s   %s\n' workload "1 core" "$CORES cores" ratio answer
row "W1b --bound 2^32" --bound 4294967296 18446743979220271189
row "3*(2^61-1) --bound 2^32" --bound 4294967296 6917529027641081853
row "(2^31-1)*(2^61-1) --bound 2^32" --bound 4294967296 4951760154835678088235319297
row "2^64+1 --bound 2^32 (274177 early)" --bound 4294967296 18446744073709551617
