"""``wolli attach`` (the full-screen app on a server's session) against the standalone resume.

Run as a script (pytest ignores ``tests/perf``)::

    python tests/perf/bench_attach_tui.py [--runs 3] [--pairs 2000]

Both in a real terminal (tmux, 100x30), from the command to the moment the session's last
answer is on the screen:

- **standalone**: ``wolli --session PATH`` (process start, runtime start, file read, transcript);
- **attach cold**: ``wolli attach PATH`` to a running ``wolli serve`` that has not opened the
  session yet (the server reads the file; the history crosses the socket);
- **attach warm**: ``wolli attach ID`` to the session while another client holds it live.

Goal (docs/server.md): attach <= standalone. Never a pass/fail test.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.e2e.tmux_terminal import TmuxTerminal  # noqa: E402
from tests.perf.bench_rpc import KEY_VARS  # noqa: E402
from tests.perf.bench_session_resume import session_lines  # noqa: E402
from tests.perf.bench_startup import child_env, load_note, med, table  # noqa: E402
from tests.support.loopback import LoopbackServer  # noqa: E402
from tests.support.rpc import MODEL, write_models  # noqa: E402
from wolli.modes.server.client import ServerClient  # noqa: E402

MARKER = "LAST-ANSWER-MARKER"


def long_session(path: Path, pairs: int) -> None:
    lines = session_lines(pairs)
    header = json.loads(lines[0])  # a session id of its own: the server must not take it for another run's
    header["id"] = f"{header['id'][:-12]}{abs(hash(path.name)) % 10**12:012d}"
    lines[0] = json.dumps(header)
    last = json.loads(lines[-1])
    assert last["message"]["role"] == "assistant"
    last["message"]["content"] = [{"type": "text", "text": f"The end of the session: {MARKER}."}]
    lines[-1] = json.dumps(last)
    path.write_text("\n".join(lines) + "\n")


def shown_after(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    term = TmuxTerminal(command, cwd=str(cwd), env=env)
    try:
        term.wait_for(MARKER, timeout=300)
        return time.perf_counter() - start
    finally:
        term.close()
        gone(command[-1])  # its exit (saving, the code cache) must not overlap the next run


def gone(argument: str, timeout: float = 30) -> None:
    """Until no process has ``argument`` on its command line."""
    deadline = time.monotonic() + timeout
    needle = argument.encode()
    while time.monotonic() < deadline:
        alive = False
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    alive = alive or needle in (entry / "cmdline").read_bytes().split(b"\0")
                except OSError:
                    pass
        if not alive:
            return
        time.sleep(0.02)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pairs", type=int, default=2000)
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
            standalone, cold, warm = [], [], []
            for run in range(args.runs):
                path, alone = Path(tmp) / f"long{run}.jsonl", Path(tmp) / f"alone{run}.jsonl"
                long_session(path, args.pairs)
                # The standalone resume reads a copy: the app it ran may still be exiting (and
                # holding the session's writer lock) when the attach asks the server to open it.
                long_session(alone, args.pairs)
                standalone.append(shown_after([sys.executable, "-m", "wolli", *MODEL, "--session", str(alone)],
                                              project, env))
                cold.append(shown_after([sys.executable, "-m", "wolli", "attach", "--socket", str(sock), str(path)],
                                        project, env))
                holder = ServerClient.unix(sock)
                session_id = holder.call({"type": "attach", "sessionId": str(path)}, timeout=600)["sessionId"]
                warm.append(shown_after([sys.executable, "-m", "wolli", "attach", "--socket", str(sock), session_id],
                                        project, env))
                holder.close()
            rows = [(f"{args.pairs} pairs", f"{med(standalone) * 1000:.0f}", f"{med(cold) * 1000:.0f}",
                     f"{med(warm) * 1000:.0f}")]
            print("\nlast answer on screen (ms, median)")
            print(table(rows, ("session", "standalone resume", "attach cold", "attach warm")))
        finally:
            server.terminate()
            server.wait(30)


if __name__ == "__main__":
    main()
