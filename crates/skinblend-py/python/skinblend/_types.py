"""The package's type names: array aliases, the method names, paths and diagnostics."""

from __future__ import annotations

from os import PathLike
from typing import Any, Dict, Literal, Protocol, Tuple, Union

import numpy as np
import numpy.typing as npt

#: A float32 array (every output, and every float input once converted).
F32 = npt.NDArray[np.float32]


class SupportsDLPack(Protocol):
    """A DLPack producer (a torch tensor, a JAX or CuPy array...): read through
    ``numpy.from_dlpack``, in place where it lives in CPU memory."""

    def __dlpack__(self, **kwargs: Any) -> Any: ...

    def __dlpack_device__(self) -> Tuple[int, int]: ...


#: Anything numpy turns into an array: a numpy array, a list, a buffer, a DLPack producer.
ArrayLike = Union[npt.ArrayLike, SupportsDLPack]
#: A skinning method: ``"linear"`` (LBS), ``"dq"`` (dual quaternions), ``"cor"`` (centers of
#: rotation), ``"blended"`` (LBS and DQS by a per-vertex blend value).
Method = Literal["linear", "dq", "cor", "blended"]
#: A file path.
Path = Union[str, "PathLike[str]"]
#: Exact counts of what a skinning call met (see ``skinblend::Diagnostics``).
Diagnostics = Dict[str, int]
