"""The built-in slash commands' :class:`~wolli.modes.interactive.commands.front.Front` in the line
mode: questions are prompts, pickers numbered lists printed into scrollback (narrowed by
typing words: fuzzy for models, name/first message/content for sessions), reports are
blocks of text. Session pickers cannot rename or delete here (the TUI's picker can)."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ..interactive.commands.front import SessionSource, TreeChoice
from ..interactive.fuzzy import fuzzy_score
from ..interactive.settings_form import SettingField, parse_value

if TYPE_CHECKING:
    from ...ai.types import Model
    from ...runtime.host.agent_host import AgentHost
    from ...runtime.live.live_session import LiveSession
    from ..interactive.tree_source import TreeSource
    from .output import LineOutput
    from .prompts import Prompter

R = TypeVar("R")


class LineClient(Protocol):
    """The line-mode client (:class:`~.repl.LineRepl`) as its commands see it."""

    quit_requested: bool

    @property
    def output(self) -> LineOutput: ...
    @property
    def prompter(self) -> Prompter: ...
    @property
    def host(self) -> AgentHost | None: ...
    @property
    def session(self) -> LiveSession | None: ...
    def apply_theme(self, name: str) -> None: ...
    async def while_working(self, work: Awaitable[R]) -> R: ...


def _age(modified: object) -> str:
    try:
        return f"{modified:%Y-%m-%d %H:%M}"
    except (TypeError, ValueError):
        return str(modified)


class LineFront:
    mode = "plain"
    shows_model_changes = True  # every model_select event is printed (output.py)
    shows_mode_changes = True  # and every permission_mode_change event

    def __init__(self, repl: LineClient) -> None:
        self.repl = repl

    @property
    def output(self) -> LineOutput:
        return self.repl.output

    @property
    def prompter(self) -> Prompter:
        return self.repl.prompter

    def notify(self, text: str, level: str = "info") -> None:
        self.output.notice(text, level)

    def show_text(self, title: str, text: str) -> None:
        heading = f"\x1b[1m{title}\x1b[22m" if self.output.terminal.colour else title
        self.output.print_line(heading + "\n" + "\n".join("  " + line for line in text.split("\n")), separate=True)

    def set_editor_text(self, text: str) -> None:
        self.prompter.set_editor_text(text)

    def copy_to_clipboard(self, text: str) -> str:
        from ..interactive.clipboard import copy_with_tool, osc52

        tool = copy_with_tool(text)
        if tool is not None:
            return tool
        if not self.output.terminal.colour:
            raise RuntimeError("no clipboard tool (xclip, wl-copy, pbcopy) and no terminal to ask (OSC 52)")
        self.output.terminal.write(osc52(text))
        return "the terminal (OSC 52)"

    def request_quit(self) -> None:
        self.repl.quit_requested = True

    def session_changed(self) -> None:
        session = self.repl.session
        self.output.session = session
        if session is not None:
            self.output.replay(list(session.messages))

    def settings_changed(self, changed: dict[str, Any]) -> None:
        if "hideThinkingBlock" in changed:
            self.output.show_thinking = not changed["hideThinkingBlock"]
        if "theme" in changed:
            self.repl.apply_theme(str(changed["theme"]))

    # ------------------------------------------------------------------ questions

    async def select(self, title: str, options: list[str]) -> str | None:
        index = await self.prompter.choose(title, [str(o) for o in options])
        return None if index is None else options[index]

    async def input(self, title: str, placeholder: str = "", *, secret: bool = False) -> str | None:
        return await self.prompter.text(title, default=placeholder if not secret else "", secret=secret)

    async def confirm(self, title: str, message: str) -> bool:
        return bool(await self.prompter.confirm(title, message))

    # ------------------------------------------------------------------ pickers

    async def pick_model(self, models: list[Model], current: Model | None, search: str) -> Model | None:
        keys = [f"{m.provider}/{m.id}" for m in models]
        order = sorted(range(len(models)), key=lambda i: keys[i])
        if search:
            order = _fuzzy(search, keys, order) or order
        labels = [keys[i] + (f"  {models[i].name}" if models[i].name and models[i].name != models[i].id else "")
                  for i in order]
        now = next((n for n, i in enumerate(order) if current is not None and models[i] is current), None)
        chosen = await self.prompter.choose("Model", labels, current=now,
                                            narrow=lambda q, shown: _fuzzy(q, labels, shown))
        return None if chosen is None else models[order[chosen]]

    async def pick_session(self, source: SessionSource) -> str | None:
        from ..interactive.session_search import content_matches, match_sessions, session_title

        sessions = source.list_here()
        if not sessions:
            self.notify("There are no other sessions in this folder yet.")
            return None
        labels = [f"{_age(info.modified)}  {session_title(info)[:70]}"
                  + ("  (open)" if info.path == source.current_file else "") for info in sessions]

        def narrow(query: str, shown: list[int]) -> list[int]:
            pool = [sessions[i] for i in shown]
            found = match_sessions(pool, query)
            found += content_matches(pool, query, exclude={info.path for info in found})
            index = {id(info): i for i, info in enumerate(sessions)}
            return [index[id(info)] for info in found]

        chosen = await self.prompter.choose("Resume which session? (newest first)", labels, narrow=narrow)
        return None if chosen is None else str(sessions[chosen].path)

    async def pick_tree_entry(self, tree: TreeSource) -> TreeChoice | None:
        rows = tree.rows()
        if not rows:
            self.notify("This session has no entries yet.")
            return None
        labels = [f"{row.prefix}{row.kind}: {row.text}" + (f"  [{row.label}]" if row.label else "")
                  + ("  ← here" if row.is_leaf else "") for row in rows]
        chosen = await self.prompter.choose("Go to which point of the session?", labels, limit=len(labels))
        return None if chosen is None else TreeChoice(rows[chosen].entry_id)

    async def edit_settings(self, fields: list[SettingField], values: dict[str, Any]) -> dict[str, Any] | None:
        """One setting at a time, until an empty answer: the changed values, or None."""
        changes: dict[str, Any] = {}
        while True:
            current = {**values, **changes}
            labels = [f"{f.label}: {_shown(current.get(f.key))}" + (f"  ({f.help})" if f.help else "") for f in fields]
            chosen = await self.prompter.choose("Settings (Enter on an empty answer saves)", labels, limit=len(labels))
            if chosen is None:
                return changes or None
            field = fields[chosen]
            raw: object
            if field.kind == "choice":
                pick = await self.prompter.choose(field.label, list(field.choices))
                raw = None if pick is None else field.choices[pick]
            elif field.kind == "bool":
                raw = not bool(current.get(field.key))
            else:
                raw = await self.prompter.text(field.label, default=_shown(current.get(field.key), ""))
            if raw is None:
                continue
            try:
                changes[field.key] = parse_value(field, raw)
            except ValueError as exc:
                self.notify(str(exc), "error")


def _shown(value: object, empty: str = "-") -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return empty if value is None or value == "" else str(value)


def _fuzzy(query: str, labels: list[str], shown: list[int]) -> list[int]:
    scored = [(score, i) for i in shown if (score := fuzzy_score(query, labels[i])) is not None]
    scored.sort(key=lambda pair: -pair[0])
    return [i for _, i in scored]
