"""Scripting a parent and its subagents on one loopback model server.

Children run at once, so their requests arrive in any order: a :class:`Router` answers each
request by who sent it, told apart by the system prompt (the parent has Wolli's own; a
child has its definition's body, which the tests give a marker). A rendezvous holds the
named children's first requests open until all of them have arrived, which proves they
ran concurrently without timing anything.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from tests.support.loopback import LoopbackServer, RecordedRequest, Reply, json_reply
from tests.support.openai_chat import sent_texts

PARENT_MARKER = "You are Wolli, an expert coding assistant"


def system_prompt(request: RecordedRequest) -> str:
    messages = request.json["messages"]
    first = messages[0] if messages else {}
    if first.get("role") not in ("system", "developer"):
        return ""
    content = first["content"]
    return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)


def tool_names(request: RecordedRequest) -> list[str]:
    return [tool["function"]["name"] for tool in request.json.get("tools") or []]


def tool_messages(request: RecordedRequest) -> list[str]:
    return sent_texts(request, "tool")


class Router:
    def __init__(self, markers: dict[str, str]) -> None:
        # role -> a text only that role's system prompt holds
        self.markers = markers
        self.scripts: dict[str, list[Reply | Callable[[RecordedRequest], Reply]]] = defaultdict(list)
        self.requests: dict[str, list[RecordedRequest]] = defaultdict(list)
        self.rendezvous: set[str] = set()
        self.met = False
        self._cond = threading.Condition()

    def role_of(self, request: RecordedRequest) -> str:
        prompt = system_prompt(request)
        for role, marker in self.markers.items():
            if marker in prompt:
                return role
        return "parent" if PARENT_MARKER in prompt else "unknown"

    def script(self, role: str, *replies: Reply | Callable[[RecordedRequest], Reply]) -> None:
        self.scripts[role].extend(replies)

    def install(self, loopback: LoopbackServer, count: int = 40) -> None:
        loopback.push(*([self.handle] * count))

    def handle(self, request: RecordedRequest) -> Reply:
        role = self.role_of(request)
        with self._cond:
            self.requests[role].append(request)
            self._cond.notify_all()
            if role in self.rendezvous and len(self.requests[role]) == 1:
                self.met = self._cond.wait_for(lambda: all(self.requests[r] for r in self.rendezvous), timeout=15)
            replies = self.scripts.get(role)
            reply = replies.pop(0) if replies else None
        if reply is None:
            return json_reply(500, {"error": {"message": f"no scripted reply for {role}"}})
        return reply(request) if callable(reply) else reply


def write_definition(folder: Path, name: str, body: str, **fields: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = [f"name: {name}", *(f"{key}: {value}" for key, value in fields.items())]
    if not any(line.startswith("description:") for line in lines):
        lines.append(f"description: the {name} subagent")
    path = folder / f"{name}.md"
    path.write_text("---\n" + "\n".join(lines) + "\n---\n\n" + body + "\n")
    return path
