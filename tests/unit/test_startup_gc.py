"""The garbage collector is off while Wolli starts and on again once the session is up."""

from __future__ import annotations

import gc
import subprocess
import sys

from wolli.base import startup_gc


def test_resume_turns_on_only_what_pause_turned_off():
    was = gc.isenabled()
    gc.enable()
    frozen = gc.get_freeze_count()  # other tests in this process may have frozen objects
    try:
        startup_gc.pause()
        assert not gc.isenabled()
        startup_gc.pause()  # twice: still one pause
        startup_gc.resume()
        assert gc.isenabled() and gc.get_freeze_count() == frozen  # aged, not frozen for good
        gc.disable()  # someone else's pause: not ours to end
        startup_gc.pause()
        startup_gc.resume()
        assert not gc.isenabled()
    finally:
        gc.enable() if was else gc.disable()


_PROBE = """
import asyncio, gc, sys
from wolli.cli.main import main
from wolli.runtime.startup import start as start_module
seen = []
real_start = start_module.start
async def watched(*args, **kwargs):
    seen.append(gc.isenabled())  # when the runtime starts: still paused
    try:
        return await real_start(*args, **kwargs)
    finally:
        seen.append(gc.isenabled())
import wolli.modes.headless.run as run_module
run_module.start = watched
code = main(["-p", "hi", "--model", "nowhere/none", "--no-session"])
print(code, seen, gc.isenabled())
"""


def test_the_command_line_pauses_until_the_session_is_up(tmp_path):
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    code, *rest = out.stdout.split(maxsplit=1)
    assert code != "0"  # the model does not exist: start-up fails, and still turns it back on
    assert rest == ["[False, True] True\n"], out.stderr


def test_every_way_out_of_the_command_line_turns_it_back_on(tmp_path, monkeypatch):
    from wolli.cli.main import main

    monkeypatch.chdir(tmp_path)
    assert gc.isenabled()
    try:
        # A usage error after the pause: no session ever starts.
        assert main(["--mode", "rpc", "a prompt where none belongs"]) == 2
        assert gc.isenabled()
    finally:
        gc.enable()
