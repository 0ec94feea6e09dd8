"""``threads=``: bounded by ``MAX_THREADS`` (a ``ValueError`` naming the limit above it), and
the pools behind it do not pile up: asking for many distinct counts leaves at most the two most
recent pools' threads alive."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

import skinblend
from skinblend import _native

STATUS = Path("/proc/self/status")
#: Pools kept for reuse (`MAX_POOLS` in src/convert.rs).
KEPT_POOLS = 2
#: How often the thread count is read while dropped pools' threads finish exiting (they exit on
#: their own once told to; this only bounds the wait).
POLLS = 500


def os_threads() -> int:
    for line in STATUS.read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    raise AssertionError("no Threads: line in /proc/self/status")


def mesh():
    rng = np.random.default_rng(3)
    n, j = 64, 4
    positions = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    joints = rng.integers(0, j, (n, 4)).astype(np.uint16)
    weights = np.full((n, 4), 0.25, np.float32)
    palettes = np.tile(np.eye(4, dtype=np.float32), (8, j, 1, 1))
    return positions, joints, weights, palettes


@pytest.mark.skipif(not STATUS.exists(), reason="needs /proc/self/status (Linux)")
def test_distinct_thread_counts_do_not_leak_pools():
    positions, joints, weights, palettes = mesh()
    before = os_threads()
    expected = skinblend.skin_frames(positions, joints, weights, palettes, threads=1)
    counts = range(2, 21)
    for threads in counts:
        got = skinblend.skin_frames(positions, joints, weights, palettes, threads=threads)
        assert np.array_equal(got, expected)
    # The kept pools: 20 and 19 threads, plus the 1-thread pool's one if it is still kept.
    bound = before + sum(sorted(counts)[-KEPT_POOLS:]) + 1
    for _ in range(POLLS):
        if os_threads() <= bound:
            break
        time.sleep(0.01)
    assert os_threads() <= bound, f"{os_threads()} threads, {before} before (bound {bound})"
    # Alternating two counts reuses their pools: no thread is added.
    settled = os_threads()
    for threads in [19, 20] * 5:
        skinblend.skin_frames(positions, joints, weights, palettes, threads=threads)
    assert os_threads() <= settled


def test_threads_above_the_limit_are_refused_naming_it():
    assert skinblend.MAX_THREADS == 256
    positions, joints, weights, palettes = mesh()
    for threads in [skinblend.MAX_THREADS + 1, 10_000]:
        with pytest.raises(ValueError, match=f"at most {skinblend.MAX_THREADS}"):
            skinblend.Skinner(positions, joints, weights, threads=threads)
        with pytest.raises(ValueError, match=f"at most {skinblend.MAX_THREADS}"):
            skinblend.skin_frames(positions, joints, weights, palettes, threads=threads)
        # The native layer applies the same limit.
        with pytest.raises(ValueError, match=f"at most {skinblend.MAX_THREADS}"):
            _native.NativeSkinner(
                positions, None, None, joints, weights, 4, "dq", None, None, None, threads
            )
    # The limit itself is allowed.
    skinblend.skin_frames(positions, joints, weights, palettes, threads=skinblend.MAX_THREADS)


def test_model_skin_frames_refuses_threads_above_the_limit(models_dir):
    model = skinblend.load(models_dir / "RiggedSimple" / "RiggedSimple.glb")
    with pytest.raises(ValueError, match=f"at most {skinblend.MAX_THREADS}"):
        model.skin_frames(times_s=[0.0], threads=10_000)
    with pytest.raises(ValueError, match=f"at most {skinblend.MAX_THREADS}"):
        model._native.skin_frames(None, [0.0], "dq", 10_000)
