"""Batch baking: many (file, animation, frames) jobs, one Dask task per job.

Dask (``dask.distributed``) is the engine: a :class:`~dask.distributed.LocalCluster` on this
machine by default, or any cluster, given its client or its scheduler's address. skinblend adds
no scheduler of its own; a job is a plain function, :func:`bake_job`, which you can also run
serially or hand to another executor.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Union

import numpy as np

from ._types import F32, Method



@dataclass(frozen=True)
class BakeJob:
    """One file, one animation, some frames, one method, one output file.

    ``frames``: a count of times spread evenly over the animation, its first and last time
    included (one frame: its start), or ``times_s``: explicit times in seconds (clamped to the
    animation's range). ``animation``: a name or index; ``None`` for the first (or the rest pose
    when the file has none). ``output``: an ``.npz`` file, written atomically, holding
    ``times_s`` (float32 ``(F,)``) and, per skinned node and primitive,
    ``node{n}_mesh{m}_primitive{p}`` (float32 positions ``(F, N, 3)``, in the space of the
    scene). ``threads``: the cores one job may use (``None``: all of its worker's machine; at
    most :data:`~skinblend.MAX_THREADS`). An ``output`` that is an input file of the model
    (``file`` or an external file it reads) is refused with ``ValueError``; nothing is written.
    """

    file: str
    output: str
    animation: Union[str, int, None] = None
    frames: int = 1
    times_s: Optional[Sequence[float]] = None
    method: Method = "dq"
    threads: Optional[int] = None


def _times(model: Any, job: BakeJob) -> F32:
    if job.times_s is not None:
        return np.asarray(job.times_s, dtype=np.float32)
    if isinstance(job.frames, bool) or not isinstance(job.frames, int) or job.frames < 1:
        raise ValueError(f"frames: expected an integer of at least 1, got {job.frames!r}")
    animations = model.animations
    index = model._animation_index(job.animation)
    if index is None:
        return np.zeros(job.frames, np.float32)
    start, end = animations[index]["start_s"], animations[index]["end_s"]
    if job.frames == 1:
        return np.asarray([start], np.float32)
    return np.linspace(start, end, job.frames, dtype=np.float64).astype(np.float32)


def bake_job(job: BakeJob) -> str:
    """Runs one job in this process and returns its output path. What :func:`bake` runs on
    each worker; call it directly for a serial run. Raises ``ValueError``, before skinning and
    writing nothing, when ``job.output`` is an input file of the model (as
    :meth:`~skinblend.Model.export` does)."""
    from ._model import load

    if not str(job.output).endswith(".npz"):
        raise ValueError(f"output: expected a .npz path, got {job.output!r}")
    model = load(job.file)
    model._native.refuse_output(os.fspath(job.output))
    times = _times(model, job)
    baked = model.skin_frames(job.animation, times.tolist(), job.method, threads=job.threads)
    arrays = {"times_s": times}
    for node, mesh, _skin, primitives in baked:
        for p, positions in enumerate(primitives):
            arrays[f"node{node}_mesh{mesh}_primitive{p}"] = positions
    buffer = io.BytesIO()
    # numpy's stub types its keyword `allow_pickle`, which an unpacked dict of arrays cannot be.
    np.savez(buffer, **arrays)  # type: ignore[arg-type]
    model._native.write_derived(os.fspath(job.output), buffer.getvalue())
    return os.fspath(job.output)


def bake(
    jobs: Sequence[BakeJob],
    client: Any = None,
    *,
    n_workers: Optional[int] = None,
) -> List[str]:
    """Runs every job as one task on a Dask distributed client; returns the output paths in
    the order of ``jobs``.

    ``client``: a ``dask.distributed.Client``; a scheduler address (``"tcp://host:8786"``) to
    connect to; or ``None`` to start a ``LocalCluster`` of ``n_workers`` single-threaded
    worker processes (default: Dask's choice for this machine) for this call and close it
    after. The first failing job's exception is raised (its message names the file; a job
    whose output is an input file of its model raises ``ValueError``, see :func:`bake_job`).
    Needs ``pip install "dask[distributed]"``.
    """
    from dask.distributed import Client, LocalCluster

    jobs = list(jobs)
    for job in jobs:
        if not isinstance(job, BakeJob):
            raise ValueError(f"jobs: expected BakeJob items, got {type(job).__name__}")
    owned: List[Any] = []
    try:
        if client is None:
            cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True)
            owned.append(cluster)
            client = Client(cluster)
            owned.insert(0, client)
        elif isinstance(client, str):
            client = Client(client)
            owned.append(client)
        futures = client.map(bake_job, jobs, pure=False)
        return list(client.gather(futures))
    finally:
        for resource in owned:
            resource.close()
