"""Type stubs of the compiled module (private: use the ``skinblend`` package)."""

from os import PathLike
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

_F32 = npt.NDArray[np.float32]
_Diagnostics = Dict[str, int]

class GltfError(ValueError):
    """A malformed or unsupported glTF file; the message names the JSON path."""

#: The most threads a ``threads=`` argument may ask for: more threads than cores only add
#: switching and memory, and thousands cannot be created; ``None`` uses every core.
MAX_THREADS: int

class NativeSkinner:
    def __init__(
        self,
        positions: _F32,
        normals: Optional[_F32],
        tangents: Optional[_F32],
        joints: npt.NDArray[np.uint16],
        weights: _F32,
        joint_count: int,
        method: str,
        bind_origins: Optional[_F32],
        centers: Optional[_F32],
        blend_values: Optional[_F32],
        threads: Optional[int],
    ) -> None: ...
    def skin(
        self,
        palette: _F32,
        out_positions: _F32,
        out_normals: Optional[_F32] = None,
        out_tangents: Optional[_F32] = None,
    ) -> _Diagnostics: ...
    def skin_frames(self, palettes: _F32, out: _F32) -> _Diagnostics: ...
    def _kernel_seconds_per_call(self, palette: _F32, min_seconds: float) -> float: ...
    @property
    def vertex_count(self) -> int: ...
    @property
    def has_normals(self) -> bool: ...
    @property
    def has_tangents(self) -> bool: ...
    @property
    def method(self) -> str: ...

def skin_once(
    positions: _F32,
    normals: Optional[_F32],
    tangents: Optional[_F32],
    joints: npt.NDArray[np.uint16],
    weights: _F32,
    joint_count: int,
    method: str,
    bind_origins: Optional[_F32],
    centers: Optional[_F32],
    blend_values: Optional[_F32],
    threads: Optional[int],
    palette: _F32,
    out_positions: _F32,
    out_normals: Optional[_F32] = None,
    out_tangents: Optional[_F32] = None,
) -> _Diagnostics: ...

def dense_to_sparse(weights: _F32) -> Tuple[npt.NDArray[np.uint16], _F32]: ...

class NativePose:
    def world_from_node(self) -> _F32: ...

class NativeModel:
    @staticmethod
    def open(path: Union[str, PathLike[str]]) -> NativeModel: ...
    @property
    def path(self) -> str: ...
    def info_json(self) -> str: ...
    def animations(self) -> List[Tuple[Optional[str], float, float]]: ...
    def find_animation(self, name_or_index: str) -> int: ...
    def pose(self, animation: Optional[int], time_s: float) -> NativePose: ...
    def rest_pose(self) -> NativePose: ...
    def skin(
        self, pose: NativePose, method: str
    ) -> List[Tuple[int, int, int, List[Tuple[_F32, Optional[_F32], Optional[_F32], _Diagnostics]]]]: ...
    def skin_frames(
        self, animation: Optional[int], times_s: Sequence[float], method: str, threads: Optional[int]
    ) -> List[Tuple[int, int, int, List[_F32]]]: ...
    def export(self, path: str, pose: NativePose, method: str) -> None: ...
    def compute_rotation_centers(self, sigma: float, epsilon: float) -> List[Tuple[int, int, int, int]]: ...
    def write_rotation_centers(self, path: str) -> None: ...
    def refuse_output(self, path: str) -> None: ...
    def input_files(self) -> List[str]: ...
    def write_derived(self, path: str, data: bytes) -> None: ...
    def nodes(self) -> List[Tuple[Optional[str], Optional[int], Optional[int]]]: ...
    def skinned_nodes(self) -> List[int]: ...
    def primitive_count(self, mesh: int) -> int: ...
    def primitive(self, mesh: int, primitive: int) -> Dict[str, Optional[Any]]: ...

def rotation_centers(
    positions: _F32,
    triangles: npt.NDArray[np.uint32],
    joints: npt.NDArray[np.uint16],
    weights: _F32,
    joint_count: int,
    sigma: float,
    epsilon: float,
) -> Tuple[_F32, int]: ...
def blend_values_from_joints(
    joints: npt.NDArray[np.uint16], weights: _F32, joint_count: int, dq_joints: List[int]
) -> _F32: ...
def candy_wrapper_radius(
    positions: _F32, axis_point: Sequence[float], axis_direction: Sequence[float], along: float, half_width: float
) -> Optional[float]: ...
def edge_ratios(
    rest: _F32, posed: _F32, triangles: npt.NDArray[np.uint32], unique: bool
) -> Optional[Dict[str, float]]: ...
def volume_ratio(rest: _F32, posed: _F32, triangles: npt.NDArray[np.uint32]) -> Optional[float]: ...
def displacement(reference: _F32, other: _F32) -> Optional[Tuple[float, float]]: ...
def fixtures() -> List[Dict[str, Any]]: ...
def fixture_palette(name: str, angle_deg: float) -> _F32: ...
def evidence_rows() -> List[Dict[str, Any]]: ...
def method_names() -> List[str]: ...
def benchmark_mesh(vertex_count: int, influences_per_vertex: int, joint_count: int, seed: int) -> Dict[str, Any]: ...
def simd_backend() -> Optional[str]: ...
def full_validations() -> int: ...

_Floats = Union[npt.NDArray[np.float32], npt.NDArray[np.float64]]

def batched_skin(
    method: str,
    palettes: _Floats,
    vertices: _Floats,
    joints: npt.NDArray[np.uint16],
    weights: _Floats,
    bind_origins: Optional[_Floats],
    centers: Optional[_Floats],
    blend_values: Optional[_Floats],
    threads: Optional[int],
    normals: bool = False,
) -> _Floats: ...
def batched_skin_backward(
    method: str,
    palettes: _Floats,
    vertices: _Floats,
    joints: npt.NDArray[np.uint16],
    weights: _Floats,
    bind_origins: Optional[_Floats],
    centers: Optional[_Floats],
    blend_values: Optional[_Floats],
    grad_output: _Floats,
    wants: Tuple[bool, bool, bool],
    threads: Optional[int],
    normals: bool = False,
) -> Tuple[Optional[_Floats], Optional[_Floats], Optional[_Floats]]: ...
