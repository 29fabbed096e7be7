"""Sessions under stress: two processes on one session, a stale lock, damaged files,
a --session that names nothing, history far larger than the model's window."""

from __future__ import annotations

import json
import os
import signal
import threading

from tests.support.loopback import Reply
from tests.support.openai_chat import text_answer

from .conftest import MODEL, Project
from .harness import assert_bounded


def held_answer(text: str, release: threading.Event, started: threading.Event) -> Reply:
    """An answer whose last part waits until ``release`` is set (the process stays busy)."""
    reply = text_answer(text)
    body = reply.body

    def on_write(sent: int) -> None:
        if sent >= len(body) // 2:
            started.set()
            release.wait(30)

    reply.on_write = on_write
    return reply


def first_session(project: Project) -> None:
    project.server.push(text_answer("first answer"))
    result = project.run(*MODEL, "-p", "first question", seconds=30)
    assert result.returncode == 0, result.output


def test_a_second_process_on_a_busy_session_forks_it_visibly_and_loses_nothing(hostile):
    first_session(hostile)
    original = hostile.sessions()[0]
    release, started = threading.Event(), threading.Event()
    hostile.server.push(held_answer("answer of A", release, started))
    a = hostile.start(*MODEL, "-p", "-c", "question of A", seconds=60)
    assert started.wait(20), "A never started its answer"
    hostile.server.push(text_answer("answer of B"))
    b = hostile.run(*MODEL, "-p", "-c", "question of B", seconds=30)
    release.set()
    done = a.finish()
    assert_bounded(done, seconds=60)
    assert done.returncode == 0 and "answer of A" in done.stdout, done.output
    assert b.returncode == 0 and "answer of B" in b.stdout, b.output
    assert f"{original} is being written by process" in b.stderr
    assert "so this one continues in a new session forked from its last complete exchange, nothing lost" \
        in b.stderr
    sessions = hostile.sessions()
    assert len(sessions) == 2
    fork = next(path for path in sessions if path != original)
    assert hostile.entries(fork)[0]["parentSession"] == str(original)
    texts = [m["content"] if isinstance(m["content"], str) else m["content"][0]["text"]
             for m in hostile.messages(original)]
    assert texts == ["first question", "first answer", "question of A", "answer of A"]
    forked = [m["content"] if isinstance(m["content"], str) else m["content"][0]["text"]
              for m in hostile.messages(fork)]
    assert forked == ["first question", "first answer", "question of B", "answer of B"]
    assert not os.path.exists(f"{original}.lock")  # released when A ended


def test_a_lock_left_by_a_killed_process_does_not_block(hostile):
    first_session(hostile)
    original = hostile.sessions()[0]
    release, started = threading.Event(), threading.Event()
    hostile.server.push(held_answer("never seen", release, started))
    a = hostile.start(*MODEL, "-p", "-c", "question of A", seconds=60)
    assert started.wait(20)
    a.signal(signal.SIGKILL)
    a.finish()
    release.set()
    assert os.path.exists(f"{original}.lock")  # left behind by the killed process
    hostile.server.push(text_answer("after the crash"))
    result = hostile.run(*MODEL, "-p", "-c", "again", seconds=30)
    assert result.returncode == 0, result.output
    assert "being written" not in result.stderr
    assert len(hostile.sessions()) == 1
    assert hostile.messages(original)[-1]["content"][0]["text"] == "after the crash"


def test_a_session_without_its_header_is_repaired_and_continues(hostile):
    first_session(hostile)
    path = hostile.sessions()[0]
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[1:]) + "\n")  # the header line is gone
    hostile.server.push(text_answer("still remembered"))
    result = hostile.run(*MODEL, "-p", "-c", "do you remember?", seconds=30)
    assert result.returncode == 0, result.output
    assert "no session header" in result.stderr and f"the original is kept as {path}.no-header" in result.stderr
    assert hostile.entries(path)[0]["type"] == "session"
    sent = hostile.server.requests[-1].json["messages"]
    assert [m["content"] for m in sent if m["role"] == "user"] == ["first question", "do you remember?"]
    assert (path.parent / f"{path.name}.no-header").exists()


def test_a_dangling_parent_is_reported_and_the_history_kept(hostile):
    first_session(hostile)
    path = hostile.sessions()[0]
    entries = hostile.entries(path)
    answer = next(e for e in entries if e.get("type") == "message" and e["message"]["role"] == "assistant")
    answer["parentId"] = "ffffffff"  # its parent (the question) lost
    path.write_text("\n".join(json.dumps(e) for e in entries) + "\n")
    number = entries.index(answer) + 1
    hostile.server.push(text_answer("ok"))
    result = hostile.run(*MODEL, "-p", "-c", "next", seconds=30)
    assert result.returncode == 0, result.output
    assert f"{path}:{number}: entry {answer['id']} names a parent ffffffff that is not in the file; " \
           "attached it to the entry before it" in result.stderr
    sent = hostile.server.requests[-1].json["messages"]
    assert [m["content"] for m in sent if m["role"] == "user"] == ["first question", "next"]


def test_session_naming_a_missing_file_is_a_usage_error_and_creates_nothing(hostile):
    result = hostile.run(*MODEL, "--session", "nosuch/dir/s.jsonl", "-p", "hi", seconds=20)
    assert result.returncode == 2
    assert "--session nosuch/dir/s.jsonl: no such session file" in result.stderr
    assert not (hostile.root / "nosuch").exists() and hostile.sessions() == []
    assert hostile.server.requests == []


def test_an_unknown_settings_key_is_named_with_the_nearest(hostile):
    hostile.settings(retyr={"maxRetries": 0})
    hostile.server.push(text_answer("ok"))
    result = hostile.run(*MODEL, "-p", "hi", seconds=20)
    assert result.returncode == 0, result.output
    assert "retyr: unknown setting; did you mean 'retry'?" in result.stderr


def test_every_missing_models_json_field_is_named(hostile):
    models = json.loads((hostile.home / "models.json").read_text())
    models["providers"]["bare"] = {"models": [{"name": "x"}]}
    (hostile.home / "models.json").write_text(json.dumps(models))
    hostile.server.push(text_answer("ok"))
    result = hostile.run(*MODEL, "-p", "hi", seconds=20)
    assert result.returncode == 0, result.output
    line = next(line for line in result.stderr.splitlines() if "providers.bare" in line)
    assert '"id"' in line and '"api"' in line and '"baseUrl"' in line


# ---------------------------------------------------------------------------- history > window

WINDOW = 32_000  # the test model's context window (tests/support/openai_chat.write_models_json)
SUMMARY_SYSTEM = "You write the working memory of a coding session"


def write_huge_history(project: Project, times: int) -> None:
    """A session as a 1M-token model left it: ``times`` windows of this model's history."""
    from wolli.ai.types import AssistantMessage, TextContent, Usage, UserMessage
    from wolli.session.manager import SessionManager

    manager = SessionManager.create(str(project.root), project.home / "agents" / "default" / "sessions")
    manager.append_model_change("local", "local-model")
    turn_chars = 12_000
    turns = times * WINDOW * 4 // (2 * turn_chars)
    for turn in range(turns):
        manager.append_message(UserMessage(content=f"question {turn}: " + "q" * turn_chars))
        manager.append_message(AssistantMessage(
            content=[TextContent(text=f"answer {turn}: " + "a" * turn_chars)], api="openai-completions",
            provider="local", model="local-model", stop_reason="stop",
            usage=Usage(input=(turn + 1) * 6000, output=3000, total_tokens=(turn + 1) * 6000 + 3000)))


class StrictServer:
    """Answers like a real server with a ``WINDOW``-token context: an over-long request gets
    the provider's overflow error, a summary request a summary, anything else an answer."""

    def __init__(self) -> None:
        self.sizes: list[int] = []
        self.summaries = 0
        self.answers = 0

    def __call__(self, request):
        from tests.support.loopback import json_reply

        tokens = len(request.body) // 4
        self.sizes.append(tokens)
        if tokens > WINDOW:
            return json_reply(400, {"error": {"message": f"This model's maximum context length is {WINDOW} tokens. "
                                                         f"However, your messages resulted in {tokens} tokens.",
                                              "code": "context_length_exceeded"}})
        system = request.json["messages"][0]["content"]
        if isinstance(system, str) and system.startswith(SUMMARY_SYSTEM):
            self.summaries += 1
            return text_answer(f"## Goal\nsummary {self.summaries}")
        self.answers += 1
        return text_answer(f"answer number {self.answers}")


def test_a_history_fifteen_times_the_window_answers_on_continue_and_again(hostile):
    write_huge_history(hostile, 15)
    server = StrictServer()
    hostile.server.push(*([server] * 200))
    result = hostile.run(*MODEL, "-p", "-c", "what next?", seconds=120)
    assert_bounded(result, seconds=120)
    assert result.returncode == 0, result.output[-3000:]
    assert "answer number 1" in result.stdout
    assert server.summaries >= 15  # summarised in pieces, each fitting the window
    assert max(server.sizes) <= WINDOW, server.sizes  # compacted before the first request: none too long
    compactions = [e for e in hostile.entries() if e.get("type") == "compaction"]
    assert len(compactions) == 1
    again = hostile.run(*MODEL, "-p", "-c", "and then?", seconds=60)
    assert again.returncode == 0, again.output[-3000:]
    assert "answer number 2" in again.stdout
    assert all(size <= WINDOW for size in server.sizes[-2:])
