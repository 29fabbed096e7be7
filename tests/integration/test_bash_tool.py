"""The built-in bash tool against real shells: results, errors, streaming, truncation."""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
import tracemalloc

import pytest

from tests.support.waiting import wait_until
from wolli.agent.tool import ToolArgumentError, ToolResult
from wolli.ai.abort import AbortController
from wolli.tools.bash import (
    BashSpawnContext,
    BashToolDetails,
    BashToolError,
    create_bash_tool,
)
from wolli.tools.environment import create_host_environment
from wolli.tools.params import BashParams


@pytest.fixture(autouse=True)
def temp_dir(tmp_path, monkeypatch):
    """Full-output files land in a per-test folder instead of the real /tmp."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


@pytest.fixture
def work(tmp_path):
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


@pytest.fixture
def tool(work):
    return create_bash_tool(create_host_environment(str(work)))


async def run(tool, command: str, timeout: float | None = None, signal=None, updates=None) -> ToolResult:
    params = tool.validate({"command": command, **({"timeout": timeout} if timeout is not None else {})})
    on_update = updates.append if updates is not None else None
    return await tool.execute("call-1", params, signal, on_update, None)



# ---------------------------------------------------------------------------- definition


def test_definition_describes_limits_and_parameters(tool):
    assert tool.name == "bash"
    assert "2000 lines" in tool.description and "50.0KB" in tool.description
    assert tool.prompt_snippet
    assert any("2000 lines" in g for g in tool.prompt_guidelines)
    schema = tool.json_schema()
    assert set(schema["properties"]) == {"command", "timeout"}
    assert schema["required"] == ["command"]
    with pytest.raises(ToolArgumentError):
        tool.validate({"timeout": 3})
    assert isinstance(tool.validate({"command": "ls"}), BashParams)


# ---------------------------------------------------------------------------- results


async def test_success_returns_output_and_details(tool, work):
    result = await run(tool, "pwd; echo err >&2")
    assert result.text() == f"{work}\nerr\n"
    assert isinstance(result.details, BashToolDetails)
    assert result.details.exit_code == 0
    assert result.details.truncation is None and result.details.full_output_path is None
    assert result.details.to_json_dict() == {"exitCode": 0}


async def test_empty_output_says_so(tool):
    result = await run(tool, "true")
    assert result.text() == "(no output)"


async def test_nonzero_exit_raises_with_output(tool):
    with pytest.raises(BashToolError) as info:
        await run(tool, "echo partial work; exit 3")
    assert str(info.value) == "partial work\n\nCommand exited with code 3"
    assert info.value.details.exit_code == 3


async def test_nonzero_exit_without_output(tool):
    with pytest.raises(BashToolError, match=r"^Command exited with code 2$"):
        await run(tool, "exit 2")


async def test_timeout_raises_with_output_so_far(tool):
    started = time.monotonic()
    with pytest.raises(BashToolError) as info:
        await run(tool, "echo before; sleep 30", timeout=0.5)
    assert time.monotonic() - started < 5
    assert str(info.value) == "before\n\nCommand timed out after 0.5 seconds"
    assert info.value.details.exit_code is None


async def test_abort_raises_with_output_so_far(tool):
    controller = AbortController()
    updates: list[ToolResult] = []
    task = asyncio.create_task(run(tool, "echo ready; sleep 30", signal=controller.signal, updates=updates))
    await wait_until(lambda: any("ready" in u.text() for u in updates), what="live output")
    controller.abort()
    with pytest.raises(BashToolError) as info:
        await asyncio.wait_for(task, 5)
    assert str(info.value) == "ready\n\nCommand aborted"


async def test_utf8_split_across_chunks_is_decoded_whole(tool):
    updates: list[ToolResult] = []
    # The two bytes of "é" arrive in separate writes, with time in between.
    result = await run(tool, r"printf '\303'; sleep 0.2; printf '\251 ok\n'", updates=updates)
    assert result.text() == "é ok\n"
    assert all("\ufffd" not in u.text() for u in updates)


async def test_invalid_utf8_is_replaced_not_fatal(tool):
    result = await run(tool, r"printf 'a\377b\n'")
    assert result.text() == "a\ufffdb\n"


async def test_live_updates_are_throttled_tails(tool):
    updates: list[ToolResult] = []
    stamps: list[float] = []

    def record(update: ToolResult) -> None:
        stamps.append(time.monotonic())
        updates.append(update)

    class Recorder(list):
        def append(self, item):  # run() passes updates.append as on_update
            record(item)

    script = "for i in $(seq 1 60); do echo line $i; sleep 0.01; done"
    result = await run(tool, script, updates=Recorder())
    assert result.text().endswith("line 60\n")
    assert 2 <= len(updates) < 60, "one update per output chunk would mean no throttling"
    gaps = [b - a for a, b in zip(stamps, stamps[1:], strict=False)]
    assert min(gaps) >= 0.08
    assert all(isinstance(u.details, BashToolDetails) for u in updates)
    texts = [u.text() for u in updates]
    assert texts[0].startswith("line 1\n")
    assert all(later.startswith(earlier) for earlier, later in zip(texts, texts[1:], strict=False))


# ---------------------------------------------------------------------------- truncation


async def test_many_lines_keep_tail_and_save_full_output(tool, temp_dir):
    result = await run(tool, "seq 1 5000")
    text = result.text()
    body, notice = text.rsplit("\n\n", 1)
    assert body.splitlines() == [str(i) for i in range(3001, 5001)]
    details = result.details
    assert details.truncation.truncated_by == "lines"
    assert details.truncation.total_lines == 5000
    path = details.full_output_path
    assert os.path.dirname(path) == str(temp_dir)
    assert os.path.basename(path).startswith("wolli-bash-") and path.endswith(".log")
    assert notice == f"[Showing lines 3001-5000 of 5000. Full output: {path}]"
    with open(path) as fh:
        assert fh.read() == "".join(f"{i}\n" for i in range(1, 5001))


async def test_long_lines_hit_the_byte_limit(tool):
    script = f"{sys.executable} -c \"import sys; [print(str(i).zfill(999)) for i in range(300)]\""
    result = await run(tool, script)
    body, notice = result.text().rsplit("\n\n", 1)
    lines = body.splitlines()
    assert lines[-1] == "299".zfill(999)
    assert len(body.encode()) <= 50 * 1024
    start = 300 - len(lines) + 1
    assert notice == (
        f"[Showing lines {start}-300 of 300 (50.0KB limit). Full output: {result.details.full_output_path}]"
    )
    assert result.details.truncation.truncated_by == "bytes"


async def test_one_huge_line_shows_its_end(tool):
    result = await run(tool, "head -c 200000 /dev/zero | tr '\\0' a; echo")
    body, notice = result.text().rsplit("\n\n", 1)
    assert set(body.strip()) == {"a"} and len(body.strip()) == 50 * 1024
    path = result.details.full_output_path
    assert notice == f"[Showing last 50.0KB of line 1 (line is 195.3KB). Full output: {path}]"
    assert result.details.truncation.last_line_partial
    assert os.path.getsize(path) == 200001


async def test_output_exactly_at_the_limit_is_not_truncated(tool, temp_dir):
    result = await run(tool, "head -c 51200 /dev/zero | tr '\\0' a; echo")
    assert result.details.truncation is None and result.details.full_output_path is None
    assert result.text().rstrip("\n") == "a" * 51200
    assert os.listdir(temp_dir) == [], "a temp file written early is removed when nothing was cut"


async def test_failure_with_big_output_still_names_the_file(tool):
    with pytest.raises(BashToolError) as info:
        await run(tool, "seq 1 3000; exit 1")
    message = str(info.value)
    path = info.value.details.full_output_path
    assert message.endswith(f"[Showing lines 1001-3000 of 3000. Full output: {path}]\n\nCommand exited with code 1")
    assert os.path.getsize(path) == len("".join(f"{i}\n" for i in range(1, 3001)))


async def test_ten_megabytes_complete_quickly_in_bounded_memory(tool):
    tracemalloc.start()
    try:
        result = await asyncio.wait_for(run(tool, "yes | head -c 10000000"), 30)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5 * 1024 * 1024, f"peak {peak} bytes: output is being held in memory"
    path = result.details.full_output_path
    assert os.path.getsize(path) == 10_000_000
    with open(path, "rb") as fh:
        assert fh.read() == b"y\n" * 5_000_000
    body, notice = result.text().rsplit("\n\n", 1)
    assert body == "y\n" * 1999 + "y"
    assert notice == f"[Showing lines 4998001-5000000 of 5000000. Full output: {path}]"
    assert result.details.truncation.total_bytes == 10_000_000


async def test_the_full_output_file_stops_at_its_limit(tool, monkeypatch):
    """A command that prints for ever must not fill the disk: the file keeps its first part."""
    import wolli.tools.bash as bash_module

    monkeypatch.setattr(bash_module, "FULL_OUTPUT_LIMIT", 1_000_000)
    result = await asyncio.wait_for(run(tool, "yes | head -c 3000000"), 30)
    path = result.details.full_output_path
    assert os.path.getsize(path) == 1_000_000
    assert result.details.truncation.total_bytes == 3_000_000  # still counted whole
    notice = result.text().rsplit("\n\n", 1)[1]
    assert notice == ("[Showing lines 1498001-1500000 of 1500000. Full output, its first 976.6KB only "
                      f"(the file stops at that limit): {path}]")


# ---------------------------------------------------------------------------- seams


async def test_spawn_hook_rewrites_command_cwd_and_env(tmp_path, work):
    profile = tmp_path / "profile.sh"
    profile.write_text("export GREETING=hello\n")
    other = tmp_path / "other"
    other.mkdir()
    seen: list[BashSpawnContext] = []

    def hook(context: BashSpawnContext) -> BashSpawnContext:
        seen.append(context)
        return BashSpawnContext(
            command=f"source '{profile}'\n{context.command}",
            cwd=str(other),
            env={**context.env, "CI": "1"},
        )

    tool = create_bash_tool(create_host_environment(str(work)), spawn_hook=hook)
    result = await run(tool, 'echo "$GREETING $CI"; pwd')
    assert result.text() == f"hello 1\n{other}\n"
    assert seen[0].cwd == str(work) and "PATH" in seen[0].env


async def test_async_spawn_hook_returning_a_dict(work):
    async def hook(context: BashSpawnContext):
        return {"command": context.command.replace("shout", "SHOUT")}

    tool = create_bash_tool(create_host_environment(str(work)), spawn_hook=hook)
    result = await run(tool, "echo shout")
    assert result.text() == "SHOUT\n"


async def test_spawn_hook_bad_return_is_a_clear_error(work):
    tool = create_bash_tool(create_host_environment(str(work)), spawn_hook=lambda c: 42)
    with pytest.raises(TypeError, match="spawn_hook returned int"):
        await run(tool, "echo hi")


async def test_wrapped_environment_exec_is_used(work, tmp_path):
    profile = tmp_path / "profile.sh"
    profile.write_text("alias_target=from-profile\n")
    host = create_host_environment(str(work))
    env = host.derive(exec=lambda command, cwd, options: host.exec(f"source '{profile}'\n{command}", cwd, options))
    result = await run(create_bash_tool(env), "echo $alias_target")
    assert result.text() == "from-profile\n"


async def test_output_grown_by_replacement_characters_is_still_saved(tool):
    # 20,000 invalid bytes decode to 60,000 bytes of U+FFFD: over the limit only after decoding.
    result = await run(tool, "head -c 20000 /dev/zero | tr '\\0' '\\377'")
    path = result.details.full_output_path
    assert path is not None and os.path.getsize(path) == 20000
    assert result.text().endswith(f"Full output: {path}]")


async def test_unwritable_temp_dir_degrades_to_a_notice(tool, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "missing"))
    result = await run(tool, "seq 1 3000")
    assert result.details.full_output_path is None
    assert result.text().endswith("[Showing lines 1001-3000 of 3000. Full output could not be saved: No such file or directory]")
