"""The hostile suite: ``wolli`` as a real subprocess, under a memory and a time limit
(:mod:`.harness`), against a loopback server that can misbehave (echo headers, stall, HTML
500, cut or endless streams). Only the model's answers are scripted."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.loopback import LoopbackServer
from tests.support.openai_chat import write_models_json

from .harness import MEMORY_LIMIT_MB, TIME_LIMIT_S, Finished, Running, assert_bounded, run

MODEL = ["--model", "local/local-model"]
# The key the provider is configured with: it must never appear anywhere Wolli writes.
SECRET = "sk-hostile-7f3a9c2e5b1d4a8f"


class Project:
    """A folder to run in, a WOLLI_HOME whose only provider is the loopback server, and the
    ways to run ``wolli`` there."""

    def __init__(self, root: Path, home: Path, server: LoopbackServer) -> None:
        self.root = root
        self.home = home
        self.server = server
        self._teardown: list[Callable[[], object]] = []

    def on_teardown(self, step: Callable[[], object]) -> None:
        """Run ``step`` when the test is over (whatever it left open)."""
        self._teardown.append(step)

    def settings(self, **values: Any) -> None:
        path = self.home / "settings.json"
        current = json.loads(path.read_text()) if path.exists() else {}
        current.update(values)
        path.write_text(json.dumps(current))

    def run(self, *args: str, **kwargs: Any) -> Finished:
        """Run ``wolli *args`` here; every case first asserts it ended by itself in time and
        within its memory limit (the harness' defaults unless given)."""
        result = run([*args], cwd=self.root, **kwargs)
        assert_bounded(result, seconds=kwargs.get("seconds", TIME_LIMIT_S),
                       memory_mb=kwargs.get("memory_mb", MEMORY_LIMIT_MB))
        return result

    def start(self, *args: str, **kwargs: Any) -> Running:
        return Running([*args], cwd=self.root, **kwargs)

    def sessions(self) -> list[Path]:
        return sorted((self.home / "agents" / "default" / "sessions").glob("*/*.jsonl"))

    def entries(self, path: Path | None = None) -> list[dict[str, Any]]:
        target = path or self.sessions()[-1]
        return [json.loads(line) for line in target.read_text().splitlines() if line.strip()]

    def messages(self, path: Path | None = None) -> list[dict[str, Any]]:
        return [e["message"] for e in self.entries(path) if e.get("type") == "message"]


@pytest.fixture
def hostile(tmp_path: Path, wolli_home: Path, loopback: LoopbackServer) -> Iterator[Project]:
    write_models_json(wolli_home, loopback.url + "/v1")
    models = json.loads((wolli_home / "models.json").read_text())
    models["providers"]["local"]["apiKey"] = SECRET
    (wolli_home / "models.json").write_text(json.dumps(models))
    (wolli_home / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 1, "maxRetries": 1}}))
    root = tmp_path / "project"
    root.mkdir()
    project = Project(root, wolli_home, loopback)
    yield project
    for step in reversed(project._teardown):
        step()
