"""The README's two set-up commands are marked, one line each, and CI runs the test one."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def load_reader():
    spec = importlib.util.spec_from_file_location("readme_command", ROOT / ".ci" / "readme_command.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.readme_command


def test_both_commands_are_there_and_use_the_virtual_environment() -> None:
    read = load_reader()
    install, test = read("install-command"), read("test-command")
    assert install.startswith("python3 -m venv .venv") and install.endswith(".venv/bin/wolli")
    assert "'.[test]'" in test and test.endswith(".venv/bin/pytest")


def test_ci_runs_the_readme_test_command() -> None:
    assert "readme_command.py test-command" in (ROOT / ".ci" / "run").read_text()


def test_a_missing_marker_is_a_clear_error() -> None:
    with pytest.raises(SystemExit, match="no fenced command after <!-- test-command -->"):
        load_reader()("test-command", "# README\n\n```sh\npytest\n```\n")
