"""ACP mode: time to the first streamed chunk, and CPU per streamed token, beside RPC mode.

Run as a script (pytest ignores ``tests/perf``)::

    python tests/perf/bench_acp.py [--runs 5] [--sizes 200,4000,16000]

A loopback OpenAI-compatible server (this process) streams the answers. Two tables:

- **first chunk**: ``wolli --mode acp`` is spawned by the ACP SDK's client side; the time
  from sending ``initialize`` (process already started) through ``session/new`` and
  ``session/prompt`` to the first ``agent_message_chunk`` of a 200-token answer, and from
  spawning the process to that chunk. RPC mode's figure beside it: spawn, ``prompt``, first
  ``message_update``.
- **stream**: per answer length, the wolli process's CPU from the prompt to its answer
  (ACP: the ``session/prompt`` response; RPC: ``agent_settled``), per token, and the number
  of protocol messages the text took (ACP merges chunks that pile up while one is sent).

Never a pass/fail test.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from acp import PROTOCOL_VERSION, spawn_agent_process, text_block  # noqa: E402
from acp.schema import ClientCapabilities  # noqa: E402

from tests.perf.bench_rpc import KEY_VARS, answer  # noqa: E402
from tests.perf.bench_startup import child_env, load_note, med, table  # noqa: E402
from tests.support.loopback import LoopbackServer  # noqa: E402
from tests.support.rpc import MODEL, write_models  # noqa: E402
from wolli.rpc_client import RpcClient  # noqa: E402


class Counting:
    """A client that only notes when chunks arrive."""

    def __init__(self) -> None:
        self.first_chunk: float | None = None
        self.chunks = 0

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if update.session_update == "agent_message_chunk":
            self.chunks += 1
            if self.first_chunk is None:
                self.first_chunk = time.perf_counter()

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("no tool runs in this benchmark")

    def on_connect(self, conn: Any) -> None:
        pass


def cpu_of(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def acp_first_chunk(server: LoopbackServer, env: dict[str, str], cwd: Path) -> tuple[float, float]:
    client = Counting()
    server.push(answer(200))
    spawned = time.perf_counter()
    async with spawn_agent_process(client, sys.executable, "-m", "wolli", "--mode", "acp", "--no-session", *MODEL,
                                   cwd=cwd, env=env) as (conn, _):
        began = time.perf_counter()
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=ClientCapabilities())
        session = await conn.new_session(cwd=str(cwd), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
        assert client.first_chunk is not None
        return client.first_chunk - began, client.first_chunk - spawned


def rpc_first_update(server: LoopbackServer, env: dict[str, str], cwd: Path) -> float:
    server.push(answer(200))
    spawned = time.perf_counter()
    client = RpcClient([*MODEL, "--no-session"], cwd=cwd, env=env, timeout=120).start()
    try:
        client.prompt("go")
        client.wait_for("message_update")
        first = time.perf_counter() - spawned
        client.wait_for("agent_settled")
    finally:
        client.close()
    return first


async def acp_stream(tokens: int, runs: int, server: LoopbackServer, env: dict[str, str], cwd: Path) -> tuple[float, float]:
    client = Counting()
    cpus, counts = [], []
    async with spawn_agent_process(client, sys.executable, "-m", "wolli", "--mode", "acp", "--no-session", *MODEL,
                                   cwd=cwd, env=env, transport_kwargs={"limit": 64 * 1024 * 1024}) as (conn, process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=ClientCapabilities())
        session = await conn.new_session(cwd=str(cwd), mcp_servers=[])
        for index in range(runs + 1):  # the first run warms the process
            server.push(answer(tokens))
            client.chunks = 0
            cpu = cpu_of(process.pid)
            await conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
            if index:
                cpus.append(cpu_of(process.pid) - cpu)
                counts.append(client.chunks)
    return med(cpus), med(counts)


def rpc_stream(tokens: int, runs: int, server: LoopbackServer, env: dict[str, str], cwd: Path) -> tuple[float, float]:
    updates = [0]

    def count(event: dict[str, Any]) -> None:
        if event.get("type") == "message_update":
            updates[0] += 1

    client = RpcClient([*MODEL, "--no-session"], cwd=cwd, env=env, on_event=count, timeout=600).start()
    cpus, counts = [], []
    try:
        for index in range(runs + 1):
            server.push(answer(tokens))
            updates[0] = 0
            cpu = cpu_of(client.process.pid)  # type: ignore[union-attr]
            client.prompt("go")
            client.wait_for("agent_settled")
            if index:
                cpus.append(cpu_of(client.process.pid) - cpu)  # type: ignore[union-attr]
                counts.append(updates[0])
    finally:
        client.close()
    return med(cpus), med(counts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sizes", default="200,4000,16000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]

    with tempfile.TemporaryDirectory() as tmp, LoopbackServer() as server:
        home, user_home, project = Path(tmp, "wolli_home"), Path(tmp, "home"), Path(tmp, "project")
        for folder in (home, user_home, project):
            folder.mkdir()
        write_models(home, server.url + "/v1", context_window=10_000_000)
        env = {k: v for k, v in child_env().items() if k not in KEY_VARS}
        env.update(WOLLI_HOME=str(home), HOME=str(user_home))

        asyncio.run(acp_first_chunk(server, env, project))  # warm the bytecode cache
        acp = [asyncio.run(acp_first_chunk(server, env, project)) for _ in range(args.runs)]
        rpc = [rpc_first_update(server, env, project) for _ in range(args.runs)]
        first = [
            ("acp", f"{med([a for a, _ in acp]) * 1000:.0f}", f"{med([s for _, s in acp]) * 1000:.0f}"),
            ("rpc", "-", f"{med(rpc) * 1000:.0f}"),
        ]
        rows = []
        for tokens in sizes:
            for label, run in (("acp", lambda n: asyncio.run(acp_stream(n, args.runs, server, env, project))),
                               ("rpc", lambda n: rpc_stream(n, args.runs, server, env, project))):
                cpu, messages = run(tokens)
                rows.append((label, f"{tokens:,}", f"{cpu * 1000:.0f}", f"{cpu * 1e6 / tokens:.1f}", f"{messages:.0f}"))

    print(f"First streamed chunk of a 200-token answer, {args.runs} runs (medians); {load_note()}\n")
    print(table(first, ("mode", "initialize -> first chunk ms", "spawn -> first chunk ms")))
    print("\nacp: initialize, session/new, session/prompt, then the first agent_message_chunk;")
    print("rpc: spawn, prompt, then the first message_update (RPC has no handshake).\n")
    print(table(rows, ("mode", "tokens", "cpu ms", "cpu us/token", "text messages")))
    print("\ncpu: the wolli process from the prompt to its end (provider parsing included).")


if __name__ == "__main__":
    main()
