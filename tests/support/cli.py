"""Running the real ``wolli`` command as a subprocess, and finding what it saved."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def wolli(args: list[str], cwd: Path, stdin: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``python -m wolli ARGS`` in ``cwd`` with this process's environment (temp WOLLI_HOME)."""
    return subprocess.run(
        [sys.executable, "-m", "wolli", *args],
        cwd=cwd,
        input=stdin or "",
        capture_output=True,
        text=True,
        timeout=timeout,
        env=os.environ.copy(),
    )


def session_files(home: Path) -> list[Path]:
    return sorted((home / "agents" / "default" / "sessions").glob("*/*.jsonl"))


def make_project(tmp_path: Path) -> Path:
    """A small project with a bug for the agent to fix: ``add`` subtracts."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    return root
