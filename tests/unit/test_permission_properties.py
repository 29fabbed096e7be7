"""Property tests: a narrow rule never allows a wider call.

The shell properties use bash itself as the judge: the line is run with an empty PATH and a
``command_not_found_handle`` that logs the name of every program bash tries to start, in an
empty folder. If an allow rule for ``pp sub:*`` says yes to a line, bash must start no other
program than ``pp`` and create no file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from wolli.permissions.bash_rules import compile_command_pattern, line_allowed, line_hits
from wolli.permissions.path_rules import Where, absolute, allows, compile_path_pattern
from wolli.permissions.policy import Context, RuleSet, SourcedRule, ToolFacts, evaluate
from wolli.permissions.rules import parse_rule
from wolli.permissions.shell_words import parse_line
from wolli.permissions.suggest import suggest_rules

BASH = shutil.which("bash")
PREFIX = compile_command_pattern("pp sub:*")
HANDLER = 'command_not_found_handle() { printf "%s\\n" "$1" >> "$WOLLI_LOG"; return 127; }\n'

PIECES = ["zz", "yy", "pp", "sub", " ", " ", "  ", ";", "&&", "||", "|", "&", "\n", "'", '"', "$(", ")", "`",
          ">", ">>", "<", "2>&1", "(", "{", "}", "\\", "#", "$", "*", "=", "zz=1 ", "-x", "/dev/null", "out"]


def _bash_runs(line: str, folder: Path) -> tuple[set[str], list[str]]:
    """(programs bash tried to start, files it created) when running ``line`` in ``folder``."""
    log = folder.parent / f"{folder.name}.log"
    log.unlink(missing_ok=True)
    env = {"PATH": "/nonexistent", "WOLLI_LOG": str(log), "HOME": str(folder)}
    script = HANDLER + 'eval "$1"\nwait\n'
    subprocess.run([BASH, "--norc", "--noprofile", "-c", script, "bash", line], cwd=folder, env=env,
                   capture_output=True, timeout=10, stdin=subprocess.DEVNULL)
    started = set(log.read_text().split()) if log.exists() else set()
    return started, sorted(os.listdir(folder))


@pytest.mark.skipif(BASH is None, reason="needs bash as the judge")
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), max_size=12))
def test_a_prefix_rule_never_lets_another_program_run(pieces):
    line = "pp sub " + "".join(pieces)
    if line_allowed(line, [PREFIX]) is None:
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "work"
        folder.mkdir()
        started, created = _bash_runs(line, folder)
    assert started <= {"pp"}, (line, started)
    assert created == [], (line, created)


WORDS = st.sampled_from(["pp", "sub", "zz", "-v", "file.txt", "'a b'", '"c d"'])
OPERATORS = st.sampled_from([";", "&&", "||", "|", "&", "\n"])


@st.composite
def command_lines(draw):
    """Lines of simple commands joined by operators, some with a substitution or a redirection,
    and whether a ``pp sub:*`` rule should allow them."""
    count = draw(st.integers(1, 4))
    parts, allowed = [], True
    for index in range(count):
        words = draw(st.lists(WORDS, min_size=1, max_size=4))
        if not (len(words) >= 2 and words[:2] == ["pp", "sub"]):
            allowed = False
        if draw(st.booleans()) and draw(st.booleans()):
            words.append(draw(st.sampled_from(["$(zz)", "`zz`", "> out", ">> out", "<(zz)"])))
            allowed = False
        parts.append(" ".join(words))
        if index < count - 1:
            parts.append(f" {draw(OPERATORS)} ")
    return "".join(parts), allowed


@settings(max_examples=400, deadline=None)
@given(command_lines())
def test_prefix_rules_allow_exactly_the_lines_made_of_their_commands(case):
    line, expected = case
    assert (line_allowed(line, [PREFIX]) is not None) == expected, line


CONTEXTS = ["{} ; true", "true && {}", "sudo {}", "env A=1 {}", "timeout 5 {}", "echo $({})", "echo `{}`",
            "bash -c '{}'", "sh -c \"{}\"", "xargs {}", "nohup {} &", "if true; then {}; fi", "/usr/bin/{}"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(CONTEXTS), min_size=1, max_size=3))
def test_a_deny_rule_finds_its_command_however_it_is_wrapped(contexts):
    line = "rm -rf build"
    for context in contexts:
        if any(mark in context and mark in line for mark in ("'", '"', "`")):
            continue  # quotes (and backticks) of the same kind do not nest
        line = context.replace("{}", line)
    assert line_hits(line, [compile_command_pattern("rm:*")]) is not None, line


SEGMENTS = st.sampled_from(["src", "lib", "..", ".", "a", "b c", "out", "deep"])


@pytest.fixture(scope="module")
def tree():
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        project = root / "project"
        (project / "src" / "a").mkdir(parents=True)
        (project / "lib").mkdir()
        (root / "outside").mkdir()
        (project / "src" / "out").symlink_to(root / "outside")  # a way out of src/
        (project / "src" / "deep").symlink_to(project / "src" / "a")  # a way that stays inside
        yield project


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(SEGMENTS, min_size=1, max_size=6), st.booleans())
def test_a_path_rule_never_allows_a_path_outside_its_folder(tree, segments, absolute_form):
    where = Where(str(tree), str(tree), str(tree.parent / "home"))
    pattern = compile_path_pattern("src/**", where)
    given_path = "/".join(segments)
    if absolute_form:
        given_path = str(tree / given_path)
    path = absolute(given_path, str(tree))
    if allows(pattern, path):
        resolved = os.path.realpath(path)
        assert resolved.startswith(str(tree / "src") + os.sep) or resolved == str(tree / "src"), (given_path, resolved)


PLAIN = st.sampled_from(["git", "npm", "run", "test", "diff", "status", "-q", "--stat", "src/a.py", "pytest", "make",
                         "ls", "x=1"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(PLAIN, min_size=1, max_size=5), min_size=1, max_size=3), OPERATORS)
def test_the_suggested_rules_cover_the_call_they_were_made_for(commands, operator):
    line = f" {operator} ".join(" ".join(words) for words in commands)
    assume(not parse_line(line).opaque)
    where = Where("/p", "/p", "/home/u")
    rules = RuleSet(SourcedRule(parse_rule(r), "allow", "project") for r in suggest_rules("bash", {"command": line}, where))
    decision = evaluate(ToolFacts("bash"), {"command": line}, rules, Context("default", where))
    assert decision.outcome == "allow", (line, [str(r.rule) for r in rules.all])


@settings(max_examples=200, deadline=None)
@given(st.lists(SEGMENTS, min_size=1, max_size=4), st.sampled_from(["edit", "write", "read"]))
def test_a_suggested_path_rule_covers_its_path_and_no_sibling(segments, tool):
    where = Where("/p/q", "/p/q", "/home/u")
    path = "/".join(segments)
    [rule] = suggest_rules(tool, {"path": path}, where)
    rules = RuleSet([SourcedRule(parse_rule(rule), "allow", "project")])
    target = absolute(path, where.cwd)
    assert evaluate(ToolFacts(tool), {"path": path}, rules, Context("default", where)).outcome == "allow"
    assume(target != "/")  # the root folder has no sibling
    sibling = target + "x"
    assert not allows(compile_path_pattern(parse_rule(rule).specifier or "", where), sibling)
