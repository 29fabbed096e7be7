"""The built-in ``grep`` tool: search file contents, gitignore-aware, capped output.

ripgrep does the work when it is installed (``rg --json --sort path``, so results come in
a stable order); otherwise a Python walker with ``re`` produces the same matches for the
same tree. The one visible difference is the regex dialect: ripgrep uses Rust's regex
syntax (no look-around, no backreferences), Python's ``re`` accepts both. Everything else
is done in one place for both engines: the ``glob`` filter, context lines (read from the
files), formatting and truncation.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..agent.tool import OnUpdate, ToolDefinition, ToolResult
from ..ai.abort import AbortSignal
from ..ai.types import TextContent
from .builtin_parameters import builtin_parameters
from .cards import CARDS
from .environment import Environment
from .gitignore import compile_path_glob
from .read import special_file_refusal
from .schemas import GREP_LIMIT
from .search_fallback import (
    SearchRoot,
    check_abort,
    display_path,
    find_ripgrep,
    finish_output,
    resolve_root,
    run_binary,
    walk_tree,
)
from .truncate import GREP_MAX_LINE_LENGTH, truncate_line

if TYPE_CHECKING:  # the models load with pydantic on the tool's first call (.params)
    from .params import GrepParams

DEFAULT_LIMIT = GREP_LIMIT


@dataclass(slots=True)
class Match:
    path: str  # relative to the root, as searched (may hold surrogates for odd bytes)
    line: int  # 1-based
    text: str  # the line without its terminator


@dataclass(slots=True)
class _Search:
    matches: list[Match]
    engine: str


class GrepError(ValueError):
    """A problem with the grep arguments, worded for the model."""


def _python_regex(params: GrepParams) -> re.Pattern[str]:
    source = re.escape(params.pattern) if params.literal else params.pattern
    try:
        return re.compile(source, re.IGNORECASE if params.ignore_case else 0)
    except re.error as exc:
        raise GrepError(
            f"Invalid regex pattern {params.pattern!r}: {exc}. Fix the pattern, or pass "
            "literal=true to search for the text as written."
        ) from None


def _line_of(text: str) -> str:
    text = text.removesuffix("\n")
    return text.removesuffix("\r")


def _decode_field(value: dict[str, Any] | None) -> str:
    """A ``{text}`` or ``{bytes: base64}`` field of rg's JSON output."""
    if not value:
        return ""
    if "text" in value:
        return value["text"]
    return base64.b64decode(value.get("bytes", "")).decode("utf-8", "surrogateescape")


# A glob rg can pre-filter with as a file type: a plain file-name glob, no separators, no
# '?' or classes (globset matches those per byte, this tool per character), commas only
# inside one level of braces. Types never override .gitignore (--glob would).
_TYPE_SAFE = re.compile(r"[\w.*\-+@#~ ]*(\{[\w.*\-+@#~ ,]*\}[\w.*\-+@#~ ]*)?")


async def _search_rg(
    env: Environment,
    rg: str,
    root: SearchRoot,
    params: GrepParams,
    accept: Callable[[str], bool],
    signal: AbortSignal | None,
) -> _Search | None:
    wanted = params.limit + 1
    args = [
        rg, "--json", "--no-config", "--hidden", "--sort", "path", "--no-mmap", "--no-messages",
        "--encoding", "none", "--max-count", str(wanted), "--glob", "!.git",
        "--ignore-case" if params.ignore_case else "--case-sensitive",
    ]
    if params.literal:
        args.append("--fixed-strings")
    glob = (params.glob or "").strip()
    if root.is_dir and glob and _TYPE_SAFE.fullmatch(glob):
        args += ["--type-add", f"wolliglob:{glob}", "--type", "wolliglob"]
    if root.is_dir:
        cwd, target = root.abs_path, "."
    else:
        cwd, target = os.path.dirname(root.abs_path), os.path.basename(root.abs_path)
    args += ["--regexp", params.pattern, "--", target]
    command = " ".join(shlex.quote(arg) for arg in args)

    matches: list[Match] = []
    pending: list[Match] = []
    errors: list[str] = []

    def on_record(record: bytes) -> bool:
        if not record.startswith(b"{"):
            text = record.decode("utf-8", "replace").rstrip()
            if text.strip():
                errors.append(text)
            return False
        try:
            event = json.loads(record)
        except ValueError:
            errors.append(record.decode("utf-8", "replace"))
            return False
        kind = event.get("type")
        data = event.get("data", {})
        if kind == "begin":
            pending.clear()
        elif kind == "match":
            rel = _decode_field(data.get("path"))
            rel = rel.removeprefix("./")
            pending.append(Match(rel, int(data.get("line_number") or 0), _line_of(_decode_field(data.get("lines")))))
        elif kind == "end":
            # Binary files: rg may report matches before it sees the NUL; drop the whole file.
            if data.get("binary_offset") is None and pending and accept(pending[0].path):
                matches.extend(pending)
            pending.clear()
            return len(matches) >= wanted
        return False

    code = await run_binary(env, command, cwd, signal, b"\n", on_record)
    if code is None or code not in (0, 1, 2, -1):
        return None  # rg missing or broken in this environment: the walker does the job
    if code == 2 and errors and not matches:
        # rg's hint about --pcre2 names a flag the model cannot pass.
        message = "\n".join(errors).split("\nConsider enabling PCRE2")[0]
        if "regex" in message.lower() or "pattern" in message.lower():
            raise GrepError(
                f"Invalid regex pattern {params.pattern!r}:\n{message}\nFix the pattern (ripgrep "
                "syntax: no look-around or backreferences), or pass literal=true."
            )
        raise GrepError(f"ripgrep failed: {message}")
    return _Search(matches[:wanted], "ripgrep")


async def _search_python(
    env: Environment, root: SearchRoot, params: GrepParams, accept: Callable[[str], bool], signal: AbortSignal | None
) -> _Search:
    regex = _python_regex(params)
    # A whole-file search skips files without any hit quickly; it can only over-report
    # (a match across lines), except for these constructs, which are checked per line.
    prefilter = None
    if not any(token in regex.pattern for token in ("\\A", "\\Z", "(?<")):
        prefilter = re.compile(regex.pattern, regex.flags | re.MULTILINE)
    wanted = params.limit + 1
    matches: list[Match] = []

    async def files():
        if not root.is_dir:
            yield os.path.basename(root.abs_path), root.abs_path
            return
        async for entry in walk_tree(env, root.abs_path, "rg", signal):
            if entry.is_file:
                yield entry.path, entry.abs_path

    async for rel, abs_path in files():
        check_abort(signal)
        if not accept(rel):
            continue
        try:
            data = await env.read_file(abs_path)
        except OSError:
            continue
        if b"\x00" in data:
            continue
        text = data.decode("utf-8", "surrogateescape")
        if prefilter is not None and prefilter.search(text) is None:
            continue
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        for number, line in enumerate(lines, 1):
            if regex.search(line) is not None:
                matches.append(Match(rel, number, line.removesuffix("\r")))
                if len(matches) >= wanted:
                    return _Search(matches, "python")
    return _Search(matches, "python")


async def _context_lines(
    env: Environment, root: SearchRoot, matches: list[Match], context: int, signal: AbortSignal | None
) -> list[tuple[str, int, str, bool]]:
    """(path, line, text, is_match) rows with ``context`` lines around each match."""
    rows: list[tuple[str, int, str, bool]] = []
    by_file: dict[str, list[Match]] = {}
    for match in matches:
        by_file.setdefault(match.path, []).append(match)
    for rel, file_matches in by_file.items():
        check_abort(signal)
        abs_path = root.abs_path if not root.is_dir else os.path.join(root.abs_path, rel)
        try:
            text = (await env.read_file(abs_path)).decode("utf-8", "surrogateescape")
        except OSError:
            rows.extend((m.path, m.line, m.text, True) for m in file_matches)
            continue
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        hits = {m.line: m.text for m in file_matches}
        wanted: set[int] = set()
        for line in hits:
            wanted.update(range(max(1, line - context), min(len(lines), line + context) + 1))
        wanted.update(hits)  # the file may have shrunk since the search
        for number in sorted(wanted):
            if number in hits:
                rows.append((rel, number, hits[number], True))
            elif number <= len(lines):
                rows.append((rel, number, _line_of(lines[number - 1]), False))
    return rows


def create_grep_tool(env: Environment) -> ToolDefinition:
    """The ``grep`` tool bound to ``env`` (rg runs through ``env.exec``, files through it too)."""

    async def execute(
        tool_call_id: str,
        params: GrepParams,
        signal: AbortSignal | None = None,
        on_update: OnUpdate | None = None,
        ctx: object = None,
    ) -> ToolResult:
        check_abort(signal)
        if not params.pattern:
            raise GrepError("The pattern is empty. Give a regex or text to search for.")
        root = await resolve_root(env, params.path)
        if not root.is_dir and root.stat is not None and not root.stat.is_file:
            raise special_file_refusal(root.shown, root.abs_path, root.stat)
        try:
            glob_match = compile_path_glob(params.glob) if params.glob and params.glob.strip() else None
        except (ValueError, re.error) as exc:
            raise GrepError(f"Invalid glob {params.glob!r}: {exc}") from None

        def accept(rel: str) -> bool:
            return glob_match is None or glob_match(rel, False)

        search: _Search | None = None
        rg = find_ripgrep()
        if rg is not None:
            search = await _search_rg(env, rg, root, params, accept, signal)
        if search is None:
            search = await _search_python(env, root, params, accept, signal)
        check_abort(signal)

        limit_reached = len(search.matches) > params.limit
        matches = search.matches[: params.limit]
        details: dict[str, Any] = {
            "match_count": len(matches),
            "truncated": False,
            "limit_reached": limit_reached,
            "lines_truncated": False,
            "engine": search.engine,
        }
        if not matches:
            return ToolResult(content=[TextContent(text="No matches found")], details=details)

        if params.context > 0:
            rows = await _context_lines(env, root, matches, params.context, signal)
        else:
            rows = [(m.path, m.line, m.text, True) for m in matches]
        lines: list[str] = []
        any_cut = False
        for rel, number, text, is_match in rows:
            shown_text, cut = truncate_line(display_path(text))
            any_cut = any_cut or cut
            sep = ":" if is_match else "-"
            lines.append(f"{display_path(rel)}{sep}{number}{sep} {shown_text}")
        notices: list[str] = []
        if limit_reached:
            notices.append(
                f"[{params.limit} matches limit reached. Use limit={params.limit * 2} or refine the pattern]"
            )
        if any_cut:
            notices.append(
                f"[Some lines were cut to {GREP_MAX_LINE_LENGTH} characters. Use the read tool to see them whole]"
            )
        text, truncated = finish_output(lines, notices)
        details["truncated"] = truncated
        details["lines_truncated"] = any_cut
        return ToolResult(content=[TextContent(text=text)], details=details)

    return ToolDefinition(
        name="grep",
        label=CARDS['grep'].label,
        description=CARDS['grep'].description,
        parameters=builtin_parameters("grep"),
        execute=execute,
        prompt_snippet=CARDS['grep'].snippet,
        prompt_guidelines=list(CARDS['grep'].guidelines),
    )
