"""The CLI as a subprocess against a loopback OpenAI-compatible server (real HTTP, real files)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import session_files, wolli
from tests.support.loopback import json_reply
from tests.support.openai_chat import text_answer, tool_call_answer, write_models_json

MODEL = ["--model", "local/local-model"]






@pytest.fixture
def local_model(wolli_home: Path, loopback) -> None:
    write_models_json(wolli_home, loopback.url + "/v1")




def test_print_mode_edits_a_file_then_continue_resumes_the_same_session(project, wolli_home, loopback, local_model):
    loopback.push(
        tool_call_answer("edit", {"path": "calc.py", "edits": [{"old_text": "return a - b", "new_text": "return a + b"}]}),
        text_answer("Fixed the bug in calc.py."),
    )
    result = wolli(["-p", *MODEL, "fix the failing test"], project)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Fixed the bug in calc.py.\n"
    assert (project / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"

    second = loopback.requests[1].json
    tool_messages = [m for m in second["messages"] if m["role"] == "tool"]
    assert tool_messages and tool_messages[0]["tool_call_id"] == "call_1"
    assert "Successfully replaced" in json.dumps(tool_messages[0]["content"])

    files = session_files(wolli_home)
    assert len(files) == 1
    lines = files[0].read_text().splitlines()
    assert json.loads(lines[0])["type"] == "session"
    roles = [json.loads(line)["message"]["role"] for line in lines[1:] if json.loads(line)["type"] == "message"]
    assert roles == ["user", "assistant", "toolResult", "assistant"]

    loopback.push(text_answer("It is still fixed."))
    again = wolli(["-p", "-c", *MODEL, "check again"], project)
    assert again.returncode == 0, again.stderr
    assert again.stdout == "It is still fixed.\n"
    assert session_files(wolli_home) == files
    sent = loopback.requests[2].json["messages"]
    user_texts = [json.dumps(m["content"]) for m in sent if m["role"] == "user"]
    assert any("fix the failing test" in t for t in user_texts)
    assert any("check again" in t for t in user_texts)
    assert len(files[0].read_text().splitlines()) > len(lines)


def test_json_mode_prints_header_then_one_event_per_line(project, loopback, local_model):
    loopback.push(text_answer("Hello there."))
    result = wolli(["--mode", "json", *MODEL, "hi"], project)
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert events[0]["type"] == "session" and events[0]["version"] == 3
    types = [e["type"] for e in events[1:]]
    assert types[:3] == ["session_start", "run_state", "agent_start"]
    assert types[-3:] == ["agent_end", "run_state", "session_shutdown"]
    assert "message_update" in types and "turn_end" in types
    final = [e for e in events if e["type"] == "message_end" and e["message"]["role"] == "assistant"]
    assert final[-1]["message"]["content"][0]["text"] == "Hello there."
    assert final[-1]["message"]["stopReason"] == "stop"


def test_export_writes_html_with_the_conversation(project, tmp_path, wolli_home, loopback, local_model):
    loopback.push(text_answer("The answer is <42>."))
    assert wolli(["-p", *MODEL, "what is the answer?"], project).returncode == 0
    [session_file] = session_files(wolli_home)
    out = tmp_path / "out.html"
    result = wolli(["--export", str(session_file), str(out)], project)
    assert result.returncode == 0, result.stderr
    page = out.read_text()
    assert "what is the answer?" in page
    assert "The answer is &lt;42&gt;." in page


def test_no_model_says_how_to_configure_one(project):
    result = wolli(["-p", "hello"], project)
    assert result.returncode == 1
    assert "ANTHROPIC_API_KEY" in result.stderr
    assert "auth.json" in result.stderr and "models.json" in result.stderr


def test_provider_error_goes_to_stderr_with_exit_code_1(project, loopback, local_model):
    loopback.push(json_reply(400, {"error": {"message": "model 'x' does not exist", "type": "invalid_request_error"}}))
    result = wolli(["-p", *MODEL, "hello"], project)
    assert result.returncode == 1
    assert "does not exist" in result.stderr
    assert result.stdout == ""


def test_piped_stdin_and_file_attachments_join_the_prompt(project, loopback, local_model):
    loopback.push(text_answer("Seen."))
    result = wolli(["-p", *MODEL, "@calc.py", "explain the log"], project, stdin="ERROR: boom\n")
    assert result.returncode == 0, result.stderr
    content = json.dumps(loopback.requests[0].json["messages"])
    assert "ERROR: boom" in content
    assert "explain the log" in content
    assert "return a - b" in content and 'calc.py' in content


def test_no_session_writes_nothing(project, wolli_home, loopback, local_model):
    loopback.push(text_answer("ok"))
    result = wolli(["-p", "--no-session", *MODEL, "hi"], project)
    assert result.returncode == 0, result.stderr
    assert session_files(wolli_home) == []


def test_an_unknown_option_is_an_error_and_nothing_is_sent(project, wolli_home, loopback, local_model):
    result = wolli(["-p", "--no-sesion", *MODEL, "hi"], project)
    assert result.returncode == 2
    assert "--no-sesion" in result.stderr and "did you mean --no-session?" in result.stderr
    assert loopback.requests == [] and session_files(wolli_home) == []


def test_the_tui_without_a_terminal_and_rpc_mode_say_what_to_do(project):
    tui = wolli([], project)
    assert tui.returncode == 2 and "needs a terminal" in tui.stderr and "-p" in tui.stderr
    rpc = wolli(["--mode", "rpc", "hello"], project)  # prompts come as commands on stdin
    assert rpc.returncode == 2 and "JSON commands on stdin" in rpc.stderr and rpc.stdout == ""


def test_version_and_bad_options(project):
    version = wolli(["--version"], project)
    assert version.returncode == 0 and version.stdout.startswith("wolli ")
    bad = wolli(["--thinking", "extreme", "-p", "x"], project)
    assert bad.returncode == 2 and "--thinking" in bad.stderr


def test_a_model_without_a_key_fails_fast_with_instructions(project):
    result = wolli(["-p", "--model", "anthropic/claude-sonnet-4-5", "hello"], project, timeout=20)
    assert result.returncode == 1
    assert "no API key for provider 'anthropic'" in result.stderr
    assert "ANTHROPIC_API_KEY" in result.stderr


def test_unknown_session_id_and_broken_session_file_are_clear_errors(project, tmp_path, local_model):
    unknown = wolli(["-p", *MODEL, "--session", "deadbeef", "hi"], project)
    assert unknown.returncode == 2  # a mistake on the command line, like a missing path
    assert "--session: no session with an id starting with 'deadbeef'" in unknown.stderr
    assert "Traceback" not in unknown.stderr
    broken = tmp_path / "broken.jsonl"
    broken.write_text("this is not a session\n")
    result = wolli(["-p", *MODEL, "--session", str(broken), "hi"], project)
    assert result.returncode == 1
    assert "not a usable session file" in result.stderr and "Traceback" not in result.stderr

