"""``wolli serve``: attaching to a long session, the cost of a second client, the idle server.

Run as a script (pytest ignores ``tests/perf``)::

    python tests/perf/bench_serve.py [--runs 3] [--pairs 2000] [--tokens 5000] [--idle 5]

The server runs as a child process with a loopback OpenAI-compatible server (this process)
as its model. Three tables:

- **attach**: a ``--pairs`` session file opened by ``attach {sessionId: PATH}`` (cold: read
  from disk; warm: already live), from sending the command to the response with the whole
  history; beside it ``wolli --mode rpc --session PATH`` answering ``get_messages`` (the
  standalone resume, process start included).
- **stream**: a ``--tokens`` answer streamed to one, then two attached clients; the server's
  cpu (user+sys from /proc) per run and per token. Goal: the second client adds <= 10 %.
- **idle**: the server's cpu over ``--idle`` seconds with a client attached and nothing
  running. Goal: 0 %.

Never a pass/fail test.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.perf.bench_rpc import KEY_VARS, answer  # noqa: E402
from tests.perf.bench_session_resume import session_lines  # noqa: E402
from tests.perf.bench_startup import child_env, load_note, med, table  # noqa: E402
from tests.support.loopback import LoopbackServer  # noqa: E402
from tests.support.rpc import MODEL, write_models  # noqa: E402
from wolli.modes.server.client import ServerClient  # noqa: E402
from wolli.rpc_client import RpcClient  # noqa: E402


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def until_settled(client: ServerClient) -> None:
    while True:
        record = client.next_record(600)
        if record is None or record.get("type") == "agent_settled":
            return


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--tokens", type=int, default=5000)
    parser.add_argument("--idle", type=float, default=5.0)
    args = parser.parse_args()
    print(load_note())
    with tempfile.TemporaryDirectory() as tmp, LoopbackServer() as loopback:
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        home.mkdir()
        project.mkdir()
        write_models(home, loopback.url + "/v1")
        env = child_env(WOLLI_HOME=str(home))
        for var in KEY_VARS:
            env.pop(var, None)
        sock = Path(tmp) / "s.sock"
        server = subprocess.Popen([sys.executable, "-m", "wolli", "serve", "--socket", str(sock), *MODEL],
                                  cwd=project, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while not sock.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            rows = []
            cold, warm, standalone = [], [], []
            for run in range(args.runs):
                path = Path(tmp) / f"long{run}.jsonl"
                path.write_text("\n".join(session_lines(args.pairs)) + "\n")
                client = ServerClient.unix(sock)
                start = time.perf_counter()
                data = client.call({"type": "attach", "sessionId": str(path)}, timeout=600)
                cold.append(time.perf_counter() - start)
                other = ServerClient.unix(sock)
                start = time.perf_counter()
                other.call({"type": "attach", "sessionId": data["sessionId"]}, timeout=600)
                warm.append(time.perf_counter() - start)
                other.close()
                client.close()
                start = time.perf_counter()
                rpc = RpcClient([*MODEL, "--session", str(path)], cwd=project, env=env, timeout=600).start()
                rpc.request({"type": "get_messages"})
                standalone.append(time.perf_counter() - start)
                rpc.close()
            rows.append((f"{args.pairs} pairs", f"{med(cold) * 1000:.0f}", f"{med(warm) * 1000:.0f}",
                         f"{med(standalone) * 1000:.0f}", str(len(data["messages"]))))
            print("\nattach (ms, median)")
            print(table(rows, ("session", "attach cold", "attach warm", "standalone resume", "messages")))

            stream_rows = []
            for clients in (1, 2):
                attached = [ServerClient.unix(sock) for _ in range(clients)]
                session_id = attached[0].call({"type": "attach", "new": True})["sessionId"]
                for extra in attached[1:]:
                    extra.call({"type": "attach", "sessionId": session_id})
                costs = []
                for _ in range(args.runs):
                    loopback.push(answer(args.tokens))
                    before = cpu_seconds(server.pid)
                    attached[0].call({"type": "prompt", "message": "go"})
                    for client in attached:
                        until_settled(client)
                    costs.append(cpu_seconds(server.pid) - before)
                for client in attached:
                    client.close()
                stream_rows.append((f"{clients} client(s)", f"{med(costs) * 1000:.0f}",
                                    f"{med(costs) / args.tokens * 1e6:.1f}"))
            print(f"\nstream of {args.tokens} tokens (server cpu, median)")
            print(table(stream_rows, ("clients", "cpu ms/run", "cpu µs/token")))

            watcher = ServerClient.unix(sock)
            watcher.call({"type": "attach", "new": True})
            time.sleep(0.5)  # let the attach's own work finish
            before = cpu_seconds(server.pid)
            time.sleep(args.idle)
            used = cpu_seconds(server.pid) - before
            print(f"\nidle: {used * 1000:.0f} ms cpu in {args.idle:.0f} s ({used / args.idle * 100:.2f} %)")
            watcher.close()
        finally:
            server.terminate()
            server.wait(30)


if __name__ == "__main__":
    main()
