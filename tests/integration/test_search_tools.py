"""grep, find and ls on real trees, with rg/fd and with the pure-Python fallback."""

from __future__ import annotations

import asyncio
import os
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from wolli.agent.tool import ToolResult
from wolli.ai.abort import AbortController, AbortError
from wolli.tools import search_fallback
from wolli.tools.environment import create_host_environment
from wolli.tools.find import create_find_tool
from wolli.tools.grep import create_grep_tool
from wolli.tools.ls import create_ls_tool

HAVE_RG = shutil.which("rg") is not None
HAVE_FD = (shutil.which("fd") or shutil.which("fdfind")) is not None


@pytest.fixture(params=["binary", "python"])
def engine(request, monkeypatch) -> str:
    """Run a test with rg/fd and again with the Python walker."""
    if request.param == "python":
        monkeypatch.setattr(search_fallback, "FORCE_FALLBACK", True)
    elif not (HAVE_RG and HAVE_FD):
        pytest.skip("rg and fd are not installed")
    return request.param


def write(root: Path, rel: str, content: str | bytes = "") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A small repository exercising every skip rule; 'needle' marks searchable lines."""
    root = tmp_path / "proj"
    (root / ".git" / "info").mkdir(parents=True)
    write(root, ".git/info/exclude", "excluded.txt\n")
    write(root, ".git/HEAD", "needle in git metadata\n")
    write(root, ".gitignore", "*.log\n!keep.log\n/build/\nnode_modules/\ndocs/*.tmp\n")
    write(root, ".ignore", "secret.txt\n")
    write(root, "app.py", "import os\n\ndef main():\n    return 'needle'\n")
    write(root, "keep.log", "needle kept by negation\n")
    write(root, "debug.log", "needle ignored\n")
    write(root, "build/out.txt", "needle ignored build\n")
    write(root, "src/build/x.txt", "needle not anchored here\n")
    write(root, "node_modules/pkg/index.js", "needle in deps\n")
    write(root, "src/.gitignore", "generated.py\n!debug.log\n")
    write(root, "src/main.py", "from util import needle\nprint(needle)\n")
    write(root, "src/generated.py", "needle generated\n")
    write(root, "src/debug.log", "needle re-included in src\n")
    write(root, "src/tests/test_main.py", "def test_needle():\n    pass\n")
    write(root, "docs/a.tmp", "needle tmp\n")
    write(root, "docs/sub/b.tmp", "needle deeper tmp\n")
    write(root, "excluded.txt", "needle excluded\n")
    write(root, "secret.txt", "needle secret\n")
    write(root, ".hidden.txt", "needle hidden\n")
    write(root, ".config/settings.toml", "needle = 1\n")
    write(root, "bin.dat", b"needle\x00\x01\x02 binary\n")
    write(root, "long.txt", "needle " + "x" * 1000 + "\n")
    write(root, "ünïcödé/файл.txt", "needle ünïcödé\n")
    write(root, "crlf.txt", "needle crlf\r\nsecond\r\n")
    (root / "link.txt").symlink_to("app.py")
    return root


async def run(tool, root: Path, signal: Any = None, **arguments: Any) -> ToolResult:
    params = tool.validate(arguments)
    return await tool.execute("call-1", params, signal, None, None)


def grep_tool(root: Path):
    return create_grep_tool(create_host_environment(str(root)))


def find_tool(root: Path):
    return create_find_tool(create_host_environment(str(root)))


def hits(result: ToolResult) -> list[str]:
    """The result lines before any blank line + notices."""
    return result.text().split("\n\n")[0].split("\n")


# ----------------------------------------------------------------------------- grep


async def test_grep_finds_what_the_rules_allow(tree, engine):
    result = await run(grep_tool(tree), tree, pattern="needle")
    assert result.details["engine"] == ("ripgrep" if engine == "binary" else "python")
    assert hits(result) == [
        ".config/settings.toml:1: needle = 1",
        ".hidden.txt:1: needle hidden",
        "app.py:4:     return 'needle'",
        "crlf.txt:1: needle crlf",
        "docs/sub/b.tmp:1: needle deeper tmp",
        "keep.log:1: needle kept by negation",
        "long.txt:1: needle " + "x" * 493 + "... [truncated]",
        "src/build/x.txt:1: needle not anchored here",
        "src/debug.log:1: needle re-included in src",
        "src/main.py:1: from util import needle",
        "src/main.py:2: print(needle)",
        "src/tests/test_main.py:1: def test_needle():",
        "ünïcödé/файл.txt:1: needle ünïcödé",
    ]
    assert result.details["match_count"] == 13
    assert result.details["lines_truncated"] is True
    assert result.details["limit_reached"] is False
    assert "[Some lines were cut to 500 characters" in result.text()


async def test_grep_context_lines(tree, engine):
    write(tree, "ctx.txt", "one\ntwo\nthree target\nfour\nfive\nsix\nseven target\n")
    result = await run(grep_tool(tree), tree, pattern="target", context=1)
    assert hits(result) == [
        "ctx.txt-2- two",
        "ctx.txt:3: three target",
        "ctx.txt-4- four",
        "ctx.txt-6- six",
        "ctx.txt:7: seven target",
    ]


async def test_grep_ignore_case_and_literal(tree, engine):
    write(tree, "calc.txt", "value = a.b(c)\nVALUE = axb(c\nValue\n")
    result = await run(grep_tool(tree), tree, pattern="value", ignore_case=True, glob="calc.txt")
    assert [line.split(":")[1] for line in hits(result)] == ["1", "2", "3"]
    result = await run(grep_tool(tree), tree, pattern="a.b(c)", literal=True)
    assert hits(result) == ["calc.txt:1: value = a.b(c)"]
    result = await run(grep_tool(tree), tree, pattern="value", ignoreCase=False, path="calc.txt")
    assert hits(result) == ["calc.txt:1: value = a.b(c)"]


async def test_grep_invalid_regex_is_a_clear_error(tree, engine):
    with pytest.raises(ValueError, match="(?s)Invalid regex pattern 'a\\(b'.*literal=true"):
        await run(grep_tool(tree), tree, pattern="a(b")


async def test_grep_missing_path_is_a_clear_error(tree, engine):
    with pytest.raises(FileNotFoundError, match="Path not found: nope"):
        await run(grep_tool(tree), tree, pattern="x", path="nope")


async def test_grep_single_file_path(tree, engine):
    result = await run(grep_tool(tree), tree, pattern="needle", path="src/main.py")
    assert hits(result) == ["main.py:1: from util import needle", "main.py:2: print(needle)"]
    # An explicitly named file is searched even when ignored, but never when binary.
    result = await run(grep_tool(tree), tree, pattern="needle", path="debug.log")
    assert hits(result) == ["debug.log:1: needle ignored"]
    result = await run(grep_tool(tree), tree, pattern="needle", path="bin.dat")
    assert result.text() == "No matches found"


async def test_grep_subdirectory_keeps_parent_rules(tree, engine):
    write(tree, "src/inner.log", "needle in src log\n")
    result = await run(grep_tool(tree), tree, pattern="needle", path="src")
    assert hits(result) == [
        "build/x.txt:1: needle not anchored here",
        "debug.log:1: needle re-included in src",
        "main.py:1: from util import needle",
        "main.py:2: print(needle)",
        "tests/test_main.py:1: def test_needle():",
    ]


async def test_grep_glob_filters_without_reincluding_ignored_files(tree, engine):
    result = await run(grep_tool(tree), tree, pattern="needle", glob="*.py")
    assert hits(result) == [
        "app.py:4:     return 'needle'",
        "src/main.py:1: from util import needle",
        "src/main.py:2: print(needle)",
        "src/tests/test_main.py:1: def test_needle():",
    ]  # src/generated.py stays ignored
    result = await run(grep_tool(tree), tree, pattern="needle", glob="src/**/*.py")
    assert [line.split(":")[0] for line in hits(result)] == [
        "src/main.py", "src/main.py", "src/tests/test_main.py",
    ]
    result = await run(grep_tool(tree), tree, pattern="needle", glob="*.{toml,tmp}")
    assert [line.split(":")[0] for line in hits(result)] == [".config/settings.toml", "docs/sub/b.tmp"]


async def test_grep_and_find_with_undecodable_names_and_bytes(tmp_path, engine):
    with open(os.path.join(os.fsencode(tmp_path), b"bad\xff.txt"), "wb") as handle:
        handle.write(b"needle \xff here\n")
    result = await run(grep_tool(tmp_path), tmp_path, pattern="needle")
    assert hits(result) == ["bad\ufffd.txt:1: needle \ufffd here"]
    result = await run(find_tool(tmp_path), tmp_path, pattern="*.txt")
    assert hits(result) == ["bad\ufffd.txt"]
    result = await run(grep_tool(tmp_path), tmp_path, pattern="needle", context=1)
    assert hits(result) == ["bad\ufffd.txt:1: needle \ufffd here"]


async def test_global_ignore_files_from_home(tree, engine, monkeypatch):
    home = Path(os.environ["HOME"])
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    write(tree, "notes.private", "needle private\n")
    write(tree, "scratch.fdonly", "needle scratch\n")
    write(home, ".config/git/ignore", "*.private\n")
    write(home, ".config/fd/ignore", "*.fdonly\n")
    grep_lines = hits(await run(grep_tool(tree), tree, pattern="needle", glob="*.{private,fdonly}"))
    assert grep_lines == ["scratch.fdonly:1: needle scratch"]  # fd's own file is not rg's
    assert (await run(find_tool(tree), tree, pattern="*.{private,fdonly}")).text().startswith("No files")
    # core.excludesFile in ~/.gitconfig replaces the default location.
    write(home, ".gitconfig", "[core]\n\texcludesFile = ~/my-excludes\n")
    write(home, "my-excludes", "*.fdonly\n")
    grep_lines = hits(await run(grep_tool(tree), tree, pattern="needle", glob="*.{private,fdonly}"))
    assert grep_lines == ["notes.private:1: needle private"]


async def test_tool_specific_ignore_files(tree, engine):
    write(tree, ".rgignore", "only_rg.txt\n")
    write(tree, ".fdignore", "only_fd.txt\n")
    write(tree, "only_rg.txt", "needle rg\n")
    write(tree, "only_fd.txt", "needle fd\n")
    assert hits(await run(grep_tool(tree), tree, pattern="needle", glob="only_*")) == ["only_fd.txt:1: needle fd"]
    assert hits(await run(find_tool(tree), tree, pattern="only_*")) == ["only_rg.txt"]


async def test_grep_no_matches(tree, engine):
    result = await run(grep_tool(tree), tree, pattern="definitely-not-there")
    assert result.text() == "No matches found"
    assert result.details["match_count"] == 0


async def test_grep_limit_keeps_the_first_matches_in_tree_order(tmp_path, engine):
    for index in range(30):
        write(tmp_path, f"d{index % 3}/f{index:02d}.txt", "hit\n" * 5)
    result = await run(grep_tool(tmp_path), tmp_path, pattern="hit")
    assert result.details == {
        "match_count": 100, "truncated": False, "limit_reached": True, "lines_truncated": False,
        "engine": result.details["engine"],
    }
    assert result.text().endswith("\n\n[100 matches limit reached. Use limit=200 or refine the pattern]")
    lines = hits(result)
    assert len(lines) == 100
    assert lines[0] == "d0/f00.txt:1: hit"
    assert lines[-1] == "d1/f28.txt:5: hit"  # d0 and d1 hold 10 files of 5 hits each
    result = await run(grep_tool(tmp_path), tmp_path, pattern="hit", limit=150)
    assert result.details["match_count"] == 150
    result = await run(grep_tool(tmp_path), tmp_path, pattern="hit", limit=150, glob="f0*.txt")
    assert result.details["match_count"] == 50 and not result.details["limit_reached"]


async def test_grep_output_is_capped_at_50kb(tmp_path, engine):
    write(tmp_path, "big.txt", "".join(f"hit {index} " + "y" * 400 + "\n" for index in range(400)))
    result = await run(grep_tool(tmp_path), tmp_path, pattern="hit", limit=1000)
    text = result.text()
    assert result.details["truncated"] is True
    assert result.details["match_count"] == 400
    assert "[Output truncated at 50.0KB" in text
    assert len(hits(result)[0].encode()) < 50 * 1024
    assert len(text.split("\n\n")[0].encode()) <= 50 * 1024


async def test_grep_pattern_with_shell_metacharacters(tmp_path, engine):
    write(tmp_path, "q.txt", "it's \"quoted\" $HOME `x` ; rm -rf\n")
    result = await run(grep_tool(tmp_path), tmp_path, pattern="it's \"quoted\" $HOME `x` ; rm", literal=True)
    assert hits(result) == ["q.txt:1: it's \"quoted\" $HOME `x` ; rm -rf"]
    result = await run(grep_tool(tmp_path), tmp_path, pattern="-rf")
    assert hits(result) == ["q.txt:1: it's \"quoted\" $HOME `x` ; rm -rf"]


async def test_grep_runs_rg_through_the_environment(tree):
    if not HAVE_RG:
        pytest.skip("rg is not installed")
    base = create_host_environment(str(tree))
    commands: list[str] = []

    async def recording_exec(command, cwd=None, options=None):
        commands.append(command)
        return await base.exec(command, cwd, options)

    tool = create_grep_tool(base.derive(exec=recording_exec))
    result = await run(tool, tree, pattern="needle", path="src/main.py")
    assert len(commands) == 1 and "--json" in commands[0]
    assert result.details["match_count"] == 2


async def test_grep_falls_back_when_the_environment_lacks_rg(tree):
    base = create_host_environment(str(tree))

    async def sandbox_exec(command, cwd=None, options=None):
        return await base.exec("exit 127", cwd, options)  # "command not found"

    tool = create_grep_tool(base.derive(exec=sandbox_exec))
    result = await run(tool, tree, pattern="needle", glob="*.py")
    assert result.details["engine"] == "python"
    assert result.details["match_count"] == 4


async def test_grep_abort_before_start(tree, engine):
    controller = AbortController()
    controller.abort()
    with pytest.raises(AbortError):
        await run(grep_tool(tree), tree, signal=controller.signal, pattern="needle")


async def test_grep_abort_while_running(tree, engine):
    base = create_host_environment(str(tree))
    controller = AbortController()

    async def exec_then_abort(command, cwd=None, options=None):
        forward = options.on_data

        def on_data(chunk: bytes) -> None:  # Esc arrives while rg is streaming results
            forward(chunk)
            controller.abort("user pressed Esc")

        options.on_data = on_data
        return await base.exec(command, cwd, options)

    async def readdir_then_abort(path):
        controller.abort("user pressed Esc")
        return await base.readdir(path)

    env = base.derive(exec=exec_then_abort, readdir=readdir_then_abort)
    with pytest.raises(AbortError):
        await run(create_grep_tool(env), tree, signal=controller.signal, pattern="needle")


# ----------------------------------------------------------------------------- find


async def test_find_by_name_pattern(tree, engine):
    result = await run(find_tool(tree), tree, pattern="*.py")
    assert result.details["engine"] == ("fd" if engine == "binary" else "python")
    assert hits(result) == ["app.py", "src/main.py", "src/tests/test_main.py"]


async def test_find_everything_respects_the_rules(tree, engine):
    result = await run(find_tool(tree), tree, pattern="*")
    assert hits(result) == [
        ".config/",
        ".config/settings.toml",
        ".gitignore",
        ".hidden.txt",
        ".ignore",
        "app.py",
        "bin.dat",
        "crlf.txt",
        "docs/",
        "docs/sub/",
        "docs/sub/b.tmp",
        "keep.log",
        "link.txt",
        "long.txt",
        "src/",
        "src/.gitignore",
        "src/build/",
        "src/build/x.txt",
        "src/debug.log",
        "src/main.py",
        "src/tests/",
        "src/tests/test_main.py",
        "ünïcödé/",
        "ünïcödé/файл.txt",
    ]


async def test_find_path_patterns_and_directories(tree, engine):
    tool = find_tool(tree)
    assert hits(await run(tool, tree, pattern="**/test_*.py")) == ["src/tests/test_main.py"]
    assert hits(await run(tool, tree, pattern="tests/*.py")) == ["src/tests/test_main.py"]
    assert (await run(tool, tree, pattern="/tests/*.py")).text() == "No files found matching '/tests/*.py'"
    assert hits(await run(tool, tree, pattern="build/")) == ["src/build/"]
    assert hits(await run(tool, tree, pattern="*.txt", path="ünïcödé")) == ["файл.txt"]


async def test_find_limit_and_errors(tmp_path, engine):
    for index in range(25):
        write(tmp_path, f"many/f{index:02d}.txt", "")
    tool = find_tool(tmp_path)
    result = await run(tool, tmp_path, pattern="*.txt", limit=10)
    assert hits(result) == [f"many/f{index:02d}.txt" for index in range(10)]
    assert result.details["limit_reached"] is True and result.details["count"] == 10
    assert result.text().endswith("\n\n[10 results limit reached. Use limit=20 or refine the pattern]")
    assert (await run(tool, tmp_path, pattern="*.md")).text() == "No files found matching '*.md'"
    with pytest.raises(NotADirectoryError, match="Not a directory: many/f00.txt"):
        await run(tool, tmp_path, pattern="*", path="many/f00.txt")
    with pytest.raises(FileNotFoundError, match="Path not found: gone"):
        await run(tool, tmp_path, pattern="*", path="gone")


async def test_find_default_limit_is_1000(tmp_path, engine):
    for index in range(1005):
        write(tmp_path, f"f{index:04d}.txt", "")
    result = await run(find_tool(tmp_path), tmp_path, pattern="*.txt")
    assert result.details["count"] == 1000 and result.details["limit_reached"]
    assert "[1000 results limit reached. Use limit=2000" in result.text()


async def test_find_abort(tree, engine):
    controller = AbortController()
    controller.abort()
    with pytest.raises(AbortError):
        await run(find_tool(tree), tree, signal=controller.signal, pattern="*")


# ----------------------------------------------------------------------------- ls


async def test_ls_lists_one_directory(tree):
    tool = create_ls_tool(create_host_environment(str(tree)))
    write(tree, "Zebra.md", "")
    write(tree, "alpha.md", "")
    result = await run(tool, tree)
    assert hits(result) == [
        ".config/", ".git/", ".gitignore", ".hidden.txt", ".ignore", "alpha.md", "app.py",
        "bin.dat", "build/", "crlf.txt", "debug.log", "docs/", "excluded.txt", "keep.log",
        "link.txt", "long.txt", "node_modules/", "secret.txt", "src/", "Zebra.md", "ünïcödé/",
    ]
    assert hits(await run(tool, tree, path="src")) == [
        ".gitignore", "build/", "debug.log", "generated.py", "main.py", "tests/",
    ]


async def test_ls_limit_empty_and_errors(tmp_path):
    tool = create_ls_tool(create_host_environment(str(tmp_path)))
    (tmp_path / "empty").mkdir()
    assert (await run(tool, tmp_path, path="empty")).text() == "(empty directory)"
    for index in range(12):
        write(tmp_path, f"many/{index:02d}", "")
    result = await run(tool, tmp_path, path="many", limit=5)
    assert hits(result) == ["00", "01", "02", "03", "04"]
    assert result.text().endswith("\n\n[5 entries limit reached. Use limit=10 for more]")
    assert result.details == {"count": 5, "truncated": False, "limit_reached": True}
    with pytest.raises(NotADirectoryError, match="Not a directory: many/00"):
        await run(tool, tmp_path, path="many/00")
    with pytest.raises(FileNotFoundError, match="Path not found: missing"):
        await run(tool, tmp_path, path="missing")
    controller = AbortController()
    controller.abort()
    with pytest.raises(AbortError):
        await run(tool, tmp_path, signal=controller.signal)


def test_tool_metadata():
    env = create_host_environment(".")
    for factory, name in ((create_grep_tool, "grep"), (create_find_tool, "find"), (create_ls_tool, "ls")):
        tool = factory(env)
        assert tool.name == name
        assert tool.description and tool.prompt_snippet and tool.prompt_guidelines
        schema = tool.json_schema()
        assert schema["type"] == "object"
    grep_schema = create_grep_tool(env).json_schema()
    assert set(grep_schema["properties"]) == {
        "pattern", "path", "glob", "ignore_case", "literal", "context", "limit",
    }
    assert grep_schema["required"] == ["pattern"]


# ----------------------------------------------------------------------------- agreement

NAMES = ["a", "b.py", "c.log", "keep.log", ".h", "build", "sub", "d.txt", "é.md", "x y", "test_z.py"]
RULES = [
    "*.log", "!keep.log", "/build", "build/", "sub/**", "**/d.txt", "*.py", "!b.py", "[ab]*",
    "?.md", "sub/", "/a", "*.{txt,md}", ".h", "!.h", "x*", "**/sub/a",
]


def random_tree(root: Path, seed: int) -> None:
    rng = random.Random(seed)
    root.mkdir()
    (root / ".git").mkdir()

    def fill(directory: Path, depth: int) -> None:
        if rng.random() < 0.5:
            rules = rng.sample(RULES, rng.randint(1, 4))
            (directory / rng.choice([".gitignore", ".gitignore", ".ignore"])).write_text("\n".join(rules) + "\n")
        for name in rng.sample(NAMES, rng.randint(2, 6)):
            path = directory / name
            if depth < 3 and rng.random() < 0.35:
                path.mkdir()
                if rng.random() < 0.1:
                    (path / ".git").mkdir()  # a nested repository stops outer .gitignore rules
                fill(path, depth + 1)
            else:
                lines = [rng.choice(["needle here", "hay", "NEEDLE", "needle needle"]) for _ in range(rng.randint(0, 5))]
                path.write_text("\n".join(lines) + ("\n" if rng.random() < 0.7 else ""))

    fill(root, 0)


@pytest.mark.skipif(not (HAVE_RG and HAVE_FD), reason="rg and fd are not installed")
@pytest.mark.parametrize("seed", range(12))
async def test_fallback_agrees_with_binaries(tmp_path, monkeypatch, seed):
    root = tmp_path / "t"
    random_tree(root, seed)
    env = create_host_environment(str(root))
    grep, find = create_grep_tool(env), create_find_tool(env)

    async def both(tool, **arguments: Any) -> tuple[ToolResult, ToolResult]:
        monkeypatch.setattr(search_fallback, "FORCE_FALLBACK", False)
        native = await run(tool, root, **arguments)
        monkeypatch.setattr(search_fallback, "FORCE_FALLBACK", True)
        fallback = await run(tool, root, **arguments)
        return native, fallback

    native, fallback = await both(find, pattern="*", limit=10_000)
    assert native.details["engine"] == "fd" and fallback.details["engine"] == "python"
    assert native.text() == fallback.text()
    for arguments in (
        {"pattern": "needle", "literal": True, "limit": 10_000},
        {"pattern": "needle", "literal": True, "limit": 3},
        {"pattern": "needle", "ignore_case": True, "glob": "*.py"},
        {"pattern": "^needle$|hay", "context": 1},
    ):
        native, fallback = await both(grep, **arguments)
        assert native.details["engine"] == "ripgrep"
        assert native.text() == fallback.text(), arguments


def test_binaries_found_on_path_only(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert search_fallback.find_ripgrep() is None
    assert search_fallback.find_fd() is None
    fake = tmp_path / "fdfind"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert search_fallback.find_fd() == str(fake)


async def test_no_binaries_on_path_uses_python(tree, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent-dir")
    result = await run(grep_tool(tree), tree, pattern="needle", glob="*.py")
    assert result.details["engine"] == "python"
    result = await run(find_tool(tree), tree, pattern="*.py")
    assert result.details["engine"] == "python"


async def test_walk_is_concurrency_safe(tree, engine):
    results = await asyncio.gather(*(run(find_tool(tree), tree, pattern="*.py") for _ in range(4)))
    assert len({r.text() for r in results}) == 1
    assert os.path.isdir(tree)
