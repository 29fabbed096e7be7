"""Benchmark: subagents (docs/subagents.md).

Run: ``python tests/perf/bench_subagents.py [--runs 15] [--tokens 300] [--rate 100]``. Prints
medians; not a test.

Figures (issue 31's goals: starting a child adds < 20 ms before its first request; ten
children streaming keep the TUI at the CPU per token of one stream):

* **to a child's first request**: from the parent's ``task`` call starting to the child's
  request reaching the loopback model server (a real HTTP request, the OpenAI wire format),
  beside the same figure for a top-level prompt (``prompt()`` to its request): what a child
  adds is the difference;
* **TUI CPU per streamed token**: the whole process's CPU while tokens stream at ``--rate``
  tokens/s per stream, divided by the tokens streamed: one top-level answer, one child, ten
  children at once (rows collapsed), and ten children with every row expanded.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

MARK = "BENCH-CHILD-"


def _home() -> Path:
    home = Path(tempfile.mkdtemp(prefix="wolli-bench-subagents-"))
    os.environ["WOLLI_HOME"] = str(home)
    os.environ["HOME"] = str(Path(tempfile.mkdtemp(prefix="wolli-bench-home-")))
    folder = home / "agents" / "default" / "subagents"
    folder.mkdir(parents=True)
    for i in range(10):
        (folder / f"c{i}.md").write_text(f"---\nname: c{i}\ndescription: child {i}\ntools: Read\n---\n{MARK}{i}\n")
    return home


# ---------------------------------------------------------------------------- first request


async def _first_request(project: Path, server: Any, runs: int) -> tuple[list[float], list[float]]:
    from tests.support.openai_chat import text_answer, tool_call_answer
    from wolli.runtime.host.agent_host import AgentHost
    from wolli.runtime.live.options import SessionOptions

    arrived: list[float] = []

    def stamp(reply: Any) -> Any:
        def handle(request: Any) -> Any:
            arrived.append(time.perf_counter())
            return reply
        return handle

    host = AgentHost()
    model = host.model_registry.find("local", "local-model")
    session = await host.start(SessionOptions(cwd=str(project), model=model, permission_mode="yolo"))
    started: list[float] = []
    session.observe(lambda e: started.append(time.perf_counter())
                    if e.type == "tool_execution_start" and e.tool_name == "task" else None)
    child, top = [], []
    server.push(text_answer("warm"))
    await session.prompt("warm up")  # the HTTP client and the provider module are loaded once
    for _ in range(runs):
        call = {"subagent_type": "c0", "description": "bench", "prompt": "say ok"}
        server.push(tool_call_answer("task", call, "t1"), stamp(text_answer("ok")), text_answer("done"))
        arrived.clear()
        started.clear()
        await session.prompt("delegate")
        child.append((arrived[0] - started[0]) * 1000)
        server.push(stamp(text_answer("ok")))
        arrived.clear()
        begin = time.perf_counter()
        await session.prompt("plain")
        top.append((arrived[0] - begin) * 1000)
    await host.shutdown()
    return child, top


# ---------------------------------------------------------------------------- TUI CPU per token


async def _tui_cpu(project: Path, faux: Any, children: int, tokens: int, rate: float, expand: bool) -> float:
    """CPU ms per streamed token with ``children`` children streaming (0: a top-level answer)."""
    from wolli.ai.providers.faux import faux_tool_call
    from wolli.modes.tui.app import WolliApp
    from wolli.modes.tui.widgets.subagent_row import SubagentRow
    from wolli.runtime.startup.request import StartupRequest

    words = " ".join(f"w{i}" for i in range(tokens))
    calls = [faux_tool_call("task", {"subagent_type": f"c{i}", "description": "bench", "prompt": "stream"})
             for i in range(children)]

    def answer(context: Any, options: Any) -> Any:
        prompt = context.system_prompt or ""
        if MARK in prompt:
            return words
        return calls if calls and not any(getattr(m, "role", "") == "toolResult" for m in context.messages) else words

    faux.tokens_per_second = rate
    faux.push(*([answer] * (children + 2)))
    app = WolliApp(StartupRequest(mode="tui", cwd=str(project), model="faux/faux-1", require_model=False,
                                  permission_mode="yolo"))
    async with app.run_test(size=(140, 60)) as pilot:
        await app.controller.ready.wait()
        await asyncio.sleep(0.3)  # the warm-up imports are done
        session = app.controller.session
        streamed = 0

        def count(event: Any) -> None:
            nonlocal streamed
            inner = event.event if event.type == "subagent_event" else event
            if inner.type == "message_update" and inner.assistant_message_event.type == "text_delta":
                streamed += 1

        session.observe(count)
        cpu0 = time.process_time()
        run = asyncio.ensure_future(session.prompt("go"))
        if expand:
            while not run.done():
                for row in app.query(SubagentRow):
                    row.set_expanded(True)
                await asyncio.sleep(0.05)
        await run
        cpu = time.process_time() - cpu0
        await pilot.pause()
    return cpu * 1000 / max(1, streamed)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--tokens", type=int, default=300)
    parser.add_argument("--rate", type=float, default=100.0)
    args = parser.parse_args()
    home = _home()
    project = Path(tempfile.mkdtemp(prefix="wolli-bench-project-"))
    print(f"load average {os.getloadavg()[0]:.2f}")

    from tests.support.loopback import LoopbackServer
    from tests.support.openai_chat import write_models_json

    rows: list[tuple[str, str]] = []
    with LoopbackServer() as server:
        write_models_json(home, server.url + "/v1")
        child, top = asyncio.run(_first_request(project, server, args.runs))
    rows.append(("task call -> child's first request (ms)", f"{statistics.median(child):.1f}"))
    rows.append(("prompt -> first request, top-level (ms)", f"{statistics.median(top):.1f}"))
    rows.append(("added by starting a child (ms)", f"{statistics.median(child) - statistics.median(top):.1f}"))

    from wolli.ai.providers.faux import FauxProvider

    (home / "models.json").write_text(json.dumps({"providers": {"faux": {
        "api": "faux", "baseUrl": "http://faux.invalid", "apiKey": "none",
        "models": [{"id": "faux-1", "contextWindow": 1_000_000}]}}}))
    faux = FauxProvider(provider="faux", model_id="faux-1")
    for label, children, expand in (("one top-level stream", 0, False), ("one child", 1, False),
                                    ("ten children, rows collapsed", 10, False),
                                    ("ten children, rows expanded", 10, True)):
        runs = max(1, min(3, args.runs))
        figure = statistics.median(asyncio.run(_tui_cpu(project, faux, children, args.tokens, args.rate, expand))
                                   for _ in range(runs))
        rows.append((f"TUI CPU per token, {label} (ms)", f"{figure:.3f}"))

    width = max(len(r[0]) for r in rows)
    for label, value in rows:
        print(f"{label:<{width}}  {value:>8}")


if __name__ == "__main__":
    main()
