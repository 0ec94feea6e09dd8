"""docs/torch.md's worked example, run as written: examples/fit_pose.py fits a 170° twist
through DQS and through LBS with torch.optim. DQS must reach it with the radius kept; LBS must
show the candy wrapper (its middle ring collapsed, its loss far above DQS's)."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from conftest import IN_CI, REPOSITORY

try:
    import torch  # noqa: F401
except ImportError:
    if IN_CI:
        raise
    pytest.skip("torch is not installed (pip install torch)", allow_module_level=True)

EXAMPLE = REPOSITORY / "crates" / "skinblend-py" / "examples" / "fit_pose.py"


def test_fit_pose_example() -> None:
    spec = importlib.util.spec_from_file_location("fit_pose", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fit_pose"] = module
    spec.loader.exec_module(module)
    results = module.main()
    dq, linear = results["dq"], results["linear"]
    # DQS: within 3° of the twist (its coaxial blend is not exactly linear in the weight) and
    # the middle ring at its rest radius (a rigid blend cannot shrink it: 1e-3 is rounding).
    assert abs(dq["angle_deg"] - module.TWIST_DEG) < 3.0
    assert dq["middle_radius"] > 0.999
    # LBS: the candy wrapper, a middle ring under half its radius and ten times DQS's loss.
    assert linear["middle_radius"] < 0.5
    assert linear["loss"] > 10 * dq["loss"]
