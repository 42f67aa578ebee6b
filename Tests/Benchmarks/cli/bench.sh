#!/usr/bin/env bash
# `primekit factor` against coreutils `factor`: wall time of whole runs, numbers on standard input, outputs
# compared byte for byte. Runs alternate (primekit, factor, primekit, ...) so both meet the same load; each
# figure is the median of RUNS runs and each ratio is coreutils' median over primekit's, from the same run.
#
#   swift build -c release --product primekit
#   Tests/Benchmarks/cli/bench.sh [RUNS]        (default 7)
#
# Then PARI/GP: balanced semiprimes of 100, 128 and 160 bits, `primekit factor` as one process reading them all on
# standard input (wall time, start-up included) against gp's `factor` on the same numbers timed inside gp
# (getabstime, start-up and reading excluded); each ratio is gp's median over primekit's, from the same run.
#
# Environment: PRIMEKIT (default .build/release/primekit), FACTOR (default /usr/bin/factor), GP (default gp; no gp
# skips those rows), GP_RUNS (default: RUNS, at most 3), COUNT_100, COUNT_128, COUNT_160 (numbers per row: 100,
# 20, 3).
set -euo pipefail

RUNS=${1:-7}
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
PRIMEKIT=${PRIMEKIT:-$ROOT/.build/release/primekit}
FACTOR=${FACTOR:-/usr/bin/factor}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

[ -x "$PRIMEKIT" ] || { echo "build first: swift build -c release --product primekit" >&2; exit 2; }
[ -x "$FACTOR" ] || { echo "coreutils factor not found at $FACTOR" >&2; exit 2; }

# Inputs. The semiprimes come from a fixed seed, so every run factors the same numbers.
seq 2 300000 > "$WORK/seq"
seq 1000000000000 1000000100000 > "$WORK/from1e12"
python3 "$ROOT/Tests/Benchmarks/cli/semiprimes.py" 64 2000 20261126 > "$WORK/semiprimes"
seq 1000000 1005000 | head -n 5000 > "$WORK/five-thousand"

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

# time_one FILE COMMAND...: seconds of one run, output to FILE.out
time_one() {
    local input=$1; shift
    local start end
    start=$(now); "$@" < "$input" > "$WORK/out"; end=$(now)
    echo "$end - $start" | bc -l
}

printf '%-36s %10s %10s %8s  %s\n' "input (stdin)" "primekit" "factor" "ratio" "output"
for name in seq from1e12 semiprimes; do
    input="$WORK/$name"
    "$PRIMEKIT" factor < "$input" > "$WORK/pk.out"
    "$FACTOR" < "$input" > "$WORK/cu.out"
    same=$(cmp -s "$WORK/pk.out" "$WORK/cu.out" && echo identical || echo DIFFERENT)
    : > "$WORK/pk.times"; : > "$WORK/cu.times"
    for _ in $(seq "$RUNS"); do
        time_one "$input" "$PRIMEKIT" factor >> "$WORK/pk.times"
        time_one "$input" "$FACTOR" >> "$WORK/cu.times"
    done
    pk=$(median < "$WORK/pk.times"); cu=$(median < "$WORK/cu.times")
    printf '%-36s %9.4fs %9.4fs %7.2fx  %s\n' "$name ($(wc -l < "$input") numbers)" "$pk" "$cu" \
        "$(echo "$cu / $pk" | bc -l)" "$same"
done

# The same 5,000 numbers as arguments and on standard input (primekit only).
: > "$WORK/args.times"; : > "$WORK/stdin.times"
mapfile -t numbers < "$WORK/five-thousand"
for _ in $(seq "$RUNS"); do
    start=$(now); "$PRIMEKIT" factor "${numbers[@]}" > "$WORK/args.out"; end=$(now)
    echo "$end - $start" | bc -l >> "$WORK/args.times"
    time_one "$WORK/five-thousand" "$PRIMEKIT" factor >> "$WORK/stdin.times"
done
same=$(cmp -s "$WORK/args.out" "$WORK/out" && echo identical || echo DIFFERENT)
printf '%-36s %9.4fs (arguments) %9.4fs (stdin)  %s\n' "5,000 numbers, primekit" \
    "$(median < "$WORK/args.times")" "$(median < "$WORK/stdin.times")" "$same"

# PARI/GP rows.
GP=${GP:-gp}
if command -v "$GP" > /dev/null; then
    GP_RUNS=${GP_RUNS:-$(( RUNS < 3 ? RUNS : 3 ))}
    for spec in "100 ${COUNT_100:-100}" "128 ${COUNT_128:-20}" "160 ${COUNT_160:-3}"; do
        set -- $spec
        python3 "$ROOT/Tests/Benchmarks/cli/semiprimes.py" "$1" "$2" 20261127 > "$WORK/sp$1"
    done
    printf '\n%-36s %10s %10s %8s  %s\n' "balanced semiprimes (stdin)" "primekit" "gp" "ratio" "factors"
    for bits in 100 128 160; do
        input="$WORK/sp$bits"
        : > "$WORK/pk.times"; : > "$WORK/gp.times"
        for _ in $(seq "$GP_RUNS"); do
            time_one "$input" "$PRIMEKIT" factor >> "$WORK/pk.times"
            "$GP" -q -f -D parisizemax=1000000000 <<GPEOF | tr -d ' ' >> "$WORK/gp.times"
v = readvec("$input"); t = getabstime(); for (i = 1, #v, factor(v[i])); print((getabstime() - t) / 1000.)
GPEOF
        done
        # Every line is N: p q with p * q = N.
        # Every line is `N: p q` with p * q = N (a probable prime is named again after the primes).
        check=$(python3 -c '
import sys
lines = [line.split("[")[0].split() for line in open(sys.argv[1])]
ok = all(len(f) == 2 and int(f[0]) * int(f[1]) == int(n.rstrip(":")) for n, *f in lines)
print("p*q" if ok and len(lines) == int(sys.argv[2]) else "WRONG")' "$WORK/out" "$(wc -l < "$input")")
        pk=$(median < "$WORK/pk.times"); gpm=$(median < "$WORK/gp.times")
        printf '%-36s %9.4fs %9.4fs %7.2fx  %s\n' "$bits-bit ($(wc -l < "$input") numbers)" "$pk" "$gpm" \
            "$(echo "$gpm / $pk" | bc -l)" "$check"
    done
fi
echo "runs: $RUNS each (gp rows: ${GP_RUNS:-none}), alternating; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
