"""The small services on ``wolli``: event bus, exec, helpers, logger, settings handle."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

from tests.support.waiting import wait_until
from wolli.ai.types import AssistantMessage, ToolCall, ToolResultMessage, UserMessage
from wolli.config.settings import Settings
from wolli.extensions.api_services import EventBus, Helpers, SettingsHandle, make_logger
from wolli.tools.process import run_command


async def test_the_bus_calls_every_listener_and_reports_a_failing_one() -> None:
    failures: list[tuple[str, str]] = []
    bus = EventBus(on_error=lambda name, exc: failures.append((name, str(exc))))
    got: list[object] = []

    def broken(data: object) -> None:
        raise ValueError("listener broke")

    async def slow(data: object) -> None:
        await asyncio.sleep(0)
        got.append(("async", data))

    bus.on("x", broken)
    off = bus.on("x", got.append)
    bus.on("x", slow)
    bus.emit("x", 1)
    await wait_until(lambda: ("async", 1) in got, 5, "the async listener")
    assert got == [1, ("async", 1)] and failures == [("x", "listener broke")]
    off()
    bus.emit("x", 2)
    await wait_until(lambda: ("async", 2) in got, 5, "the async listener again")
    assert got == [1, ("async", 1), ("async", 2)]


async def test_exec_collects_output_and_kills_the_group_on_timeout(tmp_path: Path) -> None:
    done = await run_command("printf", ["a b"], cwd=str(tmp_path))
    assert (done.stdout, done.code, done.killed) == ("a b", 0, False)
    shell = await run_command("echo out; echo err >&2; exit 3", cwd=str(tmp_path))
    assert (shell.stdout, shell.stderr, shell.code) == ("out\n", "err\n", 3)
    started = time.monotonic()
    hung = await run_command("sleep 30 & sleep 30", cwd=str(tmp_path), timeout=0.2)
    assert hung.killed and time.monotonic() - started < 10


def test_helpers_read_tool_calls_of_any_shape() -> None:
    bash = ToolCall(id="1", name="bash", arguments={"command": "make > build.log && tee out.txt"})
    edit = {"name": "edit", "arguments": {"path": "src/a.py", "edits": []}}
    assert Helpers.shell_command_from_tool_call(bash) == "make > build.log && tee out.txt"
    assert Helpers.shell_command_from_tool_call(edit) is None
    assert Helpers.files_modified_by_tool_call(edit) == ["src/a.py"]
    assert Helpers.files_modified_by_tool_call(bash) == ["build.log", "out.txt"]
    messages = [
        UserMessage(content="go"),
        AssistantMessage(content=[bash], api="x", provider="x", model="m"),
        ToolResultMessage(tool_call_id="1", tool_name="bash", content=[]),
    ]
    [pair] = Helpers.tool_calls_in_messages(messages)
    assert pair["tool_call"] is bash and pair["result"] is messages[2]


def test_the_logger_writes_to_the_agent_log_and_not_to_the_terminal(tmp_path: Path, capsys) -> None:
    logger = make_logger("demo", tmp_path)
    assert not (tmp_path / "logs").exists()  # nothing is created before the first record
    logger.warning("careful: %s", "x")
    for handler in logger.handlers:
        handler.flush()
    text = (tmp_path / "logs" / "extensions.log").read_text()
    assert "WARNING wolli.extension.demo: careful: x" in text
    assert capsys.readouterr() == ("", "") and logger.propagate is False
    assert make_logger("demo", tmp_path) is logger and len(logger.handlers) == 1
    logging.getLogger("wolli.extension.demo").handlers.clear()


def test_the_settings_handle_reads_writes_and_notifies(tmp_path: Path) -> None:
    settings = Settings(global_path=tmp_path / "g.json", agent_path=tmp_path / "a.json")
    handle = SettingsHandle(settings)
    seen: list[object] = []
    handle.subscribe(lambda merged: seen.append(merged.get("myExt")))
    handle.update({"myExt": {"level": 2}})
    assert handle.get("myExt.level") == 2 and '"level": 2' in (tmp_path / "a.json").read_text()
    handle.update({"theme": "light"}, target="global")
    assert '"theme": "light"' in (tmp_path / "g.json").read_text()
    handle.delete("myExt")
    assert handle.get("myExt") is None and seen[0] == {"level": 2}
