#!/usr/bin/env bash
# `primekit factor --range A B` against `seq A B | factor` (coreutils): wall time and CPU time (user + system; of
# coreutils, factor's alone) of whole runs, output to a file, compared byte for byte. Runs alternate (primekit,
# coreutils, primekit, ...) so both meet the same load; each figure is the median of RUNS runs and each ratio is
# coreutils' median over primekit's, from the same run. On a busy machine the CPU ratio is the steadier one.
#
#   swift build -c release --product primekit
#   Tests/Benchmarks/cli/range.sh [RUNS]        (default 5)
#
# Environment: PRIMEKIT (default .build/release/primekit), FACTOR (default /usr/bin/factor), RANGES (default the
# three rows below, "A B" pairs separated by commas).
set -euo pipefail

RUNS=${1:-5}
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
PRIMEKIT=${PRIMEKIT:-$ROOT/.build/release/primekit}
FACTOR=${FACTOR:-/usr/bin/factor}
RANGES=${RANGES:-"1000000000000 1000000100000,2 10000000,1000000000000000000 1000000000000100000"}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

[ -x "$PRIMEKIT" ] || { echo "build first: swift build -c release --product primekit" >&2; exit 2; }
[ -x "$FACTOR" ] || { echo "coreutils factor not found at $FACTOR" >&2; exit 2; }

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

# wall START END: seconds between two `date +%s.%N`; cpu: user + system seconds (clock ticks of 0.01 s) that
# /usr/bin/time wrote to $WORK/time.
wall() { echo "$2 - $1" | bc -l; }
cpu() { awk '{printf "%.2f", $1 + $2}' "$WORK/time"; }
TIME=(/usr/bin/time -f '%U %S' -o "$WORK/time")

printf '%-44s %10s %10s %8s  %8s %8s %8s  %s\n' "range" "primekit" "seq|factor" "ratio" "pk CPU" "cu CPU" \
    "CPU ratio" "output"
IFS=',' read -ra rows <<< "$RANGES"
for row in "${rows[@]}"; do
    read -r a b <<< "$row"
    : > "$WORK/pk.times"; : > "$WORK/cu.times"
    for _ in $(seq "$RUNS"); do
        start=$(date +%s.%N); "${TIME[@]}" "$PRIMEKIT" factor --range "$a" "$b" > "$WORK/pk.out"; end=$(date +%s.%N)
        echo "$(wall "$start" "$end") $(cpu)" >> "$WORK/pk.times"
        # CPU: coreutils factor's alone (seq's is left out).
        start=$(date +%s.%N); seq "$a" "$b" | "${TIME[@]}" "$FACTOR" > "$WORK/cu.out"; end=$(date +%s.%N)
        echo "$(wall "$start" "$end") $(cpu)" >> "$WORK/cu.times"
    done
    same=$(cmp -s "$WORK/pk.out" "$WORK/cu.out" && echo identical || echo DIFFERENT)
    pk=$(cut -d' ' -f1 "$WORK/pk.times" | median); cu=$(cut -d' ' -f1 "$WORK/cu.times" | median)
    pkc=$(cut -d' ' -f2 "$WORK/pk.times" | median); cuc=$(cut -d' ' -f2 "$WORK/cu.times" | median)
    printf '%-44s %9.4fs %9.4fs %7.2fx  %7.3fs %7.3fs %7.2fx   %s\n' "[$a, $b]" "$pk" "$cu" "$(echo "$cu / $pk" | bc -l)" \
        "$pkc" "$cuc" "$(echo "$cuc / $pkc" | bc -l)" "$same"
done
echo "runs: $RUNS each, alternating; $(nproc) cores; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
