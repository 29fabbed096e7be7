"""Fuzzing what a client sends to ``wolli --mode rpc``: no input line can stop the server.

One real server process takes every generated batch (random bytes, random JSON values,
commands with random and wrong-typed fields, stray dialog answers). Property: after each
batch the server still answers ``get_state`` and every response it wrote is a proper one
(``type: response``, a ``command`` string, ``success``, and an ``error`` string when it
failed). Commands that run shell text or write files at a given path (``bash``,
``export_html``) are left out: their fields are paths and programs, not protocol.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.rpc import start_client
from wolli.modes.rpc.commands import COMMANDS
from wolli.rpc_client import RpcClient

FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
SAFE = sorted(set(COMMANDS) - {"bash", "export_html"}) + ["extension_ui_response", "nonsense", ""]
FIELDS = ["id", "message", "images", "streamingBehavior", "provider", "modelId", "level", "mode", "enabled",
          "customInstructions", "sessionPath", "entryId", "name", "parentSession", "value", "confirmed",
          "cancelled"]

json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
command = st.builds(
    lambda kind, fields: {"type": kind, **fields},
    st.sampled_from(SAFE) | json_value,
    st.dictionaries(st.sampled_from(FIELDS), json_value, max_size=4),
)
line = st.one_of(
    st.binary(max_size=60),
    json_value.map(lambda v: json.dumps(v).encode()),
    command.map(lambda c: json.dumps(c, ensure_ascii=False).encode("utf-8", "surrogatepass")),
)


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[RpcClient]:
    home = tmp_path_factory.mktemp("rpc_fuzz_home")
    project = tmp_path_factory.mktemp("rpc_fuzz_project")
    saved = {k: os.environ.get(k) for k in ("WOLLI_HOME", "HOME")}
    os.environ["WOLLI_HOME"] = str(home)
    os.environ["HOME"] = str(tmp_path_factory.mktemp("rpc_fuzz_user"))
    # No model (prompts fail at once) and no retries: nothing random reaches the network.
    (home / "settings.json").write_text(json.dumps({"retry": {"enabled": False}}))
    try:
        client = start_client(Path(project), "--no-session", timeout=30)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    yield client
    assert client.close() == 0


@FUZZ
@given(st.lists(line, min_size=1, max_size=12))
def test_no_input_line_stops_the_server(server: RpcClient, lines: list[bytes]) -> None:
    server.send_raw(b"\n".join(lines) + b"\n")
    answer = server.request_response({"type": "get_state"})
    assert answer["success"] is True and "sessionId" in answer["data"]
    assert server.process is not None and server.process.poll() is None
    for record in server.drain():
        if record.get("type") != "response":
            continue
        assert isinstance(record.get("command"), str) and isinstance(record.get("success"), bool), record
        if not record["success"]:
            assert isinstance(record.get("error"), str) and record["error"], record
