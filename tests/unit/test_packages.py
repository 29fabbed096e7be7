"""The pure parts of packages: sources, hook matchers and argument spelling, the content
hash, and reading a Claude Code plugin folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wolli.extensions.claude_hooks import apply_updated_input, to_claude_input
from wolli.packages.claude_hooks import CommandHook, parse_hooks
from wolli.packages.claude_plugin import read_plugin
from wolli.packages.records import distribution_hash, requirement_for
from wolli.packages.sources import SourceError, canonical_name, parse_source


@pytest.mark.parametrize(("given", "kind", "target", "ref"), [
    ("my-pkg", "index", "my-pkg", None),
    ("My_Pkg==1.2", "index", "My_Pkg==1.2", None),
    ("tool>=1,<2", "index", "tool>=1,<2", None),
    ("tool@1.4.0", "index", "tool==1.4.0", None),
    ("git+https://host.example/o/r.git@v1", "git", "https://host.example/o/r.git", "v1"),
    ("https://github.com/o/r", "git", "https://github.com/o/r", None),
    ("git@github.com:o/r.git", "git", "git@github.com:o/r.git", None),
    ("git@github.com:o/r.git@main", "git", "git@github.com:o/r.git", "main"),
    ("https://host.example/o/r.git#feature/x", "git", "https://host.example/o/r.git", "feature/x"),
    ("ssh://git@host/o/r", "git", "ssh://git@host/o/r", None),
])
def test_sources_are_told_apart(given, kind, target, ref):
    source = parse_source(given)
    assert (source.kind, source.target, source.ref) == (kind, target, ref)


def test_a_path_source_must_exist_and_nonsense_is_explained(tmp_path):
    (tmp_path / "pkg").mkdir()
    assert parse_source("./pkg", tmp_path).target == str((tmp_path / "pkg").resolve())
    with pytest.raises(SourceError, match="no such file"):
        parse_source("./missing", tmp_path)
    with pytest.raises(SourceError, match="not a package name"):
        parse_source("what is this?", tmp_path)
    assert canonical_name("My.Pkg_name") == "my-pkg-name"


def test_matchers_follow_claude_code():
    hook = CommandHook("PreToolUse", "Edit|Write", "x", 60, "f")
    assert hook.matches("Write", "write") and not hook.matches("Read", "read")
    assert CommandHook("PreToolUse", "", "x", 60, "f").matches("Bash")
    assert CommandHook("PreToolUse", "*", "x", 60, "f").matches("anything")
    assert CommandHook("PreToolUse", "mcp__.*", "x", 60, "f").matches("mcp__time__now")
    assert not CommandHook("PreToolUse", "Bash", "x", 60, "f").matches("BashOutput")  # the whole name
    assert CommandHook("PreToolUse", "bad(", "x", 60, "f").matches("bad(")  # not a regex: compared as text
    assert CommandHook("UserPromptSubmit", "Bash", "x", 60, "f").matches()  # events without a matcher


def test_hook_configuration_problems_are_named_and_the_rest_kept():
    hooks, problems = parse_hooks({
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard", "timeout": 5},
                                                     {"type": "prompt", "prompt": "judge"}]}],
        "SubagentStop": [{"hooks": [{"type": "command", "command": "x"}]}],
        "Stop": "not a list",
    }, "settings.json")
    assert [(h.event, h.command, h.timeout_s) for h in hooks] == [("PreToolUse", "guard", 5.0)]
    assert any("'prompt' hooks are not supported" in p for p in problems)
    assert any("SubagentStop hook event is not supported" in p for p in problems)
    assert any("hooks.Stop must be a list" in p for p in problems)


def test_tool_arguments_are_spelled_as_claude_code_does_and_taken_back():
    shown = to_claude_input("write", {"path": "a.txt", "content": "x"})
    assert shown == {"file_path": "a.txt", "content": "x"}
    arguments = {"path": "a.txt", "content": "x"}
    apply_updated_input("write", arguments, {"file_path": "b.txt", "content": "y"})
    assert arguments == {"path": "b.txt", "content": "y"}
    assert to_claude_input("bash", {"command": "ls"}) == {"command": "ls"}


class FakeDist:
    def __init__(self, record: str, direct: dict | None = None) -> None:
        self.files = {"RECORD": record, "direct_url.json": json.dumps(direct) if direct else None}

    def read_text(self, name: str) -> str | None:
        return self.files.get(name)


def test_the_content_hash_ignores_what_each_installer_writes_itself():
    wheel_files = "pkg/__init__.py,sha256=abc,10\npkg-1.0.dist-info/METADATA,sha256=def,20\n"
    by_pip = FakeDist(wheel_files + "pkg-1.0.dist-info/INSTALLER,sha256=p,4\npkg/__pycache__/x.pyc,,\n"
                      "../../../bin/tool,sha256=zz,99\npkg-1.0.dist-info/RECORD,,\n")
    by_uv = FakeDist("pkg-1.0.dist-info/INSTALLER,sha256=u,3\n" + wheel_files)
    changed = FakeDist(wheel_files.replace("abc", "abd"))
    assert distribution_hash(by_pip) == distribution_hash(by_uv) != distribution_hash(changed)


def test_lock_entries_turn_back_into_exact_requirements():
    assert requirement_for({"name": "a", "version": "1.0"}) == "a==1.0"
    vcs = {"url": "https://h/r.git", "vcs_info": {"vcs": "git", "commit_id": "f00"}}
    assert requirement_for({"name": "a", "version": "1.0", "directUrl": vcs}) == "a @ git+https://h/r.git@f00"
    archive = {"url": "file:///w/a-1.0-py3-none-any.whl", "archive_info": {}}
    assert requirement_for({"name": "a", "version": "1.0", "directUrl": archive}) == f"a @ {archive['url']}"


def test_a_plugin_manifest_may_move_components_but_not_out_of_the_folder(tmp_path: Path):
    root = tmp_path / "p"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / "extra-commands").mkdir()
    (root / "extra-commands" / "ship.md").write_text("Ship it.")
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({
        "name": "p", "commands": ["./extra-commands", "../outside"],
        "mcpServers": {"db": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/db"}},
        "hooks": {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "done"}]}]}},
    }))
    plugin = read_plugin(root)
    assert [p.name for p in plugin.command_files] == ["ship.md"]
    assert any("leaves the plugin folder" in e for e in plugin.errors)
    assert json.loads(plugin.mcp_text or "{}")["mcpServers"]["db"]["command"] == f"{root}/bin/db"
    assert [(h.event, h.plugin_root) for h in plugin.hooks] == [("Stop", str(root))]


def test_a_plugin_without_a_valid_name_is_refused(tmp_path: Path):
    (tmp_path / ".claude-plugin").mkdir()
    (tmp_path / ".claude-plugin" / "plugin.json").write_text('{"name": "has space"}')
    with pytest.raises(ValueError, match="needs a \"name\""):
        read_plugin(tmp_path)


def test_git_urls_in_scp_spelling_become_ssh_urls_for_the_installer():
    from wolli.packages.manager import _pip_git_url

    assert _pip_git_url("git@github.com:o/r.git") == "ssh://git@github.com/o/r.git"
    assert _pip_git_url("https://github.com/o/r") == "https://github.com/o/r"
    assert _pip_git_url("/srv/repos/r.git") == "file:///srv/repos/r.git"
