"""Shared fixtures: the sample models and the `skinblend` command line program.

Outside CI (no CI=true), tests that need the sample models (../shared/models beside the
repository, or SKINBLEND_MODELS) or the CLI (SKINBLEND_CLI, else `cargo run -p skinblend-cli`)
skip with a message; under CI=true a missing one fails them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import List

import pytest

REPOSITORY = Path(__file__).resolve().parents[3]
IN_CI = os.environ.get("CI") == "true"

#: The sample models every CLI check runs on (as .ci/run does).
SAMPLE_MODELS = [
    "SimpleSkin/SimpleSkin.gltf",
    "RiggedSimple/RiggedSimple.glb",
    "RiggedFigure/RiggedFigure.glb",
    "CesiumMan/CesiumMan.glb",
    "Fox/Fox.glb",
]


def _missing(what: str) -> None:
    if IN_CI:
        pytest.fail(f"{what} (required under CI=true)")
    pytest.skip(what)


@pytest.fixture(scope="session")
def models_dir() -> Path:
    path = Path(os.environ.get("SKINBLEND_MODELS", REPOSITORY.parent / "shared" / "models"))
    if not path.is_dir():
        _missing(f"sample models not found at {path}")
    return path


@pytest.fixture(scope="session")
def cli() -> List[str]:
    """The command that runs the `skinblend` program."""
    explicit = os.environ.get("SKINBLEND_CLI")
    if explicit:
        return [explicit]
    if shutil.which("cargo") is None or not (REPOSITORY / "Cargo.toml").is_file():
        _missing("the skinblend CLI: set SKINBLEND_CLI or run inside the repository with cargo")
    build = subprocess.run(
        ["cargo", "build", "-q", "--locked", "-p", "skinblend-cli"],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
    )
    if build.returncode != 0:
        pytest.fail(f"cargo build -p skinblend-cli failed:\n{build.stderr}")
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPOSITORY / "target"))
    if not target.is_absolute():
        target = REPOSITORY / target
    return [str(target / "debug" / "skinblend")]
