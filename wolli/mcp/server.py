"""One configured server, supervised: connect, list what it offers, serve calls, reconnect.

States: ``connecting`` → ``ready`` (with N tools) | ``failed`` (with the reason) |
``needs-login`` (OAuth wanted and no usable token); ``disabled`` when the user switched it
off; ``stopped`` after shutdown. A server that was ready and dropped (its process exited,
its connection closed) is reconnected with exponential back-off (1 s, 2 s, 4 s … 30 s, at
most :data:`MAX_RECONNECTS` times); one that never came up stays ``failed`` until the user
asks for a reconnect, so a missing command is reported once, not every second.

While it connects, a server may already have a *known* list: the one cached from an earlier
run (:mod:`.cache`) or the one it had before it dropped. Its tools are offered from that list
at once; a call made before the server is ready waits for it (at most the start-up timeout),
and a call to a tool the fresh list no longer has is a clear error for the model.

A call that the server crashes in the middle of, one that returns garbage, and one to a
server that never came up all end as :class:`~.types.McpError` with one line of reason,
which the tool turns into an error result for the model.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..ai.abort import AbortSignal
from .oauth import LoginHandler, TokenStore
from .stdio import StderrLog, StdioProcess
from .types import (
    CallOutcome,
    McpClient,
    McpError,
    NeedsLogin,
    OnProgress,
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
DEFAULT_CALL_WAIT = 30.0  # a call to a server still connecting waits this long (mcp.startupTimeoutMs)

_sdk_import: concurrent.futures.Future[ModuleType] | None = None
_sdk_import_lock = threading.Lock()


def _import_sdk() -> concurrent.futures.Future[ModuleType]:
    """Start importing the adapter (and the SDK, ~0.5 s) in a thread, once per process.

    Not a daemon thread: one cut off by the interpreter's exit in the middle of importing the
    SDK's compiled (Rust) modules can crash the process, so an exit waits for the import to
    end (see the link's deferred start, which avoids starting it for short runs)."""
    global _sdk_import
    with _sdk_import_lock:
        if _sdk_import is None:
            future: concurrent.futures.Future[ModuleType] = concurrent.futures.Future()

            def work() -> None:
                try:
                    module = importlib.import_module("wolli.mcp.sdk")
                    importlib.import_module("jsonschema")  # the fresh lists' schemas are checked with it
                    future.set_result(module)
                except BaseException as exc:  # reported to every server that waits for it
                    future.set_exception(exc)

            threading.Thread(target=work, name="wolli-mcp-sdk-import").start()
            _sdk_import = future
        return _sdk_import


async def load_sdk() -> ModuleType:
    """The adapter module; the servers starting together wait for the one import."""
    future = _import_sdk()
    if future.done():
        return future.result()
    return await asyncio.wrap_future(future)


class McpServer:
    def __init__(self, config: ServerConfig, *, log_dir: Path | None, tokens: TokenStore,
                 on_change: Callable[[McpServer], None], enabled: bool = True,
                 cached: ServerOffer | None = None,
                 call_wait: Callable[[], float] = lambda: DEFAULT_CALL_WAIT) -> None:
        self.config = config
        self.name = config.name
        self.tokens = tokens
        tokens.bind(config.name, config.url)
        self.log = StderrLog(log_dir / f"mcp-{config.name}.log" if log_dir else None)
        self.on_change = on_change
        self.call_wait = call_wait
        self.state: State = "connecting" if enabled else "disabled"
        self.error: str | None = None
        self.offer = ServerOffer()
        # The list to offer while connecting: from the cache, or the one before a drop.
        self.known: ServerOffer | None = cached
        self.client: McpClient | None = None
        self.process: StdioProcess | None = None
        self.connected_at: float | None = None
        self.attempts = 0
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._dropped = asyncio.Event()
        self._refresh = asyncio.Event()
        self._settled = asyncio.Event()
        self._not_connecting = asyncio.Event()  # set whenever the state is not "connecting"
        if self.state != "connecting":
            self._not_connecting.set()
        self._login: LoginHandler | None = None
        self._refresh_tried = False
        self._exiting = False
        self._watchers: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------------ life cycle

    def start(self, login: LoginHandler | None = None) -> None:
        if self._task is not None and not self._task.done():
            return
        self._stop = asyncio.Event()
        self._settled = asyncio.Event()
        self._login = login
        self._exiting = False
        self._set("connecting")
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"mcp:{self.name}")

    async def stop(self, state: State = "stopped", *, exiting: bool = False) -> None:
        """End the connection. ``exiting``: Wolli is about to exit, so the server gets a short
        grace after its stdin closes and is then left to the watchdog (see :meth:`StdioProcess.stop`)."""
        self._exiting = exiting
        self._stop.set()
        process = self.process
        if exiting and process is not None:
            process.exiting = True
            await process.stop()
        task = self._task
        if task is not None and not task.done():
            if exiting:
                task.cancel()  # its process is stopped (or never started): nothing left to wind down
            else:
                try:
                    await asyncio.wait_for(asyncio.shield(task), 10)
                except (TimeoutError, asyncio.CancelledError):
                    task.cancel()
        for watcher in list(self._watchers):
            watcher.cancel()
        if self.process is not None and self.process.returncode is None and not exiting:
            self.process.kill_now()
        self.client = None
        self._set(state)

    def forget_login(self) -> None:
        """Later reconnects refresh the token themselves, without a browser."""
        self._login = None

    async def restart(self, login: LoginHandler | None = None) -> None:
        await self.stop("connecting")
        self.attempts = 0
        self._refresh_tried = False
        self.start(login)

    async def wait_settled(self) -> None:
        """Until the first connect attempt ended (ready, failed, needs login)."""
        await self._settled.wait()

    @property
    def settled(self) -> bool:
        return self._settled.is_set() or self.state in ("disabled", "stopped")

    def offered(self) -> ServerOffer | None:
        """The list whose tools the model sees now: the live one when ready, the known one
        while connecting, none otherwise."""
        if self.state == "ready":
            return self.offer
        if self.state == "connecting":
            return self.known
        return None

    def _set(self, state: State, error: str | None = None) -> None:
        self.state, self.error = state, error
        if state == "connecting":
            self._not_connecting.clear()
        else:
            self._not_connecting.set()
            self._settled.set()
        if state in ("failed", "needs-login", "disabled", "stopped"):
            self.known = None  # its tools leave the next request; a reconnect starts afresh
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
            if outcome == "retry":
                continue
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
            self.known = self.offer if self.offer.tools else None
            self._set("connecting", self.error)

    async def _session_once(self) -> str:
        """One connection from connect to drop; returns how it ended."""
        self._dropped = asyncio.Event()
        try:
            sdk = await load_sdk()
        except Exception as exc:  # the SDK is missing or broken: say so, do not crash
            self._set("failed", f"the MCP SDK could not be loaded: {exc}")
            return "failed"
        if self._stop.is_set():
            return "stopped"
        try:
            # An interactive login also waits for the person in the browser.
            allowed = CONNECT_TIMEOUT + (self._login.timeout if self._login is not None else 0)
            async with asyncio.timeout(None) as deadline:
                deadline.reschedule(asyncio.get_running_loop().time() + allowed)
                async with sdk.connect(self.config, log=self.log, tokens=self.tokens, login=self._login,
                                       on_list_changed=self._refresh.set, on_process=self._watch_process) as client:
                    offer = await client.offer()
                    deadline.reschedule(None)
                    self.client, self.offer, self.connected_at = client, offer, time.monotonic()
                    self.attempts = 0 if self.attempts > 1 else self.attempts
                    self._refresh_tried = False
                    self._set("ready")
                    self.log.note(f"ready: {len(offer.tools)} tools, {len(offer.prompts)} prompts, "
                                  f"{len(offer.resources)} resources")
                    await self._serve(client)
            if self._stop.is_set():
                return "stopped"
            self._set("failed", self._exit_reason("disconnected"))
            return "dropped"
        except NeedsLogin as exc:
            if self._stop.is_set():
                return "stopped"
            return self._needs_login(str(exc))
        except TimeoutError:
            self._set("failed", f"no answer within {allowed:g} s")
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

    def _needs_login(self, reason: str) -> str:
        """A refused token: refresh it once if there is a refresh token, else ask for a login."""
        if self._login is not None:  # an interactive login that failed: its reason as it is
            self._set("needs-login", reason)
            return "needs-login"
        if not self._refresh_tried and self.tokens.can_refresh(self.name):
            self._refresh_tried = True
            self.tokens.expire(self.name)  # the next attempt refreshes before its first request
            return "retry"
        if self.tokens.has_tokens(self.name):
            line = f"the saved login was refused (expired or revoked); run /mcp login {self.name}"
        else:
            line = f"run /mcp login {self.name} (or wolli mcp login {self.name})"
        self._set("needs-login", line)
        return "needs-login"

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
        if self._exiting:
            process.exiting = True

        async def watch() -> None:
            while process.returncode is None:
                await asyncio.sleep(0.1)
            self._dropped.set()

        task = asyncio.get_running_loop().create_task(watch())
        self._watchers.add(task)
        task.add_done_callback(self._watchers.discard)

    def _exit_reason(self, reason: str) -> str:
        process = self.process
        if process is not None and process.returncode is not None:
            code = process.returncode
            reason = f"the server exited (code {code})" if code >= 0 else f"the server was killed (signal {-code})"
        tail = self.log.last(2)
        return f"{reason}; stderr: {tail}" if tail and self.config.transport == "stdio" else reason

    # ------------------------------------------------------------------ calls

    async def wait_ready(self, signal: AbortSignal | None = None) -> McpClient:
        """The live client; while the server is connecting, wait for it (at most the start-up
        timeout, or until ``signal`` aborts). A server whose start was put off (print mode
        with a warm cache) is started now."""
        if self._task is None and self.state == "connecting":
            self.start()
        if self.state == "connecting":
            waits: set[asyncio.Future[object]] = {asyncio.ensure_future(self._not_connecting.wait())}
            if signal is not None:
                waits.add(asyncio.ensure_future(signal.wait()))
            try:
                await asyncio.wait(waits, timeout=self.call_wait(), return_when=asyncio.FIRST_COMPLETED)
            finally:
                for w in waits:
                    w.cancel()
            if signal is not None and signal.aborted:
                raise McpError("the call was cancelled")
        if self.state != "ready" or self.client is None:
            if self.state == "connecting":
                raise McpError(f"MCP server {self.name} is still starting (waited {self.call_wait():g} s)")
            why = f": {self.error}" if self.error else ""
            raise McpError(f"MCP server {self.name} is not connected ({self.state}{why})")
        return self.client

    async def call_tool(self, name: str, arguments: dict[str, Any], signal: AbortSignal | None = None,
                        on_progress: OnProgress | None = None) -> CallOutcome:
        """Call ``name``; the abort signal cancels the request (the server is told so)."""
        client = await self.wait_ready(signal)
        if not any(tool.name == name for tool in self.offer.tools):
            raise McpError(f"MCP server {self.name} no longer offers the tool {name!r} (its tool list changed "
                           "since it was cached); use one of the tools you have now")
        call = asyncio.ensure_future(client.call_tool(name, arguments, on_progress))
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
        return await (await self.wait_ready()).read_resource(uri)

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> list[PromptMessageInfo]:
        return await (await self.wait_ready()).get_prompt(name, arguments)

    # ------------------------------------------------------------------ view

    def summary(self) -> str:
        if self.state == "ready":
            n = len(self.offer.tools)
            return f"ready, {n} tool{'s' if n != 1 else ''}"
        if self.state == "needs-login":
            return f"needs login: {self.error}" if self.error else "needs login"
        if self.error and self.state in ("failed", "connecting"):
            return f"{self.state}: {self.error}"
        return self.state


def _cancel_soon(task: asyncio.Future[CallOutcome]) -> None:
    """Abort signals may fire from any thread: cancel on the task's own loop."""
    try:
        task.get_loop().call_soon_threadsafe(task.cancel)
    except RuntimeError:
        pass
