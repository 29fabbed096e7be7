"""Redact secrets the user pastes before they reach the model (or the session file).

Shows: the ``input`` event returning ``{"action": "transform", "text": ...}``; transforms
of several extensions chain in load order.
"""

import re

SECRET = re.compile(r"\b(sk-[A-Za-z0-9_-]{8,}|gh[pousr]_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16})\b")


def extension(wolli):
    def redact(event, ctx):
        cleaned = SECRET.sub("[redacted]", event.text)
        if cleaned != event.text:
            ctx.ui.notify("a secret was redacted from your message", "warning")
            return {"action": "transform", "text": cleaned}
        return None

    wolli.on("input", redact)
