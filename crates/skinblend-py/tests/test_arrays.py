"""Array skinning: the built-in rigs, dense against sparse weights, the prepared skinner, frames,
and refusals of bad shapes and dtypes (each message names the argument)."""

from __future__ import annotations

import numpy as np
import pytest

import skinblend


def twist():
    return next(f for f in skinblend.fixtures() if f["name"] == "twist_coarse")


def random_rig(n: int, j: int, k: int, seed: int = 7):
    """A rig with random positions, k distinct ascending joints per vertex out of j, weights
    summing to 1, and random rigid palettes (rotations through 4x4 matrices)."""
    rng = np.random.default_rng(seed)
    positions = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    joints = np.sort(np.stack([rng.choice(j, k, replace=False) for _ in range(n)]), axis=1)
    weights = rng.uniform(0.05, 1, (n, k)).astype(np.float32)
    weights /= weights.sum(axis=1, keepdims=True)
    return positions, joints.astype(np.uint16), weights.astype(np.float32)


def random_palettes(frames: int, j: int, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(frames, j, 4))
    q /= np.linalg.norm(q, axis=2, keepdims=True)
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    m = np.zeros((frames, j, 4, 4))
    m[..., 0, 0] = 1 - 2 * (y * y + z * z)
    m[..., 0, 1] = 2 * (x * y - z * w)
    m[..., 0, 2] = 2 * (x * z + y * w)
    m[..., 1, 0] = 2 * (x * y + z * w)
    m[..., 1, 1] = 1 - 2 * (x * x + z * z)
    m[..., 1, 2] = 2 * (y * z - x * w)
    m[..., 2, 0] = 2 * (x * z - y * w)
    m[..., 2, 1] = 2 * (y * z + x * w)
    m[..., 2, 2] = 1 - 2 * (x * x + y * y)
    m[..., :3, 3] = rng.uniform(-0.5, 0.5, (frames, j, 3))
    m[..., 3, 3] = 1
    return m.astype(np.float32)


def test_methods_listed():
    assert skinblend.METHODS == ("linear", "dq", "cor", "blended")


def test_lbs_matches_numpy_formulation():
    """LBS equals the researchers' einsum (dense weights, a matrix per vertex).

    Tolerance 1e-5 m: the SIMD kernel fuses multiply-adds and sums in another order than numpy;
    both are f32 round-off on coordinates of size ~1, a few ulps (1.2e-7 each) per term."""
    positions, joints, weights = random_rig(5000, 24, 4)
    palette = random_palettes(1, 24)[0]
    dense = np.zeros((5000, 24), np.float32)
    np.put_along_axis(dense, joints.astype(np.int64), weights, axis=1)
    blended = np.einsum("nj,jab->nab", dense, palette)
    expected = np.einsum("nab,nb->na", blended[:, :3, :], np.c_[positions, np.ones(5000, np.float32)])
    result = skinblend.skin(positions, joints, weights, palette, method="linear")
    assert result.positions.dtype == np.float32 and result.positions.shape == (5000, 3)
    assert np.abs(result.positions - expected).max() < 1e-5


def test_dq_keeps_the_twisted_ring_round():
    """The candy wrapper: at 180° LBS collapses the middle ring of the twist rig, DQS keeps it
    (the evidence table's figures: LBS 0 %, DQS 100 % of the rest radius)."""
    f = twist()
    palette = skinblend.fixture_palette("twist_coarse", 180.0)
    lbs = skinblend.skin(f["positions"], f["joints"], f["weights"], palette, method="linear")
    dq = skinblend.skin(f["positions"], f["joints"], f["weights"], palette, method="dq",
                        bind_origins=f["bind_origins"], normals=f["normals"], tangents=f["tangents"])
    ring = f["joint_ring"]
    radius = lambda p: float(np.min(np.hypot(p[ring, 0], p[ring, 2])))  # noqa: E731
    rest = radius(f["positions"])
    assert radius(lbs.positions) < 0.01 * rest
    assert abs(radius(dq.positions) / rest - 1) < 1e-4
    assert dq.normals is not None and dq.tangents is not None
    assert dq.normals.shape == f["normals"].shape and dq.tangents.shape == (len(ring) * 0 + len(f["positions"]), 4)
    assert lbs.diagnostics["singular_normal_matrices"] == 0  # no normals given to LBS
    assert set(dq.diagnostics) == {"singular_normal_matrices", "non_rigid_joints", "sign_flips", "unweighted_vertices"}


def test_cor_with_computed_centers():
    f = twist()
    centers, without = skinblend.rotation_centers(f["positions"], f["triangles"], f["joints"], f["weights"])
    assert centers.shape == f["positions"].shape and without >= 0
    palette = skinblend.fixture_palette("twist_coarse", 90.0)
    cor = skinblend.skin(f["positions"], f["joints"], f["weights"], palette, method="cor", centers=centers,
                         bind_origins=f["bind_origins"])
    assert np.isfinite(cor.positions).all()
    with pytest.raises(ValueError, match="center"):
        skinblend.skin(f["positions"], f["joints"], f["weights"], palette, method="cor")


@pytest.mark.parametrize("method", skinblend.METHODS)
def test_dense_weights_equal_sparse(method):
    """Dense (N, J) weights are converted once to each vertex's non-zero weights in ascending
    joint order: the same influences as the sparse input, so the same bits."""
    positions, joints, weights = random_rig(3000, 24, 4)
    dense = np.zeros((3000, 24), np.float64)
    np.put_along_axis(dense, joints.astype(np.int64), weights, axis=1)
    palette = random_palettes(1, 24)[0]
    centers = None
    if method == "cor":
        centers = positions * 0.5  # any finite per-vertex centers exercise the kernel
    # Blended: values 0, 1 and between (ignored by the other methods).
    blend = np.resize(np.array([0.0, 1.0, 0.25, 0.5], np.float32), 3000)
    sparse = skinblend.skin(
        positions, joints, weights, palette, method=method, centers=centers, blend_values=blend
    )
    from_dense = skinblend.skin(
        positions, None, dense, palette, method=method, centers=centers, blend_values=blend
    )
    assert np.array_equal(sparse.positions, from_dense.positions)


def test_skinner_reuses_out_arrays_and_equals_one_shot():
    positions, joints, weights = random_rig(9000, 24, 4)
    normals = np.tile(np.array([[0, 1, 0]], np.float32), (9000, 1))
    palettes = random_palettes(3, 24)
    skinner = skinblend.Skinner(positions, joints, weights, normals=normals, method="dq")
    out = np.empty((9000, 3), np.float32)
    out_normals = np.empty((9000, 3), np.float32)
    for palette in palettes:
        result = skinner.skin(palette, out=out, out_normals=out_normals)
        assert result.positions is out and result.normals is out_normals
        once = skinblend.skin(positions, joints, weights, palette, normals=normals, method="dq")
        assert once.normals is not None
        assert np.array_equal(out, once.positions) and np.array_equal(out_normals, once.normals)


@pytest.mark.parametrize("threads", [None, 1, 3])
def test_skin_frames_equal_per_frame_skin(threads):
    positions, joints, weights = random_rig(10000, 32, 4)
    palettes = random_palettes(5, 32)
    frames = skinblend.skin_frames(positions, joints, weights, palettes, method="dq", threads=threads)
    assert frames.shape == (5, 10000, 3) and frames.dtype == np.float32
    for f in range(5):
        one = skinblend.skin(positions, joints, weights, palettes[f], method="dq", threads=1)
        assert np.array_equal(frames[f], one.positions)


def test_float64_converted_and_int64_joints_accepted():
    positions, joints, weights = random_rig(100, 8, 2)
    palette = random_palettes(1, 8)[0]
    a = skinblend.skin(positions, joints, weights, palette)
    b = skinblend.skin(positions.astype(np.float64), joints.astype(np.int64), weights.astype(np.float64),
                       palette.astype(np.float64))
    assert np.array_equal(a.positions, b.positions)


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(positions=np.zeros((10, 2), np.float32)), r"positions: expected shape \(N, 3\), got \(10, 2\)"),
        (dict(positions=np.zeros((10, 3), np.int32)), r"positions: expected a float array of shape \(N, 3\), got dtype int32"),
        (dict(joints=np.zeros((10, 2), np.float32)), r"joints: expected an integer array of shape \(10, K\)"),
        (dict(joints=np.zeros((9, 2), np.uint16)), r"joints: expected shape \(10, K\), got \(9, 2\)"),
        (dict(weights=np.zeros((10, 3), np.float32)), r"weights: expected shape \(10, 2\) \(as joints\), got \(10, 3\)"),
        (dict(palette=np.zeros((4, 3, 4), np.float32)), r"palette: expected shape \(J, 4, 4\), got \(4, 3, 4\)"),
        (dict(normals=np.zeros((10, 4), np.float32)), r"normals: expected shape \(10, 3\), got \(10, 4\)"),
        (dict(tangents=np.zeros((10, 3), np.float32)), r"tangents: expected shape \(10, 4\), got \(10, 3\)"),
        (dict(method="slerp"), r"method: unknown method 'slerp'; expected one of linear, dq, cor"),
        (dict(threads=0), r"threads: expected None or an integer of at least 1, got 0"),
        (dict(joints=np.full((10, 2), -1, np.int64)), r"joints: vertex 0 slot 0: joint index -1 is outside 0..65535"),
    ],
)
def test_bad_arguments_refused_by_name(change, message):
    positions, joints, weights = random_rig(10, 4, 2)
    args = dict(positions=positions, joints=joints, weights=weights, palette=random_palettes(1, 4)[0])
    args.update(change)
    kwargs = {k: args.pop(k) for k in ("normals", "tangents", "method", "threads") if k in args}
    with pytest.raises(ValueError, match=message):
        skinblend.skin(args["positions"], args["joints"], args["weights"], args["palette"], **kwargs)


def test_core_errors_name_the_place():
    positions, joints, weights = random_rig(10, 4, 2)
    weights[3, 1] = -0.5
    with pytest.raises(ValueError, match=r"vertex 3"):
        skinblend.skin(positions, joints, weights, random_palettes(1, 4)[0])
    positions, joints, weights = random_rig(10, 4, 2)
    positions[5, 0] = np.nan
    with pytest.raises(ValueError, match=r"positions\[5\] is not finite"):
        skinblend.skin(positions, joints, weights, random_palettes(1, 4)[0])
    positions, joints, weights = random_rig(10, 4, 2)
    with pytest.raises(ValueError, match=r"palette"):
        skinblend.skin(positions, joints, weights, random_palettes(1, 2)[0])  # too few joints
    bad = random_palettes(1, 4)[0]
    bad[2, 0, 0] = np.inf
    with pytest.raises(ValueError, match=r"joint 2"):
        skinblend.skin(positions, joints, weights, bad)


def test_out_array_refused_when_wrong():
    positions, joints, weights = random_rig(10, 4, 2)
    skinner = skinblend.Skinner(positions, joints, weights)
    with pytest.raises(ValueError, match=r"out: expected a C-contiguous float32 numpy array of shape \(10, 3\)"):
        skinner.skin(random_palettes(1, 4)[0], out=np.empty((10, 3), np.float64))
    with pytest.raises(ValueError, match=r"out_normals: the mesh has no normals"):
        skinner.skin(random_palettes(1, 4)[0], out_normals=np.empty((10, 3), np.float32))


def test_metrics_and_evidence():
    f = twist()
    palette = skinblend.fixture_palette("twist_coarse", 180.0)
    lbs = skinblend.skin(f["positions"], f["joints"], f["weights"], palette, method="linear")
    dq = skinblend.skin(f["positions"], f["joints"], f["weights"], palette, method="dq")
    radius = skinblend.candy_wrapper_radius(lbs.positions, (0, 0, 0), (0, 1, 0), 1.0, 0.01)
    assert radius is not None and radius < 1e-3
    ratios = skinblend.edge_ratios(f["positions"], dq.positions, f["triangles"])
    assert ratios is not None
    assert set(ratios) == {"min", "mean", "max", "count"} and ratios["count"] == 3 * len(f["triangles"])
    assert skinblend.displacement(lbs.positions, lbs.positions) == {"max_relative": 0.0, "rms_relative": 0.0}
    closed = next(x for x in skinblend.fixtures() if x["closed"])
    assert skinblend.volume_ratio(closed["positions"], closed["positions"], closed["triangles"]) == 1.0
    rows = skinblend.evidence_rows()
    row = next(r for r in rows if r["fixture"] == "twist_coarse" and r["angle_deg"] == 180.0 and r["method"] == "dq")
    assert abs(row["candy_wrapper_ratio"] - 1.0) < 1e-4
    assert {r["method"] for r in rows} == set(skinblend.METHODS)
    with pytest.raises(ValueError, match="no built-in rig"):
        skinblend.fixture_palette("nope", 0.0)


def test_misaligned_out_and_empty_palettes_are_errors_not_panics():
    positions, joints, weights = random_rig(10, 4, 2)
    tangents = np.tile(np.array([[1, 0, 0, 1]], np.float32), (10, 1))
    skinner = skinblend.Skinner(positions, joints, weights, tangents=tangents)
    # 4 bytes past a 16-byte boundary: contiguous, but not aligned for 4-float vectors.
    shifted = np.empty(10 * 4 + 4, np.float32)
    offset = (-shifted.ctypes.data % 16) // 4 + 1
    misaligned = shifted[offset:offset + 40].reshape(10, 4)
    assert misaligned.ctypes.data % 16 != 0 and misaligned.flags.c_contiguous
    with pytest.raises(ValueError, match=r"out_tangents: expected an array aligned to 16 bytes"):
        skinner.skin(random_palettes(1, 4)[0], out_tangents=misaligned)
    with pytest.raises(ValueError, match=r"palette has 0 matrices, but the influences address 4 joints"):
        skinner.skin_frames(np.zeros((2, 0, 4, 4), np.float32))
