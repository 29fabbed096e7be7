"""The built-in ``edit`` tool: exact text replacement, several blocks at once.

Matching and applying live in :mod:`edit_match` (pure functions); this module adds the
file around them: the mutation queue (the whole read-modify-write window), byte-exact
round trips (invalid UTF-8 bytes survive through ``surrogateescape``) and the older
argument shapes of resumed sessions.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..agent.tool import OnUpdate, ToolDefinition, ToolResult
from ..ai.abort import AbortSignal
from ..ai.types import TextContent
from .builtin_parameters import builtin_parameters
from .cards import CARDS
from .edit_match import apply_edits
from .environment import Environment
from .mutation_queue import with_file_mutation_queue
from .read import binary_refusal, check_abort, stat_existing_file

if TYPE_CHECKING:  # the models load with pydantic on the tool's first call (.params)
    from .params import EditParams


def prepare_edit_arguments(args: object) -> object:
    """Accept the older shapes: top-level ``old_text``/``new_text`` (or camelCase), camelCase
    keys inside ``edits``, and ``edits`` sent as a JSON string or a single object."""
    if not isinstance(args, dict):
        return args
    out = dict(args)
    edits = out.get("edits")
    if isinstance(edits, str):
        try:
            edits = json.loads(edits)
        except ValueError:
            return args
    if isinstance(edits, dict):
        edits = [edits]
    if isinstance(edits, list):
        edits = [_snake_edit(e) for e in edits]
    old = out.pop("old_text", out.pop("oldText", None))
    new = out.pop("new_text", out.pop("newText", None))
    if isinstance(old, str) and isinstance(new, str):
        edits = [*(edits if isinstance(edits, list) else []), {"old_text": old, "new_text": new}]
    elif old is not None or new is not None:
        return args  # half an old-style edit: let validation report it as it was sent
    if edits is not None:
        out["edits"] = edits
    return out


def _snake_edit(edit: object) -> object:
    if not isinstance(edit, dict):
        return edit
    fixed = dict(edit)
    for camel, snake in (("oldText", "old_text"), ("newText", "new_text")):
        if camel in fixed and snake not in fixed:
            fixed[snake] = fixed.pop(camel)
    return fixed


def create_edit_tool(env: Environment) -> ToolDefinition:
    """The ``edit`` tool bound to ``env`` (all file access goes through it)."""

    async def execute(
        tool_call_id: str,
        params: EditParams,
        signal: AbortSignal | None = None,
        on_update: OnUpdate | None = None,
        ctx: object = None,
    ) -> ToolResult:
        check_abort(signal)
        shown = params.path
        abs_path = env.resolve_path(params.path)

        async def mutate() -> ToolResult:
            await stat_existing_file(
                env, abs_path, shown,
                "To create a new file use write; otherwise check the path with ls or find.",
            )
            try:
                data = await env.read_file(abs_path)
            except OSError as exc:
                raise OSError(f"Could not read {shown}: {exc.strerror or exc}.") from None
            if b"\x00" in data:
                raise binary_refusal(shown, len(data), "it contains NUL bytes")
            # surrogateescape: bytes that are not UTF-8 are carried through untouched.
            text = data.decode("utf-8", "surrogateescape")
            result = apply_edits(text, params.edits, shown)
            check_abort(signal)
            try:
                await env.write_file(abs_path, result.content.encode("utf-8", "surrogateescape"))
            except UnicodeEncodeError as exc:
                raise ValueError(
                    f"new_text contains a character that cannot be written as UTF-8 (an unpaired "
                    f"surrogate, position {exc.start} of the new file). Remove it and retry."
                ) from None
            except OSError as exc:
                raise OSError(f"Could not write {shown}: {exc.strerror or exc}.") from None
            count = result.replacements
            return ToolResult(
                content=[TextContent(text=f"Successfully replaced {count} block(s) in {shown}.")],
                details={
                    "diff": _printable(result.diff),
                    "first_changed_line": result.first_changed_line,
                    "path": abs_path,
                    "lines_added": result.lines_added,
                    "lines_removed": result.lines_removed,
                    **({"diff_truncated": True} if result.diff_truncated else {}),
                },
            )

        return await with_file_mutation_queue(abs_path, mutate)

    return ToolDefinition(
        name="edit",
        label=CARDS['edit'].label,
        description=CARDS['edit'].description,
        parameters=builtin_parameters("edit"),
        execute=execute,
        prepare_arguments=prepare_edit_arguments,
        prompt_snippet=CARDS['edit'].snippet,
        prompt_guidelines=list(CARDS['edit'].guidelines),
    )


def _printable(text: str) -> str:
    """Session files are JSON: undecodable bytes carried as surrogates become U+FFFD."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
