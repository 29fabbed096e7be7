"""Resources: context files, SOUL/MEMORY/USER, skills, prompt templates, expansion.

Everything runs on real folders: the agent home under the temporary WOLLI_HOME and a
project tree under ``tmp_path``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from wolli.config import paths
from wolli.config.settings import Settings
from wolli.runtime.host.agent_host import AgentHost
from wolli.runtime.resources.loading import (
    PromptTemplate,
    Skill,
    expand_prompt_template,
    expand_skill,
    load_context_files,
    load_prompt_templates,
    load_resources,
    load_skills,
    parse_front_matter,
    split_arguments,
)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def home() -> Path:
    folder = paths.agent_home()
    folder.mkdir(parents=True)
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """``repo/pkg/sub`` under tmp_path; tests put context files along the chain."""
    cwd = tmp_path / "repo" / "pkg" / "sub"
    cwd.mkdir(parents=True)
    return cwd


def ours(files, *roots: Path) -> list[str]:
    """Paths of the found files that live in our temporary folders (ignore the host's /tmp)."""
    prefixes = tuple(str(r) for r in roots)
    return [f.path for f in files if f.path.startswith(prefixes)]


# ---------------------------------------------------------------------------- context files


def test_context_files_agent_home_first_then_root_to_cwd(home: Path, project: Path, tmp_path: Path) -> None:
    write(project / "AGENTS.md", "deepest")
    write(project.parent / "CLAUDE.md", "middle")
    write(project.parent.parent / "AGENTS.md", "top")
    write(home / "AGENTS.md", "personal")
    errors: list[str] = []

    found = load_context_files(home, str(project), errors)

    assert ours(found, tmp_path, home) == [
        str(home / "AGENTS.md"),
        str(project.parent.parent / "AGENTS.md"),
        str(project.parent / "CLAUDE.md"),
        str(project / "AGENTS.md"),
    ]
    assert [f.content for f in found if f.path.startswith((str(tmp_path), str(home)))] == [
        "personal", "top", "middle", "deepest",
    ]
    assert errors == []


def test_agents_md_preferred_over_claude_md_in_one_folder(home: Path, project: Path, tmp_path: Path) -> None:
    write(project / "AGENTS.md", "agents")
    write(project / "CLAUDE.md", "claude")
    write(home / "CLAUDE.md", "home claude")

    found = load_context_files(home, str(project), [])

    assert ours(found, tmp_path, home) == [str(home / "CLAUDE.md"), str(project / "AGENTS.md")]
    assert "claude" not in [f.content for f in found]


def test_symlinked_duplicates_are_read_once(home: Path, project: Path, tmp_path: Path) -> None:
    repo = project.parent.parent
    write(repo / "AGENTS.md", "shared rules")
    (repo / "CLAUDE.md").symlink_to("AGENTS.md")  # same folder, other name
    (project.parent / "AGENTS.md").symlink_to(repo / "AGENTS.md")  # a deeper folder links up
    write(home / "AGENTS.md", "personal")
    (project / "CLAUDE.md").symlink_to(home / "AGENTS.md")  # the project links the agent's file

    found = load_context_files(home, str(project), [])

    assert ours(found, tmp_path, home) == [str(home / "AGENTS.md"), str(repo / "AGENTS.md")]


def test_agent_home_inside_the_project_is_read_once(tmp_path: Path) -> None:
    agent = tmp_path / "proj" / "agent"
    write(agent / "AGENTS.md", "mine")
    found = load_context_files(agent, str(agent), [])
    assert ours(found, tmp_path) == [str(agent / "AGENTS.md")]


def test_unreadable_context_file_is_reported_and_loading_goes_on(home: Path, project: Path, tmp_path: Path) -> None:
    loop = project / "AGENTS.md"
    loop.symlink_to(loop)  # a symlink loop: present but unreadable, even for root
    write(project / "CLAUDE.md", "fallback")
    write(project.parent / "AGENTS.md", "parent")
    errors: list[str] = []

    found = load_context_files(home, str(project), errors)

    assert ours(found, tmp_path, home) == [str(project.parent / "AGENTS.md"), str(project / "CLAUDE.md")]
    assert len(errors) == 1 and str(loop) in errors[0] and "Could not read" in errors[0]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_context_file_without_permission_is_reported(home: Path, project: Path) -> None:
    secret = write(project / "AGENTS.md", "x")
    secret.chmod(0)
    try:
        errors: list[str] = []
        load_context_files(home, str(project), errors)
        assert any(str(secret) in e for e in errors)
    finally:
        secret.chmod(0o644)


def test_missing_cwd_and_empty_home_give_no_files(home: Path, tmp_path: Path) -> None:
    errors: list[str] = []
    found = load_context_files(home, str(tmp_path / "gone" / "away"), errors)
    assert ours(found, tmp_path, home) == []
    assert errors == []


# ---------------------------------------------------------------------------- snapshots


def test_soul_memory_user_snapshots_and_frozen(home: Path, project: Path) -> None:
    write(home / "SOUL.md", "I am careful.")
    write(home / "MEMORY.md", "The user likes tabs.")
    write(project / "AGENTS.md", "project rules")

    resources = load_resources(home, str(project))
    write(home / "SOUL.md", "changed later")

    assert resources.soul == "I am careful."
    assert resources.memory == "The user likes tabs."
    assert resources.user == ""  # absent
    assert resources.context_files[-1].content == "project rules"
    assert resources.errors == []


def test_unreadable_snapshot_is_reported_not_fatal(home: Path, project: Path) -> None:
    (home / "SOUL.md").mkdir()  # a folder where a file should be
    write(home / "USER.md", "Name: Ada")
    write(home / "skills" / "lint" / "SKILL.md", "---\ndescription: Lint things\n---\nRun ruff.")

    resources = load_resources(home, str(project))

    assert resources.soul == ""
    assert resources.user == "Name: Ada"
    assert [s.name for s in resources.skills] == ["lint"]
    assert len(resources.errors) == 1 and "SOUL.md" in resources.errors[0]


def test_context_files_can_be_left_out(home: Path, project: Path) -> None:
    write(project / "AGENTS.md", "rules")
    assert load_resources(home, str(project), include_context_files=False).context_files == []


# ---------------------------------------------------------------------------- front matter


def test_front_matter_plain_and_body() -> None:
    meta, body = parse_front_matter("---\nname: review\ndescription: Review a diff\n---\n\nBody line\n")
    assert meta == {"name": "review", "description": "Review a diff"}
    assert body == "Body line\n"


def test_no_front_matter_is_all_body() -> None:
    text = "# Title\n\nname: not meta\n"
    assert parse_front_matter(text) == ({}, text)
    assert parse_front_matter("") == ({}, "")
    unclosed = "---\nname: x\nno closing fence"
    assert parse_front_matter(unclosed) == ({}, unclosed)
    assert parse_front_matter("----\nname: x\n----\n") == ({}, "----\nname: x\n----\n")


def test_front_matter_quoted_values() -> None:
    meta, _ = parse_front_matter(
        "---\n"
        'a: "Use: colons, # hashes and \\"quotes\\""\n'
        "b: 'it''s single'\n"
        'c: ""\n'
        'd: "tab\\there"\n'
        "e: \"unterminated\n"
        "f: plain 'inner' quotes\n"
        "---\n"
    )
    assert meta["a"] == 'Use: colons, # hashes and "quotes"'
    assert meta["b"] == "it's single"
    assert meta["c"] == ""
    assert meta["d"] == "tab\there"
    assert meta["e"] == '"unterminated'
    assert meta["f"] == "plain 'inner' quotes"


def test_front_matter_folded_and_literal_blocks() -> None:
    meta, body = parse_front_matter(
        "---\n"
        "description: >\n"
        "  Folds these\n"
        "  lines together.\n"
        "\n"
        "  New paragraph.\n"
        "strip: >-\n"
        "    indented more\n"
        "    still folded\n"
        "literal: |\n"
        "  line one\n"
        "    kept indent\n"
        "name: after\n"
        "---\n"
        "text"
    )
    assert meta["description"] == "Folds these lines together.\nNew paragraph."
    assert meta["strip"] == "indented more still folded"
    assert meta["literal"] == "line one\n  kept indent"
    assert meta["name"] == "after"
    assert body == "text"


def test_front_matter_plain_continuation_comments_crlf_and_bom() -> None:
    text = (
        "\ufeff---\r\n"
        "# a comment line\r\n"
        "description: starts here\r\n"
        "  and goes on\r\n"
        "  # an indented comment\r\n"
        "empty:\r\n"
        "tight:value\r\n"
        "disable-model-invocation: true\r\n"
        "---\r\n"
        "body\r\n"
    )
    meta, body = parse_front_matter(text)
    assert meta == {
        "description": "starts here and goes on",
        "empty": "",
        "tight": "value",
        "disable-model-invocation": "true",
    }
    assert body == "body\n"


# ---------------------------------------------------------------------------- skills


def test_skills_from_folders_and_loose_files(home: Path) -> None:
    skills_dir = home / "skills"
    write(skills_dir / "pdf" / "SKILL.md", "---\nname: pdf-tools\ndescription: Work with PDFs\n---\nUse pdftotext.")
    write(skills_dir / "quick.md", "---\ndescription: >\n  A loose\n  skill file\n---\nDo it.")
    write(skills_dir / "pdf" / "notes.md", "not a skill: only SKILL.md counts inside a folder")
    (skills_dir / "folder.md").mkdir()  # a folder with a .md name is not a file
    errors: list[str] = []

    skills = load_skills([skills_dir], errors)

    assert [(s.name, s.description) for s in skills] == [
        ("pdf-tools", "Work with PDFs"),
        ("quick", "A loose skill file"),
    ]
    assert skills[0].path == str(skills_dir / "pdf" / "SKILL.md")
    assert skills[0].base_dir == str(skills_dir / "pdf")
    assert skills[0].disable_model_invocation is False
    assert errors == []


def test_skill_without_description_is_reported_and_skipped(home: Path) -> None:
    skills_dir = home / "skills"
    write(skills_dir / "bare" / "SKILL.md", "No front matter at all.")
    write(skills_dir / "blank" / "SKILL.md", "---\nname: blank\ndescription: '  '\n---\n")
    write(skills_dir / "good" / "SKILL.md", "---\ndescription: Fine\n---\n")
    errors: list[str] = []

    skills = load_skills([skills_dir], errors)

    assert [s.name for s in skills] == ["good"]
    assert len(errors) == 2
    assert all("no description" in e for e in errors)
    assert str(skills_dir / "bare" / "SKILL.md") in errors[0]


def test_disable_model_invocation_and_bad_names(home: Path) -> None:
    skills_dir = home / "skills"
    write(skills_dir / "manual" / "SKILL.md", "---\ndescription: Only by hand\ndisable-model-invocation: True\n---\n")
    write(skills_dir / "spaced" / "SKILL.md", "---\nname: two words\ndescription: x\n---\n")
    errors: list[str] = []

    skills = load_skills([skills_dir], errors)

    assert [(s.name, s.disable_model_invocation) for s in skills] == [("manual", True)]
    assert len(errors) == 1 and "two words" in errors[0]


def test_first_skill_of_a_name_wins_and_the_clash_is_reported(home: Path, tmp_path: Path) -> None:
    write(home / "skills" / "deploy" / "SKILL.md", "---\ndescription: Agent's deploy\n---\n")
    extra = tmp_path / "shared-skills"
    write(extra / "deploy" / "SKILL.md", "---\ndescription: Shared deploy\n---\n")
    write(extra / "other" / "SKILL.md", "---\ndescription: Other\n---\n")

    resources = load_resources(home, str(tmp_path), extra_skill_dirs=[extra, tmp_path / "missing"])

    assert [(s.name, s.description) for s in resources.skills] == [("deploy", "Agent's deploy"), ("other", "Other")]
    assert len(resources.errors) == 1 and "same name" in resources.errors[0]


def test_unreadable_skill_is_reported(home: Path) -> None:
    loop = home / "skills" / "loop" / "SKILL.md"
    loop.parent.mkdir(parents=True)
    loop.symlink_to(loop)
    write(home / "skills" / "ok" / "SKILL.md", "---\ndescription: ok\n---\n")
    errors: list[str] = []
    assert [s.name for s in load_skills([home / "skills"], errors)] == ["ok"]
    assert len(errors) == 1 and str(loop) in errors[0]


def test_host_reads_skill_and_prompt_paths_from_settings(home: Path, tmp_path: Path) -> None:
    extra_skills = tmp_path / "team" / "skills"
    extra_prompts = tmp_path / "team" / "prompts"
    write(extra_skills / "triage" / "SKILL.md", "---\ndescription: Triage bugs\n---\n")
    write(extra_prompts / "standup.md", "Summarise $@")
    write(home / "settings.json", f'{{"skills": ["{extra_skills}"], "prompts": ["{extra_prompts}"]}}')

    resources = AgentHost(settings=Settings()).resources(str(tmp_path))

    assert [s.name for s in resources.skills] == ["triage"]
    assert [p.name for p in resources.prompts] == ["standup"]


# ---------------------------------------------------------------------------- prompt templates


def test_prompt_templates_names_descriptions_and_precedence(home: Path, tmp_path: Path) -> None:
    prompts = home / "prompts"
    write(prompts / "review.md", "---\ndescription: Review code\n---\nReview $1 carefully.")
    write(prompts / "fix.md", "\n\n  Fix the failing test in $1  \nthen run it.")
    extra = tmp_path / "more"
    write(extra / "review.md", "shadowed")
    write(extra / "ship.md", "")

    templates = load_prompt_templates([prompts, extra], [])

    by_name = {t.name: t for t in templates}
    assert sorted(by_name) == ["fix", "review", "ship"]
    assert by_name["review"].description == "Review code"
    assert by_name["review"].content == "Review $1 carefully."
    assert by_name["fix"].description == "Fix the failing test in $1"
    assert by_name["ship"].description == ""
    assert by_name["review"].path == str(prompts / "review.md")


def template(body: str) -> PromptTemplate:
    return PromptTemplate("t", "", body, "/t.md")


def test_template_positional_and_all_arguments() -> None:
    body = "first=$1 second=$2 third=$3 all=$@ args=$ARGUMENTS"
    assert expand_prompt_template(template(body), "  one two  ") == (
        "first=one second=two third= all=one two args=one two"
    )


def test_template_arguments_with_quotes() -> None:
    out = expand_prompt_template(template("[$1] [$2] [$3] [$4]"), "\"a b\" 'c d' don't \"\"")
    assert out == "[a b] [c d] [don't] []"
    # $@ keeps the text as typed, quotes included
    assert expand_prompt_template(template("$@"), ' "a b"  c ') == '"a b"  c'
    # an unclosed quote is an ordinary character, a backslash stays
    assert split_arguments('"open quote C:\\dir') == ['"open', "quote", "C:\\dir"]


def test_template_slices_and_large_positions() -> None:
    args = "a b c d e f g h i j k"
    assert expand_prompt_template(template("${@:2}|${@:2:3}|${@:0:1}"), args) == (
        "b c d e f g h i j k|b c d|a"
    )
    assert expand_prompt_template(template("$10 $11 $12 $0"), args) == "j k  $0"


def test_template_arguments_are_not_expanded_twice() -> None:
    out = expand_prompt_template(template("Say: $@ / first: $1"), "$2 $ARGUMENTS")
    assert out == "Say: $2 $ARGUMENTS / first: $2"


def test_template_without_arguments_keeps_text() -> None:
    assert expand_prompt_template(template("Plain text, costs $ and $ARGUMENTSX."), "") == (
        "Plain text, costs $ and $ARGUMENTSX."
    )


# ---------------------------------------------------------------------------- skill expansion


def test_expand_skill_wraps_body_and_appends_arguments(home: Path) -> None:
    path = write(home / "skills" / "pdf" / "SKILL.md", '---\ndescription: PDFs\n---\n\nRun scripts/x.py\n')
    skill = load_skills([home / "skills"], [])[0]

    out = expand_skill(skill, "  report.pdf ")

    assert out == (
        f'<skill name="pdf" location="{path}">\n'
        f"References are relative to {path.parent}.\n\nRun scripts/x.py\n</skill>\n\nreport.pdf"
    )
    assert "description" not in out


def test_expand_skill_with_vanished_file_says_so(tmp_path: Path) -> None:
    gone = tmp_path / 'a"b' / "SKILL.md"
    skill = Skill(name="x<y", description="d", path=str(gone), base_dir=str(gone.parent))
    out = expand_skill(skill, "")
    assert out.startswith(f'<skill name="x&lt;y" location="{tmp_path}/a&quot;b/SKILL.md">')
    assert "could not read" in out
    assert out.endswith("</skill>")
