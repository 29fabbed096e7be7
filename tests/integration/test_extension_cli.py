"""Extensions through the real ``wolli`` command: ``-e``, flags, tools, load errors, settings."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.support.cli import wolli
from tests.support.openai_chat import text_answer, tool_call_answer, write_models_json

MODEL = ["--model", "local/local-model"]

STAMP = textwrap.dedent("""
    def extension(wolli):
        wolli.register_flag("stamp", description="text the stamp tool returns", type="string", default="none")

        def stamp(tool_call_id, params, signal, on_update, ctx):
            return "stamp=" + str(wolli.get_flag("stamp"))

        wolli.register_tool({"name": "stamp", "description": "Return the stamp", "execute": stamp})
""")


@pytest.fixture
def local_model(wolli_home: Path, loopback) -> None:
    write_models_json(wolli_home, loopback.url + "/v1")


def test_an_extension_flag_is_accepted_and_its_tool_runs(project, loopback, local_model, tmp_path):
    ext = tmp_path / "stamp.py"
    ext.write_text(STAMP)
    loopback.push(tool_call_answer("stamp", {}), text_answer("stamped"))
    result = wolli(["-p", *MODEL, "-e", str(ext), "--stamp=blue", "stamp it"], project)
    assert (result.returncode, result.stdout) == (0, "stamped\n"), result.stderr
    tool_result = loopback.requests[1].json["messages"][-1]
    assert tool_result["role"] == "tool" and "stamp=blue" in json.dumps(tool_result)
    assert "stamp" in [t["function"]["name"] for t in loopback.requests[0].json["tools"]]


def test_without_the_extension_its_flag_is_an_unknown_option(project, loopback, local_model):
    result = wolli(["-p", *MODEL, "--stamp=blue", "hi"], project)
    assert result.returncode == 2 and "unknown option --stamp" in result.stderr
    assert loopback.requests == []


def test_a_broken_extension_is_one_line_with_file_and_line_and_the_answer_still_comes(
    project, loopback, local_model, wolli_home
):
    folder = wolli_home / "agents" / "default" / "extensions"
    folder.mkdir(parents=True)
    (folder / "broken.py").write_text("def extension(wolli):\n    return 1 +\n")
    (folder / "fine.py").write_text(STAMP)
    loopback.push(text_answer("still here"))
    result = wolli(["-p", *MODEL, "hi"], project)
    assert (result.returncode, result.stdout) == (0, "still here\n"), result.stderr
    assert f"wolli: {folder / 'broken.py'}:2: SyntaxError" in result.stderr and "Traceback" not in result.stderr
    assert "stamp" in [t["function"]["name"] for t in loopback.requests[0].json["tools"]]


def test_settings_extensions_and_no_extensions(project, loopback, local_model, wolli_home, tmp_path):
    ext = tmp_path / "elsewhere" / "stamp.py"
    ext.parent.mkdir()
    ext.write_text(STAMP)
    (wolli_home / "settings.json").write_text(json.dumps({"extensions": [str(ext)]}))
    loopback.push(text_answer("one"), text_answer("two"))
    assert wolli(["-p", *MODEL, "hi"], project).returncode == 0
    assert "stamp" in [t["function"]["name"] for t in loopback.requests[0].json["tools"]]
    result = wolli(["-p", *MODEL, "--no-extensions", "hi"], project)
    assert result.returncode == 0, result.stderr
    assert "stamp" not in [t["function"]["name"] for t in loopback.requests[1].json.get("tools", [])]


TUI_ONLY = textwrap.dedent("""
    import json, os

    def extension(wolli):
        async def on_start(event, ctx):
            ui = ctx.ui
            seen = {
                "mode": ctx.mode,
                "select": await ui.select("pick", ["a", "b"]),
                "confirm": await ui.confirm("sure?", "really"),
                "custom": await ui.custom(lambda *a: None),
                "themes": ui.get_all_themes(),
                "theme": ui.get_theme("light"),
                "set_theme": ui.set_theme("light"),
                "styled": ui.theme.fg("accent", ui.theme.bold("x")),
                "expanded": ui.get_tools_expanded(),
                "editor": ui.get_editor_component(),
            }
            ui.set_tools_expanded(True)
            ui.set_editor_component(lambda *a: None)
            ui.add_autocomplete_provider(lambda current: current)
            ui.set_widget("w", ["line"])
            ui.notify("hello")
            seen["infos"] = [(i["name"], i["handlers"], i["switched_off"]) for i in wolli.extension_infos()]
            with open(os.environ["SEEN_FILE"], "w") as fh:
                json.dump(seen, fh)

        wolli.on("session_start", on_start)
""")


def test_an_extension_written_for_the_tui_runs_headless_on_inert_answers(
    project, loopback, local_model, tmp_path, monkeypatch
):
    ext = tmp_path / "tui_only.py"
    ext.write_text(TUI_ONLY)
    seen_file = tmp_path / "seen.json"
    monkeypatch.setenv("SEEN_FILE", str(seen_file))
    loopback.push(text_answer("done"))
    result = wolli(["-p", *MODEL, "-e", str(ext), "hi"], project)
    assert (result.returncode, result.stdout) == (0, "done\n"), result.stderr
    seen = json.loads(seen_file.read_text())
    assert seen["mode"] == "print" and seen["select"] is None and seen["confirm"] is False
    assert seen["custom"] is None and seen["themes"] == [] and seen["theme"] is None
    assert seen["set_theme"]["success"] is False and seen["styled"] == "x"
    assert seen["expanded"] is False and seen["editor"] is None
    assert seen["infos"] == [["tui_only", ["session_start"], []]]


TOUR = textwrap.dedent("""
    def extension(wolli):
        wolli.register_flag("tour-level", description="how deep the tour goes", type="string", default="low")
        wolli.register_flag("plan", description="start in plan mode", type="boolean", default=True)

        def tour(tool_call_id, params, signal, on_update, ctx):
            return f"level={wolli.get_flag('tour-level')} plan={wolli.get_flag('plan')}"

        wolli.register_tool({"name": "tour", "description": "Report the flags", "execute": tour})
""")


@pytest.mark.parametrize(("flags", "expected"), [
    (["--tour-level", "high"], "level=high plan=True"),
    (["--tour-level=high"], "level=high plan=True"),
    (["--tour-level", "@deep"], "level=@deep plan=True"),  # a value may look like an @file
    (["--no-plan"], "level=low plan=False"),
    (["--plan=no", "--tour-level", "mid"], "level=mid plan=False"),
    (["--plan", "--tour-level", "x"], "level=x plan=True"),
])
def test_extension_flags_as_people_type_them(project, loopback, local_model, tmp_path, flags, expected):
    ext = tmp_path / "tour.py"
    ext.write_text(TOUR)
    loopback.push(tool_call_answer("tour", {}), text_answer("toured"))
    result = wolli(["-p", *MODEL, "-e", str(ext), *flags, "take the tour"], project)
    assert (result.returncode, result.stdout) == (0, "toured\n"), result.stderr
    sent = loopback.requests[0].json["messages"]
    assert [m["content"] for m in sent if m["role"] == "user"] == ["take the tour"]  # the value is no prompt
    assert expected in json.dumps(loopback.requests[1].json["messages"][-1])


@pytest.mark.parametrize(("flags", "said"), [
    (["--tour-level"], "--tour-level needs a value: --tour-level VALUE or --tour-level=VALUE"),
    (["--plan=maybe"], "--plan is on or off"),
    (["--no-plan=yes"], "--no-plan takes no value"),
    (["--tour-levle=x"], "unknown option --tour-levle; did you mean --tour-level?"),
])
def test_a_flag_used_wrongly_is_a_usage_error(project, loopback, local_model, tmp_path, flags, said):
    ext = tmp_path / "tour.py"
    ext.write_text(TOUR)
    result = wolli(["-p", *MODEL, "-e", str(ext), "hi", *flags], project)
    assert result.returncode == 2 and f"wolli: {said}" in result.stderr, result.stderr
    assert loopback.requests == []


def test_help_lists_extension_flags_under_their_extension(project, tmp_path, wolli_home):
    ext = tmp_path / "tour.py"
    ext.write_text(TOUR)
    folder = wolli_home / "agents" / "default" / "extensions"
    folder.mkdir(parents=True)
    (folder / "stamp.py").write_text(STAMP)
    result = wolli(["--help", "-e", str(ext)], project)
    assert result.returncode == 0, result.stderr
    help_text = result.stdout
    assert "usage: wolli" in help_text and "not available in this version" not in help_text
    extension_part = help_text[help_text.index("Extension options:"):]
    assert f"  tour ({ext})" in extension_part and f"  stamp ({folder / 'stamp.py'})" in extension_part
    assert "--tour-level VALUE" in extension_part and "how deep the tour goes (default: low)" in extension_part
    assert "--plan, --no-plan" in extension_part and "--stamp VALUE" in extension_part
    plain = wolli(["--help", "--no-extensions"], project)
    assert "Extension options:" not in plain.stdout
