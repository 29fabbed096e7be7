"""Permission modes and rules through the real CLI (a subprocess) against a loopback model.

The scripted model asks for edits, writes and shell commands; the tests look at the file
system and at what the model was sent back (the tool results of the next request)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import make_project, wolli
from tests.support.openai_chat import text_answer, tool_call_answer, write_models_json

MODEL = ["--model", "local/local-model"]


@pytest.fixture
def local_model(wolli_home: Path, loopback) -> None:
    write_models_json(wolli_home, loopback.url + "/v1")


@pytest.fixture
def repo(tmp_path) -> Path:
    return make_project(tmp_path)


def tool_results(loopback) -> list[str]:
    """The tool results the model was sent, oldest first (from the last request)."""
    messages = loopback.requests[-1].json["messages"]
    return [m["content"] if isinstance(m["content"], str) else json.dumps(m["content"]) for m in messages
            if m["role"] == "tool"]


EDIT = {"path": "calc.py", "edits": [{"old_text": "return a - b", "new_text": "return a + b"}]}


def test_print_mode_in_default_mode_refuses_what_needs_a_question_and_says_how_to_allow_it(
        repo, loopback, local_model):
    loopback.push(tool_call_answer("edit", EDIT), text_answer("I could not edit."))
    result = wolli(["-p", *MODEL, "--permission-mode", "default", "fix it"], repo)
    assert result.returncode == 0, result.stderr
    assert "return a - b" in (repo / "calc.py").read_text()
    [refusal] = tool_results(loopback)
    assert "nobody can answer in print mode" in refusal and "--allowed-tools 'Edit(calc.py)'" in refusal


def test_allowed_tools_allow_exactly_what_they_name(repo, loopback, local_model):
    loopback.push(
        tool_call_answer("bash", {"command": "echo hi > made.txt"}, "call_1"),
        tool_call_answer("bash", {"command": "echo hi && touch made.txt"}, "call_2"),
        tool_call_answer("bash", {"command": "echo hi"}, "call_3"),
        tool_call_answer("edit", EDIT, "call_4"),
        text_answer("done"),
    )
    result = wolli(["-p", *MODEL, "--permission-mode", "default", "--allowed-tools", "Bash(echo:*)",
                    "--allowed-tools", "Edit(calc.py)", "go"], repo)
    assert result.returncode == 0, result.stderr
    first, second, third, fourth = tool_results(loopback)
    assert "Not run" in first and "Not run" in second and not (repo / "made.txt").exists()
    assert third.strip().strip('"').startswith("hi")
    assert "return a + b" in (repo / "calc.py").read_text()


def test_a_deny_rule_wins_even_in_yolo_mode_and_behind_wrappers(repo, loopback, local_model):
    (repo / "keep").mkdir()
    loopback.push(tool_call_answer("bash", {"command": "cd . && sudo rm -rf keep"}), text_answer("blocked"))
    result = wolli(["-p", *MODEL, "--allowed-tools", "Bash", "--disallowed-tools", "Bash(rm:*)", "clean"], repo)
    assert result.returncode == 0, result.stderr
    assert (repo / "keep").is_dir()
    assert "Permission denied by the rule Bash(rm:*)" in tool_results(loopback)[0]


def test_plan_mode_reads_but_changes_nothing_and_tells_the_model(repo, loopback, local_model):
    loopback.push(
        tool_call_answer("read", {"path": "calc.py"}, "call_1"),
        tool_call_answer("edit", EDIT, "call_2"),
        tool_call_answer("write", {"path": "notes.md", "content": "x"}, "call_3"),
        tool_call_answer("bash", {"command": "touch ran"}, "call_4"),
        text_answer("1. change - to +"),
    )
    result = wolli(["-p", *MODEL, "--permission-mode", "plan", "--allowed-tools", "Bash,Edit", "plan the fix"], repo)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1. change - to +"
    read, edit, write, bash = tool_results(loopback)
    assert "return a - b" in read
    assert all("plan mode" in r for r in (edit, write, bash))
    assert "return a - b" in (repo / "calc.py").read_text()
    assert not (repo / "notes.md").exists() and not (repo / "ran").exists()
    system = loopback.requests[0].json["messages"][0]
    assert system["role"] == "system" and "The session is in plan mode" in system["content"]


def test_accept_edits_runs_edits_inside_the_project_only(repo, loopback, local_model):
    loopback.push(
        tool_call_answer("edit", EDIT, "call_1"),
        tool_call_answer("write", {"path": "../outside.txt", "content": "x"}, "call_2"),
        text_answer("ok"),
    )
    result = wolli(["-p", *MODEL, "--permission-mode", "accept-edits", "go"], repo)
    assert result.returncode == 0, result.stderr
    assert "return a + b" in (repo / "calc.py").read_text()
    assert not (repo.parent / "outside.txt").exists()
    assert "outside the project" in tool_results(loopback)[1]


def test_settings_rules_add_up_and_a_projects_own_file_only_narrows(repo, wolli_home, loopback, local_model):
    (wolli_home / "settings.json").write_text(json.dumps({"permissions": {"defaultMode": "acceptEdits",
                                                                          "allow": ["Bash(touch:*)"]}}))
    (repo / ".wolli").mkdir()
    (repo / ".wolli" / "settings.json").write_text(json.dumps({"permissions": {
        "allow": ["Bash"], "deny": ["Edit(/calc.py)"]}}))
    loopback.push(
        tool_call_answer("edit", EDIT, "call_1"),
        tool_call_answer("bash", {"command": "touch allowed"}, "call_2"),
        tool_call_answer("bash", {"command": "mkdir not-allowed"}, "call_3"),
        text_answer("ok"),
    )
    result = wolli(["-p", *MODEL, "go"], repo)
    assert result.returncode == 0, result.stderr
    edit, touch, mkdir = tool_results(loopback)
    assert "Edit(/calc.py)" in edit and "return a - b" in (repo / "calc.py").read_text()
    assert (repo / "allowed").exists()
    assert not (repo / "not-allowed").exists() and "Not run" in mkdir  # the project's "Bash" is not approved


EXTENSION = '''
def extension(wolli):
    wolli.register_tool({"name": "mcp__tracker__close_issue", "description": "close an issue",
                         "parameters": {"type": "object", "properties": {}},
                         "execute": lambda *a: "closed"})
    wolli.register_tool({"name": "lookup", "description": "look something up", "read_only": True,
                         "parameters": {"type": "object", "properties": {}}, "execute": lambda *a: "found"})
'''


def test_rules_name_extension_and_mcp_tools_and_read_only_tools_run(repo, tmp_path, loopback, local_model):
    ext = tmp_path / "tools_ext.py"
    ext.write_text(EXTENSION)
    loopback.push(
        tool_call_answer("lookup", {}, "call_1"),
        tool_call_answer("mcp__tracker__close_issue", {}, "call_2"),
        text_answer("ok"),
        tool_call_answer("mcp__tracker__close_issue", {}, "call_3"),
        text_answer("ok"),
    )
    first = wolli(["-p", *MODEL, "--permission-mode", "plan", "-e", str(ext), "go"], repo)
    assert first.returncode == 0, first.stderr
    lookup, close = tool_results(loopback)
    assert "found" in lookup and "plan mode" in close
    second = wolli(["-p", *MODEL, "--permission-mode", "default", "--allowed-tools", "mcp__tracker", "-e", str(ext),
                    "go"], repo)
    assert second.returncode == 0, second.stderr
    assert "closed" in tool_results(loopback)[-1]


def test_bad_flags_are_usage_errors(repo, local_model):
    bad_mode = wolli(["-p", *MODEL, "--permission-mode", "careful", "hi"], repo)
    assert bad_mode.returncode == 2 and "--permission-mode" in bad_mode.stderr and "accept-edits" in bad_mode.stderr
    bad_rule = wolli(["-p", *MODEL, "--allowed-tools", "Bash(git diff", "hi"], repo)
    assert bad_rule.returncode == 2 and "not closed" in bad_rule.stderr


def test_json_mode_reports_the_mode_change_of_an_extension(repo, tmp_path, loopback, local_model):
    ext = tmp_path / "switcher.py"
    ext.write_text("def extension(wolli):\n"
                   "    async def start(event, ctx):\n"
                   "        await ctx.permissions.set_mode('plan')\n"
                   "    wolli.on('session_start', start)\n")
    loopback.push(text_answer("planning"))
    result = wolli(["--mode", "json", *MODEL, "-e", str(ext), "hi"], repo)
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    change = next(e for e in events if e["type"] == "permission_mode_change")
    assert change == {"type": "permission_mode_change", "mode": "plan", "previousMode": "yolo", "source": "extension"}
