"""How ``ModelRegistry.search`` ranks models for a query: match quality, version, dating."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .types import Model

NON_ALNUM = re.compile(r"[^a-z0-9]+")
NUMBER = re.compile(r"\d+")


def match_quality(query: str, model: Model) -> int:
    """3 the id contains the query (ignoring punctuation: ``sonnet-4.6`` finds ``sonnet-4-6``),
    2 the name does, 1 every word of the query appears, 0 no match."""
    model_id = model.id.lower()
    name = model.name.lower()
    squashed = NON_ALNUM.sub("", query)
    if query in model_id or (squashed and squashed in NON_ALNUM.sub("", model_id)):
        return 3
    if query in name or (squashed and squashed in NON_ALNUM.sub("", name)):
        return 2
    words = [w for w in NON_ALNUM.split(query) if w]
    haystack = f"{model.provider.lower()} {model_id} {name}"
    if words and all(w in haystack for w in words):
        return 1
    return 0


def version_of(model_id: str) -> tuple[int, ...]:
    """Version numbers in an id (``gpt-5.4-mini`` -> (5, 4)); sizes and dates are skipped."""
    lowered = model_id.lower()
    parts = []
    for match in NUMBER.finditer(lowered):
        digits = match.group()
        following = lowered[match.end(): match.end() + 1]
        after = lowered[match.end() + 1: match.end() + 2]
        is_size = following != "" and following in "bkme" and not after.isalpha()  # 70b, 128e
        if len(digits) >= 4 or is_size:
            continue
        parts.append(int(digits))
    return tuple(parts)


def is_dated(model_id: str) -> bool:
    return bool(re.search(r"(?:^|[-_@])\d{4}-?\d{2}-?\d{2}(?:$|[-_])|(?:^|-)\d{4}(?:$|-)", model_id))
