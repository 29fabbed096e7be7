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
        "print(sorted(m for m in ('pydantic', 'pydantic_core', 'wolli.tools.params') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
