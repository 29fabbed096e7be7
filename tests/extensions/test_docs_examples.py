"""Every extension written out in docs/extensions.md loads with the real loader, its commands
run, and nothing it registered is reported: the docs' examples are runnable as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from wolli.testing import ExtensionHarness

DOC = Path(__file__).resolve().parents[2] / "docs" / "extensions.md"
BLOCKS = [block for block in re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
          if "def extension(wolli" in block]


def test_the_docs_give_an_example_for_every_callable():
    assert len(BLOCKS) >= 12
    text = DOC.read_text()
    for signature in ("def execute(tool_call_id", "def render_call(args, theme, context)",
                      "def render_result(result, options, theme, context)", "def renderer(message, options, theme)",
                      "def get_argument_completions(prefix", "def widget(app, theme)", "def footer(app, theme)",
                      "def component(app, theme, keybindings, done)", "def provider(current)",
                      "def handler(ctx)", "def handler(args: str, ctx)", "def handler(event, ctx)",
                      "logs/extensions.log"):
        assert signature in text, signature
    assert "Not yet implemented" not in text and "not implemented" not in text


@pytest.mark.parametrize("index", range(len(BLOCKS)))
async def test_each_example_loads_and_its_commands_run(index, tmp_path):
    source = tmp_path / f"example_{index}.py"
    source.write_text(BLOCKS[index])
    async with ExtensionHarness([source], cwd=tmp_path) as h:
        assert h.load_errors == [] and h.host.extensions.registry.records[0].warnings == []
        for name in list(h.host.commands):
            h.reply("ok")
            await h.command(name)
        assert h.errors == []
