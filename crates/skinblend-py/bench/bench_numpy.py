"""The Python doors against the kernel alone, and against numpy's dense LBS.

    python crates/skinblend-py/bench/bench_numpy.py [--repeats 7] [--cli target/release/skinblend]

Data: ``skinblend.benchmark_mesh`` (``skinblend bench``'s rig: 4 influences per vertex, random
rigid palette, positions and normals) at 6,890 vertices x 24 joints (SMPL's size) and 10k, 100k
and 1M vertices x 64 joints. Every skinblend case runs on one thread (``threads=1``):

- ``Skinner.skin(out=)``: a mesh checked once, one frame into caller arrays (positions+normals);
- ``skin_frames x16``: 16 frames of positions per call;
- one-shot ``skinblend.skin()``: float32 C-contiguous arrays, sparse weights (positions+normals);
- one-shot with dense ``(N, J)`` weights at SMPL's size, against numpy's dense LBS as SMPL-style
  code writes it, ``T = (W @ G.reshape(J, 16)).reshape(N, 4, 4)`` then
  ``v' = einsum(T[:, :3, :3], v) + T[:, :3, 3]`` (positions only, numpy's BLAS on one thread).

Then the fixed cost of a call: ``Skinner.skin(out=)`` and the extension's method under it
(``Skinner._native.skin``) on 8 vertices x 64 joints, where the palette's preparation and the
call itself are nearly all of it.

Each sample repeats a call for at least 30 ms; cases are interleaved and repeated, and the table
shows medians. With ``--cli``, ``skinblend bench --quick --json`` runs before and after, and each
door is printed as a ratio of the kernel alone (the SIMD row of the same method, attributes and
size, one thread; the median of its two runs). Always, each door is also printed as a ratio of the
kernel alone measured in this process right after it in every repeat (``SkinMesh::skin_into``
called back to back in Rust on the Skinner's own mesh, the palette prepared once: the extension's
``_kernel_seconds_per_call``), the median over the repeats: a reference taken at the same moment,
so the host's load moves both alike. Not a test: figures depend on the machine and its
load, which is printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np
from threadpoolctl import threadpool_limits

import skinblend
from sampling import seconds_per_call

FRAMES = 16  # frames per skin_frames call: enough that the per-call overhead is amortized
MIN_SAMPLE_S = 0.03  # one sample repeats the call for at least this long: timer noise stays small
SIZES = [(6890, 24), (10_000, 64), (100_000, 64), (1_000_000, 64)]
METHODS = (("linear", "LBS"), ("dq", "DQS"))


def dense_weights(mesh: Dict[str, np.ndarray], joints: int) -> np.ndarray:
    n = mesh["positions"].shape[0]
    dense = np.zeros((n, joints), np.float32)
    rows = np.repeat(np.arange(n), mesh["joints"].shape[1])
    np.add.at(dense, (rows, mesh["joints"].ravel().astype(np.int64)), mesh["weights"].ravel())
    return dense


def numpy_lbs(weights: np.ndarray, palette: np.ndarray, positions: np.ndarray) -> np.ndarray:
    n, j = weights.shape
    t = (weights @ palette.reshape(j, 16)).reshape(n, 4, 4)
    return np.einsum("nij,nj->ni", t[:, :3, :3], positions) + t[:, :3, 3]


def timed(fn: Callable[[], object], frames: int = 1) -> float:
    """Seconds per frame of one sample: ``fn`` called back to back for ``MIN_SAMPLE_S``."""
    return seconds_per_call(fn, MIN_SAMPLE_S) / frames


def run_cli_bench(cli: str) -> List[dict]:
    """`skinblend bench --quick --json`'s rows (under a minute)."""
    run = subprocess.run([cli, "bench", "--quick", "--json"], capture_output=True, text=True,
                         check=True)
    return json.loads(run.stdout)["rows"]


def kernel_mverts(runs: List[List[dict]], method: str, attributes: str, n: int) -> Optional[float]:
    """The kernel alone: the SIMD row's throughput (one thread), median over the runs."""
    found = [row["mverts_per_s"] for rows in runs for row in rows
             if row["backend"] == "simd" and row["method"] == method
             and row["attributes"] == attributes and row["vertices"] == n
             and row["influences"] == 4]
    return statistics.median(found) if found else None


Key = Tuple[int, str, str, str]  # (vertices, method, door, attributes)

# The reference measured in this process, interleaved with the doors (`measure`).
KERNEL = "kernel alone, in this process"


def measure(repeats: int, with_numpy: bool) -> Dict[Key, List[float]]:
    results: Dict[Key, List[float]] = {}
    for n, j in SIZES:
        mesh = skinblend.benchmark_mesh(n, 4, j)
        positions, normals, palette = mesh["positions"], mesh["normals"], mesh["palette"]
        joints, weights = mesh["joints"], mesh["weights"]
        palettes = np.broadcast_to(palette, (FRAMES, j, 4, 4)).copy()
        frames_out = np.empty((FRAMES, n, 3), np.float32)
        out, out_normals = np.empty((n, 3), np.float32), np.empty((n, 3), np.float32)
        dense = dense_weights(mesh, j) if n < 100_000 else None
        skinners = {method: skinblend.Skinner(positions, joints, weights, normals=normals,
                                              method=method, threads=1)
                    for method, _ in METHODS}
        frame_skinners = {method: skinblend.Skinner(positions, joints, weights, method=method,
                                                    threads=1)
                          for method, _ in METHODS}
        for _ in range(repeats):
            for method, _ in METHODS:
                skinner, frames = skinners[method], frame_skinners[method]
                cases = {
                    ("Skinner.skin(out=)", "pn"):
                        (lambda s=skinner: s.skin(palette, out=out, out_normals=out_normals), 1),
                    (f"skin_frames x{FRAMES}", "p"):
                        (lambda s=frames: s.skin_frames(palettes, out=frames_out), FRAMES),
                    ("one-shot skin()", "pn"):
                        (lambda m=method: skinblend.skin(positions, joints, weights, palette,
                                                         normals=normals, method=m, threads=1), 1),
                }
                if dense is not None:
                    cases[("one-shot skin(), dense weights", "p")] = (
                        lambda m=method: skinblend.skin(positions, None, dense, palette, method=m,
                                                        threads=1), 1)
                for (door, attributes), (fn, count) in cases.items():
                    results.setdefault((n, method, door, attributes), []).append(timed(fn, count))
                # The kernel alone in this process, right after the doors: `SkinMesh::skin_into`
                # called back to back in Rust on the same mesh, palette prepared once.
                for attributes, s in (("pn", skinner), ("p", frames)):
                    results.setdefault((n, method, KERNEL, attributes), []).append(
                        s._native._kernel_seconds_per_call(palette, MIN_SAMPLE_S))
            if dense is not None and with_numpy:
                with threadpool_limits(limits=1):
                    results.setdefault((n, "linear", "numpy dense LBS", "p"), []).append(
                        timed(lambda: numpy_lbs(dense, palette, positions)))
    return results


def measure_fixed_cost(repeats: int) -> Dict[Tuple[str, str], List[float]]:
    """Microseconds per call on an 8-vertex mesh with 64 joints: the Python method and the
    extension's method it calls, per method."""
    mesh = skinblend.benchmark_mesh(8, 4, 64)
    palette = mesh["palette"]
    out, out_normals = np.empty((8, 3), np.float32), np.empty((8, 3), np.float32)
    results: Dict[Tuple[str, str], List[float]] = {}
    for _ in range(repeats):
        for method, _label in METHODS:
            skinner = skinblend.Skinner(mesh["positions"], mesh["joints"], mesh["weights"],
                                        normals=mesh["normals"], method=method, threads=1)
            native = skinner._native  # the extension's method, for the split of the cost
            cases = {
                "Skinner.skin(out=)": lambda s=skinner: s.skin(palette, out=out,
                                                               out_normals=out_normals),
                "extension method alone": lambda n=native: n.skin(palette, out, out_normals, None),
            }
            for door, fn in cases.items():
                results.setdefault((method, door), []).append(timed(fn) * 1e6)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--cli", help="the skinblend binary, for the kernel-alone figures")
    parser.add_argument("--no-numpy", action="store_true", help="skip numpy's dense LBS")
    args = parser.parse_args()
    runs: List[List[dict]] = [run_cli_bench(args.cli)] if args.cli else []
    print(f"cores: {os.cpu_count()}; load average before: {os.getloadavg()}; "
          f"SIMD: {skinblend.simd_backend()}; numpy {np.__version__}")
    results = measure(args.repeats, not args.no_numpy)
    if args.cli:
        runs.append(run_cli_bench(args.cli))
    print(f"load average after: {os.getloadavg()}")
    print()
    print("| vertices | method | door (one thread) | attributes | ms per frame | M vertices/s "
          "| of the kernel alone | of the kernel, this process | vs numpy dense LBS |")
    print("|---:|---|---|---|---:|---:|---:|---:|---:|")
    for (n, method, door, attributes), times in results.items():
        median = statistics.median(times)
        mverts = n / median / 1e6
        kernel = (kernel_mverts(runs, method, attributes, n)
                  if door not in ("numpy dense LBS", KERNEL) else None)
        share = f"{mverts / kernel:.2f}x" if kernel else "-"
        # Each repeat's door against the kernel measured right after it, median over repeats.
        here = results.get((n, method, KERNEL, attributes))
        same = "-"
        if here and door not in ("numpy dense LBS", KERNEL):
            same = f"{statistics.median(k / t for k, t in zip(here, times)):.2f}x"
        numpy_times = results.get((n, "linear", "numpy dense LBS", "p"))
        versus = "-"
        if numpy_times and attributes == "p" and door.startswith("one-shot"):
            versus = f"{statistics.median(numpy_times) / median:.1f}x"
        label = dict(METHODS).get(method, method)
        print(f"| {n:,} | {label} | {door} | {attributes} | {median * 1e3:.3f} | {mverts:.1f} "
              f"| {share} | {same} | {versus} |")
    print()
    print("| fixed cost per call, 8 vertices x 64 joints | method | µs (median) |")
    print("|---|---|---:|")
    for (method, door), times in measure_fixed_cost(args.repeats).items():
        print(f"| {door} | {dict(METHODS)[method]} | {statistics.median(times):.2f} |")


if __name__ == "__main__":
    main()
