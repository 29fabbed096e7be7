"""Permission modes: how much the agent may do before it has to ask.

``default``       reads run; edits, writes, shell commands and other tools ask.
``accept-edits``  edits and writes inside the project run too; shell commands still ask.
``plan``          nothing that changes files or runs commands; the model is told it plans.
``yolo``          everything runs (deny rules still hold; ask rules still ask).

Claude Code's spellings are accepted too (``acceptEdits``, ``bypassPermissions``), so its
``defaultMode`` can be pasted.
"""

from __future__ import annotations

from typing import Literal, cast

PermissionMode = Literal["default", "accept-edits", "plan", "yolo"]
MODES: tuple[PermissionMode, ...] = ("default", "accept-edits", "plan", "yolo")
# The key in the TUI walks these; ``yolo`` joins the ring only when the session started in it.
CYCLE: tuple[PermissionMode, ...] = ("default", "accept-edits", "plan")

_ALIASES: dict[str, PermissionMode] = {
    "default": "default",
    "accept-edits": "accept-edits",
    "acceptedits": "accept-edits",
    "accept_edits": "accept-edits",
    "plan": "plan",
    "yolo": "yolo",
    "bypasspermissions": "yolo",
    "bypass": "yolo",
}

DESCRIPTIONS: dict[str, str] = {
    "default": "reads run; edits, writes and shell commands ask",
    "accept-edits": "edits and writes inside the project run; shell commands ask",
    "plan": "planning only: nothing changes files or runs commands",
    "yolo": "everything runs without asking (deny rules still hold)",
}

# What the footer shows (nothing for ``default``: the usual state needs no badge).
BADGES: dict[str, str] = {
    "default": "",
    "accept-edits": "⏵⏵ accept edits",
    "plan": "⏸ plan mode",
    "yolo": "⚠ yolo",
}


class ModeError(ValueError):
    """Not a permission mode; the message lists the ones there are."""


def parse_mode(value: object) -> PermissionMode:
    """A mode from its name or an alias (case and ``_``/``-`` do not matter)."""
    if isinstance(value, str):
        found = _ALIASES.get(value.strip().lower())
        if found is not None:
            return found
    raise ModeError(f"{value!r} is not a permission mode; use one of {', '.join(MODES)}")


def next_mode(current: PermissionMode, *, with_yolo: bool = False) -> PermissionMode:
    """The mode after ``current`` in the key's ring (``yolo`` included when ``with_yolo``)."""
    ring = (*CYCLE, "yolo") if with_yolo else CYCLE
    if current not in ring:
        return ring[0]
    return cast(PermissionMode, ring[(ring.index(current) + 1) % len(ring)])
