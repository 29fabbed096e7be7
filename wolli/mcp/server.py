"""One configured server, supervised: connect, list what it offers, serve calls, reconnect.

States: ``connecting`` → ``ready`` (with N tools) | ``failed`` (with the reason) |
``needs-login`` (OAuth wanted and no usable token); ``disabled`` when the user switched it
off; ``stopped`` after shutdown. A server that was ready and dropped (its process exited,
its connection closed) is reconnected with exponential back-off (1 s, 2 s, 4 s … 30 s, at
most :data:`MAX_RECONNECTS` times); one that never came up stays ``failed`` until the user
asks for a reconnect, so a missing command is reported once, not every second.

A call made while the server is not ready, one that the server crashes in the middle of,
and one that returns garbage all end as :class:`~.types.McpError` with one line of reason,
which the tool turns into an error result for the model.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .oauth import LoginHandler, TokenStore
from .stdio import StderrLog, StdioProcess
from .types import (
    CallOutcome,
    McpClient,
    McpError,
    NeedsLogin,
    PromptMessageInfo,
    ServerConfig,
    ServerOffer,
    State,
)

if TYPE_CHECKING:
    from types import ModuleType

log = logging.getLogger("wolli.mcp")
MAX_RECONNECTS = 6
BACKOFF_START = 1.0
BACKOFF_MAX = 30.0
CONNECT_TIMEOUT = 60.0  # npx may download the package on its first start

_sdk: ModuleType | None = None
_sdk_lock: asyncio.Lock | None = None


async def load_sdk() -> ModuleType:
    """The adapter module, imported once in a worker thread (the SDK takes ~0.5 s); the
    servers starting together wait for that one import."""
    global _sdk, _sdk_lock
    if _sdk is not None:
        return _sdk
    if _sdk_lock is None:
        _sdk_lock = asyncio.Lock()
    async with _sdk_lock:
        if _sdk is None:
            _sdk = await asyncio.to_thread(importlib.import_module, "wolli.mcp.sdk")
        return _sdk


class McpServer:
    def __init__(self, config: ServerConfig, *, log_dir: Path | None, tokens: TokenStore,
                 on_change: Callable[[McpServer], None], enabled: bool = True) -> None:
        self.config = config
        self.name = config.name
        self.tokens = tokens
        tokens.bind(config.name, config.url)
        self.log = StderrLog(log_dir / f"mcp-{config.name}.log" if log_dir else None)
        self.on_change = on_change
        self.state: State = "connecting" if enabled else "disabled"
        self.error: str | None = None
        self.offer = ServerOffer()
        self.client: McpClient | None = None
        self.process: StdioProcess | None = None
        self.connected_at: float | None = None
        self.attempts = 0
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._dropped = asyncio.Event()
        self._refresh = asyncio.Event()
        self._settled = asyncio.Event()
        self._login: LoginHandler | None = None

    # ------------------------------------------------------------------ life cycle

    def start(self, login: LoginHandler | None = None) -> None:
        if self._task is not None and not self._task.done():
            return
        self._stop = asyncio.Event()
        self._settled = asyncio.Event()
        self._login = login
        self._set("connecting")
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"mcp:{self.name}")

    async def stop(self, state: State = "stopped") -> None:
        self._stop.set()
        task = self._task
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(asyncio.shield(task), 10)
            except (TimeoutError, asyncio.CancelledError):
                task.cancel()
        if self.process is not None and self.process.returncode is None:
            self.process.kill_now()
        self.client = None
        self._set(state)

    async def restart(self, login: LoginHandler | None = None) -> None:
        await self.stop("connecting")
        self.attempts = 0
        self.start(login)

    async def wait_settled(self) -> None:
        """Until the first connect attempt ended (ready, failed, needs login)."""
        await self._settled.wait()

    @property
    def settled(self) -> bool:
        return self._settled.is_set() or self.state in ("disabled", "stopped")

    def _set(self, state: State, error: str | None = None) -> None:
        self.state, self.error = state, error
        if state != "connecting":
            self._settled.set()
        try:
            self.on_change(self)
        except Exception:
            log.exception("mcp state listener failed")

    async def _run(self) -> None:
        delay = BACKOFF_START
        was_ready = False
        while not self._stop.is_set():
            self.attempts += 1
            outcome = await self._session_once()
            if self._stop.is_set():
                return
            if outcome == "needs-login" or not (was_ready or self.connected_at):
                return  # never came up: reported once; /mcp reconnects
            was_ready = True
            if self.attempts > MAX_RECONNECTS:
                self._set("failed", f"{self.error or 'disconnected'} (gave up after {MAX_RECONNECTS} reconnects)")
                return
            self.log.note(f"reconnecting in {delay:g} s")
            try:
                await asyncio.wait_for(self._stop.wait(), delay)
                return
            except TimeoutError:
                pass
            delay = min(delay * 2, BACKOFF_MAX)
            self._set("connecting", self.error)

    async def _session_once(self) -> str:
        """One connection from connect to drop; returns how it ended."""
        self._dropped = asyncio.Event()
        try:
            sdk = await load_sdk()
        except Exception as exc:  # the SDK is missing or broken: say so, do not crash
            self._set("failed", f"the MCP SDK could not be loaded: {exc}")
            return "failed"
        try:
            async with asyncio.timeout(None) as deadline:
                deadline.reschedule(asyncio.get_running_loop().time() + CONNECT_TIMEOUT)
                async with sdk.connect(self.config, log=self.log, tokens=self.tokens, login=self._login,
                                       on_list_changed=self._refresh.set, on_process=self._watch_process) as client:
                    offer = await client.offer()
                    deadline.reschedule(None)
                    self.client, self.offer, self.connected_at = client, offer, time.monotonic()
                    self.attempts = 0 if self.attempts > 1 else self.attempts
                    self._set("ready")
                    self.log.note(f"ready: {len(offer.tools)} tools, {len(offer.prompts)} prompts, "
                                  f"{len(offer.resources)} resources")
                    await self._serve(client)
            if self._stop.is_set():
                return "stopped"
            self._set("failed", self._exit_reason("disconnected"))
            return "dropped"
        except NeedsLogin as exc:
            self._set("needs-login", str(exc))
            return "needs-login"
        except TimeoutError:
            self._set("failed", f"no answer within {CONNECT_TIMEOUT:g} s")
            return "failed"
        except McpError as exc:
            self._set("failed", self._exit_reason(str(exc)))
            return "failed"
        except Exception as exc:  # a fault in the SDK or a transport: one line, never a crash
            log.debug("mcp %s failed", self.name, exc_info=True)
            self._set("failed", self._exit_reason(f"{type(exc).__name__}: {exc}"))
            return "failed"
        finally:
            self.client = None
            self.process = None

    async def _serve(self, client: McpClient) -> None:
        """Hold the connection until stop, drop, or a list change (then read the lists again)."""
        while True:
            waits = [asyncio.ensure_future(e.wait()) for e in (self._stop, self._dropped, self._refresh)]
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for w in waits:
                    w.cancel()
            if self._stop.is_set() or self._dropped.is_set():
                return
            self._refresh.clear()
            try:
                self.offer = await client.offer()
                self._set("ready")
            except McpError as exc:
                self.log.note(f"could not read the lists again: {exc}")

    def _watch_process(self, process: StdioProcess) -> None:
        self.process = process

        async def watch() -> None:
            while process.returncode is None:
                await asyncio.sleep(0.1)
            self._dropped.set()

        asyncio.get_running_loop().create_task(watch())

    def _exit_reason(self, reason: str) -> str:
        process = self.process
        if process is not None and process.returncode is not None:
            code = process.returncode
            reason = f"the server exited (code {code})" if code >= 0 else f"the server was killed (signal {-code})"
        tail = self.log.last(2)
        return f"{reason}; stderr: {tail}" if tail and self.config.transport == "stdio" else reason

    # ------------------------------------------------------------------ calls

    def _ready_client(self) -> McpClient:
        if self.state != "ready" or self.client is None:
            why = f": {self.error}" if self.error else ""
            raise McpError(f"MCP server {self.name} is not connected ({self.state}{why})")
        return self.client

    async def call_tool(self, name: str, arguments: dict[str, Any], signal: Any = None) -> CallOutcome:
        """Call ``name``; the abort signal cancels the request (the server is told so)."""
        client = self._ready_client()
        call = asyncio.ensure_future(client.call_tool(name, arguments))
        dropped = asyncio.ensure_future(self._dropped.wait())
        remove = signal.add_listener(lambda: _cancel_soon(call)) if signal is not None else None
        try:
            await asyncio.wait({call, dropped}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            call.cancel()
            raise
        finally:
            dropped.cancel()
            if remove is not None:
                remove()
        if not call.done():
            call.cancel()
            raise McpError(f"MCP server {self.name} {self._exit_reason('closed the connection')} during the call")
        if call.cancelled():
            raise McpError("the call was cancelled")
        return call.result()

    async def read_resource(self, uri: str) -> list[dict[str, Any]]:
        return await self._ready_client().read_resource(uri)

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> list[PromptMessageInfo]:
        return await self._ready_client().get_prompt(name, arguments)

    # ------------------------------------------------------------------ view

    def summary(self) -> str:
        if self.state == "ready":
            n = len(self.offer.tools)
            return f"ready, {n} tool{'s' if n != 1 else ''}"
        if self.error and self.state in ("failed", "needs-login", "connecting"):
            return f"{self.state}: {self.error}"
        return self.state


def _cancel_soon(task: asyncio.Future[Any]) -> None:
    """Abort signals may fire from any thread: cancel on the task's own loop."""
    try:
        task.get_loop().call_soon_threadsafe(task.cancel)
    except RuntimeError:
        pass
