"""Argument checks shared by every function: each message names the argument and the
expected shape; arrays that pass are returned in the layout the Rust extension reads."""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple, cast

import numpy as np
import numpy.typing as npt

from . import _native
from ._types import ArrayLike, F32, Method

#: The method names, in the order tables show them: LBS, DQS, CoR.
METHODS: Tuple[Method, ...] = cast(Tuple[Method, ...], tuple(_native.method_names()))
#: The most threads a ``threads=`` argument may ask for (see ``skinblend.MAX_THREADS``).
MAX_THREADS: int = _native.MAX_THREADS

def _array(name: str, value: Any) -> np.ndarray:
    """``value`` as a numpy array: a DLPack producer (a torch tensor, a JAX or CuPy array on
    the CPU, ...) read in place through ``numpy.from_dlpack``, anything else by ``asarray``."""
    if isinstance(value, np.ndarray) or not hasattr(value, "__dlpack__"):
        return np.asarray(value)
    try:
        return np.from_dlpack(value)
    except (TypeError, ValueError, RuntimeError, BufferError) as error:
        raise ValueError(
            f"{name}: could not read it through DLPack ({error}); numpy reads CPU memory only"
        ) from None


def _floats(name: str, value: Any, shape: Tuple[Optional[int], ...], shape_text: str) -> F32:
    if (
        type(value) is np.ndarray
        and value.dtype == np.float32
        and value.flags.c_contiguous
        and value.flags.aligned
    ):
        # The common case, per frame: used in place after the shape check alone.
        _check_shape(name, value, shape, shape_text)
        return value
    array = _array(name, value)
    if array.dtype.kind != "f":
        raise ValueError(
            f"{name}: expected a float array of shape {shape_text}, got dtype {array.dtype}"
        )
    _check_shape(name, array, shape, shape_text)
    # Used in place when already float32, C-contiguous and aligned; else converted once.
    return np.require(array, np.float32, ["C_CONTIGUOUS", "ALIGNED"])


def _check_shape(name: str, array: np.ndarray, shape: Tuple[Optional[int], ...], text: str) -> None:
    got = array.shape
    ok = len(got) == len(shape)
    for want, size in zip(shape, got):
        ok = ok and (want is None or want == size)
    if not ok:
        raise ValueError(f"{name}: expected shape {text}, got {tuple(array.shape)}")


def _dense_to_sparse(dense: np.ndarray) -> Tuple[np.ndarray, np.ndarray, int]:
    joint_count = dense.shape[1]
    if joint_count == 0 or joint_count > 65536:
        raise ValueError(f"weights: expected 1 to 65536 joint columns, got {joint_count}")
    joints, sparse = _native.dense_to_sparse(dense)
    return joints, sparse, joint_count


def _influences(
    joints: Optional[ArrayLike], weights: ArrayLike, n: int
) -> Tuple[npt.NDArray[np.uint16], F32, int]:
    """Sparse ``(joints uint16 (N, K), weights float32 (N, K), joint_count)``."""
    if joints is None:
        dense = _floats("weights", weights, (n, None), f"({n}, J) (dense, joints=None)")
        return _dense_to_sparse(dense)
    joints_array = _array("joints", joints)
    if joints_array.dtype.kind not in "iu":
        raise ValueError(
            f"joints: expected an integer array of shape ({n}, K), got dtype {joints_array.dtype}"
        )
    _check_shape("joints", joints_array, (n, None), f"({n}, K)")
    weights_array = _floats("weights", weights, joints_array.shape, f"{tuple(joints_array.shape)} (as joints)")
    if joints_array.size:
        high = int(joints_array.max())
        # Unsigned joints need no second pass for the low end.
        low = int(joints_array.min()) if joints_array.dtype.kind == "i" else 0
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


def _palette(name: str, palette: Any) -> F32:
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


def _out(name: str, out: Any, shape: Tuple[int, ...]) -> F32:
    if not isinstance(out, np.ndarray) or out.dtype != np.float32 or not out.flags.c_contiguous:
        raise ValueError(f"{name}: expected a C-contiguous float32 numpy array of shape {shape}")
    if not out.flags.writeable:
        raise ValueError(f"{name}: the array is read-only")
    _check_shape(name, out, shape, str(shape))
    return out


def _triangles(name: str, triangles: ArrayLike) -> npt.NDArray[np.uint32]:
    array = _array(name, triangles)
    if array.dtype.kind not in "iu":
        raise ValueError(f"{name}: expected an integer array of shape (T, 3), got dtype {array.dtype}")
    _check_shape(name, array, (None, 3), "(T, 3)")
    if array.size and (array.min() < 0 or array.max() > np.iinfo(np.uint32).max):
        raise ValueError(f"{name}: vertex indices must be in 0..{np.iinfo(np.uint32).max}")
    return np.require(array, np.uint32, ["C_CONTIGUOUS", "ALIGNED"])


def _vec3(name: str, value: Sequence[float]) -> List[float]:
    array = np.asarray(value, dtype=np.float64)
    if array.shape != (3,):
        raise ValueError(f"{name}: expected 3 numbers, got shape {tuple(array.shape)}")
    return [float(x) for x in array]
