"""``wolli web``: the full-screen app in a browser, attached to the server's sessions.

textual-serve (an optional dependency: ``pip install 'wolli[web]'``) serves a page whose
terminal runs one ``wolli attach --tui`` per browser tab, on Textual's web driver; that
process is an ordinary client of ``wolli serve`` on its Unix socket. What this module adds:

- **The token.** Every request needs the server's TCP token (``server.token``): the page
  is opened once as ``/?token=T``, which sets an HttpOnly, SameSite=Strict cookie and
  redirects to ``/``; without the cookie (or with a wrong token) the answer is 401. The
  WebSocket must also come from the page's own origin (no other site can drive it).
- **Nothing from the internet.** The page of textual-serve links a web font from Google;
  it is replaced by the same font served from the package's own static files.
- **A phone.** The page gets a viewport tag (the terminal fits the screen's width instead
  of a zoomed-out desktop page), and ``?fontsize=N`` sets the text size.
- **Which session.** ``/?session=ID`` attaches to that session; without it, the tab joins
  the session that is running (or the most recent live one), else a new one.
"""

from __future__ import annotations

import secrets
import shlex
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from .access import token_matches

if TYPE_CHECKING:
    from aiohttp import web

COOKIE = "wolli_web"
FONT_LINK = 'href="https://fonts.googleapis.com/css?family=Roboto%20Mono"'
VIEWPORT = '<meta name="viewport" content="width=device-width, initial-scale=1, maximum-scale=1" />'
FONT_FACE = ('<style>@font-face { font-family: "Roboto Mono"; '
             'src: url("{{ config.static.url }}fonts/RobotoMono-VariableFont_wght.ttf"); }</style>')


class WebUnavailable(RuntimeError):
    """textual-serve is not installed (the message says how to get it)."""


@dataclass
class WebOptions:
    host: str
    port: int
    token: str
    socket_path: Path
    agent: str | None = None


def attach_command(options: WebOptions, session: str | None) -> str:
    """The shell command each browser tab runs (textual-serve starts it with a shell)."""
    words = [sys.executable, "-m", "wolli", "attach", "--tui", "--no-start", "--socket", str(options.socket_path)]
    if options.agent:
        words += ["--agent", options.agent]
    words += [session] if session else ["--last"]
    return " ".join(shlex.quote(word) for word in words)


def _page_source(source: str) -> str:
    """textual-serve's page without anything from the internet, with a viewport tag."""
    start = source.find("<link", 0, source.find(FONT_LINK)) if FONT_LINK in source else -1
    if start >= 0:
        end = source.index("/>", source.index(FONT_LINK)) + 2
        source = source[:start] + FONT_FACE + source[end:]
    return source.replace("<head>", "<head>\n    " + VIEWPORT, 1)


def make_server(options: WebOptions) -> object:
    """The textual-serve server with the token check, the local page and per-tab sessions."""
    try:
        import jinja2
        from aiohttp import web
        from textual_serve.app_service import AppService
        from textual_serve.server import Server
    except ImportError:
        raise WebUnavailable("wolli web needs textual-serve: pip install 'wolli[web]' (or pip install textual-serve)") \
            from None

    class LocalPageLoader(jinja2.FileSystemLoader):
        def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, Callable[[], bool]]:
            source, filename, uptodate = super().get_source(environment, template)
            return _page_source(source), filename, uptodate

    cookie_value = secrets.token_urlsafe(32)  # what the browser holds, not the token itself

    class WolliWebServer(Server):  # type: ignore[misc]  # textual-serve ships no complete types
        async def _make_app(self) -> web.Application:
            app: web.Application = await super()._make_app()
            import aiohttp_jinja2

            aiohttp_jinja2.setup(app, loader=LocalPageLoader(self.templates_path))
            app.middlewares.append(_guard)
            app.router.add_get("/ws/{session}", self.handle_websocket)
            return app

        async def handle_index(self, request: web.Request) -> web.StreamResponse:
            # URLs of the page follow the address the browser used (an SSH forward, a phone).
            self.public_url = f"{request.scheme}://{request.host}"
            response: web.StreamResponse = await super().handle_index(request)
            session = request.query.get("session")
            if session and isinstance(response, web.Response) and response.text:
                # The tab's session goes into the WebSocket's path (the page adds a query).
                response.text = response.text.replace('/ws"', f'/ws/{quote(session, safe="")}"', 1)
            return response

        async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
            socket = web.WebSocketResponse(heartbeat=15)
            await socket.prepare(request)
            width = _int(request.query.get("width"), 80)
            height = _int(request.query.get("height"), 24)
            session = request.match_info.get("session") or None

            async def close() -> None:
                await socket.close()

            service = AppService(attach_command(options, session), write_bytes=socket.send_bytes,
                                 write_str=socket.send_str, close=close,
                                 download_manager=self.download_manager, debug=False)
            await service.start(width, height)
            try:
                await self._process_messages(socket, service)
            finally:
                await service.stop()
            return socket

    @web.middleware
    async def _guard(request: web.Request,
                     handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
        given = request.query.get("token")
        if given is not None:
            if not token_matches(options.token, given):
                return web.Response(status=401, text="wrong token (see server.token in the agent home)\n")
            rest = {k: v for k, v in request.query.items() if k != "token"}
            target = request.rel_url.with_query(rest)
            response = web.HTTPFound(str(target))
            response.set_cookie(COOKIE, cookie_value, httponly=True, samesite="Strict",
                                secure=request.scheme == "https")
            return response
        if not secrets.compare_digest(request.cookies.get(COOKIE, ""), cookie_value):
            return web.Response(status=401, text="open this page with ?token=T (the token in server.token)\n")
        origin = request.headers.get("Origin")
        if request.path.startswith("/ws") and origin is not None and origin != f"{request.scheme}://{request.host}":
            return web.Response(status=403, text="a WebSocket from another site\n")
        return await handler(request)

    return WolliWebServer("wolli attach", host=options.host, port=options.port, title="Wolli")


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default


def run_web(options: WebOptions) -> int:
    server = make_server(options)
    serve = getattr(server, "serve")  # noqa: B009  (textual-serve's untyped entry point)
    serve()
    return 0
