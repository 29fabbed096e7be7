"""Print-mode round trip: ``python -m wolli -p --no-session --model local/local-model "hi"``.

Run as a script (pytest ignores ``tests/perf``)::

    python tests/perf/bench_print_mode.py [--runs 10] [--tokens 200]

A loopback OpenAI-compatible server (a real HTTP/1.1 server on 127.0.0.1, this process)
answers each request with a streamed ``--tokens``-chunk answer; WOLLI_HOME, HOME and the
working directory are temporary folders. For every child process it records the wall time,
when the request reached the server (start-up cost up to the first byte sent), CPU
(user+sys) and peak RSS from ``os.wait4``. Prints medians. Never a pass/fail test.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.perf.bench_startup import HEAVY, child_env, load_note, med, run_child, table  # noqa: E402
from tests.support.loopback import LoopbackServer, RecordedRequest, Reply  # noqa: E402
from tests.support.openai_chat import text_answer, write_models_json  # noqa: E402

KEY_VARS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENROUTER_API_KEY",
            "GROQ_API_KEY", "XAI_API_KEY", "MISTRAL_API_KEY", "DEEPSEEK_API_KEY", "WOLLI_AGENT")


def answer_text(tokens: int) -> str:
    """``tokens`` pieces of exactly 7 characters: ``text_answer`` streams one per chunk."""
    return "".join(f"tok{i % 1000:03d} " for i in range(tokens))


def bench(label: str, extra: list[str], runs: int, tokens: int, server: LoopbackServer,
          env: dict[str, str], cwd: str) -> tuple[str, ...]:
    text = answer_text(tokens)
    arrivals: list[float] = []

    def handler(request: RecordedRequest) -> Reply:
        arrivals.append(time.perf_counter())
        return text_answer(text, completion_tokens=tokens)

    cmd = [sys.executable, "-m", "wolli", "-p", *extra, "--model", "local/local-model", "hi"]
    walls, to_request, cpus, rsss = [], [], [], []
    for index in range(runs + 1):  # the first run warms .pyc files and the page cache
        server.push(handler)
        start = time.perf_counter()
        sample = run_child(cmd, env=env, cwd=cwd)
        if sample.returncode != 0 or sample.stdout.strip() != text.strip():
            raise SystemExit(f"print mode failed ({sample.returncode}): {sample.stderr.strip()[-800:]}")
        if index == 0:
            continue
        walls.append(sample.wall)
        to_request.append(arrivals[-1] - start)
        cpus.append(sample.cpu)
        rsss.append(sample.rss_mib)
    return (
        label,
        f"{med(walls) * 1000:.0f}",
        f"{min(walls) * 1000:.0f}",
        f"{med(to_request) * 1000:.0f}",
        f"{(med(walls) - med(to_request)) * 1000:.0f}",
        f"{med(cpus) * 1000:.0f}",
        f"{med(rsss):.1f}",
    )


def imported_packages(server: LoopbackServer, tokens: int, env: dict[str, str], cwd: str) -> tuple[int, list[str]]:
    """(modules imported, heavy packages among them) during one print-mode run."""
    server.push(text_answer(answer_text(tokens), completion_tokens=tokens))
    cmd = [sys.executable, "-X", "importtime", "-m", "wolli", "-p", "--no-session", "--model", "local/local-model", "hi"]
    sample = run_child(cmd, env=env, cwd=cwd)
    names = [line.rsplit("|", 1)[1].strip() for line in sample.stderr.splitlines() if line.startswith("import time:")]
    packages = {name.partition(".")[0] for name in names[1:]}  # first line is the header
    return len(names) - 1, [name for name in HEAVY if name in packages]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--tokens", type=int, default=200)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp, LoopbackServer() as server:
        home, user_home, project = Path(tmp, "wolli_home"), Path(tmp, "home"), Path(tmp, "project")
        for folder in (home, user_home, project):
            folder.mkdir()
        write_models_json(home, server.url + "/v1")
        env = {k: v for k, v in child_env().items() if k not in KEY_VARS}
        env.update(WOLLI_HOME=str(home), HOME=str(user_home))

        baseline = [run_child([sys.executable, "-c", "pass"], env=env) for _ in range(args.runs)]
        rows = [("python -c pass (baseline)", f"{med([s.wall for s in baseline]) * 1000:.0f}",
                 f"{min(s.wall for s in baseline) * 1000:.0f}", "", "",
                 f"{med([s.cpu for s in baseline]) * 1000:.0f}", f"{med([s.rss_mib for s in baseline]):.1f}")]
        rows.append(bench("wolli -p --no-session", ["--no-session"], args.runs, args.tokens, server, env,
                          str(project)))
        rows.append(bench("wolli -p (session saved)", [], args.runs, args.tokens, server, env, str(project)))
        count, heavy = imported_packages(server, args.tokens, env, str(project))

    print(f"Print-mode round trip, {args.tokens}-token answer over loopback HTTP, {args.runs} runs "
          f"(medians; target <= 300 ms); {load_note()}\n")
    print(table(rows, ("command", "wall ms", "min ms", "to request ms", "after ms", "cpu ms", "rss MiB")))
    print("\n'to request': process start until the request reached the server; 'after': the rest "
          "(streaming the answer, printing, shutdown).")
    print(f"A print-mode run imports {count} modules; heavy packages among them: {', '.join(heavy) or 'none'}.")


if __name__ == "__main__":
    main()
