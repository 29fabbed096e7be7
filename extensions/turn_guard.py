"""Turn guard: stop the whole turn (not just one call) when the model goes for the root.

Shows: ``tool_call`` returning ``{"abort": True, "reason": ...}`` (the turn ends, the
model is not asked again), a handler ``priority`` (runs before gates of priority 0), and
``wolli.shutdown()`` for the TUI when ``WOLLI_GUARD_EXIT=1`` is set.
"""

import os
import re

ROOT_WIPE = re.compile(r"\brm\s+-\w*\s+/(\s|$)|\bmkfs\b|:\(\)\s*\{")


def extension(wolli):
    def guard(event, ctx):
        if event.tool_name == "bash" and ROOT_WIPE.search(str(event.input.get("command", ""))):
            if os.environ.get("WOLLI_GUARD_EXIT") == "1":
                wolli.shutdown()
            return {"abort": True, "reason": "turn_guard stopped a command that would destroy the system"}
        return None

    wolli.on("tool_call", guard, priority=100)
