"""Skinning releases the GIL: another Python thread runs while a skin is in progress.

Tested by what the release guarantees, not by how long a skin takes: with the interpreter's
switch interval made very long, a thread holding the GIL is never made to hand it over, so the
main thread can run while a worker thread is inside a call only if that call releases the GIL.
"""

from __future__ import annotations

import sys
import threading
from typing import Callable, Optional

import numpy as np

import skinblend

#: Calls tried before concluding that the main thread never runs during one (each try a skin
#: of 100 000 vertices; one try is enough when the GIL is released).
ATTEMPTS = 20
#: Bound on the main thread's loop per try (it ends when the call does).
MAX_LOOPS = 1_000_000


def _ticks_during_one_call(call: Callable[[], object]) -> int:
    """Runs ``call`` on a worker thread; returns how often the main thread ran while the worker
    was inside it."""
    inside = [False]
    finished = threading.Event()

    def run() -> None:
        inside[0] = True
        try:
            call()
        finally:
            inside[0] = False
            finished.set()

    worker = threading.Thread(target=run)
    ticks = 0
    # With the long switch interval, the worker keeps the GIL from `inside = True` until the
    # call releases it (or, if the call holds it, until `inside = False` and the thread's end).
    worker.start()
    for _ in range(MAX_LOOPS):
        if finished.is_set():
            break
        if inside[0]:
            ticks += 1
        finished.wait(0.001)  # blocks, releasing the GIL for the worker to take back
    worker.join()
    return ticks


def ticks_during(call: Callable[[], object]) -> int:
    """Main-thread ticks while ``call`` runs, over at most ``ATTEMPTS`` tries (0: none)."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(10.0)
    try:
        for _ in range(ATTEMPTS):
            ticks = _ticks_during_one_call(call)
            if ticks:
                return ticks
        return 0
    finally:
        sys.setswitchinterval(old)


def _busy_python() -> int:
    # Pure Python: holds the GIL throughout (no switch is forced in 10 s).
    return sum(i for i in range(200_000))


def _skinner(threads: Optional[int]) -> tuple[skinblend.Skinner, np.ndarray]:
    rng = np.random.default_rng(1)
    n, j, frames = 100_000, 64, 4
    positions = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    joints = rng.integers(0, j, (n, 4)).astype(np.uint16)
    weights = np.full((n, 4), 0.25, np.float32)
    palettes = np.tile(np.eye(4, dtype=np.float32), (frames, j, 1, 1))
    return skinblend.Skinner(positions, joints, weights, method="dq", threads=threads), palettes


def test_the_harness_sees_a_held_gil():
    assert ticks_during(_busy_python) == 0


def test_python_thread_runs_during_skin_frames():
    skinner, palettes = _skinner(threads=1)
    assert ticks_during(lambda: skinner.skin_frames(palettes)) > 0


def test_python_thread_runs_during_skin_on_all_cores():
    skinner, palettes = _skinner(threads=None)
    assert ticks_during(lambda: skinner.skin(palettes[0])) > 0
