"""End to end in a real browser: ``wolli web`` serves the full-screen app; Debian's Chromium,
driven by Playwright on a phone-sized viewport, opens it with the token, types a prompt and
sees the scripted answer, and the server's other client sees the same run. The page asks
nothing of the internet (every request goes to the local server)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.openai_chat import text_answer
from tests.support.rpc import write_models
from tests.support.serve import ServeProcess, records_until, settled
from tests.support.waiting import wait_for_value_sync, wait_until_sync

CHROMIUM = "/usr/bin/chromium"
playwright_api = pytest.importorskip("playwright.sync_api", reason="needs playwright (pip install playwright)")
pytest.importorskip("textual_serve", reason="needs textual-serve (pip install 'wolli[web]')")
pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium (apt-get install chromium)")

# Everything the terminal in the page receives, kept where the test can read it (the page
# draws on a canvas, so its text is not in the DOM).
RECORD_OUTPUT = """
window.__wolliOutput = [];
const Native = window.WebSocket;
window.WebSocket = function (url, protocols) {
  const socket = new Native(url, protocols);
  socket.addEventListener("message", (event) => {
    if (typeof event.data === "string") { window.__wolliOutput.push(event.data); }
    else { window.__wolliOutput.push(new TextDecoder().decode(event.data)); }
  });
  return socket;
};
window.WebSocket.prototype = Native.prototype;
"""
ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[PX^_].*?\x1b\\\\|\x1b\][^\x07]*\x07|\x1b.")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _shown(page: object) -> str:
    chunks = page.evaluate("window.__wolliOutput")  # type: ignore[attr-defined]
    return ANSI.sub("", "".join(chunks))


def _wait_shown(page: object, text: str, timeout: float = 30.0) -> str:
    return wait_for_value_sync(lambda: _shown(page), lambda shown: text in shown.replace("\n", ""), timeout,
                               lambda shown: f"{text!r} never reached the page; it got: {shown[-2000:]!r}", 0.1)


def test_the_browser_runs_a_prompt_on_the_server(tmp_path: Path, wolli_home: Path, loopback):
    project = tmp_path / "project"
    project.mkdir()
    write_models(wolli_home, loopback.url + "/v1")
    sock = project / "s.sock"
    server = ServeProcess(project, sock, "--model", "local/local-model")
    port = _free_port()
    web = None
    try:
        other = server.client()
        session_id = other.call({"type": "attach", "new": True})["sessionId"]
        web = subprocess.Popen([sys.executable, "-m", "wolli", "web", "--socket", str(sock), "--no-start",
                                "--listen", f"127.0.0.1:{port}"], cwd=project, env=os.environ.copy(),
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True)

        def answering() -> bool:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return True
            except OSError:
                return web is not None and web.poll() is not None

        wait_until_sync(answering, timeout=30, what="wolli web to listen")
        assert web.poll() is None, web.stderr.read().decode() if web.stderr else ""
        token = (wolli_home / "agents" / "default" / "server.token").read_text().strip()
        base = f"http://127.0.0.1:{port}/"
        with playwright_api.sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            try:
                context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True,
                                              has_touch=True, device_scale_factor=2)
                outside: list[str] = []
                context.on("request", lambda request: None if request.url.startswith(("http://127.0.0.1", "ws://127.0.0.1", "data:"))
                           else outside.append(request.url))
                page = context.new_page()
                page.add_init_script(RECORD_OUTPUT)
                assert page.goto(base).status == 401  # no token, no page
                page.goto(f"{base}?token={token}&session={session_id}")
                _wait_shown(page, "Attached to session")
                loopback.push(text_answer("Answered in the browser."))
                page.locator("#terminal").click()
                page.keyboard.type("typed on a phone")
                page.keyboard.press("Enter")
                seen = records_until(other, settled, timeout=60)
                assert any(r["type"] == "message_start" and "typed on a phone" in str(r["message"]["content"])
                           for r in seen)
                _wait_shown(page, "Answered in the browser.")
                assert outside == []
            finally:
                browser.close()
    finally:
        if web is not None:
            web.terminate()
            try:
                web.wait(10)
            except subprocess.TimeoutExpired:
                web.kill()
        server.process.kill()
        server.process.wait(10)
