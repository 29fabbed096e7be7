"""An async ``extension(wolli)`` that never returns gets the handlers' time budget.

Found by hand: ``async def extension(wolli): await asyncio.sleep(3600)`` held ``wolli -p``
and ``wolli --help`` forever (no output, no timeout), although every async handler is
cancelled after ``extensionTimeoutMs``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import wolli
from tests.support.openai_chat import text_answer, write_models_json

SLOW = """import asyncio


async def extension(wolli):
    wolli.register_flag("slow", description="never usable", type="boolean")
    await asyncio.sleep(3600)
"""


@pytest.mark.parametrize("run", [["-p", "hi"], ["--help"]])
def test_a_factory_that_never_returns_is_cancelled_and_taken_back(project, wolli_home: Path, loopback,
                                                                   tmp_path, run):
    write_models_json(wolli_home, loopback.url + "/v1")
    (wolli_home / "settings.json").write_text(json.dumps({"extensionTimeoutMs": 500}))
    slow = tmp_path / "slow.py"
    slow.write_text(SLOW)
    loopback.push(text_answer("answered"))
    result = wolli(["--model", "local/local-model", "-e", str(slow), *run], project, timeout=30)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        f"wolli: {slow}: extension(wolli) did not finish within 0.5 s and was cancelled (extensionTimeoutMs)"]
    assert "--slow" not in result.stdout  # taken back: its flag is not offered
    if run == ["-p", "hi"]:
        assert result.stdout == "answered\n"
