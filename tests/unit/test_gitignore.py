"""The pure-Python gitignore matcher used by the grep/find fallbacks."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from wolli.tools.gitignore import (
    GitignoreMatcher,
    IgnoreFile,
    IgnoreGlobals,
    IgnoreLayer,
    compile_path_glob,
    is_ignored,
    parse_rule,
    translate_glob,
)


def matcher(**files: str) -> GitignoreMatcher:
    """``matcher(root="*.log", sub="!a.log")``: .gitignore texts by directory (root = "")."""
    m = GitignoreMatcher()
    for directory, text in sorted(files.items(), key=lambda item: item[0] != "root"):
        m.add("" if directory == "root" else directory.replace("__", "/"), text)
    return m


# ----------------------------------------------------------------------------- parsing


def test_blank_lines_and_comments_are_not_rules():
    assert parse_rule("") is None
    assert parse_rule("   ") is None
    assert parse_rule("# a comment") is None


def test_escaped_hash_and_bang_are_literal():
    m = matcher(root="\\#notes\n\\!important\n")
    assert m.ignored("#notes")
    assert m.ignored("!important")
    assert not m.ignored("important")


def test_trailing_spaces_are_dropped_unless_escaped():
    m = matcher(root="a.txt   \nb\\ \n")
    assert m.ignored("a.txt")
    assert m.ignored("b ")
    assert not m.ignored("b")


def test_rule_flags():
    rule = parse_rule("!/build/")
    assert rule is not None and rule.negated and rule.dir_only


# ----------------------------------------------------------------------------- matching


def test_name_pattern_matches_at_any_depth():
    m = matcher(root="*.log\n")
    assert m.ignored("debug.log")
    assert m.ignored("a/b/c/trace.log")
    assert not m.ignored("debug.log.txt")
    assert not m.ignored("logs/readme")


def test_star_does_not_cross_directories():
    m = matcher(root="a*b\n")
    assert m.ignored("axxb")
    assert not m.ignored("a/b")


def test_leading_slash_anchors_to_the_ignore_file_directory():
    m = matcher(root="/build\n")
    assert m.ignored("build", is_dir=True)
    assert m.ignored("build/out.o")  # inside an ignored directory
    assert not m.ignored("src/build", is_dir=True)


def test_middle_slash_anchors_too():
    m = matcher(root="doc/*.txt\n")
    assert m.ignored("doc/a.txt")
    assert not m.ignored("doc/sub/a.txt")
    assert not m.ignored("x/doc/a.txt")


def test_trailing_slash_matches_directories_only():
    m = matcher(root="cache/\n")
    assert m.ignored("cache", is_dir=True)
    assert m.ignored("deep/cache", is_dir=True)
    assert m.ignored("cache/file")
    assert not m.ignored("cache")  # a file named cache


def test_double_star_forms():
    m = matcher(root="**/tmp\na/**/z\nout/**\n")
    assert m.ignored("tmp") and m.ignored("x/y/tmp")
    assert m.ignored("a/z") and m.ignored("a/b/c/z")
    assert not m.ignored("b/a/z")
    assert m.ignored("out/x") and m.ignored("out/x/y")
    assert not m.ignored("out", is_dir=True)


def test_negation_last_rule_wins():
    m = matcher(root="*.log\n!keep.log\n")
    assert m.ignored("a.log")
    assert not m.ignored("keep.log")
    assert not m.ignored("sub/keep.log")
    m = matcher(root="!keep.log\n*.log\n")
    assert m.ignored("keep.log")


def test_file_inside_ignored_directory_cannot_be_reincluded():
    m = matcher(root="build/\n!build/keep.txt\n")
    assert m.ignored("build/keep.txt")


def test_nested_gitignore_is_relative_and_overrides_parent():
    m = matcher(root="*.log\n", sub="!important.log\n/local.txt\n")
    assert m.ignored("sub/other.log")
    assert not m.ignored("sub/important.log")
    assert m.ignored("important.log")
    assert m.ignored("sub/local.txt")
    assert not m.ignored("local.txt")
    assert not m.ignored("sub/deeper/local.txt")


def test_classes_and_question_mark():
    m = matcher(root="[ab]?.txt\nfile[!0-9]\n")
    assert m.ignored("ax.txt") and m.ignored("by.txt")
    assert not m.ignored("cx.txt") and not m.ignored("a.txt")
    assert m.ignored("filex")
    assert not m.ignored("file1")


def test_braces_like_ripgrep():
    m = matcher(root="*.{pyc,pyo}\n")
    assert m.ignored("a.pyc") and m.ignored("b/c.pyo")
    assert not m.ignored("a.py")


def test_question_mark_and_classes_match_one_byte_like_globset():
    m = matcher(root="?.md\n??.txt\n")
    assert m.ignored("a.md")
    assert not m.ignored("é.md")  # é is two bytes in UTF-8
    assert m.ignored("é.txt")
    m = matcher(root="café\n")
    assert m.ignored("café") and not m.ignored("cafe")


def test_matching_is_case_sensitive():
    m = matcher(root="*.LOG\n")
    assert m.ignored("A.LOG")
    assert not m.ignored("a.log")


def test_unclosed_class_and_brace_are_literal():
    m = matcher(root="a[b\nc{d\n")
    assert m.ignored("a[b")
    assert m.ignored("c{d")


# ----------------------------------------------------------------------------- layers


def _file(root: str, text: str) -> IgnoreFile:
    return IgnoreFile.parse(root, text)


def test_git_rules_need_a_repository_but_ignore_files_do_not():
    outside = IgnoreLayer("/t", git=_file("/t", "a.txt\n"), dot=_file("/t", "b.txt\n"))
    assert not is_ignored(outside, "/t/a.txt", False)
    assert is_ignored(outside, "/t/b.txt", False)
    inside = IgnoreLayer("/t", git=_file("/t", "a.txt\n"), has_git=True)
    assert is_ignored(inside, "/t/a.txt", False)


def test_gitignore_above_the_repository_root_does_not_apply():
    outer = IgnoreLayer("/w", git=_file("/w", "*.log\n"), dot=_file("/w", "*.tmp\n"))
    repo = IgnoreLayer("/w/repo", parent=outer, has_git=True)
    assert not is_ignored(repo, "/w/repo/a.log", False)
    assert is_ignored(repo, "/w/repo/a.tmp", False)  # .ignore files reach further


def test_precedence_custom_over_dot_over_git():
    layer = IgnoreLayer(
        "/r",
        has_git=True,
        git=_file("/r", "*.txt\n"),
        dot=_file("/r", "!a.txt\n"),
        custom=_file("/r", "a.txt\n"),
    )
    assert is_ignored(layer, "/r/a.txt", False)  # custom says ignore
    layer.custom = None
    assert not is_ignored(layer, "/r/a.txt", False)  # .ignore re-includes
    assert is_ignored(layer, "/r/b.txt", False)


def test_deepest_directory_decides_within_one_kind():
    root = IgnoreLayer("/r", has_git=True, git=_file("/r", "!x.txt\n"))
    sub = IgnoreLayer("/r/s", parent=root, git=_file("/r/s", "x.txt\n"))
    assert is_ignored(sub, "/r/s/x.txt", False)
    root = IgnoreLayer("/r", has_git=True, git=_file("/r", "x.txt\n"))
    sub = IgnoreLayer("/r/s", parent=root, git=_file("/r/s", "!x.txt\n"))
    assert not is_ignored(sub, "/r/s/x.txt", False)


def test_exclude_and_global_rank_below_gitignore():
    layer = IgnoreLayer(
        "/r", has_git=True, git=_file("/r", "!a\n"), exclude=_file("/r", "a\nb\n")
    )
    globals_ = IgnoreGlobals(git_global=_file("/r", "c\n"), explicit=[_file("/r", "d\n")])
    assert not is_ignored(layer, "/r/a", False, globals_)
    assert is_ignored(layer, "/r/b", False, globals_)
    assert is_ignored(layer, "/r/c", False, globals_)
    assert is_ignored(layer, "/r/d", False, globals_)
    outside = IgnoreLayer("/o", dot=_file("/o", "zzz\n"))
    globals_ = IgnoreGlobals(git_global=_file("/o", "c\n"), explicit=[_file("/o", "d\n")])
    assert not is_ignored(outside, "/o/c", False, globals_)  # global git rules need a repo
    assert is_ignored(outside, "/o/d", False, globals_)  # explicit files always apply


# ----------------------------------------------------------------------------- tool globs


@pytest.mark.parametrize(
    ("pattern", "path", "is_dir", "expected"),
    [
        ("*.py", "a.py", False, True),
        ("*.py", "src/deep/a.py", False, True),
        ("*.py", "a.pyc", False, False),
        ("**/test_*.py", "test_a.py", False, True),
        ("**/test_*.py", "tests/unit/test_a.py", False, True),
        ("**/test_*.py", "tests/unit/a_test.py", False, False),
        ("src/*.py", "src/a.py", False, True),
        ("src/*.py", "pkg/src/a.py", False, True),
        ("src/*.py", "src/x/a.py", False, False),
        ("/src/*.py", "pkg/src/a.py", False, False),
        ("/src/*.py", "src/a.py", False, True),
        ("src/**/*.ts", "src/a/b/c.ts", False, True),
        ("src/**/*.ts", "src/c.ts", False, True),
        ("docs/", "docs", True, True),
        ("docs/", "docs", False, False),
        ("*.{md,txt}", "a/readme.md", False, True),
        ("*.{md,txt}", "a/readme.rst", False, False),
        ("Makefile", "sub/Makefile", False, True),
        ("?.txt", "a.txt", False, True),
        ("?.txt", "ab.txt", False, False),
        ("**", "any/thing", False, True),
    ],
)
def test_path_glob(pattern, path, is_dir, expected):
    assert compile_path_glob(pattern)(path, is_dir) is expected


def test_empty_glob_is_an_error():
    with pytest.raises(ValueError, match="empty"):
        compile_path_glob("  ")


def test_translate_glob_regex_specials_are_literal():
    import re

    assert re.fullmatch(translate_glob("a+b(c).txt"), "a+b(c).txt")
    assert not re.fullmatch(translate_glob("a+b(c).txt"), "aab(c)xtxt")


# ----------------------------------------------------------------------------- git as oracle


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_agrees_with_git_check_ignore(tmp_path):
    """For the patterns git and ripgrep share, ask git itself."""
    rules = {
        "": "*.log\n!keep.log\n/build/\ndoc/*.txt\n**/cache\nout/**\n[ab]?.md\nsp\\ ace\n",
        "sub": "!x.log\n/local\n*.tmp\n",
        "sub/deep": "!*.tmp\n",
    }
    paths = [
        "a.log", "keep.log", "sub/x.log", "sub/y.log", "build/o", "sub/build/o", "doc/a.txt",
        "doc/s/a.txt", "x/doc/a.txt", "cache/f", "q/cache/f", "out/f", "out/g/h", "ax.md",
        "cx.md", "sp ace", "sub/local", "local", "sub/deep/local", "sub/a.tmp", "sub/deep/a.tmp",
        "a.tmp", "plain.txt",
    ]
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    m = GitignoreMatcher()
    for directory, text in rules.items():
        (tmp_path / directory).mkdir(parents=True, exist_ok=True)
        (tmp_path / directory / ".gitignore").write_text(text)
        m.add(directory, text)
    for path in paths:
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("x")
    run = subprocess.run(
        ["git", "-C", str(tmp_path), "check-ignore", "--stdin"],
        input="\n".join(paths) + "\n", capture_output=True, text=True,
    )
    git_ignored = set(run.stdout.split("\n")) - {""}
    ours = {path for path in paths if m.ignored(path)}
    assert ours == git_ignored
