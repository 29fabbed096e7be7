"""A shell command line taken apart far enough to judge it against permission rules.

Not a shell: a careful reader of the POSIX/bash surface syntax that says, for a command line
the model wants to run, which *simple commands* it holds (``git diff && rm -rf x`` is two),
how each is spelled, and whether anything in it escapes a reading by pattern: command
substitution (``$(...)``, backticks), process substitution, ``eval``-like indirection,
loops and conditionals, or output redirected into a file. Such a line is *opaque*: no allow
rule can vouch for it (it asks), while deny and ask rules still look inside every part that
can be found, including the text of ``$(...)`` and of ``bash -c '...'``.

Quotes and escapes are honoured (``find . -exec rm {} \\;`` is one command), here-document
bodies are skipped, comments end at the line's end. Anything the reader cannot follow
(an unclosed quote) makes the line opaque rather than guessed at.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Operators that end a simple command.
_OPERATORS = ("&&", "||", "|&", ";;", ";", "|", "&", "\n")
# Words that open or continue a compound statement: what follows them is a command, but a
# line using them is more than a list of commands (a loop runs its body many times...).
_KEYWORDS = frozenset({"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done",
                       "case", "esac", "select", "function", "in", "!", "{", "}", "[[", "]]"})
# Keywords after which a command follows directly (``then rm x``, ``do echo``).
_LEADING_KEYWORDS = frozenset({"then", "else", "elif", "do", "if", "while", "until", "!", "{"})
# Redirection targets that write nothing anyone keeps.
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})


@dataclass
class Word:
    raw: str  # as written, quotes included
    value: str  # with quotes and escapes taken away (substitutions left as written)


@dataclass
class SimpleCommand:
    """One command of a line, without the operators around it."""

    words: list[Word]
    # Output goes into a file (``> out``, ``>> log``, ``&> x``; not ``2>&1`` or ``/dev/null``).
    writes_file: bool = False
    # Text of redirections, kept for deny rules (``rm x > /dev/null`` is still ``rm x``).
    redirections: list[str] = field(default_factory=list)

    @property
    def raw(self) -> str:
        return " ".join(w.raw for w in self.words)

    @property
    def value(self) -> str:
        return " ".join(w.value for w in self.words)


@dataclass
class ParsedLine:
    commands: list[SimpleCommand] = field(default_factory=list)
    # Texts run by the line that are not among ``commands``: inside ``$(...)``, backticks,
    # ``<(...)``; each is a command line of its own.
    nested: list[str] = field(default_factory=list)
    # Why no pattern can vouch for this line (empty when it is a plain list of commands).
    opaque_reasons: list[str] = field(default_factory=list)

    @property
    def opaque(self) -> bool:
        return bool(self.opaque_reasons)


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.line = ParsedLine()
        self.current: list[Word] = []
        self.redirs: list[str] = []
        self.writes = False
        self.heredocs: list[tuple[str, bool]] = []  # (delimiter, strip tabs) pending at newline
        self.expect_target: str | None = None  # the redirection operator whose target comes next

    # ------------------------------------------------------------------ helpers

    def opaque(self, reason: str) -> None:
        if reason not in self.line.opaque_reasons:
            self.line.opaque_reasons.append(reason)

    def peek(self, offset: int = 0) -> str:
        j = self.i + offset
        return self.text[j] if j < len(self.text) else ""

    def end_command(self) -> None:
        if self.expect_target is not None:  # ``cmd >`` with nothing after: leave it to bash
            self.redirs.append(self.expect_target)
            self.expect_target = None
        if self.current:
            self.line.commands.append(SimpleCommand(self.current, self.writes, self.redirs))
        elif self.redirs and self.writes:  # ``> file`` alone truncates a file
            self.line.commands.append(SimpleCommand([Word(":", ":")], True, self.redirs))
        self.current, self.redirs, self.writes = [], [], False

    # ------------------------------------------------------------------ the walk

    def run(self) -> ParsedLine:
        text = self.text
        while self.i < len(text):
            char = text[self.i]
            if char == "\n":
                self.end_command()
                self.i += 1
                self.skip_heredocs()
                continue
            if char in " \t\r":
                self.i += 1
                continue
            if char == "\\" and self.peek(1) == "\n":  # a line continuation
                self.i += 2
                continue
            if char == "#" :
                end = text.find("\n", self.i)
                self.i = len(text) if end < 0 else end
                continue
            operator = self.operator()
            if operator is not None:
                if operator in ("(", ")"):
                    self.opaque("a subshell or group")
                self.end_command()
                continue
            redirect = self.redirection()
            if redirect is not None:
                continue
            word = self.word()
            if word is None:
                return self.line
            if self.expect_target is not None:
                self.finish_redirection(word)
                continue
            self.current.append(word)
        self.end_command()
        return self.line

    def operator(self) -> str | None:
        text = self.text
        for op in _OPERATORS:
            if text.startswith(op, self.i):
                if op == "&" and text.startswith("&>", self.i):
                    return None  # ``&> file``: a redirection
                if op == "|" and self.peek(1) == "|":
                    continue
                self.i += len(op)
                return op
        char = self.peek()
        if char in "()" and not (char == "(" and self.current and self.current[-1].raw.endswith("=")):
            if char == "(" and not self.current:
                self.i += 1
                return "("
            if char == ")":
                self.i += 1
                return ")"
        return None

    def redirection(self) -> str | None:
        """A redirection operator at the cursor (with an optional fd number before it)."""
        text, start = self.text, self.i
        j = start
        while j < len(text) and text[j].isdigit():
            j += 1
        if text.startswith("&>>", j) or text.startswith("&>", j):
            op_len = 3 if text.startswith("&>>", j) else 2
            kind = ">"
        elif j < len(text) and text[j] in "<>":
            if text.startswith("<(", j) or text.startswith(">(", j):
                return None  # process substitution: a word
            op_len = 1
            while j + op_len < len(text) and text[j + op_len] in "<>|&-" and op_len < 3:
                op_len += 1
            kind = text[j]
        else:
            return None
        if j != start and not text[start:j].isdigit():
            return None
        op = text[start:j + op_len]
        self.i = j + op_len
        if op.endswith(("<<", "<<-")) and not op.endswith("<<<"):
            self.expect_target = op  # a here-document: the delimiter comes next
            return op
        if op.endswith("&") or op.endswith("&-"):
            # ``2>&1``, ``>&2``, ``<&-``: a duplication; its target is an fd number or ``-``.
            self.expect_target = op
            return op
        self.expect_target = op if kind in "<>" else None
        return op

    def finish_redirection(self, target: Word) -> None:
        op = self.expect_target or ""
        self.expect_target = None
        self.redirs.append(f"{op} {target.raw}".strip())
        if op.endswith(("<<", "<<-")):
            self.heredocs.append((target.value, op.endswith("-")))
            return
        if op.endswith("&") or op.endswith("&-") or op.endswith("<<<"):
            # A duplication only when the word *as written* is a number (bash decides before
            # it takes quotes away: ``>&1\`` writes a file named ``1``).
            if ">" in op and not (target.raw.isdigit() or target.raw == "-"):
                self.writes = True  # ``>& file`` is ``&> file``
            return
        if ">" in op and target.value not in _HARMLESS_TARGETS:
            self.writes = True

    def skip_heredocs(self) -> None:
        """The bodies of here-documents opened on the line that just ended."""
        while self.heredocs:
            delimiter, strip = self.heredocs.pop(0)
            while self.i < len(self.text):
                end = self.text.find("\n", self.i)
                line = self.text[self.i:] if end < 0 else self.text[self.i:end]
                self.i = len(self.text) if end < 0 else end + 1
                if (line.lstrip("\t") if strip else line) == delimiter:
                    break

    def word(self) -> Word | None:
        """One word (quotes, escapes, substitutions inside it); None at an unclosed quote."""
        text = self.text
        start = self.i
        value: list[str] = []
        while self.i < len(text):
            char = text[self.i]
            if char in " \t\r\n;&|" or (char in "<>" and not text.startswith(("<(", ">("), self.i)):
                break
            if char == ")" or (char == "(" and not (value and value[-1].endswith(("=", "@", "?", "*", "+", "!")))):
                if char == ")" or value:
                    break
            if char == "\\":
                if self.i + 1 < len(text):
                    value.append(text[self.i + 1])
                self.i += 2
            elif char == "'":
                end = text.find("'", self.i + 1)
                if end < 0:
                    self.opaque("an unclosed quote")
                    return None
                value.append(text[self.i + 1:end])
                self.i = end + 1
            elif char == '"':
                inner = self.double_quoted()
                if inner is None:
                    self.opaque("an unclosed quote")
                    return None
                value.append(inner)
            elif char == "$" and self.peek(1) == "(":
                inner_text = self.balanced(self.i + 1)
                if inner_text is None:
                    self.opaque("an unclosed $(")
                    return None
                if inner_text.startswith("(") and inner_text.endswith(")"):
                    self.opaque("arithmetic expansion")  # ``$((...))``
                else:
                    self.line.nested.append(inner_text)
                    self.opaque("command substitution")
                value.append("$(" + inner_text + ")")
            elif char == "`":
                end = self.backtick_end(self.i)
                if end < 0:
                    self.opaque("an unclosed backtick")
                    return None
                self.line.nested.append(text[self.i + 1:end].replace("\\`", "`"))
                self.opaque("command substitution")
                value.append(text[self.i:end + 1])
                self.i = end + 1
            elif char in "<>" and self.peek(1) == "(":
                inner_text = self.balanced(self.i + 1)
                if inner_text is None:
                    self.opaque("an unclosed process substitution")
                    return None
                self.line.nested.append(inner_text)
                self.opaque("process substitution")
                value.append(char + "(" + inner_text + ")")
            elif char == "$" and self.peek(1) == "{":
                end = text.find("}", self.i)
                if end < 0:
                    self.opaque("an unclosed ${")
                    return None
                chunk = text[self.i:end + 1]
                if "$(" in chunk or "`" in chunk:
                    self.opaque("command substitution")
                value.append(chunk)
                self.i = end + 1
            else:
                value.append(char)
                self.i += 1
        if self.i == start:  # a lone character no rule above took (a stray ``(``)
            self.i += 1
            return Word(text[start], text[start])
        return Word(text[start:self.i], "".join(value))

    def double_quoted(self) -> str | None:
        text = self.text
        self.i += 1
        out: list[str] = []
        while self.i < len(text):
            char = text[self.i]
            if char == '"':
                self.i += 1
                return "".join(out)
            if char == "\\" and self.i + 1 < len(text) and text[self.i + 1] in '$`"\\\n':
                out.append(text[self.i + 1])
                self.i += 2
            elif char == "$" and self.peek(1) == "(":
                inner = self.balanced(self.i + 1)
                if inner is None:
                    return None
                if not (inner.startswith("(") and inner.endswith(")")):
                    self.line.nested.append(inner)
                self.opaque("command substitution")
                out.append("$(" + inner + ")")
            elif char == "`":
                end = self.backtick_end(self.i)
                if end < 0:
                    return None
                self.line.nested.append(text[self.i + 1:end])
                self.opaque("command substitution")
                out.append(text[self.i:end + 1])
                self.i = end + 1
            else:
                out.append(char)
                self.i += 1
        return None

    def backtick_end(self, start: int) -> int:
        j = start + 1
        while j < len(self.text):
            if self.text[j] == "\\":
                j += 2
                continue
            if self.text[j] == "`":
                return j
            j += 1
        return -1

    def balanced(self, open_at: int) -> str | None:
        """The text between the ``(`` at ``open_at`` and its ``)``; moves past it."""
        text = self.text
        depth = 0
        j = open_at
        while j < len(text):
            char = text[j]
            if char == "\\":
                j += 2
                continue
            if char == "'":
                end = text.find("'", j + 1)
                if end < 0:
                    return None
                j = end + 1
                continue
            if char == '"':
                k = j + 1
                while k < len(text) and text[k] != '"':
                    k += 2 if text[k] == "\\" else 1
                if k >= len(text):
                    return None
                j = k + 1
                continue
            if char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
                if depth == 0:
                    self.i = j + 1
                    return text[open_at + 1:j]
            j += 1
        return None


def parse_line(text: str) -> ParsedLine:
    """The simple commands of ``text`` and what makes it opaque (see the module docstring)."""
    line = _Reader(text).run()
    for command in line.commands:
        first = command.words[0].value if command.words else ""
        if first in _KEYWORDS:
            line.opaque_reasons.append(f"the shell keyword {first!r}")
            break
    return line


def strip_leading_keywords(words: list[Word]) -> list[Word]:
    """``then rm x`` -> ``rm x`` (the command a compound statement runs)."""
    out = list(words)
    while out and out[0].value in _LEADING_KEYWORDS:
        out.pop(0)
    return out
