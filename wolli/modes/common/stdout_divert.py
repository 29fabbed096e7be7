"""Keeping descriptor 1 for what a headless mode writes there, and stdout for the rest.

Everything else that writes to descriptor 1 (an extension's ``print``, a library's warning,
a child process inheriting it) goes to stderr instead, so it cannot split a protocol record
(RPC, ACP), fall between two JSON lines (``--mode json``) or join the answer (``-p``).
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO


def divert_stdout() -> int:
    """A private, non-inherited duplicate of descriptor 1; descriptor 1 and ``sys.stdout``
    then point at stderr."""
    sys.stdout.flush()
    private = os.dup(1)
    os.set_inheritable(private, False)
    os.dup2(2, 1)
    sys.stdout = io.TextIOWrapper(
        os.fdopen(1, "wb", closefd=False), encoding="utf-8", errors="replace", line_buffering=True
    )
    return private


@contextmanager
def answer_stdout() -> Iterator[TextIO]:
    """Print and json mode: the stream their answer or events go to, the real stdout;
    while it is held an extension's ``print`` (or a library's) lands on stderr instead of
    in the answer or between two JSON lines. Descriptor 1 and ``sys.stdout`` are put back
    afterwards (main() may run inside another program)."""
    original = sys.stdout
    private = divert_stdout()
    stream = io.TextIOWrapper(os.fdopen(private, "wb", closefd=False), encoding=original.encoding or "utf-8",
                              errors=original.errors or "strict", write_through=True)
    try:
        yield stream
    finally:
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        os.dup2(private, 1)  # after silence() this is /dev/null: no "Exception ignored" at exit
        os.close(private)
        sys.stdout = original
