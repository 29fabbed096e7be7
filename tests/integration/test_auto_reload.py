"""``autoReload``: saving an extension reloads it, once per burst, and never mid-run."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

import pytest

from tests.support.runtime import make_host, recorder, start_session
from tests.support.waiting import wait_until
from wolli.ai.providers.faux import FauxProvider
from wolli.config import paths
from wolli.runtime.host.auto_reload import AutoReloader


@pytest.fixture
def faux():
    provider = FauxProvider(tokens_per_second=200)
    yield provider
    provider.unregister()


def command_ext(name: str) -> str:
    return textwrap.dedent(f"""
        def extension(wolli):
            wolli.register_command("{name}", handler=lambda args, ctx: None)
    """)


async def started(faux, tmp_path, **settings):
    path = paths.agent_home() / "extensions" / "live.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(command_ext("v1"))
    host = make_host(faux, **settings)
    host.extensions.configure(packages=False)
    await host.extensions.load(str(tmp_path))
    session = await start_session(host, tmp_path, model=faux.model)
    return host, session, path


async def test_a_burst_of_saves_reloads_once(faux, tmp_path):
    host, _, path = await started(faux, tmp_path)
    # Saves within the window are one batch however far apart they are inside it (a loaded
    # machine may hold the test or the watcher's thread up between two of them).
    reloader = AutoReloader(host, debounce_ms=500)
    reloader.start()
    try:
        await asyncio.wait_for(reloader.ready.wait(), 10)
        for version in ("v2", "v3", "v4"):
            path.write_text(command_ext(version))
            await asyncio.sleep(0.08)  # the burst's saves apart, as a busy machine spaces them
        (path.parent / "notes.txt").write_text("not python: ignored")
        await wait_until(lambda: "v4" in host.commands, 10, "the reload")
        await asyncio.sleep(1.2)  # a bounded look for a second reload (over two debounce windows)
        assert reloader.reloads == 1 and list(host.commands) == ["v4"]
    finally:
        await reloader.stop()


async def test_a_save_during_a_run_reloads_after_it(faux, tmp_path):
    host, session, path = await started(faux, tmp_path)
    events = recorder(session)
    reloader = AutoReloader(host, debounce_ms=50)
    reloader.start()
    try:
        await asyncio.wait_for(reloader.ready.wait(), 10)
        faux.push("word " * 200)  # ~1 s of streaming at 200 tokens/s
        run = asyncio.ensure_future(session.prompt("talk"))
        await wait_until(lambda: any(e.type == "message_update" for e in events), 10, "streaming")
        path.write_text(command_ext("during"))
        await run
        await wait_until(lambda: "during" in host.commands, 10, "the reload")
        kinds = [e.type for e in events if e.type in ("agent_end", "session_shutdown", "session_start")]
        assert kinds == ["agent_end", "session_shutdown", "session_start"]
    finally:
        await reloader.stop()


async def test_the_setting_starts_it_and_shutdown_stops_it(faux, tmp_path):
    host, _, _ = await started(faux, tmp_path)
    assert host.start_auto_reload() is None  # off by default
    host.settings.override({"autoReload": True})
    reloader = host.start_auto_reload()
    assert reloader is not None and host.start_auto_reload() is reloader
    assert Path(paths.agent_home() / "extensions") in reloader.watched()
    await host.shutdown()
    assert host.auto_reloader is None and reloader._task is None
