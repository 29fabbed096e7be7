"""The rule grammar (Claude Code's spelling), the shell-line reader, and the matchers."""

from __future__ import annotations

import pytest

from wolli.permissions.bash_rules import compile_command_pattern, line_allowed, line_hits
from wolli.permissions.path_rules import Where, absolute, allows, compile_path_pattern, hits, walk_reaches
from wolli.permissions.rules import (
    Rule,
    RuleError,
    parse_rule,
    rule_applies,
    rule_warning,
    specifier_kind,
    split_rule_list,
)
from wolli.permissions.shell_words import parse_line


@pytest.mark.parametrize(("text", "tool", "specifier"), [
    ("Bash", "Bash", None),
    ("  Bash(git diff:*)  ", "Bash", "git diff:*"),
    ("Edit(src/**)", "Edit", "src/**"),
    ("Read(~/.ssh/**)", "Read", "~/.ssh/**"),
    ("mcp__github__get_issue", "mcp__github__get_issue", None),
    ("mcp__github", "mcp__github", None),
    ("Bash(echo (a))", "Bash", "echo (a)"),
    ("bash(ls *)", "bash", "ls *"),
])
def test_rules_parse(text, tool, specifier):
    rule = parse_rule(text)
    assert (rule.tool, rule.specifier) == (tool, specifier)
    assert parse_rule(str(rule)) == rule


@pytest.mark.parametrize(("text", "says"), [
    ("", "empty rule"),
    ("Bash(", "not closed"),
    ("Bash()", "empty parentheses"),
    ("(ls)", "tool name is missing"),
    ("Ba sh", "not a tool name"),
    ("mcp__github__x(foo)", "MCP rules name tools only"),
    ("Bash(a\nb)", "one line"),
])
def test_bad_rules_say_what_is_wrong(text, says):
    with pytest.raises(RuleError, match=says):
        parse_rule(text)


def test_tool_names_map_onto_wolli_tools():
    assert rule_applies(Rule("Edit"), "write") and rule_applies(Rule("Edit"), "edit")
    assert rule_applies(Rule("Write"), "write") and not rule_applies(Rule("Write"), "edit")
    assert all(rule_applies(Rule("Read"), t) for t in ("read", "grep", "find", "ls"))
    assert rule_applies(Rule("edit"), "edit") and not rule_applies(Rule("edit"), "write")
    assert rule_applies(Rule("Glob"), "find") and rule_applies(Rule("LS"), "ls")
    assert rule_applies(Rule("mcp__gh"), "mcp__gh__issue") and rule_applies(Rule("mcp__gh__*"), "mcp__gh__issue")
    assert not rule_applies(Rule("mcp__gh"), "mcp__ghx__issue")
    assert not rule_applies(Rule("mcp__gh__issue"), "mcp__gh__issues")
    assert rule_applies(Rule("todo"), "todo") and not rule_applies(Rule("todo"), "todos")


def test_rules_that_can_never_match_are_warned_about():
    assert "no WebFetch tool" in rule_warning(parse_rule("WebFetch(domain:example.com)"))
    assert "take a pattern" in rule_warning(parse_rule("todo(x)"))
    assert rule_warning(parse_rule("Bash(ls)")) is None
    assert specifier_kind(parse_rule("Read(*)")) == "none"


def test_a_rule_list_splits_on_commas_and_spaces_outside_parentheses():
    assert split_rule_list("Bash(git diff:*),Read  Edit(src/**), Bash(git log -n 5)") == [
        "Bash(git diff:*)", "Read", "Edit(src/**)", "Bash(git log -n 5)"]


# ---------------------------------------------------------------------------- shell lines


@pytest.mark.parametrize(("line", "commands"), [
    ("git diff --stat", ["git diff --stat"]),
    ("git diff && rm -rf x; ls | wc -l & sleep 1", ["git diff", "rm -rf x", "ls", "wc -l", "sleep 1"]),
    ('echo "a; b && c" | cat', ['echo "a; b && c"', "cat"]),
    ("find . -exec rm {} \\;", ["find . -exec rm {} \\;"]),
    ("cat <<EOF\nrm -rf /\nEOF\nls", ["cat", "ls"]),
    ("git log --format=%H # a comment", ["git log --format=%H"]),
    ("a \\\n b", ["a b"]),
])
def test_a_line_is_split_into_its_simple_commands(line, commands):
    assert [c.raw for c in parse_line(line).commands] == commands


@pytest.mark.parametrize(("line", "reason"), [
    ("echo $(rm -rf /)", "command substitution"),
    ("echo `id`", "command substitution"),
    ('echo "$(id)"', "command substitution"),
    ("diff <(ls a) <(ls b)", "process substitution"),
    ("(cd a && make)", "subshell"),
    ("for f in *; do rm $f; done", "keyword"),
    ("echo 'unclosed", "unclosed"),
])
def test_lines_no_pattern_can_vouch_for_are_opaque(line, reason):
    parsed = parse_line(line)
    assert parsed.opaque and any(reason in r for r in parsed.opaque_reasons)


def test_redirections_into_files_are_seen():
    assert parse_line("ls > out.txt").commands[0].writes_file
    assert parse_line("ls >> log 2>&1").commands[0].writes_file
    assert parse_line("ls &> all").commands[0].writes_file
    assert not parse_line("ls 2>/dev/null").commands[0].writes_file
    assert not parse_line("ls 2>&1 | cat").commands[0].writes_file
    assert not parse_line("cat < in.txt").commands[0].writes_file


# ---------------------------------------------------------------------------- bash patterns


def _allowed(line: str, *specs: str) -> bool:
    return line_allowed(line, [compile_command_pattern(s) for s in specs]) is not None


def _hit(line: str, *specs: str) -> bool:
    return line_hits(line, [compile_command_pattern(s) for s in specs]) is not None


def test_prefix_patterns_match_the_prefix_and_its_arguments_only():
    assert _allowed("git diff", "git diff:*") and _allowed("git diff --stat HEAD", "git diff:*")
    assert not _allowed("git diffx", "git diff:*") and not _allowed("git", "git diff:*")
    assert _allowed("ls -la", "ls *") and _allowed("ls", "ls *") and not _allowed("lsof", "ls *")
    assert _allowed("lsof -i", "ls*")
    assert _allowed("git log main", "git * main") and not _allowed("git log dev", "git * main")
    assert _allowed("anything at all", "*") and _allowed("npm test", "npm test")
    assert not _allowed("npm test --watch", "npm test")


def test_every_part_of_a_line_must_be_allowed():
    assert _allowed("git diff && git status", "git diff:*", "git status")
    assert not _allowed("git diff && rm -rf /", "git diff:*")
    assert not _allowed("git diff\nrm -rf /", "git diff:*")
    assert not _allowed("git diff | sh", "git diff:*")


def test_opaque_lines_and_file_redirections_need_an_exact_rule():
    assert not _allowed("git diff $(rm -rf /)", "git diff:*")
    assert not _allowed("git diff > ~/.bashrc", "git diff:*")
    assert _allowed("git diff > out.patch", "git diff > out.patch")
    assert not _allowed("git diff > out.patch ", "git diff > out.patchx")
    assert _allowed("for f in a b; do echo $f; done", "for f in a b; do echo $f; done")


def test_harmless_wrappers_are_looked_through_for_allowing_but_sudo_is_not():
    assert _allowed("timeout 5 git status", "git status")
    assert _allowed("nice -n 5 nohup git status", "git status")
    assert not _allowed("sudo git status", "git status")
    assert not _allowed("env X=1 git status", "git status")


def test_star_can_be_escaped_in_a_pattern():
    assert _allowed("ls *.py", "ls \\*.py") and not _allowed("ls a.py", "ls \\*.py")
    assert _allowed("ls a.py", "ls *.py")


def test_deny_patterns_look_everywhere():
    for line in ("rm -rf build", "cd x && rm -rf build", "sudo rm -rf build", "/bin/rm -rf build",
                 "echo $(rm -rf build)", "echo `rm -rf build`", "bash -c 'rm -rf build'", "sh -lc \"rm -rf build\"",
                 "eval rm -rf build", "xargs -n1 rm -rf build", "env A=1 rm -rf build", "X=1 rm -rf build",
                 "timeout -s KILL 5 rm -rf build", "if true; then rm -rf build; fi", "'rm' -rf build"):
        assert _hit(line, "rm -rf:*"), line
    assert not _hit("echo rm -rf", "rm -rf:*")
    assert not _hit("rmdir x", "rm:*")


def test_deny_patterns_see_what_find_runs():
    # ``find -exec`` runs a command of its own, like xargs; a deny rule missed it.
    for line in ("find . -exec rm -rf {} \\;", "find . -name '*.o' -execdir sudo rm -rf {} +",
                 "find . -ok sh -c 'rm -rf build' \\; -print", "find / -exec ls {} \\; -exec rm -rf {} +"):
        assert _hit(line, "rm -rf:*"), line
    assert not _hit("find . -name rm -print", "rm:*")
    assert not _hit("find . -exec", "rm:*")


# ---------------------------------------------------------------------------- paths


def test_path_patterns_are_anchored_like_claude_codes(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    where = Where(str(project), str(project), str(home))

    def match(spec: str, path: str) -> bool:
        return compile_path_pattern(spec, where).matches(path)

    assert match("src/**", f"{project}/src/a/b.py") and not match("src/**", f"{project}/lib/a.py")
    assert match("/src/*.py", f"{project}/src/a.py") and not match("/src/*.py", f"{project}/src/x/a.py")
    assert match("~/.ssh/**", f"{home}/.ssh/id_rsa") and match("~/.ssh", f"{home}/.ssh/id_rsa")
    assert match("//etc/passwd", "/etc/passwd") and not match("//etc/passwd", "/etc/passwd2")
    assert match(".env", f"{project}/.env") and match(".env", f"{project}/deep/er/.env")
    assert not match(".env", f"{home}/.env")
    assert match("secrets", f"{project}/secrets/key.pem")
    assert match("*.md", f"{project}/docs/a.md") and match("docs/", f"{project}/docs/a.md")
    assert match("{a,b}.txt", f"{project}/a.txt") and not match("?.txt", f"{project}/ab.txt")


def test_links_count_against_deny_and_for_allow(tmp_path):
    project, secret = tmp_path / "project", tmp_path / "secret"
    (project / "src").mkdir(parents=True)
    secret.mkdir()
    (secret / "key").write_text("k")
    (project / "src" / "link").symlink_to(secret / "key")
    where = Where(str(project), str(project), str(tmp_path))
    allow = compile_path_pattern("src/**", where)
    deny = compile_path_pattern(f"/{secret}/**", where)
    through_link = absolute("src/link", str(project))
    assert not allows(allow, through_link)  # the link leaves the allowed folder
    assert hits(deny, through_link)  # and the deny rule sees where it goes
    assert allows(allow, absolute("src/../src/real.py", str(project)))


def test_a_search_from_above_a_denied_folder_reaches_it(tmp_path):
    where = Where(str(tmp_path / "p"), str(tmp_path / "p"), str(tmp_path / "home"))
    ssh = compile_path_pattern("~/.ssh/**", where)
    assert walk_reaches(ssh, str(tmp_path / "home")) and walk_reaches(ssh, str(tmp_path))
    assert not walk_reaches(ssh, str(tmp_path / "p"))
    assert not walk_reaches(compile_path_pattern(".env", where), str(tmp_path / "p"))  # any depth: not stopped


def test_a_very_long_line_is_judged_quickly_and_never_allowed_by_a_pattern():
    import time

    line = "echo a; " * 100_000 + "sudo rm -rf /"
    start = time.perf_counter()
    assert _hit(line, "rm -rf:*")  # the words of a deny pattern anywhere in it
    assert not _allowed("echo a; " * 100_000, "echo:*")
    assert time.perf_counter() - start < 30  # a safety net against a hang, not a timing goal
