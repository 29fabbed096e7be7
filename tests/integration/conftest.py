from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import make_project


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path)


@pytest.fixture(autouse=True)
def close_rpc_clients():
    """RPC servers a test started end with the test (stdin closed, then killed if need be)."""
    yield
    from tests.support.rpc import close_started

    close_started()
