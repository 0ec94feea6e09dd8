"""Artefact metrics, the built-in rigs and their evidence, the benchmark mesh, the SIMD set."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from . import _native
from ._checks import _floats, _triangles, _vec3
from ._types import ArrayLike, F32

def candy_wrapper_radius(
    positions: ArrayLike,
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


def edge_ratios(rest: ArrayLike, posed: ArrayLike, triangles: ArrayLike, *, unique: bool = False) -> Optional[Dict[str, float]]:
    """Posed ÷ rest length of the triangles' edges (three per triangle; ``unique``: each edge
    once) as ``min``, ``mean``, ``max``, ``count``; best 1. ``None`` with no edges."""
    rest = _floats("rest", rest, (None, 3), "(N, 3)")
    posed = _floats("posed", posed, (rest.shape[0], 3), f"({rest.shape[0]}, 3) (as rest)")
    return _native.edge_ratios(rest, posed, _triangles("triangles", triangles), bool(unique))


def volume_ratio(rest: ArrayLike, posed: ArrayLike, triangles: ArrayLike) -> Optional[float]:
    """Posed ÷ rest signed volume of a closed mesh; best 1. ``None`` when the rest volume is 0."""
    rest = _floats("rest", rest, (None, 3), "(N, 3)")
    posed = _floats("posed", posed, (rest.shape[0], 3), f"({rest.shape[0]}, 3) (as rest)")
    return _native.volume_ratio(rest, posed, _triangles("triangles", triangles))


def displacement(reference: ArrayLike, other: ArrayLike) -> Optional[Dict[str, float]]:
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


def fixture_palette(name: str, angle_deg: float) -> F32:
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
