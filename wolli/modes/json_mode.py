"""``--mode json``: the session header, then every event as one JSON line on stdout."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from ..agent.events import to_jsonable


class JsonEventWriter:
    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout

    def write(self, value: Any) -> None:
        line = json.dumps(to_jsonable(value), ensure_ascii=False, separators=(",", ":"))
        self.out.write(line + "\n")
        self.out.flush()

    def __call__(self, event: Any) -> None:
        self.write(event)
