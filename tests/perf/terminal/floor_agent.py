#!/usr/bin/env python3
"""floor_agent.py: the smallest possible "agent", a floor for the numbers (stdlib only).

It speaks OpenAI Chat Completions with streaming to $BENCH_BASE_URL (or
$OPENAI_BASE_URL), offers one tool, `read` {"path": ...}, and runs the tool
loop.  It has no real UI: print mode writes the streamed text to stdout;
interactive mode prints a ready line and a "> " prompt, reads a line, streams
the reply, and repeats.  It exists to (1) show what a plain Python process
costs on this machine for each scenario, and (2) test the harness end to end
with a command that is neither a peer nor wolli.

    floor_agent.py -p "prompt"       print mode
    floor_agent.py                   interactive (ready marker: "floor-agent ready")
"""
from __future__ import annotations

import http.client
import json
import os
import sys
import urllib.parse

TOOLS = [{"type": "function", "function": {
    "name": "read", "description": "Read a text file",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}]


def stream_chat(base: str, key: str, model: str, messages: list[dict], out) -> dict:
    u = urllib.parse.urlsplit(base.rstrip("/") + "/chat/completions")
    conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=120)
    body = json.dumps({"model": model, "messages": messages, "tools": TOOLS, "stream": True})
    conn.request("POST", u.path, body, {"Content-Type": "application/json", "Authorization": f"Bearer {key}"})
    resp = conn.getresponse()
    if resp.status != 200:
        raise SystemExit(f"HTTP {resp.status}: {resp.read()[:300]!r}")
    text, calls = [], {}
    for raw in resp:
        line = raw.decode().strip()
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            break
        chunk = json.loads(data)
        for ch in chunk.get("choices", []):
            d = ch.get("delta", {})
            if d.get("content"):
                text.append(d["content"])
                out.write(d["content"])
                out.flush()
            for tc in d.get("tool_calls") or []:
                c = calls.setdefault(tc.get("index", 0), {"id": "", "name": "", "arguments": ""})
                c["id"] = tc.get("id") or c["id"]
                f = tc.get("function") or {}
                c["name"] = f.get("name") or c["name"]
                c["arguments"] += f.get("arguments") or ""
    conn.close()
    return {"text": "".join(text), "calls": [calls[i] for i in sorted(calls)]}


def run_turn(messages: list[dict], out) -> None:
    base = os.environ.get("BENCH_BASE_URL") or os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
    key = os.environ.get("BENCH_API_KEY") or os.environ.get("OPENAI_API_KEY", "x")
    model = os.environ.get("BENCH_MODEL", "fake-model")
    while True:
        r = stream_chat(base, key, model, messages, out)
        msg: dict = {"role": "assistant", "content": r["text"] or None}
        if not r["calls"]:
            messages.append(msg)
            out.write("\n")
            out.flush()
            return
        msg["tool_calls"] = [{"id": c["id"], "type": "function",
                              "function": {"name": c["name"], "arguments": c["arguments"]}} for c in r["calls"]]
        messages.append(msg)
        for c in r["calls"]:
            try:
                path = json.loads(c["arguments"] or "{}").get("path", "")
                with open(path) as f:
                    result = f.read()
            except Exception as e:  # the model sees the error, as with a real agent
                result = f"error: {e}"
            messages.append({"role": "tool", "tool_call_id": c["id"], "content": result})


def main() -> None:
    args = sys.argv[1:]
    system = {"role": "system", "content": "You are a minimal coding agent."}
    if args[:1] in (["-p"], ["--print"]):
        run_turn([system, {"role": "user", "content": " ".join(args[1:])}], sys.stdout)
        return
    messages = [system]
    print(f"floor-agent ready (model {os.environ.get('BENCH_MODEL', 'fake-model')})", flush=True)
    while True:
        try:
            line = input("> ")
        except EOFError:
            return
        if line.strip():
            messages.append({"role": "user", "content": line})
            run_turn(messages, sys.stdout)


if __name__ == "__main__":
    main()
