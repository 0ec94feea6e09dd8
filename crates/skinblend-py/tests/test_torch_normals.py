"""skinblend.torch's normals (``skin(..., normals=...)``): gradcheck of every method and input,
float32 against float64, the forward against the numpy API, LBS against a plain torch autograd
implementation, and the singular normal matrix and the result without length.

Needs torch (CI installs it); outside CI a missing torch skips, under CI=true it fails."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple, cast

import numpy as np
import pytest

from conftest import IN_CI

try:
    import torch
except ImportError:
    if IN_CI:
        raise
    pytest.skip("torch is not installed (pip install torch)", allow_module_level=True)

import skinblend
from skinblend import Method
from skinblend.torch import skin
from test_torch import F32_TOLERANCE, random_rig, rotation

METHODS = ["linear", "dq", "cor", "blended"]
#: The float32 normals against the numpy API's (the library's f32 reference): unit vectors
#: from the same f32 cofactor and quaternion arithmetic in another order, ~1e-6; a wrong sign
#: or matrix is off by order 1.
LIBRARY_TOLERANCE = 2e-5
#: LBS normals against plain torch in float64: the same products in another order, ~1e-15
#: relative, with a margin for the renormalization.
LBS_F64_TOLERANCE = 1e-10
#: The singular band of the library: ``|det| <= 1e-6 * (largest column length)**3``.
SINGULAR_RELATIVE = 1e-6


def with_normals(rig: Dict[str, torch.Tensor], seed: int) -> Dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    n = rig["vertices"].shape[-2]
    normals = 2 * torch.rand(n, 3, generator=g, dtype=torch.float64) - 1
    return {**rig, "normals": normals.to(rig["vertices"].dtype)}


def run(rig: Dict[str, torch.Tensor], method: str) -> Tuple[torch.Tensor, torch.Tensor]:
    return skin(rig["vertices"], rig["palette"], rig["joints"], rig["weights"], method=cast(Method, method),
                bind_origins=rig["bind_origins"], centers=rig["centers"],
                blend_values=rig["blend_values"], normals=rig["normals"])


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("wrt", ["palette", "vertices", "normals", "weights"])
def test_gradcheck_positions_and_normals(method: str, wrt: str) -> None:
    # Palettes and weights per batch element, one shared mesh and normals.
    rig = with_normals(random_rig((2,), seed=hash((method, wrt, "n")) % 1000), seed=1)
    x = rig[wrt].clone().requires_grad_(True)

    def f(value: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        return run({**rig, wrt: value}, method)

    # gradcheck's default tolerances (atol 1e-5, rtol 1e-3) against its own float64 central
    # differences (eps 1e-6), both outputs.
    assert torch.autograd.gradcheck(f, (x,))


@pytest.mark.parametrize("wrt", ["palette", "normals", "weights"])
def test_gradcheck_dq_normals_rigid_palettes_lane_kernel(wrt: str) -> None:
    # Rotations and translations only (no residual), 19 vertices: two groups of eight for the
    # lane kernel (gradient/lanes.rs) and three for the scalar one.
    rig = with_normals(random_rig((2,), n=19, joints=6, seed=18), seed=7)
    rig["palette"][..., :3, :3] = rotation(torch.rand(2, 6, 3, dtype=torch.float64) * 4 - 2)
    x = rig[wrt].clone().requires_grad_(True)

    def f(value: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        return run({**rig, wrt: value}, "dq")

    assert torch.autograd.gradcheck(f, (x,))


@pytest.mark.parametrize("method", METHODS)
def test_gradcheck_batched_normals_shared_palette(method: str) -> None:
    rig = with_normals(random_rig((), seed=6), seed=2)
    rig["normals"] = torch.stack([rig["normals"], rig["normals"].flip(-1)], 0)
    inputs = tuple(rig[name].clone().requires_grad_(True) for name in ("palette", "normals", "weights"))

    def f(p: torch.Tensor, n: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        positions, normals = run({**rig, "palette": p, "normals": n, "weights": w}, method)
        assert positions.shape == normals.shape == (2, rig["vertices"].shape[0], 3)
        return normals

    assert torch.autograd.gradcheck(f, inputs)


@pytest.mark.parametrize("method", METHODS)
def test_float32_normal_gradients_match_float64(method: str) -> None:
    rig64 = with_normals(random_rig((3,), n=40, seed=12), seed=3)
    rig32 = {name: (t.float() if t.is_floating_point() else t) for name, t in rig64.items()}
    results: List[List[Optional[torch.Tensor]]] = []
    for rig in (rig32, rig64):
        leaves = {name: rig[name].clone().requires_grad_(True) for name in ("palette", "normals", "weights")}
        _, normals = run({**rig, **leaves}, method)
        g = torch.linspace(-1, 1, normals.numel(), dtype=torch.float64).reshape(normals.shape)
        (normals * g.to(normals.dtype)).sum().backward()
        grads = [leaves[name].grad for name in ("palette", "normals", "weights")]
        results.append([cast(Optional[torch.Tensor], normals)] + grads)
    for a, b in zip(*results):
        assert a is not None and b is not None
        error = (a.double() - b).abs().max() / b.abs().max()
        assert error <= F32_TOLERANCE, error


def test_normals_match_the_numpy_api() -> None:
    rig = with_normals(random_rig((2,), n=50, seed=9, dtype=torch.float32), seed=4)
    for method in METHODS:
        positions, normals = run(rig, method)
        assert normals.shape == (2, 50, 3) and normals.dtype == torch.float32
        for i in range(2):
            expected = skinblend.skin(
                rig["vertices"].numpy(), rig["joints"].numpy(), rig["weights"][i].numpy(),
                rig["palette"][i].numpy(), method=cast(Method, method), normals=rig["normals"].numpy(),
                bind_origins=rig["bind_origins"].numpy(), centers=rig["centers"].numpy(),
                blend_values=rig["blend_values"].numpy(),
            )
            assert expected.normals is not None
            assert np.abs(normals[i].numpy() - expected.normals).max() <= LIBRARY_TOLERANCE, method
            assert np.abs(positions[i].numpy() - expected.positions).max() <= (
                LIBRARY_TOLERANCE * (1 + np.abs(expected.positions).max()))


def torch_lbs_normals(normals: torch.Tensor, palette: torch.Tensor, joints: torch.Tensor,
                      weights: torch.Tensor) -> torch.Tensor:
    """LBS normals in plain torch, the library's rule: the cofactor of the blended 3x3 times
    the sign of its determinant (no sign inside the singular band), renormalized."""
    w = weights / weights.sum(-1, keepdim=True)
    a = (w[..., None, None] * palette[..., joints, :3, :3]).sum(-3)  # (..., N, 3, 3)
    c0, c1, c2 = a[..., :, 0], a[..., :, 1], a[..., :, 2]
    cofactor = torch.stack([torch.cross(c1, c2, dim=-1), torch.cross(c2, c0, dim=-1),
                            torch.cross(c0, c1, dim=-1)], -1)
    det = (c0 * cofactor[..., 0]).sum(-1)
    largest = torch.stack([c0.norm(dim=-1), c1.norm(dim=-1), c2.norm(dim=-1)], -1).amax(-1)
    singular = det.abs() <= SINGULAR_RELATIVE * largest**3
    sign = torch.where(singular | (det >= 0), 1.0, -1.0).to(a.dtype)
    u = sign[..., None] * (cofactor @ normals[..., None])[..., 0]
    return u / u.norm(dim=-1, keepdim=True)


def singular_rig() -> Dict[str, torch.Tensor]:
    """Two joints, ``diag(1, 1, 2)`` and ``diag(1, 1, -2)`` (for DQS: the same rotation, a
    residual with a mirror), at equal weights: the blended 3x3 (LBS) and the blended residual
    (DQS) are ``diag(1, 1, 0)``, determinant 0."""
    palette = torch.zeros(2, 4, 4, dtype=torch.float64)
    palette[:, 0, 0] = palette[:, 1, 1] = palette[:, 3, 3] = 1
    palette[0, 2, 2], palette[1, 2, 2] = 2.0, -2.0
    palette[:, 0, 3] = torch.tensor([0.25, -0.5], dtype=torch.float64)
    return {
        "palette": palette,
        "vertices": torch.tensor([[0.1, 0.2, 0.3], [0.0, -1.0, 0.5]], dtype=torch.float64),
        "normals": torch.tensor([[0.3, 0.4, 0.8], [1.0, 0.0, 0.0]], dtype=torch.float64),
        "joints": torch.tensor([[0, 1], [0, 1]]),
        "weights": torch.full((2, 2), 0.5, dtype=torch.float64),
    }


def lbs_normals(rig: Dict[str, torch.Tensor], f: str) -> Tuple[torch.Tensor, ...]:
    """``f``'s LBS normals of ``rig``, their gradients (palette, normals, weights) of a fixed
    weighted sum."""
    leaves = {name: rig[name].clone().requires_grad_(True) for name in ("palette", "normals", "weights")}
    if f == "skinblend":
        _, out = skin(rig["vertices"], leaves["palette"], rig["joints"], leaves["weights"],
                      method="linear", normals=leaves["normals"])
    else:
        out = torch_lbs_normals(leaves["normals"], leaves["palette"], rig["joints"], leaves["weights"])
    g = torch.linspace(-1, 1, out.numel(), dtype=out.dtype).reshape(out.shape)
    (out * g).sum().backward()
    grads = tuple(cast(torch.Tensor, leaves[name].grad) for name in ("palette", "normals", "weights"))
    return (out,) + grads


def test_lbs_normals_equal_plain_torch_forward_and_backward() -> None:
    rig = with_normals(random_rig((2, 3), n=200, k=4, joints=24, seed=13), seed=5)
    for ours, theirs in zip(lbs_normals(rig, "skinblend"), lbs_normals(rig, "torch")):
        error = ((ours - theirs).abs().max() / theirs.abs().max()).item()
        assert error <= LBS_F64_TOLERANCE, error


def test_singular_normal_matrix_takes_the_unsigned_cofactor() -> None:
    # Vertex 0 only (vertex 1's result has no length; the next test).
    rig = {name: (t if name == "palette" else t[:1]) for name, t in singular_rig().items()}
    ours = lbs_normals(rig, "skinblend")
    theirs = lbs_normals(rig, "torch")
    # cofactor(diag(1, 1, 0)) = diag(0, 0, 1): the normal's z alone.
    assert torch.allclose(ours[0], torch.tensor([[0.0, 0.0, 1.0]], dtype=torch.float64), atol=1e-15)
    for a, b in zip(ours, theirs):
        assert torch.allclose(a, b, rtol=0, atol=LBS_F64_TOLERANCE)
    assert ours[1].abs().max() > 1e-2  # the palette moves the normal even here
    methods: Tuple[Method, ...] = ("linear", "dq")
    for method in methods:
        _, normals = skin(rig["vertices"], rig["palette"], rig["joints"], rig["weights"],
                          method=method, normals=rig["normals"])
        expected = skinblend.skin(rig["vertices"].float().numpy(), rig["joints"].numpy(),
                                  rig["weights"].float().numpy(), rig["palette"].float().numpy(),
                                  method=method, normals=rig["normals"].float().numpy())
        assert expected.normals is not None
        assert np.abs(normals.numpy() - expected.normals).max() <= LIBRARY_TOLERANCE, method
        # The gradient of the unsigned cofactor: differences with eps 1e-8 move the determinant
        # by ~1e-8, inside the band (1e-6 here), so they see the same polynomial; their
        # round-off (~1e-16 / 1e-8) sits under atol 1e-6.
        x = rig["palette"].clone().requires_grad_(True)
        assert torch.autograd.gradcheck(
            lambda p: skin(rig["vertices"], p, rig["joints"], rig["weights"], method=method,
                           normals=rig["normals"])[1], (x,), eps=1e-8, atol=1e-6)


@pytest.mark.parametrize("method", ["linear", "dq", "cor"])
def test_a_result_without_length_passes_the_input_normal_through(method: str) -> None:
    rig = singular_rig()
    normals = rig["normals"].clone().requires_grad_(True)
    palette = rig["palette"].clone().requires_grad_(True)
    weights = rig["weights"].clone().requires_grad_(True)
    _, out = skin(rig["vertices"], palette, rig["joints"], weights, method=cast(Method, method),
                  normals=normals, centers=rig["vertices"])
    # cofactor(diag(1, 1, 0)) @ (1, 0, 0) = 0: the input normal, as the library returns it.
    assert out[1].tolist() == [1.0, 0.0, 0.0]
    g = torch.tensor([[0.0, 0.0, 0.0], [0.5, -1.0, 0.75]], dtype=torch.float64)
    (out * g).sum().backward()
    assert normals.grad is not None and palette.grad is not None and weights.grad is not None
    assert normals.grad[1].tolist() == [0.5, -1.0, 0.75]  # the identity
    assert weights.grad[1].abs().max() == 0 and palette.grad.abs().max() == 0


def test_normals_shape_errors() -> None:
    rig = with_normals(random_rig((), seed=2), seed=6)
    with pytest.raises(ValueError, match="normals"):
        skin(rig["vertices"], rig["palette"], rig["joints"], rig["weights"], normals=rig["normals"][:3])
    with pytest.raises(TypeError, match="normals"):
        skin(rig["vertices"], rig["palette"], rig["joints"], rig["weights"], normals=rig["normals"].float())
