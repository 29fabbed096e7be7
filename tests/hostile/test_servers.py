"""A provider that misbehaves: echoes the request's headers, stalls, answers with an HTML
page, cuts the stream, never ends a line, never stops sending.

The loopback server plays the provider; Wolli runs as a subprocess under the harness'
limits. Nothing a server sends may hang the run, exhaust memory, or put the key anywhere
Wolli writes: stderr, json events, the session file, the HTML export.
"""

from __future__ import annotations

import base64
import json

import pytest

from tests.support.loopback import RecordedRequest, Reply, json_reply
from tests.support.openai_chat import text_answer

from .conftest import MODEL, SECRET, Project
from .harness import assert_bounded

MEMORY_MB = 500
ENV_SECRET = "sk-env-4be1c0ffee99aa77"
HEADER_SECRET = "hdr-9d7c6b5a4f3e2d1c"


def echo_headers(request: RecordedRequest) -> Reply:
    """A proxy's 401 that lists what it was sent: the key, in every header."""
    dump = "\n".join(f"{name}: {value}" for name, value in request.headers.items())
    return json_reply(401, {"error": {"message": f"invalid credentials; request was:\n{dump}"}})


def leaks(project: Project, *texts: str, secrets: tuple[str, ...] = (SECRET,)) -> list[str]:
    """Every place a secret shows up: the given outputs and every file under WOLLI_HOME."""
    found = []
    forms = [*secrets, *(base64.b64encode(s.encode()).decode() for s in secrets)]
    for text in texts:
        found += [f"output contains {s!r}" for s in forms if s in text]
    for path in project.home.rglob("*"):
        if path.is_file() and path.name not in ("models.json", "auth.json"):
            data = path.read_text("utf-8", "replace")
            found += [f"{path} contains {s!r}" for s in forms if s in data]
    return found


def with_header_secret(project: Project) -> None:
    models = json.loads((project.home / "models.json").read_text())
    models["providers"]["local"]["headers"] = {"x-proxy-key": HEADER_SECRET}
    (project.home / "models.json").write_text(json.dumps(models))


@pytest.mark.parametrize("mode", ["print", "json"])
def test_a_server_echoing_the_headers_puts_the_key_nowhere(hostile, mode):
    with_header_secret(hostile)
    hostile.server.push(echo_headers)
    args = ["-p", "hi"] if mode == "print" else ["--mode", "json", "hi"]
    result = hostile.run(*MODEL, *args, seconds=30, memory_mb=MEMORY_MB)
    assert_bounded(result, seconds=30, memory_mb=MEMORY_MB)
    assert result.returncode == 1
    assert "401 invalid credentials; request was: " in result.output  # the error still says what happened
    assert "[REDACTED]" in result.output
    export = hostile.run("--export", str(hostile.sessions()[0]), str(hostile.root / "out.html"), seconds=30)
    assert export.returncode == 0, export.output
    html = (hostile.root / "out.html").read_text()
    assert "[REDACTED]" in html
    assert leaks(hostile, result.output, html, secrets=(SECRET, HEADER_SECRET)) == []


def test_keys_from_auth_json_and_the_environment_are_redacted_too(hostile):
    models = json.loads((hostile.home / "models.json").read_text())
    del models["providers"]["local"]["apiKey"]
    (hostile.home / "models.json").write_text(json.dumps(models))
    stored = "sk-auth-1234567890abcdef"
    auth = hostile.home / "auth.json"
    auth.write_text(json.dumps({"local": {"type": "api_key", "key": stored}}))
    auth.chmod(0o600)
    hostile.server.push(lambda request: json_reply(
        500, {"error": {"message": f"boom {request.headers.get('authorization')} env={ENV_SECRET}"}}))
    result = hostile.run(*MODEL, "-p", "hi", seconds=30, env={"SOME_SERVICE_TOKEN": ENV_SECRET})
    assert result.returncode == 1
    assert "boom Bearer [REDACTED] env=[REDACTED]" in result.stderr
    assert leaks(hostile, result.output, secrets=(stored, ENV_SECRET)) == []


def test_credentials_in_the_base_url_are_never_printed(hostile):
    models = json.loads((hostile.home / "models.json").read_text())
    # Nothing listens on port 9: the connection error names the URL.
    models["providers"]["local"]["baseUrl"] = "http://admin:s3cret-pass@127.0.0.1:9/v1"
    (hostile.home / "models.json").write_text(json.dumps(models))
    result = hostile.run(*MODEL, "-p", "hi", seconds=40)
    assert_bounded(result, seconds=40)
    assert result.returncode == 1
    assert "Connection failed: could not reach http://[REDACTED]@127.0.0.1:9/v1" in result.stderr
    assert leaks(hostile, result.output, secrets=("s3cret-pass", "admin:s3cret-pass")) == []


def test_an_html_error_page_is_reduced_to_status_and_title(hostile):
    page = ("<!DOCTYPE html><html><head><title>502 Bad Gateway</title><style>body{}</style></head>"
            "<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center>" + "<p>x</p>" * 20000
            + "</body></html>").encode()
    for _ in range(2):  # the first answer and its one retry
        hostile.server.push(Reply(status=502, body=page, content_type="text/html"))
    result = hostile.run(*MODEL, "-p", "hi", seconds=30, memory_mb=MEMORY_MB)
    assert_bounded(result, seconds=30, memory_mb=MEMORY_MB)
    assert result.returncode == 1
    assert "502 Bad Gateway (the server answered with an HTML page, not the provider's API)" in result.stderr
    assert "<" not in result.stderr
    error = hostile.messages()[-1]["errorMessage"]
    assert "<" not in error and len(error) < 300


def test_an_error_message_is_one_capped_line(hostile):
    message = "line one\nline two\n" + "very long " * 5000
    hostile.server.push(json_reply(400, {"error": {"message": message}}))
    result = hostile.run(*MODEL, "-p", "hi", seconds=30)
    assert result.returncode == 1
    error = hostile.messages()[-1]["errorMessage"]
    assert "\n" not in error and len(error) <= 1000 and error.endswith("…")
    assert error.startswith("400 line one line two very long")
    said = [line for line in result.stderr.splitlines() if "line one" in line]
    assert len(said) == 1 and len(said[0]) < 1100


def test_an_endless_error_body_is_read_only_in_part(hostile):
    hostile.server.push(Reply(status=500, body=b'{"error": {"message": "', repeat=b"x" * 65536,
                              content_type="application/json"))
    hostile.settings(retry={"enabled": False})
    result = hostile.run(*MODEL, "-p", "hi", seconds=30, memory_mb=MEMORY_MB)
    assert_bounded(result, seconds=30, memory_mb=MEMORY_MB)
    assert result.returncode == 1
    assert "500" in result.stderr


def test_a_stalled_stream_times_out_is_retried_visibly_and_then_answers(hostile):
    stalled = text_answer("never finished").body[:300]  # a few chunks, then silence
    hostile.server.push(Reply(body=stalled, hang=True), text_answer("the second try worked"))
    hostile.settings(streamIdleTimeoutMs=1500)
    result = hostile.run(*MODEL, "-p", "hi", seconds=30)
    assert_bounded(result, seconds=15)
    assert result.returncode == 0, result.output
    assert "the second try worked" in result.stdout
    assert "retrying in" in result.stderr and "The stream stalled: no data from the provider for 1.5s" in result.stderr
    assert [m["role"] for m in hostile.messages()] == ["user", "assistant", "assistant"]
    assert hostile.messages()[1]["stopReason"] == "error"


def test_a_stream_that_stalls_every_time_gives_up_in_bounded_time(hostile):
    stalled = text_answer("never finished").body[:300]
    hostile.server.push(*(Reply(body=stalled, hang=True) for _ in range(4)))
    hostile.settings(streamIdleTimeoutMs=1000, retry={"maxRetries": 2, "baseDelayMs": 1})
    result = hostile.run(*MODEL, "-p", "hi", seconds=30)
    assert_bounded(result, seconds=15)
    assert result.returncode == 1
    assert "giving up after 3 attempts (2 retries): " in result.stderr
    assert "stream stalled" in result.stderr


def test_a_line_that_never_ends_is_cut_off(hostile):
    hostile.server.push(Reply(body=b"data: {\"choices\": [{\"delta\": {\"content\": \"", repeat=b"a" * 65536))
    hostile.settings(retry={"enabled": False})
    result = hostile.run(*MODEL, "-p", "hi", seconds=40, memory_mb=MEMORY_MB)
    assert_bounded(result, seconds=40, memory_mb=MEMORY_MB)
    assert result.returncode == 1
    assert "a line of over 16 MB without ending it" in result.stderr


def test_a_stream_that_never_stops_is_cut_off(hostile):
    text = "a" * 16384  # large pieces: the bound is the point here, not the per-token cost
    chunk = f'data: {{"choices": [{{"index": 0, "delta": {{"content": "{text}"}}, "finish_reason": null}}]}}\n\n'
    hostile.server.push(Reply(body=b'data: {"choices": [{"index": 0, "delta": {"role": "assistant"}}]}\n\n',
                              repeat=chunk.encode() * 4))
    hostile.settings(retry={"enabled": False})
    result = hostile.run(*MODEL, "--mode", "json", "hi", seconds=120, memory_mb=1024)
    assert_bounded(result, seconds=120, memory_mb=1024)
    assert result.returncode == 1
    assert "more than 128 MB for one answer" in result.stderr


def test_a_cut_stream_is_retried_and_the_cut_answer_kept(hostile):
    full = text_answer("a complete answer after all").body
    hostile.server.push(Reply(body=full, cut_after=len(full) // 2), text_answer("second answer"))
    result = hostile.run(*MODEL, "-p", "hi", seconds=30)
    assert result.returncode == 0, result.output
    assert "second answer" in result.stdout
    assert "retrying in" in result.stderr
    assert [m.get("stopReason") for m in hostile.messages()] == [None, "error", "stop"]
