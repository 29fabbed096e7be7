"""A fresh clone in a folder of its own collects every test: nothing is read from outside it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_fresh_clone_collects_without_anything_beside_it(tmp_path: Path) -> None:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout (an sdist or a copy): nothing to clone")
    clone = tmp_path / "alone" / "wolli"  # nothing of the workspace beside it
    done = subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{ROOT}", str(clone)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WOLLI_", "PYTEST_"))}
    env["PYTHONPATH"] = str(clone)
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=clone, env=env, capture_output=True, text=True, timeout=300,
    )
    assert collected.returncode == 0, collected.stdout[-3000:] + collected.stderr[-3000:]
    # The project's addopts make this -qq: one "path: count" line per test module.
    counts = [line.rpartition(": ")[2] for line in collected.stdout.splitlines() if line.startswith("tests/")]
    assert "ERROR" not in collected.stdout and "error" not in collected.stdout.splitlines()[-1]
    assert sum(int(c) for c in counts if c.isdigit()) > 500, collected.stdout[-2000:]
    assert (clone / "tests" / "fixtures" / "wire" / "anthropic").is_dir()


OUTSIDE = "../" + "shared"  # the workspace folder beside the checkout (spelled so this file passes)


def test_no_file_of_the_project_points_outside_it() -> None:
    """Tests, benchmarks and docs use what is in the repository, never the workspace beside it."""
    offenders = []
    for folder in ("tests", "wolli", "extensions", "docs", ".ci"):
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and path.suffix in (".py", ".md", ".sh", ".toml", "") and "fixtures" not in path.parts:
                try:
                    if OUTSIDE in path.read_text("utf-8"):
                        offenders.append(str(path.relative_to(ROOT)))
                except (UnicodeDecodeError, OSError):
                    continue
    for name in ("README.md", "pyproject.toml"):
        if OUTSIDE in (ROOT / name).read_text("utf-8"):
            offenders.append(name)
    assert offenders == []
