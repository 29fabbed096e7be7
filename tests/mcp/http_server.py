"""A small streamable-HTTP MCP server written with the SDK's server side, behind a bearer token.

Runs uvicorn in a thread on 127.0.0.1 (a port of its own). ``calls`` records what the tools
saw, so a test can check that a cancelled call was cancelled on the server too.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import Any

from tests.support.waiting import wait_until_sync


class BearerServer:
    def __init__(self, token: str = "s3cret-token") -> None:
        import uvicorn
        from mcp.server.mcpserver import MCPServer

        self.token = token
        self.events: list[str] = []
        self.release = threading.Event()
        server = MCPServer("bearer-test", instructions="test server")
        events = self.events

        @server.tool(description="Add two integers.")
        def add(a: int, b: int) -> int:
            return a + b

        @server.tool(description="Wait until released; records cancellation.")
        async def wait_long(seconds: float = 30.0) -> str:
            events.append("wait started")
            try:
                await asyncio.sleep(seconds)
            except asyncio.CancelledError:
                events.append("wait cancelled")
                raise
            return "waited"

        @server.resource("memo://greeting", description="A short greeting.")
        def greeting() -> str:
            return "Hello from the memo resource."

        @server.prompt(description="Ask for a review of a topic.")
        def review(topic: str) -> str:
            return f"Please review {topic} carefully."

        app = server.streamable_http_app()
        expected = f"Bearer {token}".encode()

        async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != expected:
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json")]})
                await send({"type": "http.response.body", "body": b'{"error": "invalid_token"}'})
                return
            await app(scope, receive, send)

        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._server = uvicorn.Server(uvicorn.Config(guarded, log_level="error", lifespan="on"))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True)
        self._thread.start()
        wait_until_sync(lambda: self._server.started, 15, "the test MCP server to start")

    def close(self) -> None:
        self._server.should_exit = True
        self._thread.join(10)
        self._sock.close()
