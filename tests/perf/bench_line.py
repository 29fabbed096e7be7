"""Benchmark: the line mode (``wolli --plain``).

Run: ``python tests/perf/bench_line.py [--runs 5] [--tokens 500]``. Prints medians; not a test.

* **to prompt**: ``python -m wolli --plain`` in a pseudo-terminal, from spawn until the prompt
  is drawn (the loopback server as the model), then Ctrl+D; cpu and peak RSS of the child;
* **stream**: CPU per 1,000 tokens of the line mode's output (markdown rendered line by
  line on a colour terminal, or plain text) for an answer of ``--tokens`` tokens, in process.
"""

from __future__ import annotations

import argparse
import io
import os
import pty
import select
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

ANSWER_LINE = "Some **bold** words, a `code span` and a [link](https://example.com) in a line. "


def to_prompt(runs: int) -> list[tuple[float, float, float]]:
    from tests.support.loopback import LoopbackServer
    from tests.support.openai_chat import write_models_json

    out = []
    with LoopbackServer() as server:
        home = Path(tempfile.mkdtemp(prefix="wolli-bench-line-"))
        write_models_json(home, server.url + "/v1")
        env = {**os.environ, "WOLLI_HOME": str(home), "TERM": "xterm-256color",
               "PYTHONPYCACHEPREFIX": str(Path(tempfile.gettempdir()) / "wolli-perf-pycache")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        for _ in range(runs + 1):  # the first run fills the bytecode cache
            start = time.perf_counter()
            pid, fd = pty.fork()
            if pid == 0:
                os.chdir(home)
                os.execve(sys.executable, [sys.executable, "-m", "wolli", "--plain", "--model", "local/local-model"],
                          env)
            seen = b""
            ready = None
            while ready is None:
                readable, _, _ = select.select([fd], [], [], 10)
                if not readable:
                    raise RuntimeError(f"no prompt: {seen[-300:]!r}")
                chunk = os.read(fd, 65536)
                seen += chunk
                if "›".encode() in seen.split(b"/help", 1)[-1]:
                    ready = time.perf_counter() - start
            os.write(fd, b"\x04")
            while True:
                try:
                    if not os.read(fd, 65536):
                        break
                except OSError:
                    break
            _, _, usage = os.wait4(pid, 0)
            out.append((ready, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024))
    return out[1:]


def stream_cpu(tokens: int, colour: bool) -> float:
    from wolli.ai.types import AssistantMessage, TextContent
    from wolli.config.themes import builtin_theme
    from wolli.modes.line.output import LineOutput
    from wolli.modes.line.terminal import Terminal

    output = LineOutput(Terminal(io.StringIO(), colour=colour, width=100), builtin_theme("dark"))
    words = (ANSWER_LINE * (tokens // 10 + 1)).split(" ")[:tokens]
    text = ""
    message = AssistantMessage(content=[TextContent(text="")])
    start = time.process_time()
    output(SimpleNamespace(type="message_start", message=message))
    for index, word in enumerate(words):
        text += word + ("\n" if index % 12 == 11 else " ")
        message = AssistantMessage(content=[TextContent(text=text)])
        output(SimpleNamespace(type="message_update", message=message))
    output(SimpleNamespace(type="message_end", message=message))
    return (time.process_time() - start) * 1000 / tokens * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=500)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    runs = to_prompt(args.runs)
    print(f"to prompt            {statistics.median(r[0] for r in runs) * 1000:6.0f} ms wall  "
          f"{statistics.median(r[1] for r in runs) * 1000:6.0f} ms cpu  "
          f"{statistics.median(r[2] for r in runs):5.0f} MiB peak RSS")
    for colour in (True, False):
        figures = [stream_cpu(args.tokens, colour) for _ in range(args.runs)]
        print(f"stream {args.tokens} tokens, {'colour' if colour else 'plain '}  "
              f"{statistics.median(figures):6.1f} ms cpu / 1k tokens")


if __name__ == "__main__":
    main()
