"""An editor for tests: the ACP SDK's client side spawning ``wolli --mode acp``.

:class:`EditorClient` records every ``session/update``, answers permission questions from
a script, serves ``fs/*`` from an in-memory buffer table (falling back to the disk) and
runs ``terminal/*`` commands as real processes, like an editor would.
"""

from __future__ import annotations

import asyncio
import os
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalResponse,
    DeniedOutcome,
    FileSystemCapabilities,
    Implementation,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from tests.support.waiting import wait_until

MODEL = ("--model", "local/local-model")
_STARTED: list[asyncio.subprocess.Process] = []


class EditorClient:
    def __init__(self) -> None:
        self.updates: list[tuple[str, Any]] = []  # (session id, update)
        self.permission_answers: list[str | None] = []  # option ids to pick, None: cancelled
        self.permission_requests: list[Any] = []
        self.buffers: dict[str, str] = {}  # path -> unsaved text the editor holds
        self.fs_reads: list[str] = []
        self.fs_writes: list[tuple[str, str]] = []
        self.terminals: dict[str, dict[str, Any]] = {}
        self.hold_permission: asyncio.Event | None = None

    # ------------------------------------------------------------------ the protocol

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any) -> Any:
        self.permission_requests.append((tool_call, options))
        if self.hold_permission is not None:
            await self.hold_permission.wait()
        answer = self.permission_answers.pop(0) if self.permission_answers else None
        if answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=answer))

    async def read_text_file(self, session_id: str, path: str, line: int | None = None, limit: int | None = None,
                             **kwargs: Any) -> Any:
        self.fs_reads.append(path)
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        try:
            return ReadTextFileResponse(content=Path(path).read_text("utf-8"))
        except FileNotFoundError:
            raise RequestError.resource_not_found(path) from None

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> Any:
        self.fs_writes.append((path, content))
        self.buffers[path] = content
        return WriteTextFileResponse()

    async def create_terminal(self, session_id: str, command: str, args: list[str] | None = None, env: Any = None,
                              cwd: str | None = None, output_byte_limit: int | None = None, **kwargs: Any) -> Any:
        process = await asyncio.create_subprocess_exec(
            command, *(args or []), cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
            env={**os.environ, **{e.name: e.value for e in env or []}})
        terminal_id = f"term-{len(self.terminals) + 1}"
        record: dict[str, Any] = {"process": process, "output": b"", "command": [command, *(args or [])]}

        async def pump() -> None:
            assert process.stdout is not None
            while chunk := await process.stdout.read(4096):
                record["output"] += chunk

        record["pump"] = asyncio.ensure_future(pump())
        self.terminals[terminal_id] = record
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        record = self.terminals[terminal_id]
        code = record["process"].returncode
        status = TerminalExitStatus(exit_code=code) if code is not None and record["pump"].done() else None
        return TerminalOutputResponse(output=record["output"].decode("utf-8", "replace"), truncated=False,
                                      exit_status=status)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        record = self.terminals[terminal_id]
        code = await record["process"].wait()
        await record["pump"]
        return WaitForTerminalExitResponse(exit_code=code)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> None:
        process = self.terminals[terminal_id]["process"]
        if process.returncode is None:
            process.kill()

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        self.terminals[terminal_id]["released"] = True
        return ReleaseTerminalResponse()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    def on_connect(self, conn: Any) -> None:
        pass

    # ------------------------------------------------------------------ reading what came

    def of(self, session_id: str, kind: str) -> list[Any]:
        return [u for s, u in self.updates if s == session_id and u.session_update == kind]

    def text(self, session_id: str, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of(session_id, kind))

    async def wait_for(self, session_id: str, kind: str, count: int = 1, timeout: float = 20) -> list[Any]:
        await wait_until(lambda: len(self.of(session_id, kind)) >= count, timeout, f"{count} {kind}")
        return self.of(session_id, kind)


@asynccontextmanager
async def editor(cwd: Path, *args: str, fs: bool = False, terminal: bool = False, initialize: bool = True):
    """(connection, client, process) for ``wolli --mode acp ARGS`` started in ``cwd``."""
    client = EditorClient()
    async with spawn_agent_process(client, sys.executable, "-m", "wolli", "--mode", "acp", *args,
                                   cwd=cwd, env=os.environ.copy()) as (conn, process):
        _STARTED.append(process)
        if initialize:
            await conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(
                    fs=FileSystemCapabilities(read_text_file=fs, write_text_file=fs), terminal=terminal),
                client_info=Implementation(name="test-editor", title="Test editor", version="1.0"),
            )
        yield conn, client, process


def close_started() -> None:
    while _STARTED:
        process = _STARTED.pop()
        if process.returncode is None:
            try:
                process.kill()
            except ProcessLookupError:
                pass
