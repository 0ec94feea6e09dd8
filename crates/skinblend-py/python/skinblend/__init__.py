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
  rotation; needs ``centers`` from :func:`rotation_centers`), ``"blended"`` (LBS and DQS by a
  per-vertex blend value; needs ``blend_values``, e.g. from :func:`blend_values_from_joints`).
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

The public API is this module's names (``__all__``), defined by topic in ``_skinning``,
``_model``, ``_measures`` and ``_bake``; the work is done in the Rust extension
``skinblend._native``.
"""

from __future__ import annotations

from ._bake import BakeJob, bake, bake_job
from ._checks import MAX_THREADS, METHODS
from ._measures import (
    benchmark_mesh,
    candy_wrapper_radius,
    displacement,
    edge_ratios,
    evidence_rows,
    fixture_palette,
    fixtures,
    simd_backend,
    volume_ratio,
)
from ._model import Model, Pose, SkinnedNode, load
from ._native import GltfError
from ._skinning import (
    SkinResult,
    Skinner,
    blend_values_from_joints,
    full_validations,
    rotation_centers,
    skin,
    skin_frames,
    sparse_weights,
)
from ._types import Method

__all__ = [
    "GltfError",
    "MAX_THREADS",
    "METHODS",
    "Method",
    "SkinResult",
    "Skinner",
    "skin",
    "skin_frames",
    "sparse_weights",
    "full_validations",
    "rotation_centers",
    "blend_values_from_joints",
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
