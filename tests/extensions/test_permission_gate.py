"""extensions/permission_gate.py through wolli.testing."""

from __future__ import annotations

from pathlib import Path

from wolli.testing import ExtensionHarness, tool_call

EXAMPLE = Path(__file__).resolve().parents[2] / "extensions" / "permission_gate.py"


async def test_a_refused_rm_rf_is_blocked_and_an_allowed_one_runs(tmp_path):
    (tmp_path / "build").mkdir()
    async with ExtensionHarness([EXAMPLE], cwd=tmp_path) as h:
        assert h.load_errors == []
        h.ui.answer("confirm", False, True)
        h.reply(tool_call("bash", {"command": "rm -rf build"}), "refused",
                tool_call("bash", {"command": "rm -rf build"}), "removed")
        await h.prompt("clean")
        assert h.tool_results[-1].is_error and "did not allow" in h.tool_results[-1].content[0].text
        assert (tmp_path / "build").exists()
        await h.prompt("clean, really")
        assert not h.tool_results[-1].is_error and not (tmp_path / "build").exists()
        assert [c[0] for c in h.ui.calls] == ["confirm", "confirm"]


async def test_harmless_commands_are_not_asked_about(tmp_path):
    async with ExtensionHarness([EXAMPLE], cwd=tmp_path) as h:
        h.reply(tool_call("bash", {"command": "echo hi"}), "done")
        await h.prompt("say hi")
        assert h.ui.calls == [] and h.tool_results[-1].content[0].text.strip() == "hi"
