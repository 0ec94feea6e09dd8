"""skinblend.torch: gradcheck of every method and input on small random rigs (scaled, sheared
and mirrored joints included), float32 against float64, LBS against a plain torch autograd
implementation, batching, zero-copy DLPack, and the errors.

Needs torch (CI installs it); outside CI a missing torch skips, under CI=true it fails."""

from __future__ import annotations

import math
from typing import Any, Dict, Tuple, cast

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
import skinblend.torch as st
from skinblend import Method
from skinblend.torch import skin

#: float32 gradients against float64 ones, relative to the largest: f32 Gram–Schmidt,
#: quaternion and blend arithmetic carry ~1e-6 relative error per step, summed over at most a
#: few dozen vertices per joint; 1e-4 leaves a margin and still catches a wrong term (order 1).
F32_TOLERANCE = 1e-4
#: LBS against plain torch in float64: the same sums in another order, ~1e-15 relative.
LBS_F64_TOLERANCE = 1e-11
#: ... and in float32 (values of order 1-10): ~1e-6 relative rounding, with a margin.
LBS_F32_TOLERANCE = 2e-5


def rotation(axis_angle: torch.Tensor) -> torch.Tensor:
    """Rodrigues' formula, differentiable: ``(..., 3)`` → ``(..., 3, 3)``."""
    angle = axis_angle.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    k = axis_angle / angle
    zero = torch.zeros_like(k[..., 0])
    kx = torch.stack([
        torch.stack([zero, -k[..., 2], k[..., 1]], -1),
        torch.stack([k[..., 2], zero, -k[..., 0]], -1),
        torch.stack([-k[..., 1], k[..., 0], zero], -1),
    ], -2)
    eye = torch.eye(3, dtype=axis_angle.dtype).expand(kx.shape)
    s, c = torch.sin(angle)[..., None], torch.cos(angle)[..., None]
    return eye + s * kx + (1 - c) * (kx @ kx)


def random_rig(batch: Tuple[int, ...], joints: int = 4, n: int = 7, k: int = 3,
               seed: int = 0, dtype: torch.dtype = torch.float64) -> Dict[str, torch.Tensor]:
    """Palettes ``batch + (J, 4, 4)``: rotations times (per joint) nothing, a scale, a shear
    or a mirror; strictly positive weights (gradcheck perturbs them both ways) per batch
    element; bind origins and CoR centers."""
    g = torch.Generator().manual_seed(seed)
    r = lambda *shape: torch.rand(*shape, generator=g, dtype=torch.float64)  # noqa: E731
    parts = [torch.eye(3, dtype=torch.float64),
             torch.diag(torch.tensor([1.4, 0.7, 1.1], dtype=torch.float64)),
             torch.tensor([[1.0, 0.3, -0.2], [0.0, 1.2, 0.25], [0.0, 0.0, 0.8]], dtype=torch.float64),
             torch.diag(torch.tensor([1.0, 1.0, -1.2], dtype=torch.float64))]
    part = torch.stack([parts[j % 4] for j in range(joints)])
    rot = rotation(4 * r(*batch, joints, 3) - 2)
    palette = torch.zeros(*batch, joints, 4, 4, dtype=torch.float64)
    palette[..., :3, :3] = rot @ part
    palette[..., :3, 3] = 2 * r(*batch, joints, 3) - 1
    palette[..., 3, 3] = 1
    vertices = 2 * r(n, 3) - 1
    joint_ids = torch.stack([(torch.arange(n) + 2 * s) % joints for s in range(k)], -1)
    weights = 0.2 + r(*batch, n, k)
    return {
        "palette": palette.to(dtype), "vertices": vertices.to(dtype), "joints": joint_ids,
        "weights": weights.to(dtype), "bind_origins": (2 * r(joints, 3) - 1).to(dtype),
        "centers": (r(n, 3) - 0.5).to(dtype),
        # Blended: LBS alone, DQS alone and between.
        "blend_values": torch.tensor([0.0, 1.0, 0.3, 0.7] * n, dtype=dtype)[:n],
    }


def run(rig: Dict[str, torch.Tensor], method: str) -> torch.Tensor:
    return skin(rig["vertices"], rig["palette"], rig["joints"], rig["weights"], method=cast(Method, method),
                bind_origins=rig["bind_origins"], centers=rig["centers"],
                blend_values=rig["blend_values"])


@pytest.mark.parametrize("method", ["linear", "dq", "cor", "blended"])
@pytest.mark.parametrize("wrt", ["palette", "vertices", "weights"])
def test_gradcheck_each_method_and_input(method: str, wrt: str) -> None:
    # Palettes per batch element, one shared mesh, weights per element: every broadcast kind.
    rig = random_rig((2,), seed=hash((method, wrt)) % 1000)
    x = rig[wrt].clone().requires_grad_(True)

    def f(value: torch.Tensor) -> torch.Tensor:
        return run({**rig, wrt: value}, method)

    # gradcheck's default tolerances (atol 1e-5, rtol 1e-3) against its own float64 central
    # differences (eps 1e-6).
    assert torch.autograd.gradcheck(f, (x,))


@pytest.mark.parametrize("wrt", ["palette", "vertices", "weights"])
def test_gradcheck_dq_rigid_palettes_lane_kernel(wrt: str) -> None:
    # Rotations and translations only (no residual), 19 vertices: two groups of eight for the
    # lane kernel (gradient/lanes.rs) and three for the scalar one.
    rig = random_rig((2,), n=19, joints=6, seed=17)
    rig["palette"][..., :3, :3] = rotation(torch.rand(2, 6, 3, dtype=torch.float64) * 4 - 2)
    x = rig[wrt].clone().requires_grad_(True)

    def f(value: torch.Tensor) -> torch.Tensor:
        return run({**rig, wrt: value}, "dq")

    assert torch.autograd.gradcheck(f, (x,))


@pytest.mark.parametrize("method", ["linear", "dq", "cor", "blended"])
def test_gradcheck_shared_palette_batched_vertices(method: str) -> None:
    rig = random_rig((), seed=5)
    rig["vertices"] = torch.stack([rig["vertices"], 0.5 * rig["vertices"] + 0.1], 0)
    inputs = tuple(rig[name].clone().requires_grad_(True) for name in ("palette", "vertices", "weights"))

    def f(p: torch.Tensor, v: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return run({**rig, "palette": p, "vertices": v, "weights": w}, method)

    assert torch.autograd.gradcheck(f, inputs)


def gradients(rig: Dict[str, torch.Tensor], method: str, seed: int) -> Tuple[torch.Tensor, ...]:
    leaves = {name: rig[name].clone().requires_grad_(True) for name in ("palette", "vertices", "weights")}
    out = run({**rig, **leaves}, method)
    g = torch.Generator().manual_seed(seed)
    (out * torch.rand(out.shape, generator=g, dtype=torch.float64).to(out.dtype)).sum().backward()
    result = [out]
    for name in ("palette", "vertices", "weights"):
        grad = leaves[name].grad
        assert grad is not None
        result.append(grad)
    return tuple(result)


@pytest.mark.parametrize("method", ["linear", "dq", "cor", "blended"])
def test_float32_gradients_match_float64(method: str) -> None:
    rig64 = random_rig((3,), n=40, seed=11)
    rig32 = {name: (t.float() if t.is_floating_point() else t) for name, t in rig64.items()}
    for a, b in zip(gradients(rig32, method, 1), gradients(rig64, method, 1)):
        error = (a.double() - b).abs().max() / b.abs().max()
        assert error <= F32_TOLERANCE, error


def torch_lbs(vertices: torch.Tensor, palette: torch.Tensor, joints: torch.Tensor,
              weights: torch.Tensor) -> torch.Tensor:
    """LBS in plain torch, renormalizing the weights as skinblend does."""
    w = weights / weights.sum(-1, keepdim=True)
    blended = (w[..., None, None] * palette[..., joints, :3, :]).sum(-3)  # (..., N, 3, 4)
    return (blended[..., :3] @ vertices[..., None])[..., 0] + blended[..., 3]


@pytest.mark.parametrize("dtype,tolerance", [(torch.float64, LBS_F64_TOLERANCE),
                                             (torch.float32, LBS_F32_TOLERANCE)])
def test_lbs_equals_plain_torch_forward_and_backward(dtype: torch.dtype, tolerance: float) -> None:
    rig = random_rig((2, 3), n=300, k=4, joints=24, seed=3, dtype=dtype)
    results = []
    for f in (lambda v, p, w: skin(v, p, rig["joints"], w, method="linear"),
              lambda v, p, w: torch_lbs(v, p, rig["joints"], w)):
        v, p, w = (rig[n].clone().requires_grad_(True) for n in ("vertices", "palette", "weights"))
        out = f(v, p, w)
        (out * torch.linspace(-1, 1, out.numel(), dtype=dtype).reshape(out.shape)).sum().backward()
        results.append((out, v.grad, p.grad, w.grad))
    for ours, theirs in zip(*results):
        assert ours is not None and theirs is not None
        error = ((ours - theirs).abs().max() / theirs.abs().max()).item()
        assert error <= tolerance, error


def test_matches_the_numpy_api_and_broadcasts() -> None:
    rig = random_rig((2, 3), n=50, seed=8, dtype=torch.float32)
    for method in ("linear", "dq", "cor", "blended"):
        out = run(rig, method)
        assert out.shape == (2, 3, 50, 3) and out.dtype == torch.float32
        for i in range(2):
            for j in range(3):
                expected = skinblend.skin(
                    rig["vertices"].numpy(), rig["joints"].numpy(), rig["weights"][i, j].numpy(),
                    rig["palette"][i, j].numpy(), method=method,
                    bind_origins=rig["bind_origins"].numpy(), centers=rig["centers"].numpy(),
                    blend_values=rig["blend_values"].numpy(),
                ).positions
                assert np.abs(out[i, j].numpy() - expected).max() <= 1e-5 * (1 + np.abs(expected).max())


def test_dense_weights_equal_sparse() -> None:
    rig = random_rig((2,), n=20, joints=5, seed=4)
    dense = torch.zeros(2, 20, 5, dtype=torch.float64)
    dense.scatter_add_(-1, rig["joints"].expand(2, 20, 3), rig["weights"])
    sparse_out = run(rig, "dq")
    dense_out = skin(rig["vertices"], rig["palette"], None, dense, method="dq",
                     bind_origins=rig["bind_origins"])
    assert torch.allclose(sparse_out, dense_out, rtol=0, atol=1e-12)


def test_contiguous_float32_is_read_in_place() -> None:
    t = torch.rand(10, 3)
    assert st._numpy(t).ctypes.data == t.data_ptr()


def test_numpy_api_takes_any_dlpack_producer() -> None:
    class Producer:
        """Only the DLPack protocol: no __array__, no buffer."""

        def __init__(self, array: np.ndarray) -> None:
            self._array = array

        def __dlpack__(self, **kwargs: Any) -> Any:
            return self._array.__dlpack__(**kwargs)

        def __dlpack_device__(self) -> Tuple[int, int]:
            return self._array.__dlpack_device__()

    rig = random_rig((), n=12, seed=2, dtype=torch.float32)
    arrays = {name: t.numpy() for name, t in rig.items()}
    joints16 = arrays["joints"].astype(np.uint16)
    plain = skinblend.skin(arrays["vertices"], joints16, arrays["weights"], arrays["palette"]).positions
    wrapped = skinblend.skin(Producer(arrays["vertices"]), Producer(joints16),
                             Producer(arrays["weights"]), Producer(arrays["palette"])).positions
    assert np.array_equal(plain, wrapped)
    # A torch tensor through DLPack too.
    via_torch = skinblend.skin(rig["vertices"], rig["joints"], rig["weights"], rig["palette"]).positions
    assert np.array_equal(plain, via_torch)


def test_gradients_flow_to_a_pose_through_forward_kinematics() -> None:
    rig = random_rig((), n=30, seed=6)
    pose = torch.zeros(4, 3, dtype=torch.float64, requires_grad=True)
    palette = rig["palette"].clone()
    palette[:, :3, :3] = rotation(pose + 1e-3) @ rig["palette"][:, :3, :3]
    out = skin(rig["vertices"], palette, rig["joints"], rig["weights"], method="dq")
    out.square().sum().backward()
    assert pose.grad is not None and pose.grad.abs().max() > 1e-3


def test_errors_name_the_argument() -> None:
    rig = random_rig((), seed=1, dtype=torch.float32)
    v, p, j, w = rig["vertices"], rig["palette"], rig["joints"], rig["weights"]
    not_a_tensor: Any = v.numpy()
    cases = [
        (TypeError, "vertices", lambda: skin(not_a_tensor, p, j, w)),
        (TypeError, "palette", lambda: skin(v, p.int(), j, w)),
        (TypeError, "weights", lambda: skin(v, p, j, w.double())),
        (TypeError, "joints", lambda: skin(v, p, j.float(), w)),
        (ValueError, "runs on the CPU", lambda: skin(v.to("meta"), p, j, w)),
        (ValueError, "palette", lambda: skin(v, p[..., :3, :], j, w)),
        (ValueError, "vertices", lambda: skin(v[:, :2], p, j, w)),
        (ValueError, "joints", lambda: skin(v, p, j + 10, w)),
        (ValueError, "joints", lambda: skin(v, p, j - 10, w)),
        (ValueError, "weights", lambda: skin(v, p, j, w[:, :2])),
        (ValueError, "weights", lambda: skin(v, p, j, -w)),
        (ValueError, "vertices", lambda: skin(v.expand(3, -1, -1), p.expand(2, -1, -1, -1), j, w)),
        (ValueError, "palette", lambda: skin(v, p.masked_fill(torch.ones_like(p, dtype=torch.bool), math.nan), j, w)),
        (ValueError, "method", lambda: skin(v, p, j, w, method=cast(Method, "nope"))),
        (ValueError, "centers", lambda: skin(v, p, j, w, method="cor")),
        (ValueError, "threads", lambda: skin(v, p, j, w, threads=0)),
    ]
    for kind, word, call in cases:
        with pytest.raises(kind, match=word):
            call()


def test_empty_batch_and_single_thread() -> None:
    rig = random_rig((0,), seed=1)
    assert run(rig, "dq").shape == (0, 7, 3)
    rig = random_rig((2,), seed=1)
    assert torch.equal(run(rig, "dq"), skin(rig["vertices"], rig["palette"], rig["joints"], rig["weights"],
                                             method="dq", bind_origins=rig["bind_origins"],
                                             centers=rig["centers"], threads=1))
