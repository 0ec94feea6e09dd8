#!/usr/bin/env python3
"""skinblend's LBS and ozz's SkinningJob across mesh sizes, one thread, positions + normals,
four influences, 64 joints: whether the ratio between them depends on where the mesh lives in
the cache hierarchy (it would shift between sizes that fit L1/L2 and those that do not) or on
the core alone (flat).

    tools/ozz-compare/sizes.py OZZ_DRIVER KERNEL_INSTRUCTIONS [ROUNDS] [SIZES]

OZZ_DRIVER: `tools/ozz-compare/build.sh` builds it. KERNEL_INSTRUCTIONS: `cargo bench -p
skinblend --bench kernel_instructions --no-run` prints its path. SIZES: comma-separated vertex
counts (default 500,1000,2000,5000,10000,30000,100000). Each round runs both programs at every
size, alternating; skinblend's rate is the wall clock of about 5e7 vertices of calls less the
setup (the same run with 0 calls), ozz's the driver's median of 3 samples of 40 ms. Prints the
best round of each and their ratio (the best round is the one least disturbed on a shared host).
"""
import re
import subprocess
import sys

from ab import seconds  # the wall clock of one run, as ab.py times its builds


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    ozz, ours = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    sizes = [int(n) for n in (sys.argv[4] if len(sys.argv) > 4 else
                              "500,1000,2000,5000,10000,30000,100000").split(",")]
    rates = {}
    print(f"loadavg before: {open('/proc/loadavg').read().strip()}")
    for _ in range(rounds):
        for n in sizes:
            calls = max(20, int(5e7 / n))
            kernel = [ours, "linear", "pn", "4", str(n)]
            elapsed = seconds(kernel + [str(calls)]) - seconds(kernel + ["0"])
            rates.setdefault(("skinblend", n), []).append(n * calls / elapsed / 1e6)
            out = subprocess.run(
                [ozz, "--vertices", str(n), "--only", "pn-blended", "--threads", "1",
                 "--samples", "3", "--sample-ms", "40"],
                capture_output=True, text=True, check=True).stdout
            rate = float(re.search(r"mverts_per_s=([\d.]+)", out).group(1))
            rates.setdefault(("ozz", n), []).append(rate)
    print(f"loadavg after: {open('/proc/loadavg').read().strip()}")
    print("vertices  skinblend LBS  ozz   LBS / ozz  (best rounds, Mverts/s)")
    for n in sizes:
        ours_best, ozz_best = max(rates[("skinblend", n)]), max(rates[("ozz", n)])
        print(f"{n:>8}  {ours_best:13.0f}  {ozz_best:4.0f}  {ours_best / ozz_best:9.2f}")


if __name__ == "__main__":
    main()
