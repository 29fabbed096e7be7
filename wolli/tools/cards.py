"""What the model is told about each built-in tool: label, description, prompt snippet, guidelines.

Kept apart from the tools' code so that a session can offer the tools (and write its system
prompt) without importing them: ``runtime/host/builtin_tools.py`` loads a tool's module on
its first call (the seven modules cost ~15-30 ms of every start).
"""

from __future__ import annotations

from .schemas import FIND_LIMIT, GREP_LIMIT, LS_LIMIT
from .truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    GREP_MAX_LINE_LENGTH,
    format_size,
)


class ToolCard:
    """The words of one built-in tool (see the module doc)."""

    __slots__ = ("description", "guidelines", "label", "snippet")

    def __init__(self, label: str, description: str, snippet: str, guidelines: list[str]) -> None:
        self.label = label
        self.description = description
        self.snippet = snippet
        self.guidelines = tuple(guidelines)


READ_DESCRIPTION = (
    "Read the contents of a file. Text files are returned as text; images (PNG, JPEG, GIF, "
    f"WebP) are returned as image attachments. Text output is truncated to {DEFAULT_MAX_LINES} "
    f"lines or {DEFAULT_MAX_BYTES // 1024}KB, whichever is hit first; the truncation notice "
    "gives the offset to continue from. Use offset and limit to read a part of a large file."
)

BASH_DESCRIPTION = (
    "Run a bash command in the current working directory and return its combined stdout and "
    f"stderr. Output is truncated to the last {DEFAULT_MAX_LINES} lines or "
    f"{format_size(DEFAULT_MAX_BYTES)}, whichever is hit first; when truncated, the full output "
    "is saved to a temp file whose path is given. Optionally pass a timeout in seconds. "
    "stdin is empty, so interactive commands will not wait for input."
)

BASH_PROMPT_SNIPPET = "Run shell commands (ls, rg, git, builds, tests, scripts)"

BASH_PROMPT_GUIDELINES = [
    "Use bash for file operations like ls, rg, find and for running builds, tests and scripts.",
    f"bash output is cut to its last {DEFAULT_MAX_LINES} lines or {format_size(DEFAULT_MAX_BYTES)}; "
    "read the saved full-output file, or filter with grep/head/tail, when you need more.",
    "Commands get no terminal and no stdin: pass non-interactive flags and set a timeout for "
    "anything that might run long; start servers in the background with output redirected.",
]

EDIT_DESCRIPTION = (
    "Edit a file by replacing exact text. Each edit's old_text must match exactly one place in "
    "the original file (include enough surrounding lines to make it unique) and edits must not "
    "overlap; all edits are applied together or none is. Small differences in trailing "
    "whitespace, quotes, dashes and spaces are tolerated, and line endings and a BOM are kept."
)

WRITE_DESCRIPTION = (
    "Write content to a file. Creates the file if it does not exist and overwrites it if it "
    "does; missing parent folders are created. Use it for new files or complete rewrites."
)

GREP_DESCRIPTION = (
    "Search file contents for a regex pattern. Respects .gitignore (and .ignore), includes "
    "hidden files, never searches .git/ or binary files. Output lines are `path:line: text` "
    "(context lines `path-line- text`), paths relative to the searched directory. Returns "
    f"at most {GREP_LIMIT} matches by default (change with limit); lines longer than "
    f"{GREP_MAX_LINE_LENGTH} characters are cut and output is capped at "
    f"{DEFAULT_MAX_BYTES // 1024}KB. The regex syntax is ripgrep's (Rust regex: no "
    "look-around or backreferences); without ripgrep installed, Python's re is used. "
    "Use literal=true to search for text containing regex characters."
)

FIND_DESCRIPTION = (
    "Find files and directories by glob pattern. A pattern without '/' matches names at any "
    "depth ('*.py'); with '/' it matches the path relative to the search directory at any "
    "depth ('src/*.py', '**/test_*.py'); a leading '/' anchors it to the search directory; a "
    "trailing '/' matches directories only. Respects .gitignore, includes hidden files, "
    "skips .git/. Returns sorted relative paths, directories ending in '/'. At most "
    f"{FIND_LIMIT} results by default (change with limit); output is capped at "
    f"{DEFAULT_MAX_BYTES // 1024}KB."
)

LS_DESCRIPTION = (
    "List the entries of a directory, sorted alphabetically (case-insensitive), directories "
    "ending in '/'. Includes dotfiles. At most "
    f"{LS_LIMIT} entries by default (change with limit); output is capped at "
    f"{DEFAULT_MAX_BYTES // 1024}KB."
)


CARDS: dict[str, ToolCard] = {
    "read": ToolCard(
        "Read",
        READ_DESCRIPTION,
        "Read file contents (text files in pages, images as attachments)",
        [
            "Use read to look at files instead of cat, head or sed in bash.",
            "When read says its output was truncated, call read again with the offset it names "
            "if you need the rest.",
        ],
    ),
    "bash": ToolCard(
        "bash",
        BASH_DESCRIPTION,
        BASH_PROMPT_SNIPPET,
        BASH_PROMPT_GUIDELINES,
    ),
    "edit": ToolCard(
        "Edit",
        EDIT_DESCRIPTION,
        "Make precise changes to files by exact text replacement",
        [
            "Use edit for changes to existing files: copy old_text exactly from read output and "
            "include enough context for it to match only once.",
            "Put several changes to one file into a single edit call (one entry in edits each) "
            "rather than many calls.",
            "Read a file before editing it, and re-read it when edit reports that old_text was "
            "not found.",
        ],
    ),
    "write": ToolCard(
        "Write",
        WRITE_DESCRIPTION,
        "Create or overwrite files",
        [
            "Use write only for new files or complete rewrites; change existing files with edit.",
        ],
    ),
    "grep": ToolCard(
        "Grep",
        GREP_DESCRIPTION,
        "Search file contents by regex (gitignore-aware, results as path:line: text)",
        [
            "Use grep to search file contents instead of running grep or rg in bash.",
            "Narrow a search with path and glob (e.g. glob='*.py') before raising limit.",
            "Use literal=true when the text you look for contains regex characters like ( [ . *",
        ],
    ),
    "find": ToolCard(
        "Find",
        FIND_DESCRIPTION,
        "Find files by glob pattern (gitignore-aware, sorted relative paths)",
        [
            "Use find to locate files by name instead of running find or ls -R in bash.",
            "Use '**/' in a pattern to match at any depth, e.g. '**/test_*.py'.",
        ],
    ),
    "ls": ToolCard(
        "ls",
        LS_DESCRIPTION,
        "List directory contents (sorted, directories marked with '/')",
        ["Use ls to see what a directory holds instead of running ls in bash."],
    ),
}
