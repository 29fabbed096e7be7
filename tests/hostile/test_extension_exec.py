"""``wolli.exec`` from an extension: a command that floods its output keeps a bounded start."""

from __future__ import annotations

import asyncio
import sys

from wolli.tools.process import run_command


def test_flooding_command_is_capped_and_still_finishes(tmp_path) -> None:
    # 4 MB on stdout, 3 MB on stderr, against a 1 MB cap: both pipes must keep draining
    # (or the child would block on a full pipe and never exit).
    script = ("import sys; sys.stdout.write('o' * (4 << 20)); sys.stdout.flush(); "
              "sys.stderr.write('e' * (3 << 20)); print('done', file=sys.stderr)")
    result = asyncio.run(run_command(sys.executable, ["-c", script], cwd=str(tmp_path), timeout=60,
                                     output_cap=1 << 20))
    assert result.code == 0 and not result.killed
    assert result.truncated
    assert result.stdout == "o" * (1 << 20)
    assert result.stderr == "e" * (1 << 20)


def test_small_output_is_whole_and_not_truncated(tmp_path) -> None:
    result = asyncio.run(run_command("printf 'a\\nb'; printf err >&2", cwd=str(tmp_path), timeout=30))
    assert (result.stdout, result.stderr, result.code, result.truncated) == ("a\nb", "err", 0, False)
    assert result["code"] == 0  # results also read as mappings, like every object handed to extensions
