"""The package's annotations hold where users meet them: mypy (its settings in pyproject.toml)
accepts the package, these tests and every Python example of README.md and docs/python.md, so
an example (and examples/, bench_torch.py) that calls the API wrongly, or an annotation that does not match the code, fails.

Needs mypy (CI installs it); outside CI a missing mypy skips, under CI=true it fails."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import REPOSITORY, _missing

PACKAGE = REPOSITORY / "crates" / "skinblend-py"
#: The documents whose ```python blocks are checked.
DOCUMENTS = [REPOSITORY / "README.md", REPOSITORY / "docs" / "python.md", REPOSITORY / "docs" / "torch.md"]


def python_examples() -> list[str]:
    blocks = []
    for document in DOCUMENTS:
        if document.is_file():
            text = document.read_text(encoding="utf-8")
            blocks += re.findall(r"```python\n(.*?)```", text, flags=re.S)
    return blocks


def test_mypy_accepts_the_package_the_tests_and_the_documented_examples(tmp_path: Path) -> None:
    try:
        import mypy.api  # noqa: F401  (only whether it is installed)
    except ImportError:
        _missing("mypy is not installed (pip install mypy)")
    examples = python_examples()
    assert examples, f"no ```python example found in {[str(d) for d in DOCUMENTS]}"
    files = []
    for i, block in enumerate(examples):
        path = tmp_path / f"example_{i}.py"
        path.write_text(block, encoding="utf-8")
        files.append(str(path))
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(PACKAGE / "pyproject.toml"),
         "--cache-dir", str(tmp_path / "mypy-cache"), str(PACKAGE / "python" / "skinblend"),
         str(PACKAGE / "tests"), str(PACKAGE / "examples"), str(PACKAGE / "bench" / "bench_torch.py"),
         str(PACKAGE / "bench" / "bench_passes.py"), str(PACKAGE / "bench" / "bench_blended.py"),
         *files],
        env={**os.environ, "MYPYPATH": str(PACKAGE / "python")},
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr
