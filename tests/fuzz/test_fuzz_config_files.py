"""Fuzzing what users write by hand: ``models.json``, ``settings.json`` and ``keybindings.json``.

Documents are generated from the real shapes with any field swapped for a value of another
type, and some are then damaged as text (a byte changed, the end cut off). Property: loading
never raises; every problem is reported as ``<file>:<line>: ...`` naming the file; what is
valid still loads (the built-in models stay, a setting with a wrong type falls back to its
default, the good key bindings are kept).
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wolli.ai.auth import AuthStorage
from wolli.ai.models import ModelRegistry
from wolli.config.keybindings import ACTIONS, load_keybindings
from wolli.config.settings import DEFAULTS, SCHEMA, Settings

FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

scalar = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**6), st.floats(allow_nan=False), st.text(max_size=12))
anything = st.recursive(scalar, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                         st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                        max_leaves=6)


def sometimes(value: st.SearchStrategy) -> st.SearchStrategy:
    """The right kind of value most of the time, anything else sometimes."""
    return st.one_of(value, value, value, anything)


model_entry = st.fixed_dictionaries(
    {"id": sometimes(st.text(min_size=1, max_size=10))},
    optional={
        "name": sometimes(st.text(max_size=10)),
        "reasoning": sometimes(st.booleans()),
        "input": sometimes(st.lists(st.sampled_from(["text", "image", "audio"]), max_size=2)),
        "contextWindow": sometimes(st.integers(0, 10**6)),
        "maxTokens": sometimes(st.integers(0, 10**5)),
        "cost": sometimes(st.fixed_dictionaries({}, optional={"input": st.floats(0, 10), "output": st.floats(0, 10)})),
    },
)
provider_entry = st.fixed_dictionaries(
    {},
    optional={
        "baseUrl": sometimes(st.sampled_from(["http://127.0.0.1:9/v1", "https://x.test", "", "not a url"])),
        "api": sometimes(st.sampled_from(["openai-completions", "anthropic-messages", "openai-responses",
                                          "google-generative-ai", "openai-chat", "anthropic"])),
        "apiKey": sometimes(st.sampled_from(["KEY_VAR", "sk-literal", "!echo hi"])),
        "models": sometimes(st.lists(model_entry, max_size=3)),
        "headers": sometimes(st.dictionaries(st.text(min_size=1, max_size=5), st.text(max_size=5), max_size=2)),
    },
)
models_doc = st.one_of(
    st.fixed_dictionaries({"providers": sometimes(st.dictionaries(
        st.sampled_from(["local", "openai", "anthropic", "x y", ""]), provider_entry, max_size=3))}),
    anything,
)
settings_doc = st.one_of(
    st.fixed_dictionaries({}, optional={key: sometimes(st.just(DEFAULTS[key])) for key in SCHEMA}),
    anything,
)
keybindings_doc = st.one_of(
    st.dictionaries(st.sampled_from([*ACTIONS, "interupt", "nope"]),
                    sometimes(st.one_of(st.sampled_from(["ctrl+s", "enter", "Escape"]),
                                        st.lists(st.sampled_from(["ctrl+x", "tab", ""]), max_size=2))),
                    max_size=4),
    anything,
)


@st.composite
def as_text(draw: st.DrawFn, documents: st.SearchStrategy) -> str:
    text = json.dumps(draw(documents), indent=draw(st.sampled_from([None, 2])))
    damage = draw(st.sampled_from(["none", "none", "flip", "cut"]))
    if damage == "flip" and text:
        at = draw(st.integers(0, len(text) - 1))
        text = text[:at] + draw(st.sampled_from(list('{}[]":,x\n'))) + text[at + 1:]
    elif damage == "cut":
        text = text[: draw(st.integers(0, len(text)))]
    return text


def each_names_the_file(errors: list[str], path: Path) -> None:
    for error in errors:
        assert error.startswith(f"{path}:") or error.startswith(str(path)), error
        assert "Traceback" not in error and "\n" not in error.strip(), error


@FUZZ
@given(as_text(models_doc))
def test_any_models_json_loads_with_named_errors_and_keeps_the_builtins(tmp_path_factory, text: str) -> None:
    folder = tmp_path_factory.mktemp("models")
    path = folder / "models.json"
    path.write_text(text)
    registry = ModelRegistry(AuthStorage(folder / "auth.json"), models_path=path)
    each_names_the_file(registry.load_errors, path)
    assert registry.find("anthropic", "claude-sonnet-4-5") is not None
    for model in registry.available():
        assert model.api and model.id


@FUZZ
@given(as_text(settings_doc), as_text(settings_doc))
def test_any_settings_json_loads_and_every_known_setting_has_its_type(tmp_path_factory, one: str, two: str) -> None:
    folder = tmp_path_factory.mktemp("settings")
    global_path, agent_path = folder / "settings.json", folder / "agent.json"
    global_path.write_text(one)
    agent_path.write_text(two)
    loaded = Settings(global_path=global_path, agent_path=agent_path)
    for error in loaded.errors:
        assert error.startswith((f"{global_path}:", f"{agent_path}:")), error
    for key, expected in SCHEMA.items():
        value = loaded.get(key)
        if value is None or value == DEFAULTS[key]:
            continue
        if isinstance(expected, tuple):
            assert value in expected, (key, value)
        elif isinstance(expected, dict):
            assert isinstance(value, dict)
            for sub, kind in expected.items():
                assert sub not in value or isinstance(value[sub], kind), (key, sub, value)
        else:
            assert isinstance(value, expected) and (expected is not int or not isinstance(value, bool)), (key, value)


@FUZZ
@given(as_text(keybindings_doc))
def test_any_keybindings_json_keeps_the_good_bindings(tmp_path_factory, text: str) -> None:
    path = tmp_path_factory.mktemp("keys") / "keybindings.json"
    path.write_text(text)
    bindings, errors = load_keybindings(path)
    each_names_the_file(errors, path)
    for action, keys in bindings.items():
        assert action in ACTIONS and keys and all(isinstance(k, str) and k for k in keys)
