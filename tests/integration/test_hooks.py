"""Hooks (``hooks/*.py`` with ``hook = define_hook(...)``) on real files, through faux."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.support.runtime import make_host, recorder, start_session
from wolli.ai.providers.faux import FauxProvider, faux_tool_call
from wolli.config import paths


@pytest.fixture
def faux():
    provider = FauxProvider()
    yield provider
    provider.unregister()


def hook(name: str, source: str) -> Path:
    path = paths.agent_home() / "hooks" / f"{name}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source).lstrip())
    return path


async def started(faux, tmp_path):
    host = make_host(faux)
    host.extensions.configure(packages=False)
    errors = await host.extensions.load(str(tmp_path))
    session = await start_session(host, tmp_path, model=faux.model)
    return host, session, errors


async def test_a_tool_call_hook_blocks_and_the_model_sees_why(faux, tmp_path):
    hook("guard-bash", """
    from wolli import define_hook, is_tool_call_event_type

    def run(event, ctx):
        if is_tool_call_event_type("bash", event) and "rm -rf" in event.input["command"]:
            return {"block": True, "reason": "destructive command blocked"}

    hook = define_hook(before="tool_call", run=run)
    """)
    _, session, errors = await started(faux, tmp_path)
    assert errors == []
    faux.push([faux_tool_call("bash", {"command": "rm -rf build"})], "ok")
    await session.prompt("clean")
    result = faux.contexts[-1].messages[-1]
    assert result.is_error and "destructive command blocked" in result.content[0].text


async def test_input_hooks_chain_in_file_name_order_and_handled_stops_the_rest(faux, tmp_path):
    hook("a-redact", """
    import re
    from wolli import define_hook

    def run(event, ctx):
        text = re.sub(r"sk-[a-z0-9]+", "[redacted]", event.text)
        if text != event.text:
            return {"action": "transform", "text": text}

    hook = define_hook(before="input", run=run)
    """)
    hook("b-shout", """
    from wolli import define_hook

    async def run(event, ctx):
        if event.text == "quiet":
            return {"action": "handled"}
        return {"action": "transform", "text": event.text.upper()}

    hook = define_hook(before="input", run=run)
    """)
    _, session, _ = await started(faux, tmp_path)
    faux.push("fine")
    await session.prompt("my key is sk-abc123")
    assert faux.contexts[-1].messages[-1].content == "MY KEY IS [REDACTED]"
    calls = faux.calls
    assert await session.prompt("quiet") == "handled" and faux.calls == calls


async def test_a_raising_hook_fails_open_even_at_tool_call_and_is_reported(faux, tmp_path):
    broken = hook("broken", """
    from wolli import define_hook

    def run(event, ctx):
        raise KeyError("oops")

    hook = define_hook(before="tool_call", run=run)
    """)
    _, session, _ = await started(faux, tmp_path)
    events = recorder(session)
    faux.push([faux_tool_call("ls", {})], "listed")
    await session.prompt("list")
    tool_result = faux.contexts[-1].messages[-1]
    assert not tool_result.is_error  # the tool ran
    [error] = [e for e in events if e.type == "extension_error"]
    assert error.extension_path == str(broken) and "oops" in error.error


async def test_agent_start_and_message_end_hooks_fold(faux, tmp_path):
    hook("inject", """
    from wolli import define_hook

    hook = define_hook(before="agent_start", run=lambda event, ctx: {
        "message": {"custom_type": "note", "content": "remember the style guide", "display": False},
        "system_prompt": event.system_prompt + "\\nHOOKED",
    })
    """)
    hook("stamp", """
    from wolli import define_hook

    def run(event, ctx):
        if event.message.role == "assistant":
            copy = event.message.model_copy(deep=True)
            copy.content[0].text += " [checked]"
            return {"message": copy}

    hook = define_hook(before="message_end", run=run)
    """)
    _, session, _ = await started(faux, tmp_path)
    faux.push("answer")
    await session.prompt("go")
    context = faux.contexts[-1]
    assert context.system_prompt.endswith("HOOKED")
    assert any("remember the style guide" in str(m.content) for m in context.messages)
    assert session.messages[-1].content[0].text == "answer [checked]"


async def test_hook_mistakes_name_the_file(faux, tmp_path):
    typo = hook("typo", """
    from wolli import define_hook

    hook = define_hook(before="tool_cal", run=lambda e, c: None)
    """)
    missing = hook("missing", "def run(event, ctx):\n    pass\n")
    _, _, errors = await started(faux, tmp_path)
    assert errors == [
        f"{missing}: no hook = define_hook(before=..., run=...) at module level",
        f"{typo}:3: ValueError: define_hook: no before: event 'tool_cal'; did you mean 'tool_call'?",
    ]
