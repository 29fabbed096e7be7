"""A Claude Code plugin installed with ``wolli install``: its skill, command, agent, MCP server
and PreToolUse hook, each checked through the real CLI or a scripted turn."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support.packages import publish_to_bare, tree, wolli_cli
from tests.support.runtime import make_host, start_session
from wolli.ai.providers.faux import FauxProvider, faux_tool_call
from wolli.config import paths

GUARD = '''
import json, sys
event = json.load(sys.stdin)
command = event["tool_input"].get("command", "")
with open(event["cwd"] + "/hook-payloads.jsonl", "a") as log:
    log.write(json.dumps(event) + "\\n")
if command.startswith("rm "):
    print("rm is not allowed here: move files to trash/ instead", file=sys.stderr)
    sys.exit(2)
if "echo old" in command:
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                                             "updatedInput": {"command": command.replace("old", "new")}}}))
'''


@pytest.fixture
def faux():
    provider = FauxProvider()
    yield provider
    provider.unregister()


def make_plugin(root: Path) -> Path:
    files = {
        ".claude-plugin/plugin.json": json.dumps({"name": "my-plugin", "version": "0.3.0",
                                                  "description": "a test plugin"}),
        "skills/greet/SKILL.md": "---\nname: greet\ndescription: Greets people warmly\n---\nSay hi with a smile.\n",
        "commands/hello.md": "---\ndescription: Say hello\n---\nSay hello to $ARGUMENTS politely.\n",
        "agents/reviewer.md": "---\nname: reviewer\ndescription: Reviews code\n---\nYou review code.\n",
        ".mcp.json": json.dumps({"mcpServers": {"clock": {
            "command": str(Path(sys.executable).parent / "mcp-server-time"),
            "args": ["--local-timezone", "Europe/Berlin"]}}}),
        "hooks/hooks.json": json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{
            "type": "command", "command": f"{sys.executable} ${{CLAUDE_PLUGIN_ROOT}}/hooks/guard.py"}]}]}}),
        "hooks/guard.py": textwrap.dedent(GUARD),
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


async def test_a_plugin_brings_its_skill_command_agent_mcp_server_and_hook(faux, tmp_path, wolli_home):
    plugin = make_plugin(tmp_path / "my-plugin")
    project = tmp_path / "project"
    (project / "build").mkdir(parents=True)
    paths.agent_home().mkdir(parents=True)
    before = tree(wolli_home)
    done = wolli_cli(["install", str(plugin), "--yes"], project)
    assert done.returncode == 0, done.stderr
    assert "Installed plugin my-plugin 0.3.0" in done.stdout
    assert "agents: reviewer" in done.stdout and "hooks: PreToolUse" in done.stdout
    installed = paths.agent_home() / "packages" / "plugins" / "my-plugin"
    assert (installed / "hooks" / "guard.py").is_file()

    # The MCP server of the plugin starts through the MCP layer like any other.
    listed = wolli_cli(["mcp", "list", "--json"], project, timeout=60)
    assert listed.returncode == 0, listed.stderr
    server = next(s for s in json.loads(listed.stdout)["servers"] if s["name"] == "clock")
    assert server["state"] == "ready" and "get_current_time" in {t["name"] for t in server["tools"]}

    host = make_host(faux)
    errors = await host.extensions.load(str(project))
    assert errors == []
    session = await start_session(host, project, model=faux.model)
    resources = host.resources(str(project))
    assert "greet" in [s.name for s in resources.skills]
    assert {"my-plugin:hello", "hello"} <= {t.name for t in resources.prompts}
    assert host.extensions.installed.plugins[0].agents() == ["reviewer"]
    reviewer = host.subagents.find(str(project), "reviewer")  # a subagent the task tool offers
    assert reviewer is not None and reviewer.description == "Reviews code"
    hooks = next(i for i in host.extensions.infos() if i["kind"] == "claude-hooks")
    assert hooks["package"] == "my-plugin" and hooks["handlers"] == ["tool_call"]

    faux.push("hi")
    await session.prompt("/my-plugin:hello Ada")
    assert "Say hello to Ada politely." in str(faux.contexts[-1].messages[-1].content)
    faux.push("hi")
    await session.prompt("/hello Bob")
    assert "Say hello to Bob politely." in str(faux.contexts[-1].messages[-1].content)

    faux.push([faux_tool_call("bash", {"command": "rm -rf build"})], "ok")
    await session.prompt("clean up")
    blocked = faux.contexts[-1].messages[-1]
    assert blocked.is_error and "rm is not allowed here" in blocked.content[0].text
    assert (project / "build").is_dir()

    faux.push([faux_tool_call("bash", {"command": "echo old"})], "ok")
    await session.prompt("say it")
    rewritten = faux.contexts[-1].messages[-1]
    assert not rewritten.is_error and rewritten.content[0].text.strip() == "new"
    payloads = [json.loads(line) for line in (project / "hook-payloads.jsonl").read_text().splitlines()]
    assert payloads[0]["hook_event_name"] == "PreToolUse" and payloads[0]["tool_name"] == "Bash"
    assert payloads[0]["session_id"] == session.session_id and payloads[0]["cwd"] == str(project)
    await host.shutdown()

    assert wolli_cli(["remove", "my-plugin"], project).returncode == 0
    # What using the agent wrote (the session, logs, the MCP tool cache) stays; the rest is as before.
    after = {k: v for k, v in tree(wolli_home).items() if not k.startswith((
        "agents/default/sessions", "agents/default/logs", "agents/default/mcp-cache.json"))}
    assert after == before


def test_a_plugin_from_a_git_repository_is_recorded_with_its_commit(tmp_path):
    plugin = make_plugin(tmp_path / "work")
    commit = publish_to_bare(plugin, tmp_path / "plugin.git", "first")
    done = wolli_cli(["install", f"{tmp_path / 'plugin.git'}", "--yes"], tmp_path)
    assert done.returncode == 0, done.stderr
    settings = json.loads((paths.agent_home() / "settings.json").read_text())
    assert settings["packages"][0]["kind"] == "claude-plugin" and settings["packages"][0]["commit"] == commit
    lock = json.loads((paths.agent_home() / "packages.lock.json").read_text())
    assert lock["plugins"][0]["commit"] == commit and lock["plugins"][0]["contentHash"].startswith("sha256:")
    assert not (paths.agent_home() / "packages" / "plugins" / "my-plugin" / ".git").exists()
