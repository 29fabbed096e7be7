"""Hook results of the wrong shape are named after the hook's file, not dropped in silence.

Found by hand with one hook file at a time under ``wolli -p``: a ``provider_request`` hook
returning a string and a ``context`` hook returning ``{"messages": "x"}`` were ignored
without a word; an ``agent_start`` hook returning ``{"message": 5}`` was reported as
``before_agent_start: ...`` (the hook's file lost), and its ``"system_prompt": 7`` dropped
without a word.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import wolli
from tests.support.openai_chat import text_answer, write_models_json


@pytest.mark.parametrize(("event", "returns", "said"), [
    ("provider_request", '"not a payload"',
     ["before_provider_request handler failed: returned str instead of a payload dict or None; it was ignored"]),
    ("context", '{"messages": "x"}', ["context handler failed: 'messages' must be a list, not str; it was ignored"]),
    ("agent_start", '{"message": 5, "system_prompt": 7}',
     ["before_agent_start handler failed: 'message' holds int, not a custom message (a dict with custom_type "
      "and content); it was skipped",
      "before_agent_start handler failed: 'system_prompt' must be a string, not int; it was ignored"]),
])
def test_a_wrongly_shaped_hook_result_is_reported_with_the_hook_file(project, wolli_home: Path, loopback,
                                                                    event, returns, said):
    write_models_json(wolli_home, loopback.url + "/v1")
    hooks = wolli_home / "agents" / "default" / "hooks"
    hooks.mkdir(parents=True)
    hook = hooks / "shape.py"
    hook.write_text(f"from wolli import define_hook\n\nhook = define_hook(before={event!r}, run=lambda e, c: {returns})\n")
    loopback.push(text_answer("still answered"))
    result = wolli(["--model", "local/local-model", "-p", "hi"], project)
    assert (result.returncode, result.stdout) == (0, "still answered\n"), result.stderr
    assert result.stderr.splitlines() == [f"wolli: {hook}: {line}" for line in said]
