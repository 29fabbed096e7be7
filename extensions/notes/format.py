"""Helpers of the notes extension (imported relatively, re-imported on /reload)."""

PREFIX = "note"


def render_note(message, options, theme):
    return f"[{PREFIX}] {message.content}"


def summarize(notes):
    return f"{len(notes)} {PREFIX}(s): " + "; ".join(notes) if notes else f"no {PREFIX}s yet"
