"""Driving the real app with Textual's Pilot, on the scripted ``faux`` model.

``tui`` builds a :class:`WolliApp` for a temporary project whose ``models.json`` names the
faux provider, so the real startup path runs (settings, extensions, session file). The
model's answers are queued on ``faux``; tests wait on state, never on sleeps.
"""

from __future__ import annotations

import pytest

from wolli.runtime.startup.request import StartupRequest


@pytest.fixture
def make_app(faux, project, wolli_home):
    from wolli.modes.tui.app import WolliApp

    def build(*, extensions: list[str] | None = None, code: dict[str, str] | None = None,
              **request: object) -> WolliApp:
        """``code`` maps a file name to extension source, written beside the project and loaded."""
        paths = list(extensions or [])
        for name, source in (code or {}).items():
            path = project.parent / f"{name}.py"
            path.write_text(source)
            paths.append(str(path))
        fields: dict[str, object] = {"cwd": str(project), "model": "faux/faux-1",
                  # Tests of other things run every tool as before; permission tests pass a mode.
                  "permission_mode": "yolo", **request}
        req = StartupRequest(mode="tui", require_model=False, extension_paths=paths,
                             **fields)  # type: ignore[arg-type]
        return WolliApp(req, agent_home=wolli_home / "agents" / "default")

    return build


@pytest.fixture
def serve_with(project, wolli_home, loopback):
    """Starts ``wolli serve`` on the project's socket, its model the loopback server's, with
    the extension sources given (name -> code, written beside the project); each is stopped
    when the test ends."""
    from tests.support.rpc import write_models
    from tests.support.serve import ServeProcess

    write_models(wolli_home, loopback.url + "/v1")
    started: list[ServeProcess] = []

    def serve(**extensions: str) -> ServeProcess:
        args = []
        for name, source in extensions.items():
            path = project.parent / f"{name}.py"
            path.write_text(source)
            args += ["-e", str(path)]
        process = ServeProcess(project, project / "s.sock", "--model", "local/local-model", *args)
        started.append(process)
        process.wait_listening()
        return process

    yield serve
    for process in started:
        process.stop()


@pytest.fixture
def serve_process(serve_with):
    """``wolli serve`` with no extension (see ``serve_with``)."""
    return serve_with()
