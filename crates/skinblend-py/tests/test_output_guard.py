"""Every Python function that writes refuses an output that is an input file of its model (the
`.glb`/`.gltf`, or the external `.bin` it read), reached by the same path, through `..`, a
symbolic link or a hard link: `ValueError`, the input's bytes unchanged (sha256 before and
after), nothing written. The rule is the CLI's (skinblend_gltf::export::refuse_input)."""

from __future__ import annotations

import hashlib
import json
import os
import struct
from pathlib import Path
from typing import Callable, Dict, List

import pytest

import skinblend

SOURCE = "RiggedSimple/RiggedSimple.glb"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def split_glb(glb: bytes) -> tuple[dict, bytes]:
    """The JSON and BIN chunks of a GLB."""
    json_length = struct.unpack_from("<I", glb, 12)[0]
    document = json.loads(glb[20 : 20 + json_length])
    bin_offset = 20 + json_length
    bin_length = struct.unpack_from("<I", glb, bin_offset)[0]
    return document, glb[bin_offset + 8 : bin_offset + 8 + bin_length]


@pytest.fixture
def glb(models_dir, tmp_path) -> Path:
    """A writable copy of the sample, `copy.glb` (content copied: the sample is read-only)."""
    path = tmp_path / "copy.glb"
    path.write_bytes((models_dir / SOURCE).read_bytes())
    (tmp_path / "sub").mkdir()
    return path


@pytest.fixture
def gltf_with_bin(models_dir, tmp_path) -> List[Path]:
    """The sample as `copy.gltf` with its buffer in `copy.bin`."""
    document, data = split_glb((models_dir / SOURCE).read_bytes())
    document["buffers"] = [{"byteLength": document["buffers"][0]["byteLength"], "uri": "copy.bin"}]
    gltf, bin_file = tmp_path / "copy.gltf", tmp_path / "copy.bin"
    gltf.write_text(json.dumps(document))
    bin_file.write_bytes(data[: document["buffers"][0]["byteLength"]])
    return [gltf, bin_file]


def aliases(target: Path, suffix: str) -> Dict[str, Path]:
    """Paths that name `target`: itself, through `..`, a symbolic link, a hard link (the links
    named with `suffix`)."""
    folder = target.parent
    (folder / "sub").mkdir(exist_ok=True)
    link, hard = folder / f"link{suffix}", folder / f"hard{suffix}"
    os.symlink(target, link)
    os.link(target, hard)
    return {
        "same path": target,
        "dot-dot": folder / "sub" / ".." / target.name,
        "through a missing folder": folder / "missing" / ".." / target.name,
        "symlink": link,
        "hard link": hard,
    }


def assert_refused(write: Callable[[Path], object], output: Path, inputs: List[Path]) -> None:
    before = {p: sha256(p) for p in inputs}
    folder = inputs[0].parent
    folder_before = sorted(os.listdir(folder))
    was_link = output.is_symlink()
    with pytest.raises(ValueError, match="the output is the input file") as raised:
        write(output)
    assert not isinstance(raised.value, skinblend.GltfError), "bad usage, not a bad file"
    assert str(output) in str(raised.value)
    assert {p: sha256(p) for p in inputs} == before
    assert output.is_symlink() == was_link
    assert sorted(os.listdir(folder)) == folder_before, "nothing written, no folder created"


def writers(model: skinblend.Model) -> Dict[str, Callable[[Path], object]]:
    return {
        "export": lambda path: model.export(path, "dq"),
        "write_rotation_centers": model.write_rotation_centers,
    }


def test_export_onto_its_own_file_raises_value_error(glb):
    model = skinblend.load(glb)
    before = sha256(glb)
    with pytest.raises(ValueError, match="the output is the input file"):
        model.export(glb, "dq")
    assert sha256(glb) == before
    assert len(skinblend.load(glb).animations) == len(model.animations)


def test_input_files(glb, gltf_with_bin):
    assert skinblend.load(glb).input_files() == [str(glb.resolve())]
    gltf, bin_file = gltf_with_bin
    assert skinblend.load(gltf).input_files() == [str(gltf.resolve()), str(bin_file.resolve())]


@pytest.mark.parametrize("writer", ["export", "write_rotation_centers"])
def test_model_writers_refuse_their_glb(glb, writer):
    model = skinblend.load(glb)
    for how, output in aliases(glb, ".glb").items():
        assert_refused(writers(model)[writer], output, [glb])


@pytest.mark.parametrize("writer", ["export", "write_rotation_centers"])
def test_model_writers_refuse_their_gltf_and_its_bin(gltf_with_bin, writer):
    gltf, bin_file = gltf_with_bin
    model = skinblend.load(gltf)
    write = writers(model)[writer]
    assert_refused(write, gltf, gltf_with_bin)
    assert_refused(write, bin_file, gltf_with_bin)
    assert_refused(write, gltf.parent / "missing" / ".." / "copy.bin", gltf_with_bin)


def test_export_elsewhere_still_writes(glb):
    model = skinblend.load(glb)
    model.export(glb.parent / "posed.glb")
    assert skinblend.load(glb.parent / "posed.glb").nodes()


def test_bake_job_refuses_its_input(glb):
    # A .npz output that is the input: the input under that name, a link to it, or its alias.
    npz = glb.parent / "model.npz"
    npz.write_bytes(glb.read_bytes())
    for how, output in aliases(glb, ".npz").items():
        if output.suffix != ".npz":
            continue
        job = skinblend.BakeJob(file=str(glb), output=str(output), frames=2)
        assert_refused(lambda path: skinblend.bake_job(job), output, [glb])
    for output in [npz, npz.parent / "sub" / ".." / "model.npz", npz.parent / "missing" / ".." / "model.npz"]:
        job = skinblend.BakeJob(file=str(npz), output=str(output), frames=2)
        assert_refused(lambda path: skinblend.bake_job(job), output, [npz])


def test_bake_job_refuses_the_bin_of_its_gltf(gltf_with_bin):
    gltf, bin_file = gltf_with_bin
    document = json.loads(gltf.read_text())
    document["buffers"][0]["uri"] = "copy.npz"
    gltf.write_text(json.dumps(document))
    npz = bin_file.rename(bin_file.with_suffix(".npz"))
    job = skinblend.BakeJob(file=str(gltf), output=str(npz), frames=2)
    assert_refused(lambda path: skinblend.bake_job(job), npz, [gltf, npz])


def test_dask_bake_refuses_its_input(glb):
    distributed = pytest.importorskip("dask.distributed")
    link = glb.parent / "link.npz"
    os.symlink(glb, link)
    job = skinblend.BakeJob(file=str(glb), output=str(link), frames=2)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        assert_refused(lambda path: skinblend.bake([job], client), link, [glb])
