"""Session events over RPC in pi's names: auto_retry_*, abort_retry, extension_error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.loopback import json_reply
from tests.support.openai_chat import text_answer
from tests.support.rpc import MODEL, start_client, write_models

OVERLOADED = {"error": {"message": "Overloaded", "type": "overloaded_error"}}


@pytest.fixture
def models(wolli_home: Path, loopback) -> None:
    write_models(wolli_home, loopback.url + "/v1")


def _retry_settings(home: Path, base_delay_ms: int) -> None:
    (home / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": base_delay_ms, "maxDelayMs": 600000}}))


def test_a_transient_failure_is_retried_with_auto_retry_events(project, wolli_home, loopback, models):
    _retry_settings(wolli_home, 10)
    loopback.push(json_reply(529, OVERLOADED), text_answer("Worked the second time."))
    with start_client(project, *MODEL) as client:
        events = client.run("hello")
        assert client.request({"type": "get_last_assistant_text"})["text"] == "Worked the second time."
    start = next(e for e in events if e["type"] == "auto_retry_start")
    assert start["attempt"] == 1 and start["maxAttempts"] == 3 and start["delayMs"] >= 10
    assert "Overloaded" in start["errorMessage"]
    end = next(e for e in events if e["type"] == "auto_retry_end")
    assert end == {"type": "auto_retry_end", "success": True, "attempt": 1}
    types = [e["type"] for e in events]
    assert types.index("auto_retry_start") < types.index("auto_retry_end") < types.index("agent_settled")


def test_abort_retry_stops_waiting_for_the_next_attempt(project, wolli_home, loopback, models):
    _retry_settings(wolli_home, 120_000)
    loopback.push(json_reply(529, OVERLOADED))
    with start_client(project, *MODEL) as client:
        client.prompt("hello")
        client.wait_for("auto_retry_start")
        assert client.get_state()["runState"] == "retrying"
        client.request({"type": "abort_retry"})
        end = client.wait_for("auto_retry_end", timeout=20)
        assert end["success"] is False
        client.wait_for("agent_settled", timeout=20)
        assert client.get_state()["runState"] == "idle"
        assert len(loopback.requests) == 1


def test_a_failing_extension_handler_is_an_extension_error_event(project, tmp_path, loopback, models):
    broken = tmp_path / "broken.py"
    broken.write_text("def extension(wolli):\n"
                      "    def fail(event, ctx):\n"
                      "        raise ValueError('handler exploded')\n"
                      "    wolli.on('turn_start', fail)\n")
    loopback.push(text_answer("Still answered."))
    with start_client(project, *MODEL, "-e", str(broken)) as client:
        events = client.run("hello")
    error = next(e for e in events if e["type"] == "extension_error")
    assert error["extensionPath"].endswith("broken.py") and error["event"] == "turn_start"
    assert "handler exploded" in error["error"]
    answers = [e for e in events if e["type"] == "message_end" and e["message"]["role"] == "assistant"]
    assert answers[-1]["message"]["content"][0]["text"] == "Still answered."
