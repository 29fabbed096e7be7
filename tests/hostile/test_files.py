"""Files that never end, never open or never stop: devices, FIFOs, huge inputs.

Every case runs ``wolli -p`` as a subprocess under the harness' memory and time limits; the
scripted model asks for the hostile operation, then answers. Each asserts the run ended in
time within its memory, that the refusal reached the model (the tool result) and the
person (the answer, stderr), and that the session kept every entry.
"""

from __future__ import annotations

import json
import os

import pytest

from tests.support.openai_chat import text_answer, tool_call_answer

from .conftest import MODEL, Project
from .harness import assert_bounded

# Small enough that the old endless read of /dev/zero died well inside the time limit.
MEMORY_MB = 400


def tool_result(project: Project, index: int = -1) -> dict:
    results = [m for m in project.messages() if m["role"] == "toolResult"]
    return results[index]


def run_tool(project: Project, tool: str, args: dict, *, seconds: float = 30) -> tuple:
    project.server.push(tool_call_answer(tool, args), text_answer("I could not do that."))
    result = project.run(*MODEL, "-p", f"use {tool}", seconds=seconds, memory_mb=MEMORY_MB)
    assert_bounded(result, seconds=seconds, memory_mb=MEMORY_MB)
    assert result.returncode == 0, result.output
    assert "I could not do that." in result.stdout
    return result, tool_result(project)


def text(message: dict) -> str:
    return "".join(block.get("text", "") for block in message["content"])


@pytest.mark.parametrize("tool,args", [
    ("read", {"path": "/dev/zero"}),
    ("grep", {"pattern": "x", "path": "/dev/zero"}),
    ("read", {"path": "/dev/urandom"}),
])
def test_endless_devices_are_refused_unread(hostile, tool, args):
    _, result = run_tool(hostile, tool, args)
    assert result["isError"] is True
    assert "a character device, not a regular file" in text(result)
    assert hostile.messages()[0]["role"] == "user"  # the whole exchange is on disk


@pytest.mark.parametrize("tool,args", [
    ("read", {"path": "pipe"}),
    ("edit", {"path": "pipe", "edits": [{"old_text": "a", "new_text": "b"}]}),
    ("write", {"path": "pipe", "content": "hello"}),
    ("grep", {"pattern": "x", "path": "pipe"}),
])
def test_fifos_are_refused_without_blocking(hostile, tool, args):
    os.mkfifo(hostile.root / "pipe")
    _, result = run_tool(hostile, tool, args, seconds=20)
    assert result["isError"] is True
    assert "a FIFO (named pipe), not a regular file" in text(result)


def test_a_symlink_to_a_device_is_refused_like_the_device(hostile):
    (hostile.root / "zeros.txt").symlink_to("/dev/zero")
    _, result = run_tool(hostile, "read", {"path": "zeros.txt"})
    assert "a character device" in text(result)


def test_an_attached_fifo_is_refused_at_once(hostile):
    os.mkfifo(hostile.root / "pipe")
    result = hostile.run(*MODEL, "-p", "@pipe", "what is this", seconds=20, memory_mb=MEMORY_MB)
    assert_bounded(result, seconds=20, memory_mb=MEMORY_MB)
    assert result.returncode == 1
    assert "@pipe: not a regular file" in result.stderr
    assert hostile.server.requests == []


def test_a_fifo_named_as_the_session_is_refused_at_once(hostile):
    os.mkfifo(hostile.root / "session.jsonl")
    result = hostile.run(*MODEL, "--session", "session.jsonl", "-p", "hi", seconds=20, memory_mb=MEMORY_MB)
    assert_bounded(result, seconds=20, memory_mb=MEMORY_MB)
    assert result.returncode != 0
    assert "a FIFO (named pipe), not a regular file" in result.stderr


def test_a_fifo_as_agents_md_does_not_hold_the_start(hostile):
    """A repository's AGENTS.md is read at start-up: a FIFO there used to block for ever."""
    os.mkfifo(hostile.root / "AGENTS.md")
    hostile.server.push(text_answer("hello"))
    result = hostile.run(*MODEL, "-p", "hi", seconds=20, memory_mb=MEMORY_MB)
    assert_bounded(result, seconds=20, memory_mb=MEMORY_MB)
    assert result.returncode == 0, result.output
    assert "AGENTS.md" in result.stderr and "not a regular file" in result.stderr


def test_huge_piped_input_is_capped_with_a_note(hostile):
    hostile.server.push(text_answer("seen"))
    data = b"0123456789abcdef\n" * (20 * 1024 * 1024 // 17)  # 20 MB
    result = hostile.run(*MODEL, "-p", "summarise", stdin=data, seconds=40, memory_mb=MEMORY_MB)
    assert_bounded(result, seconds=40, memory_mb=MEMORY_MB)
    assert result.returncode == 0, result.output
    assert "piped input is over 8 MB: only its first 8 MB joins the prompt" in result.stderr
    sent = hostile.server.requests[0].json["messages"][-1]["content"]
    assert 8 * 1024 * 1024 - 32 < len(sent) < 8 * 1024 * 1024 + 64
    assert hostile.messages()[0]["content"] == sent  # what was sent is what was stored


def test_invalid_utf8_in_argv_and_stdin_is_replaced_and_said(hostile):
    hostile.server.push(text_answer("ok"))
    result = hostile.run(*MODEL, "-p", os.fsdecode(b"argv \xff\xfe end"), stdin=b"stdin \xc3\x28 end",
                         seconds=20, memory_mb=MEMORY_MB)
    assert_bounded(result, seconds=20, memory_mb=MEMORY_MB)
    assert result.returncode == 0, result.output
    assert "an argument is not valid UTF-8" in result.stderr
    assert "piped input is not valid UTF-8" in result.stderr
    sent = hostile.server.requests[0].json["messages"][-1]["content"]
    assert sent == "stdin \ufffd( end\n\nargv \ufffd\ufffd end"
    assert hostile.messages()[0]["content"] == sent


def test_read_of_a_proc_file_is_bounded(hostile):
    """/proc files report size 0: the size check alone lets them through, the read cap holds."""
    _, result = run_tool(hostile, "read", {"path": "/proc/self/status"})
    assert result["isError"] is False
    assert "Name:" in text(result)


def test_session_folders_and_files_are_private_from_the_start(hostile):
    hostile.server.push(text_answer("hello"))
    result = hostile.run(*MODEL, "-p", "hi", seconds=20)
    assert result.returncode == 0, result.output
    session = hostile.sessions()[0]
    folder = session.parent
    for path in (folder, folder.parent, folder.parent.parent):  # <slug>/, sessions/, agents/default/
        assert path.stat().st_mode & 0o777 == 0o700, path
    assert session.stat().st_mode & 0o777 == 0o600


def test_an_auth_json_readable_by_others_is_reported_and_tightened(hostile):
    auth = hostile.home / "auth.json"
    auth.write_text(json.dumps({"other": {"type": "api_key", "key": "sk-other-0123456789"}}))
    auth.chmod(0o644)
    hostile.server.push(text_answer("hello"))
    result = hostile.run(*MODEL, "-p", "hi", seconds=20)
    assert result.returncode == 0, result.output
    assert f"{auth} was readable by others (mode 0644); its mode is now 0600" in result.stderr
    assert auth.stat().st_mode & 0o777 == 0o600


def test_an_rpc_line_that_never_ends_is_skipped_in_bounded_memory(hostile):
    """A client writing 200 MB without a newline, then a real command: answered in order."""
    megabyte = b"x" * (1024 * 1024)
    stdin = [*[megabyte] * 200, b'\n{"type": "get_state", "id": "after"}\n']
    result = hostile.run("--mode", "rpc", *MODEL, stdin=stdin, seconds=60, memory_mb=MEMORY_MB)
    assert_bounded(result, seconds=60, memory_mb=MEMORY_MB)
    records = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    responses = [r for r in records if r.get("type") == "response"]
    assert responses[0]["success"] is False and "longer than 64 MB; it was skipped" in responses[0]["error"]
    assert responses[1]["id"] == "after" and responses[1]["success"] is True
