"""MCP costs: start-up with five stdio servers, time until they are ready, tokens per request.

Run as a script (pytest ignores ``tests/perf``)::

    python tests/perf/bench_mcp.py [--runs 5] [--everything PATH]

1. Print mode (``-p``, loopback model) with no MCP server and with five stdio servers
   (mcp-server-time x3, mcp-server-git x2): wall time, and when the model request was sent.
   Print mode waits for the servers before its first request, so the difference is the
   servers' start (their tools are part of that request). ``--version`` and import are
   unchanged by construction: nothing of the MCP layer loads without a server.
2. ``wolli mcp list`` with the same five: time until all five are ready (in-process clock).
3. Tokens the MCP tools add to each request on ``@modelcontextprotocol/server-everything``
   with tool search off and on (about four characters a token, over the tool JSON).
Never a pass/fail test.
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

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.support.loopback import LoopbackServer  # noqa: E402
from tests.support.openai_chat import text_answer, write_models_json  # noqa: E402

BIN = Path(sys.executable).parent


def five_servers(repo: str) -> dict[str, dict[str, object]]:
    time_server = {"command": str(BIN / "mcp-server-time")}
    git_server = {"command": str(BIN / "mcp-server-git"), "args": ["--repository", repo]}
    return {"time": time_server, "time2": time_server, "time3": time_server, "git": git_server, "git2": git_server}


def print_runs(runs: int, config: str | None, env: dict[str, str], cwd: str, server: LoopbackServer) -> tuple[float, float]:
    import subprocess

    walls, sent = [], []
    for index in range(runs + 1):
        arrivals: list[float] = []

        def handler(request, arrivals=arrivals):
            arrivals.append(time.perf_counter())
            return text_answer("ok")

        server.push(handler)
        extra = ["--strict-mcp-config", "--mcp-config", config] if config else []
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "wolli", "-p", "--no-session", *extra, "--model",
                               "local/local-model", "hi"], cwd=cwd, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(done.stderr[-800:])
        if index:
            walls.append(wall)
            sent.append(arrivals[-1] - start)
    return statistics.median(walls), statistics.median(sent)


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


async def tokens(everything: str) -> dict[str, int]:
    from wolli.mcp.manager import McpManager
    from wolli.mcp.tool_search import estimate_tokens
    from wolli.mcp.types import ServerConfig

    class Prefs:
        def __init__(self) -> None:
            self.value: dict[str, object] = {}

        def get(self, key: str) -> object:
            return self.value if key == "mcp" else None

    prefs = Prefs()
    manager = McpManager(settings=prefs, log_dir=None, context_window=lambda: 200_000)
    manager.add(ServerConfig(name="everything", transport="stdio", command=everything))
    manager.start()
    await manager.wait_settled(60)
    prefs.value = {"toolSearch": "off"}
    off = estimate_tokens(manager.tools())
    prefs.value = {"toolSearch": "on"}
    on = estimate_tokens(manager.tools())
    count = len(manager.all_tools())
    await manager.shutdown()
    return {"tools": count, "off": off, "on": on}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--everything", default=str(Path.home() / ".cache/wolli-tests/npm/node_modules/.bin/"
                                                    "mcp-server-everything"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home, cwd = Path(tmp) / "home", Path(tmp) / "work"
        home.mkdir()
        cwd.mkdir()
        os.system(f"git init -q {cwd}")
        config = Path(tmp) / "five.json"
        config.write_text(json.dumps({"mcpServers": five_servers(str(cwd))}))
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env.update(WOLLI_HOME=str(home), HOME=str(tmp))
        server = LoopbackServer()
        write_models_json(home, server.url + "/v1")
        try:
            none_wall, none_sent = print_runs(args.runs, None, env, str(cwd), server)
            five_wall, five_sent = print_runs(args.runs, str(config), env, str(cwd), server)
        finally:
            server.close()
        os.environ["WOLLI_HOME"] = str(home)
        ready = [asyncio.run(ready_time(str(config))) for _ in range(args.runs)]
    print(f"print mode, no MCP server:   wall {none_wall * 1000:.0f} ms, request sent at {none_sent * 1000:.0f} ms")
    print(f"print mode, 5 stdio servers: wall {five_wall * 1000:.0f} ms, request sent at {five_sent * 1000:.0f} ms")
    print(f"5 stdio servers until all ready (SDK import included on the first): "
          f"median {statistics.median(ready) * 1000:.0f} ms, first {ready[0] * 1000:.0f} ms")
    if Path(args.everything).exists():
        found = asyncio.run(tokens(args.everything))
        print(f"server-everything: {found['tools']} tools; MCP tokens per request: tool search off "
              f"{found['off']}, on {found['on']} (saved {found['off'] - found['on']})")
    else:
        print(f"server-everything not found at {args.everything}: run the MCP tests once (they install it)")


if __name__ == "__main__":
    main()
