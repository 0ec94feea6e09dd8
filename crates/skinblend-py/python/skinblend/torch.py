"""Torch tensors in and out, batches, and gradients of LBS, DQS, CoR and blended.

:func:`skin` takes and returns ``torch.Tensor`` (CPU; ``float32``, or ``float64`` for gradient
checks) and is differentiable with respect to ``vertices``, ``palette``, ``weights`` and
(when given) ``normals`` for every method, by analytic backward kernels in Rust
(``skinblend::gradient``: multi-threaded, no Python loop over vertices). Contiguous CPU tensors are read in place through DLPack, with
no copy; results are tensors over the memory the extension wrote.

Shapes
------
- ``palette`` ``(..., J, 4, 4)``: ``palette[..., j, :, :]`` is joint ``j``'s skin matrix,
  ``v' = M @ [v, 1]``; the last row is not read (its gradient is zero).
- ``vertices`` ``(N, 3)`` or ``(..., N, 3)``; ``weights`` ``(N, K)`` or ``(..., N, K)``
  (sparse, with ``joints``), or dense ``(N, J)``/``(..., N, J)`` with ``joints=None``;
  ``joints`` ``(N, K)`` integers in ``0..J``.
- ``normals`` ``(N, 3)`` or ``(..., N, 3)`` (optional): then the result is the tuple
  ``(positions, normals)``, both ``(..., N, 3)``, the normals unit length.
- The leading ``...`` of these broadcast together (one mesh posed B times, B posed
  templates, weights shared or per element); the result is ``(..., N, 3)``.

Gradients
---------
Of what the library computes: weights renormalized per vertex (the derivative includes the
division; at a zero weight it is the derivative from above), DQS's rigid/residual split by
Gram–Schmidt about ``bind_origins``, its pivot and sign alignment, CoR's translation with the
``centers`` held fixed. Where the function is not differentiable the gradient is that of the
branch the forward took: at an exactly antipodal pair (a joint's quaternion orthogonal to the
pivot's) the forward adds it, as at a positive dot, and so does the gradient; a joint within
the rigid tolerance (1e-4) has no residual, so its gradient flows through its rotation and
translation. Double backward is not supported.

Normals
-------
As the library skins them (``skinblend.skin(..., normals=...)``, within 2e-5 in float32):
LBS by the normal matrix of the blended 3x3, DQS and CoR by the blended rotation after the
normal matrix of the blended residual (CoR's normals are DQS's), blended by ``(1 - b) l + b d``
of the two unit normals; then renormalized. The normal matrix is the cofactor matrix times the
sign of the determinant (the inverse transpose up to a positive factor). Where the 3x3 is
singular (``|det| <= 1e-6 * (largest column length)**3``) the library takes the cofactor
without the sign, a polynomial: the gradient there is that of the unsigned cofactor (defined
at ``det = 0``; the result jumps only at the band's edge where ``det < 0``, and the gradient
is of the side the forward took). Where the result has no length (the cofactor sends the
normal to zero) the output is the input normal, unnormalized: its gradient with respect to
``normals`` is the identity and with respect to the palette and weights zero. Normals do not
depend on ``vertices`` or ``centers``.
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple, Union, cast, overload

import numpy as np
import torch

from . import _native
from ._checks import METHODS, _threads
from ._types import Method

__all__ = ["skin"]


def _numpy(tensor: torch.Tensor) -> np.ndarray:
    """A numpy view of a contiguous CPU tensor's memory (DLPack, no copy)."""
    return np.from_dlpack(tensor.detach())


def _tensor(name: str, value: Any) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(value).__name__}")
    if value.device.type != "cpu":
        raise ValueError(
            f"{name}: the tensor is on {value.device}; this build of skinblend runs on the CPU "
            f"(move it with .cpu())"
        )
    return value


def _floats(name: str, value: Any, dtype: Optional[torch.dtype]) -> torch.Tensor:
    tensor = _tensor(name, value)
    if tensor.dtype not in (torch.float32, torch.float64):
        raise TypeError(f"{name}: expected float32 or float64, got {tensor.dtype}")
    if dtype is not None and tensor.dtype != dtype:
        raise TypeError(f"{name}: expected the palette's dtype {dtype}, got {tensor.dtype}")
    return tensor


def _batch_shape(name: str, tensor: torch.Tensor, tail: int, text: str) -> Tuple[int, ...]:
    if tensor.dim() < tail:
        raise ValueError(f"{name}: expected shape {text}, got {tuple(tensor.shape)}")
    return tuple(tensor.shape[: tensor.dim() - tail])


def _flat(tensor: torch.Tensor, batch: Tuple[int, ...], own: Tuple[int, ...], tail: int) -> torch.Tensor:
    """``tensor`` as ``(1, ...)`` when it has no batch dimensions, else ``(B, ...)`` (a copy only
    where it broadcasts partly)."""
    rest = tuple(tensor.shape[tensor.dim() - tail:])
    if not own:
        return tensor.reshape((1,) + rest).contiguous()
    if own != batch:
        tensor = tensor.expand(batch + rest)
    return tensor.reshape((-1,) + rest).contiguous()


class _Skin(torch.autograd.Function):
    """The extension's forward and backward passes as an autograd Function: positions, or
    (``normals=True``) normals, which ``vertices`` then holds."""

    @staticmethod
    def forward(
        ctx: Any,
        palette: torch.Tensor,
        vertices: torch.Tensor,
        weights: torch.Tensor,
        method: str,
        joints: np.ndarray,
        bind_origins: Optional[np.ndarray],
        centers: Optional[np.ndarray],
        blend_values: Optional[np.ndarray],
        threads: Optional[int],
        normals: bool,
    ) -> torch.Tensor:
        ctx.save_for_backward(palette, vertices, weights)
        ctx.constants = (method, joints, bind_origins, centers, blend_values, threads, normals)
        out = _native.batched_skin(
            method, _numpy(palette), _numpy(vertices), joints, _numpy(weights), bind_origins,
            centers, blend_values, threads, normals,
        )
        return torch.from_dlpack(out)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx: Any, grad_output: torch.Tensor) -> Tuple[Optional[torch.Tensor], ...]:
        palette, vertices, weights = ctx.saved_tensors
        method, joints, bind_origins, centers, blend_values, threads, normals = ctx.constants
        needs = ctx.needs_input_grad
        wants = (bool(needs[0]), bool(needs[1]), bool(needs[2]))
        grad = grad_output.to(palette.dtype).contiguous()
        grads = _native.batched_skin_backward(
            method, _numpy(palette), _numpy(vertices), joints, _numpy(weights), bind_origins,
            centers, blend_values, _numpy(grad), wants, threads, normals,
        )
        tensors = tuple(None if g is None else torch.from_dlpack(g) for g in grads)
        return tensors + (None, None, None, None, None, None, None)


def _joints(joints: Any, n: int, joint_count: int) -> np.ndarray:
    tensor = _tensor("joints", joints)
    if tensor.dtype.is_floating_point or tensor.dtype.is_complex or tensor.dtype == torch.bool:
        raise TypeError(f"joints: expected an integer tensor of shape ({n}, K), got {tensor.dtype}")
    if tensor.dim() != 2 or tensor.shape[0] != n or tensor.shape[1] == 0:
        raise ValueError(f"joints: expected shape ({n}, K), K at least 1, got {tuple(tensor.shape)}")
    if tensor.numel():
        low, high = int(tensor.min()), int(tensor.max())
        if low < 0 or high >= joint_count:
            bad = low if low < 0 else high
            raise ValueError(
                f"joints: joint index {bad} is outside 0..{joint_count - 1} (the palette's J)"
            )
    return np.ascontiguousarray(_numpy(tensor.cpu()).astype(np.uint16))


def _dense(weights: torch.Tensor, joint_count: int) -> Tuple[np.ndarray, torch.Tensor]:
    """Dense ``(..., N, J)`` weights as every joint in every slot: ``joints`` ``(N, J)``."""
    n = weights.shape[-2]
    joints = np.ascontiguousarray(np.broadcast_to(np.arange(joint_count, dtype=np.uint16), (n, joint_count)))
    return joints, weights


@overload
def skin(
    vertices: torch.Tensor,
    palette: torch.Tensor,
    joints: Optional[torch.Tensor],
    weights: torch.Tensor,
    *,
    method: Method = ...,
    bind_origins: Optional[torch.Tensor] = ...,
    centers: Optional[torch.Tensor] = ...,
    blend_values: Optional[torch.Tensor] = ...,
    normals: None = ...,
    threads: Optional[int] = ...,
) -> torch.Tensor: ...


@overload
def skin(
    vertices: torch.Tensor,
    palette: torch.Tensor,
    joints: Optional[torch.Tensor],
    weights: torch.Tensor,
    *,
    method: Method = ...,
    bind_origins: Optional[torch.Tensor] = ...,
    centers: Optional[torch.Tensor] = ...,
    blend_values: Optional[torch.Tensor] = ...,
    normals: torch.Tensor,
    threads: Optional[int] = ...,
) -> Tuple[torch.Tensor, torch.Tensor]: ...


def skin(
    vertices: torch.Tensor,
    palette: torch.Tensor,
    joints: Optional[torch.Tensor],
    weights: torch.Tensor,
    *,
    method: Method = "dq",
    bind_origins: Optional[torch.Tensor] = None,
    centers: Optional[torch.Tensor] = None,
    blend_values: Optional[torch.Tensor] = None,
    normals: Optional[torch.Tensor] = None,
    threads: Optional[int] = None,
) -> Union[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]:
    """Skinned positions ``(..., N, 3)`` of ``vertices`` under ``palette``; with ``normals``
    ``(N, 3)`` or ``(..., N, 3)``, the tuple ``(positions, normals)``, the normals skinned as the
    library does and renormalized (see the module docs for the shapes, the gradients and the
    normals' rule at a singular normal matrix).

    ``method``: ``"linear"`` (LBS), ``"dq"`` (DQS), ``"cor"`` (needs ``centers`` ``(N, 3)``,
    from :func:`skinblend.rotation_centers`; NaN rows are skinned by DQS). ``bind_origins``
    ``(J, 3)``: each joint's bind-pose origin, about which DQS's residual (scale, shear) acts.
    ``"blended"`` needs ``blend_values`` ``(N,)``: each vertex's share of DQS (0 = LBS, 1 = DQS;
    :func:`skinblend.blend_values_from_joints`). ``centers``, ``blend_values`` and
    ``bind_origins`` are constants (no gradient). ``threads``: as elsewhere in
    skinblend (``None``: every core). Raises ``TypeError`` (not a tensor, a wrong dtype) or
    ``ValueError`` (a shape, a value, a tensor not on the CPU) naming the argument.
    """
    if method not in METHODS:
        raise ValueError(f"method: unknown method {method!r}; expected one of {', '.join(METHODS)}")
    palette = _floats("palette", palette, None)
    dtype = palette.dtype
    vertices = _floats("vertices", vertices, dtype)
    weights = _floats("weights", weights, dtype)
    palette_batch = _batch_shape("palette", palette, 3, "(..., J, 4, 4)")
    if tuple(palette.shape[-2:]) != (4, 4) or palette.shape[-3] == 0:
        raise ValueError(f"palette: expected shape (..., J, 4, 4), got {tuple(palette.shape)}")
    joint_count = int(palette.shape[-3])
    vertex_batch = _batch_shape("vertices", vertices, 2, "(N, 3) or (..., N, 3)")
    if vertices.shape[-1] != 3:
        raise ValueError(f"vertices: expected shape (N, 3) or (..., N, 3), got {tuple(vertices.shape)}")
    n = int(vertices.shape[-2])
    weight_batch = _batch_shape("weights", weights, 2, "(N, K) or (..., N, K)")
    normal_batch: Tuple[int, ...] = ()
    if normals is not None:
        normals = _floats("normals", normals, dtype)
        normal_batch = _batch_shape("normals", normals, 2, f"({n}, 3) or (..., {n}, 3)")
        if tuple(normals.shape[-2:]) != (n, 3):
            raise ValueError(
                f"normals: expected shape ({n}, 3) or (..., {n}, 3), got {tuple(normals.shape)}"
            )
    if joints is None:
        if weights.shape[-2:] != (n, joint_count):
            raise ValueError(
                f"weights: expected dense weights (..., {n}, {joint_count}) with joints=None, "
                f"got {tuple(weights.shape)}"
            )
        joints_array, weights = _dense(weights, joint_count)
    else:
        joints_array = _joints(joints, n, joint_count)
        if weights.shape[-2:] != joints_array.shape:
            raise ValueError(
                f"weights: expected shape (..., {n}, {joints_array.shape[1]}) (as joints), got "
                f"{tuple(weights.shape)}"
            )
    try:
        batch = tuple(int(x) for x in np.broadcast_shapes(palette_batch, vertex_batch, weight_batch))
    except ValueError:
        raise ValueError(
            f"vertices: batch shape {vertex_batch} does not broadcast with the palette's "
            f"{palette_batch} and the weights' {weight_batch}"
        ) from None
    try:
        batch = tuple(int(x) for x in np.broadcast_shapes(batch, normal_batch))
    except ValueError:
        raise ValueError(
            f"normals: batch shape {normal_batch} does not broadcast with the batch {batch}"
        ) from None
    constants: List[Optional[np.ndarray]] = []
    for name, value, shape in (
        ("bind_origins", bind_origins, (joint_count, 3)),
        ("centers", centers, (n, 3)),
        ("blend_values", blend_values, (n,)),
    ):
        if value is None:
            constants.append(None)
            continue
        tensor = _floats(name, value, None)
        if tuple(tensor.shape) != shape:
            raise ValueError(f"{name}: expected shape {shape}, got {tuple(tensor.shape)}")
        constants.append(_numpy(tensor.detach().to(dtype).contiguous()))
    if method == "cor" and centers is None:
        raise ValueError("centers: method 'cor' needs centers (N, 3) (skinblend.rotation_centers)")
    if method == "blended" and blend_values is None:
        raise ValueError(
            "blend_values: method 'blended' needs blend_values (N,), each in [0, 1] "
            "(skinblend.blend_values_from_joints)"
        )
    threads = _threads(threads)
    out_shape = batch + (n, 3)
    if n == 0 or any(size == 0 for size in batch):
        empty = torch.zeros(out_shape, dtype=dtype)
        return empty if normals is None else (empty, torch.zeros(out_shape, dtype=dtype))
    flat_palette = _flat(palette, batch, palette_batch, 3)
    flat_weights = _flat(weights, batch, weight_batch, 2)

    def apply(points: torch.Tensor, own_batch: Tuple[int, ...], as_normals: bool) -> torch.Tensor:
        out = cast(torch.Tensor, _Skin.apply(
            flat_palette, _flat(points, batch, own_batch, 2), flat_weights, method,
            joints_array, constants[0], constants[1], constants[2], threads, as_normals,
        ))
        # Every input of this pass shared while the other pass's is batched: one result, expanded.
        if out.shape[0] == 1:
            return out[0].expand(out_shape)
        return out.reshape(out_shape)

    positions = apply(vertices, vertex_batch, False)
    if normals is None:
        return positions
    return positions, apply(normals, normal_batch, True)
