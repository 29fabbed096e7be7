"""One-line configuration errors a user can act on: which file, where, what, what to do.

Every configuration file (``settings.json``, ``models.json``, ``auth.json``,
``keybindings.json``) reports its problems as ``path:line: field: problem; hint``. The line
of a field is found in the file's text (:func:`locate`), best effort: a problem whose key
cannot be found is still reported, without a line.
"""

from __future__ import annotations

import json
import os
import re

_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def config_error(
    path: str | os.PathLike[str],
    problem: str,
    *,
    line: int | None = None,
    column: int | None = None,
    field: str | None = None,
    hint: str | None = None,
) -> str:
    where = str(path)
    if line is not None:
        where += f":{line}" + (f":{column}" if column is not None else "")
    parts = [where, *([field] if field else []), problem]
    return ": ".join(parts) + (f"; {hint}" if hint else "")


def json_syntax_error(path: str | os.PathLike[str], exc: json.JSONDecodeError, hint: str) -> str:
    return config_error(path, f"not valid JSON ({exc.msg})", line=exc.lineno, column=exc.colno, hint=hint)


def locate(text: str, field: str) -> int | None:
    """The 1-based line where ``field`` (``providers.local.models[0].id``) is written.

    Walks the dotted path through the text: each key is searched as ``"key"`` after the
    previous one; a list index skips that many ``{`` openings. Good enough to point a person
    at the right line: the line of the deepest step found, None when not even the first is.
    """
    position = 0
    found: int | None = None
    for key, index in _STEP.findall(field):
        if key:
            match = re.compile(r'"' + re.escape(key) + r'"\s*:').search(text, position)
            if match is None:
                break
            position = match.start()
            found = position
            position = match.end()
        else:
            for _ in range(int(index) + 1):
                brace = text.find("{", position + 1)
                if brace < 0:
                    break
                position = brace
            found = position
    return None if found is None else text.count("\n", 0, found) + 1

