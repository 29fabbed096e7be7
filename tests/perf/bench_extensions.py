"""Extension costs: start-up with ten extensions, per-token dispatch, and a reload of ten.

Run as a script (pytest ignores ``tests/perf``)::

    python tests/perf/bench_extensions.py [--runs 10] [--tokens 2000]

1. ``wolli -p`` round trip (loopback OpenAI-compatible server, as ``bench_print_mode``)
   with no extensions and with ten small extensions in the agent home (each registers a
   tool, a command, a flag and three handlers). Target: ten add at most 50 ms.
2. Dispatching ``message_update`` to one sync and one async handler: the in-process cost
   per streamed token, from a faux run of ``--tokens`` tokens with and without the
   handlers (target: ~10 µs per token).
3. ``host.reload()`` with the ten extensions loaded (target: at most 200 ms).

Medians; never a pass/fail test.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.perf.bench_print_mode import KEY_VARS, answer_text  # noqa: E402
from tests.perf.bench_startup import child_env, load_note, med, run_child, table  # noqa: E402
from tests.support.loopback import LoopbackServer  # noqa: E402
from tests.support.openai_chat import text_answer, write_models_json  # noqa: E402

EXTENSION = textwrap.dedent('''
    """Benchmark extension {n}."""

    def extension(wolli):
        wolli.register_flag("bench-{n}", description="a flag", type="boolean", default=False)
        wolli.register_command("bench-{n}", handler=lambda args, ctx: None, description="a command")
        wolli.register_tool({{"name": "bench_{n}", "description": "tool {n}", "execute": lambda *a: "ok"}})
        wolli.on("session_start", lambda event, ctx: None)
        wolli.on("tool_call", lambda event, ctx: None)
        wolli.on("turn_end", lambda event, ctx: None)
''')


def write_extensions(home: Path, count: int) -> None:
    folder = home / "agents" / "default" / "extensions"
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        (folder / f"bench_{n}.py").write_text(EXTENSION.format(n=n))


def startup_rows(runs: int) -> list[tuple[str, ...]]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp, LoopbackServer() as server:
        for label, count in (("wolli -p, no extensions", 0), ("wolli -p, 10 extensions", 10)):
            base = Path(tmp, str(count))
            home, user_home, project = base / "home", base / "user", base / "project"
            for folder in (home, user_home, project):
                folder.mkdir(parents=True)
            write_models_json(home, server.url + "/v1")
            write_extensions(home, count)
            env = {k: v for k, v in child_env().items() if k not in KEY_VARS}
            env.update(WOLLI_HOME=str(home), HOME=str(user_home))
            cmd = [sys.executable, "-m", "wolli", "-p", "--no-session", "--model", "local/local-model", "hi"]
            walls = []
            for index in range(runs + 1):
                server.push(text_answer(answer_text(50)))
                sample = run_child(cmd, env=env, cwd=str(project))
                if sample.returncode != 0:
                    raise SystemExit(f"wolli -p failed: {sample.stderr[-600:]}")
                if index:
                    walls.append(sample.wall)
            rows.append((label, f"{med(walls) * 1000:.0f}", f"{min(walls) * 1000:.0f}"))
    return rows


async def dispatch_cost(tokens: int, runs: int) -> tuple[float, float]:
    """(µs per token without handlers, µs per token with a sync and an async handler)."""
    os.environ["WOLLI_HOME"] = tempfile.mkdtemp()
    from tests.support.runtime import make_host, start_session
    from wolli.ai.providers.faux import FauxProvider

    async def one(with_handlers: bool) -> float:
        faux = FauxProvider()
        try:
            host = make_host(faux)
            if with_handlers:
                host.handlers.add("message_update", lambda event, ctx: None, owner="bench")

                async def async_handler(event, ctx):
                    return None

                host.handlers.add("message_update", async_handler, owner="bench")
            session = await start_session(host, tempfile.mkdtemp(), model=faux.model, persist=False)
            faux.push(" ".join(["tok"] * tokens))
            started = time.perf_counter()
            await session.prompt("go")
            return (time.perf_counter() - started) / tokens * 1e6
        finally:
            faux.unregister()

    plain = med([await one(False) for _ in range(runs)])
    handled = med([await one(True) for _ in range(runs)])
    return plain, handled


async def reload_cost(runs: int) -> float:
    home = Path(tempfile.mkdtemp())
    os.environ["WOLLI_HOME"] = str(home)
    write_extensions(home, 10)
    from tests.support.runtime import make_host, start_session
    from wolli.ai.providers.faux import FauxProvider

    faux = FauxProvider()
    try:
        host = make_host(faux)
        host.extensions.configure(packages=False)
        await host.extensions.load(tempfile.mkdtemp())
        await start_session(host, tempfile.mkdtemp(), model=faux.model, persist=False)
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            await host.reload()
            times.append(time.perf_counter() - started)
        assert len(host.commands) == 10
        return med(times) * 1000
    finally:
        faux.unregister()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--tokens", type=int, default=2000)
    args = parser.parse_args()
    print(f"Extension costs; {load_note()}\n")
    print(table(startup_rows(args.runs), ("command", "wall ms (median)", "min ms")))
    plain, handled = asyncio.run(dispatch_cost(args.tokens, max(3, args.runs // 2)))
    print(f"\nmessage_update dispatch: {plain:.1f} µs/token without handlers, {handled:.1f} µs/token with a "
          f"sync and an async handler: {handled - plain:.1f} µs per token for the two")
    print(f"reload of ten extensions: {asyncio.run(reload_cost(args.runs)):.1f} ms (median)")


if __name__ == "__main__":
    main()
