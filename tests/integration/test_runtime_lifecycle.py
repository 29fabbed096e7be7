"""Session lifecycle on the host: startup, new, resume, fork, close; stale handles."""

from __future__ import annotations

import pytest

from tests.support.runtime import make_host, recorder, start_session
from wolli.ai.providers.faux import FauxProvider
from wolli.runtime.live.handle import StaleSessionError
from wolli.runtime.live.options import SessionOptions


@pytest.fixture
def faux():
    provider = FauxProvider()
    yield provider
    provider.unregister()


def lifecycle(host):
    """Every session_* / model_select handler call, with the session it was for."""
    seen: list[tuple] = []
    for name in ("session_start", "session_shutdown", "model_select"):
        host.handlers.add(
            name,
            lambda e, ctx, name=name: seen.append(
                (name, getattr(e, "reason", getattr(e, "source", None)), ctx.session.id)
            ),
        )
    return seen


async def test_session_start_reaches_handlers_and_observers_before_the_first_prompt(faux, tmp_path):
    host = make_host(faux)
    seen = lifecycle(host)
    observed: list[str] = []
    session = await start_session(host, tmp_path, model=faux.model, observers=[lambda e: observed.append(e.type)])
    assert seen == [("session_start", "startup", session.session_id)]
    assert observed[0] == "session_start"
    assert faux.calls == 0
    assert host.active is session


async def test_new_session_shuts_the_old_one_down_and_its_handle_goes_stale(faux, tmp_path):
    host = make_host(faux)
    seen = lifecycle(host)
    old = await start_session(host, tmp_path, model=faux.model)
    faux.push("hello")
    await old.prompt("hi")
    old_handle = host.handle(old)
    old_events = recorder(old)
    switches: list[tuple] = []
    host.on_active_session(lambda new, previous: switches.append((new, previous)))

    new = await host.new_session()

    assert [s[:2] for s in seen] == [("session_start", "startup"), ("session_shutdown", "new"), ("session_start", "new")]
    assert seen[1][2] == old.session_id and seen[2][2] == new.session_id
    [shutdown] = [e for e in old_events if e.type == "session_shutdown"]
    assert shutdown.target_session_file == new.session_file
    assert switches == [(new, old)]
    assert host.active is new and old.closed and host.get_session(old.session_id) is None
    with pytest.raises(StaleSessionError, match="replaced or closed"):
        old_handle.append_entry("state", {"x": 1})
    with pytest.raises(StaleSessionError):
        _ = old_handle.session_manager.get_entries()
    assert host.handle(new).id == new.session_id


async def test_resume_brings_back_the_model_with_a_restore_event(faux, tmp_path):
    host = make_host(faux)
    first = await start_session(host, tmp_path, model=faux.model, thinking_level="high")
    faux.push("remember this")
    await first.prompt("hi")
    path = first.session_file
    await host.shutdown()

    host2 = make_host(faux)
    seen = lifecycle(host2)
    await start_session(host2, tmp_path, model=faux.model)  # a fresh startup session
    resumed = await host2.resume_session(path)
    assert resumed.session_file == path and resumed.model.id == faux.model.id
    assert resumed.thinking_level == "high"
    assert [s[:2] for s in seen][-3:] == [("session_shutdown", "resume"), ("session_start", "resume"),
                                         ("model_select", "restore")]
    assert [m.role for m in resumed.messages] == ["user", "assistant"]


async def test_open_session_returns_the_resident_session_never_a_second_live_one(faux, tmp_path):
    host = make_host(faux)
    active = await start_session(host, tmp_path, model=faux.model)
    faux.push("saved")
    await active.prompt("hi")
    again = await host.open_session(active.session_id[:8])
    assert again is active
    by_path = await host.open_session(active.session_file)
    assert by_path is active
    assert len(host.resident) == 1


async def test_fork_starts_a_new_file_from_an_entry(faux, tmp_path):
    host = make_host(faux)
    seen = lifecycle(host)
    session = await start_session(host, tmp_path, model=faux.model)
    faux.push("first answer", "second answer")
    await session.prompt("first")
    await session.prompt("second")
    first_user = next(e for e in session.session_manager.get_entries()
                      if e.type == "message" and e.message.role == "user")
    forked = await host.fork_session(first_user.id)
    assert forked.session_file != session.session_file and host.active is forked
    assert [m.role for m in forked.messages] == ["user"]
    assert [s[:2] for s in seen][-2:] == [("session_shutdown", "fork"), ("session_start", "fork")]
    faux.push("forked answer")
    await forked.prompt("instead")
    assert [m.text() if m.role == "assistant" else m.content for m in forked.messages] == [
        "first", "instead", "forked answer"]


async def test_close_aborts_waits_emits_shutdown_and_drops_observers(faux, tmp_path):
    host = make_host(faux)
    seen = lifecycle(host)
    session = await start_session(host, tmp_path, model=faux.model)
    events = recorder(session)
    await host.close_session(session)
    assert seen[-1][:2] == ("session_shutdown", "quit")
    assert events[-1].type == "session_shutdown"
    count = len(events)
    session._deliver(events[-1])  # nobody is listening any more
    assert len(events) == count
    assert host.active is None and session.closed


async def test_new_session_from_a_handle_runs_with_session_on_the_replacement(faux, tmp_path):
    host = make_host(faux)
    session = await start_session(host, tmp_path, model=faux.model)
    handle = host.handle(session)
    got: list = []

    async def with_session(fresh):
        got.append(fresh.id)
        fresh.append_entry("handoff", {"from": session.session_id})

    def setup(manager):
        manager.append_message({"role": "user", "content": "context from before", "timestamp": 1})

    result = await handle.new_session(setup=setup, with_session=with_session)
    assert not result.cancelled and got == [host.active.session_id]
    assert host.active is not session and handle.is_stale()
    assert [m.role for m in host.active.messages] == ["user"]
    kinds = [e.type for e in host.active.session_manager.get_entries()]
    assert "custom" in kinds
    with pytest.raises(StaleSessionError):
        handle.get_tags()


async def test_reload_keeps_the_handle_usable_and_emits_reload_events(faux, tmp_path):
    host = make_host(faux)
    seen = lifecycle(host)
    session = await start_session(host, tmp_path, model=faux.model)
    handle = host.handle(session)
    await handle.reload()
    assert [s[:2] for s in seen][-2:] == [("session_shutdown", "reload"), ("session_start", "reload")]
    assert handle.id == session.session_id and not handle.is_stale()


async def test_create_session_is_additive(faux, tmp_path):
    host = make_host(faux)
    active = await start_session(host, tmp_path, model=faux.model)
    extra = await host.create_session(SessionOptions(cwd=str(tmp_path), model=faux.model))
    assert host.active is active and not active.closed
    assert host.get_session(extra.session_id) is extra
    faux.push("from the background session")
    await extra.prompt("work quietly")
    assert extra.messages[-1].text() == "from the background session"
