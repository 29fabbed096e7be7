"""Print the shell command that follows ``<!-- NAME -->`` in README.md (its fenced block).

``.ci/run`` runs the README's test command through this, and a unit test checks that both
marked commands are there, so the README a newcomer follows is what CI runs.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_command(name: str, text: str | None = None) -> str:
    source = README.read_text("utf-8") if text is None else text
    match = re.search(rf"<!-- {re.escape(name)} -->\s*```[a-z]*\n(.*?)\n```", source, re.DOTALL)
    if match is None:
        raise SystemExit(f"README.md: no fenced command after <!-- {name} -->")
    lines = [line for line in match.group(1).splitlines() if line.strip()]
    if len(lines) != 1:
        raise SystemExit(f"README.md: the command after <!-- {name} --> must be one line, found {len(lines)}")
    return lines[0].strip()


if __name__ == "__main__":
    print(readme_command(sys.argv[1]))
