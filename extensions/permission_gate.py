"""Permission gate: ask before dangerous shell commands (rm -rf, sudo, chmod 777, dd).

Shows: ``wolli.on("tool_call")`` returning ``{"block": True, "reason": ...}`` or, once the
user said yes, ``{"allow": True}`` (the call was approved here, so the built-in permission
question does not come a second time), and ``ctx.ui.confirm`` (headless modes cannot ask,
so the command is blocked there).
"""

import re

DANGEROUS = re.compile(r"\brm\s+-[a-zA-Z]*r[a-zA-Z]*f|\brm\s+-[a-zA-Z]*f[a-zA-Z]*r|\bsudo\b|\bchmod\s+(-R\s+)?777\b|\bdd\s+if=")


def extension(wolli):
    async def gate(event, ctx):
        if event.tool_name != "bash":
            return None
        command = str(event.input.get("command", ""))
        if not DANGEROUS.search(command):
            return None
        if await ctx.ui.confirm("Dangerous command", f"Allow this command?\n\n  {command}"):
            return {"allow": True}
        return {"block": True, "reason": f"The user did not allow this command: {command}"}

    wolli.on("tool_call", gate)
