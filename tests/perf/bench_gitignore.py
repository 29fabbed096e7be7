"""Benchmark: Wolli's own gitignore matcher against the ``pathspec`` package.

Run: ``python tests/perf/bench_gitignore.py [--files 50000] [--runs 5]``. Needs ``pathspec``
(``pip install pathspec``; it is not a dependency of Wolli). Prints medians; not a test.

The question it answers (issue 9): should :mod:`wolli.tools.gitignore` be replaced by a
library? It times the part both can do, one ``.gitignore`` matched against every path of a
generated tree, checks the two agree there, then lists the cases where ripgrep's rules (which
the fallback walker must reproduce) and pathspec's differ. The decision and the figures are
written in the module doc of :mod:`wolli.tools.gitignore`.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from wolli.tools.gitignore import GitignoreMatcher, IgnoreFile

GITIGNORE = """\
# a typical Python + JS project
__pycache__/
*.py[cod]
*.so
.venv/
venv/
build/
dist/
*.egg-info/
.pytest_cache/
.mypy_cache/
.coverage
htmlcov/
node_modules/
*.log
/coverage/
docs/_build/
**/generated/**
!keep.log
*.tmp
.DS_Store
*.swp
target/
out/
.idea/
.vscode/
*.min.js
secrets/*.key
"""

_DIRS = ["src", "lib", "pkg", "tests", "docs", "build", "node_modules", "generated", "api", "core", "venv"]
_EXTS = [".py", ".pyc", ".js", ".min.js", ".log", ".md", ".txt", ".tmp", ".json", ".so", ".key"]


def generate_paths(count: int, seed: int = 7) -> list[tuple[str, bool]]:
    """``count`` relative paths (files, plus their directories) at depths 1 to 6."""
    rng = random.Random(seed)
    out: list[tuple[str, bool]] = []
    dirs: set[str] = set()
    while len(out) < count:
        depth = rng.randint(0, 5)
        parts = [rng.choice(_DIRS) + (str(rng.randint(0, 3)) if rng.random() < 0.5 else "") for _ in range(depth)]
        for i in range(1, depth + 1):
            d = "/".join(parts[:i])
            if d not in dirs:
                dirs.add(d)
                out.append((d, True))
        name = f"file{rng.randint(0, 999)}{rng.choice(_EXTS)}"
        out.append(("/".join([*parts, name]), False))
    return out[:count]


def _median_ms(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


# Cases where ripgrep (the ``ignore`` crate) and git-style pathspec can disagree; the walker
# must behave like ripgrep. (pattern text, path, is_dir, what ripgrep does)
RG_CASES = [
    ("*.{js,ts}", "a/b.ts", False, True),  # globset alternation; git has no braces
    ("{build,dist}/", "dist", True, True),
    ("a/**", "a", True, False),  # "a/**" matches inside a, not a itself
    ("logs/\n!logs/keep.log", "logs/keep.log", False, True),  # a parent dir excluded stays excluded
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    import pathspec

    paths = generate_paths(args.files)
    print(f"{len(paths)} paths, {sum(1 for _, d in paths if d)} of them directories; gitignore of "
          f"{sum(1 for line in GITIGNORE.splitlines() if line and not line.startswith('#'))} rules\n")

    # Parse cost.
    parse_ours = _median_ms(lambda: IgnoreFile.parse("/", GITIGNORE), args.runs * 20)
    parse_lib = _median_ms(lambda: pathspec.GitIgnoreSpec.from_lines(GITIGNORE.splitlines()), args.runs * 20)

    ours = IgnoreFile.parse("/", GITIGNORE)
    spec = pathspec.GitIgnoreSpec.from_lines(GITIGNORE.splitlines())

    # One file's rules against each entry, as the walker asks while descending.
    def run_ours():
        for path, is_dir in paths:
            ours.match("/" + path, is_dir)

    def run_lib():
        for path, is_dir in paths:
            spec.match_file(path + "/" if is_dir else path)

    walk_ours = _median_ms(run_ours, args.runs)
    walk_lib = _median_ms(run_lib, args.runs)

    # Whole-path verdicts (ancestors included), compared for agreement.
    matcher = GitignoreMatcher()
    matcher.add("", GITIGNORE)
    disagree = []
    for path, is_dir in paths:
        a = matcher.ignored(path, is_dir)
        b = spec.match_file(path + "/" if is_dir else path)
        if a != b:
            disagree.append((path, is_dir, a, b))

    print(f"{'':28}{'wolli.tools.gitignore':>24}{'pathspec ' + pathspec.__version__:>18}")
    print(f"{'parse (ms)':28}{parse_ours:>24.3f}{parse_lib:>18.3f}")
    print(f"{'match every entry (ms)':28}{walk_ours:>24.1f}{walk_lib:>18.1f}")
    print(f"{'per entry (µs)':28}{walk_ours * 1000 / len(paths):>24.2f}{walk_lib * 1000 / len(paths):>18.2f}")
    print(f"\nwhole-path verdicts that differ: {len(disagree)} of {len(paths)}")
    for path, is_dir, a, b in disagree[:5]:
        print(f"  {path}{'/' if is_dir else ''}: wolli {a}, pathspec {b}")

    print("\nripgrep-specific rules (what rg does / wolli / pathspec):")
    for text, path, is_dir, rg in RG_CASES:
        m = GitignoreMatcher()
        m.add("", text)
        lib = pathspec.GitIgnoreSpec.from_lines(text.splitlines()).match_file(path + "/" if is_dir else path)
        shown = text.replace("\n", " ; ")
        print(f"  {shown:34} {path:16} rg {rg!s:5} wolli {m.ignored(path, is_dir)!s:5} pathspec {lib}")


if __name__ == "__main__":
    main()
