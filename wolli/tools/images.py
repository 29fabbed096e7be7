"""Making images read from disk fit what providers accept.

Providers reject (or silently degrade) images over a few megabytes or a few thousand pixels
per side, and a rejected image fails the whole request. Large images are therefore shrunk
before they are attached. Shrinking needs Pillow, which Wolli does not depend on: without it
images are attached unchanged when that is safe, and refused with a clear note when not.
Dimensions are read from the file headers so that the note can name them either way.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from .truncate import format_size

MAX_IMAGE_DIMENSION = 2000
MAX_IMAGE_BYTES = int(4.5 * 1024 * 1024)
_JPEG_QUALITIES = (85, 70, 55, 40)
_MAX_SHRINK_STEPS = 6
# Pixels decoded at most to shrink an image (RGBA: 4 bytes each, so at most ~200 MB).
MAX_DECODED_PIXELS = 50_000_000


@dataclass(slots=True)
class PreparedImage:
    data: bytes | None  # None: too large to attach and could not be shrunk
    mime_type: str
    width: int | None
    height: int | None
    original_width: int | None
    original_height: int | None
    original_bytes: int
    resized: bool = False
    note: str | None = None  # why the image was left as it is or refused


def image_mime_type(data: bytes) -> str | None:
    """The image type the bytes are (PNG, JPEG, GIF, WebP, by their magic numbers), else None:
    what a file is, whatever its name says."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_dimensions(data: bytes, mime_type: str) -> tuple[int, int] | None:
    """(width, height) from the header of a PNG, GIF, JPEG or WebP file, else None."""
    try:
        if mime_type == "image/png" and len(data) >= 24:
            return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
        if mime_type == "image/gif" and len(data) >= 10:
            return int.from_bytes(data[6:8], "little"), int.from_bytes(data[8:10], "little")
        if mime_type == "image/jpeg":
            return _jpeg_dimensions(data)
        if mime_type == "image/webp":
            return _webp_dimensions(data)
    except (IndexError, ValueError):
        return None
    return None


def _jpeg_dimensions(data: bytes) -> tuple[int, int] | None:
    pos = 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            return None
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker in (0x01, *range(0xD0, 0xDA)):  # standalone markers carry no length
            pos += 2
            continue
        length = int.from_bytes(data[pos + 2 : pos + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height = int.from_bytes(data[pos + 5 : pos + 7], "big")
            width = int.from_bytes(data[pos + 7 : pos + 9], "big")
            return width, height
        pos += 2 + length
    return None


def _webp_dimensions(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 " and data[23:26] == b"\x9d\x01\x2a":
        width = int.from_bytes(data[26:28], "little") & 0x3FFF
        height = int.from_bytes(data[28:30], "little") & 0x3FFF
        return width, height
    if chunk == b"VP8L" and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
    return None


def _load_pillow() -> ModuleType | None:
    try:
        from PIL import Image
    except ImportError:
        return None
    return Image




def prepare_image(
    data: bytes,
    mime_type: str,
    max_dimension: int = MAX_IMAGE_DIMENSION,
    max_bytes: int = MAX_IMAGE_BYTES,
) -> PreparedImage:
    """The image as it should be attached: unchanged when within limits, else shrunk.

    CPU-bound; call it through ``asyncio.to_thread``.
    """
    dims = image_dimensions(data, mime_type)
    width, height = dims if dims else (None, None)
    prepared = PreparedImage(data, mime_type, width, height, width, height, len(data))
    too_wide = dims is not None and max(dims) > max_dimension
    too_heavy = len(data) > max_bytes
    if not too_wide and not too_heavy:
        return prepared
    if dims is not None and dims[0] * dims[1] > MAX_DECODED_PIXELS and mime_type != "image/jpeg":
        # A few kilobytes of PNG can claim 20000x20000 pixels: decoding it whole would take
        # gigabytes, and no provider takes it as it is. (A JPEG is decoded at a fraction of
        # its size, see _shrink.)
        prepared.data = None
        prepared.note = (f"The image is {dims[0]}x{dims[1]} pixels, more than the "
                         f"{MAX_DECODED_PIXELS // 1_000_000} megapixels Wolli decodes to shrink it.")
        return prepared

    image_module = _load_pillow()
    if image_module is None:
        return _without_pillow(prepared, too_heavy, max_dimension, max_bytes)
    try:
        return _shrink(image_module, prepared, data, max_dimension, max_bytes)
    except Exception as exc:  # a corrupt or exotic file: Pillow's errors are many and varied
        if too_heavy:
            prepared.data = None
            prepared.note = (
                f"The image is {format_size(len(data))}, over the {format_size(max_bytes)} "
                f"attachment limit, and could not be decoded to shrink it ({exc})."
            )
        else:
            prepared.note = f"The image was not resized: it could not be decoded ({exc})."
        return prepared


def _without_pillow(
    prepared: PreparedImage, too_heavy: bool, max_dimension: int, max_bytes: int
) -> PreparedImage:
    if too_heavy:
        prepared.data = None
        prepared.note = (
            f"The image is {format_size(prepared.original_bytes)}, over the "
            f"{format_size(max_bytes)} attachment limit, and Pillow is not installed to shrink "
            "it. Install Pillow (pip install pillow) or make a smaller copy, e.g. with bash: "
            f"`convert in.png -resize {max_dimension}x{max_dimension} out.png`."
        )
    else:
        prepared.note = (
            f"The image is larger than {max_dimension}px per side but was not resized because "
            "Pillow is not installed (pip install pillow); the provider may downscale it."
        )
    return prepared


def _shrink(
    image_module: ModuleType, prepared: PreparedImage, data: bytes, max_dimension: int, max_bytes: int
) -> PreparedImage:
    with image_module.open(io.BytesIO(data)) as opened:
        opened.seek(0)  # animated GIF/WebP: the first frame stands for the image
        prepared.original_width, prepared.original_height = opened.size
        if getattr(opened, "format", None) == "JPEG":
            opened.draft("RGB", (max_dimension, max_dimension))  # decoded at 1/2..1/8 scale: cheaper
        width, height = opened.size
        if width * height > MAX_DECODED_PIXELS:  # (Pillow itself only warns below 179 megapixels)
            prepared.data = None
            prepared.note = (f"The image is {prepared.original_width}x{prepared.original_height} pixels, more "
                             f"than the {MAX_DECODED_PIXELS // 1_000_000} megapixels Wolli decodes to shrink it.")
            return prepared
        image = opened.copy()
    image.thumbnail((max_dimension, max_dimension), image_module.Resampling.LANCZOS)
    for _ in range(_MAX_SHRINK_STEPS):
        encoded = _encode_within(image_module, image, prepared.mime_type, max_bytes)
        if encoded is not None:
            prepared.data, prepared.mime_type = encoded
            prepared.width, prepared.height = image.size
            prepared.resized = True
            return prepared
        new_size = (max(1, int(image.width * 0.75)), max(1, int(image.height * 0.75)))
        image = image.resize(new_size, image_module.Resampling.LANCZOS)
    prepared.data = None
    prepared.note = (
        f"The image could not be shrunk below the {format_size(max_bytes)} attachment limit."
    )
    return prepared


def _encode_within(
    image_module: ModuleType, image: Any, mime_type: str, max_bytes: int
) -> tuple[bytes, str] | None:
    """The smallest acceptable encoding: the original format first, then JPEG qualities."""
    fmt = {"image/png": "PNG", "image/webp": "WEBP", "image/jpeg": "JPEG"}.get(mime_type, "PNG")
    if fmt != "JPEG":
        buf = io.BytesIO()
        img = image if image.mode in ("RGB", "RGBA", "L", "LA", "P") else image.convert("RGBA")
        img.save(buf, format=fmt, optimize=True)
        if buf.tell() <= max_bytes:
            return buf.getvalue(), f"image/{fmt.lower()}"
    rgb = _flatten(image_module, image)
    for quality in _JPEG_QUALITIES:
        buf = io.BytesIO()
        rgb.save(buf, format="JPEG", quality=quality, optimize=True)
        if buf.tell() <= max_bytes:
            return buf.getvalue(), "image/jpeg"
    return None


def _flatten(image_module: ModuleType, image: Any) -> Any:
    """RGB for JPEG: transparency composited onto white."""
    img = image.convert("RGBA") if image.mode in ("P", "PA") else image
    if img.mode in ("RGBA", "LA"):
        background = image_module.new("RGB", img.size, (255, 255, 255))
        background.paste(img, mask=img.getchannel("A"))
        return background
    return img if img.mode == "RGB" else img.convert("RGB")
