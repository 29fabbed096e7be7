"""``wolli.ai.ask(question)``: a yes/no question to the current model (Amp's ``ai.ask``).

The model is asked to answer with one JSON object ``{"answer": "yes"|"no"|"uncertain",
"probability": 0..1, "reason": "..."}``; the first such object in its reply is read, and a
reply that holds none (or a failed request) comes back as ``uncertain`` with the reason, so
the caller always gets an :class:`AskResult` and never an exception for a model's mistake.
``probability`` is how likely the answer is ``yes``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..ai.types import Context, TextContent, UserMessage
from .host import ExtensionHost

if TYPE_CHECKING:
    from ..ai.types import Model

SYSTEM = (
    "You answer yes/no questions about a coding session. Reply with exactly one JSON object "
    'and nothing else: {"answer": "yes" | "no" | "uncertain", "probability": <0..1, how likely '
    'the answer is yes>, "reason": "<one short sentence>"}.'
)
_OBJECT = re.compile(r"\{.*?\}", re.DOTALL)


@dataclass(frozen=True)
class AskResult:
    result: str  # yes | no | uncertain
    probability: float
    reason: str

    def __getitem__(self, key: str) -> str | float:
        return getattr(self, key)


class AskService:
    """``wolli.ai``: questions to the active session's model (or the host's default)."""

    def __init__(self, host: ExtensionHost) -> None:
        self._host = host

    async def ask(self, question: str, *, context: str | None = None, model: Model | None = None) -> AskResult:
        from ..ai.stream import complete

        active = self._host.active
        chosen = model or (active.model if active is not None else None) or self._host.default_model()
        if chosen is None:
            return AskResult("uncertain", 0.5, "no model is available to ask")
        text = question if context is None else f"{context}\n\nQuestion: {question}"
        reply = await complete(
            chosen,
            Context(system_prompt=SYSTEM, messages=[UserMessage(content=text)]),
            {"api_key": self._host.get_api_key(chosen), "max_tokens": 300},
        )
        if reply.stop_reason in ("error", "aborted"):
            return AskResult("uncertain", 0.5, f"the model could not answer: {reply.error_message or reply.stop_reason}")
        return parse_answer("".join(b.text for b in reply.content if isinstance(b, TextContent)))


def parse_answer(text: str) -> AskResult:
    """The first JSON object with an ``answer`` in ``text``, made safe; else ``uncertain``."""
    for match in _OBJECT.finditer(text):
        try:
            data = json.loads(match.group(0))
        except ValueError:
            continue
        if not isinstance(data, dict) or "answer" not in data:
            continue
        answer = str(data.get("answer", "")).strip().lower()
        if answer not in ("yes", "no", "uncertain"):
            answer = "uncertain"
        default = {"yes": 1.0, "no": 0.0}.get(answer, 0.5)
        try:
            probability = min(1.0, max(0.0, float(data.get("probability", default))))
        except (TypeError, ValueError):
            probability = default
        return AskResult(answer, probability, str(data.get("reason") or ""))
    return AskResult("uncertain", 0.5, f"the model did not answer in the expected form: {text.strip()[:200]!r}")
