"""Claude Code hooks from a settings.json (``--claude-settings``, ``wolli import
claude-settings``) on Wolli's events, each checked through a scripted turn."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support.packages import wolli_cli
from tests.support.runtime import make_host, start_session
from tests.support.waiting import wait_until
from wolli.ai.providers.faux import FauxProvider, faux_tool_call
from wolli.config import paths

# One script for every event: it logs its input and answers as the test asks through files.
HOOK = '''
import json, os, sys
event = json.load(sys.stdin)
folder = os.environ["CLAUDE_PROJECT_DIR"]
with open(os.path.join(folder, "events.jsonl"), "a") as log:
    log.write(json.dumps(event) + "\\n")
name = event["hook_event_name"]
if name == "UserPromptSubmit":
    if "secret" in event["prompt"]:
        print("prompts with secrets are refused", file=sys.stderr)
        sys.exit(2)
    print("Context: the build is green.")
elif name == "Stop" and not event["stop_hook_active"]:
    print("Also run the tests before you stop.", file=sys.stderr)
    sys.exit(2)
elif name == "SessionStart":
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart",
                                             "additionalContext": "The user prefers tabs."}}))
elif name == "PostToolUse":
    print("lint: 2 warnings in the file you touched", file=sys.stderr)
    sys.exit(2)
elif name == "PreCompact":
    print(json.dumps({"decision": "block", "reason": "not now"}))
elif name == "PreToolUse" and event["tool_name"] == "Read":
    sys.exit(3)  # a failing hook: reported, the call goes on
'''


@pytest.fixture
def faux():
    provider = FauxProvider()
    yield provider
    provider.unregister()


def settings_file(tmp_path: Path) -> Path:
    script = tmp_path / "hook.py"
    script.write_text(textwrap.dedent(HOOK))
    command = [{"type": "command", "command": f"{sys.executable} {script}"}]
    hooks = {event: [{"hooks": command}] for event in
             ("UserPromptSubmit", "Stop", "SessionStart", "SessionEnd", "PreCompact")}
    hooks["PostToolUse"] = [{"matcher": "Write|Edit", "hooks": command}]
    hooks["PreToolUse"] = [{"matcher": "Read", "hooks": command}]
    hooks["Notification"] = [{"matcher": "wolli_warning", "hooks": command}]
    path = tmp_path / "claude-settings.json"
    path.write_text(json.dumps({"permissions": {"allow": []}, "hooks": hooks}))
    return path


def events(project: Path) -> list[dict]:
    path = project / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


async def started(faux, project: Path, claude_settings: list[str]):
    host = make_host(faux, compaction={"enabled": True, "reserveTokens": 16384, "keepRecentTokens": 10})
    host.extensions.configure(claude_settings_files=claude_settings, packages=False)
    errors = await host.extensions.load(str(project))
    session = await start_session(host, project, model=faux.model)
    return host, session, errors


async def test_settings_hooks_run_on_prompt_stop_start_tool_result_and_compaction(faux, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    notices: list[tuple[str, str]] = []
    host, session, errors = await started(faux, project, [str(settings_file(tmp_path))])
    host.ui.notify = lambda text, level="info": notices.append((level, text))  # type: ignore[method-assign]
    assert errors == []
    started_events = events(project)
    assert started_events[0]["hook_event_name"] == "SessionStart" and started_events[0]["source"] == "startup"

    # UserPromptSubmit adds context; SessionStart's context reaches the first turn; Stop (exit 2)
    # makes the agent go on once with the hook's words, then lets it stop.
    faux.push("first answer", "tests pass")
    await session.prompt("fix the bug")
    first = faux.contexts[0].messages
    text = json.dumps([m.model_dump() if hasattr(m, "model_dump") else str(m) for m in first])
    assert "fix the bug\\n\\nContext: the build is green." in text
    assert "The user prefers tabs." in text
    assert "Also run the tests before you stop." in str(faux.contexts[1].messages[-1].content)
    stops = [e for e in events(project) if e["hook_event_name"] == "Stop"]
    assert [s["stop_hook_active"] for s in stops] == [False, True]

    # A prompt the hook refuses never reaches the model.
    calls = faux.calls
    assert await session.prompt("my secret is 42") == "handled"
    assert faux.calls == calls
    assert any("prompts with secrets are refused" in text for _, text in notices)

    # PostToolUse (matcher Write|Edit) adds its stderr to the tool result the model sees.
    faux.push([faux_tool_call("write", {"path": "a.txt", "content": "x"})], "ok", "done")
    await session.prompt("write it")
    result = next(m for m in faux.contexts[-2].messages if getattr(m, "role", "") == "toolResult")
    assert "lint: 2 warnings" in json.dumps(result.model_dump())
    post = [e for e in events(project) if e["hook_event_name"] == "PostToolUse"][0]
    assert post["tool_name"] == "Write" and post["tool_input"]["file_path"] == "a.txt"

    # A PreToolUse hook that fails is reported and the call still runs.
    (project / "b.txt").write_text("bee")
    faux.push([faux_tool_call("read", {"path": "b.txt"})], "read", "ok")
    await session.prompt("read it")
    read = next(m for m in faux.contexts[-2].messages[::-1] if getattr(m, "role", "") == "toolResult")
    assert not read.is_error and "bee" in read.content[0].text

    # PreCompact with decision "block" cancels a manual compaction.
    seen: list = []
    session.observe(seen.append)
    assert await session.compact() is None
    end = next(e for e in seen if e.type == "compaction_end")
    assert end.aborted and "Cancelled" in end.error_message
    assert any("Compaction was cancelled by a PreCompact hook: not now" in text for _, text in notices)
    assert [e["trigger"] for e in events(project) if e["hook_event_name"] == "PreCompact"] == ["manual"]

    # Notices reach Notification hooks (this matcher takes warnings only).
    session.notice("info", "just so you know")
    session.notice("warning", "the disk is almost full")
    await wait_until(lambda: any(e["hook_event_name"] == "Notification" for e in events(project)), 10,
                     "the Notification hook")
    notes = [e for e in events(project) if e["hook_event_name"] == "Notification"]
    assert [(n["message"], n["notification_type"]) for n in notes] == [("the disk is almost full", "wolli_warning")]

    await host.shutdown()
    ends = [e for e in events(project) if e["hook_event_name"] == "SessionEnd"]
    assert ends and ends[-1]["reason"] == "prompt_input_exit"


def test_import_claude_settings_writes_the_hooks_into_the_agent_settings(tmp_path):
    source = settings_file(tmp_path)
    done = wolli_cli(["import", "claude-settings", str(source)], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Imported 8 hook(s)" in done.stdout
    stored = json.loads((paths.agent_home() / "settings.json").read_text())
    assert set(stored["claudeHooks"]) == {"UserPromptSubmit", "Stop", "SessionStart", "SessionEnd", "PreCompact",
                                          "PostToolUse", "PreToolUse", "Notification"}
    assert "permissions" not in stored


def test_importing_a_missing_or_empty_settings_file_is_one_line(tmp_path):
    missing = wolli_cli(["import", "claude-settings", str(tmp_path / "nope.json")], tmp_path)
    assert missing.returncode == 1
    assert missing.stderr.strip().splitlines() == [f"wolli: {tmp_path / 'nope.json'}: no such file"]
    empty = tmp_path / "empty.json"
    empty.write_text("{}")
    done = wolli_cli(["import", "claude-settings", str(empty)], tmp_path)
    assert done.returncode == 1 and done.stderr.strip() == f"wolli: {empty}: no command hooks to import"


async def test_imported_hooks_run_without_the_flag_and_unsupported_events_are_reported(faux, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    source = settings_file(tmp_path)
    data = json.loads(source.read_text())
    data["hooks"]["SubagentStop"] = data["hooks"]["Stop"]
    source.write_text(json.dumps(data))
    assert wolli_cli(["import", "claude-settings", str(source)], tmp_path).returncode == 0
    host, session, errors = await started(faux, project, [])
    assert any("SubagentStop hook event is not supported" in e for e in errors)
    record = next(i for i in host.extensions.infos() if i["kind"] == "claude-hooks")
    assert record["status"] == "loaded" and "input" in record["handlers"]
    assert events(project)[0]["hook_event_name"] == "SessionStart"
    await host.shutdown()
