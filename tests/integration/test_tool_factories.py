"""Tool factories (``tools/<name>/__init__.py`` with ``factory(api)``) on real files."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.support.cli import wolli
from tests.support.openai_chat import text_answer, tool_call_answer, write_models_json
from tests.support.runtime import make_host, start_session
from wolli.ai.providers.faux import FauxProvider, faux_tool_call
from wolli.config import paths

TODO = textwrap.dedent('''
    """A todo list whose state lives in tool-result details, rebuilt on every session change."""
    from pydantic import BaseModel

    class Params(BaseModel):
        action: str
        text: str = ""

    def factory(api):
        items = []
        reasons = []

        def rebuild(event, ctx):
            reasons.append(event.reason)
            items.clear()
            for entry in ctx.session_manager.get_branch():
                message = getattr(entry, "message", None)
                if getattr(message, "role", None) == "toolResult" and message.tool_name == "todo":
                    items[:] = (message.details or {}).get("items", [])

        def execute(tool_call_id, params, signal, on_update, ctx):
            if params.action == "add":
                items.append(params.text)
            return {"content": [{"type": "text", "text": ", ".join(items) or "(empty)"}],
                    "details": {"items": list(items), "idle": ctx.is_idle()}}

        def count(tool_call_id, params, signal, on_update, ctx):
            return str(len(items))

        return [
            {"name": "todo", "description": "Manage a todo list", "parameters": Params,
             "execute": execute, "on_session": rebuild},
            {"name": "todo_count", "description": "How many todos", "execute": count},
        ]
''')


@pytest.fixture
def faux():
    provider = FauxProvider()
    yield provider
    provider.unregister()


def write_tool(folder: Path, source: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "__init__.py").write_text(source)
    return folder / "__init__.py"


async def test_a_factory_list_shares_state_rebuilt_after_resume_and_fork(faux, tmp_path):
    path = write_tool(paths.agent_home() / "tools" / "todo", TODO)
    host = make_host(faux)
    host.extensions.configure(packages=False)
    assert await host.extensions.load(str(tmp_path)) == []
    session = await start_session(host, tmp_path, model=faux.model)
    faux.push([faux_tool_call("todo", {"action": "add", "text": "a"})], [faux_tool_call("todo", {"action": "add", "text": "b"})],
              [faux_tool_call("todo_count", {})], "done")
    await session.prompt("add two")
    assert faux.contexts[-1].messages[-1].content[0].text == "2"
    module = next(r for r in host.extensions.registry.records if r.kind == "tool")
    state = __import__("sys").modules[module.module_name]
    assert module.source.path == path
    # A fork at the first tool result keeps one item; resuming the original brings back two.
    first_result = next(e for e in session.session_manager.get_entries()
                        if getattr(e, "message", None) is not None and e.message.role == "toolResult")
    forked = await host.fork_session(first_result.id)
    faux.push([faux_tool_call("todo_count", {})], "ok")
    await forked.prompt("count")
    assert faux.contexts[-1].messages[-1].content[0].text == "1"
    resumed = await host.resume_session(session.session_file)
    faux.push([faux_tool_call("todo_count", {})], "ok")
    await resumed.prompt("count")
    assert faux.contexts[-1].messages[-1].content[0].text == "2"
    assert state is not None


async def test_reserved_names_and_missing_factories_are_reported(faux, tmp_path):
    shadow = write_tool(paths.agent_home() / "tools" / "shadow", "def factory(api):\n    return {'name': 'read', 'description': 'x', 'execute': lambda *a: 'x'}\n")
    empty = write_tool(paths.agent_home() / "tools" / "empty", "X = 1\n")
    raising = write_tool(paths.agent_home() / "tools" / "raising", "def factory(api):\n    raise OSError('no db')\n")
    host = make_host(faux)
    host.extensions.configure(packages=False, tool_cli_paths=[str(tmp_path / "gone")])
    errors = await host.extensions.load(str(tmp_path))
    assert errors == [
        f"{tmp_path / 'gone'}: no tool factory here (--tool); expected a folder with __init__.py or a .py file",
        f"{empty}: no factory(api) function (define `def factory(api): return {{...}}`)",
        f"{raising}:2: OSError: no db",
        f"{shadow}: the tool name 'read' is reserved for the built-in tool; choose another name "
        "(an extension's register_tool may replace a built-in)",
    ]
    session = await start_session(host, tmp_path, model=faux.model)
    assert next(t for t in session.all_tools if t.name == "read").source == "builtin"


async def test_later_sources_win_and_on_session_hears_shutdown(faux, tmp_path):
    write_tool(paths.agent_home() / "tools" / "echo", "def factory(api):\n    return {'name': 'echo', 'description': 'home', 'execute': lambda *a: 'home'}\n")
    cli = tmp_path / "echo_cli.py"
    cli.write_text(textwrap.dedent("""
        seen = []
        def factory(api):
            return {"name": "echo", "description": "cli", "execute": lambda *a: "cli",
                    "on_session": lambda event, ctx: seen.append(event.reason)}
    """))
    host = make_host(faux)
    host.extensions.configure(packages=False, tool_cli_paths=[str(cli)])
    await host.extensions.load(str(tmp_path))
    session = await start_session(host, tmp_path, model=faux.model)
    assert next(t for t in session.all_tools if t.name == "echo").description == "cli"
    await host.shutdown()
    record = next(r for r in host.extensions.registry.records if r.source.path == cli)
    assert __import__("sys").modules[record.module_name].seen == ["start", "shutdown"]


def test_tool_and_custom_tools_from_the_command_line(project, loopback, wolli_home, tmp_path):
    write_models_json(wolli_home, loopback.url + "/v1")
    folder = tmp_path / "todo"
    write_tool(folder, TODO)
    (wolli_home / "settings.json").write_text(json.dumps({"customTools": [str(folder)]}))
    loopback.push(tool_call_answer("todo", {"action": "add", "text": "milk"}), text_answer("added"))
    result = wolli(["-p", "--model", "local/local-model", "add milk"], project)
    assert (result.returncode, result.stdout) == (0, "added\n"), result.stderr
    assert "milk" in json.dumps(loopback.requests[1].json["messages"][-1])
    (wolli_home / "settings.json").write_text("{}")
    loopback.push(tool_call_answer("todo_count", {}), text_answer("counted"))
    result = wolli(["-p", "--model", "local/local-model", "--tool", str(folder), "count"], project)
    assert (result.returncode, result.stdout) == (0, "counted\n"), result.stderr


async def test_on_session_hears_tree_navigation(faux, tmp_path):
    path = write_tool(paths.agent_home() / "tools" / "todo", TODO)
    host = make_host(faux)
    host.extensions.configure(packages=False)
    await host.extensions.load(str(tmp_path))
    session = await start_session(host, tmp_path, model=faux.model)
    faux.push([faux_tool_call("todo", {"action": "add", "text": "a"})], [faux_tool_call("todo", {"action": "add", "text": "b"})], "ok")
    await session.prompt("add")
    first = next(e for e in session.session_manager.get_entries()
                 if getattr(e, "message", None) is not None and e.message.role == "toolResult")
    await session.navigate_tree(first.id)
    faux.push([faux_tool_call("todo_count", {})], "ok")
    await session.prompt("count")
    assert faux.contexts[-1].messages[-1].content[0].text == "1"
    record = next(r for r in host.extensions.registry.records if r.source.path == path)
    assert record.status == "loaded"
