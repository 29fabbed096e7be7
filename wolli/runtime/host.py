"""AgentHost: everything one agent name owns — settings, auth, models, resources, sessions.

A host can keep several live sessions at once (``resident`` sessions keyed by id); the
extension API exposes them later through ``wolli.get_session`` / ``open_session`` /
``create_session``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..agent.tool import ToolDefinition
from ..config import paths
from ..config.settings import Settings
from ..tools.environment import Environment, create_host_environment
from .resources import ResourceSet, load_resources

if TYPE_CHECKING:
    from ..ai.models import ModelRegistry
    from ..ai.types import Model
    from ..session.manager import SessionManager
    from .session import AgentSession

# When nothing is configured, the first available of these (per provider) is used.
PREFERRED_MODELS: dict[str, tuple[str, ...]] = {
    "anthropic": ("claude-sonnet-5", "claude-sonnet-4-6", "claude-sonnet-4-5", "claude-opus-4-8", "claude-haiku-4-5"),
    "openai": ("gpt-5.5", "gpt-5.4", "gpt-5.2", "gpt-5.1", "gpt-5", "gpt-4.1"),
    "google": ("gemini-3.1-pro-preview", "gemini-2.5-pro", "gemini-3.5-flash", "gemini-2.5-flash"),
    "openrouter": ("anthropic/claude-sonnet-4.6", "openai/gpt-5.4"),
    "xai": ("grok-4.5", "grok-code-fast-1", "grok-4"),
    "deepseek": ("deepseek-chat",),
    "mistral": ("devstral-medium-latest", "mistral-large-latest"),
    "groq": ("openai/gpt-oss-120b", "moonshotai/kimi-k2-instruct-0905"),
}


class AgentHost:
    def __init__(
        self,
        agent: str | None = None,
        *,
        settings: Settings | None = None,
        model_registry: ModelRegistry | None = None,
    ) -> None:
        self.name = paths.agent_name(agent)
        self.home: Path = paths.agent_home(self.name)
        self.settings = settings or Settings(self.name)
        self._model_registry = model_registry
        self._environments: dict[str, Environment] = {}
        self._resources: dict[str, ResourceSet] = {}
        self.resident: dict[str, AgentSession] = {}
        # Keys given for this process only (``--api-key``), by provider.
        self.api_key_overrides: dict[str, str] = {}

    # ------------------------------------------------------------------ services

    @property
    def model_registry(self) -> ModelRegistry:
        if self._model_registry is None:
            from ..ai.auth import AuthStorage
            from ..ai.models import ModelRegistry

            self._model_registry = ModelRegistry(auth=AuthStorage())
        return self._model_registry

    def get_api_key(self, target: Any) -> str | None:
        """The key for a model or provider name: ``--api-key`` first, then auth/env/models.json."""
        provider = target if isinstance(target, str) else getattr(target, "provider", None)
        if provider in self.api_key_overrides:
            return self.api_key_overrides[provider]
        return self.model_registry.get_api_key(target)

    @property
    def sessions_dir(self) -> Path:
        return self.home / "sessions"

    def environment(self, cwd: str) -> Environment:
        key = os.path.abspath(cwd)
        env = self._environments.get(key)
        if env is None:
            env = create_host_environment(key, shell_path=self.settings.get("shellPath"))
            self._environments[key] = env
        return env

    def create_tools(self, cwd: str) -> list[ToolDefinition]:
        from .builtin_tools import create_builtin_tools

        return create_builtin_tools(self.environment(cwd))

    def resources(self, cwd: str) -> ResourceSet:
        key = os.path.abspath(cwd)
        found = self._resources.get(key)
        if found is None:
            found = load_resources(
                self.home,
                key,
                extra_skill_dirs=[Path(p).expanduser() for p in self.settings.get("skills", []) or []],
                extra_prompt_dirs=[Path(p).expanduser() for p in self.settings.get("prompts", []) or []],
            )
            self._resources[key] = found
        return found

    def reload(self) -> None:
        """Re-read settings, models and resources (``/reload``)."""
        self.settings.reload()
        self._resources.clear()
        self._environments.clear()
        if self._model_registry is not None:
            self._model_registry.refresh()

    def new_compaction_breaker(self) -> Any:
        from ..session.compaction import CompactionBreaker

        return CompactionBreaker()

    # ------------------------------------------------------------------ models

    def default_model(self) -> Model | None:
        registry = self.model_registry
        provider = self.settings.get("defaultProvider")
        model_id = self.settings.get("defaultModel")
        if model_id:
            if provider:
                found = registry.find(provider, model_id)
                if found is not None:
                    return found
            try:
                return registry.resolve(f"{provider}/{model_id}" if provider else model_id)[0]
            except ValueError:
                pass
        available = registry.available()
        if not available:
            return None
        if provider:
            for model in available:
                if model.provider == provider:
                    return model
        by_key = {(m.provider, m.id): m for m in available}
        for prov, ids in PREFERRED_MODELS.items():
            for mid in ids:
                if (prov, mid) in by_key:
                    return by_key[(prov, mid)]
        return available[0]

    def no_model_help(self) -> str:
        home = paths.wolli_home()
        return (
            "No model is available: Wolli found no API key and no custom provider.\n"
            "Configure one of these:\n"
            "  - an environment variable, e.g. export ANTHROPIC_API_KEY=... (or OPENAI_API_KEY,\n"
            "    GEMINI_API_KEY, OPENROUTER_API_KEY, GROQ_API_KEY, XAI_API_KEY, MISTRAL_API_KEY,\n"
            "    DEEPSEEK_API_KEY)\n"
            f"  - a key in {home / 'auth.json'}: {{\"anthropic\": {{\"type\": \"api_key\", \"key\": \"sk-...\"}}}}\n"
            f"  - a local OpenAI-compatible server (Ollama, llama.cpp, vLLM, LM Studio) in {home / 'models.json'}:\n"
            '    {"providers": {"ollama": {"baseUrl": "http://localhost:11434/v1",\n'
            '      "api": "openai-completions", "models": [{"id": "qwen2.5-coder:7b"}]}}}\n'
            "Then pick it with --model provider/id (see --list-models)."
        )

    # ------------------------------------------------------------------ sessions

    def _manager_for(self, cwd: str, *, persist: bool = True, continue_recent: bool = False,
                     session: str | None = None) -> SessionManager:
        from ..session.manager import SessionManager

        if session:
            if os.path.exists(session) or session.endswith(".jsonl"):
                return SessionManager.open(session)
            return SessionManager.open_by_id(session, cwd=cwd, session_dir=self.sessions_dir)
        if not persist:
            return SessionManager.in_memory(cwd)
        if continue_recent:
            return SessionManager.continue_recent(cwd, session_dir=self.sessions_dir)
        return SessionManager.create(cwd, session_dir=self.sessions_dir)

    def create_session(
        self,
        cwd: str | None = None,
        *,
        persist: bool = True,
        continue_recent: bool = False,
        session: str | None = None,
        resident: bool = True,
        **options: Any,
    ) -> AgentSession:
        """A live session: new, continued (``continue_recent``) or opened (``session`` path/id)."""
        from .session import AgentSession

        manager = self._manager_for(
            os.path.abspath(cwd or os.getcwd()), persist=persist, continue_recent=continue_recent, session=session
        )
        live = AgentSession(self, manager, **options)
        if resident:
            self.resident[live.session_id] = live
        return live

    def get_session(self, session_id: str) -> AgentSession | None:
        return self.resident.get(session_id)

    def close_session(self, session_id: str) -> None:
        live = self.resident.pop(session_id, None)
        if live is not None:
            live.abort()

    def list_sessions(self, cwd: str | None = None) -> list[Any]:
        from ..session.listing import list_all_sessions, list_sessions

        if cwd is None:
            return list_all_sessions(self.sessions_dir)
        return list_sessions(cwd, self.sessions_dir)
