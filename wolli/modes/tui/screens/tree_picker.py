"""``/tree``: the session's whole tree, to move to another point of it.

The path to the active leaf is bright, the leaf marked ``●``; everything else is dim. Tab
cycles the filters (conversation, no tools, your messages, labelled, everything), typing
searches, ←/→ fold and unfold a fork while the search is empty, Ctrl+L labels the entry
(an empty label removes it). Enter chooses; what happens then is the command's business
(:func:`..interactive.commands.session.tree`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.binding import Binding

from ...interactive.commands.front import TreeChoice
from ...interactive.tree_rows import FILTER_HELP, FILTERS, TreeRow
from .picker_base import PickerScreen

if TYPE_CHECKING:
    from ...interactive.tree_source import TreeSource

KIND_STYLE = {"user": "bold", "assistant": "", "tool": "italic", "bash": "italic", "summary": "italic",
              "custom": "italic", "setting": "italic", "subagent": "italic"}


class TreePicker(PickerScreen):
    BINDINGS = [
        *PickerScreen.BINDINGS,
        Binding("tab", "next_filter", show=False, priority=True),
        Binding("left", "fold", show=False, priority=True),
        Binding("right", "unfold", show=False, priority=True),
        Binding("ctrl+l", "label", show=False, priority=True),
    ]
    HINT = "↑↓ move · Enter go there · Tab filter · ←→ fold · Ctrl+L label · type to search · Esc cancel"

    def __init__(self, tree: TreeSource) -> None:
        super().__init__("Session tree")
        self.source = tree
        self.mode = FILTERS[0]
        self.folded: set[str] = set()
        self.tree_rows: list[TreeRow] = []

    def rows(self, query: str) -> list[tuple[Text | str, Any]]:
        self.tree_rows = self.source.rows(mode=self.mode, folded=self.folded, search=query)
        self._update_title()
        return [(self._label(row), row.entry_id) for row in self.tree_rows]

    def _label(self, row: TreeRow) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(row.prefix, style="dim")
        text.append("● " if row.is_leaf else ("▸ " if row.folded else ""), style="bold")
        style = KIND_STYLE.get(row.kind, "")
        if row.kind == "user":
            text.append("you: ", style="bold")
        text.append(row.text, style=style if row.on_path else f"dim {style}".strip())
        if row.label:
            text.append(f"  [{row.label}]", style="bold reverse")
        return text

    def _update_title(self) -> None:
        for title in self.query(".dialog-title"):
            title.update(f"Session tree — {self.mode}: {FILTER_HELP[self.mode]}")  # type: ignore[attr-defined]

    def initial_index(self) -> int:
        leaf = self.source.leaf_id()
        ids = [row.entry_id for row in self.tree_rows]
        if leaf in ids:
            return ids.index(leaf)
        on_path = [i for i, row in enumerate(self.tree_rows) if row.on_path]
        return on_path[-1] if on_path else max(0, len(ids) - 1)

    def choose(self, value: object) -> None:
        if isinstance(value, str):  # an entry id
            self.close(TreeChoice(value))

    # ------------------------------------------------------------------ actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("fold", "unfold") and self.search.value:
            return False  # ←/→ move the cursor in the search text then
        return True

    def action_next_filter(self) -> None:
        self.mode = FILTERS[(FILTERS.index(self.mode) + 1) % len(FILTERS)]
        self.refill(keep=self.highlighted_value())

    def _row(self) -> TreeRow | None:
        index = self.results.highlighted
        return self.tree_rows[index] if index is not None and 0 <= index < len(self.tree_rows) else None

    def action_fold(self) -> None:
        row = self._row()
        if row is None:
            return
        if row.forks and not row.folded:
            self.folded.add(row.entry_id)
            self.refill(keep=row.entry_id)
            return
        # Not a fork: go to the fork this row hangs from (the nearest row above with less indent).
        index = self.results.highlighted or 0
        for above in range(index - 1, -1, -1):
            if self.tree_rows[above].forks and len(self.tree_rows[above].prefix) < len(row.prefix):
                self.results.highlighted = above
                return

    def action_unfold(self) -> None:
        row = self._row()
        if row is not None and row.entry_id in self.folded:
            self.folded.discard(row.entry_id)
            self.refill(keep=row.entry_id)

    def action_label(self) -> None:
        from .input_dialog import InputDialog

        row = self._row()
        if row is None:
            return

        def labelled(label: str | None) -> None:
            if label is None:
                return
            self.source.set_label(row.entry_id, label.strip() or None)
            self.refill(keep=row.entry_id)

        self.app.push_screen(InputDialog("Label this entry (empty removes the label)", value=row.label or ""),
                             callback=labelled)
