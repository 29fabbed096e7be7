"""Options whose value is empty, or that contradict each other: a usage error, nothing sent.

Found by hand: ``wolli --model "" -p hi`` (a ``--model "$MODEL"`` with MODEL unset) answered
with whichever model came next in the preference order; ``--provider ""``, ``--api-key ""``
and ``--agent ""`` were dropped the same way, ``--tools ""`` gave every default tool, and
``--tools read --no-tools`` and ``-c --session X`` each silently ignored one of the two.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import session_files, wolli
from tests.support.openai_chat import text_answer, write_models_json

MODEL = ["--model", "local/local-model"]


@pytest.mark.parametrize(("given", "error"), [
    (["--model", ""], "wolli: --model needs a value, not an empty string"),
    (["--provider", " "], "wolli: --provider needs a value, not an empty string"),
    (["--api-key="], "wolli: --api-key needs a value, not an empty string"),
    (["--agent", ""], "wolli: --agent needs a value, not an empty string"),
    (["--tools", ""], "wolli: --tools needs a value, not an empty string (--no-tools for none)"),
    (["--tools", "read", "--no-tools"], "wolli: --tools and --no-tools contradict each other: give one of them"),
    (["-c", "--session", "abc"], "wolli: --continue and --session contradict each other: give one of them"),
])
def test_an_empty_or_contradicting_option_is_a_usage_error(project, wolli_home: Path, loopback, given, error):
    write_models_json(wolli_home, loopback.url + "/v1")
    loopback.push(text_answer("never asked"))
    result = wolli([*MODEL, *given, "-p", "hi"], project)
    assert (result.returncode, result.stderr.strip()) == (2, error)
    assert loopback.requests == [] and session_files(wolli_home) == []
