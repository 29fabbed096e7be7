"""What a tool is: its definition, its result, and argument validation.

A tool's ``parameters`` is a pydantic model class (arguments are validated into an
instance) or a JSON-schema dict (validated as JSON schema, passed on as a dict). Built-in
tools give a :class:`LazyParameters`: their schema written out, their pydantic class (and
pydantic itself) imported on the first call, so the first request needs neither.
``execute(tool_call_id, params, signal, on_update, ctx)`` may be sync or async and returns a
:class:`ToolResult`, a dict of its fields, a plain string, or a list of content blocks;
raising marks the result as an error.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import field
from typing import TYPE_CHECKING, Any, Literal, cast

from ..ai.types import ImageContent, TextContent, Tool
from ..base.records import record

if TYPE_CHECKING:  # pydantic loads with the first tool whose parameters are a model class
    from pydantic import BaseModel


@record
class ToolResult:
    content: list[TextContent | ImageContent] = field(default_factory=list)
    details: Any = None
    # Hint: skip the follow-up LLM call when every result of the batch says so.
    terminate: bool = False
    # Whether the call failed. A tool signals failure by raising; a result supplied without
    # running the tool may set it; the loop sets it on the result it reports.
    is_error: bool = False

    def text(self) -> str:
        return "\n".join(b.text for b in self.content if isinstance(b, TextContent))


OnUpdate = Callable[[ToolResult], None]


class ToolArgumentError(ValueError):
    """Arguments did not validate; the message is shown to the model."""


@record
class ToolDefinition:
    name: str
    description: str
    parameters: type[BaseModel] | dict[str, Any] | LazyParameters
    execute: Callable[..., Any]
    label: str = ""
    prompt_snippet: str | None = None
    prompt_guidelines: list[str] = field(default_factory=list)
    prepare_arguments: Callable[[Any], Any] | None = None
    render_call: Callable[..., Any] | None = None
    render_result: Callable[..., Any] | None = None
    render_shell: Literal["default", "self"] = "default"
    execution: Literal["parallel", "sequential"] = "parallel"
    # Where the definition came from ("builtin", an extension path...), for listings.
    source: str = "builtin"
    # The tool only reads (it changes no file and runs nothing): it runs without asking in
    # every permission mode, plan mode included. Built-in tools are known by name.
    read_only: bool = False

    def __post_init__(self) -> None:
        if not self.label:
            self.label = self.name

    def json_schema(self) -> dict[str, Any]:
        if isinstance(self.parameters, dict):
            return self.parameters
        if isinstance(self.parameters, LazyParameters):
            return self.parameters.schema
        return model_json_schema(self.parameters)

    def as_llm_tool(self) -> Tool:
        return Tool(name=self.name, description=self.description, parameters=self.json_schema())

    def validate(self, arguments: object) -> object:
        """Validated parameters (model instance or dict); raises :class:`ToolArgumentError`."""
        if self.prepare_arguments is not None:
            arguments = self.prepare_arguments(arguments)
        return validate_arguments(self.parameters, arguments, self.name)


class LazyParameters:
    """A pydantic parameters class imported on first use, with its JSON schema given up front.

    ``schema`` must equal ``model_json_schema(load())`` (a test checks the built-ins); any
    other attribute (``model_validate``, ``model_fields``...) is the class's own.
    """

    __slots__ = ("schema", "_load", "_model")

    def __init__(self, schema: dict[str, Any], load: Callable[[], type[BaseModel]]) -> None:
        self.schema = schema
        self._load = load
        self._model: type[BaseModel] | None = None

    def resolve(self) -> type[BaseModel]:
        if self._model is None:
            self._model = self._load()
        return self._model

    def __getattr__(self, name: str) -> Any:
        return getattr(self.resolve(), name)


_schema_cache: dict[type[BaseModel], dict[str, Any]] = {}


def model_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A provider-friendly JSON schema for a pydantic model (no titles, inlined refs)."""
    cached = _schema_cache.get(model)
    if cached is None:
        cached = _clean_schema(model.model_json_schema(by_alias=True))
        _schema_cache[model] = cached
    return cached


def _clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    defs = schema.pop("$defs", {})

    def walk(node: object) -> object:
        if isinstance(node, dict):
            if "$ref" in node and node["$ref"].startswith("#/$defs/"):
                return walk(dict(defs[node["$ref"].split("/")[-1]]))
            return {k: walk(v) for k, v in node.items() if k != "title"}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return cast("dict[str, Any]", walk(schema))


def validate_arguments(
    parameters: type[BaseModel] | dict[str, Any] | LazyParameters, arguments: object, tool_name: str
) -> object:
    if arguments is None:
        arguments = {}
    if isinstance(parameters, dict):
        return _validate_json_schema(parameters, arguments, tool_name)
    if isinstance(parameters, LazyParameters):
        parameters = parameters.resolve()
    from pydantic import ValidationError  # loaded already: ``parameters`` is a pydantic model

    try:
        return parameters.model_validate(arguments)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"]) or "arguments"
            problems.append(f"  - {where}: {err['msg']}")
        raise ToolArgumentError(
            f"Validation failed for tool \"{tool_name}\":\n" + "\n".join(problems)
            + f"\n\nReceived arguments:\n{_short_json(arguments)}"
        ) from None


def _validate_json_schema(schema: dict[str, Any], arguments: object, tool_name: str) -> object:
    import jsonschema  # imported on first use: only extension tools with dict schemas need it

    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))
    if errors:
        problems = []
        for err in errors:
            where = ".".join(str(p) for p in err.path) or "arguments"
            problems.append(f"  - {where}: {err.message}")
        raise ToolArgumentError(
            f"Validation failed for tool \"{tool_name}\":\n" + "\n".join(problems)
            + f"\n\nReceived arguments:\n{_short_json(arguments)}"
        )
    return arguments


def _short_json(value: object, limit: int = 2000) -> str:
    import json

    try:
        text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def normalize_result(value: object) -> ToolResult:
    """Accept what ``execute`` may return and produce a :class:`ToolResult`."""
    if isinstance(value, ToolResult):
        return value
    if value is None:
        return ToolResult(content=[])
    if isinstance(value, str):
        return ToolResult(content=[TextContent(text=value)])
    if isinstance(value, TextContent | ImageContent):
        return ToolResult(content=[value])
    if isinstance(value, list):
        return ToolResult(content=[_as_block(v) for v in value])
    if isinstance(value, dict):
        content = value.get("content", [])
        if isinstance(content, str):
            content = [TextContent(text=content)]
        return ToolResult(
            content=[_as_block(v) for v in content],
            details=value.get("details"),
            terminate=bool(value.get("terminate", False)),
            is_error=bool(value.get("is_error", value.get("isError", False))),
        )
    raise TypeError(f"a tool returned {type(value).__name__}; expected ToolResult, dict, str or list")


def _as_block(value: object) -> TextContent | ImageContent:
    if isinstance(value, TextContent | ImageContent):
        return value
    if isinstance(value, str):
        return TextContent(text=value)
    if isinstance(value, dict):
        if value.get("type") == "image":
            return ImageContent.model_validate(value)
        return TextContent.model_validate(value)
    raise TypeError(f"a tool result block must be text or image, got {type(value).__name__}")


async def call_maybe_async(fn: Callable[..., Any], *args: object) -> object:
    result = fn(*args)
    if inspect.isawaitable(result):
        result = await result
    return result
