"""skinblend: skeletal mesh skinning (LBS, DQS, centers of rotation) on numpy arrays and glTF files.

The same Rust kernels as the ``skinblend`` command line program (SIMD, all cores), with the
diagnostics and artefact metrics, and batch baking that scales out on Dask (:func:`bake`).

Conventions
-----------
- Vertex attributes are numpy arrays, one row per vertex: ``positions`` and ``normals``
  ``(N, 3)``, ``tangents`` ``(N, 4)`` with ``w`` the handedness (±1), in the bind pose.
- Influences are sparse, ``joints`` ``(N, K)`` (any integer dtype, each in ``0..J``) and
  ``weights`` ``(N, K)``, or dense: pass ``joints=None`` and ``weights`` ``(N, J)``, one column
  per joint, as SMPL-style research code stores them; they are converted once to sparse (each
  vertex's non-zero weights in ascending joint order).
- A palette is ``(J, 4, 4)``: ``palette[j]`` is joint ``j``'s skin matrix
  ``world_from_joint @ joint_from_bind`` in the usual mathematical layout, ``v' = M @ [v, 1]``,
  translation in ``M[:3, 3]``.
- Float inputs are ``float32``; ``float64`` (and other float) arrays are converted to
  ``float32`` as ``numpy.asarray(x, dtype=numpy.float32)`` would; integer, bool or complex
  arrays where floats are expected, and arrays of the wrong shape, are refused with a
  ``ValueError`` naming the argument and the expected shape. Outputs are ``float32``.
- Methods: ``"linear"`` (LBS), ``"dq"`` (dual quaternions), ``"cor"`` (optimized centers of
  rotation; needs ``centers`` from :func:`rotation_centers`).
- Errors are ``ValueError`` (bad data: the message names the vertex, joint or argument),
  ``FileNotFoundError`` and :class:`GltfError` (a ``ValueError`` naming the JSON path), with
  the command line program's one-line messages.
- Skinning releases the GIL: other Python threads run meanwhile.
- ``threads=``: ``None`` (every core, one shared pool) or 1 to :data:`MAX_THREADS`; larger
  values are a ``ValueError``. Pools of the two most recently used counts are kept; an older
  one is dropped and its threads exit.
- Writers (:meth:`Model.export`, :meth:`Model.write_rotation_centers`, :func:`bake_job`,
  :func:`bake`) refuse an output that is an input file of the model (its ``.gltf``/``.glb``,
  or an external buffer or image it read; also through ``..``, a symbolic or a hard link)
  with a ``ValueError``, before writing anything, as the command line program does.

(This module is the package's whole public API, about 600 lines, most of them docstrings; the
work is done in the Rust extension ``skinblend._native``.)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from os import PathLike
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _native
from ._native import GltfError

#: The most threads a ``threads=`` argument may ask for (256): more threads than cores only
#: add switching and memory, and thousands cannot be created at all; ``threads=None`` uses
#: every core of any machine.
MAX_THREADS: int = _native.MAX_THREADS

__all__ = [
    "GltfError",
    "MAX_THREADS",
    "METHODS",
    "SkinResult",
    "Skinner",
    "skin",
    "skin_frames",
    "sparse_weights",
    "full_validations",
    "rotation_centers",
    "load",
    "Model",
    "Pose",
    "SkinnedNode",
    "candy_wrapper_radius",
    "edge_ratios",
    "volume_ratio",
    "displacement",
    "fixtures",
    "fixture_palette",
    "evidence_rows",
    "BakeJob",
    "bake",
    "bake_job",
    "simd_backend",
    "benchmark_mesh",
]

#: The method names, in the order tables show them: LBS, DQS, CoR.
METHODS: Tuple[str, ...] = tuple(_native.method_names())

Path = Union[str, "PathLike[str]"]
Diagnostics = Dict[str, int]


@dataclass(frozen=True)
class SkinResult:
    """One skinned frame: ``float32`` arrays and the exact diagnostics.

    ``diagnostics`` counts ``singular_normal_matrices``, ``non_rigid_joints``, ``sign_flips``
    and ``unweighted_vertices`` (all zero is the normal case; see the Rust docs of
    ``skinblend::Diagnostics``).
    """

    positions: np.ndarray
    normals: Optional[np.ndarray]
    tangents: Optional[np.ndarray]
    diagnostics: Diagnostics


# ---------------------------------------------------------------------------------------------
# Argument checks: every message names the argument and the expected shape.


def _floats(name: str, value: Any, shape: Tuple[Optional[int], ...], shape_text: str) -> np.ndarray:
    array = np.asarray(value)
    if array.dtype.kind != "f":
        raise ValueError(
            f"{name}: expected a float array of shape {shape_text}, got dtype {array.dtype}"
        )
    _check_shape(name, array, shape, shape_text)
    # Used in place when already float32, C-contiguous and aligned; else converted once.
    return np.require(array, np.float32, ["C_CONTIGUOUS", "ALIGNED"])


def _check_shape(name: str, array: np.ndarray, shape: Tuple[Optional[int], ...], text: str) -> None:
    ok = array.ndim == len(shape) and all(
        want is None or want == got for want, got in zip(shape, array.shape)
    )
    if not ok:
        raise ValueError(f"{name}: expected shape {text}, got {tuple(array.shape)}")


def sparse_weights(weights: Any) -> Tuple[np.ndarray, np.ndarray]:
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


def _dense_to_sparse(dense: np.ndarray) -> Tuple[np.ndarray, np.ndarray, int]:
    joint_count = dense.shape[1]
    if joint_count == 0 or joint_count > 65536:
        raise ValueError(f"weights: expected 1 to 65536 joint columns, got {joint_count}")
    joints, sparse = _native.dense_to_sparse(dense)
    return joints, sparse, joint_count


def full_validations() -> int:
    """How many times this thread has checked a mesh's attributes in full: once per
    :class:`Skinner` made (and per one-shot :func:`skin`), never per frame. For tests."""
    return int(_native.full_validations())


def _influences(
    joints: Any, weights: Any, n: int
) -> Tuple[np.ndarray, np.ndarray, int]:
    """Sparse ``(joints uint16 (N, K), weights float32 (N, K), joint_count)``."""
    if joints is None:
        dense = _floats("weights", weights, (n, None), f"({n}, J) (dense, joints=None)")
        return _dense_to_sparse(dense)
    joints_array = np.asarray(joints)
    if joints_array.dtype.kind not in "iu":
        raise ValueError(
            f"joints: expected an integer array of shape ({n}, K), got dtype {joints_array.dtype}"
        )
    _check_shape("joints", joints_array, (n, None), f"({n}, K)")
    weights_array = _floats("weights", weights, joints_array.shape, f"{tuple(joints_array.shape)} (as joints)")
    if joints_array.size:
        low, high = int(joints_array.min()), int(joints_array.max())
        if low < 0 or high > 65535:
            bad = low if low < 0 else high
            vertex, slot = (int(i) for i in np.argwhere(joints_array == bad)[0])
            raise ValueError(
                f"joints: vertex {vertex} slot {slot}: joint index {bad} is outside 0..65535"
            )
        joint_count = high + 1
    else:
        joint_count = 1
    joints_array = np.require(joints_array, np.uint16, ["C_CONTIGUOUS", "ALIGNED"])
    return joints_array, weights_array, joint_count


def _palette(name: str, palette: Any) -> np.ndarray:
    return _floats(name, palette, (None, 4, 4), "(J, 4, 4)")


def _method(method: str) -> str:
    if method not in METHODS:
        raise ValueError(f"method: unknown method {method!r}; expected one of {', '.join(METHODS)}")
    return method


def _threads(threads: Optional[int]) -> Optional[int]:
    if threads is None:
        return None
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
        raise ValueError(f"threads: expected None or an integer of at least 1, got {threads!r}")
    if threads > MAX_THREADS:
        raise ValueError(
            f"threads: expected at most {MAX_THREADS} (MAX_THREADS; None uses every core), got {threads}"
        )
    return int(threads)


def _out(name: str, out: Any, shape: Tuple[int, ...]) -> np.ndarray:
    if not isinstance(out, np.ndarray) or out.dtype != np.float32 or not out.flags.c_contiguous:
        raise ValueError(f"{name}: expected a C-contiguous float32 numpy array of shape {shape}")
    if not out.flags.writeable:
        raise ValueError(f"{name}: the array is read-only")
    _check_shape(name, out, shape, str(shape))
    return out


class Skinner:
    """A mesh prepared once and skinned frame after frame without reallocating.

    Takes the mesh's bind-pose attributes and influences (see the module conventions), checks
    and copies them once; each :meth:`skin` call prepares the palette into the same buffers
    and writes the results into new arrays or into ``out`` arrays you pass.

    ``bind_origins`` ``(J, 3)``: each joint's origin in the bind pose, about which DQS's
    residual (scale, shear) acts (``None``: the origin; a glTF skin's joint centers are these).
    ``centers`` ``(N, 3)``: per-vertex centers of rotation for ``method="cor"`` (NaN rows: none,
    skinned by DQS). ``threads``: ``None`` for every core, ``1`` for the calling thread only, or
    a count up to :data:`MAX_THREADS` (256; more is a ``ValueError``). Results are
    bit-identical on any thread count.
    """

    def __init__(
        self,
        positions: Any,
        joints: Any,
        weights: Any,
        *,
        normals: Any = None,
        tangents: Any = None,
        method: str = "dq",
        bind_origins: Any = None,
        centers: Any = None,
        threads: Optional[int] = None,
    ) -> None:
        positions = _floats("positions", positions, (None, 3), "(N, 3)")
        n = positions.shape[0]
        sparse_joints, sparse_weights, joint_count = _influences(joints, weights, n)
        normals = None if normals is None else _floats("normals", normals, (n, 3), f"({n}, 3)")
        tangents = None if tangents is None else _floats("tangents", tangents, (n, 4), f"({n}, 4)")
        centers = None if centers is None else _floats("centers", centers, (n, 3), f"({n}, 3)")
        if bind_origins is not None:
            bind_origins = _floats("bind_origins", bind_origins, (None, 3), "(J, 3)")
        self._native = _native.NativeSkinner(
            positions,
            normals,
            tangents,
            sparse_joints,
            sparse_weights,
            joint_count,
            _method(method),
            bind_origins,
            centers,
            _threads(threads),
        )

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
        palette: Any,
        *,
        out: Optional[np.ndarray] = None,
        out_normals: Optional[np.ndarray] = None,
        out_tangents: Optional[np.ndarray] = None,
    ) -> SkinResult:
        """Skins one frame under ``palette`` ``(J, 4, 4)``.

        Normals and tangents are skinned when the mesh has them. ``out``, ``out_normals`` and
        ``out_tangents`` (C-contiguous ``float32`` ``(N, 3)``/``(N, 4)``) are written in place
        and returned in the result; otherwise new arrays are allocated.
        """
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

    def skin_frames(self, palettes: Any, *, out: Optional[np.ndarray] = None) -> np.ndarray:
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
    positions: Any,
    joints: Any,
    weights: Any,
    palette: Any,
    *,
    normals: Any = None,
    tangents: Any = None,
    method: str = "dq",
    bind_origins: Any = None,
    centers: Any = None,
    threads: Optional[int] = None,
) -> SkinResult:
    """Skins a mesh once under ``palette`` ``(J, 4, 4)``; see :class:`Skinner` for the arguments.

    ``joints=None`` with ``weights`` ``(N, J)`` takes dense per-vertex weights (converted on
    every call: convert once with :func:`sparse_weights`). C-contiguous ``float32`` positions,
    normals and centers are read in place, without a copy (other dtypes are converted once).
    For many frames of one mesh, make a :class:`Skinner` once, or call :func:`skin_frames`.
    """
    positions = _floats("positions", positions, (None, 3), "(N, 3)")
    n = positions.shape[0]
    sparse_joints, sparse, joint_count = _influences(joints, weights, n)
    normals = None if normals is None else _floats("normals", normals, (n, 3), f"({n}, 3)")
    tangents = None if tangents is None else _floats("tangents", tangents, (n, 4), f"({n}, 4)")
    centers = None if centers is None else _floats("centers", centers, (n, 3), f"({n}, 3)")
    if bind_origins is not None:
        bind_origins = _floats("bind_origins", bind_origins, (None, 3), "(J, 3)")
    palette = _palette("palette", palette)
    out = np.empty((n, 3), np.float32)
    out_normals = None if normals is None else np.empty((n, 3), np.float32)
    out_tangents = None if tangents is None else np.empty((n, 4), np.float32)
    diagnostics = _native.skin_once(
        positions,
        normals,
        tangents,
        sparse_joints,
        sparse,
        joint_count,
        _method(method),
        bind_origins,
        centers,
        _threads(threads),
        palette,
        out,
        out_normals,
        out_tangents,
    )
    return SkinResult(out, out_normals, out_tangents, diagnostics)


def skin_frames(
    positions: Any,
    joints: Any,
    weights: Any,
    palettes: Any,
    *,
    method: str = "dq",
    bind_origins: Any = None,
    centers: Any = None,
    threads: Optional[int] = None,
    out: Optional[np.ndarray] = None,
) -> np.ndarray:
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
        threads=threads,
    )
    return skinner.skin_frames(palettes, out=out)


def _triangles(name: str, triangles: Any) -> np.ndarray:
    array = np.asarray(triangles)
    if array.dtype.kind not in "iu":
        raise ValueError(f"{name}: expected an integer array of shape (T, 3), got dtype {array.dtype}")
    _check_shape(name, array, (None, 3), "(T, 3)")
    if array.size and (array.min() < 0 or array.max() > np.iinfo(np.uint32).max):
        raise ValueError(f"{name}: vertex indices must be in 0..{np.iinfo(np.uint32).max}")
    return np.require(array, np.uint32, ["C_CONTIGUOUS", "ALIGNED"])


def rotation_centers(
    positions: Any,
    triangles: Any,
    joints: Any,
    weights: Any,
    *,
    sigma: float = 0.1,
    epsilon: float = 0.1,
) -> Tuple[np.ndarray, int]:
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


# ---------------------------------------------------------------------------------------------
# glTF models


class Pose:
    """A pose of a :class:`Model`: every node's transforms at one time of one animation."""

    def __init__(self, native: Any, animation: Optional[int], time_s: Optional[float]) -> None:
        self._native = native
        #: The animation's index, or ``None`` for the rest pose.
        self.animation = animation
        #: The time in seconds (clamped to the animation's range when sampled), or ``None``.
        self.time_s = time_s

    def world_from_node(self) -> np.ndarray:
        """``(nodes, 4, 4)`` float32: each node's world transform (``v' = M @ v``)."""
        return self._native.world_from_node()


@dataclass(frozen=True)
class SkinnedNode:
    """One skinned node of a posed model: its node, mesh and skin indices, one result per
    primitive (in the space of the scene)."""

    node: int
    mesh: int
    skin: int
    primitives: List[SkinResult]


class Model:
    """A glTF 2.0 model (``.gltf`` or ``.glb``), loaded and validated once by :func:`load`."""

    def __init__(self, native: Any) -> None:
        self._native = native

    @property
    def path(self) -> str:
        """The file it was loaded from."""
        return str(self._native.path)

    def info(self) -> Dict[str, Any]:
        """What ``skinblend info --json`` prints: scenes, meshes, skins, animations, repairs."""
        return json.loads(self._native.info_json())

    @property
    def animations(self) -> List[Dict[str, Any]]:
        """The animations: ``index``, ``name`` (or ``None``), ``start_s``, ``end_s``."""
        return [
            {"index": i, "name": name, "start_s": start, "end_s": end}
            for i, (name, start, end) in enumerate(self._native.animations())
        ]

    def _animation_index(self, animation: Union[str, int, None]) -> Optional[int]:
        if animation is None:
            return 0 if self._native.animations() else None
        return self._native.find_animation(str(animation))

    def pose(self, animation: Union[str, int, None] = None, time_s: float = 0.0) -> Pose:
        """The pose at ``time_s`` seconds (clamped to the animation's range) of ``animation``
        (a name or index; ``None``: the first animation, or the rest pose if there is none),
        as ``skinblend pose --animation --time`` samples it."""
        index = self._animation_index(animation)
        time_s = float(time_s)
        if index is None:
            # The CLI samples no animation but still checks the time.
            return Pose(self._native.pose(None, time_s), None, time_s)
        return Pose(self._native.pose(index, time_s), index, time_s)

    def skin_frames(
        self,
        animation: Union[str, int, None] = None,
        times_s: Sequence[float] = (0.0,),
        method: str = "dq",
        *,
        threads: Optional[int] = None,
    ) -> List[Tuple[int, int, int, List[np.ndarray]]]:
        """Skins the positions of every skinned node at each time of ``animation`` with one
        scene skinner (centers of rotation computed once): ``[(node, mesh, skin, [positions
        (F, N, 3) per primitive])]``. Frame ``f`` equals :meth:`skin` at
        ``pose(animation, times_s[f])`` to the bit."""
        times = np.asarray(times_s, dtype=np.float64)
        if times.ndim != 1 or not np.all(np.isfinite(times)):
            raise ValueError("times_s: expected a 1-D sequence of finite seconds")
        return [
            (node, mesh, skin_index, list(arrays))
            for node, mesh, skin_index, arrays in self._native.skin_frames(
                self._animation_index(animation), [float(t) for t in times], _method(method), _threads(threads)
            )
        ]

    def rest_pose(self) -> Pose:
        """The rest pose: the nodes' own transforms."""
        return Pose(self._native.rest_pose(), None, None)

    def skin(self, method: str = "dq", pose: Optional[Pose] = None) -> List[SkinnedNode]:
        """Skins every skinned node at ``pose`` (default: :meth:`pose`'s, the first animation
        at 0 s, as the command line program) with ``method``, as
        ``skinblend pose`` does (morph targets, the skin's bind origins, the file's centers of
        rotation or computed ones for CoR); positions, normals and tangents per primitive."""
        pose = self.pose() if pose is None else pose
        return [
            SkinnedNode(node, mesh, skin_index, [SkinResult(*p) for p in primitives])
            for node, mesh, skin_index, primitives in self._native.skin(pose._native, _method(method))
        ]

    def export(self, path: Path, method: str = "dq", pose: Optional[Pose] = None) -> None:
        """Skins at ``pose`` (default: :meth:`pose`'s) and writes the posed scene to ``path``
        (``.glb``, ``.gltf`` or ``.obj``), everything else kept, atomically: byte for byte what
        ``skinblend pose`` writes. Raises ``ValueError``, writing nothing, when ``path`` is an
        input file of this model (see :meth:`input_files`)."""
        pose = self.pose() if pose is None else pose
        self._native.export(str(path), pose._native, _method(method))

    def rotation_centers(self, *, sigma: float = 0.1, epsilon: float = 0.1) -> List[Dict[str, int]]:
        """Computes the centers of rotation of every skinned primitive and keeps them in this
        model (CoR skinning and :meth:`write_rotation_centers` use them). Returns, per
        primitive, ``mesh``, ``primitive``, ``vertices``, ``vertices_without_center``."""
        return [
            {"mesh": m, "primitive": p, "vertices": v, "vertices_without_center": w}
            for m, p, v, w in self._native.compute_rotation_centers(float(sigma), float(epsilon))
        ]

    def write_rotation_centers(self, path: Path) -> None:
        """Writes a copy of the file carrying the centers (``skinblend centers -o``). Raises
        ``ValueError``, writing nothing, when ``path`` is an input file of this model."""
        self._native.write_rotation_centers(str(path))

    def input_files(self) -> List[str]:
        """The files this model was read from, absolute: the ``.gltf``/``.glb``, then the
        external buffers and images it names. Every writer refuses to write over them."""
        return [str(p) for p in self._native.input_files()]

    def nodes(self) -> List[Dict[str, Any]]:
        """Every node: ``name`` (or ``None``), ``mesh`` and ``skin`` indices (or ``None``)."""
        return [{"name": n, "mesh": m, "skin": s} for n, m, s in self._native.nodes()]

    def skinned_nodes(self) -> List[int]:
        """Indices of the nodes that have a mesh and a skin."""
        return list(self._native.skinned_nodes())

    def primitive(self, mesh: int, primitive: int) -> Dict[str, Optional[np.ndarray]]:
        """A primitive's bind-pose arrays: ``positions``, ``normals``, ``tangents``,
        ``triangles`` (uint32 ``(T, 3)``), ``joints`` (uint16), ``weights``,
        ``rotation_centers`` (``None`` where absent)."""
        return self._native.primitive(int(mesh), int(primitive))


def load(path: Path) -> Model:
    """Loads and validates a ``.gltf`` or ``.glb`` file.

    Raises ``FileNotFoundError`` for a missing file and :class:`GltfError` (naming the JSON
    path) for a malformed one.
    """
    return Model(_native.NativeModel.open(str(path)))


# ---------------------------------------------------------------------------------------------
# Metrics, built-in rigs, evidence


def candy_wrapper_radius(
    positions: Any,
    axis_point: Sequence[float],
    axis_direction: Sequence[float],
    along: float,
    half_width: float,
) -> Optional[float]:
    """Smallest distance (metres) from the axis of the vertices whose position along it is
    within ``half_width`` of ``along``: the candy wrapper as a number. ``None`` when no vertex
    is in the slab."""
    positions = _floats("positions", positions, (None, 3), "(N, 3)")
    return _native.candy_wrapper_radius(
        positions, _vec3("axis_point", axis_point), _vec3("axis_direction", axis_direction),
        float(along), float(half_width),
    )


def _vec3(name: str, value: Sequence[float]) -> List[float]:
    array = np.asarray(value, dtype=np.float64)
    if array.shape != (3,):
        raise ValueError(f"{name}: expected 3 numbers, got shape {tuple(array.shape)}")
    return [float(x) for x in array]


def edge_ratios(rest: Any, posed: Any, triangles: Any, *, unique: bool = False) -> Optional[Dict[str, float]]:
    """Posed ÷ rest length of the triangles' edges (three per triangle; ``unique``: each edge
    once) as ``min``, ``mean``, ``max``, ``count``; best 1. ``None`` with no edges."""
    rest = _floats("rest", rest, (None, 3), "(N, 3)")
    posed = _floats("posed", posed, (rest.shape[0], 3), f"({rest.shape[0]}, 3) (as rest)")
    return _native.edge_ratios(rest, posed, _triangles("triangles", triangles), bool(unique))


def volume_ratio(rest: Any, posed: Any, triangles: Any) -> Optional[float]:
    """Posed ÷ rest signed volume of a closed mesh; best 1. ``None`` when the rest volume is 0."""
    rest = _floats("rest", rest, (None, 3), "(N, 3)")
    posed = _floats("posed", posed, (rest.shape[0], 3), f"({rest.shape[0]}, 3) (as rest)")
    return _native.volume_ratio(rest, posed, _triangles("triangles", triangles))


def displacement(reference: Any, other: Any) -> Optional[Dict[str, float]]:
    """Distance between two results of one mesh relative to ``reference``'s bounding-box
    diagonal: ``max_relative`` and ``rms_relative`` (0 best). ``None`` for an empty mesh."""
    reference = _floats("reference", reference, (None, 3), "(N, 3)")
    n = reference.shape[0]
    other = _floats("other", other, (n, 3), f"({n}, 3) (as reference)")
    result = _native.displacement(reference, other)
    return None if result is None else {"max_relative": result[0], "rms_relative": result[1]}


def fixtures() -> List[Dict[str, Any]]:
    """The built-in rigs (twist, bend, shear-and-cap cylinders) as dicts of arrays: ``name``,
    ``positions``, ``normals``, ``tangents``, ``triangles``, ``joints``, ``weights``,
    ``joint_count``, ``bind_origins``, ``joint_ring``, ``ring_joint``, ``closed``,
    ``angles_deg``. Pose one with :func:`fixture_palette`."""
    return list(_native.fixtures())


def fixture_palette(name: str, angle_deg: float) -> np.ndarray:
    """The palette ``(J, 4, 4)`` of built-in rig ``name`` at ``angle_deg`` degrees."""
    return _native.fixture_palette(str(name), float(angle_deg))


def evidence_rows() -> List[Dict[str, Any]]:
    """The evidence table of ``skinblend evidence --json``: every built-in rig at its angles
    under every method, with its artefact metrics and diagnostics."""
    return list(_native.evidence_rows())


def benchmark_mesh(vertex_count: int, influences_per_vertex: int = 4, joint_count: int = 64,
                   seed: int = 0x5EED) -> Dict[str, np.ndarray]:
    """``skinblend bench``'s synthetic rig: random positions in a 2 m cube, unit normals and
    tangents, ``influences_per_vertex`` distinct joints per vertex with weights summing to 1,
    and a ``palette`` of random rigid motions. Deterministic in ``seed`` (the CLI's is the
    default)."""
    return dict(_native.benchmark_mesh(int(vertex_count), int(influences_per_vertex), int(joint_count), int(seed)))


def simd_backend() -> Optional[str]:
    """The SIMD kernel set this CPU runs (for example ``"avx2+fma"``), or ``None``."""
    return _native.simd_backend()


from ._bake import BakeJob, bake, bake_job  # noqa: E402  (needs the names above)
