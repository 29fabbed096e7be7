"""End-to-end runs in a real terminal (tmux) against the loopback server."""

from __future__ import annotations

import os
import sys

import pytest

from tests.support.openai_chat import write_models_json

from .tmux_terminal import TmuxTerminal


@pytest.fixture
def terminal_run(tmp_path, wolli_home, loopback):
    """``run(*args, term=None, env=None)`` starts ``wolli --model local/local-model *args`` in a
    tmux pane (``term`` sets the TERM the program sees, ``env`` more variables); every pane is
    closed after the test.
    ``run.project`` is the folder it runs in."""
    write_models_json(wolli_home, loopback.url + "/v1")
    project = tmp_path / "project"
    project.mkdir()
    terminals: list[TmuxTerminal] = []

    def run(*args: str, term: str | None = None, env: dict[str, str] | None = None) -> TmuxTerminal:
        command = [sys.executable, "-m", "wolli", "--model", "local/local-model", *args]
        # tmux sets TERM for the pane (and its own server's environment): what the program
        # must see is set by env(1) in front of it
        settings = {**({"TERM": term} if term is not None else {}), **(env or {})}
        if settings:
            command = ["env", *(f"{name}={value}" for name, value in settings.items()), *command]
        terminal = TmuxTerminal(command, cwd=str(project),
                                env={"WOLLI_HOME": str(wolli_home), "HOME": os.environ["HOME"]})
        terminals.append(terminal)
        return terminal

    run.project = project  # type: ignore[attr-defined]
    yield run
    for terminal in terminals:
        terminal.close()
