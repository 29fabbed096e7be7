"""The footer: where you are, what it costs, how full the context is, which model.

Two lines: ``~/project (main) · session name`` on the left and extension statuses on the
right; then tokens in/out, cache read/write, cost, context use (warning colour past 70%,
error colour past 90%), model and thinking level, and the permission mode unless it is
``default`` (with the key that cycles it). ``set_footer`` replaces it entirely.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from rich.text import Text
from textual.widgets import Static

from ....base.text_safety import one_line_safe
from ....config.keybindings import key_text
from ....permissions.modes import BADGES


def format_tokens(n: int) -> str:
    for size, unit in ((1_000_000, "M"), (1000, "k")):
        if n >= size:
            return f"{n / size:.1f}".removesuffix(".0") + unit
    return str(n)


def git_branch(cwd: str) -> str | None:
    """The checked-out branch, read from ``.git/HEAD`` (no subprocess on the first frame)."""
    path = Path(cwd).resolve()
    for folder in (path, *path.parents):
        head = folder / ".git"
        if head.is_file():  # a worktree or submodule: "gitdir: <path>"
            try:
                target = _small_text(head).strip().removeprefix("gitdir:").strip()
                head = (folder / target).resolve()
            except OSError:
                return None
        if (head / "HEAD").is_file():
            try:
                ref = _small_text(head / "HEAD").strip()
            except OSError:
                return None
            return ref.removeprefix("ref: refs/heads/") if ref.startswith("ref:") else ref[:8]
    return None


def _small_text(path: Path) -> str:
    """A few hundred bytes of a small file of the repository (never a device or a FIFO)."""
    from ....base.safe_files import read_head

    return read_head(path, 4096)[0].decode("utf-8", "replace")


def home_short(path: str) -> str:
    home = os.path.expanduser("~")
    if home not in ("", "/") and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home) :]
    return path


@dataclass
class FooterData:
    """What the footer shows: folder, branch, session, token and cost figures, model."""

    cwd: str = ""
    branch: str | None = None
    session_name: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0
    context_percent: float | None = None
    model: str = "no model"
    thinking: str | None = None
    permission_mode: str = "default"
    totals_pending: bool = False
    statuses: dict[str, str] = field(default_factory=dict)


class FooterBar(Static):
    DEFAULT_CLASSES = "footer-bar"

    def __init__(self) -> None:
        super().__init__("")
        self.data = FooterData()
        self.token_colors: dict[str, str | None] = {}  # theme tokens (muted, warning, error, accent)

    def refresh_data(self) -> None:
        self.update(self.render_text(), layout=False)  # two fixed lines

    def render_text(self) -> Text:
        d = self.data
        line = Text()
        # two rows, whatever a folder, session name, status or model name holds: a newline
        # or tab in one is shown as its picture rather than breaking the row
        line.append(one_line_safe(home_short(d.cwd)), style="bold")
        if d.branch:
            line.append(f" ({one_line_safe(d.branch)})", style=self._c("muted"))
        if d.session_name:
            line.append(f" · {one_line_safe(d.session_name)}")
        if d.statuses:
            line.append("   ")
            line.append(one_line_safe("  ".join(text for text in d.statuses.values() if text)))
        line.append("\n")
        badge = BADGES.get(d.permission_mode, d.permission_mode)
        if badge:
            token = "warning" if d.permission_mode in ("yolo", "accept-edits") else "accent"
            line.append(badge, style=self._c(token, "bold"))
            line.append(f" ({key_text('app.permissions.cycle') or '/permissions'})  ", style=self._c("dim"))
        if not d.totals_pending:  # a resumed session's totals come once its history is built
            parts = [f"↑{format_tokens(d.tokens_in)} ↓{format_tokens(d.tokens_out)}"]
            if d.cache_read or d.cache_write:
                parts.append(f"R{format_tokens(d.cache_read)} W{format_tokens(d.cache_write)}")
            parts.append(f"${d.cost:.3f}")
            line.append("  ".join(parts))
        if d.context_percent is not None:
            pct = d.context_percent
            style = self._c("error", "bold") if pct >= 90 else self._c("warning", "bold") if pct >= 70 else ""
            line.append("  ")
            line.append(f"{pct:.0f}% context", style=style)
        line.append("  ")
        line.append(one_line_safe(d.model), style=self._c("accent"))
        if d.thinking:
            line.append(f" · {d.thinking}")
        return line

    def _c(self, token: str, extra: str = "") -> str:
        return " ".join(p for p in (extra, self.token_colors.get(token) or "") if p)
