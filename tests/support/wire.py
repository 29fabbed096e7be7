"""Access to the recorded provider streams in ``tests/fixtures/wire``.

Real responses of each provider API, recorded once and kept in the repository so a fresh
clone tests the same bytes (``wire.md`` there describes the formats, ``sources.md`` where
each recording came from). Tests glob the folders, so recordings added later are replayed too.
"""

from __future__ import annotations

import json
from pathlib import Path

WIRE_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "wire"


def wire_path(*parts: str) -> Path:
    return WIRE_DIR.joinpath(*parts)


def recordings(folder: str, suffixes: tuple[str, ...] = (".sse", ".chunks.jsonl")) -> list[Path]:
    """Every full recording in ``folder`` (excerpts excluded), sorted by name."""
    base = WIRE_DIR / folder
    if not base.is_dir():
        return []
    return sorted(
        p for p in base.iterdir() if p.name.endswith(suffixes) and ".excerpt." not in p.name
    )


def load_body(path: Path) -> bytes:
    """The response body to serve for ``path``: raw ``.sse`` bytes or re-framed JSONL.

    An unterminated final event is terminated, as the live APIs always do (wire.md §0).
    """
    if path.name.endswith(".chunks.jsonl"):
        provider = path.parent.name
        return frame_jsonl(provider, path.read_text("utf-8").splitlines())
    data = path.read_bytes()
    sep = b"\r\n\r\n" if b"\r\n" in data[:2000] else b"\n\n"
    if not data.endswith(sep):
        data = data.rstrip(b"\r\n") + sep
    return data


def frame_jsonl(provider: str, lines: list[str]) -> bytes:
    out: list[str] = []
    for line in lines:
        if not line.strip():
            continue
        obj = json.loads(line)
        if provider in ("anthropic", "openai_responses"):
            out.append(f"event: {obj['type']}\ndata: {line}\n\n")
        elif provider == "openai_chat":
            out.append(f"data: {line}\n\n")
        elif provider == "gemini":
            out.append(f"data: {line}\r\n\r\n")
    if provider == "openai_chat":
        out.append("data: [DONE]\n\n")
    return "".join(out).encode("utf-8")


def load_meta(path: Path) -> dict | None:
    """The ``.meta.json`` next to a recording, if any."""
    name = path.name
    for suffix in (".sse", ".chunks.jsonl"):
        if name.endswith(suffix):
            meta = path.with_name(name[: -len(suffix)] + ".meta.json")
            return json.loads(meta.read_text("utf-8")) if meta.exists() else None
    return None


def load_error(name: str) -> bytes:
    return (WIRE_DIR / "errors" / name).read_bytes()
