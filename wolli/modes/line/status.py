"""The one-line status printed after each run: model, context use, tokens, cost, and the
statuses extensions set with ``ctx.ui.set_status``."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...runtime.live.live_session import LiveSession


def _tokens(n: float) -> str:
    for size, unit in ((1_000_000, "M"), (1000, "K")):
        if n >= size:
            return f"{n / size:.1f}".removesuffix(".0") + unit
    return str(int(n))


def status_parts(session: LiveSession | None, statuses: dict[str, str]) -> list[str]:
    if session is None:
        return []
    model = session.model
    if model is None:
        parts = ["no model (see --list-models)"]
    else:
        level = session.thinking_level if getattr(model, "reasoning", False) else None
        parts = [f"{model.provider}/{model.id}" + (f" ({level})" if level and level != "off" else "")]
    try:
        usage = session.context_usage()
    except Exception:  # figures are a courtesy: never fail a run over them
        usage = {}
    if usage.get("percent") is not None:
        parts.append(f"context {usage['percent']:.0f}% of {_tokens(usage['context_window'])}")
    from ...runtime.live.stats import session_stats

    stats = session_stats(session)
    tokens_in = stats.input_tokens + stats.cache_read_tokens
    if tokens_in or stats.output_tokens:
        parts.append(f"↑{_tokens(tokens_in)} ↓{_tokens(stats.output_tokens)}")
    parts.append(f"${stats.cost:.4f}" if stats.cost < 1 else f"${stats.cost:.2f}")
    mode = getattr(getattr(session, "permissions", None), "mode", "default")
    if mode != "default":
        parts.append(f"{mode} mode")
    parts += [text for _, text in sorted(statuses.items()) if text]
    return parts
