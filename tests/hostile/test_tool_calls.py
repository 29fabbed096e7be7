"""What a model can send as tool calls: huge edits, thousands of arguments, deep nesting,
invalid UTF-8 in what a tool returns, an extension tool returning far too much."""

from __future__ import annotations

import json

from tests.support.loopback import sse_reply
from tests.support.openai_chat import text_answer, tool_call_answer

from .conftest import MODEL, Project
from .harness import assert_bounded

MEMORY_MB = 400


def call_then_answer(project: Project, name: str, arguments: dict | str, *, seconds: float = 30, memory_mb=MEMORY_MB,
                     args: tuple[str, ...] = ()):
    reply = tool_call_answer(name, arguments) if isinstance(arguments, dict) else raw_tool_call(name, arguments)
    project.server.push(reply, text_answer("done"))
    result = project.run(*MODEL, *args, "-p", f"use {name}", seconds=seconds, memory_mb=memory_mb)
    assert_bounded(result, seconds=seconds, memory_mb=memory_mb)
    assert result.returncode == 0, result.output
    assert "done" in result.stdout
    return result


def raw_tool_call(name: str, arguments_json: str):
    """A tool call whose arguments are sent as given (not re-encoded), in 4 KB deltas."""
    def chunk(delta: dict, finish: str | None = None) -> str:
        return "data: " + json.dumps({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}) + "\n\n"

    pieces = [chunk({"role": "assistant"}),
              chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                     "function": {"name": name, "arguments": ""}}]})]
    for start in range(0, len(arguments_json), 4096):
        part = arguments_json[start:start + 4096]
        pieces.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": part}}]}))
    pieces += [chunk({}, "tool_calls"), "data: [DONE]\n\n"]
    return sse_reply("".join(pieces))


def results(project: Project) -> list[dict]:
    return [m for m in project.messages() if m["role"] == "toolResult"]


def text(message: dict) -> str:
    return "".join(block.get("text", "") for block in message["content"])


def test_an_edit_of_a_huge_one_line_file_keeps_a_summary_not_the_diff(hostile):
    (hostile.root / "big.js").write_text("x = 1; " * (10 * 1024 * 1024 // 7) + "MARKER")
    result = call_then_answer(hostile, "edit", {"path": "big.js", "edits": [{"old_text": "MARKER", "new_text": "DONE"}]},
                              args=("--mode", "json"))
    assert (hostile.root / "big.js").read_text().endswith("DONE")
    assert len(result.stdout) < 2 * 1024 * 1024, f"{len(result.stdout)} bytes of json events"
    session = hostile.sessions()[0]
    assert session.stat().st_size < 1024 * 1024
    details = results(hostile)[0]["details"]
    assert details["diff_truncated"] is True and details["lines_added"] == 1 and details["lines_removed"] == 1
    assert details["diff"].startswith("(diff not kept: 20.0 MB, over the 64 KB limit; 1 line removed, 1 added)")


def test_an_edit_whose_text_is_missing_from_a_huge_file_is_quick_and_small(hostile):
    (hostile.root / "big.js").write_text("x = 1; " * (10 * 1024 * 1024 // 7))
    call_then_answer(hostile, "edit", {"path": "big.js", "edits": [{"old_text": "nowhere", "new_text": "x"}]},
                     seconds=20, memory_mb=300)
    assert "Could not find old_text in big.js" in text(results(hostile)[0])


def test_ten_thousand_arguments_are_refused_or_ignored_quickly(hostile):
    arguments = {f"arg{i}": i for i in range(10_000)}
    arguments["path"] = "a.txt"
    (hostile.root / "a.txt").write_text("hello\n")
    call_then_answer(hostile, "read", arguments)
    assert "hello" in text(results(hostile)[0])


def test_deeply_nested_arguments_are_an_error_not_a_crash(hostile):
    depth = 100_000
    nested = '{"path": "a.txt", "deep": ' + "[" * depth + "]" * depth + "}"
    (hostile.root / "a.txt").write_text("hello\n")
    call_then_answer(hostile, "read", nested, seconds=40)
    result = results(hostile)[0]
    assert result["isError"] is True


def test_invalid_utf8_in_tool_output_is_replaced_everywhere(hostile):
    (hostile.root / "bad.txt").write_bytes(b"good line\nbad \xff\xfe bytes\n")
    call_then_answer(hostile, "bash", {"command": "cat bad.txt; printf 'tail \\x80\\n'"})
    output = text(results(hostile)[0])
    assert "bad \ufffd\ufffd bytes" in output and "tail \ufffd" in output
    sent = json.dumps(hostile.server.requests[1].json)  # what went back to the model
    assert "\\udc" not in sent


EXTENSION = '''
def extension(wolli):
    def flood(tool_call_id, params, signal, on_update, ctx):
        return {"content": [{"type": "text", "text": "x" * (50 * 1024 * 1024)}], "details": {"blob": "y" * (20 * 1024 * 1024)}}
    wolli.register_tool({"name": "flood", "description": "Return a lot.", "parameters": {"type": "object"},
                         "execute": flood})
'''


def test_an_extension_tool_returning_far_too_much_is_capped(hostile):
    (hostile.root / "flood.py").write_text(EXTENSION)
    models = json.loads((hostile.home / "models.json").read_text())
    models["providers"]["local"]["models"][0]["contextWindow"] = 400_000  # room for the capped result
    (hostile.home / "models.json").write_text(json.dumps(models))
    call_then_answer(hostile, "flood", {}, args=("-e", "flood.py"), memory_mb=800, seconds=40)
    result = results(hostile)[0]
    assert len(text(result)) < 130 * 1024
    assert "[tool output cut at 128 KB of 50.0 MB" in text(result)
    assert result["details"] == {"truncated": "details of 20.0 MB were not kept (limit 1.0 MB)"}
    assert hostile.sessions()[0].stat().st_size < 2 * 1024 * 1024
    sent = hostile.server.requests[1].body
    assert len(sent) < 2 * 1024 * 1024


def test_an_image_that_claims_too_many_pixels_is_refused_not_decoded(hostile):
    """A decompression bomb: a small PNG whose header claims 12000x12000 pixels."""
    import struct
    import zlib

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    side = 12_000
    rows = zlib.compressobj(9)
    packed = b"".join(rows.compress(b"\0" * (side + 1)) for _ in range(side)) + rows.flush()
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 0, 0, 0, 0))
           + chunk(b"IDAT", packed) + chunk(b"IEND", b""))
    (hostile.root / "bomb.png").write_bytes(png)
    call_then_answer(hostile, "read", {"path": "bomb.png"}, memory_mb=500)
    result = results(hostile)[0]
    assert result["isError"] is True
    assert "The image is 12000x12000 pixels, more than the 50 megapixels Wolli decodes to shrink it." \
        in text(result)
