"""Subagent definition files (Claude Code's agent format) and how their tool lists apply."""

from __future__ import annotations

import pytest

from wolli.config.subagent_files import SubagentFileError, load_subagent_file, parse_subagent_text, split_list
from wolli.runtime.subagents.child import child_mode
from wolli.runtime.subagents.tool_selection import select_tools

TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls", "task", "mcp__github__search", "mcp__github__pr",
         "mcp__jira__issue", "todo"]


def definition(front: str, body: str = "Prompt.") -> object:
    return parse_subagent_text(f"---\n{front}\n---\n\n{body}\n", source="x.md")


def test_every_claude_code_field_is_read():
    found = definition(
        "name: explorer\ndescription: Finds code\ntools: Read, Grep, Glob\ndisallowedTools: Bash\nmodel: haiku\n"
        "permissionMode: plan\nmaxTurns: 7\nskills: testing, style\nbackground: true\ncolor: cyan\nhooks: x",
        "You explore.\n\nCarefully.",
    )
    assert (found.name, found.description, found.system_prompt) == ("explorer", "Finds code", "You explore.\n\nCarefully.")
    assert found.tools == ("Read", "Grep", "Glob") and found.disallowed_tools == ("Bash",)
    assert (found.model, found.permission_mode, found.max_turns) == ("haiku", "plan", 7)
    assert found.skills == ("testing", "style") and found.background is True
    assert found.ignored == ("color", "hooks")


@pytest.mark.parametrize("value, expected", [
    ("Read, Grep", ["Read", "Grep"]),
    ("[Read, 'Grep']", ["Read", "Grep"]),
    ("- Read - Grep", ["Read", "Grep"]),
    ("Read Grep", ["Read", "Grep"]),
    ("Bash(git diff:*, git log:*), Read", ["Bash(git diff:*, git log:*)", "Read"]),
    ("", []),
])
def test_lists_are_read_as_agent_files_write_them(value, expected):
    assert split_list(value) == expected


def test_a_yaml_block_list_of_tools(tmp_path):
    path = tmp_path / "a.md"
    path.write_text("---\nname: a\ndescription: d\ntools:\n  - Read\n  - mcp__github__*\n---\nBody\n")
    assert load_subagent_file(path).tools == ("Read", "mcp__github__*")


@pytest.mark.parametrize("front, problem", [
    ("description: no name here", "name"),
    ("name: a b\ndescription: d", "not usable"),
    ("name: a", "'description' is missing"),
    ("name: a\ndescription: d\nmaxTurns: many", "maxTurns must be a whole number"),
    ("name: a\ndescription: d\nmaxTurns: 0", "at least 1"),
    ("name: a\ndescription: d\nbackground: perhaps", "true or false"),
])
def test_bad_files_say_what_is_wrong(front, problem):
    with pytest.raises(SubagentFileError, match=problem):
        parse_subagent_text(f"---\n{front}\n---\nbody", source="bad.md")


def test_files_without_front_matter_or_too_big_are_refused(tmp_path):
    plain = tmp_path / "plain.md"
    plain.write_text("just text")
    with pytest.raises(SubagentFileError, match="no front matter"):
        load_subagent_file(plain)
    big = tmp_path / "big.md"
    big.write_text("---\nname: big\ndescription: d\n---\n" + "x" * 300_000)
    with pytest.raises(SubagentFileError, match="larger than"):
        load_subagent_file(big)
    with pytest.raises(SubagentFileError, match="cannot read"):
        load_subagent_file(tmp_path / "missing.md")


def test_the_file_name_stands_in_for_a_missing_name(tmp_path):
    path = tmp_path / "helper.md"
    path.write_text("---\ndescription: helps\n---\nBody")
    assert load_subagent_file(path).name == "helper"


@pytest.mark.parametrize("tools, disallowed, expected", [
    (None, "", [t for t in TOOLS if t != "task"]),
    ("Read, Glob, MultiEdit", "", ["read", "edit", "find"]),
    ("mcp__github__*", "", ["mcp__github__search", "mcp__github__pr"]),
    (None, "Bash, Write, mcp__*", ["read", "edit", "grep", "find", "ls", "todo"]),
    ("TODO, task, Agent", "", ["todo"]),
    ("[]", "", []),
])
def test_tool_lists_map_claude_code_names_and_globs(tools, disallowed, expected):
    front = "name: a\ndescription: d" + (f"\ntools: {tools}" if tools is not None else "")
    front += f"\ndisallowedTools: {disallowed}" if disallowed else ""
    assert select_tools(definition(front), TOOLS).names == expected


def test_unknown_tool_names_are_reported_but_claude_code_only_ones_are_not():
    selection = select_tools(definition("name: a\ndescription: d\ntools: Read, WebFetch, Frobnicate"), TOOLS)
    assert selection.names == ["read"] and selection.unknown == ["Frobnicate"]


@pytest.mark.parametrize("parent, requested, expected", [
    ("default", None, "default"),
    ("default", "plan", "plan"),
    ("plan", "bypassPermissions", "plan"),
    ("default", "acceptEdits", "default"),
    ("yolo", "acceptEdits", "accept-edits"),
    ("accept-edits", "dontAsk", "accept-edits"),
    ("default", "nonsense", "default"),
])
def test_a_child_is_never_looser_than_its_parent(parent, requested, expected):
    assert child_mode(parent, requested) == expected


def test_the_shipped_examples_load_as_claude_code_would_read_them():
    from pathlib import Path

    folder = Path(__file__).resolve().parents[2] / "examples" / "subagents"
    found = {d.name: d for d in map(load_subagent_file, sorted(folder.glob("*.md")))}
    assert set(found) == {"code-reviewer", "test-runner", "explorer"}
    assert select_tools(found["explorer"], TOOLS).names == ["read", "grep", "find", "ls"]
    assert found["explorer"].permission_mode == "plan"
    assert "write" not in select_tools(found["code-reviewer"], TOOLS).names
    assert "bash" in select_tools(found["test-runner"], TOOLS).names
    assert all(d.ignored == () and d.description and d.system_prompt for d in found.values())
