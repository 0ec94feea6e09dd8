"""Every array front door goes through a mesh checked once (the core's SkinMesh): a Skinner is
checked when it is made and never per frame, and dense weights converted once by
sparse_weights skin to the dense call's bits."""

from __future__ import annotations

from typing import Tuple

import numpy as np
import pytest

import skinblend


def _mesh(n: int = 3000, k: int = 4, joints: int = 24):
    return skinblend.benchmark_mesh(n, k, joints, seed=11)


def test_a_skinner_is_checked_once_however_many_frames():
    mesh = _mesh()
    before = skinblend.full_validations()
    skinner = skinblend.Skinner(
        mesh["positions"], mesh["joints"], mesh["weights"], normals=mesh["normals"], method="dq"
    )
    assert skinblend.full_validations() - before == 1
    palettes = np.stack([mesh["palette"]] * 4)
    for _ in range(10):
        skinner.skin(mesh["palette"])
    skinner.skin_frames(palettes)
    assert skinblend.full_validations() - before == 1, "frames checked the mesh again"


def test_a_one_shot_skin_checks_the_mesh_once_per_call():
    mesh = _mesh()
    before = skinblend.full_validations()
    for call in range(3):
        skinblend.skin(mesh["positions"], mesh["joints"], mesh["weights"], mesh["palette"])
        assert skinblend.full_validations() - before == call + 1


def test_sparse_weights_once_gives_the_dense_call_s_bits():
    mesh = _mesh(n=500, k=3, joints=12)
    n = mesh["positions"].shape[0]
    dense = np.zeros((n, 12), np.float32)
    rows = np.repeat(np.arange(n), mesh["joints"].shape[1])
    np.add.at(dense, (rows, mesh["joints"].astype(np.int64).ravel()), mesh["weights"].ravel())
    joints, weights = skinblend.sparse_weights(dense)
    assert joints.dtype == np.uint16 and weights.dtype == np.float32
    assert joints.shape == weights.shape == (n, 3)
    for method in skinblend.METHODS[:2]:
        from_dense = skinblend.skin(mesh["positions"], None, dense, mesh["palette"], method=method)
        from_pair = skinblend.skin(mesh["positions"], joints, weights, mesh["palette"], method=method)
        assert np.array_equal(
            from_dense.positions.view(np.uint32), from_pair.positions.view(np.uint32)
        ), method


def test_sparse_weights_names_what_is_wrong():
    import pytest

    with pytest.raises(ValueError, match="weights: expected a float array"):
        skinblend.sparse_weights(np.zeros((4, 3), np.int32))
    with pytest.raises(ValueError, match="weights: expected shape"):
        skinblend.sparse_weights(np.zeros(4, np.float32))


def test_one_shot_calls_of_different_meshes_each_give_their_skinner_s_bits():
    # The one-shot refills the influence arrays of the call before (a larger mesh, then a
    # smaller one with fewer influences, then a larger one again): each result must be its own
    # mesh's, to the bit, and the caller's arrays untouched.
    for n, k, joints in [(4000, 4, 24), (700, 2, 9), (2500, 8, 30)]:
        mesh = skinblend.benchmark_mesh(n, k, joints, seed=n)
        inputs = {name: mesh[name].copy() for name in ("positions", "normals", "joints", "weights")}
        methods: Tuple[skinblend.Method, ...] = ("linear", "dq")
        for method in methods:
            once = skinblend.skin(mesh["positions"], mesh["joints"], mesh["weights"],
                                  mesh["palette"], normals=mesh["normals"], method=method)
            skinner = skinblend.Skinner(mesh["positions"], mesh["joints"], mesh["weights"],
                                        normals=mesh["normals"], method=method)
            frame = skinner.skin(mesh["palette"])
            assert np.array_equal(once.positions.view(np.uint32), frame.positions.view(np.uint32))
            assert once.normals is not None and frame.normals is not None
            assert np.array_equal(once.normals.view(np.uint32), frame.normals.view(np.uint32))
        for name, before in inputs.items():
            assert np.array_equal(mesh[name], before), f"{name} was written to"


def test_unaligned_float32_inputs_are_copied_not_refused():
    # numpy float32 data at an odd byte offset: not aligned for the zero-copy view.
    mesh = _mesh(n=64)
    raw = np.zeros(mesh["positions"].size * 4 + 1, np.uint8)
    unaligned = np.frombuffer(raw.data, np.float32, mesh["positions"].size, offset=1)
    unaligned = unaligned.reshape(mesh["positions"].shape)
    unaligned[...] = mesh["positions"]
    odd = skinblend.skin(unaligned, mesh["joints"], mesh["weights"], mesh["palette"])
    even = skinblend.skin(mesh["positions"], mesh["joints"], mesh["weights"], mesh["palette"])
    assert np.array_equal(odd.positions, even.positions)


def test_a_frame_into_given_outputs_refuses_or_reorders_what_is_not_c_ordered():
    # With every output given, the extension checks the arguments itself (the fast path):
    # a Fortran-ordered array holds the same numbers elsewhere, so an output in that order is
    # refused with the Python check's message, and a palette in that order is read as numbers.
    mesh = _mesh(n=100, joints=8)
    skinner = skinblend.Skinner(
        mesh["positions"], mesh["joints"], mesh["weights"], normals=mesh["normals"], threads=1
    )
    expected = skinner.skin(mesh["palette"]).positions
    out, out_normals = np.empty((100, 3), np.float32), np.empty((100, 3), np.float32)
    fortran_out = np.asfortranarray(np.empty((100, 3), np.float32))
    with pytest.raises(ValueError, match=r"^out: expected a C-contiguous float32 numpy array"):
        skinner.skin(mesh["palette"], out=fortran_out, out_normals=out_normals)
    fortran_palette = np.asfortranarray(mesh["palette"])
    result = skinner.skin(fortran_palette, out=out, out_normals=out_normals)
    assert result.positions is out
    np.testing.assert_array_equal(out, expected)


def test_the_bench_reference_times_the_kernel_on_the_skinners_mesh():
    """`_kernel_seconds_per_call`, the bench script's kernel-alone reference, skins the Skinner's
    own mesh without checking it again, and refuses a palette or a duration it cannot use."""
    mesh = _mesh()
    skinner = skinblend.Skinner(
        mesh["positions"], mesh["joints"], mesh["weights"], normals=mesh["normals"], method="dq"
    )
    before = skinblend.full_validations()
    seconds = skinner._native._kernel_seconds_per_call(mesh["palette"], 0.01)
    assert 0.0 < seconds < 0.01
    assert skinblend.full_validations() == before
    for bad in (0.0, -1.0, float("nan"), 11.0):
        with pytest.raises(ValueError, match="min_seconds"):
            skinner._native._kernel_seconds_per_call(mesh["palette"], bad)
    with pytest.raises(ValueError):
        skinner._native._kernel_seconds_per_call(mesh["palette"][:3], 0.01)
