"""The built-in ``ls`` tool: the entries of one directory, sorted, directories marked.

Unlike find and grep it shows everything in the directory, ignored or not: a model asking
what is in a folder should see it all (including ``.git/`` and dotfiles).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..agent.tool import OnUpdate, ToolDefinition, ToolResult
from ..ai.abort import AbortSignal
from ..ai.types import TextContent
from .builtin_parameters import builtin_parameters
from .cards import CARDS
from .environment import Environment
from .schemas import LS_LIMIT
from .search_fallback import check_abort, display_path, finish_output, resolve_root

if TYPE_CHECKING:  # the models load with pydantic on the tool's first call (.params)
    from .params import LsParams

DEFAULT_LIMIT = LS_LIMIT


def create_ls_tool(env: Environment) -> ToolDefinition:
    """The ``ls`` tool bound to ``env`` (listing through ``env.readdir``)."""

    async def execute(
        tool_call_id: str,
        params: LsParams,
        signal: AbortSignal | None = None,
        on_update: OnUpdate | None = None,
        ctx: object = None,
    ) -> ToolResult:
        check_abort(signal)
        root = await resolve_root(env, params.path)
        if not root.is_dir:
            raise NotADirectoryError(
                f"Not a directory: {root.shown} ({root.abs_path}). Use read to see a file's contents."
            )
        try:
            entries = await env.readdir(root.abs_path)
        except PermissionError:
            raise PermissionError(f"Permission denied: cannot list {root.shown} ({root.abs_path}).") from None
        except OSError as exc:
            raise OSError(f"Could not list {root.shown}: {exc.strerror or exc}.") from None
        check_abort(signal)

        # Directories and symlinks to them both get the '/': either can be listed next.
        ordered = sorted(entries, key=lambda entry: (entry.name.lower(), entry.name))
        names = [display_path(entry.name) + ("/" if entry.is_dir else "") for entry in ordered]
        limit_reached = len(names) > params.limit
        names = names[: params.limit]
        details: dict[str, Any] = {"count": len(names), "truncated": False, "limit_reached": limit_reached}
        if not names:
            return ToolResult(content=[TextContent(text="(empty directory)")], details=details)
        notices = []
        if limit_reached:
            notices.append(f"[{params.limit} entries limit reached. Use limit={params.limit * 2} for more]")
        text, truncated = finish_output(names, notices)
        details["truncated"] = truncated
        return ToolResult(content=[TextContent(text=text)], details=details)

    return ToolDefinition(
        name="ls",
        label=CARDS['ls'].label,
        description=CARDS['ls'].description,
        parameters=builtin_parameters("ls"),
        execute=execute,
        prompt_snippet=CARDS['ls'].snippet,
        prompt_guidelines=list(CARDS['ls'].guidelines),
    )
