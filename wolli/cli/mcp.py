"""``wolli mcp list|login NAME``: the MCP servers from the command line.

``list`` starts every configured server (as a headless run would), waits until each is
ready or failed, prints the same report as ``/mcp`` (``--json``: the same data as RPC's
``get_mcp_servers``) and stops them. ``login NAME`` runs the OAuth flow of one remote server:
the authorization URL is opened in the browser when there is one and printed always.
"""

from __future__ import annotations

import asyncio
import json
import sys

from ..base.text_safety import terminal_safe
from ..modes.interactive.open_url import open_in_browser
from ..runtime.startup.request import USAGE, StartupError, StartupRequest

USAGE_TEXT = """\
usage: wolli mcp list [--json] [--agent NAME] [--mcp-config FILE] [--strict-mcp-config] [--approve-project-mcp]
       wolli mcp login NAME [--agent NAME] [--mcp-config FILE]"""


def _parse(argv: list[str]) -> tuple[str, list[str], StartupRequest, bool]:
    if not argv or argv[0] not in ("list", "login"):
        raise StartupError(USAGE_TEXT, USAGE)
    action, rest = argv[0], argv[1:]
    request = StartupRequest(mode="print")
    names: list[str] = []
    as_json = False
    i = 0
    while i < len(rest):
        arg = rest[i]
        i += 1
        name, eq, inline = arg.partition("=")
        if name in ("--agent", "--mcp-config"):
            if not eq:
                if i >= len(rest):
                    raise StartupError(f"{name} needs a value", USAGE)
                inline, i = rest[i], i + 1
            if name == "--agent":
                request.agent = inline
            else:
                request.mcp_configs.append(inline)
        elif arg == "--strict-mcp-config":
            request.strict_mcp_config = True
        elif arg == "--approve-project-mcp":
            request.approve_project_mcp = True
        elif arg == "--json" and action == "list":
            as_json = True
        elif arg.startswith("-"):
            raise StartupError(f"unknown option {arg}\n{USAGE_TEXT}", USAGE)
        else:
            names.append(arg)
    if action == "login" and len(names) != 1:
        raise StartupError(f"wolli mcp login takes one server name\n{USAGE_TEXT}", USAGE)
    return action, names, request, as_json


async def _run(argv: list[str]) -> int:
    from ..runtime.startup.start import _configure_mcp, make_host

    action, names, request, as_json = _parse(argv)
    host, warnings = make_host(request)
    from ..packages.active import load_installed

    host.extensions.installed = load_installed(host.home, host.settings.get("packages"))  # plugins' servers
    warnings += _configure_mcp(host, request)
    for warning in warnings:
        print(f"wolli: {terminal_safe(warning)}", file=sys.stderr)
    link = host.mcp_link()
    try:
        if action == "list":
            await link.start(interactive=False, wait_known=True)
            if as_json:
                print(json.dumps({"servers": link.manager.snapshot(),
                                  "projectPending": link.sources.project_pending}, indent=2))
            else:
                print(terminal_safe(link.report()))  # server names, errors and stderr are data
            return 0

        def show(url: str) -> None:
            opened = open_in_browser(url)
            lead = "Opening your browser to log in to" if opened else "Open this URL to log in to"
            print(f"{lead} {names[0]}:\n  {terminal_safe(url)}\nWaiting for the browser…", flush=True)

        server = await link.manager.login(names[0], show)
        if server.state == "ready":
            print(f"Logged in: {names[0]} is {terminal_safe(server.summary())}.")
            return 0
        print(f"wolli: {names[0]}: {terminal_safe(server.summary())}", file=sys.stderr)
        return 1
    except ValueError as exc:
        print(f"wolli: {terminal_safe(str(exc))}", file=sys.stderr)
        return 1
    finally:
        await link.shutdown()


def run_mcp_command(argv: list[str]) -> int:
    try:
        return asyncio.run(_run(argv))
    except StartupError as exc:
        print(f"wolli: {exc}" if exc.exit_code != USAGE or not str(exc).startswith("usage") else str(exc),
              file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
