"""Benchmark: the full-screen TUI in process (Textual's headless driver, the faux model).

Run: ``python tests/perf/bench_tui.py [--runs 3] [--pairs 2000]``. Prints medians; not a test.

Figures (README.md's performance table):

* **first frame**: from building the app to its first paint, and to the session being ready
  (the runtime is imported after the first frame); again with ten extensions in the agent home
  (each registers a tool, a command, a flag and three handlers: ``bench_extensions.py``'s);
* **stream 500 @ max**: last of 500 streamed tokens on screen after the first;
* **stream 5 s @ 100/s**: CPU of the whole process while 500 tokens stream at 100 tokens/s,
  and how many frames it drew;
* **idle**: CPU over 2 s with nothing happening (should be 0: no timers run), and with the
  working indicator on (its spinner ticks ten times a second: the cost of one tick);
* **resume N pairs**: opening a saved session of N user/assistant pairs until its last answer
  is mounted, and the peak RSS;
* **frame cost with 20 / N messages**: CPU per frame while streaming into a transcript that
  already holds 20 or N messages (flat when the window bounding works), from the first frame to
  the end of the answer (the request built from the whole history comes before it).

The end-to-end figures (a real terminal, process start included, beside pi and Claude Code)
come from ``tests/perf/terminal/run_peers.sh wolli``; this script is the quick in-process view.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def _setup_home() -> Path:
    home = Path(tempfile.mkdtemp(prefix="wolli-bench-tui-"))
    os.environ["WOLLI_HOME"] = str(home)
    (home / "models.json").write_text(json.dumps({"providers": {"faux": {
        "api": "faux", "baseUrl": "http://faux.invalid", "apiKey": "none",
        "models": [{"id": "faux-1", "contextWindow": 1_000_000}]}}}))
    return home


def _make_app(cwd: str, **request):
    from wolli.modes.tui.app import WolliApp
    from wolli.runtime.startup.request import StartupRequest

    return WolliApp(StartupRequest(mode="tui", cwd=cwd, model="faux/faux-1", require_model=False, **request))


async def _first_frame(cwd: str) -> tuple[float, float]:
    start = time.perf_counter()
    app = _make_app(cwd)
    painted: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        app.call_after_refresh(lambda: painted.append(time.perf_counter()))
        await app.controller.ready.wait()
        ready = time.perf_counter()
        await pilot.pause()
    return (painted[0] if painted else ready) - start, ready - start


async def _stream(cwd: str, faux, tokens: int, rate: float | None) -> tuple[float, float, int]:
    """(seconds from first to last token on screen, process CPU, frames drawn)."""
    from wolli.modes.tui.widgets.assistant_message import AssistantMessageView

    app = _make_app(cwd)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.controller.ready.wait()
        await asyncio.sleep(0.2)  # let the warm-up finish
        faux.tokens_per_second = rate
        words = [f"t{i}" for i in range(tokens)]
        faux.push(" ".join(words))
        seen: dict[str, float] = {}

        def watch() -> None:
            views = app.query(AssistantMessageView)
            text = views.last().markdown_text if views else ""
            if "t0" in text and "first" not in seen:
                seen["first"] = time.perf_counter()
            if words[-1] in text and "last" not in seen:
                seen["last"] = time.perf_counter()

        cpu0 = time.process_time()
        task = asyncio.ensure_future(app.controller.session.prompt("go"))
        if rate is None:  # latency: poll the screen (the poll's own CPU would skew a CPU figure)
            while "last" not in seen:
                watch()
                await asyncio.sleep(0.001)
        await task
        watch()
        seen.setdefault("first", time.perf_counter())
        seen.setdefault("last", seen["first"])
        cpu = time.process_time() - cpu0
        frames = app.adapter.batcher.flushes
        await pilot.pause()
    return seen["last"] - seen["first"], cpu, frames


async def _idle(cwd: str, working: bool = False) -> float:
    app = _make_app(cwd)
    async with app.run_test(size=(120, 40)):
        await app.controller.ready.wait()
        if working:  # what a long tool call shows: the spinner and the clock, nothing else moving
            app.working.start()
        await asyncio.sleep(0.5)
        cpu0 = time.process_time()
        await asyncio.sleep(2.0)
        return 100 * (time.process_time() - cpu0) / 2.0


def _with_extensions(count: int) -> Path:
    """A second WOLLI_HOME with ``count`` extensions (the caller restores the first)."""
    from tests.perf.bench_extensions import write_extensions

    home = _setup_home()
    write_extensions(home, count)
    return home


def _write_session(home: Path, cwd: str, pairs: int) -> str:
    import uuid

    from tests.perf.bench_session_listing import _body
    from wolli.config.paths import cwd_slug
    from wolli.session.entries import SessionHeader

    header = SessionHeader(id=str(uuid.uuid4()), cwd=cwd)
    folder = home / "agents" / "default" / "sessions" / cwd_slug(cwd)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"bench_{header.id}.jsonl"
    lines = [header.to_json(), *_body(2 * pairs, seed=1)]
    path.write_text("\n".join(lines) + "\n")
    return header.id


async def _resume(cwd: str, session_id: str) -> tuple[float, int]:
    from wolli.modes.tui.widgets.assistant_message import AssistantMessageView

    start = time.perf_counter()
    app = _make_app(cwd, session=session_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.controller.ready.wait()
        while not app.query(AssistantMessageView):
            await asyncio.sleep(0.002)
        await pilot.pause()
        took = time.perf_counter() - start
        mounted = len(app.transcript.mounted)
    return took, mounted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pairs", type=int, default=2000)
    args = parser.parse_args()
    home = _setup_home()
    cwd = tempfile.mkdtemp(prefix="wolli-bench-project-")
    from wolli.ai.providers.faux import FauxProvider

    faux = FauxProvider(provider="faux", model_id="faux-1")
    rows: list[tuple[str, str]] = []

    frames = [asyncio.run(_first_frame(cwd)) for _ in range(args.runs)]
    rows.append(("first frame (s)", f"{statistics.median(f[0] for f in frames):.3f}"))
    rows.append(("session ready (s)", f"{statistics.median(f[1] for f in frames):.3f}"))
    _with_extensions(10)
    frames = [asyncio.run(_first_frame(cwd)) for _ in range(args.runs)]
    os.environ["WOLLI_HOME"] = str(home)
    rows.append(("first frame, 10 extensions (s)", f"{statistics.median(f[0] for f in frames):.3f}"))
    rows.append(("session ready, 10 extensions (s)", f"{statistics.median(f[1] for f in frames):.3f}"))
    fast = [asyncio.run(_stream(cwd, faux, 500, None)) for _ in range(args.runs)]
    rows.append(("500 tokens @ max: last after first (s)", f"{statistics.median(f[0] for f in fast):.3f}"))
    paced = [asyncio.run(_stream(cwd, faux, 500, 100.0)) for _ in range(args.runs)]
    rows.append(("500 tokens @ 100/s: CPU (s)", f"{statistics.median(p[1] for p in paced):.2f}"))
    rows.append(("500 tokens @ 100/s: frames", f"{statistics.median(p[2] for p in paced):.0f}"))
    rows.append(("idle CPU over 2 s (%)", f"{statistics.median(asyncio.run(_idle(cwd)) for _ in range(args.runs)):.2f}"))
    spinning = statistics.median(asyncio.run(_idle(cwd, working=True)) for _ in range(args.runs))
    rows.append(("idle CPU, working indicator on (%)", f"{spinning:.2f}"))
    rows.append(("  per spinner tick, 10 a second (ms)", f"{spinning:.2f}"))  # 1 % = 10 ms/s = 1 ms a tick

    small = _write_session(home, cwd, 10)
    large = _write_session(home, cwd, args.pairs)
    resumed = [asyncio.run(_resume(cwd, large)) for _ in range(args.runs)]
    rows.append((f"resume {args.pairs} pairs to last answer (s)", f"{statistics.median(r[0] for r in resumed):.3f}"))
    rows.append((f"resume {args.pairs} pairs: rows mounted", f"{resumed[0][1]}"))
    rows.append(("peak RSS of this process (MiB)", f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}"))

    for label, session_id in (("20 messages", small), (f"{2 * args.pairs} messages", large)):
        async def streamed_after_resume(sid: str = session_id) -> float:
            app = _make_app(cwd, session=sid)
            async with app.run_test(size=(120, 40)) as pilot:
                await app.controller.ready.wait()
                await asyncio.sleep(0.3)
                faux.tokens_per_second = 400.0
                faux.push(" ".join(f"w{i}" for i in range(400)))
                # Counted from the first frame on: what comes before it (building the request
                # from the whole history, the faux provider's copy of it) is per turn, not per frame.
                batcher = app.adapter.batcher
                flush, first = batcher.flush, []

                def timed_flush() -> None:
                    if not first:
                        first.append((time.process_time(), batcher.flushes))
                    flush()

                batcher.flush = timed_flush  # type: ignore[method-assign]
                await app.controller.session.prompt("more")
                await pilot.pause()
                cpu0, before = first[0]
                return (time.process_time() - cpu0) * 1000 / max(1, batcher.flushes - before)

        per_frame = statistics.median(asyncio.run(streamed_after_resume()) for _ in range(args.runs))
        rows.append((f"CPU per frame while streaming, {label} (ms)", f"{per_frame:.1f}"))

    width = max(len(r[0]) for r in rows)
    for label, value in rows:
        print(f"{label:<{width}}  {value:>8}")


if __name__ == "__main__":
    main()
