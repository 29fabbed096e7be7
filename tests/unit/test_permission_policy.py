"""The decision for one call: modes, rule kinds and their order, the store of rules."""

from __future__ import annotations

import json

import pytest

from wolli.config.settings import Settings
from wolli.permissions.modes import ModeError, next_mode, parse_mode
from wolli.permissions.path_rules import Where
from wolli.permissions.policy import Context, Decision, RuleSet, SourcedRule, ToolFacts, evaluate
from wolli.permissions.rules import parse_rule
from wolli.permissions.store import PermissionStore, find_project_root


@pytest.fixture
def where(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    return Where(str(project), str(project), str(tmp_path / "home"))


def rules(**kinds: list[str]) -> RuleSet:
    return RuleSet(SourcedRule(parse_rule(text), kind, "user") for kind, texts in kinds.items() for text in texts)


def decide(where, mode, name, arguments, ruleset=None, **facts) -> str:
    return evaluate(ToolFacts(name, facts.get("read_only", False)), arguments, ruleset or rules(),
                    Context(mode, where, bash_auto_allow=facts.get("auto", False),
                            bash_fallback=facts.get("fallback"))).outcome


CALLS = {
    "read inside": ("read", {"path": "a.py"}),
    "read outside": ("read", {"path": "/etc/hosts"}),
    "grep here": ("grep", {"pattern": "x"}),
    "edit inside": ("edit", {"path": "a.py"}),
    "write outside": ("write", {"path": "/tmp/elsewhere.txt"}),
    "bash": ("bash", {"command": "ls"}),
    "extension tool": ("todo", {}),
}
EXPECTED = {  # mode -> call -> outcome (docs/permissions.md, "Modes")
    "default": {"read inside": "allow", "read outside": "ask", "grep here": "allow", "edit inside": "ask",
                "write outside": "ask", "bash": "ask", "extension tool": "ask"},
    "accept-edits": {"read inside": "allow", "read outside": "ask", "grep here": "allow", "edit inside": "allow",
                     "write outside": "ask", "bash": "ask", "extension tool": "ask"},
    "plan": {"read inside": "allow", "read outside": "ask", "grep here": "allow", "edit inside": "deny",
             "write outside": "deny", "bash": "deny", "extension tool": "deny"},
    "yolo": {call: "allow" for call in CALLS},
}


@pytest.mark.parametrize("mode", list(EXPECTED))
def test_each_mode_decides_each_kind_of_call(where, mode):
    got = {call: decide(where, mode, *CALLS[call]) for call in CALLS}
    assert got == EXPECTED[mode]


def test_read_only_tools_run_in_every_mode_even_plan(where):
    assert {decide(where, m, "lookup", {}, read_only=True) for m in EXPECTED} == {"allow"}
    assert decide(where, "plan", "bash", {"command": "ls"}, read_only=True) == "deny"  # bash cannot claim it


def test_deny_beats_ask_beats_allow_in_every_mode(where):
    ruleset = rules(allow=["Bash", "Edit"], ask=["Bash(git push:*)"], deny=["Bash(rm:*)", "Edit(secrets/**)"])
    for mode in ("default", "accept-edits", "yolo"):
        assert decide(where, mode, "bash", {"command": "git status"}, ruleset) == "allow"
        assert decide(where, mode, "bash", {"command": "git push origin"}, ruleset) == "ask"
        assert decide(where, mode, "bash", {"command": "git status && rm -rf x"}, ruleset) == "deny"
        assert decide(where, mode, "edit", {"path": "secrets/key"}, ruleset) == "deny"
        assert decide(where, mode, "edit", {"path": "src/a.py"}, ruleset) == "allow"


def test_path_rules_with_dot_dot_meet_the_folded_paths_tools_use(where):
    # A deny rule reaching out of the working directory (``..``) was never hit: tool paths
    # are folded (``/work/secrets/key``), the pattern was not (``/work/project/../secrets``).
    ruleset = rules(deny=["Read(../secrets/**)", "Edit(src/../keep.txt)", "Read(//etc/./ssl/../hosts)"])
    assert decide(where, "yolo", "read", {"path": "../secrets/key"}, ruleset) == "deny"
    assert decide(where, "yolo", "read", {"path": where.cwd + "/../secrets/key"}, ruleset) == "deny"
    assert decide(where, "yolo", "write", {"path": "keep.txt"}, ruleset) == "deny"
    assert decide(where, "yolo", "read", {"path": "/etc/hosts"}, ruleset) == "deny"
    assert decide(where, "yolo", "read", {"path": "../other/key"}, ruleset) == "allow"
    allowed = rules(allow=["Edit(./lib/../src/**)"])
    assert decide(where, "default", "edit", {"path": "src/a.py"}, allowed) == "allow"


def test_plan_mode_is_not_lifted_by_allow_rules_or_extensions(where):
    ruleset = rules(allow=["Bash", "Edit"])
    assert decide(where, "plan", "edit", {"path": "a.py"}, ruleset) == "deny"
    outcome = evaluate(ToolFacts("bash"), {"command": "ls"}, ruleset, Context("plan", where), vouched=True)
    assert outcome.outcome == "deny" and "plan mode" in outcome.reason


def test_an_extension_vouching_skips_the_question_but_not_an_ask_rule(where):
    assert evaluate(ToolFacts("bash"), {"command": "ls"}, rules(), Context("default", where),
                    vouched=True).outcome == "allow"
    assert evaluate(ToolFacts("bash"), {"command": "git push"}, rules(ask=["Bash(git push:*)"]),
                    Context("default", where), vouched=True).outcome == "ask"


def test_a_denial_names_the_rule_and_where_it_came_from(where):
    decision = evaluate(ToolFacts("read"), {"path": "~/.ssh/id_rsa"},
                        RuleSet([SourcedRule(parse_rule("Read(~/.ssh/**)"), "deny", "user", "/x/settings.json")]),
                        Context("yolo", Where.here(where.cwd)))
    assert decision.outcome == "deny" and "Read(~/.ssh/**)" in decision.reason and "/x/settings.json" in decision.reason


def test_the_sandbox_settles_shell_commands(where):
    assert decide(where, "default", "bash", {"command": "make"}, auto=True) == "allow"
    refuse = Decision("deny", "sandbox unavailable")
    assert decide(where, "yolo", "bash", {"command": "make"}, rules(allow=["Bash"]), fallback=refuse) == "deny"
    ask = Decision("ask", "sandbox unavailable")
    assert decide(where, "yolo", "bash", {"command": "make"}, rules(allow=["Bash"]), fallback=ask) == "ask"
    assert decide(where, "yolo", "bash", {"command": "rm x"}, rules(deny=["Bash(rm:*)"]), fallback=ask) == "deny"


def test_additional_directories_count_as_the_project(where, tmp_path):
    extra = tmp_path / "shared"
    extra.mkdir()
    context = Context("accept-edits", where, (str(extra),))
    assert evaluate(ToolFacts("edit"), {"path": str(extra / "x")}, rules(), context).outcome == "allow"
    assert evaluate(ToolFacts("read"), {"path": str(extra / "x")}, rules(), context).outcome == "allow"


def test_modes_parse_with_claude_codes_names_and_cycle():
    assert parse_mode("acceptEdits") == "accept-edits" and parse_mode("bypassPermissions") == "yolo"
    assert parse_mode(" PLAN ") == "plan"
    with pytest.raises(ModeError, match="default, accept-edits, plan, yolo"):
        parse_mode("careful")
    assert [next_mode(m) for m in ("default", "accept-edits", "plan")] == ["accept-edits", "plan", "default"]
    assert next_mode("plan", with_yolo=True) == "yolo" and next_mode("yolo") == "default"


# ---------------------------------------------------------------------------- the store


def _store(wolli_home, project, **cli):
    settings = Settings("default")
    return PermissionStore(settings, wolli_home / "agents" / "default", str(project), **cli), settings


def test_rules_from_every_source_add_up(wolli_home, tmp_path):
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    (wolli_home / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Read(~/.ssh/**)"]}}))
    agent = wolli_home / "agents" / "default"
    agent.mkdir(parents=True)
    (agent / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash(git diff:*)"],
                                                                     "deny": ["Bash(rm:*)"]}}))
    store, _ = _store(wolli_home, project, cli_allow=["Edit(src/**),Read"], cli_deny=["Bash(curl:*)"])
    store.add("ask", "Bash(git push:*)")
    loaded = store.load()
    got = {(r.kind, str(r.rule), r.source) for r in loaded.rules.all}
    assert got == {("deny", "Bash(curl:*)", "cli"), ("allow", "Edit(src/**)", "cli"), ("allow", "Read", "cli"),
                   ("ask", "Bash(git push:*)", "project"), ("allow", "Bash(git diff:*)", "user"),
                   ("deny", "Bash(rm:*)", "user"), ("deny", "Read(~/.ssh/**)", "global")}
    assert store.project_path.parent == agent / "permissions"
    assert oct(store.project_path.stat().st_mode & 0o777) == "0o600"


def test_a_shared_project_file_narrows_until_its_allow_rules_are_approved(wolli_home, tmp_path):
    project = tmp_path / "repo"
    (project / ".wolli").mkdir(parents=True)
    shared = project / ".wolli" / "settings.json"
    shared.write_text(json.dumps({"permissions": {"allow": ["Bash"], "deny": ["Edit(/vendor/**)"]}}))
    store, _ = _store(wolli_home, project)
    loaded = store.load()
    assert [str(r.rule) for r in loaded.rules.deny] == ["Edit(/vendor/**)"]
    assert loaded.rules.allow == () and loaded.pending_shared == ["Bash"]
    assert store.approve_shared() == ["Bash"]
    assert [str(r.rule) for r in store.load().rules.allow] == ["Bash"]
    shared.write_text(json.dumps({"permissions": {"allow": ["Bash", "Edit"]}}))  # changed: asks again
    again = store.load()
    assert again.rules.allow == () and again.pending_shared == ["Bash", "Edit"]


def test_project_root_and_relative_rules(wolli_home, tmp_path):
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    (project / "pkg").mkdir()
    assert find_project_root(str(project / "pkg")) == str(project)
    store, _ = _store(wolli_home, project / "pkg")
    store.add("deny", "Edit(/setup.py)")
    decision = evaluate(ToolFacts("edit"), {"path": "../setup.py"}, store.load().rules,
                        Context("yolo", store.where))
    assert decision.outcome == "deny"


def test_bad_rules_are_reported_and_skipped_and_removal_works(wolli_home, tmp_path):
    agent = wolli_home / "agents" / "default"
    agent.mkdir(parents=True)
    (agent / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash(", 7, "WebFetch(domain:x)"],
                                                                     "deny": "Bash"}}))
    store, settings = _store(wolli_home, tmp_path)
    loaded = store.load()
    assert len(loaded.rules) == 1
    joined = "\n".join(loaded.problems)
    assert "permissions.allow[0]" in joined and "not closed" in joined and "permissions.allow[1]" in joined
    assert "no WebFetch tool" in joined
    assert any("permissions.deny" in e and "expected a list" in e for e in settings.errors)
    store.add("allow", "Bash(ls)", "user")
    assert "Bash(ls)" in json.loads((agent / "settings.json").read_text())["permissions"]["allow"]
    assert store.remove("allow", "Bash(ls)", "user") and not store.remove("allow", "Bash(ls)", "user")
