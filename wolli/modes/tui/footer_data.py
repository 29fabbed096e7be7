"""The footer's figures, as the runtime reports them for the session shown (pure: no widgets)."""

from __future__ import annotations

from ..interactive.client_runtime import SessionFigures
from .widgets.footer_bar import FooterData, git_branch


def fill_footer(data: FooterData, figures: SessionFigures | None) -> None:
    if figures is None:
        return
    # Every figure the runtime reports has a field of the same name in the footer's data.
    for name in SessionFigures.__dataclass_fields__:
        setattr(data, name, getattr(figures, name))
    data.branch = git_branch(figures.cwd)  # a file read: a checkout during the session shows
