#!/usr/bin/env python3
"""A/B of builds of skinblend's kernels: wall-clock throughput of `kernel_instructions` runs,
interleaved (A B C A B C ...), one kernel per invocation.

    tools/ozz-compare/ab.py ROUNDS "METHOD ATTRIBUTES K VERTICES CALLS" BINARY_A BINARY_B [...]

Build each side with `cargo bench -p skinblend --bench kernel_instructions --no-run` (it prints
the path) and copy the binary away before building the next. Each round runs every binary once
with CALLS calls (one thread); the setup (the same arguments with 0 calls, best of three) is
subtracted. Prints, per binary, the median and the best rate in million vertices per second and
both as ratios to the first binary; then, where the binary prints `fastest_call_ns` (the
current `kernel_instructions` does), the rate of each run's fastest call, median over rounds. On a shared host single runs swing by several per cent: the
best of 11-15 rounds is the steadier figure (it is the run least disturbed by other tenants).
Example: `tools/ozz-compare/ab.py 15 "linear pn 4 10000 5000" /tmp/before /tmp/after`.
A binary may carry further arguments after commas, appended to the kernel's (the joint count:
`/tmp/after,8` runs the rig with 8 joints instead of 64; `/tmp/after,64,2` splits each call over
two threads), so one build can be set against itself on other inputs or thread counts.
"""
import statistics
import subprocess
import sys
import time


def seconds(command):
    """Wall-clock seconds of one run, and its fastest call in nanoseconds (0 if not printed)."""
    start = time.perf_counter()
    run = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=True)
    elapsed = time.perf_counter() - start
    fastest = [int(w.split("=")[1]) for w in run.stdout.split() if w.startswith("fastest_call_ns=")]
    return elapsed, (fastest[0] if fastest else 0)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    rounds = int(sys.argv[1])
    arguments = sys.argv[2].split()
    binaries = sys.argv[3:]
    if len(arguments) != 5:
        sys.exit('the kernel is "METHOD ATTRIBUTES K VERTICES CALLS"')
    vertices, calls = int(arguments[3]), int(arguments[4])
    def command(spec, calls_argument):
        path, *extra = spec.split(",")
        return [path] + arguments[:4] + [calls_argument] + extra

    setup = {b: min(seconds(command(b, "0"))[0] for _ in range(3)) for b in binaries}
    rates = {b: [] for b in binaries}
    fastest_rates = {b: [] for b in binaries}
    print(f"loadavg before: {open('/proc/loadavg').read().strip()}")
    for _ in range(rounds):
        for b in binaries:
            elapsed, fastest_ns = seconds(command(b, arguments[4]))
            rates[b].append(vertices * calls / (elapsed - setup[b]) / 1e6)
            if fastest_ns:
                fastest_rates[b].append(vertices / fastest_ns * 1e3)
    print(f"loadavg after: {open('/proc/loadavg').read().strip()}")
    median0 = statistics.median(rates[binaries[0]])
    best0 = max(rates[binaries[0]])
    for b in binaries:
        median, best = statistics.median(rates[b]), max(rates[b])
        print(
            f"{b}: median {median:6.1f} ({median / median0:.3f}x)"
            f"  best {best:6.1f} ({best / best0:.3f}x)  Mverts/s"
        )
    if all(fastest_rates[b] for b in binaries):
        # The fastest single call of each run: steadier than whole runs on a shared host.
        first = statistics.median(fastest_rates[binaries[0]])
        for b in binaries:
            median = statistics.median(fastest_rates[b])
            print(f"{b}: fastest call, median over rounds {median:6.1f} ({median / first:.3f}x)  Mverts/s")


if __name__ == "__main__":
    main()
