"""The read, write and edit tools and the file mutation queue, on real files."""

from __future__ import annotations

import asyncio
import base64
import io
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from wolli.agent.tool import ToolArgumentError, ToolDefinition, ToolResult
from wolli.ai.abort import AbortController, AbortError
from wolli.ai.types import ImageContent, TextContent
from wolli.tools import images
from wolli.tools.edit import create_edit_tool
from wolli.tools.environment import Environment, create_host_environment
from wolli.tools.mutation_queue import (
    active_mutation_queues,
    mutation_queue_key,
    with_file_mutation_queue,
)
from wolli.tools.read import create_read_tool
from wolli.tools.write import create_write_tool

Image = pytest.importorskip("PIL.Image")


@pytest.fixture
def env(tmp_path: Path) -> Environment:
    return create_host_environment(str(tmp_path))


async def run(tool: ToolDefinition, args: dict[str, Any], signal: Any = None) -> ToolResult:
    """Validate like the agent does (prepare_arguments included), then execute."""
    return await tool.execute("call-1", tool.validate(args), signal, None, None)


async def fails(tool: ToolDefinition, args: dict[str, Any]) -> str:
    with pytest.raises(Exception) as info:
        await run(tool, args)
    return str(info.value)


def text_of(result: ToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, TextContent))


async def until(predicate, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0)


# ---------------------------------------------------------------------------- definitions


def test_tools_describe_themselves(env: Environment) -> None:
    read, write, edit = create_read_tool(env), create_write_tool(env), create_edit_tool(env)
    assert [t.name for t in (read, write, edit)] == ["read", "write", "edit"]
    for tool in (read, write, edit):
        assert tool.description and tool.prompt_snippet
        assert tool.prompt_guidelines and all(tool.name in g for g in tool.prompt_guidelines)
    assert set(read.json_schema()["properties"]) == {"path", "offset", "limit"}
    assert read.json_schema()["required"] == ["path"]
    assert set(write.json_schema()["properties"]) == {"path", "content"}
    schema = edit.json_schema()
    assert set(schema["properties"]) == {"path", "edits"}
    assert set(schema["properties"]["edits"]["items"]["properties"]) == {"old_text", "new_text"}
    assert "2000 lines" in read.description and "50KB" in read.description


# ---------------------------------------------------------------------------- read: text


async def test_read_small_file(env: Environment, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    result = await run(create_read_tool(env), {"path": "a.txt"})
    assert text_of(result) == "one\ntwo"
    assert result.details["path"] == str(tmp_path / "a.txt")
    assert result.details["total_lines"] == 2 and result.details["truncation"] is None


async def test_read_10k_lines_in_pages(env: Environment, tmp_path: Path) -> None:
    lines = [f"line {i}" for i in range(1, 10_001)]
    (tmp_path / "big.txt").write_text("\n".join(lines) + "\n")
    read = create_read_tool(env)

    first = await run(read, {"path": "big.txt"})
    body, notice = text_of(first).rsplit("\n\n", 1)
    assert body.split("\n") == lines[:2000]
    assert notice == "[Showing lines 1-2000 of 10000. Use offset=2001 to continue.]"
    assert first.details["truncation"]["output_lines"] == 2000
    assert first.details["total_lines"] == 10_000

    # Following the notices reads the whole file exactly once.
    collected: list[str] = []
    offset = 1
    while True:
        text = text_of(await run(read, {"path": "big.txt", "offset": offset}))
        if text.endswith("to continue.]"):
            text, notice = text.rsplit("\n\n", 1)
            offset = int(notice.rsplit("offset=", 1)[1].split(" ")[0])
            collected.extend(text.split("\n"))
        else:
            collected.extend(text.split("\n"))
            break
    assert collected == lines

    window = await run(read, {"path": "big.txt", "offset": 5000, "limit": 3})
    assert text_of(window) == "line 5000\nline 5001\nline 5002\n\n[4998 more lines in file. Use offset=5003 to continue.]"
    tail = await run(read, {"path": "big.txt", "offset": 9999})
    assert text_of(tail) == "line 9999\nline 10000"


async def test_read_stops_at_50kb_and_says_so(env: Environment, tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_text(("x" * 99 + "\n") * 1000)
    text = text_of(await run(create_read_tool(env), {"path": "wide.txt"}))
    assert text.endswith("[Showing lines 1-512 of 1000 (50.0KB limit). Use offset=513 to continue.]")


async def test_read_one_enormous_line(env: Environment, tmp_path: Path) -> None:
    (tmp_path / "min.js").write_text("short\n" + "y" * 80_000 + "\nafter\n")
    read = create_read_tool(env)
    first = text_of(await run(read, {"path": "min.js"}))
    assert first.endswith("[Showing lines 1-1 of 3 (50.0KB limit). Use offset=2 to continue.]")
    second = text_of(await run(read, {"path": "min.js", "offset": 2}))
    assert "Line 2 of min.js is 78.1KB" in second
    assert "head -c" in second and "sed -n '2p'" in second and "offset=3" in second
    assert "y" * 100 not in second


async def test_read_offset_past_the_end(env: Environment, tmp_path: Path) -> None:
    (tmp_path / "s.txt").write_text("a\nb\nc\n")
    message = await fails(create_read_tool(env), {"path": "s.txt", "offset": 10})
    assert "offset=10 is beyond the end of s.txt, which has 3 lines" in message
    assert "from 1 to 3" in message
    bad = await fails(create_read_tool(env), {"path": "s.txt", "offset": 0})
    assert "offset" in bad  # validation: offsets are 1-based


async def test_read_missing_file_and_directory(env: Environment, tmp_path: Path) -> None:
    read = create_read_tool(env)
    message = await fails(read, {"path": "nope/missing.txt"})
    assert "File not found: nope/missing.txt" in message
    assert str(tmp_path / "nope" / "missing.txt") in message and "find or ls" in message
    (tmp_path / "folder").mkdir()
    assert "is a directory" in (msg := await fails(read, {"path": "folder"})) and "ls" in msg


async def test_read_home_and_at_prefixed_paths(env: Environment, tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])  # a temporary folder (conftest)
    (home / "notes.txt").write_text("from home\n")
    (tmp_path / "here.txt").write_text("from cwd\n")
    read = create_read_tool(env)
    assert text_of(await run(read, {"path": "~/notes.txt"})) == "from home"
    assert text_of(await run(read, {"path": "@here.txt"})) == "from cwd"


async def test_read_crlf_and_bom_show_clean_text(env: Environment, tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"\xef\xbb\xbfalpha\r\nbeta\r\n")
    assert text_of(await run(create_read_tool(env), {"path": "w.txt"})) == "alpha\nbeta"


async def test_read_empty_file(env: Environment, tmp_path: Path) -> None:
    (tmp_path / "e.txt").write_bytes(b"")
    result = await run(create_read_tool(env), {"path": "e.txt"})
    assert text_of(result) == "[e.txt is empty.]" and result.details["total_lines"] == 0


async def test_read_refuses_binary_files(env: Environment, tmp_path: Path) -> None:
    read = create_read_tool(env)
    (tmp_path / "prog.bin").write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4)
    message = await fails(read, {"path": "prog.bin"})
    assert "binary file" in message and "NUL bytes" in message and "xxd" in message
    (tmp_path / "noise.dat").write_bytes(bytes(range(128, 256)) * 8)
    assert "not valid UTF-8" in await fails(read, {"path": "noise.dat"})


async def test_read_shows_a_few_bad_bytes_as_replacement_characters(env: Environment, tmp_path: Path) -> None:
    (tmp_path / "latin.txt").write_bytes(b"caf\xe9 " + b"plain text " * 50 + b"\n")
    text = text_of(await run(create_read_tool(env), {"path": "latin.txt"}))
    assert text.startswith("caf\ufffd plain")
    assert "1 byte of latin.txt are not valid UTF-8" in text


async def test_read_honours_the_abort_signal(env: Environment, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x")
    controller = AbortController()
    controller.abort("user pressed Esc")
    with pytest.raises(AbortError):
        await run(create_read_tool(env), {"path": "a.txt"}, controller.signal)


# ---------------------------------------------------------------------------- read: images


def png_bytes(width: int, height: int, mode: str = "RGB") -> bytes:
    buf = io.BytesIO()
    Image.new(mode, (width, height), (200, 30, 30) if mode == "RGB" else None).save(buf, "PNG")
    return buf.getvalue()


async def test_read_small_png_as_image(env: Environment, tmp_path: Path) -> None:
    data = png_bytes(10, 8)
    (tmp_path / "pic.png").write_bytes(data)
    result = await run(create_read_tool(env), {"path": "pic.png"})
    note, image = result.content
    assert isinstance(note, TextContent) and isinstance(image, ImageContent)
    assert "Read image file pic.png [image/png, 10x8" in note.text
    assert image.mime_type == "image/png" and base64.b64decode(image.data) == data
    assert result.details["resized"] is False and result.details["width"] == 10


async def test_read_detects_images_by_content_not_name(env: Environment, tmp_path: Path) -> None:
    (tmp_path / "no_extension").write_bytes(png_bytes(3, 3))
    result = await run(create_read_tool(env), {"path": "no_extension"})
    assert isinstance(result.content[1], ImageContent)


async def test_read_resizes_a_huge_image(env: Environment, tmp_path: Path) -> None:
    (tmp_path / "wide.png").write_bytes(png_bytes(3000, 1000))
    result = await run(create_read_tool(env), {"path": "wide.png"})
    note, image = result.content
    assert "3000x1000" in note.text and "Resized to 2000x667" in note.text
    with Image.open(io.BytesIO(base64.b64decode(image.data))) as shrunk:
        assert shrunk.size == (2000, 667)
    assert result.details["original_width"] == 3000 and result.details["resized"] is True


async def test_without_pillow_images_are_attached_unresized_with_a_note(
    env: Environment, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = png_bytes(2500, 100)
    (tmp_path / "wide.png").write_bytes(data)
    monkeypatch.setitem(sys.modules, "PIL", None)  # "import PIL" now fails
    result = await run(create_read_tool(env), {"path": "wide.png"})
    note, image = result.content
    assert "2500x100" in note.text and "Pillow is not installed" in note.text
    assert base64.b64decode(image.data) == data
    refused = images.prepare_image(data, "image/png", max_bytes=100)
    assert refused.data is None and "pip install pillow" in (refused.note or "")


def test_prepare_image_shrinks_bytes_and_reads_dimensions() -> None:
    noisy = Image.frombytes("RGB", (400, 400), os.urandom(400 * 400 * 3))
    buf = io.BytesIO()
    noisy.save(buf, "PNG")
    prepared = images.prepare_image(buf.getvalue(), "image/png", max_bytes=60_000)
    assert prepared.resized and prepared.data is not None and len(prepared.data) <= 60_000
    assert prepared.mime_type == "image/jpeg"  # noise does not compress as PNG
    for fmt, mime in (("JPEG", "image/jpeg"), ("GIF", "image/gif"), ("WEBP", "image/webp"), ("PNG", "image/png")):
        out = io.BytesIO()
        Image.new("RGB", (123, 45)).save(out, fmt)
        assert images.image_dimensions(out.getvalue(), mime) == (123, 45), fmt


# ---------------------------------------------------------------------------- write


async def test_write_creates_parents_and_reports_bytes(env: Environment, tmp_path: Path) -> None:
    write = create_write_tool(env)
    result = await run(write, {"path": "deep/er/new.txt", "content": "héllo\n"})
    assert text_of(result) == "Successfully wrote 7 bytes to deep/er/new.txt"
    assert (tmp_path / "deep/er/new.txt").read_bytes() == "héllo\n".encode()
    assert result.details == {"path": str(tmp_path / "deep/er/new.txt"), "bytes": 7, "created": True}
    again = await run(write, {"path": "deep/er/new.txt", "content": "x"})
    assert again.details["created"] is False
    assert (tmp_path / "deep/er/new.txt").read_text() == "x"


async def test_write_refuses_directories_and_file_parents(env: Environment, tmp_path: Path) -> None:
    write = create_write_tool(env)
    (tmp_path / "dir").mkdir()
    assert "is a directory" in await fails(write, {"path": "dir", "content": "x"})
    (tmp_path / "file").write_text("keep")
    assert "is a file, not a folder" in await fails(write, {"path": "file/child.txt", "content": "x"})
    assert (tmp_path / "file").read_text() == "keep"


# ---------------------------------------------------------------------------- edit


async def test_edit_replaces_and_reports_a_diff(env: Environment, tmp_path: Path) -> None:
    target = tmp_path / "m.py"
    target.write_text("a = 1\nb = 2\nc = 3\n")
    result = await run(
        create_edit_tool(env),
        {"path": "m.py", "edits": [{"old_text": "a = 1", "new_text": "a = 10"}, {"old_text": "c = 3", "new_text": "c = 30"}]},
    )
    assert text_of(result) == "Successfully replaced 2 block(s) in m.py."
    assert target.read_text() == "a = 10\nb = 2\nc = 30\n"
    assert result.details["first_changed_line"] == 1
    assert result.details["path"] == str(target)
    assert "-a = 1\n+a = 10\n" in result.details["diff"] and "+c = 30\n" in result.details["diff"]


async def test_edit_round_trips_crlf_and_bom(env: Environment, tmp_path: Path) -> None:
    target = tmp_path / "win.txt"
    target.write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\nthree\r\n")
    await run(create_edit_tool(env), {"path": "win.txt", "edits": [{"old_text": "two\nthree", "new_text": "2\n3\n4"}]})
    assert target.read_bytes() == b"\xef\xbb\xbfone\r\n2\r\n3\r\n4\r\n"


async def test_edit_keeps_invalid_bytes_elsewhere(env: Environment, tmp_path: Path) -> None:
    target = tmp_path / "old.txt"
    target.write_bytes(b"caf\xe9\nvalue = 1\n")
    await run(create_edit_tool(env), {"path": "old.txt", "edits": [{"old_text": "value = 1", "new_text": "value = 2"}]})
    assert target.read_bytes() == b"caf\xe9\nvalue = 2\n"


async def test_edit_fuzzy_match_on_disk(env: Environment, tmp_path: Path) -> None:
    target = tmp_path / "doc.md"
    target.write_text("Title — “quoted”  \nnext line\n")
    await run(create_edit_tool(env), {"path": "doc.md", "edits": [{"old_text": 'Title - "quoted"\nnext', "new_text": "New\nnext"}]})
    assert target.read_text() == "New\nnext line\n"


async def test_edit_failures_leave_the_file_untouched(env: Environment, tmp_path: Path) -> None:
    target = tmp_path / "f.py"
    original = b"x = 1\ny = 2\nx = 1\n"
    target.write_bytes(original)
    edit = create_edit_tool(env)
    message = await fails(edit, {"path": "f.py", "edits": [{"old_text": "y = 2", "new_text": "y = 3"}, {"old_text": "x = 1", "new_text": "x = 0"}]})
    assert "edits[1].old_text matches 2 places in f.py" in message and "lines 1, 3" in message
    message = await fails(edit, {"path": "f.py", "edits": [{"old_text": "y = 5", "new_text": "z"}]})
    assert "Could not find old_text in f.py" in message and "at line 2" in message
    assert "identical" in await fails(edit, {"path": "f.py", "edits": [{"old_text": "y = 2", "new_text": "y = 2"}]})
    assert target.read_bytes() == original
    missing = await fails(edit, {"path": "ghost.py", "edits": [{"old_text": "a", "new_text": "b"}]})
    assert "File not found: ghost.py" in missing and "use write" in missing
    empty = await fails(edit, {"path": "f.py", "edits": []})
    assert isinstance(empty, str) and "edits" in empty


async def test_edit_accepts_the_older_single_edit_shape(env: Environment, tmp_path: Path) -> None:
    (tmp_path / "o.txt").write_text("old words\n")
    edit = create_edit_tool(env)
    await run(edit, {"path": "o.txt", "oldText": "old", "newText": "new"})
    await run(edit, {"path": "o.txt", "old_text": "words", "new_text": "things"})
    assert (tmp_path / "o.txt").read_text() == "new things\n"
    with pytest.raises(ToolArgumentError):
        edit.validate({"path": "o.txt", "old_text": "half an edit"})


async def test_edit_refuses_binary_files(env: Environment, tmp_path: Path) -> None:
    (tmp_path / "b.bin").write_bytes(b"ab\x00cd")
    assert "binary file" in await fails(create_edit_tool(env), {"path": "b.bin", "edits": [{"old_text": "ab", "new_text": "x"}]})


# ---------------------------------------------------------------------------- the queue


def yielding_env(env: Environment, hops: int = 20) -> Environment:
    """An environment whose reads hand control to the event loop before returning, so that
    concurrent read-modify-write sequences really interleave unless they are queued. The
    bytes are read at once (no thread), which makes the interleaving deterministic."""

    async def read_file(path: str) -> bytes:
        data = Path(path).read_bytes()
        for _ in range(hops):
            await asyncio.sleep(0)
        return data

    return env.derive(read_file=read_file)


async def test_unqueued_read_modify_write_really_loses_updates(env: Environment, tmp_path: Path) -> None:
    """Control experiment: with this environment an unqueued mutation does race."""
    slow = yielding_env(env)
    target = tmp_path / "race.txt"
    target.write_text("a\nb\n")

    async def naive(old: str, new: str) -> None:
        text = (await slow.read_file(str(target))).decode()
        await slow.write_file(str(target), text.replace(old, new))

    await asyncio.gather(naive("a", "A"), naive("b", "B"))
    assert target.read_text() != "A\nB\n"


async def test_concurrent_edits_to_one_file_both_land(env: Environment, tmp_path: Path) -> None:
    slow = yielding_env(env)
    target = tmp_path / "race.txt"
    target.write_text("a\nb\nc\n")
    edit = create_edit_tool(slow)
    results = await asyncio.gather(
        run(edit, {"path": "race.txt", "edits": [{"old_text": "a", "new_text": "A"}]}),
        run(edit, {"path": "race.txt", "edits": [{"old_text": "b", "new_text": "B"}]}),
        run(edit, {"path": str(target), "edits": [{"old_text": "c", "new_text": "C"}]}),
    )
    assert all(text_of(r).startswith("Successfully replaced 1 block(s)") for r in results)
    assert target.read_text() == "A\nB\nC\n"
    assert active_mutation_queues() == 0


async def test_symlink_alias_shares_the_queue(env: Environment, tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("one\ntwo\n")
    link = tmp_path / "alias.txt"
    link.symlink_to(real)
    assert mutation_queue_key(str(link)) == mutation_queue_key(str(real))

    order: list[str] = []
    release = asyncio.Event()

    async def holder() -> None:
        order.append("first start")
        await release.wait()
        order.append("first end")

    first = asyncio.create_task(with_file_mutation_queue(str(real), holder))
    second = asyncio.create_task(with_file_mutation_queue(str(link), lambda: order.append("second")))
    other = asyncio.create_task(with_file_mutation_queue(str(tmp_path / "other.txt"), lambda: "free"))
    assert await other == "free"  # another file is not held up
    await until(lambda: order == ["first start"])
    for _ in range(20):
        await asyncio.sleep(0)
    assert order == ["first start"]  # the alias waits for the real path's holder
    release.set()
    await asyncio.gather(first, second)
    assert order == ["first start", "first end", "second"]
    assert active_mutation_queues() == 0

    # The same through the tools: edits via the alias and via the real path both land.
    edit = create_edit_tool(yielding_env(env))
    await asyncio.gather(
        run(edit, {"path": "alias.txt", "edits": [{"old_text": "one", "new_text": "1"}]}),
        run(edit, {"path": "real.txt", "edits": [{"old_text": "two", "new_text": "2"}]}),
    )
    assert real.read_text() == "1\n2\n" and link.is_symlink()


async def test_queue_runs_sync_functions_and_survives_errors(tmp_path: Path) -> None:
    path = str(tmp_path / "new-file.txt")  # does not exist: keyed by its absolute path
    assert mutation_queue_key(path) == os.path.realpath(path)

    def boom() -> None:
        raise RuntimeError("broken mutation")

    with pytest.raises(RuntimeError, match="broken mutation"):
        await with_file_mutation_queue(path, boom)
    assert await with_file_mutation_queue(path, lambda: 42) == 42

    async def later() -> str:
        return "async result"

    assert await with_file_mutation_queue(path, later) == "async result"
    assert active_mutation_queues() == 0


async def test_write_and_edit_share_the_queue(env: Environment, tmp_path: Path) -> None:
    slow = yielding_env(env)
    target = tmp_path / "shared.txt"
    target.write_text("start\n")
    write, edit = create_write_tool(slow), create_edit_tool(slow)
    # Queued in call order: the edit reads only once the write has landed. Unqueued, the
    # edit would read the file before the write and not find "written".
    await asyncio.gather(
        run(write, {"path": "shared.txt", "content": "written\n"}),
        run(edit, {"path": "shared.txt", "edits": [{"old_text": "written", "new_text": "edited"}]}),
    )
    assert target.read_text() == "edited\n"
