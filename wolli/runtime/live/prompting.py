"""Pure steps of the prompt pipeline: command lines, expansion, messages from handler data.

The pipeline itself (``LiveSession.prompt``) runs, in order: extension command ->
``input`` handlers -> skill/template expansion -> queue when busy -> ``before_agent_start``
-> the run -> ``agent_end`` follow-ups. The steps that need no session state live here.
"""

from __future__ import annotations

from typing import Any

from ...agent.messages import CustomMessage
from ...base.records import record
from ..resources.loading import ResourceSet, expand_prompt_template, expand_skill

# An agent_end handler may ask for another turn; this many in a row at most, so two
# extensions that keep asking each other cannot loop forever.
MAX_AGENT_END_FOLLOW_UPS = 3


def split_command(text: str) -> tuple[str, str] | None:
    """``/name args`` -> (name, args); None when ``text`` is not a slash command."""
    if not text.startswith("/") or text.startswith("//"):
        return None
    body = text[1:]
    end = next((i for i, ch in enumerate(body) if ch.isspace()), len(body))
    head, rest = body[:end], body[end + 1:]
    return (head, rest) if head else None


def expand_input(resources: ResourceSet, text: str) -> str:
    """``/skill:name args`` and ``/template args`` expansion; anything else passes through."""
    parsed = split_command(text)
    if parsed is None:
        return text
    head, rest = parsed
    if head.startswith("skill:"):
        for skill in resources.skills:
            if skill.name == head[6:]:
                return expand_skill(skill, rest)
        return text
    for template in resources.prompts:
        if template.name == head:
            return expand_prompt_template(template, rest)
    return text


def to_custom_message(value: object) -> CustomMessage:
    """A message handed over by extension code: a CustomMessage, or a dict of its fields
    (``custom_type`` or ``customType``, ``content``, ``display``, ``details``)."""
    if isinstance(value, CustomMessage):
        return value
    if isinstance(value, dict):
        data = {k: v for k, v in value.items() if k != "role"}
        if "custom_type" not in data and "customType" not in data:
            raise ValueError("a custom message needs custom_type (e.g. {'custom_type': 'my-ext', 'content': '...'})")
        return CustomMessage.model_validate(data)
    fields = {k: getattr(value, k) for k in ("custom_type", "content", "display", "details") if hasattr(value, k)}
    if "custom_type" not in fields:
        raise TypeError(f"cannot send {type(value).__name__} as a custom message: it has no custom_type")
    return CustomMessage(**fields)


@record(frozen=True)
class SlashCommandInfo:
    """A command invocable through ``prompt`` (what ``ctx.session.get_commands()`` lists)."""

    name: str
    description: str | None
    source: str  # extension | prompt | skill
    source_info: dict[str, Any]

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)


def resource_commands(resources: ResourceSet) -> list[SlashCommandInfo]:
    """Prompt templates, then skills (extension commands come first; the host adds them)."""
    out = [
        SlashCommandInfo(t.name, t.description or None, "prompt", {"path": t.path, "source": "prompt", "scope": "user"})
        for t in resources.prompts
    ]
    out += [
        SlashCommandInfo(
            f"skill:{s.name}", s.description or None, "skill",
            {"path": s.path, "source": "skill", "scope": "user", "base_dir": s.base_dir},
        )
        for s in resources.skills
    ]
    return out
