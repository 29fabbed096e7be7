"""The tool set and system prompt of a live session: which tools exist, which are active,
and the prompt built from them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...agent.agent import Agent
from ...agent.tool import ToolDefinition
from ...config.settings import Settings
from ..resources.system_prompt import BuildSystemPromptOptions, PromptSection, build_system_prompt
from .services import SessionServices

if TYPE_CHECKING:
    from ...ai.types import Model
    from ...session.manager import SessionManager
    from ..safety.permissions import SessionPermissions


class Toolset:
    """Part of :class:`~.live_session.LiveSession`: the members it reads are declared here."""

    agent: Agent
    services: SessionServices
    settings: Settings
    cwd: str
    session_manager: SessionManager
    permissions: SessionPermissions
    all_tools: list[ToolDefinition]
    active_tool_names: list[str]
    _extra_tools: list[ToolDefinition]
    _base_system_prompt: str
    _custom_system_prompt: str | None
    _append_system_prompt: str

    if TYPE_CHECKING:
        @property
        def model(self) -> Model | None: ...
        def is_idle(self) -> bool: ...

    def _load_tools(self, active: list[str] | None) -> None:
        self.all_tools = _unique([*self.services.create_tools(self.cwd, self), *self._extra_tools])
        names = [t.name for t in self.all_tools]
        self.active_tool_names = [n for n in (active if active is not None else names) if n in names]
        self.agent.set_tools([t for t in self.all_tools if t.name in self.active_tool_names])

    def refresh_tools(self) -> None:
        """Re-read the tool set (tools registered since), keeping the active selection;
        newly registered tools become active."""
        known = {t.name for t in self.all_tools}
        keep = list(self.active_tool_names)
        self.all_tools = _unique([*self.services.create_tools(self.cwd, self), *self._extra_tools])
        keep += [t.name for t in self.all_tools if t.name not in known]
        self.set_active_tools(keep)

    def set_active_tools(self, names: list[str]) -> list[str]:
        """Activate the named tools; returns the names that do not exist."""
        known = {t.name for t in self.all_tools}
        self.active_tool_names = [n for n in dict.fromkeys(names) if n in known]
        self.agent.set_tools([t for t in self.all_tools if t.name in self.active_tool_names])
        self._refresh_system_prompt()
        return [n for n in names if n not in known]

    def add_tools(self, tools: list[ToolDefinition], activate: bool = True) -> None:
        self._extra_tools = _unique([*self._extra_tools, *tools])
        self.all_tools = _unique([*self.all_tools, *tools])
        names = self.active_tool_names + ([t.name for t in tools] if activate else [])
        self.set_active_tools(names)

    def system_prompt_options(self) -> BuildSystemPromptOptions:
        resources = self.services.resources(self.cwd)
        return BuildSystemPromptOptions(
            config=self.settings,
            cwd=self.cwd,
            soul=resources.soul,
            memory=resources.memory,
            user=resources.user,
            skills=list(resources.skills),
            selected_tools=list(self.active_tool_names),
            append_system_prompt=self._append_system_prompt,
            context_files=list(resources.context_files),
            custom_prompt=self._custom_system_prompt,
            prompt_sections=[
                *(PromptSection(title, text, order) for title, text, order in self.permissions.prompt_sections()),
                *(PromptSection(section.title, section.text(), section.order)
                  for section in getattr(self.services, "prompt_sections", [])),
            ],
        )

    def refresh_system_prompt(self) -> None:
        self._refresh_system_prompt()

    def _refresh_system_prompt(self) -> None:
        """Rebuild the stored base prompt; a run's ``before_agent_start`` override stays in
        place until that run ends."""
        overridden = self.agent.state.system_prompt != self._base_system_prompt and not self.is_idle()
        self._base_system_prompt = build_system_prompt(self.system_prompt_options(), self.all_tools)
        if not overridden:
            self.agent.set_system_prompt(self._base_system_prompt)

    @property
    def system_prompt(self) -> str:
        """The prompt of the current run (with any override), else the base prompt."""
        return self.agent.state.system_prompt


def _unique(tools: list[ToolDefinition]) -> list[ToolDefinition]:
    """Later definitions of a name win (an extension overriding a built-in)."""
    by_name: dict[str, ToolDefinition] = {}
    for tool in tools:
        by_name.pop(tool.name, None)
        by_name[tool.name] = tool
    return list(by_name.values())
