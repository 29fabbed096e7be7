"""``wolli serve``, ``wolli attach`` and ``wolli web``: the resident server and its clients
(docs/server.md). Each subcommand names the options it takes (:class:`Subcommand`); reading
them, the agent's home and its server socket is written once (:func:`_read`)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..runtime.startup.request import USAGE, StartupError, StartupRequest

SERVE_USAGE = """\
usage: wolli serve [--socket PATH] [--listen HOST:PORT [--token T | --no-auth] [--tls-cert FILE --tls-key FILE]]
                   [--idle-timeout SECONDS] [--agent NAME] [--model PROVIDER/ID] [-e PATH]... [--no-extensions]
       wolli serve --list [--json] [--socket PATH] [--agent NAME]"""
ATTACH_USAGE = "usage: wolli attach [SESSION | --last] [--plain | --tui] [--socket PATH] [--no-start] [--agent NAME]"
WEB_USAGE = "usage: wolli web [--listen HOST:PORT] [--socket PATH] [--no-start] [--agent NAME]"


@dataclass(frozen=True)
class Subcommand:
    """What one subcommand's command line may hold: options with a value, switches, and how
    many plain words (a session id) at most. ``-h``/``--help`` every one takes."""

    name: str
    usage: str
    valued: frozenset[str]
    switches: frozenset[str]
    words: int = 0


SERVE = Subcommand("serve", SERVE_USAGE,
                   valued=frozenset({"--socket", "--listen", "--token", "--tls-cert", "--tls-key", "--idle-timeout",
                                     "--agent", "--model", "-e", "--extension"}),
                   switches=frozenset({"--no-auth", "--list", "--json", "--no-extensions"}))
ATTACH = Subcommand("attach", ATTACH_USAGE, valued=frozenset({"--socket", "--agent"}),
                    switches=frozenset({"--plain", "--tui", "--last", "--no-start"}), words=1)
WEB = Subcommand("web", WEB_USAGE, valued=frozenset({"--listen", "--socket", "--agent"}),
                 switches=frozenset({"--no-start"}))
_HELP = frozenset({"-h", "--help"})


@dataclass
class Arguments:
    """A subcommand's command line read: options, switches, words, and the agent's home and
    server socket that every one of them works with."""

    values: dict[str, list[str]]
    switches: set[str]
    words: list[str]
    home: Path
    socket: Path

    def last(self, name: str) -> str | None:
        return _last(self.values, name)


def _parse(argv: list[str], command: Subcommand) -> tuple[dict[str, list[str]], set[str], list[str]]:
    values: dict[str, list[str]] = {}
    switches: set[str] = set()
    words: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        name, eq, inline = arg.partition("=")
        if name in command.valued:
            if not eq:
                if i >= len(argv):
                    raise StartupError(f"{name} needs a value\n{command.usage}", USAGE)
                inline, i = argv[i], i + 1
            values.setdefault("--extension" if name == "-e" else name, []).append(inline)
        elif arg in command.switches or arg in _HELP:
            switches.add(arg)
        elif arg.startswith("-"):
            import difflib

            near = difflib.get_close_matches(name, sorted(command.valued | command.switches), n=1, cutoff=0.75)
            hint = f"; did you mean {near[0]}?" if near else ""
            raise StartupError(f"unknown option {name} for wolli {command.name}{hint}\n{command.usage}", USAGE)
        else:
            words.append(arg)
    return values, switches, words


def _read(argv: list[str], command: Subcommand) -> Arguments | None:
    """``argv`` read for ``command``: None when it asks for help (the usage was printed)."""
    from ..config import paths
    from ..modes.server.access import AccessError, socket_path

    values, switches, words = _parse(argv, command)
    if switches & _HELP:
        print(command.usage)
        return None
    if len(words) > command.words:
        takes = "no arguments" if not command.words else "one session id at most"
        raise StartupError(f"wolli {command.name} takes {takes} ({words[command.words]!r})\n{command.usage}", USAGE)
    try:
        home = paths.agent_home(paths.agent_name(_last(values, "--agent")))
    except ValueError as exc:
        raise StartupError(f"--agent: {exc}", USAGE) from None
    try:
        sock = socket_path(home, _last(values, "--socket"))
    except AccessError as exc:
        raise StartupError(str(exc), USAGE) from None
    return Arguments(values, switches, words, home, sock)


def _last(values: dict[str, list[str]], name: str) -> str | None:
    """The value of an option given once or more (the last one wins)."""
    found = values.get(name)
    return found[-1] if found else None


def _run(argv: list[str], command: Subcommand, body: Callable[[Arguments], int]) -> int:
    """Read ``argv`` for ``command`` and run ``body`` on it; a usage error is one line and
    exit status 2."""
    try:
        args = _read(argv, command)
        return 0 if args is None else body(args)
    except StartupError as exc:
        print(f"wolli: {exc}", file=sys.stderr)
        return exc.exit_code


def run_serve_command(argv: list[str]) -> int:
    return _run(argv, SERVE, _serve)


def _serve(args: Arguments) -> int:
    from ..modes.server.access import AccessError, check_listen, load_or_create_token, parse_listen

    if "--list" in args.switches:
        return _list(args.socket, "--json" in args.switches)
    no_auth = "--no-auth" in args.switches
    try:
        listen = parse_listen(args.last("--listen") or "") if "--listen" in args.values else None
        token = args.last("--token")
        if token is not None and not token.strip():
            raise AccessError("--token is empty")
        if no_auth and token is not None:
            raise AccessError("--no-auth and --token contradict each other")
        made = False
        if listen is not None and token is None and not no_auth:
            token, made = load_or_create_token(args.home)
        if listen is not None:
            check_listen(listen, token)
        if ("--tls-cert" in args.values) != ("--tls-key" in args.values):
            raise AccessError("TLS needs both --tls-cert and --tls-key")
        idle = float(args.last("--idle-timeout") or 0)
    except AccessError as exc:
        raise StartupError(str(exc), USAGE) from None
    except ValueError:
        raise StartupError("--idle-timeout takes a number of seconds", USAGE) from None
    if made:
        print(f"wolli serve: the TCP token (shown only now; stored 0600 in {args.home / 'server.token'}):\n{token}",
              flush=True)
    from ..modes.server.serve import ServeOptions, run_serve

    request = StartupRequest(mode="rpc", agent=args.last("--agent"), model=args.last("--model"),
                             extension_paths=args.values.get("--extension", []),
                             no_extensions="--no-extensions" in args.switches, require_model=False)
    options = ServeOptions(socket_path=args.socket, listen=listen, token=token, tls_cert=args.last("--tls-cert"),
                           tls_key=args.last("--tls-key"), idle_timeout=idle)
    return run_serve(request, options)


def _list(sock: Path, as_json: bool) -> int:
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
    return _run(argv, ATTACH, _attach)


def _attach(args: Arguments) -> int:
    session = args.words[0] if args.words else None
    if "--tui" in args.switches or ("--plain" not in args.switches and sys.stdin.isatty() and sys.stdout.isatty()):
        return _attach_app(args, session)
    from ..modes.server.attach_plain import PlainAttach
    from ..modes.server.client import ServerClient, ServerUnavailable, connect_or_start

    agent, start = args.last("--agent"), "--no-start" not in args.switches
    try:
        client = connect_or_start(args.home, args.socket, start=start, agent=agent)
    except ServerUnavailable as exc:
        print(f"wolli: {exc}", file=sys.stderr)
        return 1

    def reconnect() -> ServerClient:
        return connect_or_start(args.home, args.socket, start=start, agent=agent)

    try:
        return PlainAttach(client, reconnect=reconnect).run(session, os.getcwd())
    except RuntimeError as exc:  # the server refused (no such session...)
        print(f"wolli: {exc}", file=sys.stderr)
        client.close()
        return 1


def _attach_app(args: Arguments, session_id: str | None) -> int:
    """The full-screen app on the server. Its ``attach`` goes out first, before anything else
    is imported, on the connection the app will use (docs/server.md); only when no server
    takes it is one looked for or started, the slower way."""
    from ..base import startup_gc
    from ..modes.server.ahead import attach_command, send_ahead

    sock, agent = args.socket, args.last("--agent")
    request = StartupRequest(mode="tui", agent=agent)
    command = None if "--last" in args.switches else attach_command(session_id, request.cwd)
    ahead = send_ahead(sock, command) if command is not None else None
    if ahead is None:
        from ..modes.server.client import ServerUnavailable, connect_or_start

        try:
            connect_or_start(args.home, sock, start="--no-start" not in args.switches, agent=agent).close()
        except ServerUnavailable as exc:
            print(f"wolli: {exc}", file=sys.stderr)
            return 1
        ahead = send_ahead(sock, command) if command is not None else None
    from ..modes.server.attach_tui import run_attach_tui

    startup_gc.pause()  # until the history is built (as the standalone start does)
    try:
        return run_attach_tui(request, sock, session_id, join_live="--last" in args.switches, ahead=ahead)
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
    return _run(argv, WEB, _web)


def _web(args: Arguments) -> int:
    from ..modes.server.access import AccessError, check_listen, load_or_create_token, parse_listen

    try:
        address = parse_listen(args.last("--listen") or "127.0.0.1:7434")
        token, created = load_or_create_token(args.home)
        check_listen(address, token)
    except AccessError as exc:
        raise StartupError(str(exc), USAGE) from None
    from ..modes.server.client import ServerUnavailable, connect_or_start
    from ..modes.server.web import WebOptions, WebUnavailable, run_web

    try:
        connect_or_start(args.home, args.socket, start="--no-start" not in args.switches,
                         agent=args.last("--agent")).close()
    except ServerUnavailable as exc:
        print(f"wolli: {exc}", file=sys.stderr)
        return 1
    url = f"http://{address.host}:{address.port}/"
    where = args.home / "server.token"
    if created:
        print(f"wolli web: open {url}?token={token}\n(the token is shown only now; stored 0600 in {where})",
              file=sys.stderr, flush=True)
    else:
        print(f"wolli web: open {url}?token=<the token in {where}>", file=sys.stderr, flush=True)
    try:
        return run_web(WebOptions(address.host, address.port, token, args.socket, args.last("--agent")))
    except WebUnavailable as exc:
        print(f"wolli: {exc}", file=sys.stderr)
        return 1
