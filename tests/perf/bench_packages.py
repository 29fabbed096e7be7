"""Start-up with ten installed packages against the same ten extensions as loose files.

Run as a script (pytest ignores ``tests/perf``)::

    python tests/perf/bench_packages.py [--runs 10]

Ten projects, each with one extension (the one of ``bench_extensions``: a tool, a command, a
flag and three handlers), are built as wheels and installed with ``wolli install`` into one
agent home; another agent home has the same ten modules in ``extensions/``. Each is timed
as a ``wolli -p`` round trip against the loopback server. Target: the packages within
30 ms of the loose files. Medians; never a pass/fail test.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.perf.bench_extensions import EXTENSION, write_extensions  # noqa: E402
from tests.perf.bench_print_mode import KEY_VARS, answer_text  # noqa: E402
from tests.perf.bench_startup import child_env, load_note, med, run_child, table  # noqa: E402
from tests.support.loopback import LoopbackServer  # noqa: E402
from tests.support.openai_chat import text_answer, write_models_json  # noqa: E402
from tests.support.packages import build_wheel, installer_env, make_project, wolli_cli  # noqa: E402


def install_packages(home: Path, work: Path, count: int) -> None:
    wheels = work / "wheels"
    for n in range(count):
        project = make_project(work / f"p{n}", f"bench-pkg-{n}", "1.0", f"bench_pkg_{n}", EXTENSION.format(n=n),
                               {"wolli.extensions": {f"bench-{n}": f"bench_pkg_{n}"}})
        wheel = build_wheel(project, wheels)
        done = wolli_cli(["install", str(wheel), "--yes"], work, env={**installer_env(), "WOLLI_HOME": str(home)})
        if done.returncode != 0:
            raise SystemExit(f"wolli install failed: {done.stderr[-800:]}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--count", type=int, default=10)
    args = parser.parse_args()
    rows = []
    print(load_note())
    with tempfile.TemporaryDirectory() as tmp, LoopbackServer() as server:
        cases = (("loose", f"wolli -p, {args.count} extensions as files"),
                 ("packages", f"wolli -p, {args.count} installed packages"))
        figures: dict[str, tuple[float, float]] = {}
        for key, label in cases:
            base = Path(tmp, key)
            home, user_home, project = base / "home", base / "user", base / "project"
            for folder in (home, user_home, project):
                folder.mkdir(parents=True)
            write_models_json(home, server.url + "/v1")
            if key == "loose":
                write_extensions(home, args.count)
            else:
                install_packages(home, base, args.count)
            env = {k: v for k, v in child_env().items() if k not in KEY_VARS}
            env.update(WOLLI_HOME=str(home), HOME=str(user_home))
            cmd = [sys.executable, "-m", "wolli", "-p", "--no-session", "--model", "local/local-model", "hi"]
            walls, cpus = [], []
            for index in range(args.runs + 1):
                server.push(text_answer(answer_text(50)))
                sample = run_child(cmd, env=env, cwd=str(project))
                if sample.returncode != 0:
                    raise SystemExit(f"wolli -p failed: {sample.stderr[-600:]}")
                if index:
                    walls.append(sample.wall)
                    cpus.append(sample.cpu)
            figures[key] = (med(walls), med(cpus))
            rows.append((label, f"{med(walls) * 1000:.0f}", f"{min(walls) * 1000:.0f}", f"{med(cpus) * 1000:.0f}"))
    print(table(rows, ("case", "wall ms (median)", "wall ms (min)", "cpu ms (median)")))
    wall = (figures["packages"][0] - figures["loose"][0]) * 1000
    cpu = (figures["packages"][1] - figures["loose"][1]) * 1000
    print(f"packages - loose files: {wall:+.0f} ms wall, {cpu:+.0f} ms cpu (target: within 30 ms)")


if __name__ == "__main__":
    main()
