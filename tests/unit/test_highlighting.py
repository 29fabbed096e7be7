"""highlight_code / get_language_from_path for extension renderers (no Textual needed)."""

from __future__ import annotations

import re
import subprocess
import sys

from wolli import get_language_from_path, highlight_code
from wolli.config.themes import builtin_theme


def test_languages_come_from_the_file_name():
    assert get_language_from_path("/x/main.rs") == "rust"
    assert get_language_from_path("app.py") == "python"
    assert get_language_from_path("notes.unknownext") is None


def test_lines_are_coloured_with_the_theme_syntax_tokens():
    lines = highlight_code("def add(a, b):\n    return a + b\n", "python")
    assert len(lines) == 2
    keyword = builtin_theme("dark").color("syntaxKeyword")
    r, g, b = (int(keyword[i : i + 2], 16) for i in (1, 3, 5))
    assert f"\x1b[38;2;{r};{g};{b}mdef" in lines[0]
    assert re.sub(r"\x1b\[[0-9;]*m", "", lines[1]) == "    return a + b"
    assert highlight_code("plain\ntext", "no-such-language") == ["plain", "text"]


def test_importing_the_helpers_does_not_import_textual():
    code = "import sys, wolli; wolli.highlight_code('x = 1', 'python'); print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
