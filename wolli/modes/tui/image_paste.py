"""Images into the editor: a pasted path of an image file (what dragging a file into most
terminals types), or the image on the system clipboard (Ctrl+V).

A terminal cannot paste image bytes, only text, so the clipboard is read with the system's
tool: ``wl-paste`` (Wayland), ``xclip`` (X11), ``pngpaste`` (macOS). Without one, Ctrl+V
pastes text as before.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

from ...ai.types import ImageContent
from ...runtime.startup.attachments import IMAGE_TYPES

CLIPBOARD_TIMEOUT_S = 2.0
MAX_PASTED_PATH = 4096


def image_path_in(text: str, cwd: str) -> Path | None:
    """The image file a paste names, as terminals type a dropped file: plain, quoted,
    ``file://`` URL, or with backslash-escaped spaces. None for anything else."""
    value = text.strip()
    if not value or "\n" in value or len(value) > MAX_PASTED_PATH:
        return None
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    if value.startswith("file://"):
        value = unquote(value[len("file://"):])
    value = value.replace("\\ ", " ")
    path = Path(os.path.expanduser(value))
    if not path.is_absolute():
        path = Path(cwd) / path
    if path.suffix.lower() not in IMAGE_TYPES or not path.is_file():
        return None
    return path


def _clipboard_commands() -> list[list[str]]:
    commands = []
    if sys.platform == "darwin" and shutil.which("pngpaste"):
        commands.append(["pngpaste", "-"])
    if os.environ.get("WAYLAND_DISPLAY") and shutil.which("wl-paste"):
        commands.append(["wl-paste", "--no-newline", "--type", "image/png"])
    if os.environ.get("DISPLAY") and shutil.which("xclip"):
        commands.append(["xclip", "-selection", "clipboard", "-target", "image/png", "-out"])
    return commands


def clipboard_image() -> tuple[bytes, str] | None:
    """(bytes, mime type) of the image on the clipboard, or None. Blocking: run it in a thread."""
    from ...tools.images import image_mime_type

    for command in _clipboard_commands():
        try:
            done = subprocess.run(command, capture_output=True, timeout=CLIPBOARD_TIMEOUT_S, check=False)
        except (OSError, subprocess.SubprocessError):
            continue
        mime = image_mime_type(done.stdout) if done.returncode == 0 else None
        if mime is not None:
            return done.stdout, mime
    return None


async def read_pasted_image(path: str | None) -> tuple[ImageContent, list[str]] | None:
    """The image of a pasted path, or of the clipboard when ``path`` is None, ready to send
    (shrunk to the limits); None when the clipboard holds no image. Raises AttachmentError."""
    import asyncio

    from ...runtime.startup.attachments import image_content

    if path is None:
        found = await asyncio.to_thread(clipboard_image)
        if found is None:
            return None
        data, label = found[0], "the clipboard image"
    else:
        from ...base.safe_files import read_capped
        from ...runtime.startup.attachments import MAX_ATTACHMENT_BYTES

        file = Path(path)
        data = await asyncio.to_thread(read_capped, file, MAX_ATTACHMENT_BYTES)
        label = file.name
    notes: list[str] = []
    image = await asyncio.to_thread(image_content, data, label, notes)
    return image, notes
