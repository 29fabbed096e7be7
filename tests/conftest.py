"""Shared fixtures. Every test runs with WOLLI_HOME in a temporary folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.faux_home import faux_in_home
from tests.support.loopback import LoopbackServer


@pytest.fixture(autouse=True)
def wolli_home(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("wolli_home")
    monkeypatch.setenv("WOLLI_HOME", str(home))
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
    for var in (
        "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENROUTER_API_KEY",
        "GROQ_API_KEY", "XAI_API_KEY", "MISTRAL_API_KEY", "DEEPSEEK_API_KEY", "WOLLI_AGENT",
    ):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def loopback():
    server = LoopbackServer()
    yield server
    server.close()


@pytest.fixture
def faux(wolli_home: Path):
    """The scripted model, registered in WOLLI_HOME for clients that start from it (TUI, line
    mode). Tests that build their own host define their own ``faux``."""
    yield from faux_in_home(wolli_home)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty folder to run a client in."""
    folder = tmp_path / "project"
    folder.mkdir()
    return folder
