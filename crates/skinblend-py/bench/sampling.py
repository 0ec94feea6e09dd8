"""Timing shared by the bench scripts: a sample is one call repeated back to back."""

from __future__ import annotations

import time
from typing import Callable


def seconds_per_call(fn: Callable[[], object], min_sample_s: float) -> float:
    """Seconds per call of one sample: ``fn`` called back to back for at least
    ``min_sample_s``, so that the timer's resolution and noise stay small against it."""
    calls, begin = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - begin
        if elapsed >= min_sample_s:
            return elapsed / calls
