"""glTF 2.0 models: load, pose at a time of an animation, skin, export."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _native
from ._checks import _method, _threads
from ._skinning import SkinResult
from ._types import F32, Method, Path

class Pose:
    """A pose of a :class:`Model`: every node's transforms at one time of one animation."""

    def __init__(
        self, native: _native.NativePose, animation: Optional[int], time_s: Optional[float]
    ) -> None:
        self._native = native
        #: The animation's index, or ``None`` for the rest pose.
        self.animation = animation
        #: The time in seconds (clamped to the animation's range when sampled), or ``None``.
        self.time_s = time_s

    def world_from_node(self) -> F32:
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

    def __init__(self, native: _native.NativeModel) -> None:
        self._native = native

    @property
    def path(self) -> str:
        """The file it was loaded from."""
        return str(self._native.path)

    def info(self) -> Dict[str, Any]:
        """What ``skinblend info --json`` prints: scenes, meshes, skins, animations, repairs."""
        info: Dict[str, Any] = json.loads(self._native.info_json())
        return info

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
        method: Method = "dq",
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

    def skin(self, method: Method = "dq", pose: Optional[Pose] = None) -> List[SkinnedNode]:
        """Skins every skinned node at ``pose`` (default: :meth:`pose`'s, the first animation
        at 0 s, as the command line program) with ``method``, as
        ``skinblend pose`` does (morph targets, the skin's bind origins, the file's centers of
        rotation or computed ones for CoR); positions, normals and tangents per primitive."""
        pose = self.pose() if pose is None else pose
        return [
            SkinnedNode(node, mesh, skin_index, [SkinResult(*p) for p in primitives])
            for node, mesh, skin_index, primitives in self._native.skin(pose._native, _method(method))
        ]

    def export(self, path: Path, method: Method = "dq", pose: Optional[Pose] = None) -> None:
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

    def primitive(self, mesh: int, primitive: int) -> Dict[str, Optional[Any]]:
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
