"""Every RPC command through the real process, in pi's field names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import session_files
from tests.support.openai_chat import text_answer
from tests.support.rpc import MODEL, UI_PROBE, start_client, write_models
from wolli.rpc_client import RpcError


@pytest.fixture
def models(wolli_home: Path, loopback) -> None:
    write_models(wolli_home, loopback.url + "/v1")


def test_state_model_and_thinking_commands(project, wolli_home, models):
    with start_client(project, *MODEL) as client:
        state = client.get_state()
        assert state["model"]["id"] == "local-model" and state["model"]["provider"] == "local"
        assert state["model"]["contextWindow"] == 32000 and "headers" not in state["model"]
        assert state["thinkingLevel"] == "off" and state["isStreaming"] is False and state["isCompacting"] is False
        assert state["steeringMode"] == "one-at-a-time" and state["followUpMode"] == "one-at-a-time"
        assert state["sessionFile"].endswith(".jsonl") and state["sessionId"] and state["messageCount"] == 0
        assert state["autoCompactionEnabled"] is True and state["pendingMessageCount"] == 0
        assert "sessionName" not in state

        models = client.request({"type": "get_available_models"})["models"]
        assert [m["id"] for m in models] == ["local-model", "local-thinker"]
        assert client.request({"type": "get_available_thinking_levels"}) == {"levels": ["off"]}
        assert client.request({"type": "cycle_thinking_level"}) is None  # no reasoning: nothing to cycle

        chosen = client.request({"type": "set_model", "provider": "local", "modelId": "local-thinker"})
        assert chosen["id"] == "local-thinker" and chosen["reasoning"] is True
        with pytest.raises(RpcError, match="Model not found: local/nope"):
            client.request({"type": "set_model", "provider": "local", "modelId": "nope"})
        assert client.request({"type": "set_thinking_level", "level": "high"}) is None
        assert client.get_state()["thinkingLevel"] == "high"
        assert client.request({"type": "cycle_thinking_level"}) == {"level": "xhigh"}
        assert "minimal" in client.request({"type": "get_available_thinking_levels"})["levels"]

        cycled = client.request({"type": "cycle_model"})
        assert cycled["model"]["id"] == "local-model" and cycled["isScoped"] is False
        assert cycled["thinkingLevel"] == "off"
        assert client.get_state()["model"]["id"] == "local-model"

        client.request({"type": "set_steering_mode", "mode": "all"})
        client.request({"type": "set_follow_up_mode", "mode": "all"})
        client.request({"type": "set_auto_compaction", "enabled": False})
        client.request({"type": "set_auto_retry", "enabled": False})
        with pytest.raises(RpcError, match="'mode' must be one of"):
            client.request({"type": "set_steering_mode", "mode": "sometimes"})
        state = client.get_state()
        assert (state["steeringMode"], state["followUpMode"]) == ("all", "all")
        assert state["autoCompactionEnabled"] is False and state["autoRetryEnabled"] is False
        assert client.request({"type": "abort_retry"}) is None
        assert client.close() == 0
    saved = json.loads((wolli_home / "agents" / "default" / "settings.json").read_text())
    assert saved["steeringMode"] == "all" and saved["compaction"]["enabled"] is False


def test_conversation_queries_name_stats_and_export(project, tmp_path, loopback, models):
    loopback.push(text_answer("First answer.", prompt_tokens=40, completion_tokens=8),
                  text_answer("Second answer.", prompt_tokens=60, completion_tokens=9))
    with start_client(project, *MODEL) as client:
        assert client.request({"type": "get_last_assistant_text"}) == {"text": None}
        client.run("first question")
        client.run("second question")
        messages = client.request({"type": "get_messages"})["messages"]
        assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
        assert messages[3]["content"][0]["text"] == "Second answer." and messages[3]["stopReason"] == "stop"
        assert client.request({"type": "get_last_assistant_text"}) == {"text": "Second answer."}

        stats = client.request({"type": "get_session_stats"})
        assert (stats["userMessages"], stats["assistantMessages"], stats["totalMessages"]) == (2, 2, 4)
        assert stats["toolCalls"] == 0 and stats["toolResults"] == 0
        assert stats["tokens"]["output"] == 17 and stats["tokens"]["input"] == 100
        assert stats["tokens"]["total"] == 117
        assert stats["contextUsage"]["contextWindow"] == 32000
        assert stats["sessionId"] == client.get_state()["sessionId"]

        with pytest.raises(RpcError, match="cannot be empty"):
            client.request({"type": "set_session_name", "name": "   "})
        client.request({"type": "set_session_name", "name": "rpc work"})
        assert client.get_state()["sessionName"] == "rpc work"

        out = tmp_path / "export.html"
        exported = client.request({"type": "export_html", "outputPath": str(out)})
        assert exported == {"path": str(out.resolve())}
        page = out.read_text()
        assert "first question" in page and "Second answer." in page
        default = client.request({"type": "export_html"})
        assert Path(default["path"]).parent == project.resolve()
        assert client.close() == 0


def test_bash_and_abort_bash(project, models):
    with start_client(project, *MODEL) as client:
        result = client.request({"type": "bash", "command": "echo hello from bash; exit 3"})
        assert result == {"output": "hello from bash\n", "exitCode": 3, "cancelled": False, "truncated": False}
        assert client.get_state()["messageCount"] == 1  # the output joins the context
        streamed = client.request({"id": "b2", "type": "bash",
                                   "command": "printf 'one\\n'; sleep 0.1; printf 'tw\\303\\251\\n'"})
        updates = [e for e in client.drain() if e["type"] == "bash_execution_update"]
        assert {u["id"] for u in updates} == {"req-1", "b2"}  # each names the bash command it belongs to
        assert "".join(u["delta"] for u in updates if u["id"] == "b2") == "one\ntwé\n" == streamed["output"]
        client.send({"id": "slow", "type": "bash", "command": "sleep 30"})
        assert client.get_state()["messageCount"] == 2  # a running command is not in the context yet
        client.request({"type": "abort_bash"})
        answer = client.wait_for(lambda e: e.get("id") == "slow")
        assert answer["success"] is True and answer["data"]["cancelled"] is True
        with pytest.raises(RpcError, match="'command'"):
            client.request({"type": "bash"})
        assert client.close() == 0


def test_sessions_new_switch_fork_clone(project, wolli_home, loopback, models):
    loopback.push(text_answer("One."), text_answer("Two."))
    with start_client(project, *MODEL) as client:
        client.run("first")
        client.run("second")
        first_file = client.get_state()["sessionFile"]
        forkable = client.request({"type": "get_fork_messages"})["messages"]
        assert [m["text"] for m in forkable] == ["first", "second"]

        forked = client.request({"type": "fork", "entryId": forkable[1]["entryId"]})
        assert forked == {"text": "second", "cancelled": False}
        state = client.get_state()
        assert state["sessionFile"] != first_file and state["messageCount"] == 2  # up to before "second"
        assert client.request({"type": "get_last_assistant_text"}) == {"text": "One."}
        with pytest.raises(RpcError, match="not a user message"):
            client.request({"type": "fork", "entryId": "nope"})

        client.request({"type": "switch_session", "sessionPath": first_file})
        assert client.get_state()["sessionFile"] == first_file
        assert client.get_state()["messageCount"] == 4

        cloned = client.request({"type": "clone"})
        assert cloned == {"cancelled": False}
        state = client.get_state()
        assert state["sessionFile"] != first_file and state["messageCount"] == 4

        root = client.request({"type": "get_fork_messages"})["messages"][0]
        client.request({"type": "fork", "entryId": root["entryId"]})
        assert client.get_state()["messageCount"] == 0

        new = client.request({"type": "new_session"})
        assert new == {"cancelled": False}
        state = client.get_state()
        assert state["messageCount"] == 0 and state["model"]["id"] == "local-model"
        with pytest.raises(RpcError, match="cannot open"):
            client.request({"type": "switch_session", "sessionPath": str(project / "missing.jsonl")})
        events = client.drain()
        assert client.close() == 0
    starts = [e["reason"] for e in events if e["type"] == "session_start"]
    assert starts == ["fork", "resume", "fork", "fork", "new"]
    headers = [json.loads(f.read_text().splitlines()[0]) for f in session_files(wolli_home)]
    assert any(h.get("parentSession") == first_file for h in headers)


def test_compact(project, wolli_home, loopback, models):
    (wolli_home / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 1}}))
    loopback.push(text_answer("One " * 50), text_answer("Two " * 50),
                  text_answer("Summary of the talk."), text_answer("Summary of the talk."))
    with start_client(project, *MODEL) as client:
        with pytest.raises(RpcError, match="compact: "):
            client.request({"type": "compact"})  # nothing to compact yet
        client.run("first")
        client.run("second")
        result = client.request({"type": "compact", "customInstructions": "keep it short"})
        assert result["summary"].startswith("Summary of the talk.") or "Summary of the talk." in result["summary"]
        assert result["firstKeptEntryId"] and result["tokensBefore"] > 0
        events = client.drain()
        assert [e["type"] for e in events if e["type"].startswith("compaction")] == ["compaction_start",
                                                                                     "compaction_end"]
        assert "keep it short" in json.dumps(loopback.requests[-1].json)
        assert client.get_state()["isCompacting"] is False
        assert client.close() == 0


def test_get_commands_lists_extension_commands_templates_and_skills(project, tmp_path, wolli_home, models):
    agent = wolli_home / "agents" / "default"
    (agent / "prompts").mkdir(parents=True)
    (agent / "prompts" / "fix-tests.md").write_text("---\ndescription: Fix failing tests\n---\nFix the tests in $1\n")
    (agent / "skills" / "greet").mkdir(parents=True)
    (agent / "skills" / "greet" / "SKILL.md").write_text("---\nname: greet\ndescription: Say hello\n---\nSay hi.\n")
    probe = tmp_path / "probe.py"
    probe.write_text(UI_PROBE)
    with start_client(project, *MODEL, "-e", str(probe)) as client:
        listed = client.request({"type": "get_commands"})["commands"]
        assert client.close() == 0
    by_name = {c["name"]: c for c in listed}
    assert by_name["ask"]["source"] == "extension" and by_name["ask"]["description"] == "Ask through a dialog"
    assert by_name["fix-tests"]["source"] == "prompt" and by_name["fix-tests"]["description"] == "Fix failing tests"
    assert by_name["skill:greet"]["source"] == "skill" and by_name["skill:greet"]["path"].endswith("SKILL.md")
    assert [c["source"] for c in listed] == sorted((c["source"] for c in listed),
                                                   key=["extension", "prompt", "skill"].index)


def test_without_a_model_the_server_starts_and_a_prompt_says_how_to_get_one(project):
    with start_client(project) as client:
        assert client.get_state()["model"] is None
        with pytest.raises(RpcError, match="No model is available"):
            client.request({"type": "prompt", "message": "hello"})
        assert client.request({"type": "get_available_models"}) == {"models": []}
        assert client.close() == 0
    assert "Traceback" not in client.stderr


def test_prompt_with_images(project, loopback, models):
    loopback.push(text_answer("A red pixel."))
    pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    with start_client(project) as client:  # no --model: the client picks one
        client.request({"type": "set_model", "provider": "local", "modelId": "local-model"})
        with pytest.raises(RpcError, match="images\\[0\\]"):
            client.request({"type": "prompt", "message": "what?", "images": [{"type": "image"}]})
        client.request({"type": "prompt", "message": "what is this?",
                        "images": [{"type": "image", "data": pixel, "mimeType": "image/png"}]})
        client.wait_for("agent_settled")
        assert client.close() == 0
    sent = json.dumps(loopback.requests[0].json["messages"])
    assert pixel in sent


def test_cycle_model_follows_the_enabled_models_scope(project, wolli_home, models):
    (wolli_home / "settings.json").write_text(json.dumps({"enabledModels": ["local/local-thinker:high",
                                                                            "local/local-model"]}))
    with start_client(project, "--model", "local/local-model") as client:
        cycled = client.request({"type": "cycle_model"})
        assert cycled["model"]["id"] == "local-thinker" and cycled["isScoped"] is True
        assert cycled["thinkingLevel"] == "high"
        assert client.request({"type": "cycle_model"})["model"]["id"] == "local-model"
        assert client.close() == 0


def test_reload_reads_extensions_again_and_reports_their_errors(project, tmp_path, models):
    extension = tmp_path / "flaky.py"
    extension.write_text("def extension(wolli):\n    wolli.register_command('one', handler=lambda a, c: None)\n")
    with start_client(project, *MODEL, "-e", str(extension)) as client:
        assert [c["name"] for c in client.request({"type": "get_commands"})["commands"]] == ["one"]
        extension.write_text("def extension(wolli):\n    raise ValueError('broken on purpose')\n")
        report = client.request({"type": "reload"})["extensions"]
        [flaky] = [e for e in report if e["name"] == "flaky"]
        # the new version failed: the previous one keeps running, and the report says why
        assert flaky["status"] == "loaded" and "broken on purpose" in flaky["warnings"][0]
        assert "previous version" in flaky["warnings"][0]
        assert [c["name"] for c in client.request({"type": "get_commands"})["commands"]] == ["one"]
        extension.write_text("def extension(wolli):\n    wolli.register_command('two', handler=lambda a, c: None)\n")
        report = client.request({"type": "reload"})["extensions"]
        assert [(e["errors"], e["warnings"]) for e in report if e["name"] == "flaky"] == [([], [])]
        assert [c["name"] for c in client.request({"type": "get_commands"})["commands"]] == ["two"]


def test_shortcuts_are_listed_and_run(project, tmp_path, models):
    extension = tmp_path / "keys.py"
    extension.write_text("def extension(wolli):\n"
                         "    def hello(ctx):\n        ctx.ui.notify('hello from a key')\n"
                         "    def boom(ctx):\n        raise ValueError('no plan yet')\n"
                         "    wolli.register_shortcut('ctrl+alt+h', handler=hello, description='says hello')\n"
                         "    wolli.register_shortcut('alt+b', handler=boom, description='fails')\n")
    with start_client(project, *MODEL, "-e", str(extension)) as client:
        listed = client.request({"type": "get_shortcuts"})["shortcuts"]
        assert listed == [{"key": "alt+b", "description": "fails", "extension": "keys"},
                          {"key": "alt+ctrl+h", "description": "says hello", "extension": "keys"}]
        assert client.request({"type": "run_shortcut", "key": "alt+ctrl+h"}) == {"error": None}
        assert client.request({"type": "run_shortcut", "key": "alt+b"}) == {
            "error": "keys: shortcut Alt+B failed: ValueError: no plan yet"}
        with pytest.raises(RpcError, match="no extension shortcut 'f9'"):
            client.request({"type": "run_shortcut", "key": "f9"})


def test_extensions_are_listed_and_switched_off_and_on(project, tmp_path, models, wolli_home):
    extension = tmp_path / "greeter.py"
    extension.write_text("def extension(wolli):\n    wolli.register_command('greet', handler=lambda a, c: None)\n")
    with start_client(project, *MODEL, "-e", str(extension)) as client:
        [info] = client.request({"type": "get_extensions"})["extensions"]
        assert (info["name"], info["status"], info["commands"], info["errors"]) == ("greeter", "loaded", ["greet"], [])
        client.request({"type": "set_extension_enabled", "name": "greeter", "enabled": False})
        assert client.request({"type": "get_commands"})["commands"] == []
        settings = json.loads((wolli_home / "agents" / "default" / "settings.json").read_text())
        assert settings["disabledExtensions"] == ["greeter"]
        client.request({"type": "set_extension_enabled", "name": "greeter", "enabled": True})
        assert [c["name"] for c in client.request({"type": "get_commands"})["commands"]] == ["greet"]
        with pytest.raises(RpcError, match="no extension named 'nope'"):
            client.request({"type": "set_extension_enabled", "name": "nope", "enabled": False})


def test_the_tree_is_read_navigated_and_labelled(project, models, loopback):
    loopback.push(text_answer("answer one"), text_answer("answer two"))
    with start_client(project, *MODEL) as client:
        client.run("question one")
        client.run("question two")
        tree = client.request({"type": "get_tree"})
        rows = [(e["kind"], e["text"]) for e in tree["entries"] if e["type"] == "message"]
        assert rows == [("user", "question one"), ("assistant", "answer one"), ("user", "question two"),
                        ("assistant", "answer two")]
        second = next(e for e in tree["entries"] if e.get("userText") == "question two")
        assert tree["leafId"] == tree["entries"][-1]["id"]
        assert client.request({"type": "navigate_tree", "targetId": second["parentId"]}) == {"moved": True}
        assert [m["role"] for m in client.request({"type": "get_messages"})["messages"]] == ["user", "assistant"]
        client.request({"type": "set_entry_label", "entryId": second["id"], "label": "the other way"})
        labelled = next(e for e in client.request({"type": "get_tree"})["entries"] if e["id"] == second["id"])
        assert labelled["label"] == "the other way"
        with pytest.raises(RpcError, match="no entry 'nope'"):
            client.request({"type": "navigate_tree", "targetId": "nope"})
        with pytest.raises(RpcError, match="needs 'targetId'"):
            client.request({"type": "navigate_tree"})


def test_settings_are_read_and_written_as_the_form_checks_them(project, models, wolli_home):
    with start_client(project, *MODEL) as client:
        read = client.request({"type": "get_settings"})
        assert read["values"]["retry.enabled"] is not False and read["path"].endswith("settings.json")
        saved = client.request({"type": "set_settings", "values": {"retry.maxRetries": "5", "quietStartup": "on"}})
        assert saved["values"] == {"retry.maxRetries": 5, "quietStartup": True}
        assert client.request({"type": "get_settings"})["values"]["retry.maxRetries"] == 5
        with pytest.raises(RpcError, match="whole number"):
            client.request({"type": "set_settings", "values": {"retry.maxRetries": "lots"}})
        with pytest.raises(RpcError, match="'apiKey' is not one of"):
            client.request({"type": "set_settings", "values": {"apiKey": "x"}})
    stored = json.loads((wolli_home / "agents" / "default" / "settings.json").read_text())
    assert stored["retry"]["maxRetries"] == 5 and stored["quietStartup"] is True


def test_api_keys_are_stored_and_removed_and_never_answered(project, models, wolli_home):
    with start_client(project, *MODEL) as client:
        listed = client.request({"type": "get_login_providers"})
        assert "openai" in listed["providers"] and "local" in listed["providers"]
        answer = client.request({"type": "set_api_key", "provider": "openai", "key": " sk-test-secret-123 "})
        assert "sk-test" not in json.dumps(answer) and answer["path"].endswith("auth.json")
        auth = Path(answer["path"])
        assert "sk-test-secret-123" in auth.read_text()  # trimmed, stored
        assert "openai" in client.request({"type": "get_login_providers"})["stored"]
        with pytest.raises(RpcError, match="unknown provider 'nope'"):
            client.request({"type": "set_api_key", "provider": "nope", "key": "x"})
        client.request({"type": "remove_api_key", "provider": "openai"})
        with pytest.raises(RpcError, match="no key stored for 'openai'"):
            client.request({"type": "remove_api_key", "provider": "openai"})
        assert "sk-test" not in client.stderr
    assert "sk-test" not in auth.read_text()
