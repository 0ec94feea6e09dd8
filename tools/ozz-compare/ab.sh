#!/usr/bin/env bash
# A/B of two builds of skinblend's kernels in CPU time (million vertices per CPU-second),
# interleaved: each build of `kernel_instructions` runs a fixed number of calls per kernel under
# `perf stat -e task-clock`, less the same build's setup (the run with 0 calls); K = 4, one
# thread. Prints every round, then the medians and B / A.
#
#   tools/ozz-compare/ab.sh KERNEL_INSTRUCTIONS_A KERNEL_INSTRUCTIONS_B [ROUNDS] [VERTICES]
#
# Build each side with `cargo bench -p skinblend --bench kernel_instructions --no-run` (it
# prints the path) and copy the binary away before building the other. Needs perf (Debian:
# linux-perf).
set -euo pipefail
a=${1:?usage: ab.sh KERNEL_INSTRUCTIONS_A KERNEL_INSTRUCTIONS_B [ROUNDS] [VERTICES]}
b=${2:?usage: ab.sh KERNEL_INSTRUCTIONS_A KERNEL_INSTRUCTIONS_B [ROUNDS] [VERTICES]}
rounds=${3:-5}
n=${4:-100000}
calls=$((30000000 / n))
cpu_ms() { perf stat -x, -e task-clock "$@" 2>&1 >/dev/null | awk -F, '/task-clock/ { print $1 }'; }
results=$(mktemp)
trap 'rm -f "$results"' EXIT
echo "loadavg before: $(cat /proc/loadavg)"
for round in $(seq 1 "$rounds"); do
  for side in A B; do
    binary=$a
    [ "$side" = B ] && binary=$b
    for kernel in "linear pn" "linear p" "dq pn" "cor pn"; do
      read -r method attributes <<<"$kernel"
      setup=$(cpu_ms "$binary" "$method" "$attributes" 4 "$n" 0)
      run=$(cpu_ms "$binary" "$method" "$attributes" 4 "$n" "$calls")
      rate=$(python3 -c "import sys; n, c, r, s = map(float, sys.argv[1:]); print(f'{n * c / (r - s) / 1e3:.1f}')" "$n" "$calls" "$run" "$setup")
      echo "$round $side $method-$attributes $rate" | tee -a "$results"
    done
  done
done
echo "loadavg after: $(cat /proc/loadavg)"
python3 - "$results" <<'PY'
import collections, statistics, sys
rates = collections.defaultdict(list)
for line in open(sys.argv[1]):
    _, side, kernel, rate = line.split()
    rates[(kernel, side)].append(float(rate))
for kernel in ["linear-pn", "linear-p", "dq-pn", "cor-pn"]:
    a, b = statistics.median(rates[(kernel, "A")]), statistics.median(rates[(kernel, "B")])
    print(f"{kernel:10} A {a:7.1f}  B {b:7.1f}  B/A {b / a:.2f}")
PY
