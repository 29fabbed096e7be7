"""Settings: global + agent files on disk, deep merge, writes, subscribers, overrides."""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path

import pytest

from wolli.config import paths
from wolli.config.settings import DEFAULTS, Settings, SettingsError, deep_merge

DOCS = Path(__file__).resolve().parents[2] / "docs" / "settings.md"


def global_file() -> Path:
    return paths.settings_path()


def agent_file(name: str | None = None) -> Path:
    return paths.agent_home(name) / "settings.json"


def put(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def on_disk(path: Path) -> object:
    return json.loads(path.read_text("utf-8"))


# ---------------------------------------------------------------------------- reading


def test_defaults_without_files() -> None:
    settings = Settings()
    assert settings.all() == DEFAULTS
    assert settings.errors == []
    assert settings.get("compaction.reserveTokens") == 16384
    assert settings["theme"] == "dark"
    assert settings.get("nothing.here", 7) == 7
    assert settings.get("theme.deeper", "x") == "x"  # a dotted key through a non-object
    assert settings.get("defaultModel", "fallback") == "fallback"  # a null value gives the default
    assert not global_file().exists() and not agent_file().exists()  # reading never writes


def test_agent_file_wins_and_objects_merge_deeply() -> None:
    put(global_file(), {"theme": "light", "compaction": {"reserveTokens": 1000, "enabled": True}, "skills": ["/g"]})
    put(agent_file(), {"theme": "mono", "compaction": {"enabled": False}, "skills": ["/a"], "custom": {"x": 1}})

    settings = Settings()

    assert settings.get("theme") == "mono"
    assert settings.get("compaction") == {"enabled": False, "reserveTokens": 1000, "keepRecentTokens": 20000}
    assert settings.get("skills") == ["/a"]  # lists replace, they do not concatenate
    assert settings.get("custom.x") == 1
    assert settings.get("retry.maxRetries") == 3


def test_each_agent_has_its_own_file() -> None:
    put(agent_file("alpha"), {"theme": "alpha-theme"})
    assert Settings("alpha").get("theme") == "alpha-theme"
    assert Settings("beta").get("theme") == "dark"
    with pytest.raises(ValueError, match="invalid agent name"):
        Settings("../escape")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"theme": "light",}', "settings.json:1:19: not valid JSON ("),
        ("[1, 2]", "must hold a JSON object"),
        ("\ufffe\x00garbage", "not valid JSON"),
    ],
)
def test_malformed_file_is_reported_and_treated_as_empty(text: str, message: str) -> None:
    put(global_file(), text)
    put(agent_file(), {"theme": "agent"})

    settings = Settings()

    assert settings.get("theme") == "agent"
    assert settings.get("compaction.enabled") is True
    assert len(settings.errors) == 1
    assert message in settings.errors[0] and str(global_file()) in settings.errors[0]


def test_empty_file_is_fine_and_unreadable_file_is_reported() -> None:
    put(global_file(), "  \n")
    agent_file().mkdir(parents=True)  # a folder where the file should be
    settings = Settings()
    assert settings.get("theme") == "dark"
    assert len(settings.errors) == 1 and "Could not read" in settings.errors[0]


def test_values_handed_out_are_copies() -> None:
    settings = Settings()
    settings.get("compaction")["enabled"] = False
    settings.all()["retry"]["maxRetries"] = 99
    settings.get("extensions").append("/x")
    assert settings.get("compaction.enabled") is True
    assert settings.get("retry.maxRetries") == 3
    assert settings.get("extensions") == []
    assert DEFAULTS["extensions"] == [] and DEFAULTS["compaction"]["enabled"] is True


# ---------------------------------------------------------------------------- writing


def test_update_writes_the_agent_file_by_default() -> None:
    put(global_file(), {"theme": "light"})
    settings = Settings()

    settings.update({"compaction": {"reserveTokens": 5}, "theme": "mono"})

    assert on_disk(agent_file()) == {"compaction": {"reserveTokens": 5}, "theme": "mono"}
    assert on_disk(global_file()) == {"theme": "light"}
    assert settings.get("compaction.reserveTokens") == 5
    assert settings.get("compaction.enabled") is True
    assert Settings().get("theme") == "mono"  # a fresh reader sees it
    leftovers = [p.name for p in agent_file().parent.iterdir() if p.name not in ("settings.json", "settings.json.lock")]
    assert leftovers == []  # written through a temporary file that was renamed away


def test_update_global_target_and_agent_still_wins() -> None:
    put(agent_file(), {"theme": "agent"})
    settings = Settings()

    settings.update({"theme": "global", "quietStartup": True}, target="global")

    assert on_disk(global_file()) == {"theme": "global", "quietStartup": True}
    assert on_disk(agent_file()) == {"theme": "agent"}
    assert settings.get("theme") == "agent"
    assert settings.get("quietStartup") is True


def test_update_merges_with_what_another_process_wrote() -> None:
    settings = Settings()
    put(agent_file(), {"defaultModel": "written-elsewhere", "compaction": {"enabled": False}})

    settings.update({"compaction": {"reserveTokens": 1}})

    assert on_disk(agent_file()) == {
        "defaultModel": "written-elsewhere",
        "compaction": {"enabled": False, "reserveTokens": 1},
    }
    assert settings.get("defaultModel") == "written-elsewhere"


def test_update_refuses_to_replace_a_malformed_file() -> None:
    broken = put(agent_file(), '{"theme": "mono", oops}')
    settings = Settings()
    seen: list[dict] = []
    settings.subscribe(seen.append)

    with pytest.raises(SettingsError, match="not valid JSON"):
        settings.update({"theme": "light"})
    with pytest.raises(SettingsError, match="left as it is"):
        settings.delete("theme")

    assert broken.read_text("utf-8") == '{"theme": "mono", oops}'
    assert seen == []
    settings.update({"theme": "light"}, target="global")  # the other file is still writable
    assert settings.get("theme") == "light"


def test_unknown_target_is_refused_and_nothing_is_written() -> None:
    settings = Settings()
    with pytest.raises(SettingsError, match="unknown settings target 'Agent'"):
        settings.update({"theme": "x"}, target="Agent")  # type: ignore[arg-type]
    with pytest.raises(SettingsError, match="objects"):
        settings.update(["theme"])  # type: ignore[arg-type]
    assert not global_file().exists() and not agent_file().exists()


def test_update_keeps_the_file_mode_and_copies_the_partial() -> None:
    put(agent_file(), {"theme": "x"}).chmod(0o600)
    settings = Settings()
    partial = {"compaction": {"enabled": False}}

    settings.update(partial)
    partial["compaction"]["enabled"] = True  # the caller's dict is not kept by reference

    assert stat.S_IMODE(agent_file().stat().st_mode) == 0o600
    assert settings.get("compaction.enabled") is False


def test_delete_dotted_key_and_missing_key() -> None:
    put(agent_file(), {"compaction": {"enabled": False, "reserveTokens": 9}, "theme": "mono"})
    put(global_file(), {"theme": "light"})
    settings = Settings()
    calls: list[dict] = []
    settings.subscribe(calls.append)

    settings.delete("compaction.reserveTokens")
    assert on_disk(agent_file()) == {"compaction": {"enabled": False}, "theme": "mono"}
    assert settings.get("compaction.reserveTokens") == 16384  # back to the default

    settings.delete("theme")
    assert settings.get("theme") == "light"  # the global value shows through

    before = agent_file().read_bytes()
    settings.delete("no.such.key")
    settings.delete("compaction.enabled.deeper")
    assert agent_file().read_bytes() == before
    assert len(calls) == 2

    settings.delete("theme", target="global")
    assert on_disk(global_file()) == {}
    assert settings.get("theme") == "dark"


# ---------------------------------------------------------------------------- subscribers and overrides


def test_subscribers_see_each_change_until_they_unsubscribe() -> None:
    settings = Settings()
    seen: list[object] = []
    after_error: list[object] = []

    def broken(_: dict) -> None:
        raise RuntimeError("subscriber bug")

    unsubscribe = settings.subscribe(lambda s: seen.append(s["theme"]))
    settings.subscribe(broken)
    settings.subscribe(lambda s: after_error.append(s["theme"]))

    settings.update({"theme": "one"})
    settings.update({"theme": "two"}, target="global")  # agent still says "one"
    unsubscribe()
    unsubscribe()  # twice is harmless
    settings.update({"theme": "three"})

    assert seen == ["one", "one"]
    assert after_error == ["one", "one", "three"]


def test_reload_reads_again_and_notifies_only_on_change() -> None:
    settings = Settings()
    seen: list[str] = []
    settings.subscribe(lambda s: seen.append(s["theme"]))

    settings.reload()
    assert seen == []
    put(agent_file(), {"theme": "edited by hand"})
    settings.reload()
    assert seen == ["edited by hand"]
    put(agent_file(), "{broken")
    settings.reload()
    assert settings.get("theme") == "dark" and len(settings.errors) == 1
    put(agent_file(), {})
    settings.reload()
    assert settings.errors == []


def test_overrides_win_and_are_never_written() -> None:
    put(agent_file(), {"theme": "agent", "retry": {"maxRetries": 1}})
    settings = Settings()
    seen: list[str] = []
    settings.subscribe(lambda s: seen.append(s["theme"]))

    settings.override({"theme": "cli", "retry": {"enabled": False}})
    settings.update({"theme": "saved"})

    assert settings.get("theme") == "cli"
    assert settings.get("retry") == {"enabled": False, "maxRetries": 1, "baseDelayMs": 2000, "maxDelayMs": 60000}
    assert on_disk(agent_file()) == {"theme": "saved", "retry": {"maxRetries": 1}}
    assert seen == ["cli", "cli"]
    settings.reload()
    assert settings.get("theme") == "cli"  # overrides survive a reload


def test_deep_merge_shares_nothing() -> None:
    base = {"a": {"b": [1]}, "keep": {"x": 1}}
    override = {"a": {"c": {"d": 2}}, "n": [3]}
    merged = deep_merge(base, override)
    merged["keep"]["x"] = 2
    merged["a"]["b"].append(9)
    merged["a"]["c"]["d"] = 5
    merged["n"].append(4)
    assert base == {"a": {"b": [1]}, "keep": {"x": 1}}
    assert override == {"a": {"c": {"d": 2}}, "n": [3]}


def test_docs_describe_every_default_key() -> None:
    text = DOCS.read_text("utf-8")
    documented = set(re.findall(r"`([A-Za-z]+(?:\.[A-Za-z]+)*)`", text))

    def keys(prefix: str, node: dict) -> list[str]:
        out = []
        for key, value in node.items():
            out.append(prefix + key)
            if isinstance(value, dict):
                out += keys(prefix + key + ".", value)
        return out

    missing = [k for k in keys("", DEFAULTS) if k not in documented]
    assert missing == []


def test_a_setting_of_the_wrong_type_is_reported_with_its_line_and_the_default_applies() -> None:
    put(global_file(), '{\n  "theme": "light",\n  "retry": {\n    "maxRetries": "three"\n  },\n'
                       '  "defaultThinkingLevel": "extreme",\n  "quietStartup": 1\n}')
    settings = Settings()
    assert settings.get("retry.maxRetries") == 3 and settings.get("theme") == "light"
    assert settings.get("defaultThinkingLevel") == "medium" and settings.get("quietStartup") is False
    where = str(global_file())
    assert settings.errors == [
        f'{where}:4: retry.maxRetries: expected a whole number, got "three"; using the default',
        f'{where}:6: defaultThinkingLevel: "extreme" is not one of off, minimal, low, medium, high, xhigh; '
        "using the default",
        f"{where}:7: quietStartup: expected true or false, got 1; using the default",
    ]
