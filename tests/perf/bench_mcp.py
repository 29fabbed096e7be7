"""MCP costs: start-up and exit with five stdio servers, time until they are ready, tokens.

Run as a script (pytest ignores ``tests/perf``)::

    python tests/perf/bench_mcp.py [--runs 5] [--everything PATH]

Five stdio servers: mcp-server-time x3, mcp-server-git x2 (each a Python process that
imports the SDK). Every figure is a median over ``--runs`` runs after one warm-up run (the
print-mode variants take turns, round by round, so a change of load hits them alike); the
load average is printed before and after (run it on a quiet machine).

1. **Print mode** (``-p``, loopback model answering at once), with no server, with five and
   a *cold* cache (``mcp-cache.json`` removed before each run: the first request must wait
   for the servers) and with five and a *warm* cache (their lists known: the request goes
   out at once; the servers start 0.2 s into the answer or at its first tool call, so this
   one-word answer starts none): wall time, when the (first) request reached the model, and
   the *exit tail* (from the last answer to the process's end: stopping the servers
   included), and cpu (user+sys of the process and of the servers it started and reaped;
   steadier than wall on a busy machine). Then the same two with the model calling one MCP tool first (warm: the call
   starts the servers and waits for its own).
2. **TUI first frame** (Textual's headless driver, a fresh process each run so imports
   count): first paint and session ready, with no server and with five (warm cache), and
   when all five were ready.
3. **Until ready** in process: the five started together until all are ready.
4. **Tokens** the MCP tools add to each request on ``@modelcontextprotocol/server-everything``
   with tool search off and on (about four characters a token, over the tool JSON).

Never a pass/fail test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.support.loopback import LoopbackServer  # noqa: E402
from tests.support.openai_chat import text_answer, tool_call_answer, write_models_json  # noqa: E402

BIN = Path(sys.executable).parent


def five_servers(repo: str) -> dict[str, dict[str, object]]:
    time_server = {"command": str(BIN / "mcp-server-time")}
    git_server = {"command": str(BIN / "mcp-server-git"), "args": ["--repository", repo]}
    return {"time": time_server, "time2": time_server, "time3": time_server, "git": git_server, "git2": git_server}


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def ms(value: float) -> str:
    return f"{value * 1000:.0f} ms"


def print_once(config: str | None, cold: bool, call: bool, env: dict[str, str], cwd: str, home: Path,
               server: LoopbackServer) -> dict[str, float]:
    """One ``-p`` run. ``cold``: the cache is removed first. ``call``: the model first calls
    one MCP tool (mcp-server-time), then answers."""
    arrivals: list[float] = []
    answers = [tool_call_answer("mcp__time__get_current_time", {"timezone": "UTC"})] if call else []
    answers.append(text_answer("ok"))

    def handler(request: Any) -> Any:
        arrivals.append(time.perf_counter())
        return answers.pop(0)

    for _ in answers:
        server.push(handler)
    if cold:
        (home / "agents" / "default" / "mcp-cache.json").unlink(missing_ok=True)
    extra = ["--strict-mcp-config", "--mcp-config", config] if config else []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "wolli", "-p", "--no-session", *extra, "--model",
                           "local/local-model", "hi"], cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0 or done.stderr:
        raise SystemExit(f"run failed: {done.stderr[-800:]}")
    if call and "datetime" not in json.dumps(server.requests[-1].json["messages"][-1]):
        raise SystemExit(f"the MCP call did not answer: {server.requests[-1].json['messages'][-1]}")
    return {"wall": wall, "sent": arrivals[0] - start, "tail": start + wall - arrivals[-1],
            "cpu": after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime}


PRINT_VARIANTS = [  # (label, with the five servers, cold cache, one MCP call); run in turn, round by round
    ("no MCP server", False, False, False),
    ("5 servers, cold cache", True, True, False),
    ("5 servers, warm cache", True, False, False),
    ("5, cold, one MCP call", True, True, True),
    ("5, warm, one MCP call", True, False, True),
]


def print_rounds(runs: int, config: str, env: dict[str, str], cwd: str, home: Path,
                 server: LoopbackServer) -> dict[str, dict[str, float]]:
    """Every variant once per round (so a change of load hits them alike), ``runs`` rounds
    after a warm-up round; medians."""
    found: dict[str, list[dict[str, float]]] = {label: [] for label, *_ in PRINT_VARIANTS}
    for index in range(runs + 1):
        for label, five, cold, call in PRINT_VARIANTS:
            figures = print_once(config if five else None, cold, call, env, cwd, home, server)
            if index:
                found[label].append(figures)
    return {label: {key: statistics.median(r[key] for r in rows) for key in rows[0]} for label, rows in found.items()}


async def _tui_child(cwd: str) -> dict[str, float]:
    """One TUI start in this process: first paint, session ready, every MCP server ready."""
    start = time.perf_counter()
    from wolli.modes.tui.app import WolliApp
    from wolli.runtime.startup.request import StartupRequest

    app = WolliApp(StartupRequest(mode="tui", cwd=cwd, model="local/local-model", require_model=False))
    painted: list[float] = []
    out: dict[str, float] = {}
    async with app.run_test(size=(120, 40)) as pilot:
        app.call_after_refresh(lambda: painted.append(time.perf_counter()))
        await app.controller.ready.wait()
        out["ready"] = time.perf_counter() - start
        host = app.controller.startup.host
        if host.mcp is not None:
            servers = host.mcp.manager.servers
            while not (servers and all(s.state == "ready" for s in servers.values())):
                await asyncio.sleep(0.01)
            out["servers"] = time.perf_counter() - start
        await pilot.pause()
    out["paint"] = (painted[0] if painted else out["ready"]) - start
    return out


def tui_runs(runs: int, envs: dict[str, dict[str, str]], cwd: str) -> dict[str, dict[str, float]]:
    """A fresh TUI process per run, the ``envs`` (one agent home each) taking turns."""
    found: dict[str, dict[str, list[float]]] = {label: {} for label in envs}
    for index in range(runs + 1):
        for label, env in envs.items():
            done = subprocess.run([sys.executable, __file__, "--tui-child", cwd], env=env, capture_output=True,
                                  text=True)
            if done.returncode != 0:
                raise SystemExit(f"TUI run failed: {done.stderr[-800:]}")
            if index:
                for key, value in json.loads(done.stdout.splitlines()[-1]).items():
                    found[label].setdefault(key, []).append(value)
    return {label: {k: statistics.median(v) for k, v in rows.items()} for label, rows in found.items()}


async def ready_time(config: str) -> float:
    from wolli.mcp.config import load_cli_config
    from wolli.mcp.manager import McpManager

    manager = McpManager(settings=None, log_dir=None)
    for server in load_cli_config(config).servers:
        manager.add(server)
    start = time.perf_counter()
    manager.start()
    await manager.wait_settled(60)
    took = time.perf_counter() - start
    states = [s.state for s in manager.servers.values()]
    await manager.shutdown()
    if any(s != "ready" for s in states):
        raise SystemExit(f"not all ready: {states}")
    return took


class Prefs:
    def __init__(self) -> None:
        self.value: dict[str, Any] = {}

    def get(self, key: str, default: Any = None) -> Any:
        return self.value if key == "mcp" else default

    def update(self, partial: dict[str, Any]) -> None:
        self.value.update(partial.get("mcp", {}))


async def tokens(everything: str) -> dict[str, int]:
    from wolli.mcp.manager import McpManager
    from wolli.mcp.tool_search import SearchState, estimate_tokens
    from wolli.mcp.types import ServerConfig

    prefs = Prefs()
    manager = McpManager(settings=prefs, log_dir=None)
    manager.add(ServerConfig(name="everything", transport="stdio", command=everything))
    manager.start()
    await manager.wait_settled(60)
    prefs.value = {"toolSearch": "off"}
    off = estimate_tokens(manager.tools(SearchState(), 200_000, lambda: None))
    prefs.value = {"toolSearch": "on"}
    on = estimate_tokens(manager.tools(SearchState(), 200_000, lambda: None))
    count = len(manager.all_tools())
    await manager.shutdown()
    return {"tools": count, "off": off, "on": on}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--everything", default=str(Path.home() / ".cache/wolli-tests/npm/node_modules/.bin/"
                                                    "mcp-server-everything"))
    parser.add_argument("--tui-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.tui_child:
        print(json.dumps(asyncio.run(_tui_child(args.tui_child))))
        return
    print(f"load average at start: {load()}")
    with tempfile.TemporaryDirectory() as tmp:
        home, cwd = Path(tmp) / "home", Path(tmp) / "work"
        home.mkdir()
        cwd.mkdir()
        subprocess.run(["git", "init", "-q", str(cwd)], check=True)
        config = Path(tmp) / "five.json"
        config.write_text(json.dumps({"mcpServers": five_servers(str(cwd))}))
        # As installed: byte code cached (a test runner's PYTHONDONTWRITEBYTECODE would make
        # every run compile every module again), in a prefix outside the working tree.
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "PYTHONDONTWRITEBYTECODE"}
        env.update(WOLLI_HOME=str(home), HOME=str(tmp),
                   PYTHONPYCACHEPREFIX=str(Path(tempfile.gettempdir()) / "wolli-perf-pycache"))
        server = LoopbackServer()
        write_models_json(home, server.url + "/v1")
        agent = home / "agents" / "default"
        agent.mkdir(parents=True)
        # Every tool offered in full (five servers' schemas would otherwise go behind tool search).
        (agent / "settings.json").write_text(json.dumps({"mcp": {"toolSearch": "off"}}))
        try:
            printed = print_rounds(args.runs, str(config), env, str(cwd), home, server)
            bare = Path(tmp) / "bare-home"  # the same models, no MCP server
            bare.mkdir()
            write_models_json(bare, server.url + "/v1")
            (agent / "mcp.json").write_text(config.read_text())  # its lists are cached by now
            tuis = tui_runs(args.runs, {"none": {**env, "WOLLI_HOME": str(bare)}, "five": env}, str(cwd))
            tui_none, tui_five = tuis["none"], tuis["five"]
        finally:
            server.close()
        os.environ["WOLLI_HOME"] = str(home)
        ready = [asyncio.run(ready_time(str(config))) for _ in range(args.runs)]
    for label, found in printed.items():
        print(f"print mode, {label + ':':23} wall {ms(found['wall'])}, request sent at {ms(found['sent'])}, "
              f"exit tail {ms(found['tail'])}, cpu {ms(found['cpu'])}")
    print(f"TUI, no MCP server:   first paint {ms(tui_none['paint'])}, session ready {ms(tui_none['ready'])}")
    print(f"TUI, 5 servers warm:  first paint {ms(tui_five['paint'])}, session ready {ms(tui_five['ready'])}, "
          f"all 5 servers ready {ms(tui_five['servers'])}")
    print(f"5 stdio servers until all ready, in process (SDK import on the first): "
          f"median {ms(statistics.median(ready))}, first {ms(ready[0])}")
    if Path(args.everything).exists():
        found_tokens = asyncio.run(tokens(args.everything))
        print(f"server-everything: {found_tokens['tools']} tools; MCP tokens per request: tool search off "
              f"{found_tokens['off']}, on {found_tokens['on']} (saved {found_tokens['off'] - found_tokens['on']})")
    else:
        print(f"server-everything not found at {args.everything}: run the MCP tests once (they install it)")
    print(f"load average at end: {load()}")


if __name__ == "__main__":
    main()
