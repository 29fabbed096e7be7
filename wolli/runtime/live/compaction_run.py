"""Running a compaction inside a live session: threshold, overflow and manual.

The pure work (what to keep, the summary request) is in :mod:`wolli.session.compaction`;
this module adds what a live session needs around it: the ``session_before_compact``
handlers (cancel, or supply the summary), the compaction events, the breaker that pauses
automatic compaction after repeated failures, and swapping the agent's messages for the
compacted context. The session calls it only where the agent loop is paused (between turns)
or idle, so messages are never replaced under a running request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...ai.abort import AbortController
from ..events import CompactionEndEvent, CompactionReason, CompactionStartEvent, NoticeEvent
from ..handlers.channel import Dispatcher
from ..handlers.hook_events import SessionBeforeCompactEvent
from .settings_view import compaction_settings, stream_idle_timeout

if TYPE_CHECKING:
    from ...session.compaction import CompactionBreaker, CompactionResult, CompactionSettings
    from .services import SessionCore

Emit = Callable[[Any], Any]


class Compactor:
    def __init__(self, session: SessionCore, dispatch: Dispatcher) -> None:
        self.session = session  # the owning LiveSession (manager, agent, services, emit)
        self.dispatch = dispatch
        self._breaker: CompactionBreaker | None = None
        self._controller: AbortController | None = None

    @property
    def breaker(self) -> CompactionBreaker:
        """Made with the first check: ``session.compaction`` (and the summarizer it imports)
        loads when a compaction is first considered, not with every session."""
        if self._breaker is None:
            from ...session.compaction import CompactionBreaker

            self._breaker = CompactionBreaker()
        return self._breaker

    @property
    def running(self) -> bool:
        return self._controller is not None

    def abort(self) -> None:
        if self._controller is not None:
            self._controller.abort("Compaction aborted")

    def _settings(self) -> CompactionSettings:
        """The compaction settings, with what is kept word for word held to a quarter of
        the model's window: 20,000 kept tokens would overflow a 16k model by themselves."""
        import dataclasses

        settings = compaction_settings(self.session.settings)
        model = self.session.model
        if model is not None and model.context_window > 0:
            keep = min(settings.keep_recent_tokens, max(1000, model.context_window // 4))
            settings = dataclasses.replace(settings, keep_recent_tokens=keep)
        return settings

    def _prepare(self) -> tuple[Any, list[Any]]:
        from ...session.compaction import prepare_compaction

        branch = self.session.session_manager.get_branch()
        return prepare_compaction(branch, self._settings()), branch

    def due(self) -> bool:
        """Automatic compaction is on, allowed by the breaker, past the threshold, and there
        is something to compact (otherwise a full context would "compact" every turn)."""
        from ...session.compaction import should_compact

        model = self.session.model
        settings = compaction_settings(self.session.settings)
        if model is None or not settings.enabled or not self.breaker.allowed():
            return False
        if not should_compact(self.session.context_usage()["tokens"], model.context_window, settings):
            return False
        return self._prepare()[0] is not None

    async def compact(self, reason: CompactionReason, custom_instructions: str | None = None) -> CompactionResult | None:
        """Summarise older history into a compaction entry. Returns the result, or None."""
        from ...session.compaction import CompactionError, CompactionResult, compact

        session = self.session
        emit = session.emit
        model = session.model
        await emit(CompactionStartEvent(reason))
        preparation, branch = self._prepare()
        if preparation is None or model is None:
            why = "Nothing to compact yet." if model is not None else "No model to summarise with."
            await emit(CompactionEndEvent(reason, error_message=why))
            return None
        controller = self._controller = AbortController()
        result: CompactionResult | None = None
        from_hook = False
        try:
            if self.dispatch.has("session_before_compact"):
                event = SessionBeforeCompactEvent(preparation, branch, custom_instructions, controller.signal)
                decision = await self.dispatch.first_answer(event, session.handler_context())
                if decision and decision.get("cancel"):
                    await emit(CompactionEndEvent(reason, aborted=True, error_message="Cancelled by an extension"))
                    return None
                supplied = decision.get("compaction") if decision else None
                if supplied:
                    supplied = dict(supplied) if isinstance(supplied, dict) else vars(supplied)
                    result = CompactionResult(
                        summary=str(supplied["summary"]),
                        first_kept_entry_id=supplied.get("first_kept_entry_id", preparation.first_kept_entry_id),
                        tokens_before=supplied.get("tokens_before", preparation.tokens_before),
                        details=supplied.get("details"),
                    )
                    from_hook = True
            if result is None:
                result = await compact(
                    preparation,
                    model,
                    api_key=session.services.get_api_key(model),
                    custom_instructions=custom_instructions,
                    signal=controller.signal,
                    stream_options={"idle_timeout": stream_idle_timeout(session.settings)},
                )
        except CompactionError as exc:
            self.breaker.record_failure()
            await emit(CompactionEndEvent(reason, error_message=str(exc), aborted=controller.signal.aborted))
            return None
        except Exception as exc:  # a handler's malformed summary: report, keep the session usable
            self.breaker.record_failure()
            await emit(CompactionEndEvent(reason, error_message=f"{type(exc).__name__}: {exc}"))
            return None
        finally:
            self._controller = None
        self.breaker.record_success()
        session.session_manager.append_compaction(
            result.summary, result.first_kept_entry_id, result.tokens_before, result.details, from_hook
        )
        session.agent.replace_messages(session.session_manager.build_session_context().messages)
        await emit(CompactionEndEvent(reason, result=result, will_retry=reason == "overflow"))
        dropped = getattr(result, "dropped_messages", 0)
        if dropped:  # the last resort of summarize_pieces: never silent
            await emit(NoticeEvent("warning", (
                f"compaction left out {dropped} older message{'s' if dropped != 1 else ''} too large for "
                f"{model.provider}/{model.id} to read even alone; the summary says so")))
        return result
