"""Fuzzy matching for every picker and completion menu (commands, files, models, sessions)."""

from __future__ import annotations

from typing import Any

MAX_ITEMS = 50


def fuzzy_score(query: str, candidate: str) -> int | None:
    """A score (higher is better) when ``query``'s characters appear in order in
    ``candidate`` (case-insensitive), else None. Prefix, word-start and consecutive matches
    score higher, and shorter candidates win ties."""
    if not query:
        return 1000 - len(candidate)
    q, c = query.lower(), candidate.lower()
    if c.startswith(q):
        return 10_000 - len(c)
    score = 0
    at = 0
    previous = -2
    for char in q:
        found = c.find(char, at)
        if found < 0:
            return None
        if found == previous + 1:
            score += 15
        if found == 0 or c[found - 1] in "/_-. :":
            score += 10
        score -= found - at  # gaps cost
        previous = found
        at = found + 1
    if q in c:
        score += 50
    return score * 10 - len(c)


def rank(query: str, items: list[dict[str, Any]], key: str = "value") -> list[dict[str, Any]]:
    scored = [(s, i) for i in items if (s := fuzzy_score(query, str(i[key]))) is not None]
    scored.sort(key=lambda pair: -pair[0])
    return [item for _, item in scored[:MAX_ITEMS]]


__all__ = ["MAX_ITEMS", "fuzzy_score", "rank"]
