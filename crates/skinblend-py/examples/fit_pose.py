"""Fit a joint's pose to target points through skinblend.torch, with DQS and with LBS.

    python crates/skinblend-py/examples/fit_pose.py

A cylinder along x (20 rings of 16 vertices, radius 0.3) on two joints: joint 0 at the origin
holds the left end, joint 1 at x = 1 the right end, the weights blending smoothly between
x = 0.5 and 1.5. The targets are the same cylinder twisted 170° about its axis, each ring by
its weight's share of the twist (the shape a forearm takes). The unknown is joint 1's rotation,
a quaternion from the identity; torch.optim.Adam fits it through ``skinblend.torch.skin``,
once with ``method="dq"`` and once with ``method="linear"``, from the same start.

DQS reaches the twist (a small residual: its blend of two coaxial rotations is not exactly
linear in the weight). LBS cannot: blending the matrices of two rotations 170° apart collapses
the middle ring toward the axis (the candy wrapper), so the fit settles on a compromise that
neither twists enough nor keeps the radius. The script prints the loss, the fitted angle and the
middle ring's radius for each method; tests/test_torch_example.py runs it.
"""

from __future__ import annotations

import math
from typing import Dict, Tuple

import torch

from skinblend import Method
from skinblend.torch import skin

RINGS, PER_RING, RADIUS, TWIST_DEG = 20, 16, 0.3, 170.0


def cylinder() -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Vertices ``(N, 3)``, joints ``(N, 2)``, weights ``(N, 2)``."""
    x = torch.linspace(0.0, 2.0, RINGS).repeat_interleave(PER_RING)
    a = torch.arange(PER_RING).repeat(RINGS) * (2 * math.pi / PER_RING)
    vertices = torch.stack([x, RADIUS * torch.cos(a), RADIUS * torch.sin(a)], -1)
    t = ((x - 0.5) / 1.0).clamp(0.0, 1.0)
    share = t * t * (3 - 2 * t)  # smoothstep: joint 1's weight
    weights = torch.stack([1 - share, share], -1)
    joints = torch.tensor([[0, 1]]).expand(len(x), 2)
    return vertices, joints, weights


def rotation_from_quaternion(q: torch.Tensor) -> torch.Tensor:
    x, y, z, w = (q / q.norm()).unbind()
    return torch.stack([
        torch.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)]),
        torch.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)]),
        torch.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]),
    ])


def palette(q: torch.Tensor) -> torch.Tensor:
    """Joint 0 at rest; joint 1 rotated by ``q`` about its origin (1, 0, 0)."""
    center = torch.tensor([1.0, 0.0, 0.0])
    rotation = rotation_from_quaternion(q)
    second = torch.cat([rotation, (center - rotation @ center)[:, None]], 1)
    bottom = torch.tensor([[0.0, 0.0, 0.0, 1.0]])
    return torch.stack([torch.eye(4), torch.cat([second, bottom], 0)])


def targets(vertices: torch.Tensor, share: torch.Tensor) -> torch.Tensor:
    angle = share * math.radians(TWIST_DEG)
    y, z = vertices[:, 1], vertices[:, 2]
    c, s = torch.cos(angle), torch.sin(angle)
    return torch.stack([vertices[:, 0], c * y - s * z, s * y + c * z], -1)


def fit(method: Method, steps: int = 300) -> Dict[str, float]:
    vertices, joints, weights = cylinder()
    goal = targets(vertices, weights[:, 1])
    # A start slightly off the identity, so that the twist's direction is defined.
    q = torch.tensor([0.05, 0.0, 0.0, 1.0], requires_grad=True)
    optimizer = torch.optim.Adam([q], lr=0.02)
    for _ in range(steps):
        optimizer.zero_grad()
        posed = skin(vertices, palette(q), joints, weights, method=method)
        loss = (posed - goal).square().sum(-1).mean()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        posed = skin(vertices, palette(q), joints, weights, method=method)
        loss = (posed - goal).square().sum(-1).mean()
        middle = posed[(RINGS // 2) * PER_RING:(RINGS // 2 + 1) * PER_RING]
        radius = middle[:, 1:].norm(dim=-1).min() / RADIUS
        unit = q / q.norm()
        angle = 2 * math.degrees(math.atan2(float(unit[:3].norm()), abs(float(unit[3]))))
    return {"loss": float(loss), "angle_deg": angle, "middle_radius": float(radius)}


def main() -> Dict[str, Dict[str, float]]:
    methods: Tuple[Method, ...] = ("dq", "linear")
    results: Dict[str, Dict[str, float]] = {method: fit(method) for method in methods}
    print(f"target: a {TWIST_DEG:.0f} degree twist; mean squared distance after 300 Adam steps")
    for method, r in results.items():
        print(f"{method:>6}: loss {r['loss']:.5f}, fitted angle {r['angle_deg']:.1f} deg, "
              f"middle ring radius {100 * r['middle_radius']:.0f}% of rest")
    return results


if __name__ == "__main__":
    main()
