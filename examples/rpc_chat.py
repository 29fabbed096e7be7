"""A terminal chat that drives ``wolli --mode rpc`` through :mod:`wolli.rpc_client`.

Run it in a project folder (arguments go to wolli, e.g. a model)::

    python examples/rpc_chat.py --model anthropic/claude-sonnet-4-5

Type a message and press Enter; the answer streams in as it arrives, tool calls are shown
as one line each, and an extension's dialog (confirm, select, input, editor) is asked on
the terminal. ``/state`` shows the session state; an empty line or end of input quits.
"""

from __future__ import annotations

import sys
from typing import Any

from wolli.rpc_client import RpcClient


def ask(request: dict[str, Any]) -> Any:
    """Answer an extension's dialog on the terminal (fire-and-forget requests are shown)."""
    method = request["method"]
    if method == "notify":
        print(f"[{request.get('notifyType', 'info')}] {request['message']}")
        return None
    if method not in ("confirm", "select", "input", "editor"):
        return None
    print(f"? {request.get('title', '')} {request.get('message', '')}".rstrip())
    if method == "select":
        for number, option in enumerate(request["options"], 1):
            print(f"  {number}. {option}")
    reply = sys.stdin.readline().strip()
    if method == "confirm":
        return reply.lower() in ("y", "yes")
    if method == "select":
        return request["options"][int(reply) - 1] if reply.isdigit() else None
    return reply or None


def show(event: dict[str, Any]) -> None:
    kind = event["type"]
    if kind == "message_update" and event["assistantMessageEvent"]["type"] == "text_delta":
        print(event["assistantMessageEvent"]["delta"], end="", flush=True)
    elif kind == "tool_execution_start":
        print(f"\n[tool] {event['toolName']} {event['args']}")
    elif kind == "agent_settled":
        print()


def main(argv: list[str]) -> int:
    with RpcClient(argv, on_event=show, on_ui_request=ask, timeout=600) as client:
        while True:
            print("> ", end="", flush=True)
            line = sys.stdin.readline().strip()
            if not line:
                break
            if line == "/state":
                print(client.get_state())
                continue
            client.prompt(line)
            client.wait_for("agent_settled")
        return client.close()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
