"""Skinning numpy arrays: a mesh checked once (:class:`Skinner`), one-shot :func:`skin`,
many frames (:func:`skin_frames`), dense weights made sparse once, centers of rotation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Optional, Tuple, Union, cast

import numpy as np
import numpy.typing as npt

from . import _native
from ._checks import (
    _dense_to_sparse,
    _floats,
    _influences,
    _method,
    _out,
    _palette,
    _threads,
    _triangles,
)
from ._types import ArrayLike, Diagnostics, F32, Method

class SkinResult(NamedTuple):
    """One skinned frame: ``float32`` arrays and the exact diagnostics, immutable.

    ``diagnostics`` counts ``singular_normal_matrices``, ``non_rigid_joints``, ``sign_flips``
    and ``unweighted_vertices`` (all zero is the normal case; see the Rust docs of
    ``skinblend::Diagnostics``). A named tuple rather than a frozen dataclass: made every
    frame, it costs 0.3 µs instead of 0.7 (``python -m timeit``; docs/bench.md).
    """

    positions: F32
    normals: Optional[F32]
    tangents: Optional[F32]
    diagnostics: Diagnostics


def sparse_weights(weights: ArrayLike) -> Tuple[np.ndarray, np.ndarray]:
    """Dense per-vertex weights ``(N, J)`` as the sparse ``(joints, weights)`` every function
    takes: ``joints`` ``uint16 (N, K)`` and ``weights`` ``float32 (N, K)``, K the most non-zero
    weights of any vertex (at least 1), each vertex's non-zero joints first in ascending order,
    zero-weight slots on joint 0. Convert once and pass the pair to :class:`Skinner`,
    :func:`skin` or :func:`skin_frames`: a dense ``weights`` with ``joints=None`` is converted on
    every call. Skinning the pair gives the dense call's result to the bit.
    """
    dense = _floats("weights", weights, (None, None), "(N, J)")
    joints, sparse, _ = _dense_to_sparse(dense)
    return joints, sparse


def full_validations() -> int:
    """How many times this thread has checked a mesh's attributes in full: once per
    :class:`Skinner` made (and per one-shot :func:`skin`), never per frame. For tests."""
    return int(_native.full_validations())


@dataclass(frozen=True)
class _MeshArrays:
    """A mesh's arrays as the extension reads them, each checked for dtype and shape."""

    positions: F32
    normals: Optional[F32]
    tangents: Optional[F32]
    joints: npt.NDArray[np.uint16]
    weights: F32
    joint_count: int
    centers: Optional[F32]
    blend_values: Optional[F32]

    @staticmethod
    def checked(
        positions: ArrayLike,
        joints: Optional[ArrayLike],
        weights: ArrayLike,
        normals: Optional[ArrayLike],
        tangents: Optional[ArrayLike],
        centers: Optional[ArrayLike],
        blend_values: Union[None, float, ArrayLike] = None,
    ) -> "_MeshArrays":
        checked = _floats("positions", positions, (None, 3), "(N, 3)")
        n = checked.shape[0]
        sparse_joints, sparse, joint_count = _influences(joints, weights, n)
        return _MeshArrays(
            checked,
            None if normals is None else _floats("normals", normals, (n, 3), f"({n}, 3)"),
            None if tangents is None else _floats("tangents", tangents, (n, 4), f"({n}, 4)"),
            sparse_joints,
            sparse,
            joint_count,
            None if centers is None else _floats("centers", centers, (n, 3), f"({n}, 3)"),
            _blend_values(blend_values, n),
        )

    def native_arguments(
        self,
    ) -> Tuple[F32, Optional[F32], Optional[F32], npt.NDArray[np.uint16], F32, int]:
        """Positions, normals, tangents, joints, weights and joint count, in the extension's
        argument order."""
        return (self.positions, self.normals, self.tangents, self.joints, self.weights,
                self.joint_count)


def _bind_origins(bind_origins: Optional[ArrayLike]) -> Optional[F32]:
    if bind_origins is None:
        return None
    return _floats("bind_origins", bind_origins, (None, 3), "(J, 3)")


def _blend_values(values: Union[None, float, ArrayLike], n: int) -> Optional[F32]:
    """Blended's values as ``(N,)`` float32: an array as given, one number for every vertex."""
    if values is None:
        return None
    if isinstance(values, (int, float, np.floating, np.integer)) and not isinstance(values, bool):
        return np.full(n, values, np.float32)
    return _floats("blend_values", values, (n,), f"({n},)")


class Skinner:
    """A mesh prepared once and skinned frame after frame without reallocating.

    Takes the mesh's bind-pose attributes and influences (see the module conventions), checks
    and copies them once; each :meth:`skin` call prepares the palette into the same buffers
    and writes the results into new arrays or into ``out`` arrays you pass.

    ``bind_origins`` ``(J, 3)``: each joint's origin in the bind pose, about which DQS's
    residual (scale, shear) acts (``None``: the origin; a glTF skin's joint centers are these).
    ``centers`` ``(N, 3)``: per-vertex centers of rotation for ``method="cor"`` (NaN rows: none,
    skinned by DQS). ``blend_values`` ``(N,)`` or one number: for ``method="blended"``, each
    vertex's share of DQS (0 = LBS, 1 = DQS; ``blend_values_from_joints`` derives them from
    chosen joints). ``threads``: ``None`` for every core, ``1`` for the calling thread only, or
    a count up to :data:`MAX_THREADS` (256; more is a ``ValueError``). Results are
    bit-identical on any thread count.
    """

    def __init__(
        self,
        positions: ArrayLike,
        joints: Optional[ArrayLike],
        weights: ArrayLike,
        *,
        normals: Optional[ArrayLike] = None,
        tangents: Optional[ArrayLike] = None,
        method: Method = "dq",
        bind_origins: Optional[ArrayLike] = None,
        centers: Optional[ArrayLike] = None,
        blend_values: Union[None, float, ArrayLike] = None,
        threads: Optional[int] = None,
    ) -> None:
        mesh = _MeshArrays.checked(
            positions, joints, weights, normals, tangents, centers, blend_values
        )
        self._native = _native.NativeSkinner(
            *mesh.native_arguments(),
            _method(method),
            _bind_origins(bind_origins),
            mesh.centers,
            mesh.blend_values,
            _threads(threads),
        )
        self._has_normals: bool = self._native.has_normals
        self._has_tangents: bool = self._native.has_tangents
        # Bound once: the per-frame path looks up one attribute, not two.
        self._skin_native = self._native.skin

    @property
    def vertex_count(self) -> int:
        """Number of vertices N."""
        return self._native.vertex_count

    @property
    def method(self) -> str:
        """The method's name."""
        return self._native.method

    def skin(
        self,
        palette: ArrayLike,
        *,
        out: Optional[F32] = None,
        out_normals: Optional[F32] = None,
        out_tangents: Optional[F32] = None,
    ) -> SkinResult:
        """Skins one frame under ``palette`` ``(J, 4, 4)``.

        Normals and tangents are skinned when the mesh has them. ``out``, ``out_normals`` and
        ``out_tangents`` (C-contiguous ``float32`` ``(N, 3)``/``(N, 4)``) are written in place
        and returned in the result; otherwise new arrays are allocated.
        """
        if out is not None and (out_normals is not None) == self._has_normals and (
            out_tangents is not None
        ) == self._has_tangents:
            # Every output given, the per-frame case: the extension checks the arguments itself
            # (dtype, shape, layout, the palette), so the checks below run only to word the error
            # when it refuses them; nothing is written before its checks pass.
            try:
                # Any array-like: the extension refuses what is not a float32 (J, 4, 4) array.
                native_palette = cast(F32, palette)
                diagnostics = self._skin_native(native_palette, out, out_normals, out_tangents)
                return SkinResult(out, out_normals, out_tangents, diagnostics)
            except (TypeError, ValueError):
                pass
        palette = _palette("palette", palette)
        n = self._native.vertex_count
        positions = np.empty((n, 3), np.float32) if out is None else _out("out", out, (n, 3))
        normals = None
        if self._native.has_normals:
            normals = (
                np.empty((n, 3), np.float32)
                if out_normals is None
                else _out("out_normals", out_normals, (n, 3))
            )
        elif out_normals is not None:
            raise ValueError("out_normals: the mesh has no normals")
        tangents = None
        if self._native.has_tangents:
            tangents = (
                np.empty((n, 4), np.float32)
                if out_tangents is None
                else _out("out_tangents", out_tangents, (n, 4))
            )
        elif out_tangents is not None:
            raise ValueError("out_tangents: the mesh has no tangents")
        diagnostics = self._native.skin(palette, positions, normals, tangents)
        return SkinResult(positions, normals, tangents, diagnostics)

    def skin_frames(self, palettes: ArrayLike, *, out: Optional[F32] = None) -> F32:
        """Skins the positions of F frames, ``palettes`` ``(F, J, 4, 4)`` → ``(F, N, 3)``.

        Frames run in parallel on the skinner's threads with the GIL released; each frame's
        result is bit-identical to :meth:`skin`'s. ``out`` (C-contiguous ``float32``
        ``(F, N, 3)``) is written in place and returned.
        """
        palettes = _floats("palettes", palettes, (None, None, 4, 4), "(F, J, 4, 4)")
        shape = (palettes.shape[0], self._native.vertex_count, 3)
        result = np.empty(shape, np.float32) if out is None else _out("out", out, shape)
        self.last_frames_diagnostics: Diagnostics = self._native.skin_frames(palettes, result)
        return result


def skin(
    positions: ArrayLike,
    joints: Optional[ArrayLike],
    weights: ArrayLike,
    palette: ArrayLike,
    *,
    normals: Optional[ArrayLike] = None,
    tangents: Optional[ArrayLike] = None,
    method: Method = "dq",
    bind_origins: Optional[ArrayLike] = None,
    centers: Optional[ArrayLike] = None,
    blend_values: Union[None, float, ArrayLike] = None,
    threads: Optional[int] = None,
) -> SkinResult:
    """Skins a mesh once under ``palette`` ``(J, 4, 4)``; see :class:`Skinner` for the arguments.

    ``joints=None`` with ``weights`` ``(N, J)`` takes dense per-vertex weights (converted on
    every call: convert once with :func:`sparse_weights`). C-contiguous ``float32`` positions,
    normals and centers are read in place, without a copy (other dtypes are converted once).
    For many frames of one mesh, make a :class:`Skinner` once, or call :func:`skin_frames`.
    """
    mesh = _MeshArrays.checked(positions, joints, weights, normals, tangents, centers, blend_values)
    palette = _palette("palette", palette)
    n = mesh.positions.shape[0]
    out = np.empty((n, 3), np.float32)
    out_normals = None if mesh.normals is None else np.empty((n, 3), np.float32)
    out_tangents = None if mesh.tangents is None else np.empty((n, 4), np.float32)
    diagnostics = _native.skin_once(
        *mesh.native_arguments(),
        _method(method),
        _bind_origins(bind_origins),
        mesh.centers,
        mesh.blend_values,
        _threads(threads),
        palette,
        out,
        out_normals,
        out_tangents,
    )
    return SkinResult(out, out_normals, out_tangents, diagnostics)


def skin_frames(
    positions: ArrayLike,
    joints: Optional[ArrayLike],
    weights: ArrayLike,
    palettes: ArrayLike,
    *,
    method: Method = "dq",
    bind_origins: Optional[ArrayLike] = None,
    centers: Optional[ArrayLike] = None,
    blend_values: Union[None, float, ArrayLike] = None,
    threads: Optional[int] = None,
    out: Optional[F32] = None,
) -> F32:
    """Skins the positions of F frames at once: ``palettes`` ``(F, J, 4, 4)`` → ``(F, N, 3)``.

    On all cores (or ``threads``) with the GIL released; every frame equals :func:`skin`'s
    result for its palette, to the bit.
    """
    skinner = Skinner(
        positions,
        joints,
        weights,
        method=method,
        bind_origins=bind_origins,
        centers=centers,
        blend_values=blend_values,
        threads=threads,
    )
    return skinner.skin_frames(palettes, out=out)


def rotation_centers(
    positions: ArrayLike,
    triangles: ArrayLike,
    joints: Optional[ArrayLike],
    weights: ArrayLike,
    *,
    sigma: float = 0.1,
    epsilon: float = 0.1,
) -> Tuple[F32, int]:
    """Per-vertex centers of rotation for ``method="cor"`` (Le & Hodgins 2016).

    Returns ``(centers (N, 3) float32, vertices_without_center)``; a vertex without a center
    (NaN row) is skinned by DQS. ``sigma`` and ``epsilon`` are the paper's σ and ε (defaults
    are the paper's). Deterministic on any thread count.
    """
    positions = _floats("positions", positions, (None, 3), "(N, 3)")
    sparse_joints, sparse_weights, joint_count = _influences(joints, weights, positions.shape[0])
    return _native.rotation_centers(
        positions,
        _triangles("triangles", triangles),
        sparse_joints,
        sparse_weights,
        joint_count,
        float(sigma),
        float(epsilon),
    )


def blend_values_from_joints(
    joints: Optional[ArrayLike], weights: ArrayLike, dq_joints: "list[int] | Tuple[int, ...]"
) -> F32:
    """Blend values for ``method="blended"`` by a rule an artist states: each vertex takes as
    much DQS as its weights put on the joints ``dq_joints`` (indices), so the blend fades where
    the weights do. ``(N,)`` float32 in ``[0, 1]``; an unweighted vertex gets 0.
    """
    n = np.asarray(weights).shape[0]
    sparse_joints, sparse, joint_count = _influences(joints, weights, n)
    return _native.blend_values_from_joints(
        sparse_joints, sparse, joint_count, [int(j) for j in dq_joints]
    )
