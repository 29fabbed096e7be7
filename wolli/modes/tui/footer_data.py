"""The footer's figures, read from the active session (pure: no widgets)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...runtime.live.stats import session_stats
from .widgets.footer_bar import FooterData, git_branch

if TYPE_CHECKING:
    from ...runtime.live.live_session import LiveSession


def fill_footer(data: FooterData, session: LiveSession | None) -> None:
    if session is None:
        return
    stats = session_stats(session)
    data.tokens_in, data.tokens_out = stats.input_tokens, stats.output_tokens
    data.cache_read, data.cache_write, data.cost = stats.cache_read_tokens, stats.cache_write_tokens, stats.cost
    model = session.model
    data.model = f"{model.provider}/{model.id}" if model is not None else "no model (/login)"
    data.thinking = session.thinking_level if model is not None and getattr(model, "reasoning", False) else None
    try:
        data.context_percent = session.context_usage().get("percent")
    except Exception:
        data.context_percent = None
    try:
        data.session_name = session.session_manager.get_session_name()
    except Exception:
        data.session_name = None
    data.permission_mode = session.permissions.mode
    data.cwd = session.cwd
    data.branch = git_branch(session.cwd)  # a file read: a checkout during the session shows
