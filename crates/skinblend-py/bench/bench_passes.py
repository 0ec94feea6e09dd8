"""The extension's batched passes alone (no torch): two builds of ``_native`` side by side.

    python crates/skinblend-py/bench/bench_passes.py BEFORE.so AFTER.so [--repeats 9] [--normals]

Loads both extension files into one process (e.g. a copy of ``skinblend/_native.abi3.so`` kept
before a change, and the rebuilt one) and times ``batched_skin`` (forward) and
``batched_skin_backward`` (gradients of the palettes and the vertices) for LBS and DQS at SMPL's
size (6,890 vertices, 24 joints, 4 influences, a batch of 64 rotations), one thread, the cases
interleaved; prints the minimum and the median of the repeats in ms and DQS / LBS forward +
backward. ``--normals``: the normals' passes instead (the vertices taken as normals).
Not a test: figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import importlib.machinery
import importlib.util
import os
import statistics
import time
from types import ModuleType
from typing import Any, Callable, Dict, List, Tuple

import numpy as np

N, J, K, B = 6890, 24, 4, 64


def load(path: str) -> ModuleType:
    loader = importlib.machinery.ExtensionFileLoader("_native", path)
    spec = importlib.util.spec_from_loader("_native", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def rig() -> Dict[str, Any]:
    rng = np.random.default_rng(0)
    axis = rng.standard_normal((B, J, 3))
    k = axis / np.linalg.norm(axis, axis=-1, keepdims=True)
    angle = np.linalg.norm(axis, axis=-1)[..., None, None]
    kx = np.zeros((B, J, 3, 3))
    kx[..., 0, 1], kx[..., 0, 2], kx[..., 1, 2] = -k[..., 2], k[..., 1], -k[..., 0]
    kx = kx - np.swapaxes(kx, -1, -2)
    palette = np.zeros((B, J, 4, 4))
    palette[..., :3, :3] = np.eye(3) + np.sin(angle) * kx + (1 - np.cos(angle)) * kx @ kx
    palette[..., :3, 3] = rng.standard_normal((B, J, 3)) * 0.1
    palette[..., 3, 3] = 1
    return {
        "palette": palette.astype(np.float32),
        "joints": np.stack([rng.permutation(J)[:K] for _ in range(N)]).astype(np.uint16),
        "weights": (rng.random((1, N, K)) + 0.05).astype(np.float32),
        "vertices": rng.standard_normal((B, N, 3)).astype(np.float32),
        "grad": rng.standard_normal((B, N, 3)).astype(np.float32),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--normals", action="store_true", help="time the normals' passes")
    args = parser.parse_args()
    r = rig()
    builds = {"before": load(args.before), "after": load(args.after)}
    cases: Dict[Tuple[str, str, str], Callable[[], Any]] = {}

    def passes(m: ModuleType, method: str) -> Tuple[Callable[[], Any], Callable[[], Any]]:
        common = (method, r["palette"], r["vertices"], r["joints"], r["weights"], None, None, None)

        def forward() -> Any:
            return m.batched_skin(*common, 1, args.normals)

        def backward() -> Any:
            return m.batched_skin_backward(*common, r["grad"], (True, True, False), 1, args.normals)

        return forward, backward

    for name, m in builds.items():
        for method in ("linear", "dq"):
            cases[name, method, "fwd"], cases[name, method, "bwd"] = passes(m, method)
    times: Dict[Tuple[str, str, str], List[float]] = {key: [] for key in cases}
    for f in cases.values():
        f()
    for _ in range(args.repeats):
        for key, f in cases.items():
            start = time.perf_counter()
            f()
            times[key].append((time.perf_counter() - start) * 1e3)
    print(f"load {os.getloadavg()[0]:.2f}; {N} vertices, {J} joints, batch {B}, {K} influences, "
          f"threads 1, {'normals' if args.normals else 'positions'}, ms min/median of {args.repeats}")
    for name in builds:
        low = {(m, p): min(times[name, m, p]) for m in ("linear", "dq") for p in ("fwd", "bwd")}
        mid = {(m, p): statistics.median(times[name, m, p]) for m in ("linear", "dq") for p in ("fwd", "bwd")}
        cells = " ".join(f"{m} {p} {low[m, p]:.1f}/{mid[m, p]:.1f}" for m, p in low)

        def ratio(t: Dict[Tuple[str, str], float]) -> float:
            return (t["dq", "fwd"] + t["dq", "bwd"]) / (t["linear", "fwd"] + t["linear", "bwd"])

        print(f"{name:6}: {cells} | dq/linear fwd+bwd {ratio(low):.2f}x (min) {ratio(mid):.2f}x (median)")


if __name__ == "__main__":
    main()
