"""Built-in commands and keys about models and keys: /model, cycling the scoped models,
the thinking level, /login, /logout."""

from __future__ import annotations

import fnmatch
from typing import TYPE_CHECKING, Any

from ..fuzzy import fuzzy_score, rank
from .definition import BuiltinCommand, CommandContext

if TYPE_CHECKING:
    from ....ai.types import Model
    from ....runtime.host.agent_host import AgentHost
    from ....runtime.live.live_session import LiveSession


def model_key(model: Model) -> str:
    return f"{model.provider}/{model.id}"


async def choose_model(ctx: CommandContext, model: Model, thinking: str | None = None, *, remember: bool = True) -> bool:
    """Switch the session to ``model``; ``remember`` makes it the default for new sessions."""
    if not await ctx.session.set_model(model, "set"):
        ctx.front.notify(f"No API key for {model.provider}: add one with /login {model.provider} "
                         f"(or its environment variable) first.", "error")
        return False
    if thinking is not None:
        await ctx.session.set_thinking_level(thinking)
    if remember:
        try:
            ctx.host.settings.update({"defaultProvider": model.provider, "defaultModel": model.id})
        except Exception as exc:  # the switch worked; only the default could not be saved
            ctx.front.notify(f"Could not save {model_key(model)} as the default: {exc}", "warning")
    return True


def announce_model(ctx: CommandContext, model: Model, then: str = "") -> None:
    """Say which model is now in use, unless the client prints model changes itself (then
    only ``then`` is said): one line per change, not two."""
    if ctx.front.shows_model_changes:
        if then:
            ctx.front.notify(then)
        return
    ctx.front.notify(f"Model: {model_key(model)}" + (f". {then}" if then else ""))


async def select_model(ctx: CommandContext, args: str) -> None:
    registry = ctx.host.model_registry
    models = registry.available()
    if not models:
        ctx.front.notify("No model is available yet: add a key with /login, or a local server in models.json.", "warning")
        return
    search = args.strip()
    exact = [m for m in models if search and search in (model_key(m), m.id)]
    if len(exact) == 1:
        chosen: Model | None = exact[0]
    else:
        chosen = await ctx.front.pick_model(models, ctx.session.model, search)
    if chosen is not None and await choose_model(ctx, chosen):
        announce_model(ctx, chosen)


def complete_model(ctx: CommandContext, prefix: str) -> list[dict[str, Any]]:
    models = ctx.host.model_registry.available()
    items = [{"value": model_key(m), "label": model_key(m), "description": m.name, "search": f"{model_key(m)} {m.name}"}
             for m in models]
    return rank(prefix, items, "search")


def scoped_models(host: AgentHost) -> list[tuple[Any, str | None]]:
    """The models Ctrl+P cycles: settings ``enabledModels`` (globs such as
    ``anthropic/*``, ``*sonnet*``, or names ``--model`` takes, each with an optional
    ``:level``), in that order; every available model when it is not set."""
    registry = host.model_registry
    available = registry.available()
    patterns = host.settings.get("enabledModels")
    if not patterns:
        return [(m, None) for m in available]
    out: list[tuple[Any, str | None]] = []
    seen: set[str] = set()
    for raw in patterns:
        pattern = str(raw).strip()
        found: list[tuple[Any, str | None]] = []
        if any(c in pattern for c in "*?["):
            base, _, level = pattern.partition(":") if ":" in pattern.rsplit("/", 1)[-1] else (pattern, "", "")
            found = [(m, level or None) for m in available
                     if fnmatch.fnmatch(model_key(m), base) or fnmatch.fnmatch(m.id, base)]
        else:
            try:
                model, thinking = registry.resolve(pattern)
            except ValueError:
                continue
            if registry.is_available(model):
                found = [(model, thinking)]
        for model, chosen_level in found:
            if model_key(model) not in seen:
                seen.add(model_key(model))
                out.append((model, chosen_level))
    return out


async def cycle_model(ctx: CommandContext, step: int) -> Model | None:
    """The next (``step`` 1) or previous (-1) scoped model; None when there is no other."""
    scope = scoped_models(ctx.host)
    if not scope:
        ctx.front.notify("No model is available: /login first.", "warning")
        return None
    current = model_key(ctx.session.model) if ctx.session.model is not None else None
    keys = [model_key(m) for m, _ in scope]
    index = keys.index(current) if current in keys else (-1 if step > 0 else 0)
    model, level = scope[(index + step) % len(scope)]
    if current == model_key(model):
        ctx.front.notify("Only one model in scope (settings enabledModels).")
        return None
    return model if await choose_model(ctx, model, level, remember=False) else None


async def cycle_thinking(session: LiveSession | None) -> str | None:
    """The next thinking level (the session clamps it to the model); None without reasoning."""
    from ....ai.types import THINKING_LEVELS

    if session is None or session.model is None or not getattr(session.model, "reasoning", False):
        return None
    current = session.thinking_level
    index = THINKING_LEVELS.index(current) if current in THINKING_LEVELS else -1
    return str(await session.set_thinking_level(THINKING_LEVELS[(index + 1) % len(THINKING_LEVELS)]))


# ---------------------------------------------------------------------- keys


def login_providers(host: AgentHost) -> list[str]:
    """Providers a key can be stored for: every known one, configured ones first."""
    from ....ai.env_keys import ENV_KEYS

    names = list(dict.fromkeys([*host.model_registry.providers(), *ENV_KEYS]))
    return [n for n in names if n not in ("faux",)]


async def login(ctx: CommandContext, args: str) -> None:
    """Store an API key in auth.json; the models of that provider work at once."""
    from ....ai.env_keys import env_var_names

    providers = login_providers(ctx.host)
    provider = args.strip() or await ctx.front.select("Log in to which provider?", providers)
    if not provider:
        return
    if provider not in providers:
        near = sorted(providers, key=lambda p: -(fuzzy_score(provider, p) or -10_000))[:3]
        raise ValueError(f"unknown provider {provider!r}; known: {', '.join(near)}, … (see /login)")
    env = " or ".join(env_var_names(provider))
    key = await ctx.front.input(f"API key for {provider} (saved in auth.json; {env} works too)", "sk-…", secret=True)
    if not key or not key.strip():
        return
    registry = ctx.host.model_registry
    registry.auth.set_api_key(provider, key.strip())
    registry.refresh()
    ctx.front.notify(f"Saved the key for {provider} in {registry.auth.path}.")
    if ctx.session.model is None or ctx.session.model.provider == provider:
        model = ctx.session.model if ctx.session.model is not None and ctx.session.model.provider == provider else None
        if model is None:
            model = next((m for m in registry.available() if m.provider == provider), None) or ctx.host.default_model()
        if model is not None and await choose_model(ctx, model, remember=ctx.session.model is None):
            announce_model(ctx, model, "Type a message to start.")


async def logout(ctx: CommandContext, args: str) -> None:
    auth = ctx.host.model_registry.auth
    stored = auth.list_providers()
    if not stored:
        ctx.front.notify(f"No keys are stored in {auth.path} (keys from environment variables stay).")
        return
    provider = args.strip() or await ctx.front.select("Remove the stored key of which provider?", stored)
    if not provider:
        return
    if not auth.remove(provider):
        raise ValueError(f"no key stored for {provider!r}; stored: {', '.join(stored)}")
    ctx.host.model_registry.refresh()
    ctx.front.notify(f"Removed the key for {provider} from {auth.path}.")


def complete_provider(ctx: CommandContext, prefix: str) -> list[dict[str, Any]]:
    return rank(prefix, [{"value": p, "label": p} for p in login_providers(ctx.host)], "value")


def complete_stored(ctx: CommandContext, prefix: str) -> list[dict[str, Any]]:
    return rank(prefix, [{"value": p, "label": p} for p in ctx.host.model_registry.auth.list_providers()], "value")


COMMANDS = [
    BuiltinCommand("model", "choose the model (fuzzy search)", select_model, category="Model", usage="[search]",
                   complete=complete_model),
    BuiltinCommand("login", "store an API key for a provider", login, category="Model", usage="[provider]",
                   complete=complete_provider),
    BuiltinCommand("logout", "remove a stored API key", logout, category="Model", usage="[provider]",
                   complete=complete_stored),
]
