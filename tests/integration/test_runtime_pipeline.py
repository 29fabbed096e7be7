"""The prompt pipeline's seams, in order, and the tool/context/payload seams of a run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.support.runtime import make_host, recorder, start_session
from tests.support.waiting import wait_until
from wolli.ai.providers.faux import FauxProvider, faux_tool_call
from wolli.runtime.live.prompting import MAX_AGENT_END_FOLLOW_UPS


@pytest.fixture
def faux():
    provider = FauxProvider()
    yield provider
    provider.unregister()


class Command:
    def __init__(self, log: list[str]) -> None:
        self.log = log
        self.description = "a test command"

    async def run(self, args: str, ctx) -> None:
        self.log.append(f"command:{args}")


def write_template(home: Path, name: str, body: str) -> None:
    folder = home / "agents" / "default" / "prompts"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(body)


async def test_the_pipeline_runs_its_seams_in_order(faux, tmp_path, wolli_home):
    write_template(wolli_home, "fix", "Please fix $1 carefully.")
    host = make_host(faux)
    log: list[str] = []
    host.commands["hello"] = Command(log)

    def on_input(event, ctx):
        log.append(f"input:{event.text}:{event.source}")
        if event.text.startswith("?"):
            return {"action": "transform", "text": "/fix " + event.text[1:]}
        return None

    def before_start(event, ctx):
        log.append(f"before_agent_start:{event.prompt}")
        return None

    def agent_end(event, ctx):
        log.append("agent_end")

    host.handlers.add("input", on_input)
    host.handlers.add("before_agent_start", before_start)
    host.handlers.add("agent_start", lambda e, c: log.append("agent_start"))
    host.handlers.add("agent_end", agent_end)
    session = await start_session(host, tmp_path, model=faux.model)

    assert await session.prompt("/hello world") == "command"
    assert log == ["command:world"] and faux.calls == 0

    faux.push("done")
    assert await session.prompt("?tests") == "ran"
    assert log[1:] == [
        "input:?tests:interactive",
        "before_agent_start:Please fix tests carefully.",
        "agent_start",
        "agent_end",
    ]
    assert faux.contexts[-1].messages[-1].content == "Please fix tests carefully."


async def test_input_handled_stops_before_the_model(faux, tmp_path):
    host = make_host(faux)
    host.handlers.add("input", lambda e, c: {"action": "handled"} if e.text == "ping" else None)
    session = await start_session(host, tmp_path, model=faux.model)
    assert await session.prompt("ping") == "handled"
    assert faux.calls == 0 and session.messages == []


async def test_a_system_prompt_override_holds_for_one_run_only(faux, tmp_path):
    host = make_host(faux)
    calls = {"n": 0}

    def override(event, ctx):
        calls["n"] += 1
        if calls["n"] == 1:
            assert ctx.session.get_system_prompt() == event.system_prompt
            return {"system_prompt": event.system_prompt + "\nSPEAK LIKE A PIRATE"}
        return None

    host.handlers.add("before_agent_start", override)
    session = await start_session(host, tmp_path, model=faux.model)
    faux.push([faux_tool_call("ls", {})], "arr", "plain")
    await session.prompt("one")
    assert all("PIRATE" in c.system_prompt for c in faux.contexts[:2])  # both turns of run one
    await session.prompt("two")
    assert "PIRATE" not in faux.contexts[-1].system_prompt
    assert "PIRATE" not in session.system_prompt


async def test_injected_messages_go_in_with_the_user_message_and_the_file(faux, tmp_path):
    host = make_host(faux)
    host.handlers.add(
        "before_agent_start",
        lambda e, c: {"message": {"custom_type": "ctx-note", "content": "the build is red", "display": False}},
    )
    session = await start_session(host, tmp_path, model=faux.model)
    faux.push("noted")
    await session.prompt("status?")
    sent = [m.content for m in faux.contexts[-1].messages]
    assert sent[0] == "status?" and "the build is red" in json.dumps([str(s) for s in sent[1:]])
    order = [
        (e.type, getattr(getattr(e, "message", None), "role", None))
        for e in session.session_manager.get_entries()
        if e.type in ("message", "custom_message")
    ]
    assert order == [("message", "user"), ("custom_message", None), ("message", "assistant")]


async def test_agent_end_follow_ups_are_capped(faux, tmp_path):
    host = make_host(faux)
    host.handlers.add("agent_end", lambda e, c: {"follow_up": "keep going"})
    session = await start_session(host, tmp_path, model=faux.model)
    faux.push(*[f"answer {i}" for i in range(MAX_AGENT_END_FOLLOW_UPS + 5)])
    await session.prompt("start")
    assert faux.calls == 1 + MAX_AGENT_END_FOLLOW_UPS
    users = [m.content for m in session.messages if m.role == "user"]
    assert users == ["start"] + ["keep going"] * MAX_AGENT_END_FOLLOW_UPS


async def test_tool_call_handlers_block_patch_revalidate_and_fail_closed(faux, tmp_path):
    host = make_host(faux)
    (tmp_path / "a.txt").write_text("alpha\n")
    (tmp_path / "b.txt").write_text("beta\n")

    def gate(event, ctx):
        if event.tool_name == "bash":
            return {"block": True, "reason": "no shell today"}
        if event.tool_name == "read" and event.input["path"] == "a.txt":
            event.input["path"] = "b.txt"  # patch: read b instead
        if event.tool_name == "read" and event.input["path"] == "bad.txt":
            event.input["limit"] = "not a number"  # no longer fits the schema
        if event.tool_name == "ls":
            raise RuntimeError("gate crashed")
        return None

    host.handlers.add("tool_call", gate, owner="gate.py")
    session = await start_session(host, tmp_path, model=faux.model)
    faux.push(
        [
            faux_tool_call("bash", {"command": "rm -rf /"}),
            faux_tool_call("read", {"path": "a.txt"}),
            faux_tool_call("read", {"path": "bad.txt"}),
            faux_tool_call("ls", {}),
        ],
        "ok",
    )
    await session.prompt("go")
    results = [m for m in session.messages if m.role == "toolResult"]
    assert results[0].is_error and "no shell today" in results[0].content[0].text
    assert not results[1].is_error and "beta" in results[1].content[0].text
    assert results[2].is_error and "limit" in results[2].content[0].text
    assert results[3].is_error and "blocked" in results[3].content[0].text.lower()


async def test_tool_call_can_supply_a_result_and_tool_result_patches_fold(faux, tmp_path):
    host = make_host(faux)
    host.handlers.add("tool_call", lambda e, c: {"result": {"content": "cached listing", "details": {"hit": 1}}})
    host.handlers.add("tool_result", lambda e, c: {"details": {**(e.details or {}), "seen": True}})
    host.handlers.add("tool_result", lambda e, c: {"content": [{"type": "text", "text": e.content[0].text.upper()}]})
    session = await start_session(host, tmp_path, model=faux.model)
    faux.push([faux_tool_call("ls", {})], "ok")
    await session.prompt("list")
    [result] = [m for m in session.messages if m.role == "toolResult"]
    assert result.content[0].text == "CACHED LISTING" and result.details == {"hit": 1, "seen": True}


async def test_the_context_seam_copies_only_when_someone_listens(faux, tmp_path):
    host = make_host(faux)
    session = await start_session(host, tmp_path, model=faux.model)
    faux.push("one")
    await session.prompt("first")
    seam = session.agent.transform_context
    assert await seam(session.messages, None) is session.messages  # nobody listens: no copy

    def prune(event, ctx):
        event.messages[0].content = "MUTATED IN A COPY"
        return {"messages": event.messages}

    host.handlers.add("context", prune)
    faux.push("two")
    await session.prompt("second")
    assert faux.contexts[-1].messages[0].content == "MUTATED IN A COPY"
    assert session.messages[0].content == "first"


async def test_before_provider_request_sees_and_replaces_the_payload(faux, tmp_path):
    host = make_host(faux)
    seen = []

    def hook(event, ctx):
        seen.append(event.payload)
        return {**event.payload, "temperature": 0}

    host.handlers.add("before_provider_request", hook)
    session = await start_session(host, tmp_path, model=faux.model)
    faux.push("ok")
    await session.prompt("hi")
    assert seen and isinstance(seen[0], dict)
    assert faux.payloads[-1]["temperature"] == 0


async def test_user_bash_can_replace_the_result_or_run_and_be_aborted(faux, tmp_path):
    host = make_host(faux)
    host.handlers.add(
        "user_bash",
        lambda e, c: {"result": {"output": "sandboxed", "exit_code": 0}} if e.command == "whoami" else None,
    )
    session = await start_session(host, tmp_path, model=faux.model)
    events = recorder(session)
    replaced = await session.run_bash("whoami")
    assert replaced.output == "sandboxed" and replaced.exit_code == 0
    running = asyncio.ensure_future(session.run_bash("sleep 30; echo never"))
    await wait_until(lambda: session._bash_controller is not None)
    session.abort_bash()
    aborted = await asyncio.wait_for(running, timeout=10)
    assert aborted.cancelled and "never" not in aborted.output
    assert [e.type for e in events].count("message_end") == 2
