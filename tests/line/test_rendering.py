"""What the line mode writes: markdown rendered a line at a time in the theme's colours,
the unfinished line redrawn once complete, plain text appended only."""

from __future__ import annotations

import io
import re

from wolli.config.themes import builtin_theme
from wolli.modes.interactive import highlighting
from wolli.modes.line.markdown import MarkdownLines
from wolli.modes.line.streaming import StreamedBlock
from wolli.modes.line.terminal import Terminal, colour_wanted

SGR = re.compile(r"\x1b\[[0-9;]*m")


def _rgb(spec, token: str) -> str:
    hex_color = spec.color(token)
    return "38;2;" + ";".join(str(int(hex_color[i:i + 2], 16)) for i in (1, 3, 5))


def test_markdown_lines_in_theme_colours():
    spec = builtin_theme("dark")
    highlighting.active_theme = spec
    md = MarkdownLines(spec)
    heading = md.render("## Install it")
    assert SGR.sub("", heading) == "Install it" and _rgb(spec, "mdHeading") in heading
    assert SGR.sub("", md.render("- one `x` and **two**")) == "• one x and two"
    assert _rgb(spec, "mdCode") in md.render("use `pip`")
    assert SGR.sub("", md.render("see [docs](https://x.dev)")) == "see docs (https://x.dev)"
    assert SGR.sub("", md.render("> quoted")) == "│ quoted"
    assert SGR.sub("", md.render("snake_case_name stays")) == "snake_case_name stays"
    md.render("```python")
    keyword = md.render("def f():")
    assert _rgb(spec, "syntaxKeyword") in keyword and SGR.sub("", keyword) == "def f():"
    md.render('    s = """a')
    inside = md.render("still a string")  # highlighted with the block so far: a string continues
    assert _rgb(spec, "syntaxString") in inside
    md.render('"""')
    md.render("```")
    assert md.render("# after") != "# after"  # out of the block again


def test_the_unfinished_line_is_redrawn_rendered_on_a_colour_terminal():
    spec = builtin_theme("dark")
    out = io.StringIO()
    terminal = Terminal(out, colour=True, width=40)
    md = MarkdownLines(spec)
    block = StreamedBlock(terminal, md.render, lambda text: text)
    for piece in ("Some **bo", "ld** text", "\nnext"):
        block.feed(piece)
    block.finish()
    written = out.getvalue()
    assert written.startswith("Some **bold** text\r\x1b[J")  # shown raw, then erased...
    assert "Some \x1b[1mbold\x1b[22m text\n" in written  # ...and written again rendered
    assert written.endswith("next\r\x1b[Jnext\n")


def test_a_wrapped_unfinished_line_is_erased_from_its_first_row():
    terminal = Terminal(io.StringIO(), colour=True, width=10)
    terminal.write("x" * 25)
    terminal.erase_partial("x" * 25)
    assert terminal.stream.getvalue().endswith("\x1b[2A\r\x1b[J")


def test_plain_output_is_appended_exactly_as_it_streams():
    out = io.StringIO()
    terminal = Terminal(out, colour=False)
    block = StreamedBlock(terminal, MarkdownLines(builtin_theme("dark")).render, lambda text: text)
    for piece in ("Some **bo", "ld** text", "\nnext"):
        block.feed(piece)
    block.finish()
    assert out.getvalue() == "Some **bold** text\nnext\n"


def test_colour_only_on_a_terminal_without_no_color():
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert colour_wanted(Tty(), {"TERM": "xterm-256color"})
    assert not colour_wanted(Tty(), {"TERM": "xterm-256color", "NO_COLOR": "1"})
    assert not colour_wanted(Tty(), {"TERM": "dumb"})
    assert not colour_wanted(io.StringIO(), {"TERM": "xterm-256color"})
