"""Streaming throughput, in process: events per second and CPU per 1,000 tokens.

Run as a script (pytest ignores ``tests/perf``)::

    python tests/perf/bench_stream.py [--runs 7] [--tokens 5000]

Scenarios, each a ``--tokens``-token text answer:

- ``builder only``: ``MessageBuilder.text_delta`` driven directly and drained, no provider;
  the floor every provider pays per token (event objects, queue).
- ``faux -> ai.stream``: ``wolli.ai.stream`` with the faux provider (one loop turn per token,
  like a network stream), events consumed with ``async for``.
- ``faux -> Agent``: the same through the Agent loop with a no-op listener (what every
  mode pays before it renders anything).
- ``long answer``: ``faux -> ai.stream`` with ``--long-tokens`` tokens; the cost per token
  should match the short answer (it grew quadratically before the builder appended in place).
- ``tool-call arguments``: a faux ``write`` call with a ``--tool-kb`` KB argument streamed in
  24-character deltas (partial-JSON parsing, argument accumulation); "tok" counts deltas.
- ``openai-completions``: the real provider parsing a ``--tokens``-chunk SSE body served by
  the loopback server, run in a child process so its CPU is not counted here.

CPU is this process's user+sys time (``time.process_time``). Never a pass/fail test.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.perf.bench_startup import load_note, med, table  # noqa: E402

Scenario = Callable[[], Awaitable[int]]  # returns the number of events seen


def faux_text_of(tokens: int) -> str:
    """``tokens`` pieces for the faux tokenizer (``\\s*\\S{1,6}``): `` t0001 t0002 ...``."""
    return "".join(f" t{i % 10000:04d}" for i in range(tokens))


def wire_text_of(tokens: int) -> str:
    """``tokens`` pieces of 7 characters: ``text_answer`` sends one per SSE chunk."""
    return "".join(f"tok{i % 1000:03d} " for i in range(tokens))


# ---------------------------------------------------------------------------- scenarios


def builder_only(tokens: int) -> Scenario:
    from wolli.ai.builder import MessageBuilder
    from wolli.ai.event_stream import AssistantMessageEventStream
    from wolli.ai.types import Model

    model = Model(id="bench", api="bench", provider="bench")
    pieces = [f" t{i:04d}" for i in range(tokens)]

    async def run() -> int:
        out = AssistantMessageEventStream()
        builder = MessageBuilder(model, out)

        async def produce() -> None:
            index = builder.text_start()
            for piece in pieces:
                builder.text_delta(index, piece)
                await asyncio.sleep(0)
            builder.done("stop")

        task = asyncio.get_running_loop().create_task(produce())
        count = 0
        async for _ in out:
            count += 1
        await task
        return count

    return run


def faux_stream(tokens: int) -> Scenario:
    from wolli.ai import Context, FauxProvider, UserMessage, faux_text, stream

    faux = FauxProvider(provider="bench-faux")
    text = faux_text_of(tokens)
    context = Context(messages=[UserMessage(content="go")])

    async def run() -> int:
        faux.push(faux_text(text))
        events = stream(faux.model, context)
        count = 0
        async for _ in events:
            count += 1
        message = await events.result()
        assert message.stop_reason == "stop" and len(message.text()) == len(text), message.error_message
        return count

    return run


def faux_tool_call(kilobytes: int) -> Scenario:
    """A ``write`` call whose ``content`` argument is ``kilobytes`` KB (faux sends 24-char deltas)."""
    from wolli.ai import Context, FauxProvider, UserMessage, faux_tool_call, stream

    faux = FauxProvider(provider="bench-tool")
    line = "x" * 63 + "\n"
    content = line * (kilobytes * 1024 // len(line))
    context = Context(messages=[UserMessage(content="go")])

    async def run() -> int:
        faux.push(faux_tool_call("write", {"path": "big.txt", "content": content}))
        events = stream(faux.model, context)
        count = 0
        async for _ in events:
            count += 1
        message = await events.result()
        assert message.tool_calls()[0].arguments["content"] == content, message.error_message
        return count

    return run


def faux_agent(tokens: int) -> Scenario:
    from wolli.agent.agent import Agent
    from wolli.ai import FauxProvider, faux_text

    faux = FauxProvider(provider="bench-agent")
    text = faux_text_of(tokens)

    async def run() -> int:
        faux.push(faux_text(text))
        agent = Agent(model=faux.model)
        count = 0

        def listener(event: object) -> None:
            nonlocal count
            count += 1

        agent.subscribe(listener)
        await agent.prompt("go")
        last = agent.state.messages[-1]
        assert last.stop_reason == "stop" and len(last.text()) == len(text), last.error_message
        return count

    return run


def openai_completions(tokens: int, url: str) -> Scenario:
    from wolli.ai import Context, Model, StreamOptions, UserMessage, stream

    model = Model(id="local-model", api="openai-completions", provider="local", base_url=url + "/v1")
    context = Context(messages=[UserMessage(content="go")])
    expected = len(wire_text_of(tokens))

    async def run() -> int:
        events = stream(model, context, StreamOptions(api_key="bench"))
        count = 0
        async for _ in events:
            count += 1
        message = await events.result()
        assert message.stop_reason == "stop" and len(message.text()) == expected, message.error_message
        return count

    return run


# ---------------------------------------------------------------------------- measuring


async def measure(scenario: Scenario, runs: int) -> tuple[float, float, int]:
    """(median wall s, median CPU s, events) over ``runs`` after one warm-up run."""
    await scenario()
    walls, cpus, count = [], [], 0
    for _ in range(runs):
        gc.collect()
        wall, cpu = time.perf_counter(), time.process_time()
        count = await scenario()
        cpus.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - wall)
    return med(walls), med(cpus), count


def row(label: str, result: tuple[float, float, int], tokens: int) -> tuple[str, ...]:
    wall, cpu, count = result
    return (
        label,
        str(count),
        f"{wall * 1000:.0f}",
        f"{count / wall:,.0f}",
        f"{tokens / wall:,.0f}",
        f"{cpu * 1000 / (tokens / 1000):.1f}",
    )


def start_server(tokens: int, write: tuple[int, int]) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(tokens), "--write", f"{write[0]},{write[1]}"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    if not url.startswith("http"):
        proc.kill()
        raise SystemExit("the loopback server did not start")
    return proc, url


def serve(tokens: int, write: tuple[int, int]) -> None:
    """Child process: a loopback server answering every request with the same SSE body."""
    from tests.support.loopback import LoopbackServer, RecordedRequest, Reply
    from tests.support.openai_chat import text_answer

    reply = text_answer(wire_text_of(tokens), completion_tokens=tokens)
    reply.chunk_sizes = write

    def handler(request: RecordedRequest) -> Reply:
        server.push(handler)
        return reply

    with LoopbackServer(seed=1) as server:
        server.push(handler)
        print(server.url, flush=True)
        sys.stdin.read()  # until the parent closes our stdin


async def bench(args: argparse.Namespace) -> list[tuple[str, ...]]:
    tokens, runs = args.tokens, args.runs
    rows = [
        row("builder only (no provider)", await measure(builder_only(tokens), runs), tokens),
        row("faux -> ai.stream", await measure(faux_stream(tokens), runs), tokens),
        row("faux -> Agent, no-op listener", await measure(faux_agent(tokens), runs), tokens),
    ]
    if args.long_tokens:
        label = f"faux -> ai.stream, {args.long_tokens:,}-token answer"
        rows.append(row(label, await measure(faux_stream(args.long_tokens), max(1, runs // 3)), args.long_tokens))
    tool = await measure(faux_tool_call(args.tool_kb), runs)
    rows.append(row(f"faux -> ai.stream, {args.tool_kb} KB tool-call arguments", tool, tool[2]))
    proc, url = start_server(tokens, args.write)
    try:
        label = f"openai-completions over loopback ({args.write[0]}-{args.write[1]} B writes)"
        rows.append(row(label, await measure(openai_completions(tokens, url), runs), tokens))
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=10)
    return rows


async def profile(args: argparse.Namespace) -> None:
    """cProfile one scenario (after a warm-up run); prints the top 25 by own time."""
    import cProfile
    import pstats

    proc = None
    if args.profile == "openai":
        proc, url = start_server(args.tokens, args.write)
        scenario = openai_completions(args.tokens, url)
    else:
        make = {"builder": builder_only, "faux": faux_stream, "agent": faux_agent}.get(args.profile)
        scenario = make(args.tokens) if make else faux_tool_call(args.tool_kb)
    try:
        await scenario()
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(args.runs):
            await scenario()
        profiler.disable()
    finally:
        if proc is not None:
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(timeout=10)
    stats = pstats.Stats(profiler).strip_dirs().sort_stats("tottime")
    stats.print_stats(25)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--tokens", type=int, default=5000)
    parser.add_argument("--write", default="1,200", help="server write sizes MIN,MAX in bytes")
    parser.add_argument("--tool-kb", type=int, default=256, help="size of the tool-call scenario's argument")
    parser.add_argument("--long-tokens", type=int, default=64000,
                        help="size of the long-answer scenario (0: skip); cost per token should stay flat")
    parser.add_argument("--profile", choices=("builder", "faux", "tool", "agent", "openai"),
                        help="run one scenario under cProfile and print the top costs instead")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    low, _, high = args.write.partition(",")
    args.write = (int(low), int(high or low))
    if args.serve is not None:
        serve(args.serve, args.write)
        return
    if args.profile:
        asyncio.run(profile(args))
        return
    rows = asyncio.run(bench(args))
    print(f"Streaming a {args.tokens:,}-token answer, {args.runs} runs (medians); {load_note()}\n")
    print(table(rows, ("scenario", "events", "wall ms", "events/s", "tokens/s", "cpu ms/1k tok")))
    print("\nFor scale: the TUI target allows 400 ms CPU for 500 tokens (5 s at 100 tokens/s) including "
          "rendering, i.e. 800 ms per 1k tokens.")


if __name__ == "__main__":
    main()
