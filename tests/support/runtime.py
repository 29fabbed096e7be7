"""Building hosts and live sessions on the ``faux`` provider for runtime tests."""

from __future__ import annotations

from typing import Any

from wolli.ai.providers.faux import FauxProvider
from wolli.runtime.host.agent_host import AgentHost
from wolli.runtime.live.live_session import LiveSession
from wolli.runtime.live.options import SessionOptions


def register_faux(host: AgentHost, faux: FauxProvider) -> None:
    model = faux.model
    host.model_registry.register_provider(
        model.provider,
        {
            "api": "faux",
            "baseUrl": "http://faux.invalid",
            "models": [
                {
                    "id": model.id,
                    "reasoning": model.reasoning,
                    "contextWindow": model.context_window,
                    "maxTokens": model.max_tokens,
                    "input": list(model.input),
                }
            ],
        },
    )


def make_host(faux: FauxProvider, *extra: FauxProvider, **settings: Any) -> AgentHost:
    """A host whose registry knows ``faux`` (and ``extra``), with fast retries."""
    host = AgentHost()
    for provider in (faux, *extra):
        register_faux(host, provider)
    host.settings.override({"retry": {"baseDelayMs": 1, "maxDelayMs": 50}, **settings})
    return host


async def start_session(host: AgentHost, cwd: Any, *, observers: list[Any] | None = None, **options: Any) -> LiveSession:
    """The host's first (active) session, started like a front end starts it."""
    return await host.start(SessionOptions(cwd=str(cwd), **options), observers=observers)


def recorder(session: LiveSession) -> list[Any]:
    events: list[Any] = []
    session.observe(events.append)
    return events


def types(events: list[Any], prefix: str = "") -> list[str]:
    return [e.type for e in events if e.type.startswith(prefix)]


def script_with_summaries(faux: FauxProvider, answers: list[Any], summary: str = "## Goal\nKeep going.") -> None:
    """Queue ``answers`` for the agent; any summarisation request gets ``summary`` instead.

    Compaction calls the same model, and how often it runs depends on token estimates, so
    the dispatcher recognises a summary request by its system prompt.
    """
    pending = list(answers)

    def answer(context: Any, options: Any) -> Any:
        if "summar" in (context.system_prompt or "").lower():
            faux.push(answer)  # keep the dispatcher queued for the agent's next call
            return summary
        return pending.pop(0)

    faux.push(*([answer] * len(pending)))
