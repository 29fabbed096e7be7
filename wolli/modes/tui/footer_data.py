"""The footer's figures, as the runtime reports them for the session shown (pure: no widgets)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .widgets.footer_bar import FooterData, git_branch

if TYPE_CHECKING:
    from ..interactive.client_runtime import SessionFigures


def fill_footer(data: FooterData, figures: SessionFigures | None) -> None:
    if figures is None:
        return
    data.tokens_in, data.tokens_out = figures.tokens_in, figures.tokens_out
    data.cache_read, data.cache_write, data.cost = figures.cache_read, figures.cache_write, figures.cost
    data.model = figures.model
    data.thinking = figures.thinking
    data.context_percent = figures.context_percent
    data.session_name = figures.session_name
    data.permission_mode = figures.permission_mode
    data.cwd = figures.cwd
    data.branch = git_branch(figures.cwd)  # a file read: a checkout during the session shows
