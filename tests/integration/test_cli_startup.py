"""The start-up path as a user meets it: the CLI as a subprocess against a loopback server.

Each mistake gets one clear line (exit 2 for a usage mistake), never a traceback; what
happens while waiting (retries) is said on stderr; the json stream stays linear in size.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import session_files, wolli
from tests.support.loopback import json_reply
from tests.support.openai_chat import text_answer, write_models_json

MODEL = ["--model", "local/local-model"]


@pytest.fixture
def local_model(wolli_home: Path, loopback) -> None:
    write_models_json(wolli_home, loopback.url + "/v1")


def one_clear_line(result) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines, "expected an error message"
    return lines[0]


def test_an_unknown_option_names_the_nearest_one_and_sends_nothing(project, loopback, local_model):
    result = wolli(["-p", *MODEL, "--no-sesion", "hello"], project)
    assert result.returncode == 2
    assert "unknown option --no-sesion; did you mean --no-session?" in one_clear_line(result)
    assert loopback.requests == []


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--agent", "../evil"], "--agent: invalid agent name"),
        (["--tools", "read,bsh"], "--tools: unknown tool bsh (did you mean bash?)"),
        (["--thinking", "hgh"], "--thinking must be one of"),
        (["--mode", "gui"], "--mode must be one of"),
    ],
)
def test_usage_mistakes_are_one_line_and_exit_2(project, loopback, local_model, args, expected):
    result = wolli(["-p", *MODEL, *args, "hello"], project)
    assert result.returncode == 2
    assert expected in one_clear_line(result)
    assert loopback.requests == []


def test_resume_without_a_terminal_says_how_to_pick_a_session(project, loopback, local_model):
    loopback.push(text_answer("saved"))
    assert wolli(["-p", *MODEL, "remember"], project).returncode == 0
    result = wolli(["-r"], project)
    assert result.returncode == 2
    assert "--session ID" in result.stderr and "--continue" in result.stderr
    assert "remember" in result.stderr  # the listing to pick from


def test_each_retry_is_said_on_stderr_and_the_answer_still_comes(project, loopback, local_model, wolli_home):
    (wolli_home / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 10}}))
    overloaded = {"error": {"message": "Overloaded", "type": "overloaded_error"}}
    loopback.push(json_reply(529, overloaded), json_reply(503, overloaded), text_answer("finally"))
    result = wolli(["-p", *MODEL, "hello"], project)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "finally\n"
    retries = [line for line in result.stderr.splitlines() if "retrying in" in line]
    assert len(retries) == 2
    assert "attempt 1 of 3" in retries[0] and "529" in retries[0]
    assert "attempt 2 of 3" in retries[1] and "503" in retries[1]


def test_a_provider_that_keeps_failing_ends_with_the_last_error_and_attempts(project, loopback, local_model, wolli_home):
    (wolli_home / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 10, "maxRetries": 2}}))
    loopback.push(*[json_reply(503, {"error": {"message": "busy"}})] * 3)
    result = wolli(["-p", *MODEL, "hello"], project)
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last == "wolli: giving up after 3 attempts (2 retries): 503 busy"


def test_an_unreachable_provider_names_the_url_and_every_retry(project, wolli_home):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    write_models_json(wolli_home, f"http://127.0.0.1:{port}/v1")
    (wolli_home / "settings.json").write_text(json.dumps({"retry": {"maxRetries": 1, "baseDelayMs": 1}}))
    result = wolli(["-p", *MODEL, "hi"], project)
    assert result.returncode == 1 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert lines[0].startswith("wolli: retrying in 0.0s (attempt 1 of 1): Connection failed: could not reach "
                               f"http://127.0.0.1:{port}/v1/chat/completions"), lines
    assert lines[1].startswith("wolli: giving up after 2 attempts (1 retry): Connection failed") and len(lines) == 2
    assert "Is the server running" in lines[1] and "baseUrl" in lines[1] and "models.json" in lines[1]


def test_an_unusable_session_folder_warns_and_still_answers(project, loopback, local_model, wolli_home):
    sessions = wolli_home / "agents" / "default" / "sessions"
    sessions.parent.mkdir(parents=True, exist_ok=True)
    sessions.write_text("a file where the folder should be")
    loopback.push(text_answer("still here"))
    result = wolli(["-p", *MODEL, "hello"], project)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "still here\n"
    assert str(sessions) in result.stderr and "will not be saved" in result.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through read-only permissions")
def test_a_read_only_session_folder_warns_and_still_answers(project, loopback, local_model, wolli_home):
    sessions = wolli_home / "agents" / "default" / "sessions"
    sessions.mkdir(parents=True)
    sessions.chmod(0o500)
    try:
        loopback.push(text_answer("answered anyway"))
        result = wolli(["-p", *MODEL, "hello"], project)
    finally:
        sessions.chmod(0o700)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "answered anyway\n"
    assert "not be saved" in result.stderr


def test_a_large_attachment_is_truncated_with_a_note(project, loopback, local_model):
    (project / "big.log").write_text("".join(f"line {i} of the log\n" for i in range(100_000)))
    loopback.push(text_answer("seen"))
    result = wolli(["-p", *MODEL, "@big.log", "what is in it?"], project)
    assert result.returncode == 0, result.stderr
    sent = json.dumps(loopback.requests[0].json["messages"])
    assert len(sent) < 200_000
    assert "line 0 of the log" in sent and "line 99999" not in sent
    assert "@big.log is" in result.stderr and "first 2000 lines" in result.stderr


def test_a_file_of_one_huge_line_attaches_its_start_with_a_note(project, loopback, local_model):
    (project / "bundle.min.js").write_text("var a=1;" * 200_000)  # 1.6 MB on one line
    loopback.push(text_answer("seen"))
    result = wolli(["-p", *MODEL, "@bundle.min.js", "what is it?"], project)
    assert result.returncode == 0, result.stderr
    sent = json.dumps(loopback.requests[0].json["messages"])
    assert "var a=1;" * 100 in sent and len(sent) < 80_000
    assert "first line alone is over the 50.0KB limit" in result.stderr


def test_a_directory_attachment_is_a_listing(project, loopback, local_model):
    (project / "src").mkdir()
    (project / "src" / "main.py").write_text("print(1)\n")
    loopback.push(text_answer("seen"))
    result = wolli(["-p", *MODEL, "@src", "what is here?"], project)
    assert result.returncode == 0, result.stderr
    sent = json.dumps(loopback.requests[0].json["messages"])
    assert '<directory name=\\"src\\">' in sent and "main.py" in sent


def test_an_image_for_a_text_only_model_is_refused(project, loopback, local_model):
    png = bytes.fromhex(
        "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ff"
        "ff3f0005fe02fea7d6a4e90000000049454e44ae426082"
    )
    (project / "shot.png").write_bytes(png)
    result = wolli(["-p", *MODEL, "@shot.png", "what is this?"], project)
    assert result.returncode == 1
    assert "does not accept images" in one_clear_line(result)
    assert loopback.requests == []


def test_an_overflow_with_nothing_to_compact_is_an_error_not_the_old_answer(project, loopback, local_model):
    loopback.push(text_answer("the old answer"))
    assert wolli(["-p", *MODEL, "first"], project).returncode == 0
    overflow = {"error": {"message": "This model's maximum context length is 32000 tokens.",
                          "code": "context_length_exceeded"}}
    loopback.push(json_reply(400, overflow), json_reply(400, overflow))
    result = wolli(["-p", "-c", *MODEL, "second"], project)
    assert result.returncode == 1
    assert "the old answer" not in result.stdout
    assert "maximum context length" in result.stderr


# ---------------------------------------------------------------------------- the json stream


def _events(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_json_updates_carry_deltas_and_message_end_the_whole_message(project, loopback, local_model):
    loopback.push(text_answer("Hello there, this is streamed."))
    result = wolli(["--mode", "json", *MODEL, "hi"], project)
    assert result.returncode == 0, result.stderr
    events = _events(result.stdout)
    assert events[0]["type"] == "session"
    assert [e["type"] for e in events[1:3]] == ["session_start", "run_state"]
    updates = [e for e in events if e["type"] == "message_update"]
    assert updates and all("message" not in e and "partial" not in e["assistantMessageEvent"] for e in updates)
    text = "".join(e["assistantMessageEvent"].get("delta", "") for e in updates)
    assert text == "Hello there, this is streamed."
    [end] = [e for e in events if e["type"] == "message_end" and e["message"]["role"] == "assistant"]
    assert end["message"]["content"][0]["text"] == text
    assert events[-1]["type"] == "session_shutdown" and events[-1]["reason"] == "quit"


def test_json_full_updates_bring_back_the_partial_message(project, loopback, local_model):
    loopback.push(text_answer("Hello there."))
    result = wolli(["--mode", "json", "--full-updates", *MODEL, "hi"], project)
    updates = [e for e in _events(result.stdout) if e["type"] == "message_update"]
    deltas = [u for u in updates if u["assistantMessageEvent"]["type"] == "text_delta"]
    assert deltas[-1]["message"]["content"][0]["text"] == "Hello there."
    assert "partial" in deltas[-1]["assistantMessageEvent"]


def test_json_output_grows_linearly_with_the_answer(project, loopback, local_model):
    sizes = []
    for words in (400, 1600):
        loopback.push(text_answer("word " * words))
        result = wolli(["--mode", "json", "--no-session", *MODEL, "hi"], project)
        assert result.returncode == 0, result.stderr
        sizes.append(len(result.stdout))
    # Quadratic output (the whole partial in every update) would grow ~16x for 4x the text.
    assert sizes[1] < sizes[0] * 6


def test_json_mode_reports_retries_as_events(project, loopback, local_model, wolli_home):
    (wolli_home / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 10}}))
    loopback.push(json_reply(429, {"error": {"message": "slow down"}}), text_answer("ok"))
    result = wolli(["--mode", "json", *MODEL, "hi"], project)
    assert result.returncode == 0, result.stderr
    events = _events(result.stdout)
    [start] = [e for e in events if e["type"] == "auto_retry_start"]
    assert start["attempt"] == 1 and start["maxAttempts"] == 3 and "429" in start["errorMessage"]
    [end] = [e for e in events if e["type"] == "auto_retry_end"]
    assert end == {"type": "auto_retry_end", "success": True, "attempt": 1}
    assert session_files(wolli_home)


def test_a_broken_models_json_is_named_with_its_line_not_called_missing(project, wolli_home):
    (wolli_home / "models.json").write_text('{"providers": {\n  "local": {"baseUrl": "http://x",, }}}')
    result = wolli(["-p", *MODEL, "hello"], project)
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert lines[0] == (f"wolli: {wolli_home / 'models.json'}:2:35: not valid JSON (Expecting property name "
                        "enclosed in double quotes); using the built-in models only until it is fixed")
    assert "Traceback" not in result.stderr


def test_an_unknown_api_names_the_field_line_and_the_nearest_api(project, wolli_home):
    (wolli_home / "models.json").write_text(
        '{"providers": {\n  "local": {\n    "baseUrl": "http://x",\n    "api": "openai-chat",\n'
        '    "models": [{"id": "local-model"}]\n  }\n}}'
    )
    result = wolli(["-p", *MODEL, "hello"], project)
    assert result.returncode == 1
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"wolli: {wolli_home / 'models.json'}:4: providers.local.api: unknown api 'openai-chat'")
    assert "did you mean 'openai-completions'?" in first


def test_broken_settings_auth_and_keybindings_are_warnings_and_the_run_goes_on(
    project, loopback, local_model, wolli_home
):
    (wolli_home / "settings.json").write_text('{\n  "retry": {"maxRetries": "three"}\n}')
    (wolli_home / "auth.json").write_text('{"anthropic": ')
    (wolli_home / "auth.json").chmod(0o600)  # as Wolli writes it (a wider mode is its own warning)
    (wolli_home / "keybindings.json").write_text('{"sbumit": "enter"}')
    loopback.push(text_answer("fine"))
    result = wolli(["-p", *MODEL, "hello"], project)
    assert (result.returncode, result.stdout) == (0, "fine\n"), result.stderr
    assert result.stderr.splitlines() == [
        f'wolli: {wolli_home / "settings.json"}:2: retry.maxRetries: expected a whole number, got "three"; '
        "using the default",
        f"wolli: {wolli_home / 'auth.json'}:1:15: not valid JSON (Expecting value); stored keys are ignored until "
        "the file is fixed",
        f"wolli: {wolli_home / 'keybindings.json'}:1: sbumit: unknown action; did you mean 'submit'?",
    ]


def test_a_damaged_session_line_is_one_warning_with_file_and_line_and_the_rest_loads(
    project, loopback, local_model, wolli_home
):
    loopback.push(text_answer("first answer"), text_answer("second answer"))
    assert wolli(["-p", *MODEL, "hello"], project).returncode == 0
    [session] = session_files(wolli_home)
    lines = session.read_text().splitlines()
    session.write_text("\n".join([*lines, '{"type":"message", "id": oops', ""]))
    result = wolli(["-p", "-c", *MODEL, "again"], project)
    assert (result.returncode, result.stdout) == (0, "second answer\n"), result.stderr
    warning = f"wolli: {session}:{len(lines) + 1}: not valid JSON"
    assert [line for line in result.stderr.splitlines() if line.startswith("wolli: ")] == [
        line for line in result.stderr.splitlines() if line.startswith(warning)
    ] and result.stderr.count(warning) == 1, result.stderr
    sent = json.dumps(loopback.requests[1].json["messages"])
    assert "hello" in sent and "first answer" in sent


def test_a_pi_v1_session_is_upgraded_on_load_and_its_history_sent(project, loopback, local_model, tmp_path):
    old = tmp_path / "pi-v1.jsonl"
    ts = "2025-01-01T00:00:00.000Z"
    old.write_text(
        json.dumps({"type": "session", "id": "old", "timestamp": ts, "cwd": str(project)}) + "\n"
        + json.dumps({"type": "message", "timestamp": ts, "message": {"role": "user", "content": "remember 42"}})
        + "\n"
    )
    loopback.push(text_answer("noted"))
    result = wolli(["-p", *MODEL, "--session", str(old), "what number?"], project)
    assert (result.returncode, result.stdout) == (0, "noted\n"), result.stderr
    assert f"wolli: {old}: upgraded from format v1 to v3; the original is kept as {old}.v1" in result.stderr
    assert "remember 42" in json.dumps(loopback.requests[0].json["messages"])
    header, *entries = [json.loads(line) for line in old.read_text().splitlines()]
    assert header["version"] == 3 and entries[1]["parentId"] == entries[0]["id"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        # each subcommand takes its own options: one of another subcommand is refused, not ignored
        (["attach", "--token", "t", "--no-start"], "unknown option --token for wolli attach"),
        (["web", "--idle-timeout", "5", "--no-start"], "unknown option --idle-timeout for wolli web"),
        (["attach", "--no-aut"], "unknown option --no-aut for wolli attach"),
        (["serve", "--no-aut"], "unknown option --no-aut for wolli serve; did you mean --no-auth?"),
        (["attach", "--no-strat"], "unknown option --no-strat for wolli attach; did you mean --no-start?"),
        (["attach", "one", "two"], "wolli attach takes one session id at most ('two')"),
        (["web", "now"], "wolli web takes no arguments ('now')"),
        (["serve", "--socket"], "--socket needs a value"),
    ],
)
def test_the_server_subcommands_read_only_their_own_options(project, args, expected):
    result = wolli(args, project)
    assert result.returncode == 2, result.stderr
    assert one_clear_line(result) == "wolli: " + expected
    assert result.stderr.splitlines()[1].startswith("usage: wolli " + args[0])  # that subcommand's usage


@pytest.mark.parametrize("command", ["serve", "attach", "web"])
def test_the_server_subcommands_print_their_usage_for_help(project, command):
    result = wolli([command, "--help"], project)
    assert result.returncode == 0 and result.stdout.startswith(f"usage: wolli {command}")


# Modules a print-mode round trip has no use for (docs/performance.md, "What start-up does
# now"): each was imported on every start before. The second line: what a session without
# Claude hooks, subagents, commands run or sessions listed never needs.
NOT_ON_THE_PRINT_PATH = ("uuid", "platform", "secrets", "hmac", "html", "wolli.session.checkpoints.restore",
                         "httpx", "httpcore", "h11", "anyio", "tempfile", "email.utils", "importlib.resources",
                         "wolli.extensions.claude_hooks", "wolli.packages.claude_hooks", "wolli.tools.process",
                         "wolli.tools.supervisor", "wolli.tools.proctree", "wolli.session.listing",
                         "wolli.runtime.subagents.child")


def test_a_print_round_trip_imports_nothing_it_does_not_use(project, loopback, local_model, tmp_path):
    loopback.push(text_answer("light"))
    seen = tmp_path / "modules.json"
    probe = (
        "import atexit, json, sys\n"
        f"atexit.register(lambda: open({str(seen)!r}, 'w').write(json.dumps(sorted(sys.modules))))\n"
        "from wolli.cli.main import main\n"
        "sys.argv = ['wolli', *sys.argv[1:]]\n"
        "sys.exit(main())\n"
    )
    result = subprocess.run([sys.executable, "-c", probe, "-p", *MODEL, "hello"], cwd=project, capture_output=True,
                            text=True, timeout=60, env=os.environ.copy())
    assert result.returncode == 0, result.stderr
    assert result.stdout == "light\n"
    modules = set(json.loads(seen.read_text()))
    assert "wolli.session.manager" in modules and "wolli.ai.http1" in modules  # the probe saw the whole run
    assert modules.isdisjoint(NOT_ON_THE_PRINT_PATH), sorted(modules & set(NOT_ON_THE_PRINT_PATH))
