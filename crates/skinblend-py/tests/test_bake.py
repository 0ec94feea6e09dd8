"""Batch baking on a Dask LocalCluster with 2 workers: every output written, equal to the serial
run's bit for bit; a failing job's error reaches the caller."""

from __future__ import annotations

from typing import List, Tuple, Union

import numpy as np
import pytest

import skinblend

distributed = pytest.importorskip("dask.distributed")


def jobs(models_dir, out_dir):
    specs: List[Tuple[str, Union[str, int, None], skinblend.Method]] = [
        ("CesiumMan/CesiumMan.glb", None, "dq"),
        ("Fox/Fox.glb", "Run", "linear"),
        ("Fox/Fox.glb", "Survey", "dq"),
        ("RiggedFigure/RiggedFigure.glb", 0, "cor"),
        ("SimpleSkin/SimpleSkin.gltf", None, "dq"),
    ]
    return [
        skinblend.BakeJob(file=str(models_dir / f), output=str(out_dir / f"job{i}.npz"), animation=a, frames=6, method=m)
        for i, (f, a, m) in enumerate(specs)
    ]


def test_bake_on_two_workers_equals_serial(models_dir, tmp_path):
    serial_dir, dask_dir = tmp_path / "serial", tmp_path / "dask"
    serial_dir.mkdir()
    dask_dir.mkdir()
    serial = [skinblend.bake_job(j) for j in jobs(models_dir, serial_dir)]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        written = skinblend.bake(jobs(models_dir, dask_dir), client)
    assert [p.replace(str(dask_dir), "") for p in written] == [p.replace(str(serial_dir), "") for p in serial]
    for a_path, b_path in zip(serial, written):
        with np.load(a_path) as a, np.load(b_path) as b:
            assert sorted(a.files) == sorted(b.files) and len(a.files) >= 2
            for key in a.files:
                assert np.array_equal(a[key], b[key]), key
            assert a["times_s"].shape == (6,)
            positions = [a[k] for k in a.files if k != "times_s"]
            assert all(p.shape[0] == 6 and p.shape[2] == 3 for p in positions)


def test_bake_reports_a_failing_job(models_dir, tmp_path):
    bad = skinblend.BakeJob(file=str(tmp_path / "missing.glb"), output=str(tmp_path / "x.npz"))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        with pytest.raises(FileNotFoundError, match="missing.glb"):
            skinblend.bake([bad], client)
    assert not (tmp_path / "x.npz").exists()
