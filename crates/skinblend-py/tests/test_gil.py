"""Skinning releases the GIL: a Python thread keeps running while a long skin_frames runs."""

from __future__ import annotations

import threading
import time

import numpy as np

import skinblend


def test_python_thread_runs_during_a_long_skin():
    rng = np.random.default_rng(1)
    n, j, frames = 100_000, 64, 40
    positions = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    joints = rng.integers(0, j, (n, 4)).astype(np.uint16)
    weights = np.full((n, 4), 0.25, np.float32)
    palettes = np.tile(np.eye(4, dtype=np.float32), (frames, j, 1, 1))
    skinner = skinblend.Skinner(positions, joints, weights, method="dq", threads=1)

    ticks = []
    done = threading.Event()

    def count():
        while not done.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    started = threading.Event()
    spans = []

    def run():
        started.set()
        begin = time.perf_counter()
        skinner.skin_frames(palettes)
        spans.append((begin, time.perf_counter()))

    counter = threading.Thread(target=count)
    counter.start()
    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    done.set()
    counter.join()
    begin, end = spans[0]
    during = [t for t in ticks if begin < t < end]
    # The skin takes well over 50 ms on one thread (4 million vertices); with the GIL held the
    # counting thread could not tick at all inside it (sys.getswitchinterval is 5 ms, but a held
    # GIL is never handed over from native code). Ten ticks is far below what a free thread
    # manages (about one per ms) and far above zero.
    assert end - begin > 0.05, f"the skin was too short to test ({end - begin:.3f} s)"
    assert len(during) >= 10, f"{len(during)} ticks in {end - begin:.3f} s of skinning"
