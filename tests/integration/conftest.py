from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import make_project
from tests.support.rpc import write_models
from tests.support.serve import ServeProcess

# The local model the `wolli serve` tests' servers answer with (the loopback server's).
SERVE_MODEL = ["--model", "local/local-model"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path)


@pytest.fixture(autouse=True)
def close_rpc_clients():
    """RPC servers a test started end with the test (stdin closed, then killed if need be)."""
    yield
    from tests.support.rpc import close_started

    close_started()


@pytest.fixture
def served(project: Path, wolli_home: Path, loopback):
    """Starts ``wolli serve`` processes on the project's socket (extra arguments as given);
    every one still running is killed when the test ends."""
    write_models(wolli_home, loopback.url + "/v1")
    started: list[ServeProcess] = []

    def serve(*args: str) -> ServeProcess:
        server = ServeProcess(project, project / "s.sock", *SERVE_MODEL, *args)
        started.append(server)
        return server

    yield serve
    for server in started:
        if server.process.poll() is None:
            server.process.kill()
            server.process.wait(10)
