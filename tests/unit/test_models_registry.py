"""ModelRegistry: bundled catalog, models.json merging, availability, resolve, extensions."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

import pytest

from tests.support.loopback import sse_reply
from wolli.ai import Context, Model, StreamOptions, Usage, UserMessage, calculate_cost, complete
from wolli.ai.auth import AuthStorage
from wolli.ai.builder import MessageBuilder
from wolli.ai.http import merge_headers, open_stream, sse_events
from wolli.ai.models import ModelRegistry, builtin_models
from wolli.ai.stream import get_api, known_apis, register_api, unregister_api

REQUIRED_PROVIDERS = {"anthropic", "openai", "google", "openrouter", "groq", "xai", "mistral", "deepseek"}


def write_models(home: Path, data: object) -> Path:
    path = home / "models.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


# ---------------------------------------------------------------------- catalog


def test_catalog_ships_as_package_data():
    raw = json.loads((files("wolli.ai") / "data/models.json").read_text(encoding="utf-8"))
    assert isinstance(raw, list) and len(raw) >= 40
    for entry in raw:
        assert set(entry) <= {"id", "name", "api", "provider", "baseUrl", "reasoning", "input", "cost",
                              "contextWindow", "maxTokens", "compat"}, entry["id"]
        assert set(entry["cost"]) == {"input", "output", "cacheRead", "cacheWrite"}


def test_catalog_entries_are_sane():
    models = builtin_models()
    keys = [m.key for m in models]
    assert len(keys) == len(set(keys))
    assert {m.provider for m in models} == REQUIRED_PROVIDERS
    apis = set(known_apis())
    for m in models:
        assert m.api in apis
        assert m.base_url.startswith("https://"), m.key
        assert m.name and m.name != m.id or m.id.startswith("o"), m.key
        assert 0 < m.max_tokens <= m.context_window, m.key
        costs = (m.cost.input, m.cost.output, m.cost.cache_read, m.cost.cache_write)
        assert all(c >= 0 for c in costs) and m.cost.output >= m.cost.input > 0, m.key
        assert "text" in m.input


def test_catalog_api_per_provider():
    by_key = {m.key: m for m in builtin_models()}
    assert {m.api for m in by_key.values() if m.provider == "anthropic"} == {"anthropic-messages"}
    assert {m.api for m in by_key.values() if m.provider == "google"} == {"google-generative-ai"}
    assert by_key["openai/gpt-5"].api == "openai-responses"
    assert by_key["openai/o3"].api == "openai-responses"
    assert by_key["openai/gpt-4o-mini"].api == "openai-completions"
    for provider, url in {
        "openrouter": "https://openrouter.ai/api/v1", "groq": "https://api.groq.com/openai/v1",
        "xai": "https://api.x.ai/v1", "mistral": "https://api.mistral.ai/v1", "deepseek": "https://api.deepseek.com",
    }.items():
        routes = [m for m in by_key.values() if m.provider == provider]
        assert routes and all(m.api == "openai-completions" and m.base_url == url for m in routes)
    haiku = by_key["anthropic/claude-haiku-4-5"]
    assert (haiku.cost.input, haiku.cost.output, haiku.cost.cache_read, haiku.cost.cache_write) == (1, 5, 0.1, 1.25)
    for expected in ("anthropic/claude-sonnet-4-6", "openai/gpt-5-mini", "openai/gpt-4.1", "google/gemini-2.5-pro",
                     "google/gemini-2.5-flash-lite", "deepseek/deepseek-reasoner", "mistral/codestral-latest"):
        assert expected in by_key


def test_builtin_models_are_fresh_copies():
    first = builtin_models()
    first[0].base_url = "http://mutated"
    assert builtin_models()[0].base_url != "http://mutated"


def test_cost_from_catalog_prices():
    model = ModelRegistry().get("anthropic/claude-sonnet-4-6")
    usage = calculate_cost(model, Usage(input=1_000_000, output=200_000, cache_read=2_000_000, cache_write=100_000))
    assert usage.cost.input == pytest.approx(3.0)
    assert usage.cost.output == pytest.approx(3.0)
    assert usage.cost.cache_read == pytest.approx(0.6)
    assert usage.cost.cache_write == pytest.approx(0.375)
    assert usage.cost.total == pytest.approx(6.975)


# ---------------------------------------------------------------------- lookups


def test_find_get_all():
    registry = ModelRegistry()
    assert registry.load_errors == []
    assert len(registry.all()) == len(builtin_models())
    assert registry.find("openai", "gpt-5-mini").key == "openai/gpt-5-mini"
    assert registry.find("OpenAI", "GPT-5-MINI").id == "gpt-5-mini"
    assert registry.find("openai", "nope") is None
    routed = registry.get("openrouter/anthropic/claude-sonnet-4.6")
    assert routed.provider == "openrouter" and routed.id == "anthropic/claude-sonnet-4.6"
    assert registry.get("claude-sonnet-4-6") is None
    assert registry.providers()[:3] == ["anthropic", "openai", "google"]


def test_available_follows_keys(wolli_home, monkeypatch):
    registry = ModelRegistry()
    assert registry.available() == []
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env")
    AuthStorage().set_api_key("groq", "gsk")
    providers = {m.provider for m in registry.available()}
    assert providers == {"anthropic", "groq"}
    assert registry.get_api_key(registry.get("anthropic/claude-haiku-4-5")) == "sk-env"
    assert registry.get_api_key("groq") == "gsk"
    assert registry.get_api_key("openai") is None
    assert registry.get_api_key("openai", override="sk-cli") == "sk-cli"


# ---------------------------------------------------------------------- models.json


def test_custom_local_provider(wolli_home, loopback):
    write_models(wolli_home, {"providers": {"ollama": {
        "baseUrl": f"{loopback.url}/v1/",
        "api": "openai-completions",
        "headers": {"X-Box": "desk"},
        "models": [
            {"id": "qwen3-coder:30b", "name": "Qwen3 Coder 30B", "contextWindow": 65536, "reasoning": True},
            {"id": "llama3.2", "headers": {"X-Box": "laptop", "X-Extra": "1"}, "input": ["text", "image"]},
        ],
    }}})
    registry = ModelRegistry()
    assert registry.load_errors == []
    qwen = registry.find("ollama", "qwen3-coder:30b")
    assert qwen.api == "openai-completions"
    assert qwen.base_url == f"{loopback.url}/v1"
    assert qwen.headers == {"X-Box": "desk"}
    assert (qwen.name, qwen.context_window, qwen.reasoning) == ("Qwen3 Coder 30B", 65536, True)
    assert qwen.max_tokens == 16_384 and qwen.cost.input == 0
    llama = registry.get("ollama/llama3.2")
    assert llama.name == "llama3.2"
    assert llama.headers == {"X-Box": "laptop", "X-Extra": "1"}
    assert llama.input == ["text", "image"]
    # No apiKey: a local server needs none, so its models are available without any key.
    assert {m.key for m in registry.available()} == {"ollama/qwen3-coder:30b", "ollama/llama3.2"}
    assert registry.get_api_key(qwen) is None
    model, thinking = registry.resolve("ollama/qwen3-coder:30b")
    assert model is qwen and thinking is None
    model, thinking = registry.resolve("qwen3-coder:30b:high")
    assert model.key == "ollama/qwen3-coder:30b" and thinking == "high"


async def test_models_json_provider_streams_from_a_local_server(wolli_home, loopback):
    """A models.json provider reaches a real HTTP server with its baseUrl, headers and key."""

    async def run(model: Model, context: Context, options: StreamOptions, builder: MessageBuilder) -> None:
        headers = merge_headers({"authorization": f"Bearer {options.api_key}"}, model.headers)
        payload = {"model": model.id, "prompt": context.messages[-1].content}
        async with open_stream(f"{model.base_url}/complete", headers, payload, options) as response:
            builder.start()
            index = builder.text_start()
            async for event in sse_events(response):
                data = json.loads(event.data)
                if "text" in data:
                    builder.text_delta(index, data["text"])
                else:
                    builder.message.usage.input = data["input"]
                    builder.message.usage.output = data["output"]
            builder.done("stop")

    register_api("test-local-echo", run)
    try:
        write_models(wolli_home, {"providers": {"box": {
            "baseUrl": loopback.url, "api": "test-local-echo", "apiKey": "!echo sk-local-box",
            "headers": {"X-Box": "1"},
            "models": [{"id": "tiny", "cost": {"input": 2, "output": 10}}],
        }}})
        loopback.push(sse_reply('data: {"text": "hel"}\n\ndata: {"text": "lo"}\n\n'
                                'data: {"input": 500000, "output": 100000}\n\n'))
        registry = ModelRegistry()
        model, _ = registry.resolve("box/tiny")
        key = registry.get_api_key(model)
        message = await complete(model, Context(messages=[UserMessage(content="hi")]), {"api_key": key})
    finally:
        unregister_api("test-local-echo")
    assert message.stop_reason == "stop", message.error_message
    assert message.content[0].text == "hello"
    request = loopback.last
    assert request.path == "/complete"
    assert request.headers["authorization"] == "Bearer sk-local-box"
    assert request.headers["x-box"] == "1"
    assert request.json == {"model": "tiny", "prompt": "hi"}
    assert message.usage.cost.input == pytest.approx(1.0)
    assert message.usage.cost.output == pytest.approx(1.0)
    assert message.usage.cost.total == pytest.approx(2.0)


def test_override_builtin_provider_base_url_headers_and_key(wolli_home, monkeypatch):
    write_models(wolli_home, {"providers": {"openai": {
        "baseUrl": "http://proxy.local:8080/v1", "headers": {"X-Proxy": "yes"}, "apiKey": "PROXY_TOKEN",
    }}})
    monkeypatch.setenv("PROXY_TOKEN", "tok-proxy")
    registry = ModelRegistry()
    assert registry.load_errors == []
    gpt = registry.get("openai/gpt-5-mini")
    assert gpt.base_url == "http://proxy.local:8080/v1"
    assert gpt.headers == {"X-Proxy": "yes"}
    assert gpt.api == "openai-responses" and gpt.cost.input == 0.25  # the rest is the catalog's
    assert registry.get("anthropic/claude-haiku-4-5").base_url == "https://api.anthropic.com"
    assert registry.get_api_key("openai") == "tok-proxy"
    assert {m.provider for m in registry.available()} == {"openai"}
    # auth.json and the environment still come first.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    assert registry.get_api_key("openai") == "sk-env"


def test_custom_model_under_builtin_provider_and_partial_override(wolli_home):
    write_models(wolli_home, {"providers": {"anthropic": {"models": [
        {"id": "claude-haiku-4-5", "contextWindow": 100000, "cost": {"input": 0.5}},
        {"id": "claude-next-preview", "name": "Claude Next", "reasoning": True},
    ]}}})
    registry = ModelRegistry()
    assert registry.load_errors == []
    haiku = registry.get("anthropic/claude-haiku-4-5")
    assert haiku.context_window == 100000
    assert (haiku.cost.input, haiku.cost.output) == (0.5, 5)  # unspecified prices kept
    assert haiku.name == "Claude Haiku 4.5"
    new = registry.get("anthropic/claude-next-preview")
    assert new.api == "anthropic-messages" and new.base_url == "https://api.anthropic.com"
    assert len(registry.all()) == len(builtin_models()) + 1


def test_malformed_models_json_keeps_the_catalog(wolli_home):
    path = write_models(wolli_home, '{"providers": {"ollama": {"baseUrl": "http://x"')
    registry = ModelRegistry()
    assert len(registry.all()) == len(builtin_models())
    [error] = registry.load_errors
    assert error.startswith(f"{path}:1:") and "not valid JSON" in error


def test_wrong_shapes_are_reported_per_entry(wolli_home):
    write_models(wolli_home, {"providers": {
        "good": {"baseUrl": "http://127.0.0.1:1/v1", "api": "openai-completions", "models": [
            {"id": "ok-model"},
            {"name": "no id"},
            {"id": "bad-window", "contextWindow": "lots"},
            "just-a-string",
            {"id": "typo", "maxToken": 5},
        ]},
        "noapi": {"baseUrl": "http://127.0.0.1:2", "models": [{"id": "m"}]},
        "nourl": {"api": "openai-completions", "models": [{"id": "m"}]},
        "empty": {"baseUrl": "http://127.0.0.1:3", "api": "openai-completions"},
        "typoapi": {"baseUrl": "http://127.0.0.1:4", "api": "openai-completion", "models": [{"id": "m"}]},
        "badheaders": {"baseUrl": "http://127.0.0.1:5", "api": "openai-completions", "headers": {"X": 1},
                       "models": [{"id": "m"}]},
        "weird": {"baseURL": "http://127.0.0.1:6", "api": "openai-completions", "models": [{"id": "m"}]},
    }})
    registry = ModelRegistry()
    errors = "\n".join(registry.load_errors)
    assert registry.get("good/ok-model") is not None
    assert registry.get("good/typo") is not None  # unknown key ignored, model kept
    assert 'providers.good.models[1]: missing "id" (the model name the server expects); model skipped' in errors
    assert "providers.good.models[2] (bad-window)" in errors and "contextWindow" in errors
    assert "providers.good.models[3]" in errors
    assert "'maxToken' (did you mean 'maxTokens'?)" in errors
    assert registry.get("noapi/m") is None and 'providers.noapi.models[0] (m): missing "api"' in errors
    assert registry.get("nourl/m") is None and 'providers.nourl.models[0] (m): missing "baseUrl"' in errors
    assert "providers.empty: defines no models" in errors
    assert "unknown api 'openai-completion'; did you mean 'openai-completions'?" in errors
    assert "providers.badheaders: 'headers' must be an object of string values" in errors
    assert registry.get("badheaders/m") is None
    assert "'baseURL' (did you mean 'baseUrl'?)" in errors
    assert len(registry.all()) >= len(builtin_models()) + 2


def test_every_missing_field_is_named_at_once(wolli_home):
    write_models(wolli_home, {"providers": {"bare": {"models": [{"name": "nothing else"}, {"id": "m"}]}}})
    errors = ModelRegistry().load_errors
    assert errors[0].endswith(
        'providers.bare.models[0]: missing "id" (the model name the server expects), "api" (on the provider or '
        'the model, e.g. "openai-completions") and "baseUrl" (on the provider, e.g. "http://localhost:11434/v1"); '
        "model skipped")
    assert errors[1].endswith('providers.bare.models[1] (m): missing "api" (on the provider or the model, e.g. '
                              '"openai-completions") and "baseUrl" (on the provider, e.g. "http://localhost:11434/v1"); '
                              "model skipped")


def test_pis_compat_object_is_read_at_provider_and_model_level(wolli_home):
    from wolli.ai.providers.openai_compat import resolve_compat
    from wolli.ai.providers.openai_completions import build_payload
    from wolli.ai.types import Context, StreamOptions

    write_models(wolli_home, {"providers": {"proxy": {
        "baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions",
        "compat": {"supportsUsageInStreaming": False, "maxTokensField": "max_tokens", "supportsStore": True,
                   "openRouterRouting": {"only": ["anthropic"]}, "supportsStrictMode": True},
        "models": [{"id": "a"},
                   {"id": "b", "compat": {"supportsStore": False, "thinkingFormat": "deepseek", "maxTokenField": 1}}],
    }}})
    registry = ModelRegistry()
    errors = registry.load_errors
    assert len(errors) == 2, errors
    assert errors[0].endswith("providers.proxy.models[1] (b).compat.thinkingFormat: 'deepseek' is not one of "
                              "openai, openrouter, zai, qwen, qwen-chat-template, none (Wolli's values); the detected "
                              "default applies")
    assert errors[1].endswith("providers.proxy.models[1] (b).compat.maxTokenField: unknown compat key (did you mean "
                              "'maxTokensField'?); ignored")
    a, b = registry.get("proxy/a"), registry.get("proxy/b")
    assert resolve_compat(a).supports_store is True and resolve_compat(b).supports_store is False
    assert resolve_compat(b).supports_usage_in_streaming is False and resolve_compat(b).thinking_format == "openai"
    payload = build_payload(a, Context(messages=[]), StreamOptions(max_tokens=100))
    assert payload["provider"] == {"only": ["anthropic"]} and "stream_options" not in payload
    assert payload["max_tokens"] == 100 and payload["store"] is False


def test_top_level_must_be_providers(wolli_home):
    write_models(wolli_home, [1, 2])
    registry = ModelRegistry()
    assert len(registry.all()) == len(builtin_models())
    assert "expected {\"providers\"" in registry.load_errors[0]


def test_refresh_rereads_models_json(wolli_home):
    registry = ModelRegistry()
    assert registry.get("lm/studio") is None
    write_models(wolli_home, {"providers": {"lm": {
        "baseUrl": "http://127.0.0.1:1234/v1", "api": "openai-completions", "models": [{"id": "studio"}]}}})
    assert registry.get("lm/studio") is None  # loaded once, until refresh
    registry.refresh()
    assert registry.get("lm/studio").base_url == "http://127.0.0.1:1234/v1"
    write_models(wolli_home, "{oops")
    registry.refresh()
    assert registry.get("lm/studio") is None and registry.load_errors


def test_explicit_models_path(tmp_path):
    path = tmp_path / "elsewhere.json"
    write_models(tmp_path, {"providers": {}})
    path.write_text(json.dumps({"providers": {"x": {
        "baseUrl": "http://127.0.0.1:9", "api": "openai-completions", "models": [{"id": "y"}]}}}))
    assert ModelRegistry(models_path=path).get("x/y") is not None


# ---------------------------------------------------------------------- resolve


def test_resolve_exact_forms():
    registry = ModelRegistry()
    assert registry.resolve("anthropic/claude-opus-4-7") == (registry.get("anthropic/claude-opus-4-7"), None)
    model, level = registry.resolve("anthropic/claude-opus-4-7:xhigh")
    assert model.id == "claude-opus-4-7" and level == "xhigh"
    model, level = registry.resolve("gpt-5-mini:LOW")
    assert model.key == "openai/gpt-5-mini" and level == "low"
    # The same id on two providers: the direct provider wins when neither has a key.
    assert registry.resolve("anthropic/claude-sonnet-4.6")[0].key == "openrouter/anthropic/claude-sonnet-4.6"
    assert registry.resolve("openrouter/anthropic/claude-sonnet-4.6")[0].provider == "openrouter"


def test_resolve_fuzzy_prefers_newest_and_shortest():
    registry = ModelRegistry()
    assert registry.resolve("sonnet-4.6")[0].key == "anthropic/claude-sonnet-4-6"
    assert registry.resolve("Sonnet 4.6")[0].key == "anthropic/claude-sonnet-4-6"
    assert registry.resolve("opus 4.7")[0].key == "anthropic/claude-opus-4-7"
    assert registry.resolve("haiku")[0].key == "anthropic/claude-haiku-4-5"
    assert registry.resolve("4o")[0].key == "openai/gpt-4o"
    assert registry.resolve("gemini-2.5")[0].key == "google/gemini-2.5-pro"
    assert registry.resolve("deepseek")[0].provider == "deepseek"
    opus = registry.resolve("opus")[0]
    newest = max((m for m in registry.all() if m.provider == "anthropic" and "opus" in m.id),
                 key=lambda m: tuple(int(p) for p in m.id.split("-")[2:]))
    assert opus.key == newest.key
    model, level = registry.resolve("openrouter/haiku:medium")
    assert model.key == "openrouter/anthropic/claude-haiku-4.5" and level == "medium"


def test_resolve_prefers_available_models(wolli_home, monkeypatch):
    registry = ModelRegistry()
    assert registry.resolve("sonnet-4.6")[0].provider == "anthropic"
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or")
    assert registry.resolve("sonnet-4.6")[0].provider == "openrouter"
    assert registry.resolve("anthropic/claude-sonnet-4.6")[0].provider == "openrouter"


def test_resolve_errors_suggest():
    registry = ModelRegistry()
    with pytest.raises(ValueError, match="did you mean anthropic/claude-sonnet-4-6"):
        registry.resolve("claude-sonet-4-6-x")
    with pytest.raises(ValueError, match="unknown provider 'nowhere'"):
        registry.resolve("nowhere/zzzz")
    with pytest.raises(ValueError, match="unknown thinking level 'ultra'"):
        registry.resolve("claude-opus-4-7:ultra")
    with pytest.raises(ValueError, match="empty model name"):
        registry.resolve("  ")


# ---------------------------------------------------------------------- extensions


def test_register_provider_with_stream_and_unregister(wolli_home):
    async def run(model, context, options, builder):  # pragma: no cover - registration only
        builder.done("stop")

    registry = ModelRegistry()
    registry.register_provider("corp", {
        "base_url": "https://llm.corp.example/v1", "api": "corp-gateway", "api_key": "sk-corp",
        "stream": run, "models": [{"id": "corp-large", "context_window": 32000, "cost": {"cache_read": 0.1}}],
    })
    model = registry.get("corp/corp-large")
    assert (model.api, model.base_url, model.context_window, model.cost.cache_read) == (
        "corp-gateway", "https://llm.corp.example/v1", 32000, 0.1)
    assert get_api("corp-gateway") is run
    assert registry.get_api_key(model) == "sk-corp"
    assert model in registry.available()
    registry.refresh()  # extension providers survive a models.json reload
    assert registry.get("corp/corp-large") is not None
    assert registry.unregister_provider("corp") is True
    assert registry.get("corp/corp-large") is None
    assert get_api("corp-gateway") is None
    assert registry.unregister_provider("corp") is False


def test_register_provider_overrides_builtin_and_restores(wolli_home):
    registry = ModelRegistry()
    registry.register_provider("anthropic", {"baseUrl": "http://127.0.0.1:7/anthropic"})
    assert registry.get("anthropic/claude-haiku-4-5").base_url == "http://127.0.0.1:7/anthropic"
    registry.unregister_provider("anthropic")
    assert registry.get("anthropic/claude-haiku-4-5").base_url == "https://api.anthropic.com"


def test_register_provider_rejects_bad_config(wolli_home):
    registry = ModelRegistry()
    with pytest.raises(ValueError, match="without '/'"):
        registry.register_provider("a/b", {})
    with pytest.raises(ValueError, match="defines no models"):
        registry.register_provider("ghost", {"baseUrl": "http://x", "api": "openai-completions"})
    with pytest.raises(ValueError, match="'baseurl' \\(did you mean 'baseUrl'\\?\\)"):
        registry.register_provider("typo", {"baseurl": "http://x", "api": "openai-completions",
                                            "models": [{"id": "m"}]})
    with pytest.raises(ValueError, match="own api name"):
        registry.register_provider("hijack", {"api": "anthropic-messages", "stream": lambda *a: None,
                                              "models": [{"id": "m"}]})
    with pytest.raises(ValueError, match="'stream' must be a callable"):
        registry.register_provider("s", {"stream": "nope", "models": [{"id": "m"}]})
    assert registry.get("typo/m") is None and registry.get("hijack/m") is None
    assert "hijack" not in known_apis() and get_api("anthropic-messages") is not None
    assert registry.load_errors == []


def test_registry_uses_given_auth_storage(tmp_path):
    auth = AuthStorage(tmp_path / "private-auth.json")
    auth.set_api_key("xai", "xai-key")
    registry = ModelRegistry(auth=auth)
    assert registry.auth is auth
    assert {m.provider for m in registry.available()} == {"xai"}
    assert registry.get_api_key("xai") == "xai-key"


def test_reregistering_replaces_the_stream(wolli_home):
    async def first(model, context, options, builder):  # pragma: no cover - registration only
        builder.done("stop")

    async def second(model, context, options, builder):  # pragma: no cover - registration only
        builder.done("stop")

    registry = ModelRegistry()
    registry.register_provider("gw", {"api": "gw-api", "stream": first, "models": [{"id": "m"}]})
    registry.register_provider("gw", {"api": "gw-api", "stream": second, "models": [{"id": "m"}]})
    assert get_api("gw-api") is second
    registry.register_provider("gw", {"baseUrl": "http://127.0.0.1:1/v1", "api": "openai-completions",
                                      "models": [{"id": "m"}]})
    assert get_api("gw-api") is None
    assert registry.get("gw/m").api == "openai-completions"
    registry.unregister_provider("gw")


def test_a_model_id_with_a_line_break_is_quoted_in_its_one_line_error(wolli_home):
    write_models(wolli_home, {"providers": {"local": {"models": [{"id": "0\n"}]}}})
    errors = ModelRegistry().load_errors
    assert len(errors) == 1 and "\n" not in errors[0].strip()
    assert 'providers.local.models[0] ("0\\n"): missing "api"' in errors[0]
