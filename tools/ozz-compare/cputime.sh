#!/usr/bin/env bash
# One-thread speed in million vertices per CPU-second, ozz-animation vs skinblend, interleaved:
# each program runs a fixed number of calls and `perf stat -e task-clock` takes its CPU time,
# less the same program's setup (the run with 0 calls). CPU time does not count the time the
# scheduler gives other processes, so on a shared, loaded machine it is steadier than the
# wall-clock figures of compare.sh (caches are still shared).
#
#   tools/ozz-compare/cputime.sh OZZ_DRIVER KERNEL_INSTRUCTIONS [ROUNDS] [VERTEX_COUNTS...]
#
# KERNEL_INSTRUCTIONS: `cargo bench -p skinblend --bench kernel_instructions --no-run` prints
# its path (target/release/deps/kernel_instructions-*). Needs perf (Debian: linux-perf).
set -euo pipefail
ozz=${1:?usage: cputime.sh OZZ_DRIVER KERNEL_INSTRUCTIONS [ROUNDS] [VERTEX_COUNTS...]}
ours=${2:?usage: cputime.sh OZZ_DRIVER KERNEL_INSTRUCTIONS [ROUNDS] [VERTEX_COUNTS...]}
rounds=${3:-3}
shift $(($# < 3 ? $# : 3))
counts=("${@:-10000 100000 1000000}")
[ ${#counts[@]} -eq 1 ] && read -r -a counts <<<"${counts[0]}"
# CPU milliseconds of a command.
cpu_ms() { perf stat -x, -e task-clock "$@" 2>&1 >/dev/null | awk -F, '/task-clock/ { print $1 }'; }
# Million vertices per CPU-second from the CPU time of `calls` calls and of 0 calls.
rate() { python3 -c "import sys; n, c, run, setup = map(float, sys.argv[1:]); print(f'{n * c / (run - setup) / 1e3:.1f}')" "$@"; }
echo "round vertices program attributes mverts_per_cpu_s loadavg"
for round in $(seq 1 "$rounds"); do
  for n in "${counts[@]}"; do
    calls=$((30000000 / n))
    for only in pn-blended p; do
      setup=$(cpu_ms "$ozz" --vertices "$n" --only "$only" --calls 0)
      run=$(cpu_ms "$ozz" --vertices "$n" --only "$only" --calls "$calls")
      echo "$round $n ozz $only $(rate "$n" "$calls" "$run" "$setup") $(cut -d' ' -f1 /proc/loadavg)"
    done
    for method in linear dq cor; do
      for attributes in pn p; do
        [ "$method" != linear ] && [ "$attributes" = p ] && continue
        setup=$(cpu_ms "$ours" "$method" "$attributes" 4 "$n" 0)
        run=$(cpu_ms "$ours" "$method" "$attributes" 4 "$n" "$calls")
        echo "$round $n $method $attributes $(rate "$n" "$calls" "$run" "$setup") $(cut -d' ' -f1 /proc/loadavg)"
      done
    done
  done
done
