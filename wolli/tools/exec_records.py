"""What a command run through the shell is given and gives back.

Its own module so that :mod:`.environment` (imported at every start) can name them without
importing the process machinery of :mod:`.process` (supervisor, process tree), which loads
with the first command run; ``typing.get_type_hints`` on ``Environment.exec`` still resolves.
"""

from __future__ import annotations

from collections.abc import Callable

from ..ai.abort import AbortSignal
from ..base.records import record

__all__ = ["ExecOptions", "ExecResult"]


@record
class ExecOptions:
    timeout: float | None = None  # seconds; on expiry the whole process tree is killed
    signal: AbortSignal | None = None  # AbortSignal; abort kills the whole process tree
    # Receives output bytes (stdout and stderr interleaved) as they arrive. When given,
    # the result's ``output`` stays empty: the caller keeps what it needs.
    on_data: Callable[[bytes], None] | None = None
    env: dict[str, str] | None = None  # extra environment variables


@record
class ExecResult:
    exit_code: int | None  # None when killed
    output: str = ""  # combined stdout+stderr (only when no on_data was given)
    timed_out: bool = False
    aborted: bool = False
