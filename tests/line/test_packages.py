"""/packages and /extensions enable|disable in the line mode: install a real wheel (after the
question), switch the package and one extension off and on, remove it; each change reloads."""

from __future__ import annotations

import os
import sys

import pytest

from tests.support.packages import REPO, build_wheel, installer_env
from tests.support.waiting import wait_until


@pytest.fixture
def pip_offline(monkeypatch):
    for key, value in installer_env().items():
        if key.startswith(("PIP_", "WOLLI_INSTALLER")):
            monkeypatch.setenv(key, value)
    for key in [k for k in os.environ if k.startswith("UV_")]:
        monkeypatch.delenv(key)


def _tools(term) -> list[str]:
    return [t.name for t in term.repl.startup.session.agent.state.tools]


async def test_packages_install_switch_and_remove_from_the_line_mode(line, pip_offline, tmp_path, wolli_home):
    saved_path = list(sys.path)
    wheel = build_wheel(REPO / "extensions", tmp_path / "wheels")
    try:
        term = await line()
        await term.wait_idle_prompt()
        await term.send(f"/packages install {wheel}")
        await term.wait_asked("Install a package?")
        assert "This runs third-party code" in term.text
        term.type("y")
        await term.wait_for("Installed wolli-examples 0.1.0.", timeout=120)
        await wait_until(lambda: "todo" in _tools(term), 10, "the package's tool")

        await term.send("/packages disable todo")  # one extension of the package
        await term.wait_for("todo is disabled.", timeout=30)
        assert "todo" not in _tools(term)
        await term.send("/extensions enable todo")
        await term.wait_for("todo is enabled.", timeout=30)
        assert "todo" in _tools(term)

        await term.send("/packages disable wolli-examples")
        await term.wait_for("wolli-examples is disabled.", timeout=30)
        assert "todo" not in _tools(term)
        await term.send("/packages")
        await term.wait_for("(package, disabled)")
        await term.wait_for("1. Enable wolli-examples")
        await term.wait_asked("Number, or words to narrow the list:")
        term.type("1\r")
        await term.wait_for("wolli-examples is enabled.", timeout=30)
        assert "todo" in _tools(term)

        await term.send("/packages remove wolli-examples")
        await term.wait_for("Removed wolli-examples.", timeout=60)
        assert not (wolli_home / "agents" / "default" / "packages").exists()
    finally:
        sys.path[:] = saved_path
        for name in [n for n in sys.modules if n.startswith("wolli_examples")]:
            del sys.modules[name]
