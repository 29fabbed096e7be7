"""``/mcp`` in the TUI with real MCP servers: the list with each server's state, switching a
server and one of its tools off and on (stored for the agent, gone from the model's tools),
reconnecting, reading a server's log; and the dialog asking to approve a project's
``.mcp.json``."""

from __future__ import annotations

import json
from pathlib import Path

from tests.mcp.conftest import python_server, write_mcp
from tests.mcp.helpers import agent_config
from tests.support.waiting import wait_until
from wolli.modes.tui.screens.confirm_dialog import ConfirmDialog
from wolli.modes.tui.screens.select_dialog import SelectDialog
from wolli.modes.tui.widgets.simple_messages import InfoView, NoticeView

from .helpers import running, type_and_send


def _manager(app):
    return app.controller.startup.host.mcp.manager


def _tool_names(app) -> list[str]:
    return [t.name for t in app.controller.session.agent.state.tools]


def _settings(home: Path) -> dict:
    return json.loads((home / "agents" / "default" / "settings.json").read_text())


async def _settled(app, *names: str) -> None:
    await wait_until(lambda: app.controller.startup.host.mcp is not None and
                     all(_manager(app).servers[n].settled and _manager(app).servers[n].state != "connecting"
                         for n in names), 30, f"the servers {names} settled")


async def _pick(app, pilot, title: str, starts_with: str) -> list[str]:
    """In the select dialog titled ``title``, choose the option starting with ``starts_with``
    (arrows and Enter, as a person would); returns every option's label."""
    await wait_until(lambda: isinstance(app.screen, SelectDialog) and app.screen.title_text == title, 5,
                     f"the menu {title!r}")
    labels = [str(option) for option in app.screen.options]
    index = next(i for i, label in enumerate(labels) if label.startswith(starts_with))
    await pilot.press(*(["down"] * index), "enter")
    await wait_until(lambda: not (isinstance(app.screen, SelectDialog) and app.screen.title_text == title), 5,
                     f"the menu {title!r} to close")
    return labels


def _texts(app, cls) -> str:
    return "\n".join(f"{widget.border_title or ''}\n{widget.render()}" for widget in app.query(cls))


async def test_the_mcp_menu_lists_states_and_switches_a_server_and_a_tool(make_app, wolli_home):
    agent_config(wolli_home, {"time": python_server("mcp-server-time"), "nope": {"command": "wolli-no-such-server"}})
    app = make_app()
    async with running(app, size=(110, 32)) as pilot:
        await _settled(app, "time", "nope")
        await wait_until(lambda: "mcp__time__convert_time" in _tool_names(app), 10, "the server's tools")

        await type_and_send(pilot, "/mcp")
        labels = await _pick(app, pilot, "MCP servers", "time")
        assert labels[:2] == ["time — ready, 2 tools", "nope — failed: command not found: wolli-no-such-server"]
        actions = await _pick(app, pilot, "time", "tools")
        assert actions == ["reconnect", "disable", "tools…", "log"]
        tools = await _pick(app, pilot, "time: switch a tool on or off", "on  convert_time")
        assert tools == ["on  get_current_time", "on  convert_time"]
        await wait_until(lambda: "mcp__time__convert_time" not in _tool_names(app), 5, "the tool to go")
        assert "mcp__time__get_current_time" in _tool_names(app)
        assert _settings(wolli_home)["mcp"]["disabledTools"] == ["time/convert_time"]
        assert "time/convert_time: disabled for this agent" in _texts(app, NoticeView)

        await type_and_send(pilot, "/mcp")
        await _pick(app, pilot, "MCP servers", "time")
        await _pick(app, pilot, "time", "disable")
        await wait_until(lambda: _manager(app).servers["time"].state == "disabled", 10, "the server disabled")
        assert not any(n.startswith("mcp__time__") for n in _tool_names(app))
        assert _settings(wolli_home)["mcp"]["disabledServers"] == ["time"]

        await type_and_send(pilot, "/mcp")
        labels = await _pick(app, pilot, "MCP servers", "time")
        assert labels[0] == "time — disabled"
        actions = await _pick(app, pilot, "time", "enable")
        assert actions[1] == "enable"
        await wait_until(lambda: "mcp__time__get_current_time" in _tool_names(app), 30, "the server back")
        assert "mcp__time__convert_time" not in _tool_names(app)  # the tool stays off
        assert _settings(wolli_home)["mcp"]["disabledServers"] == []

        await type_and_send(pilot, "/mcp")
        await _pick(app, pilot, "MCP servers", "time")
        await _pick(app, pilot, "time", "tools")
        await _pick(app, pilot, "time: switch a tool on or off", "off convert_time")
        await wait_until(lambda: "mcp__time__convert_time" in _tool_names(app), 5, "the tool back")
        assert _settings(wolli_home)["mcp"]["disabledTools"] == []


async def test_reconnect_starts_the_server_again_and_its_log_is_readable(make_app, wolli_home):
    agent_config(wolli_home, {"time": python_server("mcp-server-time")})
    app = make_app()
    async with running(app, size=(110, 32)) as pilot:
        await _settled(app, "time")
        server = _manager(app).servers["time"]
        first_pid = server.process.pid

        await type_and_send(pilot, "/mcp")
        await _pick(app, pilot, "MCP servers", "time")
        await _pick(app, pilot, "time", "reconnect")
        await wait_until(lambda: server.state == "ready" and server.process is not None
                         and server.process.pid != first_pid, 30, "the server restarted")
        assert "time: reconnecting" in _texts(app, NoticeView)

        await type_and_send(pilot, "/mcp")
        await _pick(app, pilot, "MCP servers", "time")
        await _pick(app, pilot, "time", "log")
        await wait_until(lambda: "MCP server time: log" in _texts(app, InfoView), 5, "the log")
        log = _texts(app, InfoView)
        assert f"(pid {first_pid})" in log and f"(pid {server.process.pid})" in log
        assert log.count("ready: 2 tools") == 2


async def test_a_project_file_is_approved_in_a_dialog(make_app, wolli_home, project):
    write_mcp(project / ".mcp.json", {"time": python_server("mcp-server-time")})
    app = make_app()
    async with running(app, size=(110, 32)) as pilot:
        await wait_until(lambda: isinstance(app.screen, ConfirmDialog), 10, "the approval dialog")
        assert app.screen.title_text == "Project MCP servers"
        assert ".mcp.json wants to start these MCP servers: time" in app.screen.message
        assert "mcp__time__get_current_time" not in _tool_names(app)
        await pilot.press("y")
        await wait_until(lambda: "mcp__time__get_current_time" in _tool_names(app), 30, "the project's server")
    approvals = json.loads((wolli_home / "agents" / "default" / "mcp-approvals.json").read_text())
    assert list(approvals["projects"].values())[0]["verdict"] == "approved"


async def test_a_project_file_refused_in_the_dialog_starts_nothing_and_is_not_asked_again(make_app, wolli_home,
                                                                                          project):
    write_mcp(project / ".mcp.json", {"time": python_server("mcp-server-time")})
    app = make_app()
    async with running(app, size=(110, 32)) as pilot:
        await wait_until(lambda: isinstance(app.screen, ConfirmDialog), 10, "the approval dialog")
        await pilot.press("n")
        await wait_until(lambda: "run /mcp approve" in _texts(app, NoticeView), 5, "the notice")
        assert "time" not in _manager(app).servers
    app = make_app()
    async with running(app, size=(110, 32)) as pilot:
        await wait_until(lambda: app.controller.startup.host.mcp.started, 10, "the MCP start")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmDialog)
        assert "time" not in _manager(app).servers
