"""The session tree as lines to show in ``/tree`` (pure: entries in, rows out).

A conversation is mostly a chain, so a chain is drawn straight down and only a fork (an
entry with several children) indents, with ``├─``/``└─`` connectors for its branches. Rows
know whether they lie on the path to the active leaf, their label, and whether they are
folded. Filters hide bookkeeping entries; a hidden entry's children take its place, so the
shape of the tree survives any filter. Built without recursion: a 10,000-entry chain is
10,000 levels deep.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...session.entries import SessionEntry
    from ...session.manager import SessionTreeNode

FILTERS = ("default", "no-tools", "user", "labeled", "all")
FILTER_HELP = {
    "default": "conversation (no bookkeeping entries)",
    "no-tools": "conversation without tool calls and results",
    "user": "your messages only",
    "labeled": "labelled entries only",
    "all": "every entry",
}
_BOOKKEEPING = {"model_change", "thinking_level_change", "custom", "label", "session_info", "tags", "checkpoint"}
_NEVER = {"label", "tags"}  # shown on their targets / in the session, never as rows


@dataclass(frozen=True)
class TreeRow:
    entry_id: str
    prefix: str  # the connectors drawn before the text
    kind: str  # user | assistant | tool | bash | summary | custom | setting
    text: str  # one line
    label: str | None
    on_path: bool  # on the way from the root to the active leaf
    is_leaf: bool
    folded: bool  # has hidden children because the user folded it
    forks: bool  # has several children (a place to fold)


def _first_line(text: str, limit: int = 120) -> str:
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return " ".join(getattr(b, "text", "") or "" for b in content or [] if getattr(b, "type", None) == "text")


def describe(entry: Any) -> tuple[str, str]:
    """(kind, one-line text) of an entry."""
    kind = getattr(entry, "type", "")
    if kind == "message":
        message = entry.message
        role = getattr(message, "role", "")
        if role == "user":
            return "user", _first_line(content_text(message.content)) or "(image)"
        if role == "assistant":
            text = _first_line(content_text(message.content))
            calls = [b.name for b in message.content if getattr(b, "type", None) == "toolCall"]
            if getattr(message, "stop_reason", None) == "error":
                return "assistant", "error: " + _first_line(message.error_message or "")
            if text:
                return "assistant", text + (f"  [{', '.join(calls)}]" if calls else "")
            if calls:
                return "tool", "calls " + ", ".join(calls)
            return "assistant", "(thinking)" if message.content else "(empty)"
        if role == "toolResult":
            status = "error" if message.is_error else "ok"
            details = getattr(message, "details", None)
            if isinstance(details, dict) and details.get("sessionId") and details.get("subagent"):
                # A subagent's result: choosing it offers to open the child's own session.
                return "subagent", (f"↳ subagent {details['subagent']} {status}: "
                                    f"{_first_line(content_text(message.content), 80)}")
            return "tool", f"{message.tool_name} {status}: {_first_line(content_text(message.content), 80)}"
        if role == "bashExecution":
            return "bash", f"!{_first_line(message.command, 100)}"
        if role == "custom":
            return "custom", f"[{message.custom_type}] {_first_line(content_text(message.content), 80)}"
        return "custom", role
    if kind == "compaction":
        return "summary", f"compaction: {_first_line(entry.summary, 100)}"
    if kind == "branch_summary":
        return "summary", f"branch summary: {_first_line(entry.summary, 100)}"
    if kind == "model_change":
        return "setting", f"model {entry.provider}/{entry.model_id}"
    if kind == "thinking_level_change":
        return "setting", f"thinking {entry.thinking_level}"
    if kind == "session_info":
        return "setting", f"name {entry.name or '(cleared)'}"
    if kind == "custom":
        return "custom", f"[{entry.custom_type}] (extension data)"
    if kind == "checkpoint":
        count = len(entry.files)
        what = {"rewind": "rewind", "settle": "files after the run"}.get(entry.kind, f"checkpoint ({entry.kind})")
        return "setting", f"{what}: {count} file{'s' if count != 1 else ''}"
    if kind == "custom_message":
        return "custom", f"[{entry.custom_type}] {_first_line(content_text(entry.content), 80)}"
    return "setting", kind


def shown(entry: SessionEntry, kind: str, label: str | None, mode: str) -> bool:
    entry_type = getattr(entry, "type", "")
    if entry_type in _NEVER:
        return False
    if mode == "all":
        return True
    if mode == "labeled":
        return label is not None
    if mode == "user":
        return kind == "user"
    if entry_type in _BOOKKEEPING:
        return False
    return not (mode == "no-tools" and kind == "tool")


def tree_rows(roots: list[SessionTreeNode], leaf_id: str | None, path_ids: set[str], *, mode: str = "default",
              folded: set[str] | frozenset[str] = frozenset(), search: str = "",
              describe_entry: Callable[[Any], tuple[str, str]] | None = None) -> list[TreeRow]:
    """Rows for ``roots`` (SessionTreeNode: entry, children, label) in display order;
    ``describe_entry`` gives an entry's (kind, text) (default: :func:`describe`)."""
    described: dict[int, tuple[str, str]] = {}
    describe_one = describe_entry or describe

    def info(node: SessionTreeNode) -> tuple[str, str]:
        key = id(node)
        if key not in described:
            described[key] = describe_one(node.entry)
        return described[key]

    def display_children(node: SessionTreeNode | _Root) -> list[SessionTreeNode]:
        """The nearest shown descendants, hidden entries skipped (iteratively)."""
        out: list[SessionTreeNode] = []
        pending = list(reversed(node.children))
        while pending:
            child = pending.pop()
            if shown(child.entry, info(child)[0], child.label, mode):
                out.append(child)
            else:
                pending.extend(reversed(child.children))
        return out

    top = display_children(_Root(roots))
    rows: list[TreeRow] = []
    stack: list[tuple[Any, str, str]] = [(node, "", _connector(i, len(top))) for i, node in reversed(list(enumerate(top)))]
    needle = search.strip().lower()
    while stack:
        node, indent, connector = stack.pop()
        entry_id = node.entry.id
        kind, text = info(node)
        children = display_children(node)
        is_folded = entry_id in folded and bool(children)
        if not needle or needle in text.lower() or (node.label and needle in node.label.lower()):
            rows.append(TreeRow(entry_id, indent + connector, kind, text, node.label, entry_id in path_ids,
                                entry_id == leaf_id, is_folded, len(children) > 1))
        if is_folded or not children:
            continue
        inner = indent + {"├─ ": "│  ", "└─ ": "   "}.get(connector, "")
        if len(children) == 1:
            stack.append((children[0], inner, ""))
        else:
            for i in reversed(range(len(children))):
                stack.append((children[i], inner, _connector(i, len(children))))
    return rows


def _connector(index: int, count: int) -> str:
    if count <= 1:
        return ""
    return "└─ " if index == count - 1 else "├─ "


class _Root:
    """A stand-in parent for the tree's roots."""

    def __init__(self, children: list[SessionTreeNode]) -> None:
        self.children = children
