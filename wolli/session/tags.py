"""Folding ``tags`` entries into a session's tags (no pydantic: listing uses it on raw JSON)."""

from __future__ import annotations

from typing import Any


def fold_tags(tags: dict[str, str], delta: dict[str, Any]) -> None:
    """Apply one ``tags`` entry to the folded tags: a value sets its key, ``None`` deletes it."""
    for key, value in delta.items():
        if value is None:
            tags.pop(key, None)
        elif isinstance(value, str):
            tags[key] = value
