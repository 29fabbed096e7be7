"""The editor's view of files and its terminals, as one more ``Environment``.

Each ACP session's tools get two environments (``AgentHost.session_environments``):

- files: when the client offers ``fs/read_text_file``/``fs/write_text_file``, reads and
  writes of text go through the editor, so the agent sees and edits unsaved buffers. A file
  the editor cannot give as text (an image, bytes that are not UTF-8) and every directory,
  stat and search stay on the host. Either way the environment keeps a :class:`FileLog` of
  what each write replaced, which becomes the ``diff`` of the edit or write tool call;
- shell: when the client offers ``terminal/*``, bash runs in a client terminal the user can
  watch (embedded in the tool call); with the sandbox on it stays in the sandbox here.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field

from ...tools.environment import Environment, ExecOptions, ExecResult
from .sdk import Client, RequestError, schema

log = logging.getLogger("wolli.acp")

# How often a running client terminal's output is fetched for the tool's live view (s).
POLL_S = 0.25
# The output a client terminal keeps (bytes); the bash tool keeps its own tail as well.
TERMINAL_OUTPUT_LIMIT = 1024 * 1024
# Texts kept for diffs, per session (the last ones read; a write consumes its entry).
_READ_MEMORY = 32


@dataclass
class FileLog:
    """What the session's file tools read and replaced: the ``diff`` of edit/write calls."""

    seen: dict[str, str] = field(default_factory=dict)  # path -> text last read
    written: dict[str, tuple[str | None, str]] = field(default_factory=dict)  # path -> (old, new)

    def read(self, path: str, data: bytes) -> None:
        try:
            self.seen[path] = data.decode("utf-8")
        except UnicodeDecodeError:
            return
        while len(self.seen) > _READ_MEMORY:
            self.seen.pop(next(iter(self.seen)))

    def wrote(self, path: str, old: str | None, data: bytes | str) -> None:
        try:
            new = data if isinstance(data, str) else data.decode("utf-8")
        except UnicodeDecodeError:
            return
        self.written[path] = (old, new)
        self.seen.pop(path, None)

    def take(self, path: str) -> tuple[str | None, str] | None:
        return self.written.pop(path, None)


@dataclass
class ClientOffers:
    read: bool = False
    write: bool = False
    terminal: bool = False


def file_environment(base: Environment, client: Client, session_id: str, offers: ClientOffers,
                     files: FileLog) -> Environment:
    """``base`` with reads and writes of text through the editor (when offered), logged."""

    async def read_file(path: str) -> bytes:
        data: bytes | None = None
        if offers.read:
            try:
                answer = await client.read_text_file(session_id=session_id, path=path)
                data = answer.content.encode("utf-8")
            except (RequestError, ConnectionError) as exc:
                log.debug("fs/read_text_file %s refused (%s): read from disk", path, exc)
        if data is None:
            data = await base.read_file(path)
        files.read(path, data)
        return data

    async def write_file(path: str, data: bytes | str) -> None:
        old = files.seen.get(path)
        if old is None and os.path.isfile(path):
            try:
                old = (await read_file(path)).decode("utf-8")
            except (OSError, UnicodeDecodeError):
                old = None
        text: str | None = None
        if offers.write:
            try:
                text = data if isinstance(data, str) else data.decode("utf-8")
            except UnicodeDecodeError:
                text = None
        if text is not None:
            try:
                await client.write_text_file(session_id=session_id, path=path, content=text)
            except RequestError as exc:
                raise OSError(f"the editor refused the write: {exc}") from None
        else:
            await base.write_file(path, data)
        files.wrote(path, old, data)

    return base.derive(read_file=read_file, write_file=write_file)


def shell_environment(base: Environment, client: Client, session_id: str, offers: ClientOffers,
                      on_terminal: Callable[[str, str], None]) -> Environment:
    """``base`` with commands run in a client terminal (when offered). ``on_terminal(command,
    terminal_id)`` lets the session embed the terminal in the tool call that runs it."""
    if not offers.terminal:
        return base

    async def exec(command: str, cwd: str | None = None, options: ExecOptions | None = None) -> ExecResult:
        return await run_in_terminal(client, session_id, base, command, cwd or base.cwd,
                                     options or ExecOptions(), on_terminal)

    return base.derive(exec=exec)


async def run_in_terminal(client: Client, session_id: str, base: Environment, command: str, cwd: str,
                          options: ExecOptions, on_terminal: Callable[[str, str], None]) -> ExecResult:
    shell = base.shell_path or ("/bin/bash" if os.path.exists("/bin/bash") else "/bin/sh")
    env = [schema.EnvVariable(name=k, value=v) for k, v in (options.env or {}).items()]
    created = await client.create_terminal(session_id=session_id, command=shell, args=["-c", command], cwd=cwd,
                                           env=env or None, output_byte_limit=TERMINAL_OUTPUT_LIMIT)
    terminal_id = created.terminal_id
    on_terminal(command, terminal_id)
    seen = ""

    async def pump() -> None:
        """New output since the last look goes to the tool's live view."""
        nonlocal seen
        answer = await client.terminal_output(session_id=session_id, terminal_id=terminal_id)
        text = answer.output
        new = text[len(seen):] if text.startswith(seen) else text  # the client cut its start: all again
        seen = text
        if new and options.on_data is not None:
            options.on_data(new.encode("utf-8"))

    waiting = asyncio.ensure_future(client.wait_for_terminal_exit(session_id=session_id, terminal_id=terminal_id))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + options.timeout if options.timeout else None
    timed_out = aborted = False
    try:
        while not waiting.done():
            if options.signal is not None and getattr(options.signal, "aborted", False):
                aborted = True
                break
            if deadline is not None and loop.time() >= deadline:
                timed_out = True
                break
            await asyncio.wait([waiting], timeout=POLL_S)
            await pump()
        if aborted or timed_out:
            await client.kill_terminal(session_id=session_id, terminal_id=terminal_id)
            waiting.cancel()
            exit_code = None
        else:
            exit_code = waiting.result().exit_code
        await pump()
        return ExecResult(exit_code=exit_code, output="" if options.on_data is not None else seen,
                          timed_out=timed_out, aborted=aborted)
    finally:
        if not waiting.done():
            waiting.cancel()
        try:
            await client.release_terminal(session_id=session_id, terminal_id=terminal_id)
        except (RequestError, ConnectionError) as exc:
            log.debug("terminal/release %s: %s", terminal_id, exc)
