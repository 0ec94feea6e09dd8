#!/usr/bin/env bash
# Interleaved side-by-side run of ozz-animation's SkinningJob and `skinblend bench --quick`:
# ROUNDS rounds of (skinblend, ozz), /proc/loadavg recorded before each program, then the
# medians over rounds as a Markdown table (see table.py).
#
#   tools/ozz-compare/compare.sh OZZ_DRIVER SKINBLEND_BINARY [ROUNDS] [OUT_DIR]
#
# OZZ_DRIVER comes from build.sh; SKINBLEND_BINARY is a release build of the CLI
# (`cargo build --release -p skinblend-cli`, then target/release/skinblend). Run by hand, not by
# CI: a full run of 5 rounds takes a few minutes on two cores.
set -euo pipefail
ozz=${1:?usage: compare.sh OZZ_DRIVER SKINBLEND_BINARY [ROUNDS] [OUT_DIR]}
skinblend=${2:?usage: compare.sh OZZ_DRIVER SKINBLEND_BINARY [ROUNDS] [OUT_DIR]}
rounds=${3:-5}
out=${4:-/tmp/ozz-compare-run}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
rm -f "$out"/round-*
for round in $(seq 1 "$rounds"); do
  echo "skinblend loadavg $(cat /proc/loadavg)" >"$out/round-$round-load.txt"
  "$skinblend" bench --quick --json >"$out/round-$round-skinblend.json"
  echo "ozz loadavg $(cat /proc/loadavg)" >>"$out/round-$round-load.txt"
  # The sampling of `skinblend bench --quick` (5 samples of at least 25 ms), so that both
  # programs take their fastest call from as many calls.
  "$ozz" --samples 5 --sample-ms 25 >"$out/round-$round-ozz.txt"
  echo "round $round of $rounds done: $(cat /proc/loadavg)" >&2
done
python3 "$here/table.py" "$out"
