"""JSON read from outside (a config file, a session line, an RPC command): bad in one way only.

``json.loads`` raises ``RecursionError``, not ``JSONDecodeError``, for a value nested deeper
than the interpreter's recursion limit (``[[[[...]]]]`` a hundred thousand deep fits in a
few hundred KB). Code that catches ``JSONDecodeError``/``ValueError`` for "not valid JSON"
then let it escape as a traceback. :func:`parse_json` turns it into the error every caller
already handles.
"""

from __future__ import annotations

import json
from typing import Any


def parse_json(text: str | bytes | bytearray) -> Any:
    """``json.loads(text)``; a value nested too deeply is a ``json.JSONDecodeError`` too."""
    try:
        return json.loads(text)
    except RecursionError:
        doc = text if isinstance(text, str) else bytes(text).decode("utf-8", "replace")
        raise json.JSONDecodeError("nested too deeply", doc, 0) from None
