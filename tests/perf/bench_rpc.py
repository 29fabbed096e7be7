"""RPC mode: the stream stays linear in the answer's length; ``get_state`` answers while it streams.

Run as a script (pytest ignores ``tests/perf``)::

    python tests/perf/bench_rpc.py [--runs 3] [--sizes 1000,4000,16000] [--long 60000]

A loopback OpenAI-compatible server (this process) streams each answer in large writes, so
the server is never the bottleneck; ``wolli --mode rpc`` runs as a child process driven by
``wolli.rpc_client``. Two tables:

- **stream**: for each answer length, the wall time from sending ``prompt`` to
  ``agent_settled``, the protocol bytes written for the run, and both per token. Linear
  means the per-token columns stay flat as the answer grows. ``--full-updates`` (pi's former
  shape: the whole partial message in every update) is shown beside it for contrast.
- **get_state while streaming**: a ``--long``-token answer streams at full speed while a
  client sends ``get_state`` again as soon as each answer arrives; the round trip (median,
  p95, max; target <= 5 ms), and idle for comparison. This client only scans stdout's raw
  bytes for its answers, so the figure is the server's, not a slow client's.

Never a pass/fail test.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.perf.bench_startup import child_env, load_note, med, table  # noqa: E402
from tests.support.loopback import LoopbackServer, Reply  # noqa: E402
from tests.support.openai_chat import text_answer  # noqa: E402
from tests.support.rpc import MODEL, write_models  # noqa: E402
from wolli.modes.common.framing import encode_record  # noqa: E402
from wolli.rpc_client import RpcClient  # noqa: E402

KEY_VARS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENROUTER_API_KEY",
            "GROQ_API_KEY", "XAI_API_KEY", "MISTRAL_API_KEY", "DEEPSEEK_API_KEY", "WOLLI_AGENT")


def answer(tokens: int) -> Reply:
    """``tokens`` 7-character pieces, one SSE chunk each, written in 16-64 KiB pieces."""
    reply = text_answer("".join(f"tok{i % 1000:03d} " for i in range(tokens)), completion_tokens=tokens)
    reply.chunk_sizes = (16384, 65536)
    return reply


class Counter:
    """Counts the protocol bytes of the events a client receives (same encoding as the server)."""

    def __init__(self) -> None:
        self.bytes = 0
        self.settled = threading.Event()
        self.streaming = threading.Event()

    def __call__(self, event: dict[str, Any]) -> None:
        self.bytes += len(encode_record(event))
        kind = event.get("type")
        if kind == "message_update":
            self.streaming.set()
        elif kind == "agent_settled":
            self.settled.set()


def start(args: list[str], counter: Counter, env: dict[str, str], cwd: Path) -> RpcClient:
    return RpcClient([*MODEL, "--no-session", *args], cwd=cwd, env=env, on_event=counter, timeout=600).start()


def stream_row(label: str, extra: list[str], tokens: int, runs: int, server: LoopbackServer,
               env: dict[str, str], cwd: Path) -> tuple[str, ...]:
    counter = Counter()
    client = start(extra, counter, env, cwd)
    walls, cpus, sizes = [], [], []
    try:
        for index in range(runs + 1):  # the first run warms the process (imports, connection)
            server.push(answer(tokens))
            counter.bytes = 0
            began, cpu = time.perf_counter(), _cpu_of(client)
            client.prompt("go")
            client.wait_for("agent_settled")
            if index:
                walls.append(time.perf_counter() - began)
                cpus.append(_cpu_of(client) - cpu)
                sizes.append(counter.bytes)
    finally:
        client.close()
    wall, cpu, size = med(walls), med(cpus), med(sizes)
    return (label, f"{tokens:,}", f"{wall * 1000:.0f}", f"{cpu * 1000:.0f}", f"{size / 1024:,.0f}",
            f"{cpu * 1e6 / tokens:.1f}", f"{size / tokens:.0f}")


def _cpu_of(client: RpcClient) -> float:
    """The server process's CPU seconds so far (user+sys, from /proc; 0 where there is none)."""
    try:
        fields = Path(f"/proc/{client.process.pid}/stat").read_text().rsplit(")", 1)[1].split()  # type: ignore[union-attr]
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def latency_rows(tokens: int, server: LoopbackServer, env: dict[str, str], cwd: Path) -> list[tuple[str, ...]]:
    """get_state round trips, idle and while a ``tokens``-token answer streams. The client
    here only scans the raw bytes for its answer (no JSON decoding of the event stream), so
    the figure is the server's, not a slow client's."""
    process = subprocess.Popen([sys.executable, "-m", "wolli", "--mode", "rpc", "--no-session", *MODEL],
                               cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert process.stdin is not None and process.stdout is not None
    stdout = process.stdout
    answered: dict[bytes, float] = {}
    streaming, settled = threading.Event(), threading.Event()

    def read() -> None:
        while data := stdout.read(1 << 16):
            now = time.perf_counter()
            if b'"message_update"' in data:
                streaming.set()
            for match in re.finditer(rb'"id":"(q\d+)"', data):
                answered[match.group(1)] = now
            if b'"agent_settled"' in data:
                settled.set()

    threading.Thread(target=read, daemon=True).start()
    counter = iter(range(1 << 30))

    def timed_state() -> float:
        key = f"q{next(counter)}".encode()
        began = time.perf_counter()
        process.stdin.write(b'{"type":"get_state","id":"' + key + b'"}\n')  # type: ignore[union-attr]
        while key not in answered:
            time.sleep(0.0001)
        return answered[key] - began

    try:
        timed_state()  # the first answer waits for start-up
        idle = [timed_state() for _ in range(200)]
        server.push(answer(tokens))
        process.stdin.write(b'{"type":"prompt","message":"go"}\n')
        streaming.wait(60)
        busy = []
        while not settled.is_set():
            busy.append(timed_state())
    finally:
        process.stdin.close()
        process.wait(60)
    return [_latency_row("idle", idle), _latency_row(f"while streaming {tokens:,} tokens", busy)]


def _latency_row(label: str, samples: list[float]) -> tuple[str, ...]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return (label, str(len(samples)), f"{statistics.median(samples) * 1000:.2f}", f"{p95 * 1000:.2f}",
            f"{ordered[-1] * 1000:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sizes", default="1000,4000,16000")
    parser.add_argument("--full-sizes", default="1000,4000", help="answer lengths for the --full-updates rows")
    parser.add_argument("--long", type=int, default=60000, help="answer length for the get_state table")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    full_sizes = [int(s) for s in args.full_sizes.split(",") if s]

    with tempfile.TemporaryDirectory() as tmp, LoopbackServer() as server:
        home, user_home, project = Path(tmp, "wolli_home"), Path(tmp, "home"), Path(tmp, "project")
        for folder in (home, user_home, project):
            folder.mkdir()
        write_models(home, server.url + "/v1", context_window=10_000_000)  # never compacts
        env = {k: v for k, v in child_env().items() if k not in KEY_VARS}
        env.update(WOLLI_HOME=str(home), HOME=str(user_home))

        rows = [stream_row("delta updates (default)", [], n, args.runs, server, env, project) for n in sizes]
        rows += [stream_row("--full-updates", ["--full-updates"], n, args.runs, server, env, project)
                 for n in full_sizes]
        latency = latency_rows(args.long, server, env, project)

    print(f"RPC stream, prompt to agent_settled, {args.runs} runs each (medians); {load_note()}\n")
    print(table(rows, ("updates", "tokens", "wall ms", "cpu ms", "KiB out", "cpu us/token", "bytes/token")))
    print("\nLinear: cpu us/token and bytes/token stay flat as the answer grows ('cpu': the wolli process,")
    print("provider parsing included; wall time also carries the client's decoding and the machine's load).\n")
    print("get_state round trip (target <= 5 ms while streaming; the answer streams as fast as the")
    print("loopback server can send it, in 16-64 KiB writes)\n")
    print(table(latency, ("when", "samples", "median ms", "p95 ms", "max ms")))


if __name__ == "__main__":
    main()
