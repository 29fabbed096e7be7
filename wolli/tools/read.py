"""The built-in ``read`` tool: text files in pages, images as attachments.

Output is capped (2000 lines / 50KB, whichever first) and every cut says exactly how to
continue, because a model that cannot tell where a page ended re-reads or guesses. The
small file checks here (missing path, directory, binary content) are shared with ``write``
and ``edit`` so the three tools word their errors alike.
"""

from __future__ import annotations

import asyncio
import base64
import shlex
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from ..agent.tool import OnUpdate, ToolDefinition, ToolResult
from ..ai.abort import AbortError, AbortSignal
from ..ai.types import ImageContent, TextContent
from ..base.safe_files import file_kind
from .builtin_parameters import builtin_parameters
from .cards import CARDS
from .environment import FILE_READ_LIMIT, Environment, FileStat
from .images import MAX_IMAGE_BYTES, MAX_IMAGE_DIMENSION, prepare_image
from .truncate import DEFAULT_MAX_BYTES, format_size, split_lines, truncate_head

if TYPE_CHECKING:  # the models load with pydantic on the tool's first call (.params)
    from .params import ReadParams


# Reading loads the whole file; past this size bash (sed/head/tail) is the better tool.
MAX_READ_BYTES = FILE_READ_LIMIT
# Invalid UTF-8 up to this share of the bytes is shown as U+FFFD instead of refusing the file.
_MAX_INVALID_SHARE = 0.01


# ---------------------------------------------------------------------------- shared checks


def check_abort(signal: AbortSignal | None) -> None:
    if signal is not None and getattr(signal, "aborted", False):
        raise AbortError(getattr(signal, "reason", None))


async def stat_existing_file(env: Environment, abs_path: str, shown: str, missing_hint: str) -> FileStat:
    """The stat of a regular file, or an error that says what to do instead."""
    try:
        st = await env.stat(abs_path)
    except (FileNotFoundError, NotADirectoryError):
        raise FileNotFoundError(
            f"File not found: {shown} (resolved to {abs_path}). {missing_hint}"
        ) from None
    except PermissionError:
        raise PermissionError(f"Permission denied: cannot access {shown} ({abs_path}).") from None
    if st.is_dir:
        raise IsADirectoryError(
            f"{shown} is a directory, not a file. Use ls to list its contents."
        )
    if not st.is_file:
        raise special_file_refusal(shown, abs_path, st)
    return st


def special_file_refusal(shown: str, abs_path: str, st: FileStat, *, writing: bool = False) -> OSError:
    """Devices, FIFOs and sockets are never opened: /dev/zero never ends, a FIFO blocks."""
    kind = file_kind(st.mode) if st.mode else "a special file"
    quoted = shlex.quote(abs_path)
    hint = (f"If writing to it is really intended, use bash (e.g. `printf ... > {quoted}`)." if writing
            else f"To see part of it, use bash with a bound, e.g. `head -c 4096 {quoted} | xxd | head`.")
    return OSError(
        f"{shown} ({abs_path}) is {kind}, not a regular file; the file tools only read and write "
        f"regular files (a device can be endless, a FIFO blocks until another process opens it). {hint}"
    )


def binary_refusal(shown: str, size: int, why: str) -> ValueError:
    return ValueError(
        f"{shown} looks like a binary file ({why}, {format_size(size)}); only text files and "
        "PNG/JPEG/GIF/WebP images can be read. Inspect it with bash instead, e.g. "
        f"`file {shlex.quote(shown)}` or `xxd {shlex.quote(shown)} | head`."
    )


def decode_text(data: bytes, shown: str) -> tuple[str, int]:
    """UTF-8 text and the number of undecodable bytes (shown as U+FFFD), or a refusal."""
    if b"\x00" in data:
        raise binary_refusal(shown, len(data), "it contains NUL bytes")
    try:
        return data.decode("utf-8"), 0
    except UnicodeDecodeError:
        pass
    text = data.decode("utf-8", "replace")
    invalid = text.count("\ufffd") - data.count(b"\xef\xbf\xbd")
    if invalid > max(1, len(data) * _MAX_INVALID_SHARE):
        raise binary_refusal(shown, len(data), "it is not valid UTF-8 text")
    return text, invalid


# ---------------------------------------------------------------------------- the tool


def create_read_tool(env: Environment) -> ToolDefinition:
    """The ``read`` tool bound to ``env`` (all file access goes through it)."""

    async def execute(
        tool_call_id: str,
        params: ReadParams,
        signal: AbortSignal | None = None,
        on_update: OnUpdate | None = None,
        ctx: object = None,
    ) -> ToolResult:
        check_abort(signal)
        shown = params.path
        abs_path = env.resolve_path(params.path)
        st = await stat_existing_file(
            env, abs_path, shown, "Check the spelling, or locate the file with find or ls."
        )
        if st.size > MAX_READ_BYTES:
            raise ValueError(
                f"{shown} is {format_size(st.size)}, too large to read whole (limit "
                f"{format_size(MAX_READ_BYTES)}). Read a range with bash instead, e.g. "
                f"`sed -n '1,200p' {shlex.quote(abs_path)}`."
            )
        try:
            data = await env.read_file(abs_path)
        except OSError as exc:
            raise OSError(f"Could not read {shown}: {exc.strerror or exc}.") from None
        check_abort(signal)

        detect = getattr(env, "detect_image_mime_type", None)
        mime = detect(data) if callable(detect) else None
        if mime:
            return await _read_image(data, mime, shown, abs_path)
        return _read_text(data, shown, abs_path, params.offset, params.limit)

    return ToolDefinition(
        name="read",
        label=CARDS['read'].label,
        description=CARDS['read'].description,
        parameters=builtin_parameters("read"),
        execute=execute,
        prompt_snippet=CARDS['read'].snippet,
        prompt_guidelines=list(CARDS['read'].guidelines),
    )


def _read_text(data: bytes, shown: str, abs_path: str, offset: int | None, limit: int | None) -> ToolResult:
    text, invalid = decode_text(data, shown)
    text = text.removeprefix("\ufeff")
    text = text.replace("\r\n", "\n")
    details: dict[str, Any] = {"path": abs_path, "total_lines": 0, "truncation": None}
    if text == "":
        return ToolResult(content=[TextContent(text=f"[{shown} is empty.]")], details=details)

    lines = split_lines(text)
    total = len(lines)
    details["total_lines"] = total
    start = offset or 1
    if start > total:
        raise ValueError(
            f"offset={start} is beyond the end of {shown}, which has {total} line"
            f"{'s' if total != 1 else ''}. Use an offset from 1 to {total}."
        )
    selected = lines[start - 1 : start - 1 + limit if limit else None]
    truncation = truncate_head("\n".join(selected))
    end = start - 1 + truncation.output_lines
    details.update(offset=start, lines_shown=truncation.output_lines)
    notes: list[str] = []

    if truncation.first_line_exceeds_limit:
        size = format_size(len(lines[start - 1].encode("utf-8")))
        body = ""
        notes.append(
            f"[Line {start} of {shown} is {size}, over the {format_size(DEFAULT_MAX_BYTES)} read "
            f"limit. View part of it with bash, e.g. `sed -n '{start}p' {shlex.quote(abs_path)} | "
            f"head -c {DEFAULT_MAX_BYTES}`"
            + (f", or continue after it with offset={start + 1}.]" if start < total else ".]")
        )
        details["truncation"] = asdict(truncation)
    elif truncation.truncated:
        body = truncation.content
        why = f" ({format_size(DEFAULT_MAX_BYTES)} limit)" if truncation.truncated_by == "bytes" else ""
        notes.append(f"[Showing lines {start}-{end} of {total}{why}. Use offset={end + 1} to continue.]")
        details["truncation"] = asdict(truncation)
    else:
        body = truncation.content
        if end < total:
            notes.append(
                f"[{total - end} more line{'s' if total - end != 1 else ''} in file. "
                f"Use offset={end + 1} to continue.]"
            )
    if invalid:
        notes.append(
            f"[Note: {invalid} byte{'s' if invalid != 1 else ''} of {shown} are not valid UTF-8 "
            "and are shown as \ufffd.]"
        )
    output = body + ("\n\n" if body and notes else "") + "\n".join(notes)
    return ToolResult(content=[TextContent(text=output)], details=details)


async def _read_image(data: bytes, mime: str, shown: str, abs_path: str) -> ToolResult:
    prepared = await asyncio.to_thread(prepare_image, data, mime)
    dims = (
        f", {prepared.original_width}x{prepared.original_height}"
        if prepared.original_width is not None
        else ""
    )
    note = f"Read image file {shown} [{mime}{dims}, {format_size(len(data))}]."
    if prepared.data is None:
        raise ValueError(f"Cannot attach the image {shown}: {prepared.note}")
    if prepared.resized:
        note += (
            f" Resized to {prepared.width}x{prepared.height} ({prepared.mime_type}, "
            f"{format_size(len(prepared.data))}) to fit the {MAX_IMAGE_DIMENSION}px / "
            f"{format_size(MAX_IMAGE_BYTES)} image limits."
        )
    if prepared.note:
        note += f" {prepared.note}"
    details = {
        "path": abs_path,
        "mime_type": prepared.mime_type,
        "bytes": len(data),
        "width": prepared.width,
        "height": prepared.height,
        "original_width": prepared.original_width,
        "original_height": prepared.original_height,
        "resized": prepared.resized,
        "total_lines": None,
        "truncation": None,
    }
    return ToolResult(
        content=[
            TextContent(text=note),
            ImageContent(data=base64.b64encode(prepared.data).decode("ascii"), mime_type=prepared.mime_type),
        ],
        details=details,
    )
