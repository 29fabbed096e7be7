"""Extensions as users write them: real files in a temporary agent home, the real loader,
driven through the faux provider. Load order, every load error path, the factory awaited
before ``session_start``, registrations usable at once, isolation of failures, reload."""

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


def write(path: Path, source: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source).lstrip())
    return path


def ext_dir() -> Path:
    return paths.agent_home() / "extensions"


def recorder_ext(name: str) -> str:
    """An extension that records its load in the shared event bus log."""
    return f"""
    def extension(wolli):
        wolli.register_command("{name}", handler=lambda args, ctx: None, description="{name}")
    """


async def test_load_order_is_home_by_name_then_settings_then_cli_and_a_path_loads_once(faux, tmp_path):
    write(ext_dir() / "b.py", recorder_ext("b"))
    write(ext_dir() / "a" / "__init__.py", recorder_ext("a"))
    write(ext_dir() / "_private.py", recorder_ext("private"))
    settings_ext = write(tmp_path / "s.py", recorder_ext("s"))
    cli_ext = write(tmp_path / "c" / "__init__.py", recorder_ext("c"))
    host = make_host(faux)
    host.extensions.configure(settings_paths=[str(settings_ext)], cli_paths=[str(cli_ext.parent), str(settings_ext)],
                              packages=False)
    assert await host.extensions.load(str(tmp_path)) == []
    assert [r["name"] for r in host.extensions.infos()] == ["a", "b", "s", "c"]
    assert sorted(host.commands) == ["a", "b", "c", "s"]


async def test_each_load_error_names_file_and_line_and_the_others_load(faux, tmp_path):
    broken = write(ext_dir() / "a_syntax.py", "def extension(wolli):\n    x = (\n")
    missing = write(ext_dir() / "b_missing.py", "VALUE = 1\n")
    raising = write(ext_dir() / "c_raises.py", """
    def extension(wolli):
        wolli.on("agent_start", lambda e, ctx: None)
        wolli.register_tool({"name": "half", "description": "d", "execute": lambda *a: "x"})
        raise RuntimeError("no config found")
    """)
    crash_on_import = write(ext_dir() / "d_import.py", "import json\njson.loads('{')\n")
    write(ext_dir() / "e_good.py", recorder_ext("good"))
    host = make_host(faux)
    host.extensions.configure(packages=False, cli_paths=[str(tmp_path / "nope.py")])
    errors = await host.extensions.load(str(tmp_path))
    assert errors[0] == f"{tmp_path / 'nope.py'}: no such extension file"
    assert errors[1].startswith(f"{broken}:2: SyntaxError:")
    assert errors[2] == f"{missing}: no extension(wolli) function (define `def extension(wolli): ...`)"
    assert errors[3] == f"{raising}:4: RuntimeError: no config found"
    assert errors[4].startswith(f"{crash_on_import}:2: JSONDecodeError:")
    statuses = {r["name"]: r["status"] for r in host.extensions.infos()}
    assert statuses == {"a_syntax": "failed", "b_missing": "failed", "c_raises": "failed", "d_import": "failed",
                        "e_good": "loaded"}
    # The raising factory's registrations were taken back.
    assert not host.handlers.has("agent_start") and all(t.name != "half" for t in host.extra_tools)
    assert list(host.commands) == ["good"]


async def test_an_async_factory_is_awaited_before_session_start(faux, tmp_path):
    write(ext_dir() / "late.py", """
    import asyncio

    seen = []

    async def extension(wolli):
        await asyncio.sleep(0.01)
        wolli.on("session_start", lambda event, ctx: seen.append(event.reason))
        wolli.register_command("seen", handler=lambda args, ctx: ctx.ui.notify(",".join(seen)))
    """)
    host = make_host(faux)
    host.extensions.configure(packages=False)
    await host.extensions.load(str(tmp_path))
    await start_session(host, tmp_path, model=faux.model)
    assert host.commands["seen"].handler.__globals__["seen"] == ["startup"]


async def test_a_registered_tool_is_called_by_the_model_and_its_result_sent_back(faux, tmp_path):
    write(ext_dir() / "greeter.py", """
    from pydantic import BaseModel

    class Params(BaseModel):
        name: str

    def extension(wolli):
        async def greet(tool_call_id, params, signal, on_update, ctx):
            return {"content": [{"type": "text", "text": f"hello {params.name}"}], "details": {"n": 1}}

        wolli.register_tool({"name": "greet", "description": "Greet someone", "parameters": Params,
                             "execute": greet, "prompt_snippet": "Greet people by name"})
    """)
    host = make_host(faux)
    host.extensions.configure(packages=False)
    await host.extensions.load(str(tmp_path))
    session = await start_session(host, tmp_path, model=faux.model)
    assert "greet" in session.active_tool_names
    faux.push([faux_tool_call("greet", {"name": "Ada"})], "done")
    await session.prompt("greet Ada")
    result = faux.contexts[-1].messages[-1]
    assert result.role == "toolResult" and result.content[0].text == "hello Ada" and result.details == {"n": 1}
    assert "Greet people by name" in faux.contexts[0].system_prompt


async def test_a_tool_registered_from_a_handler_is_usable_in_the_same_session(faux, tmp_path):
    write(ext_dir() / "later.py", """
    def extension(wolli):
        def add_tool(event, ctx):
            wolli.register_tool({"name": "late", "description": "added late", "execute": lambda *a: "late ok"})
        wolli.on("agent_start", add_tool)
    """)
    host = make_host(faux)
    host.extensions.configure(packages=False)
    await host.extensions.load(str(tmp_path))
    session = await start_session(host, tmp_path, model=faux.model)
    faux.push([faux_tool_call("late", {})], "done")
    await session.prompt("go")
    assert faux.contexts[-1].messages[-1].content[0].text == "late ok"


async def test_a_raising_handler_is_reported_and_its_siblings_still_run(faux, tmp_path):
    failing = write(ext_dir() / "a.py", """
    def extension(wolli):
        def boom(event, ctx):
            raise ValueError("bad handler")
        wolli.on("agent_start", boom)
    """)
    write(ext_dir() / "b.py", """
    calls = []
    def extension(wolli):
        wolli.on("agent_start", lambda event, ctx: calls.append("b"))
    """)
    host = make_host(faux)
    host.extensions.configure(packages=False)
    await host.extensions.load(str(tmp_path))
    session = await start_session(host, tmp_path, model=faux.model)
    events = recorder(session)
    faux.push("ok")
    await session.prompt("hi")
    [error] = [e for e in events if e.type == "extension_error"]
    assert (error.extension_path, error.event) == (str(failing), "agent_start") and "bad handler" in error.error
    assert session.messages[-1].content[0].text == "ok"
    assert host.extensions.registry.records[1].name == "b"


async def test_the_same_command_from_two_extensions_gets_numbered(faux, tmp_path):
    for name in ("one", "two"):
        write(ext_dir() / f"{name}.py", f"""
        ran = []
        def extension(wolli):
            wolli.register_command("review", handler=lambda args, ctx: ran.append(("{name}", args)))
        """)
    host = make_host(faux)
    host.extensions.configure(packages=False)
    await host.extensions.load(str(tmp_path))
    session = await start_session(host, tmp_path, model=faux.model)
    assert sorted(host.commands) == ["review:1", "review:2"]
    assert await session.prompt("/review:2 src/") == "command"
    assert host.commands["review:2"].handler.__globals__["ran"] == [("two", "src/")]
    assert faux.calls == 0


async def test_flags_prompt_sections_bus_and_listing(faux, tmp_path):
    write(ext_dir() / "plan.py", """
    def extension(wolli):
        wolli.register_flag("plan", description="start in plan mode", type="boolean", default=False)
        wolli.register_prompt_section("Plan mode", lambda: "PLAN ONLY" if wolli.get_flag("plan") else "", order=5)
        wolli.events.on("plan:ping", lambda data: wolli.register_command(f"got-{data}", handler=lambda a, c: None))
        wolli.on("tool_call", lambda e, c: None)
    """)
    write(ext_dir() / "pinger.py", """
    def extension(wolli):
        wolli.on("session_start", lambda event, ctx: wolli.events.emit("plan:ping", "x"))
    """)
    host = make_host(faux)
    host.extensions.configure(packages=False)
    await host.extensions.load(str(tmp_path))
    host.extensions.set_flag_values({"plan": True})
    session = await start_session(host, tmp_path, model=faux.model)
    assert "PLAN ONLY" in session.system_prompt
    assert "got-x" in host.commands
    info = next(i for i in host.extensions.infos() if i["name"] == "plan")
    assert info["flags"] == ["plan"] and info["handlers"] == ["tool_call"] and info["commands"] == ["got-x"]


async def test_reload_picks_up_an_edited_extension_and_its_edited_helper(faux, tmp_path):
    folder = ext_dir() / "pkg"
    write(folder / "helper.py", "WORD = 'first'\n")
    write(folder / "__init__.py", """
    from .helper import WORD

    def extension(wolli):
        wolli.register_command(WORD, handler=lambda args, ctx: None)
    """)
    host = make_host(faux)
    host.extensions.configure(packages=False)
    await host.extensions.load(str(tmp_path))
    session = await start_session(host, tmp_path, model=faux.model)
    events = recorder(session)
    assert list(host.commands) == ["first"]
    write(folder / "helper.py", "WORD = 'second'\n")
    await host.reload()
    assert list(host.commands) == ["second"]
    assert [getattr(e, "reason", None) for e in events if e.type in ("session_shutdown", "session_start")] == [
        "reload", "reload"]


async def test_a_new_version_that_fails_keeps_the_previous_one_running(faux, tmp_path):
    path = write(ext_dir() / "keep.py", """
    def extension(wolli):
        wolli.register_command("kept", handler=lambda args, ctx: None)
    """)
    host = make_host(faux)
    host.extensions.configure(packages=False)
    await host.extensions.load(str(tmp_path))
    await start_session(host, tmp_path, model=faux.model)
    path.write_text("def extension(wolli)\n    pass\n")
    await host.reload()
    assert list(host.commands) == ["kept"]
    [error] = host.extensions.errors
    assert error.startswith(f"{path}:1: SyntaxError") and "the previous version of keep keeps running" in error
    path.write_text("def extension(wolli):\n    wolli.register_command('fixed', handler=lambda a, c: None)\n")
    await host.reload()
    assert list(host.commands) == ["fixed"] and host.extensions.errors == []


async def test_a_new_version_whose_factory_raises_is_taken_back_and_the_previous_one_set_up(faux, tmp_path):
    path = write(ext_dir() / "keep.py", """
    def extension(wolli):
        wolli.register_command("kept", handler=lambda args, ctx: None, description="old")
        wolli.on("input", lambda event, ctx: None)
    """)
    host = make_host(faux)
    host.extensions.configure(packages=False)
    await host.extensions.load(str(tmp_path))
    await start_session(host, tmp_path, model=faux.model)
    write(path, """
    def extension(wolli):
        wolli.register_command("half", handler=lambda args, ctx: None)
        raise RuntimeError("broken halfway")
    """)
    await host.reload()
    assert list(host.commands) == ["kept"] and host.commands["kept"].description == "old"
    [error] = host.extensions.errors
    assert "RuntimeError: broken halfway" in error and "the previous version of keep keeps running" in error
    [info] = [i for i in host.extensions.infos() if i["name"] == "keep"]
    assert info["status"] == "loaded" and info["commands"] == ["kept"] and info["handlers"] == ["input"]
    assert "previous version keeps running" in info["warnings"][0]


async def test_command_availability_carries_a_reason(faux, tmp_path):
    write(ext_dir() / "avail.py", """
    handles = {}

    def extension(wolli):
        handles["c"] = wolli.register_command("deploy", handler=lambda args, ctx: None,
                                              availability={"type": "disabled", "reason": "no git repo"})
    """)
    host = make_host(faux)
    host.extensions.configure(packages=False)
    await host.extensions.load(str(tmp_path))
    session = await start_session(host, tmp_path, model=faux.model)
    command = host.commands["deploy"]
    assert (command.availability, command.disabled_reason) == ("disabled", "no git repo")
    with pytest.raises(RuntimeError, match="not available: no git repo"):
        await session.prompt("/deploy now")
    import sys

    handle = next(m for n, m in sys.modules.items() if n.endswith("avail") and hasattr(m, "handles")).handles["c"]
    handle.set_availability("hidden")
    assert (command.availability, command.disabled_reason) == ("hidden", None)
    with pytest.raises(ValueError, match="availability is one of"):
        handle.set_availability("sometimes")


async def test_no_extensions_loads_nothing(faux, tmp_path):
    write(ext_dir() / "a.py", recorder_ext("a"))
    host = make_host(faux)
    host.extensions.configure(packages=False, enabled=False)
    assert await host.extensions.load(str(tmp_path)) == [] and host.commands == {}


async def test_a_hung_handler_is_cancelled_gates_fail_closed_and_a_repeat_offender_is_switched_off(faux, tmp_path):
    write(ext_dir() / "slow.py", """
    import asyncio
    calls = []

    def extension(wolli):
        async def hang(event, ctx):
            calls.append(event.type)
            await asyncio.sleep(60)

        wolli.on("tool_call", hang)
        wolli.on("turn_start", hang)
    """)
    host = make_host(faux)
    host.extensions.configure(packages=False)
    await host.extensions.load(str(tmp_path))
    host.handlers.timeout_s = 0.05
    session = await start_session(host, tmp_path, model=faux.model)
    events = recorder(session)
    faux.push([faux_tool_call("ls", {})], "after the block")
    await session.prompt("list")
    blocked = faux.contexts[-1].messages[-1]
    assert blocked.is_error and "blocked" in blocked.content[0].text  # the gate failed closed
    errors = [e for e in events if e.type == "extension_error"]
    assert [e.event for e in errors] == ["turn_start", "tool_call", "turn_start"]
    assert all("timed out after 0.05 s" in e.error for e in errors)
    faux.push("ok")
    await session.prompt("again")
    calls = host.extensions.registry.records[0]
    log = __import__("sys").modules[calls.module_name].calls
    assert log.count("turn_start") == 3  # the third failure switched it off; the fourth turn skipped it
    assert "switched off after 3 failures in a row" in [e for e in events if e.type == "extension_error"][-1].error
    assert host.extensions.infos()[0]["switched_off"] == ["turn_start"]  # what /extensions shows


async def test_a_same_size_save_within_the_same_second_reloads_the_new_code(faux, tmp_path, monkeypatch):
    """Python trusts a cached .pyc whose source has the same mtime (whole seconds) and size;
    extensions are compiled from source so such a save is never missed."""
    import os
    import sys

    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # as on a user's machine
    folder = ext_dir() / "pkg"
    helper = write(folder / "helper.py", "WORD = 'one'\n")
    main = write(folder / "__init__.py", """
    from .helper import WORD

    def extension(wolli):
        wolli.register_command(WORD, handler=lambda args, ctx: None)
    """)
    single = write(ext_dir() / "single.py", """
    def extension(wolli):
        wolli.register_command("aaa", handler=lambda args, ctx: None)
    """)
    host = make_host(faux)
    host.extensions.configure(packages=False)
    await host.extensions.load(str(tmp_path))
    await start_session(host, tmp_path, model=faux.model)
    assert sorted(host.commands) == ["aaa", "one"]
    for path, old, new in ((helper, "one", "two"), (single, "aaa", "bbb")):
        stamp = path.stat()
        path.write_text(path.read_text().replace(old, new))
        os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))  # "within the same second"
    assert main.exists()
    await host.reload()
    assert sorted(host.commands) == ["bbb", "two"]
