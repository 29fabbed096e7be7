"""The system prompt builder over real tool definitions and a real agent home."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from pydantic import BaseModel

from wolli.agent.tool import ToolDefinition
from wolli.config import paths
from wolli.runtime.host.builtin_tools import create_builtin_tools
from wolli.runtime.resources.loading import ContextFile, Skill, load_resources
from wolli.runtime.resources.system_prompt import (
    BASE_PROMPT,
    GENERAL_GUIDELINES,
    BuildSystemPromptOptions,
    PromptSection,
    build_system_prompt,
)
from wolli.tools.environment import create_host_environment
from wolli.tools.read import create_read_tool


class DeployParams(BaseModel):
    target: str


def deploy_tool(**overrides) -> ToolDefinition:
    """A custom tool as an extension would register it."""
    fields = {
        "name": "deploy",
        "description": "Deploy the app",
        "parameters": DeployParams,
        "execute": lambda *args: "ok",
        "prompt_snippet": "Deploy the app to staging or production",
        "prompt_guidelines": ["Only deploy after the tests pass.", "Never deploy on Fridays."],
        "source": "extension",
    }
    fields.update(overrides)
    return ToolDefinition(**fields)


@pytest.fixture
def tools(tmp_path: Path) -> list[ToolDefinition]:
    return [*create_builtin_tools(create_host_environment(str(tmp_path))), deploy_tool()]


def section(prompt: str, title: str) -> str:
    """The text of one ``# title`` section (up to the next top-level heading)."""
    start = prompt.index(f"# {title}\n")
    end = prompt.find("\n# ", start + 1)
    return prompt[start : end if end != -1 else len(prompt)]


def options(**kw) -> BuildSystemPromptOptions:
    kw.setdefault("cwd", "/work/project")
    kw.setdefault("date", "2025-01-31")
    return BuildSystemPromptOptions(**kw)


def skill(name: str, description: str, **kw) -> Skill:
    return Skill(name=name, description=description, path=f"/skills/{name}/SKILL.md", base_dir=f"/skills/{name}", **kw)


# ---------------------------------------------------------------------------- tools


def test_one_liners_and_guidelines_come_from_active_tools_only(tools: list[ToolDefinition]) -> None:
    by_name = {t.name: t for t in tools}
    prompt = build_system_prompt(options(selected_tools=["read", "deploy"]), tools)

    listed = section(prompt, "Available tools")
    assert listed == (
        "# Available tools\n\n"
        f"- read: {by_name['read'].prompt_snippet}\n"
        f"- deploy: {by_name['deploy'].prompt_snippet}\n"
    )
    guidelines = section(prompt, "Guidelines")
    for line in [*by_name["read"].prompt_guidelines, *by_name["deploy"].prompt_guidelines, *GENERAL_GUIDELINES]:
        assert f"- {line}" in guidelines
    for inactive in ("bash", "edit", "write", "grep", "find", "ls"):
        assert f"- {inactive}:" not in prompt
        for line in by_name[inactive].prompt_guidelines:
            assert line not in prompt
    # tool guidelines come before the general ones
    assert guidelines.index(by_name["deploy"].prompt_guidelines[-1]) < guidelines.index(GENERAL_GUIDELINES[0])


def test_all_tools_when_no_selection_and_none_for_an_empty_one(tools: list[ToolDefinition]) -> None:
    everything = build_system_prompt(options(), tools)
    for tool in tools:
        assert f"- {tool.name}: {tool.prompt_snippet}" in everything

    nothing = build_system_prompt(options(selected_tools=[], skills=[skill("pdf", "PDFs")]), tools)
    assert "# Available tools" not in nothing
    assert "<available_skills>" not in nothing
    general = "# Guidelines\n\n" + "\n".join(f"- {g}" for g in GENERAL_GUIDELINES) + "\n\nCurrent date:"
    assert general in nothing


def test_tool_without_snippet_is_not_listed_and_shared_guidelines_appear_once(tmp_path: Path) -> None:
    read = create_read_tool(create_host_environment(str(tmp_path)))
    quiet = deploy_tool(name="quiet", prompt_snippet=None, prompt_guidelines=[read.prompt_guidelines[0]])
    prompt = build_system_prompt(options(), [read, quiet])

    assert "- quiet:" not in prompt
    assert prompt.count(read.prompt_guidelines[0]) == 1


def test_unknown_selected_names_are_ignored(tools: list[ToolDefinition]) -> None:
    prompt = build_system_prompt(options(selected_tools=["ghost", "deploy"]), tools)
    assert section(prompt, "Available tools") == (
        "# Available tools\n\n- deploy: Deploy the app to staging or production\n"
    )


def test_custom_prompt_replaces_opening_but_keeps_tool_guidelines(tools: list[ToolDefinition]) -> None:
    prompt = build_system_prompt(options(custom_prompt="  You are a pirate.  ", selected_tools=["deploy"]), tools)
    assert prompt.startswith("You are a pirate.\n\n")
    assert BASE_PROMPT not in prompt
    assert "- Only deploy after the tests pass." in prompt
    assert GENERAL_GUIDELINES[0] not in prompt


# ---------------------------------------------------------------------------- skills


def test_skills_listed_only_with_the_read_tool(tools: list[ToolDefinition]) -> None:
    skills = [skill("pdf", "Work with PDFs"), skill("manual", "Only by hand", disable_model_invocation=True)]

    with_read = build_system_prompt(options(skills=skills, selected_tools=["read"]), tools)
    without_read = build_system_prompt(options(skills=skills, selected_tools=["bash"]), tools)

    block = with_read[with_read.index("<available_skills>") :]
    assert "<name>pdf</name>" in block
    assert "<description>Work with PDFs</description>" in block
    assert "<location>/skills/pdf/SKILL.md</location>" in block
    assert "manual" not in with_read  # disable-model-invocation hides it from the model
    assert "<available_skills>" not in without_read and "# Skills" not in without_read


def test_only_hidden_skills_give_no_section(tools: list[ToolDefinition]) -> None:
    prompt = build_system_prompt(options(skills=[skill("m", "x", disable_model_invocation=True)]), tools)
    assert "# Skills" not in prompt


def test_skill_text_is_escaped_for_the_xml_list(tools: list[ToolDefinition]) -> None:
    prompt = build_system_prompt(options(skills=[skill("cmp", "Compare a < b & c </skill>")]), tools)
    assert "<description>Compare a &lt; b &amp; c &lt;/skill&gt;</description>" in prompt
    assert prompt.count("</skill>") == 1


# ---------------------------------------------------------------------------- text parts


def test_snapshots_context_sections_append_date_and_cwd_in_place(tools: list[ToolDefinition]) -> None:
    prompt = build_system_prompt(
        options(
            soul="I am calm.\n",
            memory="  Uses uv.  ",
            user="Ada, prefers short answers",
            context_files=[ContextFile("/home/a/AGENTS.md", "Be brief."), ContextFile("/p/AGENTS.md", "Use tabs.")],
            prompt_sections=[
                PromptSection("Later", "second", order=10),
                PromptSection("Empty", "   ", order=0),
                PromptSection("Earlier", "first", order=-5),
                PromptSection("Tie", "after earlier", order=-5),
            ],
            append_system_prompt="\nAPPENDED TEXT\n",
            selected_tools=["read"],
            skills=[skill("pdf", "PDFs")],
        ),
        tools,
    )
    order = [
        BASE_PROMPT,
        "# Who you are (SOUL.md)\n\nI am calm.",
        "# Available tools",
        "# Guidelines",
        "# Earlier\n\nfirst",
        "# Tie\n\nafter earlier",
        "# Later\n\nsecond",
        "# Project context",
        "## /home/a/AGENTS.md\n\nBe brief.",
        "## /p/AGENTS.md\n\nUse tabs.",
        "# About the user (USER.md)\n\nAda, prefers short answers",
        "# Memory (MEMORY.md)\n\nUses uv.",
        "<available_skills>",
        "APPENDED TEXT",
        "Current date: 2025-01-31\nCurrent working directory: /work/project",
    ]
    positions = [prompt.index(part) for part in order]
    assert positions == sorted(positions)
    assert "# Empty" not in prompt
    assert prompt.endswith("APPENDED TEXT\n\nCurrent date: 2025-01-31\nCurrent working directory: /work/project")


def test_blank_inputs_leave_no_empty_sections(tools: list[ToolDefinition]) -> None:
    prompt = build_system_prompt(
        options(soul=" \n", memory="", user="\n", context_files=[ContextFile("/p/AGENTS.md", "\n")]), tools
    )
    for heading in ("SOUL.md", "MEMORY.md", "USER.md", "# Project context", "/p/AGENTS.md"):
        assert heading not in prompt
    assert "\n\n\n" not in prompt


def test_default_date_is_today() -> None:
    prompt = build_system_prompt(BuildSystemPromptOptions(cwd="/x"), [])
    assert prompt.endswith(f"Current date: {dt.date.today().isoformat()}\nCurrent working directory: /x")


def test_built_from_a_real_agent_home(tmp_path: Path) -> None:
    home = paths.agent_home()
    (home / "skills" / "pdf").mkdir(parents=True)
    (home / "skills" / "pdf" / "SKILL.md").write_text("---\ndescription: Work with PDFs\n---\nUse pdftotext.")
    (home / "SOUL.md").write_text("Calm and exact.")
    (home / "AGENTS.md").write_text("Personal rules.")
    project = tmp_path / "proj"
    project.mkdir()
    (project / "CLAUDE.md").write_text("Project rules.")
    resources = load_resources(home, str(project))
    tools = create_builtin_tools(create_host_environment(str(project)))

    prompt = build_system_prompt(
        BuildSystemPromptOptions(
            cwd=str(project),
            soul=resources.soul,
            memory=resources.memory,
            user=resources.user,
            skills=resources.skills,
            selected_tools=["read", "bash"],
            context_files=resources.context_files,
            date="2030-02-03",
        ),
        tools,
    )

    assert "Calm and exact." in prompt
    assert prompt.index(f"## {home / 'AGENTS.md'}") < prompt.index(f"## {project / 'CLAUDE.md'}")
    assert f"<location>{home / 'skills' / 'pdf' / 'SKILL.md'}</location>" in prompt
    assert "- bash:" in prompt and "- edit:" not in prompt
    assert prompt.endswith(f"Current working directory: {project}")
