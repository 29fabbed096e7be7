"""Shell command patterns (``Bash(git diff:*)``) and how a command line meets them.

A pattern is matched against one *simple command* at a time, never against a whole line:

- ``git diff:*`` and ``git diff *`` (a final `` *`` or ``:*``) match ``git diff`` alone or
  followed by a space and anything (``git diff --stat``), not ``git diffx``;
- ``*`` elsewhere matches any run of characters (``git * main``); a pattern without ``*``
  matches the command exactly; ``*`` or an empty pattern matches every command.

**Allowing** is strict (:func:`line_allowed`): every simple command of the line must match
an allow pattern as written (quotes included), after taking away the harmless wrappers
``timeout``, ``nice``, ``nohup`` and ``time``; a command whose output goes into a file
(``> out``) matches no prefix pattern; and an *opaque* line (``$(...)``, backticks, loops, a
subshell: see :mod:`.shell_words`) matches no pattern at all, except a pattern without
``*`` that is exactly the whole line, which the user saw and approved as it is.

**Denying and asking** is generous (:func:`line_hits`): a pattern hits when it matches any
part that can be found, as written or unquoted, with the command's directory dropped
(``/bin/rm``), behind wrappers (``sudo``, ``env``, ``xargs``, ``exec``, ``command``...),
in ``find ... -exec``, inside ``$(...)``, backticks and ``bash -c '...'`` / ``eval`` text,
or the whole line.

A line longer than :data:`LONG_LINE` characters is not taken apart (that could take
seconds on a megabyte of commands): no pattern but an exact one allows it, and a deny or ask
pattern hits when its words before the first ``*`` appear anywhere in it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .shell_words import ParsedLine, SimpleCommand, Word, parse_line, strip_leading_keywords

# Wrappers that change nothing about what runs (only when, how nicely, how long).
_HARMLESS_WRAPPERS = frozenset({"timeout", "nice", "nohup", "time"})
# More wrappers deny rules look behind: what they run is the command that matters.
_RUNNING_WRAPPERS = frozenset({"sudo", "doas", "env", "command", "builtin", "exec", "xargs", "stdbuf", "setsid",
                               "chroot", "nsenter", "unbuffer", "ionice", "chrt", "flock", "watch", "strace"})
# Options of the wrappers above that take a separate value (``timeout -s KILL 5 cmd``).
_VALUE_OPTIONS = {
    "timeout": {"-s", "--signal", "-k", "--kill-after"},
    "nice": {"-n", "--adjustment"},
    "sudo": {"-u", "--user", "-g", "--group", "-C", "-D", "-h", "-p", "-r", "-t", "-U"},
    "xargs": {"-I", "-i", "-n", "-P", "-d", "-L", "-l", "-s", "-a", "-E", "-e", "--max-args",
              "--max-procs", "--delimiter", "--arg-file", "--replace"},
    "env": {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"},
    "stdbuf": {"-i", "-o", "-e"},
    "ionice": {"-c", "-n", "-p"},
    "chrt": {"-p"},
    "watch": {"-n", "--interval"},
    "strace": {"-e", "-o", "-p", "-s"},
}
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_MAX_DEPTH = 4
LONG_LINE = 20_000


@dataclass(frozen=True)
class CommandPattern:
    source: str
    regex: re.Pattern[str]
    wildcard: bool  # has a ``*`` (a pattern without one may match a whole opaque line)
    literal: str = ""  # the words before the first ``*`` (what a long line is searched for)


@lru_cache(maxsize=1024)
def compile_command_pattern(specifier: str | None) -> CommandPattern:
    """The matcher for a ``Bash(...)`` specifier (``None``: every command)."""
    source = " ".join((specifier or "").split())
    if source in ("", "*"):
        return CommandPattern(source or "*", re.compile(r".*", re.DOTALL), True)
    prefix_form = (source.endswith(":*") or source.endswith(" *")) and not source.endswith("\\*")
    body = source[:-2].rstrip() if prefix_form else source
    regex, wildcard = _translate(body)
    if prefix_form:
        regex += r"(?:\s.*)?"
    literal = re.split(r"(?<!\\)\*", body, maxsplit=1)[0].replace("\\*", "*").strip()
    return CommandPattern(source, re.compile(regex, re.DOTALL), prefix_form or wildcard, literal)


def _translate(body: str) -> tuple[str, bool]:
    """Regex for a pattern body: ``*`` any run of characters, ``\\*`` and ``\\\\`` literal."""
    out: list[str] = []
    wildcard = False
    i = 0
    while i < len(body):
        char = body[i]
        if char == "\\" and i + 1 < len(body) and body[i + 1] in "*\\":
            out.append(re.escape(body[i + 1]))
            i += 2
            continue
        if char == "*":
            out.append(".*")
            wildcard = True
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out), wildcard


def escape_command(text: str) -> str:
    """``text`` as a pattern that matches it literally (``*`` and ``\\`` escaped)."""
    return text.replace("\\", "\\\\").replace("*", "\\*")


def _strip_wrapper(words: list[Word], wrappers: frozenset[str]) -> list[Word] | None:
    """The words after one leading wrapper (and its options), or None when there is none."""
    if not words:
        return None
    name = _base(words[0].value)
    if name not in wrappers:
        return None
    takes_value = _VALUE_OPTIONS.get(name, set())
    i = 1
    while i < len(words):
        word = words[i].value
        if word == "--":
            i += 1
            break
        if name == "env" and _ASSIGNMENT.match(word):
            i += 1
            continue
        if word.startswith("-") and len(word) > 1:
            i += 2 if word in takes_value else 1
            continue
        break
    if name == "timeout" and i < len(words):
        i += 1  # the duration
    if name == "nice" and i < len(words) and words[i].value.lstrip("-").isdigit():
        i += 1
    if name in ("chroot", "flock") and i < len(words):
        i += 1  # the new root / the lock file
    return words[i:] if i < len(words) else None


def _base(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def command_core(command: SimpleCommand) -> list[Word]:
    words = strip_leading_keywords(command.words)
    while True:
        inner = _strip_wrapper(words, _HARMLESS_WRAPPERS)
        if inner is None:
            return words
        words = inner


def _text(words: list[Word]) -> str:
    return " ".join(w.raw for w in words)


def line_allowed(line: str, patterns: list[CommandPattern]) -> list[CommandPattern] | None:
    """The allow ``patterns`` that together vouch for every part of ``line`` (see the module
    doc), or None when some part is not covered."""
    if not patterns:
        return None
    whole = line.strip()  # literally: collapsing spaces could turn "a\nb" into a rule's "a b"
    for pattern in patterns:
        if not pattern.wildcard and pattern.regex.fullmatch(whole):
            return [pattern]
    if len(line) > LONG_LINE:
        return None
    parsed = parse_line(line)
    if parsed.opaque or not parsed.commands:
        return None
    used: list[CommandPattern] = []
    for command in parsed.commands:
        if command.writes_file:
            return None
        text = _text(command_core(command))
        found = next((p for p in patterns if p.regex.fullmatch(text)), None)
        if found is None:
            return None
        if found not in used:
            used.append(found)
    return used


def line_hits(line: str, patterns: list[CommandPattern]) -> CommandPattern | None:
    """The first of ``patterns`` (deny or ask) that hits any part of ``line``, or None."""
    if not patterns:
        return None
    texts = candidate_texts(line)
    for pattern in patterns:
        if hits_texts(pattern, line, texts):
            return pattern
    return None


def hits_texts(pattern: CommandPattern, line: str, texts: list[str]) -> bool:
    """``pattern`` against the ``candidate_texts`` of ``line`` (a long line: its words anywhere)."""
    if len(line) > LONG_LINE:
        return pattern.literal in " ".join(line.split())
    return any(pattern.regex.fullmatch(text) for text in texts)


def candidate_texts(line: str, depth: int = 0) -> list[str]:
    """Every spelling of every command the line may run (for deny and ask rules)."""
    out: list[str] = [" ".join(line.split())]
    if depth > _MAX_DEPTH or len(line) > LONG_LINE:
        return out
    parsed: ParsedLine = parse_line(line)
    for command in parsed.commands:
        for words in _variants(command.words):
            out.append(_text(words))
            out.append(" ".join(w.value for w in words))
            if words and "/" in words[0].value:
                out.append(" ".join([_base(words[0].value), *(w.value for w in words[1:])]))
            payload = _shell_payload(words)
            if payload is not None:
                out += candidate_texts(payload, depth + 1)
            for action in _find_actions(words):
                out += candidate_texts(action, depth + 1)
    for nested in parsed.nested:
        out += candidate_texts(nested, depth + 1)
    return out


def _variants(words: list[Word]) -> list[list[Word]]:
    """The command as written, then with keywords, assignments and each wrapper taken away."""
    out = [words]
    current = strip_leading_keywords(words)
    for _ in range(8):
        while current and _ASSIGNMENT.match(current[0].value):
            current = current[1:]
        out.append(current)
        inner = _strip_wrapper(current, _HARMLESS_WRAPPERS | _RUNNING_WRAPPERS)
        if inner is None:
            break
        current = inner
    return [w for w in out if w]


_FIND_RUNNERS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def _find_actions(words: list[Word]) -> list[str]:
    """The commands ``find ... -exec CMD {} ;`` runs (each up to its ``;`` or ``+``)."""
    if not words or _base(words[0].value) != "find":
        return []
    actions: list[str] = []
    i = 1
    while i < len(words):
        if words[i].value in _FIND_RUNNERS:
            end = i + 1
            while end < len(words) and words[end].value not in (";", "+"):
                end += 1
            if end > i + 1:
                actions.append(_text(words[i + 1:end]))
            i = end
        i += 1
    return actions


def _shell_payload(words: list[Word]) -> str | None:
    """The text ``bash -c '...'`` or ``eval ...`` runs, if ``words`` is such a command."""
    if not words:
        return None
    name = _base(words[0].value)
    if name == "eval":
        return " ".join(w.value for w in words[1:])
    if name in _SHELLS:
        for i, word in enumerate(words[1:], start=1):
            value = word.value
            if value.startswith("-") and not value.startswith("--") and "c" in value[1:]:
                return words[i + 1].value if i + 1 < len(words) else None
    return None
