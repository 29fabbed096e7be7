"""The built-in tools' schemas are written out (the first request needs no pydantic); they must
equal what their parameter models generate, and the models load only on a tool's first call."""

from __future__ import annotations

import subprocess
import sys

import pytest

from wolli.agent.tool import LazyParameters, model_json_schema
from wolli.runtime.host.builtin_tools import BUILTIN_TOOL_NAMES, create_builtin_tools
from wolli.tools import params
from wolli.tools.environment import create_host_environment
from wolli.tools.schemas import TOOL_SCHEMAS

MODELS = {"read": params.ReadParams, "bash": params.BashParams, "edit": params.EditParams,
          "write": params.WriteParams, "grep": params.GrepParams, "find": params.FindParams, "ls": params.LsParams}


@pytest.mark.parametrize("name", BUILTIN_TOOL_NAMES)
def test_written_schema_equals_the_generated_one(name):
    assert TOOL_SCHEMAS[name] == model_json_schema(MODELS[name])


def test_task_schema_equals_the_generated_one():
    from wolli.runtime.subagents.task_params import TaskParams
    from wolli.runtime.subagents.task_tool import TASK_SCHEMA

    assert TASK_SCHEMA == model_json_schema(TaskParams)


def test_builtin_tools_validate_into_their_models(tmp_path):
    tools = {t.name: t for t in create_builtin_tools(create_host_environment(str(tmp_path)))}
    assert set(tools) == set(BUILTIN_TOOL_NAMES)
    for name, tool in tools.items():
        assert isinstance(tool.parameters, LazyParameters)
        assert tool.json_schema() is TOOL_SCHEMAS[name]
    read = tools["read"].validate({"path": "a.txt", "offset": 2})
    assert isinstance(read, params.ReadParams) and read.offset == 2
    assert tools["read"].parameters.model_json_schema()["required"] == ["path"]  # the class's own


def test_building_the_tools_imports_no_pydantic(tmp_path):
    code = (
        "import sys\n"
        "from wolli.runtime.host.builtin_tools import create_builtin_tools\n"
        "from wolli.tools.environment import create_host_environment\n"
        f"tools = create_builtin_tools(create_host_environment({str(tmp_path)!r}))\n"
        "[t.as_llm_tool() for t in tools]\n"
        "names = ('pydantic', 'pydantic_core', 'wolli.tools.params', 'wolli.tools.read', 'wolli.tools.bash',\n"
        "         'wolli.tools.edit', 'wolli.tools.write', 'wolli.tools.grep', 'wolli.tools.find', 'wolli.tools.ls')\n"
        "print(sorted(m for m in names if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


async def test_a_deferred_tool_runs_as_the_real_one(tmp_path):
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    tools = {t.name: t for t in create_builtin_tools(create_host_environment(str(tmp_path)))}
    result = await tools["read"].execute("c1", tools["read"].validate({"path": "a.txt"}), None, None, None)
    assert "two" in result.text()
    # edit takes the older top-level old_text/new_text shape through its prepare_arguments
    edit = tools["edit"]
    params = edit.validate({"path": "a.txt", "old_text": "two", "new_text": "three"})
    await edit.execute("c2", params, None, None, None)
    assert (tmp_path / "a.txt").read_text() == "one\nthree\n"


def test_cards_are_what_the_tools_say(tmp_path):
    from wolli.runtime.host.builtin_tools import _factories

    env = create_host_environment(str(tmp_path))
    deferred = {t.name: t for t in create_builtin_tools(env)}
    for name, factory in _factories().items():
        real, offered = factory(env), deferred[name]
        assert (offered.label, offered.description, offered.prompt_snippet, offered.prompt_guidelines) == (
            real.label, real.description, real.prompt_snippet, real.prompt_guidelines)
        assert offered.json_schema() == real.json_schema()
