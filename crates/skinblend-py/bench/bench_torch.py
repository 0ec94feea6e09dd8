"""skinblend.torch's LBS and DQS forward + backward against smplx-style torch LBS.

    python crates/skinblend-py/bench/bench_torch.py [--repeats 7] [--batch 64]

SMPL's size: 6,890 vertices, 24 joints, a batch of 64 posed templates (``vertices``
``(64, N, 3)``, as SMPL's shape blend makes them) under 64 palettes; 4 influences per vertex
(random, the same weights in both forms). Gradients of ``Σ g · v'`` with respect to the
palettes and the vertices (the weights are constants, as SMPL's are), each case timed forward +
backward:

- ``torch W@A``: smplx's ``lbs()`` skinning step as written there,
  ``T = (W @ A.view(B, J, 16)).view(B, N, 4, 4)``, then ``v' = (T @ [v, 1])[..., :3]``, dense
  ``W (N, J)``, torch's autograd;
- ``skinblend linear`` and ``skinblend dq``: ``skinblend.torch.skin(v, A, joints, weights,
  method=...)`` with sparse ``joints``/``weights (N, 4)``.

One thread and two (``torch.set_num_threads`` and ``threads=``). Each sample repeats the call
for at least 50 ms; cases are interleaved and repeated, medians shown, with the ratios the issue
asks for: torch W@A / skinblend linear (above 1: skinblend faster) and skinblend dq / skinblend
linear. Not a test: figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import os
import statistics
from typing import Callable, Dict, List

import torch

import skinblend
from skinblend import Method
from skinblend.torch import skin
from sampling import seconds_per_call

N, J, K = 6890, 24, 4
MIN_SAMPLE_S = 0.05


def rig(batch: int) -> Dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    axis = torch.randn(batch, J, 3, generator=g)
    angle = axis.norm(dim=-1, keepdim=True)
    k = axis / angle
    kx = torch.zeros(batch, J, 3, 3)
    kx[..., 0, 1], kx[..., 0, 2], kx[..., 1, 2] = -k[..., 2], k[..., 1], -k[..., 0]
    kx = kx - kx.transpose(-1, -2)
    s, c = torch.sin(angle)[..., None], torch.cos(angle)[..., None]
    palette = torch.zeros(batch, J, 4, 4)
    palette[..., :3, :3] = torch.eye(3) + s * kx + (1 - c) * kx @ kx
    palette[..., :3, 3] = torch.randn(batch, J, 3, generator=g) * 0.1
    palette[..., 3, 3] = 1
    joints = torch.stack([torch.randperm(J, generator=g)[:K] for _ in range(N)])
    weights = torch.rand(N, K, generator=g) + 0.05
    weights /= weights.sum(-1, keepdim=True)
    dense = torch.zeros(N, J).scatter_(1, joints, weights)
    vertices = torch.randn(batch, N, 3, generator=g)
    grad = torch.randn(batch, N, 3, generator=g)
    return {"palette": palette, "joints": joints, "weights": weights, "dense": dense,
            "vertices": vertices, "grad": grad}


def torch_lbs(vertices: torch.Tensor, palette: torch.Tensor, dense: torch.Tensor) -> torch.Tensor:
    """smplx's ``lbs()`` skinning step."""
    b = palette.shape[0]
    t = torch.matmul(dense, palette.view(b, J, 16)).view(b, -1, 4, 4)
    homogeneous = torch.cat([vertices, torch.ones_like(vertices[..., :1])], dim=2)
    return torch.matmul(t, homogeneous.unsqueeze(-1))[:, :, :3, 0]


def case(r: Dict[str, torch.Tensor], name: str, threads: int) -> Callable[[], None]:
    def run() -> None:
        palette = r["palette"].clone().requires_grad_(True)
        vertices = r["vertices"].clone().requires_grad_(True)
        if name == "torch W@A":
            out = torch_lbs(vertices, palette, r["dense"])
        else:
            method: Method = "linear" if name == "skinblend linear" else "dq"
            out = skin(vertices, palette, r["joints"], r["weights"], method=method, threads=threads)
        (out * r["grad"]).sum().backward()
    return run


def sample(f: Callable[[], None]) -> float:
    f()  # once first: torch's first call builds what later calls reuse
    return seconds_per_call(f, MIN_SAMPLE_S)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    r = rig(args.batch)
    names = ["torch W@A", "skinblend linear", "skinblend dq"]
    print(f"torch {torch.__version__}, skinblend SIMD {skinblend.simd_backend()}, "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; "
          f"{N} vertices, {J} joints, batch {args.batch}, fwd+bwd, ms (median of {args.repeats})")
    for threads in (1, 2):
        torch.set_num_threads(threads)
        times: Dict[str, List[float]] = {n: [] for n in names}
        for _ in range(args.repeats):
            for n in names:
                times[n].append(sample(case(r, n, threads)))
        med = {n: statistics.median(t) * 1e3 for n, t in times.items()}
        cells = ", ".join(f"{n} {med[n]:.1f}" for n in names)
        print(f"threads {threads}: {cells}; torch W@A / skinblend linear "
              f"{med['torch W@A'] / med['skinblend linear']:.2f}x, skinblend dq / linear "
              f"{med['skinblend dq'] / med['skinblend linear']:.2f}x")


if __name__ == "__main__":
    main()
