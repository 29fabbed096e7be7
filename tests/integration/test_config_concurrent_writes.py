"""Two processes saving settings.json / auth.json at once: neither change is lost."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

WRITER = """
import sys
from wolli.ai.auth import AuthStorage
from wolli.config.settings import Settings
kind, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.stdin.readline()  # every writer starts at the same moment
for i in range(count):
    if kind == "settings":
        Settings().update({f"{name}-{i}": i}, target="global")
    else:
        AuthStorage().set_api_key(f"{name}-{i}", f"key-{i}")
"""


def run_writers(kind: str, writers: int, count: int, home: Path) -> None:
    env = {**os.environ, "WOLLI_HOME": str(home), "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, kind, f"w{n}", str(count)], stdin=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
        for n in range(writers)
    ]
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err


@pytest.mark.skipif(sys.platform == "win32", reason="flock is POSIX")
def test_concurrent_settings_updates_all_land(wolli_home: Path) -> None:
    run_writers("settings", writers=4, count=25, home=wolli_home)
    import json

    data = json.loads((wolli_home / "settings.json").read_text())
    assert sorted(data) == sorted(f"w{n}-{i}" for n in range(4) for i in range(25))


@pytest.mark.skipif(sys.platform == "win32", reason="flock is POSIX")
def test_concurrent_auth_saves_all_land_and_the_file_stays_private(wolli_home: Path) -> None:
    run_writers("auth", writers=4, count=15, home=wolli_home)
    import json

    path = wolli_home / "auth.json"
    assert sorted(json.loads(path.read_text())) == sorted(f"w{n}-{i}" for n in range(4) for i in range(15))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
