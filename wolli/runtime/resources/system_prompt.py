"""Building the default system prompt from structured inputs.

The inputs are exposed to extensions as :class:`BuildSystemPromptOptions` (the
``before_agent_start`` event and ``ctx.session.get_system_prompt_options()``), so an
extension can rebuild or reshape the prompt from the same data Wolli used.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import field
from typing import TYPE_CHECKING

from ...agent.tool import ToolDefinition
from ...base.records import record
from .loading import ContextFile, Skill

if TYPE_CHECKING:
    from ...config.settings import Settings


@record
class PromptSection:
    """Text an extension adds to the system prompt (piglet's prompt sections)."""

    title: str
    content: str
    order: int = 0


@record
class BuildSystemPromptOptions:
    config: Settings | None = None  # the host's settings
    cwd: str = "."
    soul: str = ""
    memory: str = ""
    user: str = ""
    skills: list[Skill] = field(default_factory=list)
    # Names of the active tools; None means every tool passed to the builder, [] means none.
    selected_tools: list[str] | None = None
    append_system_prompt: str = ""
    context_files: list[ContextFile] = field(default_factory=list)
    # Replaces the built-in opening (``--system-prompt``); everything else is still added.
    custom_prompt: str | None = None
    prompt_sections: list[PromptSection] = field(default_factory=list)
    date: str | None = None  # fixed date for reproducible prompts (tests)


BASE_PROMPT = """You are Wolli, an expert coding assistant working in the user's terminal. You help with \
software engineering tasks by reading files, running commands, editing code and writing new files.

Work like a careful senior engineer: understand the code before changing it, make the smallest \
change that solves the problem, verify your work (run the tests or the program when you can), \
and say plainly what you did and what is left."""

GENERAL_GUIDELINES = [
    "Be concise in your replies; show file paths clearly when you mention files.",
    "Prefer reading the relevant files over guessing how the code works.",
    "When a command or edit fails, read the error, fix the cause and try again instead of repeating the same call.",
    "Do not invent file contents, test results or command output.",
]


def _tools_section(tools: list[ToolDefinition]) -> tuple[str, list[str]]:
    lines: list[str] = []
    guidelines: list[str] = []
    for tool in tools:
        if tool.prompt_snippet:
            lines.append(f"- {tool.name}: {tool.prompt_snippet}")
        for guideline in tool.prompt_guidelines:
            if guideline not in guidelines:
                guidelines.append(guideline)
    return "\n".join(lines), guidelines


def _xml(text: str) -> str:
    """Escape text placed inside the skills' XML so a ``<`` in a description cannot end a tag."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _skills_section(skills: list[Skill]) -> str:
    visible = [s for s in skills if not s.disable_model_invocation]
    if not visible:
        return ""
    items = "\n".join(
        f"  <skill>\n    <name>{_xml(s.name)}</name>\n    <description>{_xml(s.description)}</description>\n"
        f"    <location>{_xml(s.path)}</location>\n  </skill>"
        for s in visible
    )
    return (
        "# Skills\n\nSkills are instruction packages for specific tasks. When a task matches a "
        "skill's description, read its file with the read tool before starting and follow it; "
        "paths inside a skill are relative to the skill's folder.\n\n"
        f"<available_skills>\n{items}\n</available_skills>"
    )


def build_system_prompt(options: BuildSystemPromptOptions, tools: list[ToolDefinition]) -> str:
    """The default system prompt; only the active tools contribute lines and guidelines."""
    selected = set(options.selected_tools) if options.selected_tools is not None else {t.name for t in tools}
    active = [t for t in tools if t.name in selected]
    parts: list[str] = [options.custom_prompt.strip() if options.custom_prompt else BASE_PROMPT]

    if options.soul.strip():
        parts.append(f"# Who you are (SOUL.md)\n\n{options.soul.strip()}")

    tool_lines, tool_guidelines = _tools_section(active)
    if tool_lines:
        parts.append(f"# Available tools\n\n{tool_lines}")
    guidelines = tool_guidelines + ([] if options.custom_prompt else GENERAL_GUIDELINES)
    if guidelines:
        parts.append("# Guidelines\n\n" + "\n".join(f"- {g}" for g in guidelines))

    for section in sorted(options.prompt_sections, key=lambda s: s.order):
        if section.content.strip():
            parts.append(f"# {section.title}\n\n{section.content.strip()}")

    context_files = [cf for cf in options.context_files if cf.content.strip()]
    if context_files:
        files = "\n\n".join(f"## {cf.path}\n\n{cf.content.strip()}" for cf in context_files)
        parts.append(
            "# Project context\n\nInstructions from the user's context files (follow them; later, "
            f"more specific files take precedence):\n\n{files}"
        )
    if options.user.strip():
        parts.append(f"# About the user (USER.md)\n\n{options.user.strip()}")
    if options.memory.strip():
        parts.append(f"# Memory (MEMORY.md)\n\n{options.memory.strip()}")

    skills = _skills_section(options.skills) if "read" in selected else ""
    if skills:
        parts.append(skills)

    if options.append_system_prompt.strip():
        parts.append(options.append_system_prompt.strip())

    date = options.date or _dt.date.today().isoformat()
    parts.append(f"Current date: {date}\nCurrent working directory: {options.cwd}")
    return "\n\n".join(parts)
