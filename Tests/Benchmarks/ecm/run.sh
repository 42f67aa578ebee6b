#!/usr/bin/env bash
# One complete job in ECM on every core: `primekit factor --ecm-digits 30` on 60-digit products p25 · p35 (no
# quadratic sieve with a level limit, so ECM alone finds the 25-digit prime) on one core (taskset: one worker, so
# one share) against all cores (one share per worker), in alternating runs, with medians and same-run ratios.
#
#   bash Tests/Benchmarks/ecm/run.sh [RUNS] [SEEDS]      (default 3 runs of each, seeds 1 2 3; needs a release build
#                                                         and taskset; KERNEL_ONLY=1 runs the kernel rows only)
#
# The products come from fixed seeds (Python's random, Miller-Rabin next prime): the same numbers on every machine.
# Answers of both sides must be equal. "cpu/wall" is the all-cores runs' CPU time over their wall time (median):
# about 2 when both workers ran shares side by side on a quiet machine, near 1 or below when other processes took
# the cores (then the wall-time ratio says nothing about sharing). "cpu all/1" is the CPU time of the all-cores run
# over the one-core run's (median of the same-run ratios): the work sharing adds (or saves, when a share's curve
# finds the factor sooner than one job's would).
set -euo pipefail
cd "$(dirname "$0")/../../.."
RUNS=${1:-3}
SEEDS=${2:-"1 2 3"}
BIN=${PRIMEKIT_BIN:-.build/release/primekit}
[ "${KERNEL_ONLY:-0}" = 1 ] || [ -x "$BIN" ] || { echo "build first: swift build -c release --product primekit" >&2; exit 1; }

product() {
    python3 - "$1" <<'PY'
import random, sys
def prime(n):
    if n < 2: return False
    for p in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37):
        if n % p == 0: return n == p
    d, s = n - 1, 0
    while d % 2 == 0: d, s = d // 2, s + 1
    for a in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41):
        x = pow(a, d, n)
        if x in (1, n - 1): continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1: break
        else: return False
    return True
def next_prime(n):
    while not prime(n): n += 1
    return n
r = random.Random(int(sys.argv[1]))
p = next_prime(r.randrange(10**24, 10**25))
q = next_prime(r.randrange(10**34, 10**35))
print(p * q)
PY
}

now() { date +%s%N; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

if [ "${KERNEL_ONLY:-0}" != 1 ]; then
printf '%-6s %-62s %10s %10s %8s %9s %10s\n' seed number "1 core" "$(nproc) cores" ratio "cpu/wall" "cpu all/1"
cpu=$(mktemp)
cpu1=$(mktemp)
trap 'rm -f "$cpu" "$cpu1"' EXIT
all_ratios=()
for seed in $SEEDS; do
    n=$(product "$seed")
    out1=$(taskset -c 0 "$BIN" factor --no-progress --ecm-digits 30 "$n")
    out2=$("$BIN" factor --no-progress --ecm-digits 30 "$n")
    if [ "$out1" != "$out2" ]; then echo "seed $seed: answers differ: [$out1] [$out2]" >&2; exit 1; fi
    one=() all=() ratios=() loads=() works=()
    for ((i = 0; i < RUNS; i++)); do
        t0=$(now); /usr/bin/time -o "$cpu1" -f '%U %S' taskset -c 0 "$BIN" factor --no-progress --ecm-digits 30 "$n" >/dev/null
        a=$(( $(now) - t0 ))
        t0=$(now); /usr/bin/time -o "$cpu" -f '%U %S' "$BIN" factor --no-progress --ecm-digits 30 "$n" >/dev/null
        b=$(( $(now) - t0 ))
        one+=("$a"); all+=("$b"); ratios+=("$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.4f", a / b}')")
        loads+=("$(awk -v b="$b" '{printf "%.3f", ($1 + $2) / (b / 1e9)}' "$cpu")")
        works+=("$(awk 'NR == FNR {c1 = $1 + $2; next} {printf "%.4f", ($1 + $2) / c1}' "$cpu1" "$cpu")")
    done
    m1=$(printf '%s\n' "${one[@]}" | median)
    m2=$(printf '%s\n' "${all[@]}" | median)
    mr=$(printf '%s\n' "${ratios[@]}" | median)
    ml=$(printf '%s\n' "${loads[@]}" | median)
    mw=$(printf '%s\n' "${works[@]}" | median)
    all_ratios+=("$mr")
    printf '%-6s %-62s %8.2f s %8.2f s %7.2fx %9.2f %10.2f\n' "$seed" "$n" "$(awk -v x="$m1" 'BEGIN {print x / 1e9}')" \
        "$(awk -v x="$m2" 'BEGIN {print x / 1e9}')" "$mr" "$ml" "$mw"
done
printf 'median of the per-number ratios: %.2fx; load average after: %s\n' "$(printf '%s\n' "${all_ratios[@]}" | median)" "$(cut -d' ' -f1-3 /proc/loadavg)"
fi

# The kernel alone (Tests/Benchmarks/ecm/shares.c against bindings/c's static library, `make -C bindings/c` first):
# the same numbers' ECM stage stepped as one job, against one share per core on as many threads, alternating.
LIB=bindings/c/build/libprimekit.a
if [ -f "$LIB" ]; then
    drv=$(mktemp)
    cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -pthread -Iinclude Tests/Benchmarks/ecm/shares.c -o "$drv" "$LIB" -lecm -lgmp
    printf '\nkernel: ECM stage of one job alone against %s shares on %s threads\n' "$(nproc)" "$(nproc)"
    printf '%-6s %10s %10s %8s\n' seed alone shares ratio
    for seed in $SEEDS; do
        n=$(product "$seed")
        one=() all=() ratios=()
        for ((i = 0; i < RUNS; i++)); do
            read -r a ans1 < <("$drv" "$n" alone)
            read -r b ans2 < <("$drv" "$n" shares "$(nproc)")
            if [ "$ans1" != "$ans2" ]; then echo "seed $seed: kernel answers differ: [$ans1] [$ans2]" >&2; exit 1; fi
            one+=("$a"); all+=("$b"); ratios+=("$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.4f", a / b}')")
        done
        printf '%-6s %8.2f s %8.2f s %7.2fx\n' "$seed" "$(printf '%s\n' "${one[@]}" | median)" \
            "$(printf '%s\n' "${all[@]}" | median)" "$(printf '%s\n' "${ratios[@]}" | median)"
    done
    rm -f "$drv"
    printf 'load average after: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
fi
