"""Quirks of OpenAI-compatible Chat Completions servers, detected from provider and URL.

Every server speaks "the OpenAI API" a little differently: which role carries the system
prompt, what the output limit is called, how thinking is switched on, what a tool-call id
may look like. :func:`resolve_compat` starts from what is known about the server (by
``model.provider`` and the host/port of ``model.base_url``) and lets ``model.compat``
override any switch. The keys (camelCase, as in ``models.json``) are documented in
:mod:`wolli.ai.providers.openai_completions`. Unknown keys are ignored, so a catalog
written for a newer version still loads.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from dataclasses import field
from typing import Any, cast
from urllib.parse import urlparse

from ...base.records import record
from ..types import Model

THINKING_FORMATS = ("openai", "openrouter", "zai", "qwen", "qwen-chat-template", "none")
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")
MAX_TOKENS_FIELDS = ("max_tokens", "max_completion_tokens")

# Servers that only know low/medium/high for reasoning_effort.
_THREE_LEVELS = {"minimal": "low", "low": "low", "medium": "medium", "high": "high", "xhigh": "high"}
_OPENAI_LEVELS = {"minimal": "minimal", "low": "low", "medium": "medium", "high": "high", "xhigh": "high"}

_LOCAL_PROVIDERS = {
    "ollama": "ollama",
    "llama.cpp": "llamacpp",
    "llamacpp": "llamacpp",
    "llama-cpp": "llamacpp",
    "llama_cpp": "llamacpp",
    "vllm": "vllm",
    "lmstudio": "lmstudio",
    "lm-studio": "lmstudio",
    "lm studio": "lmstudio",
    "sglang": "vllm",
}
_DEFAULT_PORTS = {11434: "ollama", 1234: "lmstudio"}
_UNSAFE_ID_CHARS = re.compile(r"[^A-Za-z0-9_-]")
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_MISTRAL_ID = re.compile(r"^[A-Za-z0-9]{9}$")


@record
class OpenAICompat:
    """Resolved switches for one model (snake_case mirror of the ``model.compat`` keys)."""

    server: str = "generic"  # detected family, informational (openai, openrouter, groq, ...)
    local: bool = False
    supports_developer_role: bool = False
    max_tokens_field: str = "max_tokens"
    supports_usage_in_streaming: bool = True
    supports_reasoning_effort: bool = True
    reasoning_effort_map: dict[str, str] = field(default_factory=lambda: dict(_THREE_LEVELS))
    thinking_format: str = "openai"
    reasoning_field: str = "reasoning_content"
    requires_thinking_as_text: bool = False
    supports_reasoning_replay: bool = True
    requires_tool_result_name: bool = False
    requires_assistant_after_tool_result: bool = False
    requires_mistral_tool_ids: bool = False
    tool_call_id_max_length: int = 40
    supports_store: bool = False
    supports_prompt_cache_key: bool = False
    send_default_max_tokens: bool = True
    open_router_routing: dict[str, Any] | None = None  # OpenRouter's ``provider`` request field


# camelCase key in model.compat -> (attribute, expected type)
COMPAT_KEYS: dict[str, tuple[str, type | tuple[type, ...]]] = {
    "supportsDeveloperRole": ("supports_developer_role", bool),
    "maxTokensField": ("max_tokens_field", (str, type(None))),
    "supportsUsageInStreaming": ("supports_usage_in_streaming", bool),
    "supportsReasoningEffort": ("supports_reasoning_effort", bool),
    "reasoningEffortMap": ("reasoning_effort_map", dict),
    "thinkingFormat": ("thinking_format", str),
    "reasoningField": ("reasoning_field", str),
    "requiresThinkingAsText": ("requires_thinking_as_text", bool),
    "supportsReasoningReplay": ("supports_reasoning_replay", bool),
    "requiresToolResultName": ("requires_tool_result_name", bool),
    "requiresAssistantAfterToolResult": ("requires_assistant_after_tool_result", bool),
    "requiresMistralToolIds": ("requires_mistral_tool_ids", bool),
    "toolCallIdMaxLength": ("tool_call_id_max_length", int),
    "supportsStore": ("supports_store", bool),
    "supportsPromptCacheKey": ("supports_prompt_cache_key", bool),
    "sendDefaultMaxTokens": ("send_default_max_tokens", bool),
    "openRouterRouting": ("open_router_routing", dict),
}

# pi's compat keys (openai-completions, anthropic-messages and openai-responses) that Wolli
# accepts in models.json without using them: a file written for pi loads without a word.
PI_ONLY_KEYS = frozenset({
    "supportsFinishReason", "requiresReasoningContentOnAssistantMessages", "chatTemplateKwargs",
    "chatTemplateArgs", "vercelGatewayRouting", "zaiToolStream", "thinkingTokenBudgetField",
    "supportsThinkingTokenBudget", "supportsOpenAIGrammarTools", "supportsMidConvoSystemMessages",
    "supportsMidConvoToolAdditions", "supportsStrictMode", "cacheControlFormat", "sendSessionAffinityHeaders",
    "sessionAffinityFormat", "supportsLongCacheRetention", "vllmPriority",
    "supportsEagerToolInputStreaming", "supportsCacheControlOnTools", "supportsTemperature",
    "forceAdaptiveThinking", "allowEmptySignature", "supportsStrictTools", "supportsMidConvoEffort",
    "supportsMidConvoToolChanges", "allowedFallbackModels", "supportsAdditionalTools", "supportsToolSearch",
    "supportsExplicitPromptCacheMode", "supportsMaxOutputTokens",
})


def check_compat(raw: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A ``compat`` object of models.json as Wolli will use it, and what was wrong with it.

    Keys Wolli reads are checked (type, allowed values) and dropped when wrong, so the
    detected default applies instead of a request failing later; pi's other keys are kept
    quietly (see :data:`PI_ONLY_KEYS`); anything else is named with the nearest key.
    """
    import difflib

    clean: dict[str, Any] = {}
    problems: list[str] = []
    for key, value in raw.items():
        spec = COMPAT_KEYS.get(key)
        if spec is None:
            if key in PI_ONLY_KEYS:
                clean[key] = value
                continue
            near = difflib.get_close_matches(key, [*COMPAT_KEYS, *PI_ONLY_KEYS], n=1, cutoff=0.6)
            problems.append(f"{key}: unknown compat key" + (f" (did you mean {near[0]!r}?)" if near else "") + "; ignored")
            continue
        _, expected = spec
        allowed = {"thinkingFormat": THINKING_FORMATS, "maxTokensField": MAX_TOKENS_FIELDS}.get(key)
        wrong_type = (isinstance(value, bool) and expected is int) or not isinstance(value, expected)
        if wrong_type or (allowed is not None and value is not None and value not in allowed):
            shown = f"one of {', '.join(allowed)}" if allowed else _TYPE_WORDS.get(expected, "another type")
            problems.append(f"{key}: {value!r} is not {shown} (Wolli's values); the detected default applies")
            continue
        clean[key] = value
    return clean, problems


_TYPE_WORDS: dict[Any, str] = {bool: "true or false", int: "a whole number", str: "a string", dict: "an object",
                               (str, type(None)): "a string or null"}


def _host_port(base_url: str) -> tuple[str, int | None]:
    try:
        parsed = urlparse(base_url if "//" in base_url else f"http://{base_url}")
        return (parsed.hostname or "").lower(), parsed.port
    except ValueError:
        return "", None


def is_local_host(host: str) -> bool:
    """Loopback, private-network and ``.local`` hosts: a server on the user's machine or LAN."""
    if host in ("localhost", "0.0.0.0", "host.docker.internal") or host.endswith((".local", ".localhost")):
        return True
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


def detect_server(provider: str, base_url: str) -> tuple[str, bool]:
    """``(family, local)`` for a provider name and base URL.

    The provider name wins over the URL, so a test or proxy pointing ``provider: openai``
    at ``127.0.0.1`` still gets OpenAI behaviour.
    """
    name = provider.strip().lower()
    host, port = _host_port(base_url)
    by_name = {
        "openai": "openai",
        "openrouter": "openrouter",
        "groq": "groq",
        "xai": "xai",
        "grok": "xai",
        "deepseek": "deepseek",
        "mistral": "mistral",
        "mistralai": "mistral",
        "zai": "zai",
        "z.ai": "zai",
        "zhipu": "zai",
        "qwen": "qwen",
        "dashscope": "qwen",
        "alibaba": "qwen",
    }
    if name in by_name:
        return by_name[name], False
    if name in _LOCAL_PROVIDERS:
        return _LOCAL_PROVIDERS[name], True
    by_host = (
        ("api.openai.com", "openai"),
        ("openrouter.ai", "openrouter"),
        ("groq.com", "groq"),
        ("x.ai", "xai"),
        ("deepseek.com", "deepseek"),
        ("mistral.ai", "mistral"),
        ("z.ai", "zai"),
        ("bigmodel.cn", "zai"),
        ("dashscope", "qwen"),
    )
    for needle, family in by_host:
        if host == needle or host.endswith("." + needle) or (needle == "dashscope" and needle in host):
            return family, False
    local = is_local_host(host)
    if port in _DEFAULT_PORTS and local:
        return _DEFAULT_PORTS[port], True
    return ("local" if local else "generic"), local


def default_compat(provider: str, base_url: str) -> OpenAICompat:
    """What is known about a server before ``model.compat`` overrides."""
    server, local = detect_server(provider, base_url)
    compat = OpenAICompat(server=server, local=local, send_default_max_tokens=not local)
    if server == "openai":
        compat.supports_developer_role = True
        compat.max_tokens_field = "max_completion_tokens"
        compat.reasoning_effort_map = dict(_OPENAI_LEVELS)
        compat.supports_store = True
        compat.supports_prompt_cache_key = True
    elif server == "openrouter":
        # Recorded traffic (c13) uses max_completion_tokens; OpenRouter normalises reasoning.
        compat.max_tokens_field = "max_completion_tokens"
        compat.thinking_format = "openrouter"
        compat.reasoning_field = "reasoning"
        compat.reasoning_effort_map = {**_OPENAI_LEVELS, "xhigh": "xhigh"}
    elif server == "groq":
        compat.max_tokens_field = "max_completion_tokens"
        compat.reasoning_field = "reasoning"
        # Groq rejects reasoning/reasoning_content on assistant messages ("unsupported").
        compat.supports_reasoning_replay = False
    elif server == "xai":
        compat.supports_reasoning_effort = False  # grok-4 rejects reasoning_effort
    elif server == "deepseek":
        compat.supports_reasoning_effort = False  # deepseek-reasoner always thinks
    elif server == "mistral":
        compat.supports_usage_in_streaming = False  # strict schema; usage comes anyway
        compat.supports_reasoning_effort = False
        compat.requires_tool_result_name = True
        compat.requires_assistant_after_tool_result = True
        compat.requires_mistral_tool_ids = True
        compat.requires_thinking_as_text = True
    elif server == "zai":
        compat.thinking_format = "zai"
    elif server == "qwen":
        compat.thinking_format = "qwen"
    elif server == "ollama":
        compat.reasoning_field = "reasoning"
    elif server == "vllm":
        compat.reasoning_field = "reasoning"
    return compat


DEFAULT_BASE_URLS = {
    "openai": "https://api.openai.com/v1",
    "openrouter": "https://openrouter.ai/api/v1",
    "groq": "https://api.groq.com/openai/v1",
    "xai": "https://api.x.ai/v1",
    "deepseek": "https://api.deepseek.com",
    "mistral": "https://api.mistral.ai/v1",
    "zai": "https://api.z.ai/api/paas/v4",
    "qwen": "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
    "ollama": "http://localhost:11434/v1",
    "lmstudio": "http://localhost:1234/v1",
    "llamacpp": "http://localhost:8080/v1",
    "vllm": "http://localhost:8000/v1",
}


def resolve_compat(model: Model) -> OpenAICompat:
    """Detected defaults for ``model`` with ``model.compat`` applied on top.

    Raises ``ValueError`` with a clear message when a known key has a value of the wrong type.
    """
    compat = default_compat(model.provider, model.base_url)
    if compat.server == "groq" and "qwen3" in model.id.lower():
        # Groq's Qwen3 takes reasoning_effort "none" | "default" only.
        compat.reasoning_effort_map = dict.fromkeys(_OPENAI_LEVELS, "default")
    overrides = model.compat or {}
    for key, value in overrides.items():
        spec = COMPAT_KEYS.get(key)
        if spec is None:
            continue
        attr, expected = spec
        if isinstance(value, bool) and expected is int or not isinstance(value, expected):
            raise ValueError(f"model.compat.{key} for {model.provider}/{model.id} has an invalid value {value!r}")
        if attr == "reasoning_effort_map":
            pairs = cast("dict[object, object]", value).items()  # a dict: checked against ``expected``
            value = {**compat.reasoning_effort_map, **{str(k): str(v) for k, v in pairs}}
        setattr(compat, attr, value)
    if compat.thinking_format not in THINKING_FORMATS:
        raise ValueError(
            f"model.compat.thinkingFormat {compat.thinking_format!r} is not one of {', '.join(THINKING_FORMATS)}"
        )
    if compat.max_tokens_field is not None and compat.max_tokens_field not in MAX_TOKENS_FIELDS:
        raise ValueError(
            f"model.compat.maxTokensField {compat.max_tokens_field!r} is not one of {', '.join(MAX_TOKENS_FIELDS)}"
        )
    return compat


def describe(compat: OpenAICompat) -> dict[str, Any]:
    """The resolved switches as camelCase keys (for diagnostics and tests)."""
    return {key: getattr(compat, attr) for key, (attr, _) in COMPAT_KEYS.items()}


def _mistral_id(value: str) -> str:
    if _MISTRAL_ID.match(value):
        return value
    number = int.from_bytes(hashlib.sha256(value.encode("utf-8")).digest()[:8], "big")
    chars = []
    for _ in range(9):
        number, rest = divmod(number, 62)
        chars.append(_BASE62[rest])
    return "".join(chars)


def normalize_tool_call_id(tool_call_id: str, compat: OpenAICompat) -> str:
    """Another provider's tool-call id in a form this server accepts (deterministic)."""
    if compat.requires_mistral_tool_ids:
        return _mistral_id(tool_call_id)
    # OpenAI Responses ids are "call_x|fc_y": the call id is the part the API knows.
    base = tool_call_id.partition("|")[0] or tool_call_id
    cleaned = _UNSAFE_ID_CHARS.sub("_", base)
    limit = max(compat.tool_call_id_max_length, 12)
    if len(cleaned) > limit:
        digest = hashlib.sha1(tool_call_id.encode("utf-8")).hexdigest()[:10]
        cleaned = f"{cleaned[: limit - 11]}_{digest}"
    return cleaned or "call_" + hashlib.sha1(tool_call_id.encode("utf-8")).hexdigest()[:12]
