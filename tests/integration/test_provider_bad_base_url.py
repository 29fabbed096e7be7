"""A baseUrl that is no http(s) URL is a configuration mistake: said once, never retried.

Found by hand: a models.json provider with ``"baseUrl": "localhost:11434/v1"`` (the scheme
left out) was retried three times with back-off (2 + 4 + 8 s in print mode) before the same
"unsupported URL" error was given, as if the server were only briefly unreachable.
"""

from __future__ import annotations

from tests.support.cli import wolli
from tests.support.openai_chat import write_models_json


def test_a_base_url_without_a_scheme_fails_at_once(project, wolli_home):
    write_models_json(wolli_home, "localhost:11434/v1")
    result = wolli(["--model", "local/local-model", "-p", "hi"], project, timeout=60)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "retrying" not in result.stderr, result.stderr
    assert lines[0].startswith("wolli: Connection failed: could not reach localhost:11434/v1/chat/completions")
    assert "is the provider's baseUrl right (models.json)?" in lines[0]
