"""skinblend against the numpy formulation researchers use (dense weights, a matrix per vertex).

    python crates/skinblend-py/bench/bench_numpy.py [--repeats 7] [--cli target/release/skinblend]

Data: ``skinblend.benchmark_mesh`` (``skinblend bench``'s rig: 4 influences per vertex, random
rigid palette) at 6,890 vertices x 24 joints (SMPL's size) and 100,000 x 64. numpy gets the same
weights as a dense (N, J) matrix and computes LBS as SMPL-style code does:
``T = (W @ G.reshape(J, 16)).reshape(N, 4, 4)``, then ``v' = einsum(T[:, :3, :3], v) + T[:, :3, 3]``.
PyTorch CPU runs the same formulation when ``torch`` is importable.

Each sample repeats a call for at least 30 ms. Each case runs on one thread (numpy's BLAS limited by threadpoolctl, skinblend with
``threads=1``, torch with ``set_num_threads(1)``) and on all cores. Cases are interleaved and
repeated; the table shows the median time per frame and million vertices per second. With
``--cli``, ``skinblend bench --json`` runs first and the binding's share of its throughput is
printed (``skin_frames`` against the same method, size, attributes and threads). Not a test:
figures depend on the machine and its load, which is printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import time
from typing import Callable, Dict, List, Tuple

import numpy as np
from threadpoolctl import threadpool_limits

import skinblend

try:  # optional
    import torch
except ImportError:  # pragma: no cover
    torch = None

FRAMES = 16  # frames per skin_frames call: enough that the per-call overhead is amortized


def dense_weights(mesh: Dict[str, np.ndarray], joints: int) -> np.ndarray:
    n = mesh["positions"].shape[0]
    dense = np.zeros((n, joints), np.float32)
    np.add.at(dense, (np.repeat(np.arange(n), mesh["joints"].shape[1]), mesh["joints"].ravel().astype(np.int64)),
              mesh["weights"].ravel())
    return dense


def numpy_lbs(weights: np.ndarray, palette: np.ndarray, positions: np.ndarray) -> np.ndarray:
    n, j = weights.shape
    t = (weights @ palette.reshape(j, 16)).reshape(n, 4, 4)
    return np.einsum("nij,nj->ni", t[:, :3, :3], positions) + t[:, :3, 3]


MIN_SAMPLE_S = 0.03  # one sample repeats the call for at least this long: timer and scheduler noise stay small


def timed(fn: Callable[[], object], frames: int = 1) -> float:
    """Seconds per frame of one sample: ``fn`` called back to back for ``MIN_SAMPLE_S``."""
    calls = 0
    begin = time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - begin
        if elapsed >= MIN_SAMPLE_S:
            return elapsed / calls / frames


def run_cli_bench(cli: str) -> List[dict]:
    """`skinblend bench --json`'s rows (the full matrix: about two minutes)."""
    run = subprocess.run([cli, "bench", "--json"], capture_output=True, text=True, check=True)
    return json.loads(run.stdout)["rows"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--cli", help="the skinblend binary, to compare with `skinblend bench --json`")
    parser.add_argument("--skinblend-only", action="store_true",
                        help="skip numpy and torch (their idle BLAS threads can take a core from what follows)")
    args = parser.parse_args()
    cli_rows: List[List[dict]] = []
    if args.cli:
        cli_rows.append(run_cli_bench(args.cli))
    cores = os.cpu_count() or 1
    print(f"cores: {cores}; load average before: {os.getloadavg()}; SIMD: {skinblend.simd_backend()}")
    print(f"numpy {np.__version__}; torch {torch.__version__ if torch else 'not installed'}")

    results: Dict[Tuple[str, str, int], List[float]] = {}
    for n, j in [(6890, 24), (100_000, 64)]:
        mesh = skinblend.benchmark_mesh(n, 4, j)
        positions, palette = mesh["positions"], mesh["palette"]
        dense = dense_weights(mesh, j)
        palettes = np.broadcast_to(palette, (FRAMES, j, 4, 4)).copy()
        out = np.empty((FRAMES, n, 3), np.float32)
        size = f"{n:,} x {j}"
        skinners = {
            (method, threads): skinblend.Skinner(positions, mesh["joints"], mesh["weights"],
                                                 method=method, threads=threads)
            for method in ("linear", "dq")
            for threads in (1, None)
        }
        pn_skinners = {
            (method, threads): skinblend.Skinner(positions, mesh["joints"], mesh["weights"],
                                                 normals=mesh["normals"], method=method, threads=threads)
            for method in ("linear", "dq")
            for threads in (1, None)
        }
        frame_out = np.empty((n, 3), np.float32)
        normal_out = np.empty((n, 3), np.float32)
        # Bit-for-bit agreement is not expected with numpy (another summation order); check the
        # formulation is the same within f32 round-off before timing it.
        reference = numpy_lbs(dense, palette, positions)
        ours = skinblend.skin(positions, mesh["joints"], mesh["weights"], palette, method="linear").positions
        assert np.abs(reference - ours).max() < 1e-4, np.abs(reference - ours).max()
        for _ in range(args.repeats):
            for threads_label, threads in (("1", 1), ("all", None)):
                key = lambda name: (size, name, threads_label)  # noqa: E731
                if not args.skinblend_only:
                    with threadpool_limits(limits=1 if threads == 1 else None):
                        results.setdefault(key("numpy einsum LBS"), []).append(
                            timed(lambda: numpy_lbs(dense, palette, positions)))
                if torch is not None and not args.skinblend_only:
                    torch.set_num_threads(1 if threads == 1 else cores)
                    tw, tg, tp = torch.from_numpy(dense), torch.from_numpy(palette), torch.from_numpy(positions)

                    def torch_lbs():
                        t = (tw @ tg.reshape(j, 16)).reshape(n, 4, 4)
                        return torch.einsum("nij,nj->ni", t[:, :3, :3], tp) + t[:, :3, 3]

                    results.setdefault(key("torch einsum LBS"), []).append(timed(torch_lbs))
                for method, label in (("linear", "LBS"), ("dq", "DQS")):
                    skinner = skinners[(method, threads)]
                    results.setdefault(key(f"skinblend {label}, Skinner.skin"), []).append(
                        timed(lambda: skinner.skin(palette, out=frame_out)))
                    results.setdefault(key(f"skinblend {label}, skin_frames x{FRAMES}"), []).append(
                        timed(lambda: skinner.skin_frames(palettes, out=out), FRAMES))
                    pn = pn_skinners[(method, threads)]
                    results.setdefault(key(f"skinblend {label} +normals, Skinner.skin"), []).append(
                        timed(lambda: pn.skin(palette, out=frame_out, out_normals=normal_out)))

    print(f"load average after: {os.getloadavg()}")
    print()
    print("| mesh | code | threads | ms per frame (median) | M vertices/s | vs numpy, same threads |")
    print("|---|---|---|---:|---:|---:|")
    for (size, name, threads), times in results.items():
        n = int(size.split(" x ")[0].replace(",", ""))
        median = statistics.median(times)
        numpy_times = results.get((size, "numpy einsum LBS", threads))
        versus = f"{statistics.median(numpy_times) / median:.1f}x" if numpy_times else "-"
        print(f"| {size} | {name} | {threads} | {median * 1e3:.3f} | {n / median / 1e6:.1f} | {versus} |")

    if args.cli:
        cli_rows.append(run_cli_bench(args.cli))
        print()
        print("`skinblend bench --json` (same rig, 64 joints, k=4), run before and after the Python "
              "measurements, against the binding on 100,000 x 64:")
        for when, rows in zip(("before", "after"), cli_rows):
            for row in rows:
                if row["vertices"] != 100_000 or row["influences"] != 4 or row["method"] not in ("linear", "dq"):
                    continue
                if row["backend"] not in ("simd", "parallel"):
                    continue
                label = {"linear": "LBS", "dq": "DQS"}[row["method"]]
                threads = "1" if row["backend"] == "simd" else "all"
                if row["attributes"] == "p":
                    name = f"skinblend {label}, skin_frames x{FRAMES}"
                elif row["attributes"] == "pn":
                    name = f"skinblend {label} +normals, Skinner.skin"
                else:
                    continue
                ours = 100_000 / statistics.median(results[("100,000 x 64", name, threads)]) / 1e6
                print(f"- {when}: {name}, {threads} thread(s): bench {row['mverts_per_s']:.1f} M/s "
                      f"({row['attributes']}, {row['threads']} threads), binding {ours:.1f} M/s: "
                      f"{ours / row['mverts_per_s'] * 100:.0f} %")


if __name__ == "__main__":
    main()
