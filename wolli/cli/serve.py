"""``wolli serve`` and ``wolli attach``: the resident server and its clients (docs/server.md)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..runtime.startup.request import USAGE, StartupError, StartupRequest

SERVE_USAGE = """\
usage: wolli serve [--socket PATH] [--listen HOST:PORT [--token T | --no-auth] [--tls-cert FILE --tls-key FILE]]
                   [--idle-timeout SECONDS] [--agent NAME] [--model PROVIDER/ID] [-e PATH]... [--no-extensions]
       wolli serve --list [--json] [--socket PATH] [--agent NAME]"""
ATTACH_USAGE = "usage: wolli attach [SESSION | --last] [--plain | --tui] [--socket PATH] [--no-start] [--agent NAME]"
WEB_USAGE = "usage: wolli web [--listen HOST:PORT] [--socket PATH] [--no-start] [--agent NAME]"

_VALUED = {"--socket", "--listen", "--token", "--tls-cert", "--tls-key", "--idle-timeout", "--agent", "--model",
           "-e", "--extension"}
_FLAGS = {"--no-auth", "--list", "--json", "--no-extensions", "--plain", "--tui", "--last", "--no-start", "-h", "--help"}


def _parse(argv: list[str], usage: str) -> tuple[dict[str, list[str]], set[str], list[str]]:
    values: dict[str, list[str]] = {}
    flags: set[str] = set()
    positional: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        name, eq, inline = arg.partition("=")
        if name in _VALUED:
            if not eq:
                if i >= len(argv):
                    raise StartupError(f"{name} needs a value\n{usage}", USAGE)
                inline, i = argv[i], i + 1
            values.setdefault("--extension" if name == "-e" else name, []).append(inline)
        elif arg in _FLAGS:
            flags.add(arg)
        elif arg.startswith("-"):
            raise StartupError(f"unknown option {arg}\n{usage}", USAGE)
        else:
            positional.append(arg)
    return values, flags, positional


def _home(values: dict[str, list[str]]) -> Path:
    from ..config import paths

    try:
        return paths.agent_home(paths.agent_name(_last(values, "--agent")))
    except ValueError as exc:
        raise StartupError(f"--agent: {exc}", USAGE) from None


def _last(values: dict[str, list[str]], name: str) -> str | None:
    found = values.get(name)
    return found[-1] if found else None


def run_serve_command(argv: list[str]) -> int:
    try:
        return _serve(argv)
    except StartupError as exc:
        print(f"wolli: {exc}", file=sys.stderr)
        return exc.exit_code


def _serve(argv: list[str]) -> int:
    from ..modes.server.access import (
        AccessError,
        check_listen,
        load_or_create_token,
        parse_listen,
        socket_path,
    )

    values, flags, positional = _parse(argv, SERVE_USAGE)
    if "-h" in flags or "--help" in flags:
        print(SERVE_USAGE)
        return 0
    if positional:
        raise StartupError(f"wolli serve takes no arguments ({positional[0]!r})\n{SERVE_USAGE}", USAGE)
    home = _home(values)
    try:
        sock = socket_path(home, _last(values, "--socket"))
        if "--list" in flags:
            return _list(home, sock, "--json" in flags)
        listen = parse_listen(_last(values, "--listen") or "") if "--listen" in values else None
        token = _last(values, "--token")
        if token is not None and not token.strip():
            raise AccessError("--token is empty")
        if "--no-auth" in flags and token is not None:
            raise AccessError("--no-auth and --token contradict each other")
        made = False
        if listen is not None and token is None and "--no-auth" not in flags:
            token, made = load_or_create_token(home)
        if listen is not None:
            check_listen(listen, token)
        if ("--tls-cert" in values) != ("--tls-key" in values):
            raise AccessError("TLS needs both --tls-cert and --tls-key")
        idle = float(_last(values, "--idle-timeout") or 0)
    except AccessError as exc:
        raise StartupError(str(exc), USAGE) from None
    except ValueError:
        raise StartupError("--idle-timeout takes a number of seconds", USAGE) from None
    if made:
        print(f"wolli serve: the TCP token (shown only now; stored 0600 in {home / 'server.token'}):\n{token}",
              flush=True)
    from ..modes.server.serve import ServeOptions, run_serve

    request = StartupRequest(mode="rpc", agent=_last(values, "--agent"), model=_last(values, "--model"),
                             extension_paths=values.get("--extension", []),
                             no_extensions="--no-extensions" in flags, require_model=False)
    options = ServeOptions(socket_path=sock, listen=listen, token=token, tls_cert=_last(values, "--tls-cert"),
                           tls_key=_last(values, "--tls-key"), idle_timeout=idle)
    return run_serve(request, options)


def _list(home: Path, sock: Path, as_json: bool) -> int:
    from ..modes.server.client import ServerClient, ServerUnavailable, print_live_sessions

    try:
        client = ServerClient.unix(sock)
    except ServerUnavailable as exc:
        print(f"wolli: {exc} (start one with: wolli serve)", file=sys.stderr)
        return 1
    try:
        print_live_sessions(client, as_json)
    finally:
        client.close()
    return 0


def run_attach_command(argv: list[str]) -> int:
    try:
        values, flags, positional = _parse(argv, ATTACH_USAGE)
        if "-h" in flags or "--help" in flags:
            print(ATTACH_USAGE)
            return 0
        if len(positional) > 1:
            raise StartupError(f"wolli attach takes one session id at most\n{ATTACH_USAGE}", USAGE)
        home = _home(values)
        from ..modes.server.access import AccessError, socket_path

        try:
            sock = socket_path(home, _last(values, "--socket"))
        except AccessError as exc:
            raise StartupError(str(exc), USAGE) from None
    except StartupError as exc:
        print(f"wolli: {exc}", file=sys.stderr)
        return exc.exit_code
    if "--tui" in flags or ("--plain" not in flags and sys.stdin.isatty() and sys.stdout.isatty()):
        return _attach_app(home, sock, flags, values, positional[0] if positional else None)
    from ..modes.server.attach_plain import PlainAttach
    from ..modes.server.client import ServerClient, ServerUnavailable, connect_or_start

    try:
        client = connect_or_start(home, sock, start="--no-start" not in flags, agent=_last(values, "--agent"))
    except ServerUnavailable as exc:
        print(f"wolli: {exc}", file=sys.stderr)
        return 1

    def reconnect() -> ServerClient:
        return connect_or_start(home, sock, start="--no-start" not in flags, agent=_last(values, "--agent"))

    try:
        return PlainAttach(client, reconnect=reconnect).run(positional[0] if positional else None, os.getcwd())
    except RuntimeError as exc:  # the server refused (no such session...)
        print(f"wolli: {exc}", file=sys.stderr)
        client.close()
        return 1


def _attach_app(home: Path, sock: Path, flags: set[str], values: dict[str, list[str]], session_id: str | None) -> int:
    """The full-screen app on the server. Its ``attach`` goes out first, before anything else
    is imported, on the connection the app will use (docs/server.md); only when no server
    takes it is one looked for or started, the slower way."""
    from ..base import startup_gc
    from ..modes.server.ahead import attach_command, send_ahead

    request = StartupRequest(mode="tui", agent=_last(values, "--agent"))
    command = None if "--last" in flags else attach_command(session_id, request.cwd)
    ahead = send_ahead(sock, command) if command is not None else None
    if ahead is None:
        from ..modes.server.client import ServerUnavailable, connect_or_start

        try:
            connect_or_start(home, sock, start="--no-start" not in flags, agent=_last(values, "--agent")).close()
        except ServerUnavailable as exc:
            print(f"wolli: {exc}", file=sys.stderr)
            return 1
        ahead = send_ahead(sock, command) if command is not None else None
    from ..modes.server.attach_tui import run_attach_tui

    startup_gc.pause()  # until the history is built (as the standalone start does)
    try:
        return run_attach_tui(request, sock, session_id, join_live="--last" in flags, ahead=ahead)
    finally:
        startup_gc.resume()


def join_server(agent: str | None, messages: list[str]) -> int | None:
    """Plain ``wolli`` with the setting ``server.attach``: the full-screen app on a new
    session of the agent's server (started on demand), ``messages`` its first prompt. None
    when the setting is off (run in-process as usual)."""
    from ..config import paths
    from ..config.settings import Settings

    settings = Settings(agent)
    if not settings.get("server.attach"):
        return None
    from ..modes.server.access import socket_path
    from ..modes.server.ahead import attach_command, send_ahead
    from ..modes.server.client import ServerUnavailable, connect_or_start

    home = paths.agent_home(paths.agent_name(agent))
    sock = socket_path(home, None)
    idle = settings.get("server.idleTimeout")
    try:
        connect_or_start(home, sock, start=True, agent=agent,
                         idle_timeout=float(idle) if isinstance(idle, int) else 600.0).close()
    except ServerUnavailable as exc:
        print(f"wolli: {exc} (the setting server.attach is on; see docs/server.md)", file=sys.stderr)
        return 1
    request = StartupRequest(mode="tui", agent=agent, messages=[" ".join(messages)] if messages else [])
    ahead = send_ahead(sock, attach_command(None, request.cwd))  # a new session, opened while the app loads
    from ..modes.server.attach_tui import run_attach_tui

    return run_attach_tui(request, sock, None, ahead=ahead)


def run_web_command(argv: list[str]) -> int:
    """``wolli web``: the full-screen app in a browser, on the agent's server (docs/server.md)."""
    from ..modes.server.access import (
        AccessError,
        check_listen,
        load_or_create_token,
        parse_listen,
        socket_path,
    )

    try:
        values, flags, positional = _parse(argv, WEB_USAGE)
        if "-h" in flags or "--help" in flags:
            print(WEB_USAGE)
            return 0
        if positional:
            raise StartupError(f"wolli web takes no arguments ({positional[0]!r})\n{WEB_USAGE}", USAGE)
        home = _home(values)
        try:
            sock = socket_path(home, _last(values, "--socket"))
            address = parse_listen(_last(values, "--listen") or "127.0.0.1:7434")
            token, created = load_or_create_token(home)
            check_listen(address, token)
        except AccessError as exc:
            raise StartupError(str(exc), USAGE) from None
    except StartupError as exc:
        print(f"wolli: {exc}", file=sys.stderr)
        return exc.exit_code
    from ..modes.server.client import ServerUnavailable, connect_or_start
    from ..modes.server.web import WebOptions, WebUnavailable, run_web

    try:
        connect_or_start(home, sock, start="--no-start" not in flags, agent=_last(values, "--agent")).close()
    except ServerUnavailable as exc:
        print(f"wolli: {exc}", file=sys.stderr)
        return 1
    url = f"http://{address.host}:{address.port}/"
    if created:
        print(f"wolli web: open {url}?token={token}\n(the token is shown only now; stored 0600 in "
              f"{home / 'server.token'})", file=sys.stderr, flush=True)
    else:
        print(f"wolli web: open {url}?token=<the token in {home / 'server.token'}>", file=sys.stderr, flush=True)
    try:
        return run_web(WebOptions(address.host, address.port, token, sock, _last(values, "--agent")))
    except WebUnavailable as exc:
        print(f"wolli: {exc}", file=sys.stderr)
        return 1
