"""The file tools on their hot path: ``read`` of a small and a large file, ``edit`` of a
file, ``grep`` with the Python walker over a tree, each through the real tool (validation,
the Environment, the daemon-thread reads).

Run as a script (pytest ignores ``tests/perf``)::

    python tests/perf/bench_file_tools.py [--runs 7] [--calls 300]

Prints the median time per call (wall) and the CPU per call of this process. Never a
pass/fail test.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.perf.bench_startup import load_note, table  # noqa: E402


async def _calls(tool, args: dict, count: int) -> tuple[float, float]:
    params = tool.validate(dict(args))
    await tool.execute("warm", params, None, None, None)
    wall, cpu = time.perf_counter(), time.process_time()
    for i in range(count):
        await tool.execute(f"c{i}", tool.validate(dict(args)), None, None, None)
    return (time.perf_counter() - wall) / count, (time.process_time() - cpu) / count


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--calls", type=int, default=300)
    options = parser.parse_args()

    from wolli.tools import search_fallback
    from wolli.tools.edit import create_edit_tool
    from wolli.tools.environment import create_host_environment
    from wolli.tools.grep import create_grep_tool
    from wolli.tools.read import create_read_tool

    folder = Path(tempfile.mkdtemp(prefix="wolli-bench-files-"))
    (folder / "small.py").write_text("".join(f"line {i} = {i * 7}\n" for i in range(100)))
    (folder / "large.txt").write_text("".join(f"row {i:06d} {'x' * 90}\n" for i in range(10_000)))  # ~1 MB
    (folder / "edit.py").write_text("".join(f"value_{i} = {i}\n" for i in range(2000)))
    tree = folder / "tree"
    for d in range(20):
        (tree / f"pkg{d}").mkdir(parents=True)
        for f in range(50):
            (tree / f"pkg{d}" / f"mod{f}.py").write_text(f"def f{f}():\n    return {d * f}\n" * 20)
    env = create_host_environment(str(folder))
    read, edit, grep = create_read_tool(env), create_edit_tool(env), create_grep_tool(env)
    search_fallback.FORCE_FALLBACK = True  # the Python walker: the part that reads files itself

    async def edits(count: int) -> tuple[float, float]:
        """Back and forth, so every call changes the file."""
        pairs = [("value_1000 = 1000", "value_1000 = -1"), ("value_1000 = -1", "value_1000 = 1000")]
        wall, cpu = time.perf_counter(), time.process_time()
        for i in range(count):
            old, new = pairs[i % 2]
            args = {"path": "edit.py", "edits": [{"old_text": old, "new_text": new}]}
            await edit.execute(f"e{i}", edit.validate(args), None, None, None)
        return (time.perf_counter() - wall) / count, (time.process_time() - cpu) / count

    scenarios = [
        ("read, 100-line file", lambda n: _calls(read, {"path": "small.py"}, n), options.calls),
        ("read, 1 MB file (first page)", lambda n: _calls(read, {"path": "large.txt"}, n), options.calls // 3),
        ("edit, 2,000-line file", edits, options.calls // 3 * 2),
        ("grep (Python walker), 1,000 files", lambda n: _calls(grep, {"pattern": "return 7", "path": "tree"}, n), 5),
    ]
    rows = []
    for label, run, count in scenarios:
        walls, cpus = [], []
        for _ in range(options.runs):
            wall, cpu = asyncio.run(run(count))
            walls.append(wall)
            cpus.append(cpu)
        rows.append((label, f"{statistics.median(walls) * 1e6:,.0f}", f"{statistics.median(cpus) * 1e6:,.0f}"))
    print(f"File tools, {options.runs} runs (medians); {load_note()}\n")
    print(table(rows, ("scenario", "wall µs/call", "cpu µs/call")))


if __name__ == "__main__":
    main()
