"""The question "may the agent do this?" and its answer: one typed shape for every front end.

A :class:`PermissionRequest` carries the exact call (tool, arguments, a one-line title and
the full text the user should read), why it asks, the narrowest rules that would cover it,
and the options, in the shape of ACP's ``session/request_permission`` (a tool call and a
list of options whose ``kind`` is ``allow_once``, ``allow_always``, ``reject_once`` or
``reject_always``), so an ACP front end maps it one to one. Wolli adds one option ACP has no
slot for: ``reject_with_message`` (kind ``reject_once``), whose text goes to the model.

The TUI draws its own dialog, the line mode its own prompt, RPC sends the request to a
client that opted in; :func:`ask_with_dialogs` builds the same exchange from the generic
``select``/``editor``/``input`` dialogs for any front end with nothing better.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

from ..ai.abort import AbortSignal

OptionKind = Literal["allow_once", "allow_always", "reject_once", "reject_always"]
# ACP's tool kinds, for front ends that show an icon per kind.
ToolKind = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other"]

ALLOW_ONCE = "allow_once"
ALLOW_ALWAYS = "allow_always"
REJECT_ONCE = "reject_once"
REJECT_WITH_MESSAGE = "reject_with_message"
REJECT_ALWAYS = "reject_always"


@dataclass(frozen=True)
class PermissionOption:
    option_id: str
    name: str  # the label shown
    kind: OptionKind

    def to_json(self) -> dict[str, Any]:
        return {"optionId": self.option_id, "name": self.name, "kind": self.kind}


@dataclass(frozen=True)
class PermissionToolCall:
    tool_call_id: str
    tool_name: str
    title: str  # one line: "bash: git diff --stat"
    kind: ToolKind
    raw_input: dict[str, Any]
    detail: str  # the exact call, as the user should read it (several lines)
    locations: tuple[str, ...] = ()  # absolute paths the call works on

    def to_json(self) -> dict[str, Any]:
        return {"toolCallId": self.tool_call_id, "toolName": self.tool_name, "title": self.title,
                "kind": self.kind, "rawInput": self.raw_input, "detail": self.detail,
                "locations": list(self.locations)}


@dataclass(frozen=True)
class PermissionRequest:
    tool_call: PermissionToolCall
    reason: str  # why it asks ("default mode asks before shell commands")
    suggested_rules: tuple[str, ...]  # what allow_always saves unless the user edits it
    options: tuple[PermissionOption, ...]
    mode: str = "default"

    def option(self, option_id: str) -> PermissionOption | None:
        return next((o for o in self.options if o.option_id == option_id), None)

    def to_json(self) -> dict[str, Any]:
        return {"toolCall": self.tool_call.to_json(), "reason": self.reason,
                "suggestedRules": list(self.suggested_rules), "options": [o.to_json() for o in self.options],
                "mode": self.mode}


@dataclass(frozen=True)
class PermissionAnswer:
    option_id: str
    kind: OptionKind
    rules: tuple[str, ...] = ()  # allow_always / reject_always: the rules to save (as edited)
    message: str | None = None  # reject_with_message: told to the model

    @property
    def allowed(self) -> bool:
        return self.kind in ("allow_once", "allow_always")

    @classmethod
    def cancelled(cls) -> PermissionAnswer:
        """Escape, a closed dialog, a timeout, no one there: the call does not run."""
        return cls(REJECT_ONCE, "reject_once")


def shown(text: str, *, lines: bool = False) -> str:
    """Text from the model made safe to show: control characters (terminal escapes among
    them) become visible symbols; with ``lines``, newlines and tabs stay."""
    keep = "\n\t" if lines else ""
    out = []
    for char in text:
        code = ord(char)
        if char in keep or not (code < 32 or code == 127 or 0x80 <= code < 0xA0):
            out.append(char)
        elif code < 32:
            out.append(chr(0x2400 + code))  # ␛ for ESC, ␀ for NUL...
        else:
            out.append("\ufffd")
    return "".join(out)


def standard_options(suggested: tuple[str, ...]) -> tuple[PermissionOption, ...]:
    always = shown(", ".join(suggested)) if suggested else "this tool"
    return (
        PermissionOption(ALLOW_ONCE, "Allow once", "allow_once"),
        PermissionOption(ALLOW_ALWAYS, f"Allow always: {always}", "allow_always"),
        PermissionOption(REJECT_ONCE, "Deny", "reject_once"),
        PermissionOption(REJECT_WITH_MESSAGE, "Deny, and tell the model why…", "reject_once"),
        PermissionOption(REJECT_ALWAYS, f"Deny always: {always}", "reject_always"),
    )


def answer_from_json(request: PermissionRequest, data: dict[str, Any]) -> PermissionAnswer:
    """An answer as a client sends it: ``{"optionId": ..., "rules"?: [...], "message"?: ...}``
    (or ``{"cancelled": true}``). Raises ``ValueError`` naming what is wrong."""
    if data.get("cancelled") is True:
        return PermissionAnswer.cancelled()
    option_id = data.get("optionId", data.get("option_id"))
    if not isinstance(option_id, str):
        raise ValueError("a permission answer needs 'optionId' (one of the request's options) or 'cancelled': true")
    option = request.option(option_id)
    if option is None:
        ids = ", ".join(o.option_id for o in request.options)
        raise ValueError(f"{option_id!r} is not an option of this request ({ids})")
    rules = data.get("rules")
    if rules is None:
        rules = list(request.suggested_rules)
    if not isinstance(rules, list) or not all(isinstance(r, str) for r in rules):
        raise ValueError("'rules' must be a list of rule strings")
    message = data.get("message")
    if message is not None and not isinstance(message, str):
        raise ValueError("'message' must be a string")
    keeps_rules = option.kind in ("allow_always", "reject_always")
    return PermissionAnswer(option.option_id, option.kind, tuple(rules) if keeps_rules else (), message or None)


T = TypeVar("T")


class DialogUI(Protocol):
    """The generic dialogs every ``ctx.ui`` has (what the fallback is built from)."""

    async def select(self, title: str, options: Sequence[T], *, timeout: float | None = None,
                     signal: AbortSignal | None = None) -> T | None: ...

    async def input(self, title: str, placeholder: str | None = None, *, timeout: float | None = None,
                    signal: AbortSignal | None = None) -> str | None: ...

    async def editor(self, title: str, prefill: str | None = None, *, timeout: float | None = None,
                     signal: AbortSignal | None = None) -> str | None: ...


async def ask_with_dialogs(ui: DialogUI, request: PermissionRequest, *, signal: AbortSignal | None = None) -> PermissionAnswer:
    """The permission question as a ``select`` (then an ``editor`` for the rules to save, or
    an ``input`` for the message): for front ends without a dialog of their own."""
    call = request.tool_call
    title = f"Allow {call.title}?  ({request.reason})\n{call.detail}"
    labels = [o.name for o in request.options]
    chosen = await ui.select(title, labels, signal=signal)
    if not isinstance(chosen, str) or chosen not in labels:
        return PermissionAnswer.cancelled()
    option = request.options[labels.index(chosen)]
    if option.kind in ("allow_always", "reject_always"):
        text = await ui.editor("Rules to save (one per line; edit them if you like)",
                               "\n".join(request.suggested_rules), signal=signal)
        if text is None:
            return PermissionAnswer.cancelled()
        rules = tuple(line.strip() for line in text.splitlines() if line.strip())
        return PermissionAnswer(option.option_id, option.kind, rules)
    if option.option_id == REJECT_WITH_MESSAGE:
        message = await ui.input("What should the model do instead?", signal=signal)
        return PermissionAnswer(option.option_id, option.kind, (), (message or "").strip() or None)
    return PermissionAnswer(option.option_id, option.kind)


@dataclass
class PromptText:
    """Text pieces front ends show for a request (kept in one place so they agree)."""

    heading: str
    body: str
    reason: str
    rules: list[str] = field(default_factory=list)


def prompt_text(request: PermissionRequest) -> PromptText:
    call = request.tool_call
    return PromptText(f"Allow {call.title}?", call.detail, request.reason, list(request.suggested_rules))


_DETAIL_LIMIT = 4000  # characters of a call shown in the dialog; the rest is summarised


def describe_call(tool_call_id: str, name: str, arguments: dict[str, Any], cwd: str) -> PermissionToolCall:
    """The exact call as the user should read it before saying yes."""
    import json

    from .policy import subject_path
    from .rules import EDIT_TOOLS, READ_TOOLS, SHELL_TOOLS

    path = subject_path(name, arguments, cwd) if name in READ_TOOLS | EDIT_TOOLS else None
    kind: ToolKind = "other"
    if name in SHELL_TOOLS:
        kind = "execute"
        command = str(arguments.get("command", ""))
        first = command.strip().splitlines()[0] if command.strip() else ""
        title = f"bash: {_short(first)}" + (" …" if command.strip().count("\n") else "")
        detail = command
        if arguments.get("timeout") is not None:
            detail += f"\n(timeout {arguments['timeout']} s)"
    elif name in EDIT_TOOLS:
        kind = "edit"
        title = f"{name} {arguments.get('path', '')}"
        if name == "write":
            content = str(arguments.get("content", ""))
            lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
            detail = f"write {path} ({lines} lines, {len(content.encode('utf-8', 'replace'))} bytes)\n\n{content}"
        else:
            parts = [f"edit {path}"]
            for index, edit in enumerate(arguments.get("edits") or [], start=1):
                if isinstance(edit, dict):
                    parts.append(f"--- change {index}: replace\n{edit.get('old_text', edit.get('oldText', ''))}"
                                 f"\n+++ with\n{edit.get('new_text', edit.get('newText', ''))}")
            detail = "\n".join(parts)
    elif name in READ_TOOLS:
        kind = "search" if name in ("grep", "find") else "read"
        title = f"{name} {arguments.get('path') or '.'}"
        detail = json.dumps(arguments, ensure_ascii=False, indent=1, default=str)
    else:
        kind = "fetch" if name.startswith("mcp__") and "fetch" in name else "other"
        title = name
        detail = json.dumps(arguments, ensure_ascii=False, indent=1, default=str)
    if len(detail) > _DETAIL_LIMIT:
        detail = detail[:_DETAIL_LIMIT] + f"\n… ({len(detail) - _DETAIL_LIMIT} more characters)"
    return PermissionToolCall(tool_call_id, name, _short(title, 100), kind, dict(arguments),
                              shown(detail, lines=True), (path,) if path else ())


def _short(text: str, limit: int = 80) -> str:
    one = shown(" ".join(text.split()))
    return one if len(one) <= limit else one[: limit - 1] + "…"
