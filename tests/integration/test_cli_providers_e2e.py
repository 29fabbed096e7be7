"""The headless CLI against every provider API: a real ``python -m wolli`` subprocess, a
loopback server speaking each API's wire format, real files and real tool processes.

One ``models.json`` declares a provider per API (anthropic-messages, openai-responses,
google-generative-ai, openai-completions), all pointing at the same loopback server; the
request path tells which API a request was for.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support import wire_answers as W
from tests.support.cli import session_files, wolli
from tests.support.loopback import LoopbackServer, Reply
from tests.support.processes import alive
from tests.support.waiting import wait_until_sync
from tests.support.wire_answers import ANTHROPIC, APIS, CHAT, GOOGLE, RESPONSES, Call, answer, conversation

PY = shlex.quote(sys.executable)
CHECK = f"{PY} -c 'import calc; print(\"add(2, 3) =\", calc.add(2, 3))'"
EDIT = {"path": "calc.py", "edits": [{"old_text": "return a - b", "new_text": "return a + b"}]}


# ============================================================================ helpers




def model(api: str) -> list[str]:
    return ["--model", W.model_ref(api)]




@pytest.fixture
def providers(wolli_home: Path, loopback: LoopbackServer) -> LoopbackServer:
    W.write_models_json(wolli_home, loopback.url)
    (wolli_home / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 1}}))
    return loopback




def entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def request(server: LoopbackServer, index: int, api: str) -> dict[str, Any]:
    recorded = server.requests[index]
    assert W.api_of_path(recorded.path) == api, recorded.path
    return recorded.json


def results(api: str, body: dict[str, Any]) -> list[W.Turn]:
    return [t for t in conversation(api, body) if t.kind == "result"]


def calls(api: str, body: dict[str, Any]) -> list[W.Turn]:
    return [t for t in conversation(api, body) if t.kind == "call"]


def fix_and_check(api: str, server: LoopbackServer, *, thinking: str | None = "The subtraction is a bug.",
                  ids: tuple[str | None, str | None] = (None, None)) -> None:
    """Script: edit calc.py, run it with bash, then report."""
    server.push(
        answer(api, "Fixing calc.py.", calls=[Call("edit", EDIT, ids[0])], thinking=thinking),
        answer(api, calls=[Call("bash", {"command": CHECK}, ids[1])]),
        answer(api, "Fixed ✅ — add(2, 3) is 5 now (ünïcode split across chunks)."),
    )


# ============================================================================ 1-2. tools over every API, then -c


@pytest.mark.parametrize("api", APIS)
def test_edit_then_bash_then_continue(api, project, wolli_home, providers):
    fix_and_check(api, providers)
    result = wolli(["-p", *model(api), "fix add() in calc.py"], project)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Fixed ✅ — add(2, 3) is 5 now (ünïcode split across chunks).\n"
    assert (project / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert len(providers.requests) == 3

    first, second, third = (request(providers, i, api) for i in range(3))
    key = f"sk-test-{W.PROVIDERS[api]}"  # models.json apiKey, in each API's own header
    headers = providers.requests[0].headers
    assert {ANTHROPIC: headers.get("x-api-key"), GOOGLE: headers.get("x-goog-api-key")}.get(
        api, headers.get("authorization", "").removeprefix("Bearer ")) == key
    assert results(api, first) == []
    [edit_call] = calls(api, second)
    [edit_result] = results(api, second)
    assert edit_call.name == "edit" and edit_call.arguments == EDIT
    assert "Successfully replaced" in edit_result.text
    if api != GOOGLE:  # Gemini pairs results with calls by name (ids are client-made)
        assert edit_result.id == edit_call.id
    bash_result = results(api, third)[-1]
    assert "add(2, 3) = 5" in bash_result.text
    assert [c.name for c in calls(api, third)] == ["edit", "bash"]
    _assert_wire_shape(api, second)
    _assert_wire_shape(api, third)

    # 2. -c resumes the same file and replays the whole history in this API's shape.
    [session] = session_files(wolli_home)
    before = conversation(api, third)
    providers.push(answer(api, "Still 5."))
    again = wolli(["-p", "-c", *model(api), "check again"], project)
    assert again.returncode == 0, again.stderr
    assert again.stdout == "Still 5.\n"
    assert session_files(wolli_home) == [session]

    replay = conversation(api, request(providers, 3, api))
    # Everything the third request sent, then the final answer and the new prompt.
    assert [(t.kind, t.id, t.name) for t in replay[: len(before)]] == [(t.kind, t.id, t.name) for t in before]
    assert [t.kind for t in replay[len(before):]] == ["text", "user"]
    assert replay[-1].text.endswith("check again")
    assert [t.id for t in replay if t.kind == "call"] == [t.id for t in replay if t.kind == "result"]
    assert_valid_request(api, request(providers, 3, api), handed_off=False)
    if api == ANTHROPIC:  # thinking goes back unchanged, with its signature
        [thinking] = [t for t in replay if t.kind == "thinking"]
        assert thinking.text == "The subtraction is a bug."
        assert thinking.signature == W.signature_for("The subtraction is a bug.")
    elif api == RESPONSES:  # the encrypted reasoning item is replayed (store: false)
        [thinking] = [t for t in replay if t.kind == "thinking"]
        assert thinking.signature == "gAAAA" + W.signature_for("The subtraction is a bug.")
    elif api == GOOGLE:  # the thought signature rides on the call it came with
        edit = next(t for t in replay if t.kind == "call")
        assert edit.signature == W.signature_for("The subtraction is a bug.edit")


def _assert_wire_shape(api: str, body: dict[str, Any]) -> None:
    """The tool results sit where each API expects them."""
    if api == ANTHROPIC:
        last = body["messages"][-1]
        assert last["role"] == "user" and last["content"][0]["type"] == "tool_result"
        assert body["messages"][-2]["role"] == "assistant"
    elif api == RESPONSES:
        assert body["input"][-1]["type"] == "function_call_output"
        assert isinstance(body["input"][-1]["output"], str)
    elif api == GOOGLE:
        last = body["contents"][-1]
        assert last["role"] == "user" and "functionResponse" in last["parts"][0]
        assert isinstance(last["parts"][0]["functionResponse"]["response"], dict)
        assert body["contents"][-2]["role"] == "model"
    else:
        assert body["messages"][-1]["role"] == "tool"


# ============================================================================ 4. json mode


@pytest.mark.parametrize("api", APIS)
def test_json_mode_is_one_event_per_line(api, project, providers):
    fix_and_check(api, providers)
    result = wolli(["--mode", "json", *model(api), "fix add() in calc.py"], project)
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert events[0]["type"] == "session"
    types = [e["type"] for e in events[1:]]
    assert types[:3] == ["session_start", "run_state", "agent_start"]
    assert types[-3:] == ["agent_end", "run_state", "session_shutdown"]
    assert types.count("tool_execution_end") == 2 and types.count("turn_end") == 3
    ends = [e["message"] for e in events if e["type"] == "message_end" and e["message"]["role"] == "assistant"]
    assert [m["stopReason"] for m in ends] == ["toolUse", "toolUse", "stop"]
    assert all(m["api"] == api and m["provider"] == W.PROVIDERS[api] for m in ends)
    assert ends[0]["content"][0]["type"] == "thinking"
    assert ends[-1]["content"][-1]["text"] == "Fixed ✅ — add(2, 3) is 5 now (ünïcode split across chunks)."
    assert ends[-1]["usage"]["input"] == 120 and ends[-1]["usage"]["output"] == 30


# ============================================================================ 5. dropped stream, auto-retry


@pytest.mark.parametrize("api", APIS)
def test_a_dropped_stream_is_retried(api, project, wolli_home, providers):
    good = answer(api, "All good.")
    providers.push(W.cut(good, 0.6), good)
    result = wolli(["--mode", "json", *model(api), "hello"], project)
    assert result.returncode == 0, result.stderr
    assert len(providers.requests) == 2
    events = [json.loads(line) for line in result.stdout.splitlines()]
    types = [e["type"] for e in events]
    assert "auto_retry_start" in types and "auto_retry_end" in types
    retry_end = next(e for e in events if e["type"] == "auto_retry_end")
    assert retry_end["success"] is True
    final = [e["message"] for e in events if e["type"] == "message_end" and e["message"]["role"] == "assistant"]
    assert final[-1]["content"][-1]["text"] == "All good."
    # The retried request does not carry the failed half answer.
    assert [t.kind for t in conversation(api, request(providers, 1, api))] == ["user"]
    [session] = session_files(wolli_home)
    assistants = [e["message"] for e in entries(session) if e["type"] == "message" and e["message"]["role"] == "assistant"]
    assert assistants[-1]["stopReason"] == "stop"


# ============================================================================ 3. cross-provider hand-off

_ANTHROPIC_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_OPENAI_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def assert_valid_request(api: str, body: dict[str, Any], *, handed_off: bool) -> None:
    """What each API's server would check: pairing of calls and results, ids, signatures."""
    if api == ANTHROPIC:
        messages = body["messages"]
        for i, message in enumerate(messages):
            assert message["role"] == ("user" if i % 2 == 0 else "assistant"), messages
            blocks = message["content"]
            assert blocks and all(b["type"] != "text" or b["text"].strip() for b in blocks)
            if handed_off:
                assert not any(b["type"] in ("thinking", "redacted_thinking") for b in blocks)
            uses = [b["id"] for b in blocks if b["type"] == "tool_use"]
            assert all(_ANTHROPIC_ID.match(u) for u in uses), uses
            if uses:
                answers = [b["tool_use_id"] for b in messages[i + 1]["content"] if b["type"] == "tool_result"]
                assert answers == uses
            if message["role"] == "user" and i:
                previous = {b["id"] for b in messages[i - 1]["content"] if b["type"] == "tool_use"}
                assert {b["tool_use_id"] for b in blocks if b["type"] == "tool_result"} <= previous
    elif api == RESPONSES:
        items = body["input"]
        open_calls: list[str] = []
        for item in items:
            kind = item.get("type")
            if kind == "reasoning":
                assert not handed_off, item
                assert item.get("encrypted_content")
            elif kind == "function_call":
                assert _OPENAI_ID.match(item["call_id"]), item
                assert "id" not in item or item["id"].startswith("fc_"), item
                json.loads(item["arguments"])
                open_calls.append(item["call_id"])
            elif kind == "function_call_output":
                assert item["call_id"] in open_calls, item
                open_calls.remove(item["call_id"])
            elif item.get("role") == "assistant" and handed_off:
                assert "id" not in item, item
            else:
                assert open_calls == [], f"calls without output before {item}"
        assert open_calls == []
    elif api == GOOGLE:
        contents = body["contents"]
        assert contents[0]["role"] == "user"
        for i, content in enumerate(contents):
            assert content["role"] in ("user", "model") and content["parts"]
            if handed_off:
                assert not any("thoughtSignature" in p or p.get("thought") for p in content["parts"]), content
            names = [p["functionCall"]["name"] for p in content["parts"] if "functionCall" in p]
            if names:
                following = contents[i + 1]
                assert following["role"] == "user"
                responses = [p["functionResponse"] for p in following["parts"] if "functionResponse" in p]
                assert [r["name"] for r in responses] == names
                assert all(isinstance(r["response"], dict) for r in responses)
                ids = [p["functionCall"].get("id") for p in content["parts"] if "functionCall" in p]
                assert [r.get("id") for r in responses] == ids
    else:
        messages = [m for m in body["messages"] if m["role"] not in ("system", "developer")]
        for i, message in enumerate(messages):
            if handed_off:
                assert not any(k in message for k in ("reasoning_content", "reasoning", "reasoning_text")), message
            ids = [c["id"] for c in message.get("tool_calls") or []]
            assert not handed_off or all(_OPENAI_ID.match(i) and len(i) <= 40 for i in ids), ids  # OpenAI: <= 40
            if ids:
                following = [m["tool_call_id"] for m in messages[i + 1 : i + 1 + len(ids)] if m["role"] == "tool"]
                assert following == ids
            if message["role"] == "tool":
                earlier = [m for m in messages[:i] if m["role"] == "assistant"][-1]
                assert message["tool_call_id"] in [c["id"] for c in earlier.get("tool_calls") or []]


# Ids other servers really use: Kimi K2 on Chat Completions sends "functions.edit:0";
# Gemini on Vertex may send ids; base64-like ids with "+/=" come from some gateways.
ODD_IDS = {CHAT: ("functions.edit:0", "functions.bash:1"), GOOGLE: ("edit/0+x=", "bash 1")}


@pytest.mark.parametrize("source", [*APIS, "odd-chat-ids", "odd-gemini-ids"])
def test_hand_off_to_every_other_api(source, project, tmp_path, wolli_home, providers):
    ids: tuple[str | None, str | None] = (None, None)
    if source.startswith("odd-"):
        source = CHAT if source == "odd-chat-ids" else GOOGLE
        ids = ODD_IDS[source]
    fix_and_check(source, providers, thinking="The subtraction is a bug.", ids=ids)
    first = wolli(["-p", *model(source), "fix add() in calc.py"], project)
    assert first.returncode == 0, first.stderr
    [session] = session_files(wolli_home)
    assert_valid_request(source, request(providers, 2, source), handed_off=False)

    for n, target in enumerate(a for a in APIS if a != source):
        copy = tmp_path / f"handoff-{n}.jsonl"
        copy.write_bytes(session.read_bytes())
        providers.push(answer(target, f"Hello from {target}."))
        result = wolli(["-p", "--session", str(copy), *model(target), "anything else?"], project)
        assert result.returncode == 0, f"{source} -> {target}: {result.stderr}"
        assert result.stdout == f"Hello from {target}.\n"
        body = providers.requests[-1].json
        assert W.api_of_path(providers.requests[-1].path) == target
        assert_valid_request(target, body, handed_off=True)
        turns = conversation(target, body)
        assert [t.name for t in turns if t.kind == "call"] == ["edit", "bash"]
        assert [t.kind for t in turns].count("result") == 2
        assert any("add(2, 3) = 5" in t.text for t in turns if t.kind == "result")
        # The foreign thinking survives as plain text, never as the target's thinking.
        assert any("The subtraction is a bug." in t.text for t in turns if t.kind == "text")
        assert not any(t.kind == "thinking" for t in turns)
        assert turns[-1].kind == "user" and turns[-1].text.endswith("anything else?")
    # A session written by two providers exports (thinking, signatures and ids of both).
    page = assert_session_loadable(copy, project, tmp_path)
    assert [e["provider"] for e in page if e["type"] == "model_change"][-1] == W.PROVIDERS[target]


# ============================================================================ 6. SIGINT


def start_wolli(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "wolli", *args], cwd=cwd, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy(),
    )



def interrupt(process: subprocess.Popen[str], signum: int = signal.SIGINT,
              timeout: float = 10.0) -> tuple[int, float, str]:
    started = time.monotonic()
    process.send_signal(signum)
    try:
        _, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise AssertionError("wolli did not exit after SIGINT") from None
    return process.returncode, time.monotonic() - started, stderr


def assert_session_loadable(path: Path, cwd: Path, tmp_path: Path) -> list[dict[str, Any]]:
    lines = path.read_text().splitlines()
    loaded = [json.loads(line) for line in lines]  # every line whole
    assert loaded[0]["type"] == "session"
    out = tmp_path / f"{path.stem}.html"
    exported = wolli(["--export", str(path), str(out)], cwd)
    assert exported.returncode == 0, exported.stderr
    assert out.stat().st_size > 0
    return loaded


def slow(reply: Reply) -> Reply:
    reply.chunk_sizes = (5, 10)
    reply.pause = 0.05
    return reply


def messages_in(session: Path) -> list[dict[str, Any]]:
    return [e["message"] for e in entries(session) if e["type"] == "message"]


@pytest.mark.parametrize("api", APIS)
def test_sigint_while_streaming_saves_the_partial_answer(api, project, tmp_path, wolli_home, providers):
    providers.push(slow(answer(api, "A very slow answer. " * 200)))
    process = start_wolli(["-p", *model(api), "first"], project)
    providers.wait_for_requests(1)
    code, took, stderr = interrupt(process)
    assert code == 130, stderr
    assert took < 5, f"took {took:.1f}s to exit"
    assert "interrupted" in stderr

    [session] = session_files(wolli_home)  # the prompt is not lost
    assert_session_loadable(session, project, tmp_path)
    messages = messages_in(session)
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[1]["stopReason"] == "aborted"

    # The session goes on: the aborted answer is not replayed.
    providers.push(answer(api, "Second answer."))
    again = wolli(["-p", "-c", *model(api), "second"], project)
    assert again.returncode == 0, again.stderr
    assert again.stdout == "Second answer.\n"
    body = providers.requests[-1].json
    assert_valid_request(api, body, handed_off=False)
    assert [t.kind for t in conversation(api, body)] == ["user", "user"]


@pytest.mark.parametrize(("api", "signum"), [(ANTHROPIC, signal.SIGINT), (GOOGLE, signal.SIGINT),
                                             (CHAT, signal.SIGTERM), (ANTHROPIC, signal.SIGHUP)])
def test_interrupt_during_bash_kills_the_process_tree(api, signum, project, tmp_path, wolli_home, providers):
    command = "echo $$ > shell.pid; (sleep 300; echo late) & echo $! > child.pid; sleep 300"
    providers.push(answer(api, "Running it.", calls=[Call("bash", {"command": command})]))
    process = start_wolli(["-p", *model(api), "run the server"], project)
    wait_until_sync(lambda: (project / "child.pid").exists() and (project / "child.pid").read_text().strip(),
               what="the bash tool to start")
    pids = [int((project / name).read_text()) for name in ("shell.pid", "child.pid")]
    assert all(alive(pid) for pid in pids)
    code, took, stderr = interrupt(process, signum)
    assert code == 128 + signum, stderr
    assert took < 5
    wait_until_sync(lambda: not any(alive(pid) for pid in pids), timeout=5, what="the tool's processes to end")

    [session] = session_files(wolli_home)
    assert_session_loadable(session, project, tmp_path)
    messages = messages_in(session)
    assert [m["role"] for m in messages] == ["user", "assistant", "toolResult"]
    assert messages[2]["isError"] is True

    # Resuming with another provider: the request is valid and carries the aborted result.
    target = RESPONSES
    providers.push(answer(target, "Recovered."))
    again = wolli(["-p", "-c", *model(target), "what happened?"], project)
    assert again.returncode == 0, again.stderr
    body = providers.requests[-1].json
    assert_valid_request(target, body, handed_off=True)
    assert "aborted" in results(target, body)[0].text


# ============================================================================ options reaching the payload

THINKING_HIGH = {
    ANTHROPIC: lambda b: b["thinking"] == {"type": "enabled", "budget_tokens": 16384} and b["max_tokens"] > 16384,
    RESPONSES: lambda b: b["reasoning"]["effort"] == "high" and "reasoning.encrypted_content" in b["include"],
    GOOGLE: lambda b: b["generationConfig"]["thinkingConfig"] == {"includeThoughts": True, "thinkingBudget": 16384},
    CHAT: lambda b: b.get("reasoning_effort") == "high",
}
THINKING_OFF = {
    ANTHROPIC: lambda b: "thinking" not in b,
    RESPONSES: lambda b: "reasoning" not in b,
    GOOGLE: lambda b: "thinkingConfig" not in b["generationConfig"],
    CHAT: lambda b: "reasoning_effort" not in b,
}


@pytest.mark.parametrize("api", APIS)
def test_thinking_tools_and_system_prompt_reach_the_payload(api, project, providers):
    providers.push(answer(api, "ok"), answer(api, "ok"), answer(api, "ok"))
    result = wolli(["-p", *model(api), "--thinking", "high", "--tools", "read",
                    "--system-prompt", "You are Zed, a terse helper.",
                    "--append-system-prompt", "Always answer in French.", "hi"], project)
    assert result.returncode == 0, result.stderr
    body = request(providers, 0, api)
    assert THINKING_HIGH[api](body), body
    assert W.tool_names(api, body) == ["read"]
    system = W.system_prompt(api, body)
    assert system.startswith("You are Zed, a terse helper.")
    # Appended after everything else but the date and working directory lines.
    assert system.index("# Available tools") < system.index("Always answer in French.") < system.index("Current date")

    assert wolli(["-p", *model(api), "--thinking", "off", "--no-tools", "hi"], project).returncode == 0
    body = request(providers, 1, api)
    assert THINKING_OFF[api](body), body
    assert W.tool_names(api, body) == [] and "tools" not in body

    # The ":level" suffix of --model works like --thinking; all built-in tools by default.
    assert wolli(["-p", "--model", W.model_ref(api) + ":high", "hi"], project).returncode == 0
    body = request(providers, 2, api)
    assert THINKING_HIGH[api](body)
    assert set(W.tool_names(api, body)) == {"read", "bash", "edit", "write", "grep", "find", "ls"}
    assert W.system_prompt(api, body).startswith("You are Wolli")


PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


@pytest.mark.parametrize("api", APIS)
def test_image_attachment_is_an_image_block(api, project, providers):
    (project / "shot.png").write_bytes(PNG)
    providers.push(answer(api, "A single pixel."))
    result = wolli(["-p", *model(api), "@shot.png", "what is this?"], project)
    assert result.returncode == 0, result.stderr
    body = request(providers, 0, api)
    [user] = [t for t in conversation(api, body) if t.kind == "user" and t.images] or [None]
    assert user is not None, body
    raw = json.dumps(body)
    import base64

    assert base64.b64encode(PNG).decode() in raw
    assert "what is this?" in raw
    if api == ANTHROPIC:
        assert '"media_type": "image/png"' in raw
    elif api == GOOGLE:
        assert '"mimeType": "image/png"' in raw
    else:
        assert "data:image/png;base64," in raw


# ============================================================================ context overflow


@pytest.mark.parametrize("api", APIS)
def test_context_overflow_compacts_then_retries_once(api, project, tmp_path, wolli_home, providers):
    (wolli_home / "settings.json").write_text(
        json.dumps({"retry": {"baseDelayMs": 1}, "compaction": {"keepRecentTokens": 10}})
    )
    fix_and_check(api, providers)
    assert wolli(["-p", *model(api), "fix add() in calc.py"], project).returncode == 0
    [session] = session_files(wolli_home)

    providers.push(
        W.overflow_error(api),
        answer(api, "## Goal\\nFix calc.add.\\n## Progress\\nDone."),  # the summary
        answer(api, "Still fine after compaction."),
    )
    result = wolli(["--mode", "json", "-c", *model(api), "and now?"], project)
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    types = [e["type"] for e in events]
    assert "compaction_start" in types and "compaction_end" in types
    final = [e["message"] for e in events if e["type"] == "message_end" and e["message"]["role"] == "assistant"]
    assert final[-1]["content"][-1]["text"] == "Still fine after compaction."
    assert len(providers.requests) == 6

    compactions = [e for e in entries(session) if e["type"] == "compaction"]
    assert len(compactions) == 1 and "Fix calc.add." in compactions[0]["summary"]
    retried = request(providers, 5, api)
    assert_valid_request(api, retried, handed_off=False)
    text = json.dumps(retried)
    assert "Fix calc.add." in text and "and now?" in text
    assert "prompt is too long" not in text and "exceeds" not in text
    assert_session_loadable(session, project, tmp_path)  # a compacted session exports too


@pytest.mark.parametrize("api", [ANTHROPIC, GOOGLE])
def test_overflow_after_compaction_is_not_retried_forever(api, project, wolli_home, providers):
    (wolli_home / "settings.json").write_text(
        json.dumps({"retry": {"baseDelayMs": 1}, "compaction": {"keepRecentTokens": 10}})
    )
    fix_and_check(api, providers)
    assert wolli(["-p", *model(api), "fix add() in calc.py"], project).returncode == 0
    providers.push(W.overflow_error(api), answer(api, "A summary."), W.overflow_error(api))
    result = wolli(["-p", "-c", *model(api), "and now?"], project)
    assert result.returncode == 1
    assert len(providers.requests) == 6
    assert "too long" in result.stderr or "exceeds" in result.stderr


# ============================================================================ more shapes


@pytest.mark.parametrize("api", APIS)
def test_parallel_calls_and_an_image_tool_result(api, project, providers):
    (project / "shot.png").write_bytes(PNG)
    providers.push(
        answer(api, calls=[Call("read", {"path": "shot.png"}), Call("bash", {"command": "echo ünïcode; exit 3"})]),
        answer(api, "Seen both."),
    )
    result = wolli(["-p", *model(api), "look"], project)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Seen both.\n"
    body = request(providers, 1, api)
    assert_valid_request(api, body, handed_off=False)
    turns = conversation(api, body)
    assert [t.name for t in turns if t.kind == "call"] == ["read", "bash"]
    [_, bash_result] = [t for t in turns if t.kind == "result"]
    assert "ünïcode" in bash_result.text and "3" in bash_result.text
    import base64

    assert base64.b64encode(PNG).decode() in json.dumps(body), "the image the read tool returned is not sent"


# ============================================================================ HTTP errors and the retry settings

RATE_LIMITED = {
    ANTHROPIC: lambda: Reply(529, W.load_error("anthropic_529_overloaded.json"), {"x-should-retry": "true"},
                             "application/json"),
    RESPONSES: lambda: Reply(429, W.load_error("openai_429_rate_limit_exceeded.json"), {}, "application/json"),
    GOOGLE: lambda: Reply(503, b'{"error": {"code": 503, "message": "The model is overloaded.", "status": '
                               b'"UNAVAILABLE"}}', {}, "application/json"),
    CHAT: lambda: Reply(502, b"<html>bad gateway</html>", {}, "text/html"),
}


def write_settings(home: Path, retry: dict[str, Any]) -> None:
    (home / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 1, **retry}}))


@pytest.mark.parametrize("api", APIS)
def test_http_errors_follow_the_retry_settings(api, project, wolli_home, providers):
    write_settings(wolli_home, {"maxRetries": 2})
    providers.push(RATE_LIMITED[api](), answer(api, "Made it."))
    result = wolli(["-p", *model(api), "hi"], project)
    assert (result.returncode, result.stdout) == (0, "Made it.\n"), result.stderr
    assert len(providers.requests) == 2

    # A persistent failure: maxRetries retries in all (not maxRetries per layer), then a clear error.
    providers.push(*[RATE_LIMITED[api]() for _ in range(10)])
    result = wolli(["-p", *model(api), "hi"], project)
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert [line.split(" (attempt")[0] for line in lines[:2]] == ["wolli: retrying in 0.0s"] * 2, lines
    assert lines[2].startswith("wolli: giving up after 3 attempts (2 retries): ") and len(lines) == 3, lines
    assert len(providers.requests) == 2 + 3

    write_settings(wolli_home, {"enabled": False})
    providers.push(RATE_LIMITED[api](), answer(api, "not reached"))
    result = wolli(["-p", *model(api), "hi"], project)
    assert result.returncode == 1 and result.stdout == ""
    assert len(providers.requests) == 2 + 3 + 1


def test_a_server_wait_longer_than_max_delay_fails_at_once(project, wolli_home, providers):
    write_settings(wolli_home, {"maxDelayMs": 1000})
    providers.push(Reply(429, W.load_error("gemini_429_resource_exhausted_retryinfo.json"), {}, "application/json"),
                   answer(GOOGLE, "not reached"))
    started = time.monotonic()
    result = wolli(["-p", *model(GOOGLE), "hi"], project)
    assert result.returncode == 1
    assert time.monotonic() - started < 10
    assert "quota" in result.stderr and "34s" in result.stderr
    assert len(providers.requests) == 1


# ============================================================================ output limit inside a tool call


@pytest.mark.parametrize("api", APIS)
def test_a_tool_call_cut_by_the_output_limit_is_not_run(api, project, providers):
    (project / "calc.py").write_text("a = 1\nb = 2\n")
    two_edits = {"path": "calc.py", "edits": [{"old_text": "a = 1", "new_text": "a = 10"},
                                              {"old_text": "b = 2", "new_text": "b = 20"}]}
    arguments = json.dumps(two_edits, separators=(",", ":") if api == RESPONSES else (", ", ": "))
    cut = arguments.index("}") + 1  # the limit hit right after the first edit: it parses on its own
    providers.push(
        answer(api, calls=[Call("write", {"path": "notes.txt", "content": "hello"}), Call("edit", two_edits)],
               cut_arguments=cut),
        answer(api, "I will retry in smaller steps."),
    )
    result = wolli(["-p", *model(api), "change both"], project)
    assert result.returncode == 0, result.stderr
    assert (project / "calc.py").read_text() == "a = 1\nb = 2\n", "half of an edit list was applied"
    assert (project / "notes.txt").read_text() == "hello"  # the complete call before it ran
    write_result, edit_result = results(api, request(providers, 1, api))
    assert "output token limit" in edit_result.text
    assert "Successfully wrote" in write_result.text


def read_events_until(process: subprocess.Popen[str], wanted: str, timeout: float = 15.0) -> list[dict[str, Any]]:
    """JSON events from a running ``--mode json`` process, up to the first of type ``wanted``.

    Reads the raw file descriptor: a buffered ``readline`` after ``select`` would leave lines
    that arrived together in Python's buffer, where ``select`` cannot see them. A line cut at
    the end of the read that found ``wanted`` is lost to later readers.
    """
    import os
    import selectors

    events: list[dict[str, Any]] = []
    pending = b""
    deadline = time.monotonic() + timeout
    assert process.stdout is not None
    fd = process.stdout.fileno()
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not selector.select(remaining):
                raise TimeoutError(f"no {wanted} event; got {[e['type'] for e in events]}")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise AssertionError(f"wolli ended before {wanted}: {[e['type'] for e in events]}")
            pending += chunk
            *lines, pending = pending.split(b"\n")
            events += [json.loads(line) for line in lines]
            if any(e["type"] == wanted for e in events):
                return events  # with any whole lines that came in the same read


@pytest.mark.parametrize("api", [ANTHROPIC, RESPONSES])
def test_sigint_during_a_retry_wait_in_json_mode(api, project, wolli_home, providers):
    write_settings(wolli_home, {"baseDelayMs": 60_000})
    good = answer(api, "never")
    providers.push(W.cut(good, 0.5), good)
    process = start_wolli(["--mode", "json", *model(api), "hello"], project)
    before = read_events_until(process, "auto_retry_start")
    started = time.monotonic()
    process.send_signal(signal.SIGINT)
    rest, stderr = process.communicate(timeout=10)
    assert time.monotonic() - started < 5
    assert process.returncode == 130, stderr
    after = [json.loads(line) for line in rest.splitlines()]  # every line whole
    assert before[0]["type"] == "session"
    [retry_end] = [e for e in after if e["type"] == "auto_retry_end"]
    assert retry_end["success"] is False and "cancelled" in retry_end["finalError"].lower()
    assert len(providers.requests) == 1


def test_a_blank_prompt_is_refused_before_any_request(project, providers):
    result = wolli(["-p", *model(ANTHROPIC), "   "], project)
    assert result.returncode == 1
    assert "nothing to do" in result.stderr
    assert providers.requests == []


def test_a_plain_resume_keeps_the_model_and_level_used_last(project, wolli_home, providers):
    providers.push(answer(ANTHROPIC, "one"), answer(GOOGLE, "two"), answer(GOOGLE, "three"))
    assert wolli(["-p", *model(ANTHROPIC), "--thinking", "high", "one"], project).returncode == 0
    assert wolli(["-p", "-c", *model(GOOGLE), "--thinking", "low", "two"], project).returncode == 0
    result = wolli(["-p", "-c", "three"], project)
    assert (result.returncode, result.stdout) == (0, "three\n"), result.stderr
    body = request(providers, 2, GOOGLE)
    assert body["generationConfig"]["thinkingConfig"] == {"includeThoughts": True, "thinkingBudget": 2048}
    [session] = session_files(wolli_home)
    changes = [(e["type"], e.get("provider"), e.get("thinkingLevel")) for e in entries(session)
               if e["type"] in ("model_change", "thinking_level_change")]
    assert changes == [("model_change", "anth", None), ("thinking_level_change", None, "high"),
                       ("model_change", "gem", None), ("thinking_level_change", None, "low")]


def test_json_reader_going_away_stops_the_run_quietly(project, wolli_home, providers):
    """``wolli --mode json ... | head -1``: no traceback, no tool run for nobody."""
    # Streamed slowly, so the tool call cannot finish before the reader is gone.
    providers.push(answer(CHAT, calls=[Call("bash", {"command": "echo ran > ran.txt"})], chunk_sizes=(20, 40),
                          pause=0.02), answer(CHAT, "end"))
    process = start_wolli(["--mode", "json", *model(CHAT), "hi"], project)
    assert process.stdout is not None and process.stderr is not None
    assert json.loads(process.stdout.readline())["type"] == "session"
    process.stdout.close()
    stderr = process.stderr.read()
    assert process.wait(timeout=20) == 141, stderr
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr
    assert not (project / "ran.txt").exists()
