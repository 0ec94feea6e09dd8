"""glTF models: results equal the `skinblend` CLI's on the sample models to the bit, and file
errors arrive as FileNotFoundError and GltfError with the CLI's one-line messages."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

import skinblend
from conftest import SAMPLE_MODELS


def posed_arrays(path: Path):
    """Every mesh primitive's arrays of an exported (posed, unskinned) file, by node."""
    model = skinblend.load(path)
    out = {}
    for index, node in enumerate(model.nodes()):
        if node["mesh"] is not None:
            count = model._native.primitive_count(node["mesh"])
            out[index] = [model.primitive(node["mesh"], p) for p in range(count)]
    return out


@pytest.mark.parametrize("sample", SAMPLE_MODELS)
@pytest.mark.parametrize("method", ["linear", "dq", "cor"])
def test_pose_equals_cli_to_the_bit(sample, method, models_dir, cli, tmp_path):
    source = models_dir / sample
    cli_out = tmp_path / "cli.glb"
    run = subprocess.run(
        [*cli, "pose", str(source), "--time", "0.5", "--method", method, "-o", str(cli_out)],
        capture_output=True, text=True,
    )
    assert run.returncode == 0, run.stderr
    model = skinblend.load(source)
    pose = model.pose(time_s=0.5)
    nodes = model.skin(method, pose)
    assert nodes, "every sample model has a skinned node"
    exported = posed_arrays(cli_out)
    for node in nodes:
        for p, result in enumerate(node.primitives):
            from_cli = exported[node.node][p]
            assert np.array_equal(result.positions, from_cli["positions"]), (node.node, p)
            if result.normals is not None:
                assert np.array_equal(result.normals, from_cli["normals"]), (node.node, p)
            if result.tangents is not None:
                assert np.array_equal(result.tangents, from_cli["tangents"]), (node.node, p)
    # The file Python writes is the CLI's, byte for byte.
    py_out = tmp_path / "py.glb"
    model.export(py_out, method, pose)
    assert py_out.read_bytes() == cli_out.read_bytes()


def test_frames_equal_single_poses(models_dir):
    model = skinblend.load(models_dir / "CesiumMan/CesiumMan.glb")
    animation = model.animations[0]
    times = np.linspace(animation["start_s"], animation["end_s"], 4).astype(np.float32)
    baked = model.skin_frames(0, times.tolist(), "dq")
    for f, t in enumerate(times):
        nodes = model.skin("dq", model.pose(0, float(t)))
        for (node, _mesh, _skin, arrays), single in zip(baked, nodes):
            assert node == single.node
            for frames, result in zip(arrays, single.primitives):
                assert np.array_equal(frames[f], result.positions)


def test_model_description(models_dir):
    model = skinblend.load(models_dir / "Fox/Fox.glb")
    info = model.info()
    assert isinstance(info, dict) and info
    names = [a["name"] for a in model.animations]
    assert "Survey" in names and "Run" in names
    assert model.skinned_nodes()
    with pytest.raises(skinblend.GltfError, match=r"no animation \"Dance\": the file has 0 \"Survey\""):
        model.pose("Dance", 0.0)


def test_missing_file_is_file_not_found(tmp_path):
    missing = tmp_path / "missing.glb"
    with pytest.raises(FileNotFoundError, match="missing.glb"):
        skinblend.load(missing)


def test_malformed_file_is_gltf_error_with_the_cli_message(tmp_path, cli):
    bad = tmp_path / "bad.gltf"
    bad.write_text('{"asset": {"version": "2.0"}, "nodes": [{"mesh": 3}]}')
    with pytest.raises(skinblend.GltfError) as caught:
        skinblend.load(bad)
    assert isinstance(caught.value, ValueError)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(str(bad))
    run = subprocess.run([*cli, "info", str(bad)], capture_output=True, text=True)
    assert run.returncode != 0
    assert run.stderr.strip() == f"skinblend: {message}"


def test_export_refuses_unknown_extension(models_dir, tmp_path):
    model = skinblend.load(models_dir / "SimpleSkin/SimpleSkin.gltf")
    with pytest.raises(skinblend.GltfError, match=r"\.stl"):
        model.export(tmp_path / "x.stl")
    assert not (tmp_path / "x.stl").exists()


def test_rotation_centers_written_and_used(models_dir, tmp_path, cli):
    model = skinblend.load(models_dir / "RiggedSimple/RiggedSimple.glb")
    summary = model.rotation_centers()
    assert summary and all(s["vertices"] > 0 for s in summary)
    out = tmp_path / "centers.glb"
    model.write_rotation_centers(out)
    run = subprocess.run([*cli, "centers", str(models_dir / "RiggedSimple/RiggedSimple.glb"), "-o",
                          str(tmp_path / "cli-centers.glb")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert out.read_bytes() == (tmp_path / "cli-centers.glb").read_bytes()
