"""Protected paths: no writes to .env files, .git/, node_modules/ or lock files.

Shows: ``tool_call`` blocking by path, ``wolli.helpers.files_modified_by_tool_call`` (write,
edit, and shell redirects), and a prompt section telling the model the rule up front.
"""

from pathlib import PurePosixPath

PROTECTED_NAMES = {".env", "package-lock.json", "poetry.lock", "uv.lock"}
PROTECTED_DIRS = {".git", "node_modules"}


def is_protected(path: str) -> bool:
    parts = PurePosixPath(path).parts
    name = parts[-1] if parts else ""
    return name in PROTECTED_NAMES or name.startswith(".env.") or any(p in PROTECTED_DIRS for p in parts)


def extension(wolli):
    def guard(event, ctx):
        call = {"name": event.tool_name, "arguments": event.input}
        for path in wolli.helpers.files_modified_by_tool_call(call):
            if is_protected(path):
                return {"block": True, "reason": f"{path} is protected; ask the user to change it by hand"}
        return None

    wolli.on("tool_call", guard)
    wolli.register_prompt_section(
        "Protected files",
        "Never modify .env files, lock files, .git/ or node_modules/; they are protected.",
        order=10,
    )
