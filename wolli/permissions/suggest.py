"""The narrowest rule that covers a call: what "allow always" offers to save.

Narrow, but not so narrow that it never helps again:

- a shell command becomes ``Bash(<command>:*)`` for each part of the line, where
  ``<command>`` is the program and, for tools with subcommands, the subcommand
  (``git diff --stat HEAD`` -> ``Bash(git diff:*)``, ``npm run test -- -x`` ->
  ``Bash(npm run test:*)``); a part with no arguments is allowed exactly (``Bash(git
  status)``); a line no pattern can vouch for (``$(...)``, a loop, output into a file) is
  allowed exactly as it is;
- a file tool gets its own path, exactly (``Edit(src/app.py)``; outside the working
  directory ``Edit(~/notes.md)`` or ``Edit(//etc/hosts)``); a folder searched outside the
  project gets the folder and what is in it (``Read(//opt/lib/**)``);
- any other tool gets its name (``mcp__github__create_issue``).

The user sees the suggestion and may edit it before it is saved.
"""

from __future__ import annotations

import os
from typing import Any

from .bash_rules import command_core, escape_command
from .path_rules import Where, spellings
from .policy import subject_path
from .rules import EDIT_TOOLS, READ_TOOLS, SHELL_TOOLS
from .shell_words import parse_line

# Programs whose first argument is a subcommand worth keeping in the rule.
_SUBCOMMANDS = frozenset({
    "git", "npm", "pnpm", "yarn", "bun", "deno", "cargo", "go", "docker", "podman", "kubectl", "helm", "pip",
    "pip3", "uv", "poetry", "pdm", "hatch", "conda", "mamba", "gh", "glab", "brew", "apt", "apt-get", "dnf",
    "systemctl", "journalctl", "dotnet", "mvn", "gradle", "terraform", "aws", "gcloud", "az", "rustup",
    "mix", "bundle", "rails", "composer", "php", "swift", "xcodebuild", "flutter", "dart", "nx", "turbo",
    "make", "just", "task", "tox", "nox", "pre-commit", "ruff", "mypy",
})
# ... and whose subcommand ``run`` takes a script name worth keeping too.
_RUNNERS = frozenset({"npm", "pnpm", "yarn", "bun", "uv", "poetry", "pdm", "hatch", "deno", "cargo", "go",
                      "docker", "podman", "dotnet", "mix", "bundle"})


def suggest_rules(name: str, arguments: dict[str, Any], where: Where) -> list[str]:
    """The rules "allow always" offers for this call (one per part of a shell line)."""
    if name in SHELL_TOOLS:
        command = arguments.get("command")
        return _shell_rules(command if isinstance(command, str) else "")
    if name in READ_TOOLS | EDIT_TOOLS:
        path = subject_path(name, arguments, where.cwd)
        if path is None:
            return [_family(name)]
        real = spellings(path)[-1]  # allow rules look at what is really touched
        pattern = _path_pattern(real, where.resolved()) if real != path else _path_pattern(path, where)
        if name in ("grep", "find", "ls") and "\0" not in path and os.path.isdir(path):
            pattern = pattern.rstrip("/") + "/**"
        return [f"{_family(name)}({pattern})"]
    return [name]


def _family(name: str) -> str:
    return {"read": "Read", "grep": "Grep", "find": "Glob", "ls": "LS", "edit": "Edit", "write": "Write"}.get(
        name, name)


def _shell_rules(line: str) -> list[str]:
    parsed = parse_line(line)
    exact = [f"Bash({escape_command(line.strip())})"] if line.strip() and "\n" not in line.strip() else ["Bash"]
    if parsed.opaque or not parsed.commands:
        return exact
    out: list[str] = []
    for command in parsed.commands:
        if command.writes_file:
            return exact
        words = command_core(command)
        if not words or "=" in words[0].value.split("/")[0]:
            return exact  # ``X=1 cmd``: the assignment may change what runs
        prefix = _prefix(words)
        shown = escape_command(" ".join(w.raw for w in words[:prefix]))
        rule = f"Bash({shown})" if prefix == len(words) else f"Bash({shown}:*)"
        if rule not in out:
            out.append(rule)
    return out


def _prefix(words: list[Any]) -> int:
    """How many leading words name what runs (program, subcommand, script)."""
    program = words[0].value.rsplit("/", 1)[-1]
    if program not in _SUBCOMMANDS or len(words) < 2 or not _plain(words[1].value):
        return 1
    if program in _RUNNERS and words[1].value in ("run", "exec", "x") and len(words) > 2 and _plain(words[2].value):
        return 3
    return 2


def _plain(word: str) -> bool:
    return bool(word) and not word.startswith("-") and "/" not in word and "=" not in word


def _path_pattern(path: str, where: Where) -> str:
    escaped = _escape(path)
    cwd = where.cwd.rstrip("/")
    if path == where.cwd:
        return "./"
    if path.startswith(cwd + "/"):
        return _escape(path[len(cwd) + 1:])
    home = where.home.rstrip("/")
    if home and path == home:
        return "~"
    if home and path.startswith(home + "/"):
        return "~/" + _escape(path[len(home) + 1:])
    return "/" + escaped  # ``//abs``


def _escape(path: str) -> str:
    """Glob characters in a real path taken literally."""
    return "".join("\\" + c if c in "*?[]{}\\" else c for c in path)
