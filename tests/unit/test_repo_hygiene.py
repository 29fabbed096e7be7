"""What the repository tracks: no build artefacts or large files slip in with a commit."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 1_000_000  # bytes; a wheel, a profile or a recording is over it, source never is


def _tracked() -> list[Path]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: nothing is tracked")
    done = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    return [ROOT / name for name in done.stdout.decode().split("\0") if name]


def test_no_tracked_file_is_over_one_megabyte() -> None:
    big = [f"{p.relative_to(ROOT)} ({p.stat().st_size:,} bytes)" for p in _tracked()
           if p.is_file() and p.stat().st_size > LIMIT]
    assert big == [], "tracked files over 1 MB: " + ", ".join(big)


def test_no_build_artefact_is_tracked() -> None:
    artefacts = [str(p.relative_to(ROOT)) for p in _tracked()
                 if p.suffix in {".whl", ".pyc", ".so", ".egg"} or p.name.endswith(".tar.gz")]
    assert artefacts == []
