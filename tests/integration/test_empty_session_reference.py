"""An empty session reference names no session: an error, never a new session in disguise.

Found by hand: ``wolli --session "" -p hi`` (``--session "$ID"`` with ``ID`` unset) started
a fresh session and answered, and RPC ``switch_session`` with ``"sessionPath": ""`` said
``success: true`` while a new, empty session replaced the current one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import session_files, wolli
from tests.support.openai_chat import text_answer
from tests.support.rpc import MODEL, start_client, write_models
from wolli.rpc_client import RpcError


@pytest.fixture
def models(wolli_home: Path, loopback) -> None:
    write_models(wolli_home, loopback.url + "/v1")


@pytest.mark.parametrize("ref", ["", "  "])
def test_an_empty_session_option_is_a_usage_error(project, wolli_home, loopback, models, ref):
    loopback.push(text_answer("never asked"))
    result = wolli([*MODEL, "--session", ref, "-p", "hi"], project)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == \
        "wolli: --session needs a session file or id, not an empty value (wolli -r lists them)"
    assert loopback.requests == [] and session_files(wolli_home) == []


def test_rpc_switch_session_to_an_empty_path_keeps_the_current_session(project, wolli_home, loopback, models):
    loopback.push(text_answer("first answer"))
    with start_client(project, *MODEL) as client:
        client.run("hello")
        before = client.get_state()
        with pytest.raises(RpcError, match="'sessionPath' must name a session file or id, not be empty"):
            client.request({"type": "switch_session", "sessionPath": ""})
        after = client.get_state()
        assert (after["sessionFile"], after["messageCount"]) == (before["sessionFile"], before["messageCount"])
