"""The scripted ``faux`` model as a provider of a temporary WOLLI_HOME (TUI and line tests)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from wolli.ai.providers.faux import FauxProvider

FAUX_1: dict[str, Any] = {"id": "faux-1", "reasoning": True, "contextWindow": 100000}


def write_faux_models(home: Path, *models: dict[str, Any]) -> None:
    """``models.json`` naming the faux provider with ``models`` (default: faux-1 alone)."""
    (home / "models.json").write_text(json.dumps({"providers": {"faux": {
        "api": "faux", "baseUrl": "http://faux.invalid", "apiKey": "none", "models": list(models or [FAUX_1])}}}))


def faux_in_home(home: Path) -> Iterator[FauxProvider]:
    """For a fixture: faux-1 in ``home``'s models.json and its scripted provider."""
    write_faux_models(home)
    provider = FauxProvider(provider="faux", model_id="faux-1")
    yield provider
    provider.unregister()
