"""Which model a session uses when none is named, and what to say when there is none."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...config import paths

if TYPE_CHECKING:
    from ...ai.models import ModelRegistry
    from ...ai.types import Model
    from ...config.settings import Settings

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



def choose_default_model(registry: ModelRegistry, settings: Settings) -> Model | None:
    """``defaultProvider``/``defaultModel`` from the settings, else the first available
    of :data:`PREFERRED_MODELS`, else the first available at all (None: none is)."""
    provider = settings.get("defaultProvider")
    model_id = settings.get("defaultModel")
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


def no_model_help() -> str:
    """How to make a model available, for a user who has none."""
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
