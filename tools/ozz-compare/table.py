#!/usr/bin/env python3
"""Medians over the rounds of compare.sh as a Markdown table: ozz vs skinblend, K = 4.

    python3 tools/ozz-compare/table.py OUT_DIR

Figures are million vertices per second; ratios are the medians of the per-round ratios (each
round's two programs ran back to back, so a round's ratio shares its machine state). A second
table gives each program's best round (the round least disturbed by other tenants of a shared
host, as `ab.py` reports) with the ratio of the bests, and the spread of the per-round ratios:
when that spread is wide, the host was busy and the medians say little. A third table, where
both programs print it, gives each program's fastest single call (median over rounds): the
call least disturbed by other tenants, steadier between runs than either. A fourth gives the
fastest call of all rounds, with two threads over one from it: on a host where a whole process
sometimes runs in a slower state (a core shared with another tenant), the speed of each program
on an undisturbed core.
"""
import glob
import json
import os
import re
import statistics
import sys

# The methods' names in skinblend's bench JSON, in table order: the names of
# `skinblend::Method::ALL` (`Method::name`, crates/skinblend/src/types.rs), as
# `skinblend pose --help` lists them. The column headers below (LBS, DQS, CoR) follow this order.
METHODS = ("linear", "dq", "cor")
# LBS, the one method with positions-only rows here.
LINEAR = METHODS[0]

out = sys.argv[1]
rounds = sorted(
    int(m.group(1))
    for p in glob.glob(os.path.join(out, "round-*-ozz.txt"))
    if (m := re.search(r"round-(\d+)-ozz", p))
)
if not rounds:
    sys.exit(f"error: no round-N-ozz.txt in {out}")

per_round = []  # {key: mverts}
fastest_per_round = []  # {key: mverts of the fastest call}
loads = []
for r in rounds:
    figures = {}
    fastest = {}
    for line in open(os.path.join(out, f"round-{r}-ozz.txt")):
        m = re.match(
            r"ozz (\w+) ([\w-]+) k=4 vertices=(\d+) threads=(\d+) mverts_per_s=([\d.]+)"
            r"(?: fastest_mverts_per_s=([\d.]+))?",
            line,
        )
        if m:
            attributes, normals, n, t, v, f = m.groups()
            figures[("ozz", attributes, normals, int(n), int(t))] = float(v)
            if f:
                fastest[("ozz", attributes, normals, int(n), int(t))] = float(f)
    data = json.load(open(os.path.join(out, f"round-{r}-skinblend.json")))
    for row in data["rows"]:
        if row["influences"] != 4 or row["backend"] == "scalar":
            continue
        key = (row["method"], row["attributes"], "", row["vertices"], row["threads"])
        figures[key] = row["mverts_per_s"]
        if "fastest_call_mverts_per_s" in row:
            fastest[key] = row["fastest_call_mverts_per_s"]
    per_round.append(figures)
    fastest_per_round.append(fastest)
    loads.append(open(os.path.join(out, f"round-{r}-load.txt")).read().strip().replace("\n", "; "))


def median(key):
    values = [f[key] for f in per_round if key in f]
    return statistics.median(values) if values else float("nan")


def ratio(a, b):
    values = [f[a] / f[b] for f in per_round if a in f and b in f]
    return statistics.median(values) if values else float("nan")


sizes = sorted({k[3] for f in per_round for k in f})
threads = sorted({k[4] for f in per_round for k in f})
print(f"K = 4, 64 joints; medians of {len(rounds)} interleaved rounds (Mverts/s)\n")
print(
    "| vertices | threads | ozz (normals by blended matrix) | ozz (inverse-transpose matrices) "
    "| LBS | DQS | CoR | LBS / ozz | DQS / ozz | CoR / ozz |"
)
print("|---|---|---|---|---|---|---|---|---|---|")
for n in sizes:
    for t in threads:
        ozz = ("ozz", "pn", "blended", n, t)
        row = [
            f"{n:,}",
            str(t),
            f"{median(ozz):.0f}",
            f"{median(('ozz', 'pn', 'inverse-transpose', n, t)):.0f}",
        ]
        row += [f"{median((m, 'pn', '', n, t)):.0f}" for m in METHODS]
        row += [f"{ratio((m, 'pn', '', n, t), ozz):.2f}" for m in METHODS]
        print("| " + " | ".join(row) + " |")
print("\nPositions only (LBS):\n")
print("| vertices | threads | ozz | LBS | LBS / ozz |")
print("|---|---|---|---|---|")
for n in sizes:
    for t in threads:
        ozz = ("ozz", "p", "none", n, t)
        ours = (LINEAR, "p", "", n, t)
        print(f"| {n:,} | {t} | {median(ozz):.0f} | {median(ours):.0f} | {ratio(ours, ozz):.2f} |")
print("\nTwo threads / one thread (medians of per-round ratios):\n")
print("| vertices | ozz | LBS | DQS | CoR |")
print("|---|---|---|---|---|")
for n in sizes:
    if len(threads) < 2:
        break
    t1, t2 = threads[0], threads[-1]
    cells = [f"{ratio(('ozz', 'pn', 'blended', n, t2), ('ozz', 'pn', 'blended', n, t1)):.2f}"]
    cells += [f"{ratio((m, 'pn', '', n, t2), (m, 'pn', '', n, t1)):.2f}" for m in METHODS]
    print(f"| {n:,} | " + " | ".join(cells) + " |")


def best(key):
    values = [f[key] for f in per_round if key in f]
    return max(values) if values else float("nan")


def spread(a, b):
    values = [f[a] / f[b] for f in per_round if a in f and b in f]
    return f"{min(values):.2f}–{max(values):.2f}" if values else "–"


print("\nOne thread, best round of each program, ratio of the bests (spread of per-round ratios):\n")
print("| vertices | attributes | ozz | LBS | DQS | CoR | LBS / ozz | DQS / ozz | CoR / ozz |")
print("|---|---|---|---|---|---|---|---|---|")
for n in sizes:
    t = threads[0]
    for attributes, normals, methods in (("pn", "blended", METHODS), ("p", "none", (LINEAR,))):
        ozz = ("ozz", attributes, normals, n, t)
        cells = [f"{n:,}", attributes, f"{best(ozz):.0f}"]
        cells += [f"{best((m, attributes, '', n, t)):.0f}" if m in methods else "" for m in METHODS]
        cells += [
            f"{best((m, attributes, '', n, t)) / best(ozz):.2f} ({spread((m, attributes, '', n, t), ozz)})"
            if m in methods
            else ""
            for m in METHODS
        ]
        print("| " + " | ".join(cells) + " |")
def fastest_table(title, aggregate):
    """The fastest-call table, each figure `aggregate` of the rounds' fastest calls."""

    def fastest(key):
        values = [f[key] for f in fastest_per_round if key in f]
        return aggregate(values) if values else float("nan")

    print(f"\n{title}:\n")
    print("| vertices | threads | attributes | ozz | LBS | DQS | CoR | LBS / ozz | DQS / ozz | CoR / ozz |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in sizes:
        for t in threads:
            for attributes, normals, methods in (
                ("pn", "blended", METHODS),
                ("p", "none", (LINEAR,)),
            ):
                ozz = fastest(("ozz", attributes, normals, n, t))
                ours = {m: fastest((m, attributes, "", n, t)) for m in methods}
                cells = [f"{n:,}", str(t), attributes, f"{ozz:.0f}"]
                cells += [f"{ours[m]:.0f}" if m in ours else "" for m in METHODS]
                cells += [f"{ours[m] / ozz:.2f}" if m in ours else "" for m in METHODS]
                print("| " + " | ".join(cells) + " |")
    if len(threads) > 1:
        print("\nTwo threads / one thread, from the table above (positions + normals):\n")
        print("| vertices | ozz | LBS | DQS | CoR |")
        print("|---|---|---|---|---|")
        for n in sizes:
            cells = [f"{n:,}"]
            for key in (("ozz", "pn", "blended"), *((m, "pn", "") for m in METHODS)):
                one, two = fastest((*key, n, threads[0])), fastest((*key, n, threads[-1]))
                cells.append(f"{two / one:.2f}")
            print("| " + " | ".join(cells) + " |")


if any(fastest_per_round):
    fastest_table(
        "Fastest single call of each program, median over rounds (Mverts/s), and the ratio of "
        "those medians",
        statistics.median,
    )
    # On a host whose cores are sometimes shared (a whole process then runs slower: compare the
    # rounds of the table above), the fastest call of all rounds is each program's speed on an
    # undisturbed core.
    fastest_table(
        "Fastest single call of each program over all rounds (Mverts/s), and the ratio of those",
        max,
    )
print("\nLoad (/proc/loadavg) before each program:\n")
for r, l in zip(rounds, loads):
    print(f"- round {r}: {l}")
