"""YAML-ish front matter of markdown files (skills, prompt templates, subagent definitions).

A deliberately small, lenient YAML subset; :func:`parse_front_matter` says what it reads.
"""

from __future__ import annotations

import re

_KEY_LINE = re.compile(r"^([A-Za-z0-9_-]+):\s*(.*)$")
_BLOCK_INDICATORS = {">": "folded", ">-": "folded", ">+": "folded", "|": "literal", "|-": "literal", "|+": "literal"}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "/": "/"}


def parse_front_matter(text: str) -> tuple[dict[str, str], str]:
    """Split ``---``-fenced ``key: value`` front matter from a markdown body.

    A deliberately small YAML subset (plain scalars, also continued on indented lines;
    single- and double-quoted strings; ``>`` folded and ``|`` literal blocks; full-line
    comments): skills and prompt templates only use flat keys. A real YAML parser (PyYAML)
    was weighed and left out: it rejects what people actually write in skill files
    (``description: Use when: the user asks...`` is a YAML error, a plain value may not hold
    ``": "``), so it would need this lenient reading as a fallback anyway, and it would be a
    new dependency. Values come back trimmed. Without a fence the whole text is the body.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.replace("\r\n", "\n").split("\n")
    if lines[0].rstrip() != "---":
        return {}, text
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
    if end is None:
        return {}, text
    meta: dict[str, str] = {}
    key: str | None = None
    style = "plain"
    block: list[str] = []

    def flush() -> None:
        if key is None or not block:
            return
        if style == "literal":
            meta[key] = "\n".join(_dedent(block)).strip("\n")
        elif style == "folded":
            meta[key] = _fold(_dedent(block))
        else:
            meta[key] = " ".join([meta[key], *(b.strip() for b in block)]).strip()

    for line in lines[1:end]:
        match = _KEY_LINE.match(line)
        if match:
            flush()
            key, value, block = match.group(1), (match.group(2) or "").strip(), []
            if value in _BLOCK_INDICATORS:
                style, meta[key] = _BLOCK_INDICATORS[value], ""
            elif value[:1] in ("'", '"'):
                meta[key], key = _quoted(value), None  # multi-line quoted strings: not supported
            else:
                style, meta[key] = "plain", value
            continue
        if key is None:
            continue
        indented = line[:1] in (" ", "\t")
        if style == "plain":
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if not indented:
                flush()
                key = None
                continue
            block.append(line)
        elif indented or not line.strip():
            block.append(line)
        elif not line.startswith("#"):
            flush()
            key = None
    flush()
    body = "\n".join(lines[end + 1 :]).lstrip("\n")
    return meta, body


def _dedent(block: list[str]) -> list[str]:
    while block and not block[-1].strip():
        block = block[:-1]
    indents = [len(b) - len(b.lstrip()) for b in block if b.strip()]
    cut = min(indents, default=0)
    return [b[cut:] if b.strip() else "" for b in block]


def _fold(lines: list[str]) -> str:
    """YAML folding: lines join with spaces, an empty line becomes a line break."""
    out = ""
    for line in lines:
        if not line:
            out += "\n"
        elif not out or out.endswith("\n"):
            out += line.strip()
        else:
            out += " " + line.strip()
    return out.strip()


def _quoted(value: str) -> str:
    """A quoted scalar: ``"..."`` with backslash escapes, ``'...'`` with ``''`` for a quote."""
    quote, out, i = value[0], [], 1
    while i < len(value):
        char = value[i]
        if quote == '"' and char == "\\" and i + 1 < len(value):
            out.append(_ESCAPES.get(value[i + 1], value[i + 1]))
            i += 2
            continue
        if char == quote:
            if quote == "'" and value[i + 1 : i + 2] == "'":
                out.append("'")
                i += 2
                continue
            return "".join(out)
        out.append(char)
        i += 1
    return value  # no closing quote: keep the text as written
