#!/usr/bin/env bash
# Fuzzes each harness in turn, one at a time, at low priority, and prints a summary line per harness and the
# total number of executions. Called by `make run` (Makefile), which builds the harnesses first:
#
#   run.sh <build dir> <harness>...
#
# Environment (the Makefile passes its variables of the same names):
#   FUZZ_SECONDS      seconds per harness (default 60)
#   FUZZ_RUNS         "harness=N ...": these harnesses stop after N inputs instead, or after FUZZ_MAX_SECONDS
#   FUZZ_MAX_SECONDS  the time limit of a harness run by count (default 1800)
#   FUZZ_MIN_TOTAL    fail when all harnesses together executed fewer inputs (default 0: no check)
#   FUZZ_TIMEOUT      per-input time limit in seconds (default 20); FUZZ_FLAGS: more libFuzzer flags
#
# The committed corpus (corpus/<harness>) is read; new inputs go to <build>/corpus/<harness>, a failing input to
# <build>/artifacts/<harness>/, libFuzzer's output to <build>/logs/<harness>.log. The first failing harness stops
# the run (exit 1) after the tail of its log.
set -euo pipefail
build=$1
shift
seconds=${FUZZ_SECONDS:-60}
max_seconds=${FUZZ_MAX_SECONDS:-1800}
min_total=${FUZZ_MIN_TOTAL:-0}
timeout=${FUZZ_TIMEOUT:-20}
read -r -a extra <<< "${FUZZ_FLAGS:-}"

runs_for() { # the FUZZ_RUNS count of harness $1, or nothing
    local pair
    for pair in ${FUZZ_RUNS:-}; do
        if [ "${pair%%=*}" = "$1" ]; then
            echo "${pair#*=}"
            return
        fi
    done
}

# 1234567 -> 1,234,567
commas() { echo "$1" | sed -e ':a' -e 's/\B[0-9]\{3\}\>/,&/' -e 'ta'; }

total=0
total_seconds=0
summary=()
for h in "$@"; do
    mkdir -p "$build/corpus/$h" "$build/artifacts/$h" "$build/logs" "corpus/$h"
    runs=$(runs_for "$h")
    if [ -n "$runs" ]; then
        limit=(-runs="$runs" -max_total_time="$max_seconds")
        echo "== $h: $(commas "$runs") inputs (at most $max_seconds s)"
    else
        limit=(-max_total_time="$seconds")
        echo "== $h: $seconds s"
    fi
    dict=()
    [ -f "$h.dict" ] && dict=(-dict="$h.dict")
    log="$build/logs/$h.log"
    start=$(date +%s)
    if ! nice -n 15 "$build/$h" "${limit[@]}" -timeout="$timeout" -print_final_stats=1 \
            -artifact_prefix="$build/artifacts/$h/" "${dict[@]}" "${extra[@]}" \
            "$build/corpus/$h" "corpus/$h" > "$log" 2>&1; then
        tail -n 40 "$log"
        echo "$h FAILED: see $log and $build/artifacts/$h"
        exit 1
    fi
    elapsed=$(( $(date +%s) - start ))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    last=$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<< "$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<< "$last")
    corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<< "$last")
    new=$(find "$build/corpus/$h" -type f | wc -l)
    line="$h: $(commas "${execs:-0}") executions in $elapsed s ($(commas "${rate:-0}")/s), cov ${cov:-?}, ft ${ft:-?}, corpus ${corp:-?} (${new} in $build/corpus/$h)"
    echo "   $line"
    summary+=("$line")
    total=$(( total + ${execs:-0} ))
    total_seconds=$(( total_seconds + elapsed ))
done

echo "== summary"
for line in "${summary[@]}"; do
    echo "   $line"
done
echo "   total: $(commas "$total") executions in $total_seconds s ($# harnesses)"
if [ "$total" -lt "$min_total" ]; then
    echo "   FAILED: fewer than $(commas "$min_total") executions in total (FUZZ_MIN_TOTAL)"
    exit 1
fi
