"""The built-in ``write`` tool: create or overwrite a whole file.

The write runs inside the file mutation queue so that it never interleaves with an ``edit``
(or an extension's mutation) of the same file in the same turn.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..agent.tool import OnUpdate, ToolDefinition, ToolResult
from ..ai.abort import AbortSignal
from ..ai.types import TextContent
from .builtin_parameters import builtin_parameters
from .cards import CARDS
from .environment import Environment
from .mutation_queue import with_file_mutation_queue
from .read import check_abort, special_file_refusal

if TYPE_CHECKING:  # the models load with pydantic on the tool's first call (.params)
    from .params import WriteParams


def create_write_tool(env: Environment) -> ToolDefinition:
    """The ``write`` tool bound to ``env`` (all file access goes through it)."""

    async def execute(
        tool_call_id: str,
        params: WriteParams,
        signal: AbortSignal | None = None,
        on_update: OnUpdate | None = None,
        ctx: object = None,
    ) -> ToolResult:
        check_abort(signal)
        shown = params.path
        abs_path = env.resolve_path(params.path)
        try:
            data = params.content.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError(
                f"content contains a character that cannot be written as UTF-8 (an unpaired "
                f"surrogate at position {exc.start}). Remove it and call write again."
            ) from None

        async def mutate() -> ToolResult:
            created = not await env.exists(abs_path)
            if not created:
                st = await env.stat(abs_path)
                if st.is_dir:
                    raise IsADirectoryError(
                        f"{shown} is a directory; write needs a file path (e.g. {shown.rstrip('/')}/name.ext)."
                    )
                if not st.is_file:
                    raise special_file_refusal(shown, abs_path, st, writing=True)
            parent = os.path.dirname(abs_path)
            try:
                if parent:
                    await env.mkdir(parent)
            except (FileExistsError, NotADirectoryError):
                raise NotADirectoryError(
                    f"Cannot create the folder for {shown}: a part of {parent} is a file, not a "
                    "folder. Choose another path."
                ) from None
            check_abort(signal)
            try:
                await env.write_file(abs_path, data)
            except OSError as exc:
                raise OSError(f"Could not write {shown}: {exc.strerror or exc}.") from None
            return ToolResult(
                content=[TextContent(text=f"Successfully wrote {len(data)} bytes to {shown}")],
                details={"path": abs_path, "bytes": len(data), "created": created},
            )

        return await with_file_mutation_queue(abs_path, mutate)

    return ToolDefinition(
        name="write",
        label=CARDS['write'].label,
        description=CARDS['write'].description,
        parameters=builtin_parameters("write"),
        execute=execute,
        prompt_snippet=CARDS['write'].snippet,
        prompt_guidelines=list(CARDS['write'].guidelines),
    )
