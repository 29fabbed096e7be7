"""ACP tests: the ``agent-client-protocol`` package's client side drives ``wolli --mode acp``
as a real subprocess, as an editor would; only the model is scripted (loopback server)."""

from __future__ import annotations

import pytest

from tests.support.acp_client import close_started


@pytest.fixture(autouse=True)
def close_acp_agents():
    yield
    close_started()
