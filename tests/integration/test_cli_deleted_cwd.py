"""Started in a folder that was deleted: one line saying so, not a traceback.

Found by hand: ``mkdir x; cd x; rmdir ../x; wolli -p hi`` ended in a FileNotFoundError
traceback from ``os.getcwd()`` (in the module bundle's set-up, before anything else).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize("args", [["-p", "hi"], ["--mode", "rpc"], ["list"]])
def test_a_deleted_working_folder_is_one_line(tmp_path, wolli_home, args):
    gone = tmp_path / "gone"
    gone.mkdir()
    script = 'cd "$1" && rmdir "$1" && shift && exec "$@"'
    result = subprocess.run(["sh", "-c", script, "sh", str(gone), sys.executable, "-m", "wolli", *args],
                            capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                            env=os.environ.copy())
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "wolli: the current folder no longer exists (deleted or moved away); cd into a folder and run it again"]
