"""Driving ``wolli --mode rpc`` as a real subprocess through :mod:`wolli.rpc_client`."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tests.support.loopback import Reply, sse_reply
from tests.support.openai_chat import text_answer
from wolli.rpc_client import RpcClient

MODEL = ["--model", "local/local-model"]

# An extension that exercises every ctx.ui member the RPC protocol carries.
UI_PROBE = '''
def extension(wolli):
    print("printed while loading: must reach stderr, never the protocol")

    async def ask(args, ctx):
        method, _, rest = args.partition(" ")
        timeout = float(rest) if rest else None
        if method == "select":
            value = await ctx.ui.select("Pick one", ["red", {"label": "Green", "value": "g"}], timeout=timeout)
        elif method == "confirm":
            value = await ctx.ui.confirm("Sure?", "Really do it?", timeout=timeout)
        elif method == "input":
            value = await ctx.ui.input("Name?", "your name", timeout=timeout)
        else:
            value = await ctx.ui.editor("Edit", "line 1\\nline 2", timeout=timeout)
        ctx.ui.notify(f"{method} -> {value!r} in {ctx.mode}", "info")

    wolli.register_command("ask", handler=ask, description="Ask through a dialog")

    def widgets(args, ctx):
        print("an extension print during a command")
        ctx.ui.set_status("probe", "busy")
        ctx.ui.set_status("probe", None)
        ctx.ui.set_widget("probe", ["line a", "line b"], placement="below_editor")
        ctx.ui.set_widget("probe", lambda *a: None)
        ctx.ui.set_widget("probe", None)
        ctx.ui.set_title("wolli - probe")
        ctx.ui.set_editor_text("prefilled")
        ctx.ui.notify("widgets done", "warning")

    wolli.register_command("widgets", handler=widgets, description="Fire-and-forget UI calls")

    async def guarded(tool_call_id, params, signal, on_update, ctx):
        ok = await ctx.ui.confirm("Run guarded?", "it asks first", signal=signal)
        return {"content": [{"type": "text", "text": f"confirmed={ok}"}]}

    wolli.register_tool({"name": "guarded", "description": "Asks before it runs",
                         "parameters": {"type": "object", "properties": {}}, "execute": guarded})

    def threaded(tool_call_id, params, signal, on_update, ctx):  # sync: runs in a worker thread
        import asyncio

        ok = asyncio.run(ctx.ui.confirm("From a thread?"))
        return {"content": [{"type": "text", "text": f"thread confirmed={ok}"}]}

    wolli.register_tool({"name": "threaded", "description": "Asks from a worker thread",
                         "parameters": {"type": "object", "properties": {}}, "execute": threaded})
'''


def write_models(home: Path, base_url: str, context_window: int = 32000) -> None:
    """Two local models on the loopback server; the second one reasons (thinking levels)."""
    (home / "models.json").write_text(json.dumps({"providers": {"local": {
        "baseUrl": base_url, "api": "openai-completions",
        "models": [{"id": "local-model", "contextWindow": context_window, "maxTokens": 4096, "input": ["text", "image"]},
                   {"id": "local-thinker", "contextWindow": context_window, "maxTokens": 4096, "reasoning": True}],
    }}}))


# Every client a test started; the ``close_rpc_clients`` fixture ends them after the test, so
# a test that returns (or fails) with its server still running leaves no process behind.
STARTED: list[RpcClient] = []


def start_client(cwd: Path, *args: str, **kwargs: Any) -> RpcClient:
    """``python -m wolli --mode rpc ARGS`` in ``cwd`` with this process's environment."""
    kwargs.setdefault("timeout", 30.0)
    client = RpcClient(list(args), cwd=cwd, env=os.environ.copy(), **kwargs).start()
    STARTED.append(client)
    return client


def close_started(timeout: float = 5.0) -> None:
    while STARTED:
        client = STARTED.pop()
        if client.process is not None and client.process.poll() is None:
            client.close(timeout)


def hanging_answer(text: str, pieces: int = 3) -> Reply:
    """An answer that streams its first ``pieces`` SSE events, then never finishes."""
    body = text_answer(text).body
    cut = 0
    for _ in range(pieces):
        cut = body.index(b"\n\n", cut) + 2
    return sse_reply(body[:cut], hang=True)


# An extension whose /quit command asks Wolli to shut down (``wolli.shutdown()``).
QUITTER = '''
def extension(wolli):
    def quit_now(args, ctx):
        ctx.ui.notify("bye")
        wolli.shutdown()

    wolli.register_command("quit", handler=quit_now, description="Shut down")
'''
