"""Blended's speed on a real file's blend values, beside LBS and DQS on the same mesh.

    python crates/skinblend-py/bench/bench_blended.py FILE JOINT[,JOINT...] [--repeats 7]

JOINT: an index into the first skin's joints. The blend values come from the joint rule of
``skinblend dq-blend --dq-joints`` (``blend_values_from_joints``: each vertex takes as much DQS
as its weights put on those joints), so they hold the 0s, 1s and values between that a painted
map has, in the file's vertex order. The first skinned primitive is repeated to at least 100,000
vertices (the order, and so the mix of each block of eight vertices, kept), then
``Skinner.skin(out=)`` runs each method on one thread with positions (and normals where the
file has them) under one rigid palette (``benchmark_mesh``'s). Prints the share of vertices at 0
and at 1, the share of blocks of eight all at 0 or all at 1 (which run LBS's or DQS's kernel
alone), and the medians. ``--values zero`` (or ``one``) sets every value to 0 (or 1) but the
last vertex's, 0.5, so that the call still runs blended's kernel, whose blocks are then all of
one kind: what those blocks cost inside it, beside the method's own call; ``--values half``
sets every value to 0.5 (every block blends both). Not a test: figures depend on the machine
and its load. The last row, ``dq one-shot``, is ``skinblend.skin`` with DQS: a one-shot call
never has the mesh's per-call tally of sign flips, so it counts them block by block over the
file's own weights, zeros included (and checks and copies the influences, as every one-shot
does).
"""

from __future__ import annotations

import argparse
import functools
import statistics
from typing import Callable, Dict, List

import numpy as np

import skinblend
from sampling import seconds_per_call

MIN_SAMPLE_S = 0.05  # one sample repeats the call for at least this long
MIN_VERTICES = 100_000  # the mesh is repeated to at least this many vertices


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file")
    parser.add_argument("joints", help="the rule's joints: skin joint indices, comma-separated")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--values", choices=("rule", "zero", "one", "half"), default="rule")
    args = parser.parse_args()
    model = skinblend.load(args.file)
    primitive = model.primitive(0, 0)
    joint_count = model.info()["skins"][0]["joints"]
    rule = [int(joint) for joint in args.joints.split(",")]

    def required(name: str) -> np.ndarray:
        array = primitive[name]
        if array is None:
            raise SystemExit(f"{args.file}: the first primitive has no {name}")
        return np.asarray(array)

    joints = required("joints").astype(np.uint16)
    weights = required("weights").astype(np.float32)
    values = skinblend.blend_values_from_joints(joints, weights, rule)
    if args.values != "rule":
        constant = {"zero": 0.0, "one": 1.0, "half": 0.5}[args.values]
        values = np.full_like(values, constant)
        values[-1] = 0.5
    blocks = values[: len(values) // 8 * 8].reshape(-1, 8)
    uniform = np.mean(np.all(blocks == 0.0, axis=1) | np.all(blocks == 1.0, axis=1))
    copies = -(-MIN_VERTICES // len(values))

    def tiled(array: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(np.concatenate([array] * copies))

    positions = tiled(required("positions"))
    normals = None if primitive["normals"] is None else tiled(required("normals"))
    joints, weights, values = tiled(joints), tiled(weights), tiled(values)
    n = len(positions)
    palette = skinblend.benchmark_mesh(8, 4, joint_count)["palette"]
    out = np.empty((n, 3), np.float32)
    out_normals = None if normals is None else np.empty((n, 3), np.float32)
    skinners = {
        method: skinblend.Skinner(positions, joints, weights, normals=normals, method=method,
                                  threads=1, blend_values=values if method == "blended" else None)
        for method in ("linear", "dq", "blended")
    }
    def frame(skinner: skinblend.Skinner) -> None:
        skinner.skin(palette, out=out, out_normals=out_normals)

    def dq_one_shot() -> None:
        skinblend.skin(positions, joints, weights, palette, normals=normals, method="dq",
                       threads=1)

    calls: Dict[str, Callable[[], None]] = {
        method: functools.partial(frame, skinner) for method, skinner in skinners.items()
    }
    calls["dq one-shot"] = dq_one_shot
    times: Dict[str, List[float]] = {label: [] for label in calls}
    for _ in range(args.repeats):
        for label, call in calls.items():
            times[label].append(seconds_per_call(call, MIN_SAMPLE_S))
    median = {method: statistics.median(t) for method, t in times.items()}
    attributes = "positions" if normals is None else "positions and normals"
    print(f"{args.file}: {n // copies} vertices x {copies} = {n}, {attributes}; "
          f"rule {rule}, values {args.values}")
    print(f"values at 0: {np.mean(values == 0.0):.2f}, at 1: {np.mean(values == 1.0):.2f}; "
          f"blocks of eight all 0 or all 1: {uniform:.2f}")
    print("| method | ms per frame | M vertices/s | time / DQS's |")
    print("|---|---:|---:|---:|")
    for method, seconds in median.items():
        print(f"| {method} | {seconds * 1e3:.3f} | {n / seconds / 1e6:.1f} "
              f"| {seconds / median['dq']:.2f} |")


if __name__ == "__main__":
    main()
