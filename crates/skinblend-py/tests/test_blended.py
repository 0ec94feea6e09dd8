"""The blended method from Python: its ends are LBS and DQS to the bit, its middle the
interpolation of the two, the joint rule, and refusals naming ``blend_values``."""

from __future__ import annotations

import numpy as np
import pytest

import skinblend

#: The blended result against ``(1 - b) LBS + b DQS`` of the two methods' own calls: one
#: interpolation's rounding and the kernels' own (a few f32 ulps of coordinates of size ~1).
BLEND_VS_SEPARATE = 2e-5


def twist():
    return next(f for f in skinblend.fixtures() if f["name"] == "twist_coarse")


def run(f, palette, method, **kwargs):
    return skinblend.skin(
        f["positions"], f["joints"], f["weights"], palette, normals=f["normals"],
        method=method, bind_origins=f["bind_origins"], **kwargs,
    )


@pytest.mark.parametrize("threads", [1, None])
def test_ends_are_lbs_and_dqs_to_the_bit(threads):
    f = twist()
    palette = skinblend.fixture_palette("twist_coarse", 180.0)
    n = len(f["positions"])
    linear = run(f, palette, "linear", threads=threads)
    dq = run(f, palette, "dq", threads=threads)
    for values, expected in [(0.0, linear), (np.zeros(n), linear), (1.0, dq), (np.ones(n), dq)]:
        got = run(f, palette, "blended", blend_values=values, threads=threads)
        assert np.array_equal(got.positions, expected.positions)
        assert np.array_equal(got.normals, expected.normals)
        assert got.diagnostics == expected.diagnostics


def test_the_joint_rule_interpolates_the_two_methods():
    f = twist()
    palette = skinblend.fixture_palette("twist_coarse", 150.0)
    values = skinblend.blend_values_from_joints(f["joints"], f["weights"], [f["ring_joint"]])
    assert values.dtype == np.float32 and values.shape == (len(f["positions"]),)
    assert {0.0, 0.5, 1.0} <= set(values.tolist())
    linear = run(f, palette, "linear")
    dq = run(f, palette, "dq")
    blended = run(f, palette, "blended", blend_values=values)
    expected = linear.positions + values[:, None] * (dq.positions - linear.positions)
    assert np.max(np.abs(blended.positions - expected)) <= BLEND_VS_SEPARATE
    # The same through a Skinner and skin_frames.
    skinner = skinblend.Skinner(
        f["positions"], f["joints"], f["weights"], normals=f["normals"], method="blended",
        bind_origins=f["bind_origins"], blend_values=values,
    )
    assert np.array_equal(skinner.skin(palette).positions, blended.positions)
    frames = skinblend.skin_frames(
        f["positions"], f["joints"], f["weights"], palette[None], method="blended",
        bind_origins=f["bind_origins"], blend_values=values,
    )
    alone = skinblend.skin(
        f["positions"], f["joints"], f["weights"], palette, method="blended",
        bind_origins=f["bind_origins"], blend_values=values,
    )
    assert np.array_equal(frames[0], alone.positions)


def test_bad_blend_values_are_refused_by_name():
    f = twist()
    palette = skinblend.fixture_palette("twist_coarse", 90.0)
    n = len(f["positions"])
    with pytest.raises(ValueError, match="blend value"):
        run(f, palette, "blended")
    bad = np.full(n, 0.5, np.float32)
    bad[7] = np.nan
    with pytest.raises(ValueError, match="vertex 7"):
        run(f, palette, "blended", blend_values=bad)
    bad[7] = 1.5
    with pytest.raises(ValueError, match="vertex 7"):
        run(f, palette, "blended", blend_values=bad)
    with pytest.raises(ValueError, match="blend_values"):
        run(f, palette, "blended", blend_values=np.zeros(n - 1, np.float32))
    with pytest.raises(ValueError, match="not in"):
        run(f, palette, "blended", blend_values=-0.5)
    with pytest.raises(ValueError, match="dq_joints"):
        skinblend.blend_values_from_joints(f["joints"], f["weights"], [99])
