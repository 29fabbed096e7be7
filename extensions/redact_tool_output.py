"""Redact secrets from tool output before the model (or the session file) sees them.

Shows: the ``tool_result`` event returning a partial patch (``content`` only); the model
receives the patched result, ``details`` stay as the tool made them.
"""

import re

SECRET = re.compile(r"(?i)\b(api[_-]?key|token|password|secret)\s*[=:]\s*\S+")


def extension(wolli):
    def redact(event, ctx):
        changed = False
        content = []
        for block in event.content:
            text = getattr(block, "text", None)
            if text is not None and SECRET.search(text):
                content.append({"type": "text", "text": SECRET.sub(lambda m: m.group(1) + "=[redacted]", text)})
                changed = True
            else:
                content.append(block)
        return {"content": content} if changed else None

    wolli.on("tool_result", redact)
