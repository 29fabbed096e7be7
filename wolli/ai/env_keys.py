"""Which environment variables hold each provider's API key.

Kept apart from :mod:`wolli.ai.auth` so that tools (``/login`` hints, docs, the test
fixture that clears keys) can list the names without touching any file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

# Checked in order; the first one that is set and non-empty wins.
ENV_KEYS: dict[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_API_KEY",),
    "openai": ("OPENAI_API_KEY",),
    "google": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "openrouter": ("OPENROUTER_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "together": ("TOGETHER_API_KEY",),
    "fireworks": ("FIREWORKS_API_KEY",),
    "zai": ("ZAI_API_KEY",),
    "moonshot": ("MOONSHOT_API_KEY",),
}


def env_var_names(provider: str) -> tuple[str, ...]:
    """The variables checked for ``provider``; unknown providers get ``<NAME>_API_KEY``.

    The fallback lets a custom provider called ``together-eu`` pick up
    ``TOGETHER_EU_API_KEY`` without any configuration.
    """
    known = ENV_KEYS.get(provider)
    if known is not None:
        return known
    slug = "".join(ch if ch.isalnum() else "_" for ch in provider).upper().strip("_")
    return (f"{slug}_API_KEY",) if slug else ()


def get_env_api_key(provider: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The key for ``provider`` from the environment, or None."""
    env = os.environ if environ is None else environ
    for name in env_var_names(provider):
        value = env.get(name, "").strip()
        if value:
            return value
    return None


def env_var_for(provider: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The name of the variable that currently supplies ``provider``'s key, if any."""
    env = os.environ if environ is None else environ
    for name in env_var_names(provider):
        if env.get(name, "").strip():
            return name
    return None
