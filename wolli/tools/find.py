"""The built-in ``find`` tool: paths matching a glob, gitignore-aware, sorted.

fd lists the tree when it is installed (a fast parallel walker); otherwise the Python
walker lists the same entries. Either way the glob is matched here, in Python, so both
engines agree on what a pattern means; fd's own glob flag matches either the file name or
the absolute path, which would make ``src/*.py`` depend on where the tree lives. Results
are sorted (a directory's contents right after it) before the limit applies, so the same
tree always gives the same page.
"""

from __future__ import annotations

import os
import re
import shlex
from typing import TYPE_CHECKING, Any

from ..agent.tool import OnUpdate, ToolDefinition, ToolResult
from ..ai.abort import AbortSignal
from ..ai.types import TextContent
from .builtin_parameters import builtin_parameters
from .cards import CARDS
from .environment import Environment
from .gitignore import compile_path_glob
from .schemas import FIND_LIMIT
from .search_fallback import (
    SearchRoot,
    check_abort,
    display_path,
    find_fd,
    finish_output,
    resolve_root,
    run_binary,
    tree_sort_key,
    walk_tree,
)

if TYPE_CHECKING:  # the models load with pydantic on the tool's first call (.params)
    from .params import FindParams

DEFAULT_LIMIT = FIND_LIMIT


class FindError(ValueError):
    """A problem with the find arguments, worded for the model."""


async def _list_fd(env: Environment, fd: str, root: SearchRoot, signal: AbortSignal | None) -> list[tuple[str, bool]] | None:
    args = [fd, "--hidden", "--color", "never", "--print0", "--strip-cwd-prefix", "--exclude", ".git"]
    command = " ".join(shlex.quote(arg) for arg in args)
    found: list[tuple[str, bool]] = []

    def on_record(record: bytes) -> bool:
        if record:
            name = os.fsdecode(record)
            is_dir = name.endswith("/")
            found.append((name.rstrip("/") if is_dir else name, is_dir))
        return False

    code = await run_binary(env, command, root.abs_path, signal, b"\0", on_record)
    if code != 0:
        return None  # fd missing or too old for these flags: the walker gives the same list
    return found


async def _list_python(env: Environment, root: SearchRoot, signal: AbortSignal | None) -> list[tuple[str, bool]]:
    return [(entry.path, entry.is_dir) async for entry in walk_tree(env, root.abs_path, "fd", signal)]


def create_find_tool(env: Environment) -> ToolDefinition:
    """The ``find`` tool bound to ``env`` (fd runs through ``env.exec``, the walker reads it)."""

    async def execute(
        tool_call_id: str,
        params: FindParams,
        signal: AbortSignal | None = None,
        on_update: OnUpdate | None = None,
        ctx: object = None,
    ) -> ToolResult:
        check_abort(signal)
        try:
            matches = compile_path_glob(params.pattern)
        except (ValueError, re.error) as exc:
            raise FindError(f"Invalid glob pattern {params.pattern!r}: {exc}") from None
        root = await resolve_root(env, params.path)
        if not root.is_dir:
            raise NotADirectoryError(
                f"Not a directory: {root.shown} ({root.abs_path}). find searches inside a "
                "directory; pass its parent as path, or use read for the file itself."
            )

        entries: list[tuple[str, bool]] | None = None
        engine = "fd"
        fd = find_fd()
        if fd is not None:
            entries = await _list_fd(env, fd, root, signal)
        if entries is None:
            engine = "python"
            entries = await _list_python(env, root, signal)
        check_abort(signal)

        hits = sorted((entry for entry in entries if matches(*entry)), key=lambda e: tree_sort_key(e[0]))
        limit_reached = len(hits) > params.limit
        hits = hits[: params.limit]
        details: dict[str, Any] = {
            "count": len(hits),
            "truncated": False,
            "limit_reached": limit_reached,
            "engine": engine,
        }
        if not hits:
            return ToolResult(
                content=[TextContent(text=f"No files found matching {params.pattern!r}")], details=details
            )
        lines = [display_path(path) + ("/" if is_dir else "") for path, is_dir in hits]
        notices = []
        if limit_reached:
            notices.append(
                f"[{params.limit} results limit reached. Use limit={params.limit * 2} or refine the pattern]"
            )
        text, truncated = finish_output(lines, notices)
        details["truncated"] = truncated
        return ToolResult(content=[TextContent(text=text)], details=details)

    return ToolDefinition(
        name="find",
        label=CARDS['find'].label,
        description=CARDS['find'].description,
        parameters=builtin_parameters("find"),
        execute=execute,
        prompt_snippet=CARDS['find'].snippet,
        prompt_guidelines=list(CARDS['find'].guidelines),
    )
