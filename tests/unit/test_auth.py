"""AuthStorage: auth.json on disk, key commands as real subprocesses, env precedence."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

from wolli.ai.auth import AuthError, AuthStorage, clear_command_cache, resolve_key_value
from wolli.ai.env_keys import ENV_KEYS, env_var_names, get_env_api_key


@pytest.fixture(autouse=True)
def _fresh_command_cache():
    clear_command_cache()
    yield
    clear_command_cache()


def write_auth(home: Path, data: object) -> Path:
    path = home / "auth.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# ---------------------------------------------------------------------- reading


def test_default_path_is_in_wolli_home(wolli_home):
    auth = AuthStorage()
    assert auth.path == wolli_home / "auth.json"
    assert auth.get_api_key("anthropic") is None
    assert auth.list_providers() == []
    assert auth.load_error is None


def test_short_and_long_entry_forms(wolli_home):
    write_auth(wolli_home, {"anthropic": "sk-ant-short", "openai": {"type": "api_key", "key": "sk-oai-long"}})
    auth = AuthStorage()
    assert auth.get_api_key("anthropic") == "sk-ant-short"
    assert auth.get_api_key("openai") == "sk-oai-long"
    assert auth.list_providers() == ["anthropic", "openai"]
    assert auth.key_source("openai") == "auth.json"


def test_value_naming_a_set_env_var_reads_it(wolli_home, monkeypatch):
    monkeypatch.setenv("MY_TEAM_ANTHROPIC", "sk-from-env-var")
    write_auth(wolli_home, {"anthropic": "MY_TEAM_ANTHROPIC", "openai": "NOT_SET_ANYWHERE_XYZ"})
    auth = AuthStorage()
    assert auth.get_api_key("anthropic") == "sk-from-env-var"
    # An all-caps value that is not a set variable is taken literally.
    assert auth.get_api_key("openai") == "NOT_SET_ANYWHERE_XYZ"


def test_bang_command_runs_in_a_shell(wolli_home):
    write_auth(wolli_home, {"anthropic": "!echo sk-test", "openai": {"type": "api_key", "key": "!printf ' sk-p \\n'"}})
    auth = AuthStorage()
    assert auth.get_api_key("anthropic") == "sk-test"
    assert auth.get_api_key("openai") == "sk-p"


def test_bang_command_is_cached_per_process(wolli_home, tmp_path):
    counter = tmp_path / "calls"
    write_auth(wolli_home, {"anthropic": f"!echo x >> {counter}; echo sk-once"})
    auth = AuthStorage()
    assert auth.get_api_key("anthropic") == "sk-once"
    assert AuthStorage().get_api_key("anthropic") == "sk-once"
    assert counter.read_text().count("x") == 1
    clear_command_cache()
    assert auth.get_api_key("anthropic") == "sk-once"
    assert counter.read_text().count("x") == 2


def test_failing_command_gives_a_clear_error(wolli_home):
    write_auth(wolli_home, {"anthropic": "!echo vault is locked >&2; exit 3"})
    with pytest.raises(AuthError) as info:
        AuthStorage().get_api_key("anthropic")
    message = str(info.value)
    assert "auth.json entry for 'anthropic'" in message
    assert "exit code 3" in message
    assert "vault is locked" in message


def test_command_printing_nothing_is_an_error():
    with pytest.raises(AuthError, match="printed nothing"):
        resolve_key_value("!true", what="test")
    with pytest.raises(AuthError, match="must be followed by a shell command"):
        resolve_key_value("!", what="test")


def test_command_timeout_kills_the_whole_pipeline(wolli_home, tmp_path):
    marker = tmp_path / "finished"
    write_auth(wolli_home, {"anthropic": f"!sleep 30; touch {marker}; echo late"})
    auth = AuthStorage(command_timeout=0.3)
    started = time.monotonic()
    with pytest.raises(AuthError, match="did not finish within 0.3s"):
        auth.get_api_key("anthropic")
    assert time.monotonic() - started < 10  # not the 30 s the command wanted
    assert not marker.exists()


def test_a_command_printing_without_end_is_stopped_at_once(wolli_home):
    import time

    auth = AuthStorage()
    started = time.monotonic()
    with pytest.raises(AuthError, match="printed more than 64 KB; a key command prints the key and nothing else"):
        resolve_key_value("!yes", what="auth.json entry for 'x'", timeout=auth.command_timeout)
    assert time.monotonic() - started < 5  # not the 15 s timeout


def test_failed_command_is_not_cached(wolli_home, tmp_path):
    flag = tmp_path / "ok"
    write_auth(wolli_home, {"anthropic": f"!test -e {flag} && echo sk-later"})
    auth = AuthStorage()
    with pytest.raises(AuthError):
        auth.get_api_key("anthropic")
    flag.touch()
    assert auth.get_api_key("anthropic") == "sk-later"


def test_has_auth_never_runs_commands(wolli_home, tmp_path):
    marker = tmp_path / "ran"
    write_auth(wolli_home, {"anthropic": f"!touch {marker}; echo k"})
    auth = AuthStorage()
    assert auth.has_auth("anthropic")
    assert not auth.has_auth("openai")
    assert not marker.exists()


# ---------------------------------------------------------------------- precedence


def test_precedence_override_then_file_then_env_then_fallback(wolli_home, monkeypatch):
    auth = AuthStorage()
    fallback = {"anthropic": "sk-from-models-json"}
    auth.set_fallback_resolver(fallback.get)
    assert auth.get_api_key("anthropic") == "sk-from-models-json"
    assert auth.key_source("anthropic") == "models.json"

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-from-env")
    assert auth.get_api_key("anthropic") == "sk-from-env"
    assert auth.key_source("anthropic") == "env:ANTHROPIC_API_KEY"

    auth.set_api_key("anthropic", "sk-from-file")
    assert auth.get_api_key("anthropic") == "sk-from-file"

    auth.set_runtime_api_key("anthropic", "sk-runtime")
    assert auth.get_api_key("anthropic") == "sk-runtime"
    assert auth.key_source("anthropic") == "runtime"

    assert auth.get_api_key("anthropic", override="sk-override") == "sk-override"

    auth.set_runtime_api_key("anthropic", None)
    auth.remove("anthropic")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert auth.get_api_key("anthropic") == "sk-from-models-json"


def test_fallback_value_follows_the_same_rules(wolli_home, monkeypatch):
    monkeypatch.setenv("LOCAL_PROXY_TOKEN", "tok-123")
    raw = {"proxy": "LOCAL_PROXY_TOKEN", "vault": "!echo sk-vault"}
    auth = AuthStorage()
    auth.set_fallback_resolver(raw.get)
    assert auth.get_api_key("proxy") == "tok-123"
    assert auth.get_api_key("vault") == "sk-vault"


def test_env_key_names_and_google_order(monkeypatch):
    assert env_var_names("anthropic") == ("ANTHROPIC_API_KEY",)
    assert env_var_names("google") == ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    for provider in ("openai", "openrouter", "groq", "xai", "mistral", "deepseek"):
        assert env_var_names(provider) == (f"{provider.upper()}_API_KEY",)
    assert env_var_names("my-local.box") == ("MY_LOCAL_BOX_API_KEY",)
    monkeypatch.setenv("GOOGLE_API_KEY", "g-second")
    assert get_env_api_key("google") == "g-second"
    monkeypatch.setenv("GEMINI_API_KEY", "g-first")
    assert get_env_api_key("google") == "g-first"
    monkeypatch.setenv("GEMINI_API_KEY", "   ")
    assert get_env_api_key("google") == "g-second"
    assert set(ENV_KEYS) >= {"anthropic", "openai", "google", "openrouter", "groq", "xai", "mistral", "deepseek"}


# ---------------------------------------------------------------------- writing


def test_set_api_key_writes_0600_even_with_a_permissive_umask(wolli_home):
    old = os.umask(0)
    try:
        AuthStorage().set_api_key("openai", "sk-new")
    finally:
        os.umask(old)
    path = wolli_home / "auth.json"
    assert mode_of(path) == 0o600
    assert json.loads(path.read_text()) == {"openai": {"type": "api_key", "key": "sk-new"}}
    assert sorted(p.name for p in wolli_home.iterdir()) == ["auth.json", "auth.json.lock"]  # no temp files left


def test_set_api_key_creates_the_home_and_keeps_other_entries(tmp_path):
    path = tmp_path / "nested" / "home" / "auth.json"
    auth = AuthStorage(path)
    auth.set_api_key("anthropic", "sk-a")
    auth.set_api_key("openai", "!pass show openai")
    auth.set_api_key("anthropic", "sk-a2")
    data = json.loads(path.read_text())
    assert data == {
        "anthropic": {"type": "api_key", "key": "sk-a2"},
        "openai": {"type": "api_key", "key": "!pass show openai"},
    }
    assert mode_of(path) == 0o600
    assert mode_of(path.parent) & 0o077 == 0


def test_rewriting_tightens_a_world_readable_file(wolli_home):
    path = write_auth(wolli_home, {"groq": "gsk-1"})
    path.chmod(0o644)
    AuthStorage().set_api_key("xai", "xai-1")
    assert mode_of(path) == 0o600
    assert set(json.loads(path.read_text())) == {"groq", "xai"}


def test_remove_and_list(wolli_home):
    auth = AuthStorage()
    auth.set_api_key("anthropic", "a")
    auth.set_api_key("openai", "b")
    assert auth.remove("anthropic") is True
    assert auth.remove("anthropic") is False
    assert auth.list_providers() == ["openai"]
    assert json.loads((wolli_home / "auth.json").read_text()) == {"openai": {"type": "api_key", "key": "b"}}


def test_invalid_arguments_are_rejected(wolli_home):
    auth = AuthStorage()
    with pytest.raises(ValueError):
        auth.set_api_key("", "k")
    with pytest.raises(ValueError):
        auth.set_api_key("openai", "  ")
    assert not (wolli_home / "auth.json").exists()


def test_changes_by_another_process_are_picked_up(wolli_home):
    auth = AuthStorage()
    assert auth.get_api_key("mistral") is None
    write_auth(wolli_home, {"mistral": "m-key-from-elsewhere"})
    assert auth.get_api_key("mistral") == "m-key-from-elsewhere"
    other = AuthStorage()
    other.set_api_key("mistral", "m2")
    assert auth.get_api_key("mistral") == "m2"


# ---------------------------------------------------------------------- bad files


def test_malformed_auth_json_reports_and_acts_empty(wolli_home, monkeypatch):
    path = write_auth(wolli_home, '{"anthropic": "sk-broken",')
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env")
    auth = AuthStorage()
    assert auth.get_api_key("anthropic") == "sk-env"
    assert auth.list_providers() == []
    assert auth.load_error is not None
    assert "not valid JSON" in auth.load_error and f"{path}:1:" in auth.load_error


def test_writing_refuses_to_clobber_a_malformed_file(wolli_home):
    original = '{"anthropic": "sk-typed-by-hand",'
    path = write_auth(wolli_home, original)
    with pytest.raises(AuthError, match="Fix or delete"):
        AuthStorage().set_api_key("openai", "sk-new")
    assert path.read_text() == original


def test_non_object_file_is_reported(wolli_home):
    write_auth(wolli_home, ["sk-a", "sk-b"])
    auth = AuthStorage()
    assert auth.get_api_key("anthropic") is None
    assert "expected a JSON object" in (auth.load_error or "")


def test_bad_entries_are_ignored_but_kept(wolli_home):
    path = write_auth(wolli_home, {"anthropic": 42, "openai": {"type": "oauth", "refresh": "r"}, "groq": "gsk"})
    auth = AuthStorage()
    assert auth.get_api_key("anthropic") is None
    assert auth.get_api_key("groq") == "gsk"
    assert "'anthropic'" in (auth.load_error or "") and "'openai'" in (auth.load_error or "")
    assert auth.list_providers() == ["groq"]
    auth.set_api_key("xai", "xk")
    data = json.loads(path.read_text())
    assert data["anthropic"] == 42 and data["openai"] == {"type": "oauth", "refresh": "r"}  # nothing lost
    assert data["xai"] == {"type": "api_key", "key": "xk"}


def test_empty_file_is_fine(wolli_home):
    write_auth(wolli_home, "")
    auth = AuthStorage()
    assert auth.get_api_key("openai") is None
    assert auth.load_error is None
