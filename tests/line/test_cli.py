"""``wolli --plain`` as a subprocess: prompts piped in line by line (no terminal), plain
text out, against a loopback OpenAI-compatible server."""

from __future__ import annotations

from tests.support.cli import wolli
from tests.support.openai_chat import text_answer, write_models_json


def test_piped_prompts_run_one_after_another_in_plain_text(tmp_path, wolli_home, loopback):
    write_models_json(wolli_home, loopback.url + "/v1")
    loopback.push(text_answer("First **answer**."), text_answer("Second answer."))
    done = wolli(["--plain", "--model", "local/local-model"], tmp_path, stdin="one\ntwo\n/session\n")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "\x1b" not in out
    assert "> one\n" in out and "First **answer**." in out
    assert out.index("First **answer**.") < out.index("> two\n") < out.index("Second answer.")
    assert "Messages  2 yours, 2 answers" in out
    assert len(loopback.requests) == 2


def test_mode_plain_is_the_same_and_a_bad_start_is_an_error(tmp_path, wolli_home):
    done = wolli(["--mode", "plain", "--model", "nosuch/model"], tmp_path, stdin="")
    assert done.returncode == 1
    assert "nosuch" in done.stderr
