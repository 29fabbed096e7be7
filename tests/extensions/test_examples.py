"""Every example in ``extensions/``, loaded by the real loader and exercised through
``wolli.testing`` on the scripted model (``test_permission_gate.py`` has that one)."""

from __future__ import annotations

import ast
import asyncio
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from wolli.testing import ExtensionHarness, tool_call

EXAMPLES = Path(__file__).resolve().parents[2] / "extensions"


def example(name: str) -> Path:
    path = EXAMPLES / name
    return path if path.exists() else EXAMPLES / f"{name}.py"


def all_examples() -> list[Path]:
    return sorted(p for p in EXAMPLES.iterdir() if (p.suffix == ".py" or (p / "__init__.py").exists()))


def test_there_are_at_least_twenty_examples_each_with_a_docstring() -> None:
    found = all_examples()
    assert len(found) >= 20
    for path in found:
        source = (path / "__init__.py" if path.is_dir() else path).read_text()
        assert ast.get_docstring(ast.parse(source)), f"{path.name} has no docstring saying what it shows"


async def test_every_example_loads_together_without_errors(tmp_path) -> None:
    async with ExtensionHarness(all_examples(), cwd=tmp_path) as h:
        assert h.load_errors == []
        assert all(info["status"] == "loaded" for info in h.host.extensions.infos())
        # Every example is exercised by a test in this folder.
        tested = {p.stem.removeprefix("test_") for p in Path(__file__).parent.glob("test_*.py")} | TESTED
        assert {p.stem for p in all_examples()} <= tested


TESTED = {
    "protected_paths", "todo", "reload_runtime", "handoff", "chat_binding", "kitchen_sink", "redact_input",
    "plan_mode", "echo_provider", "trim_context", "request_tagging", "redact_tool_output", "tidy_answers",
    "custom_compaction", "bang_commands", "status_line", "notes", "session_tools", "background_review",
    "turn_guard", "bus_announcer", "async_setup",
}


async def test_protected_paths(tmp_path) -> None:
    async with ExtensionHarness([example("protected_paths")], cwd=tmp_path) as h:
        h.reply(tool_call("write", {"path": ".env", "content": "X=1"}), tool_call("write", {"path": "ok.txt", "content": "fine"}),
                tool_call("bash", {"command": "echo x > node_modules/a.js"}), "done")
        await h.prompt("write files")
        assert [r.is_error for r in h.tool_results] == [True, False, True]
        assert not (tmp_path / ".env").exists() and (tmp_path / "ok.txt").read_text() == "fine"
        assert "Protected files" in h.requests[0].system_prompt


async def test_todo_state_follows_fork_and_resume(tmp_path) -> None:
    async with ExtensionHarness([example("todo")], cwd=tmp_path) as h:
        h.reply(tool_call("todo", {"action": "add", "text": "a"}), tool_call("todo", {"action": "add", "text": "b"}),
                tool_call("todo", {"action": "done", "text": "a"}), "planned")
        await h.prompt("plan")
        assert h.tool_results[-1].content[0].text == "[x] a\n[ ] b"
        first = next(e for e in h.entries if getattr(e, "message", None) and e.message.role == "toolResult")
        original = h.session.session_file
        await h.host.fork_session(first.id)
        await h.command("todos")
        assert h.notifications[-1] == ("open: a", "info")
        await h.host.resume_session(original)
        await h.command("todos")
        assert h.notifications[-1] == ("open: b", "info")


async def test_reload_runtime_command_and_tool(tmp_path) -> None:
    async with ExtensionHarness([example("reload_runtime")], cwd=tmp_path) as h:
        await h.command("reload-runtime")
        assert "still live" in h.notifications[-1][0]
        module = h.extension("reload_runtime")
        assert module.reasons == [("start", "reload")]  # a fresh module after the reload
        h.reply(tool_call("reload_runtime", {}), "will reload")
        await h.prompt("reload yourself")
        await asyncio.gather(*module.pending)
        assert h.extension("reload_runtime") is not module


async def test_handoff_starts_a_seeded_session(tmp_path) -> None:
    async with ExtensionHarness([example("handoff")], cwd=tmp_path) as h:
        h.reply("the parser is in src/parse.py", "on it")
        await h.prompt("where is the parser?")
        old = h.host.active
        await h.command("handoff", "add tests for the parser")
        new = h.host.active
        assert new is not old and new.session_manager.get_header().parent_session == old.session_file
        sent = h.requests[-1].messages
        assert "where is the parser?" in str(sent[0].content) and sent[-1].content == "add tests for the parser"


async def test_chat_binding_routes_messages_to_tagged_sessions(tmp_path) -> None:
    async with ExtensionHarness([example("chat_binding")], cwd=tmp_path) as h:
        chat = h.extension("chat_binding")
        client = h.host.extensions.registry.integrations["chat"](None)
        h.reply("hello chat 7", "again chat 7")
        await client.deliver(7, "hi from chat")
        [bound] = h.host.find_sessions({"chat:id": "7"})
        await client.deliver(7, "second message")
        assert [m["text"] for m in client.sent] == ["hello chat 7", "again chat 7"]
        assert h.host.find_sessions({"chat:id": "7"})[0].id == bound.id and chat is not None


async def test_kitchen_sink(tmp_path) -> None:
    (tmp_path / "a.secret").write_text("password")
    async with ExtensionHarness([example("kitchen_sink")], cwd=tmp_path,
                                settings={"kitchenSink": {"followUps": 1}}) as h:
        h.reply(tool_call("read", {"path": "a.secret"}), tool_call("bash", {"command": "python -c 'print(1)'"}),
                "first", "checked")
        await h.prompt("go")
        assert h.tool_results[0].content[0].text == "(hidden by kitchen_sink)"
        assert h.tool_calls[1].arguments["command"].startswith("python -c")  # what the model wrote
        assert h.tool_results[1].content[0].text.strip() == "1"  # ran as python3
        assert h.requests[-1].messages[-1].content == "Please double-check your last answer."
        h.reply('{"answer": "yes", "probability": 0.8, "reason": "done"}')
        await h.command("judge")
        assert h.ui.statuses["judge"] == "yes (80%): done"
        await h.command("sh", "echo kitchen")
        assert h.notifications[-1] == ("kitchen", "info")
        assert h.requests[0].system_prompt.index("House style") > 0


async def test_redact_input(tmp_path) -> None:
    async with ExtensionHarness([example("redact_input")], cwd=tmp_path) as h:
        h.reply("ok")
        await h.prompt("use sk-abcdefgh12345 please")
        assert h.requests[-1].messages[-1].content == "use [redacted] please"
        assert "sk-abcdefgh" not in Path(h.session.session_file).read_text()


async def test_plan_mode_flag_and_toggle(tmp_path) -> None:
    async with ExtensionHarness([example("plan_mode")], cwd=tmp_path, flags={"plan": True}) as h:
        assert h.session.active_tool_names == ["read", "grep", "find", "ls"]
        h.reply("a plan")
        await h.prompt("plan it")
        assert "PLAN MODE" in h.requests[-1].system_prompt
        await h.command("plan")
        assert "bash" in h.session.active_tool_names and h.ui.statuses["plan"] is None
        assert "alt+ctrl+p" in h.host.extensions.registry.shortcuts  # Ctrl+Alt+P, in the one key language


async def test_echo_provider(tmp_path) -> None:
    async with ExtensionHarness([example("echo_provider")], cwd=tmp_path) as h:
        model = h.host.model_registry.find("echo", "parrot")
        assert model is not None and h.host.model_registry.is_available(model)
        h.session.agent.set_model(model)
        await h.prompt("polly wants a cracker")
        answer = h.messages[-1]
        assert answer.content[0].text.strip() == "polly wants a cracker" and answer.usage.output == 21
        await h.command("echo-off")
        assert h.host.model_registry.find("echo", "parrot") is None


async def test_trim_context(tmp_path) -> None:
    (tmp_path / "big.txt").write_text("x" * 1000)
    async with ExtensionHarness([example("trim_context")], cwd=tmp_path) as h:
        h.reply(*[tool_call("read", {"path": "big.txt"}) for _ in range(5)], "done")
        await h.prompt("read it a lot")
        sent = [m for m in h.requests[-1].messages if m.role == "toolResult"]
        assert [len(m.content[0].text) < 300 for m in sent] == [True, True, False, False, False]
        assert all(len(m.content[0].text) >= 1000 for m in h.tool_results)  # the session keeps it all


async def test_request_tagging(tmp_path) -> None:
    async with ExtensionHarness([example("request_tagging")], cwd=tmp_path) as h:
        h.reply("ok")
        await h.prompt("hi")
        assert h.faux.payloads[-1]["metadata"] == {"wolli_project": tmp_path.name, "wolli_session": h.session.session_id}


async def test_redact_tool_output(tmp_path) -> None:
    async with ExtensionHarness([example("redact_tool_output")], cwd=tmp_path) as h:
        h.reply(tool_call("bash", {"command": "echo API_KEY=abc123"}), "done")
        await h.prompt("show env")
        assert h.tool_results[-1].content[0].text.strip() == "API_KEY=[redacted]"


async def test_tidy_answers(tmp_path) -> None:
    async with ExtensionHarness([example("tidy_answers")], cwd=tmp_path) as h:
        h.reply("line one   \nline two  \n\n")
        await h.prompt("hi")
        assert h.messages[-1].content[0].text == "line one\nline two"
        assert "line one   " not in Path(h.session.session_file).read_text()


async def test_custom_compaction(tmp_path) -> None:
    async with ExtensionHarness([example("custom_compaction")], cwd=tmp_path,
                                settings={"compaction": {"keepRecentTokens": 1}}) as h:
        for text in ("first question", "second question"):
            h.reply("answer " * 50)
            await h.prompt(text)
        calls = h.faux.calls
        await h.session.compact()
        assert h.faux.calls == calls  # no model call: the extension wrote the summary
        [entry] = [e for e in h.entries if e.type == "compaction"]
        assert entry.summary.startswith("## Earlier in this session") and "first question" in entry.summary


async def test_bang_commands(tmp_path) -> None:
    async with ExtensionHarness([example("bang_commands")], cwd=tmp_path) as h:
        answered = await h.session.run_bash("wolli-info")
        assert f"session {h.session.session_id}" in answered.output and answered.exit_code == 0
        plain = await h.session.run_bash("echo from-shell")
        assert plain.output.strip() == "from-shell"


async def test_status_line(tmp_path) -> None:
    async with ExtensionHarness([example("status_line")], cwd=tmp_path) as h:
        h.reply(tool_call("ls", {}), "a b c")
        await h.prompt("list")
        assert "turns 2" in h.ui.statuses["stats"] and "tools 1" in h.ui.statuses["stats"]
        await h.command("stats")
        stats = ast.literal_eval(h.notifications[-1][0])  # the example prints a dict literal
        assert stats["deltas"] >= 1 and stats["runs"] == 1 and stats["messages"] >= 4


async def test_notes_folder_extension_and_reload_of_its_helper(tmp_path) -> None:
    async with ExtensionHarness([example("notes")], cwd=tmp_path) as h:
        await h.command("note", "use tabs")
        h.reply("ok")
        await h.prompt("format the file")
        assert any("Note from the user: use tabs" in str(m.content) for m in h.requests[-1].messages)
        assert h.host.extensions.registry.renderers["note"](h.messages[0], {}, None) == "[note] Note from the user: use tabs"
        await h.reload()
        await h.command("note")
        assert h.notifications[-1] == ("1 note(s): use tabs", "info")


async def test_session_tools(tmp_path) -> None:
    async with ExtensionHarness([example("session_tools")], cwd=tmp_path) as h:
        h.reply("hello")
        await h.prompt("hi")
        await h.command("name", "parser work")
        leaf = h.session.session_manager.get_leaf_id()
        await h.command("label", "checkpoint")
        await h.command("tag", "ticket=42")
        await h.command("commands")
        assert [n[0] for n in h.notifications[:3]] == ["session name: parser work",
                                                       f"label of {leaf}: checkpoint",
                                                       "ticket=42"]
        assert "/tag" in h.notifications[-1][0]
        assert h.host.commands["tag"].get_argument_completions("ti") == [{"value": "ticket=", "label": "ticket="}]


async def test_background_review(tmp_path) -> None:
    async with ExtensionHarness([example("background_review")], cwd=tmp_path) as h:
        h.reply("looks good")
        await h.command("review-bg")
        reviewer_request = h.requests[-1]
        assert sorted(t.name for t in reviewer_request.tools) == ["find", "grep", "ls", "read"]
        assert "Background review:\nlooks good" in str(h.messages[-1].content)
        assert len(h.host.resident) == 2


async def test_turn_guard(tmp_path) -> None:
    async with ExtensionHarness([example("turn_guard"), example("permission_gate.py")], cwd=tmp_path) as h:
        h.reply(tool_call("bash", {"command": "rm -rf /"}), "never asked")
        await h.prompt("wipe")
        assert h.faux.calls == 1 and h.ui.calls == []  # aborted before the permission gate asked


async def test_bus_announcer(tmp_path) -> None:
    async with ExtensionHarness([example("bus_announcer")], cwd=tmp_path) as h:
        h.reply(tool_call("write", {"path": "a.txt", "content": "x"}), "written")
        await h.prompt("write a")
        await h.command("changed")
        assert h.notifications[-1] == ("a.txt", "info")


async def test_async_setup_reads_its_config_before_the_session(tmp_path) -> None:
    (tmp_path / "glossary.json").write_text(json.dumps({"wal": "write-ahead log"}))
    async with ExtensionHarness([example("async_setup")], cwd=tmp_path) as h:
        assert h.notifications[0] == ("glossary: 1 terms", "info")
        h.reply(tool_call("glossary", {"term": "WAL"}), tool_call("glossary", {"term": "lsm"}), "ok")
        await h.prompt("what is WAL")
        assert h.tool_results[0].content[0].text == "write-ahead log" and h.tool_results[1].is_error
        await h.command("learn", "lsm = log-structured merge tree")
        assert json.loads((tmp_path / "glossary.json").read_text())["lsm"] == "log-structured merge tree"


def test_examples_pass_ruff() -> None:
    if importlib.util.find_spec("ruff") is None:
        pytest.skip("ruff not installed (it is in the test extras)")
    # Through this interpreter: the README's test command does not put .venv/bin on PATH.
    result = subprocess.run([sys.executable, "-m", "ruff", "check", str(EXAMPLES)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


async def test_todo_state_follows_tree_navigation_and_a_handler_may_cancel(tmp_path) -> None:
    async with ExtensionHarness([example("todo")], cwd=tmp_path) as h:
        h.reply(tool_call("todo", {"action": "add", "text": "a"}), tool_call("todo", {"action": "add", "text": "b"}), "ok")
        await h.prompt("plan")
        first = next(e for e in h.entries if getattr(e, "message", None) and e.message.role == "toolResult")
        assert await h.session.navigate_tree(first.id)
        await h.command("todos")
        assert h.notifications[-1] == ("open: a", "info")
        assert [e.new_leaf_id for e in h.events_of("session_tree")] == [first.id]
        h.host.handlers.add("session_before_tree", lambda event, ctx: {"cancel": True}, owner="test")
        leaf = h.session.session_manager.get_leaf_id()
        assert not await h.session.navigate_tree(None)
        assert h.session.session_manager.get_leaf_id() == leaf
