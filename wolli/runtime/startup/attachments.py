"""``@file`` attachments: files, images and folders given on the command line.

The same limits as the ``read`` tool apply, so an attachment never sends more than the
model would get by reading the file itself: text is cut to the first
:data:`~wolli.tools.truncate.DEFAULT_MAX_LINES` lines / :data:`DEFAULT_MAX_BYTES` with a
note saying so, files over :data:`MAX_ATTACHMENT_BYTES` are refused unread, a folder
attaches a listing of its entries, and an image given to a model without image input is
refused (rather than silently dropped on the way to the provider).
"""

from __future__ import annotations

import base64
import os
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING

from ...ai.types import ImageContent
from ...base.records import record
from ...base.safe_files import read_capped

if TYPE_CHECKING:
    from ...ai.types import Model
    pass

IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp"}
# Larger files are not read at all (the read tool's own ceiling).
MAX_ATTACHMENT_BYTES = 64 * 1024 * 1024
MAX_LISTING_ENTRIES = 500


class AttachmentError(ValueError):
    """An ``@`` argument that cannot be attached; the message says why and what to do."""


@record
class Attachments:
    text: str = ""
    images: list[ImageContent] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what was cut, for the user (stderr)


def read_attachments(names: list[str], cwd: str, model: Model | None = None) -> Attachments:
    """``@name`` arguments -> a text block for the first message, images, and notes."""
    out = Attachments()
    parts: list[str] = []
    for name in names:
        try:
            parts.append(_attach(name, cwd, model, out))
        except AttachmentError:
            raise
        except OSError as exc:  # unreadable, a name too long, a special file...
            raise AttachmentError(f"{_at(name)}: cannot read it ({exc.strerror or type(exc).__name__})") from None
        except ValueError as exc:  # an embedded NUL byte in the name
            raise AttachmentError(f"{_at(name)}: not a usable file name ({exc})") from None
    out.text = "\n".join(parts)
    return out


def _attach(name: str, cwd: str, model: Model | None, out: Attachments) -> str:
    """One ``@name`` as a text block (images go to ``out.images``, notes to ``out.notes``)."""
    from ...tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size, truncate_head

    path = Path(os.path.expanduser(name))
    if not path.is_absolute():
        path = Path(cwd) / path
    if path.is_dir():
        return _listing(name, path)
    if not path.exists():
        raise AttachmentError(f"{_at(name)}: no such file or folder (looked in {_shown(str(path.parent))})")
    if not path.is_file():
        raise AttachmentError(f"{_at(name)}: not a regular file (a device, socket or pipe cannot be attached)")
    size = path.stat().st_size
    if size > MAX_ATTACHMENT_BYTES:
        raise AttachmentError(
            f"{_at(name)}: {format_size(size)} is too large to attach (limit {format_size(MAX_ATTACHMENT_BYTES)}); "
            "ask the model to read parts of it instead"
        )
    if path.suffix.lower() in IMAGE_TYPES:
        if model is not None and "image" not in (getattr(model, "input", None) or ["text"]):
            raise AttachmentError(
                f"{_at(name)} is an image, but {model.provider}/{model.id} does not accept images; "
                "pick a model with image input (wolli --list-models shows which) or leave the image out"
            )
        out.images.append(_image(path, name, out.notes))
        return f'<file name="{name}">(image attached)</file>'
    data = read_capped(path, MAX_ATTACHMENT_BYTES)  # checked again on the open file (a swap, /proc)
    if b"\0" in data[:8192]:
        raise AttachmentError(f"{_at(name)}: binary file; only text files, images and folders can be attached")
    text = data.decode("utf-8", "replace")
    cut = truncate_head(text)
    if cut.first_line_exceeds_limit:
        # One huge line (minified code, a JSON dump): keep its start rather than nothing.
        head = text.encode("utf-8")[:DEFAULT_MAX_BYTES].decode("utf-8", "ignore")
        note = (
            f"[{_at(name)} is {format_size(size)} and its first line alone is over the "
            f"{format_size(DEFAULT_MAX_BYTES)} limit; attached the first {format_size(DEFAULT_MAX_BYTES)} of it. "
            "Use the read tool or bash (head -c, jq) for the rest.]"
        )
        out.notes.append(note)
        text = head + "\n" + note
    elif cut.truncated:
        note = (
            f"[{_at(name)} is {format_size(size)} and {cut.total_lines} lines; attached the first "
            f"{cut.output_lines} lines ({DEFAULT_MAX_LINES} lines / {format_size(DEFAULT_MAX_BYTES)} limit). "
            "Use the read tool with an offset for the rest.]"
        )
        out.notes.append(note)
        text = cut.content + "\n" + note
    return f'<file name="{name}">\n{text}\n</file>'


def _shown(text: str) -> str:
    """A name as shown in a one-line message: quoted when it holds control characters."""
    return text if text.isprintable() else repr(text)


def _at(name: str) -> str:
    return "@" + _shown(name)


def _image(path: Path, name: str, notes: list[str]) -> ImageContent:
    return image_content(read_capped(path, MAX_ATTACHMENT_BYTES), _at(name), notes)


def image_content(data: bytes, label: str, notes: list[str]) -> ImageContent:
    """An image as a message carries it, shrunk to the limits the ``read`` tool keeps;
    AttachmentError when it cannot be. ``label`` names it in notes (``@shot.png``). Its type
    is what the bytes are: a GIF saved as ``.png`` sent as image/png is refused by providers,
    and bytes that are no image were read as a header of nonsense sizes."""
    from ...tools.images import image_mime_type, prepare_image

    mime = image_mime_type(data)
    if mime is None:
        raise AttachmentError(f"{label}: not a PNG, JPEG, GIF or WebP image")
    prepared = prepare_image(data, mime)
    if prepared.data is None:
        raise AttachmentError(f"{label}: {prepared.note}")
    if prepared.note:
        notes.append(f"{label}: {prepared.note}")
    return ImageContent(data=base64.b64encode(prepared.data).decode("ascii"), mime_type=prepared.mime_type)


def _listing(name: str, folder: Path) -> str:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        raise AttachmentError(f"{_at(name)}: cannot list the folder: {exc.strerror or exc}") from None
    lines = [f"{e.name}/" if e.is_dir(follow_symlinks=False) else e.name for e in entries[:MAX_LISTING_ENTRIES]]
    if len(entries) > MAX_LISTING_ENTRIES:
        lines.append(f"[{len(entries) - MAX_LISTING_ENTRIES} more entries not shown]")
    body = "\n".join(lines) if lines else "(empty folder)"
    return f'<directory name="{name}">\n{body}\n</directory>'
