"""End to end in a real terminal (tmux, no kitty keyboard protocol): an extension's Ctrl+Alt+,
Alt+ and F6 shortcuts fire (not Ctrl+P's model switch, not a typed letter, not the editor's
F6); the one the terminal cannot send is reported at start; a renderer that raises leaves a
session that opens again with `wolli -c`."""

from __future__ import annotations

import shutil
import textwrap

import pytest

from tests.support.openai_chat import text_answer, tool_call_answer

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux (apt-get install tmux)")

KEYS = textwrap.dedent("""
    def extension(wolli):
        fired = []

        def press(name):
            def handler(ctx):
                fired.append(name)
                ctx.ui.set_status("keys", "fired: " + " ".join(fired))
            return handler

        wolli.register_shortcut("ctrl+alt+p", handler=press("C-A-p"), description="control alt p")
        wolli.register_shortcut("Alt+K", handler=press("A-k"), description="alt k")
        wolli.register_shortcut("f6", handler=press("F6"), description="function six")
        wolli.register_shortcut("ctrl+shift+y", handler=press("C-S-y"), description="needs kitty")
""")


def test_ctrl_alt_alt_and_f6_shortcuts_fire_in_tmux(terminal_run, tmp_path):
    ext = tmp_path / "keys.py"
    ext.write_text(KEYS)
    term = terminal_run("-e", str(ext))
    screen = term.wait_for("Ctrl+Shift+Y will not work in this terminal")
    assert "use Ctrl+Alt+Y" in screen
    term.type("draft")
    term.send("C-M-p")
    term.wait_for("fired: C-A-p")
    term.send("M-k")
    term.wait_for("fired: C-A-p A-k")
    term.send("F6")
    screen = term.wait_for("fired: C-A-p A-k F6")
    assert "draftk" not in screen and "draft" in screen  # Alt+K typed nothing
    assert "local/local-model" in screen  # Ctrl+Alt+P did not cycle the model (Ctrl+P)
    term.send("C-c")  # clear the editor
    term.type("/hotkeys")
    term.send("Enter")
    screen = term.wait_for("Extension shortcuts:")
    assert "Ctrl+Alt+P" in screen and "control alt p  [keys]" in screen and "function six  [keys]" in screen
    term.send("C-d")
    assert term.exit_status() == 0


BROKEN_RENDERER = textwrap.dedent("""
    def extension(wolli):
        def render_call(args, theme, context):
            raise RuntimeError("header broke")

        wolli.register_tool({
            "name": "stamp", "description": "Stamp", "execute": lambda *a: "stamped",
            "parameters": {"type": "object", "properties": {}}, "render_call": render_call,
        })
""")


def test_a_session_with_a_broken_renderer_opens_again(terminal_run, loopback, tmp_path, wolli_home):
    ext = tmp_path / "broken.py"
    ext.write_text(BROKEN_RENDERER)
    term = terminal_run("-e", str(ext))
    term.wait_for("local/local-model")
    loopback.push(tool_call_answer("stamp", {}), text_answer("Stamped it."))
    term.type("stamp please")
    term.send("Enter")
    screen = term.wait_for("Stamped it.")
    assert "render_call of stamp failed: RuntimeError: header broke" in screen and "Traceback" not in screen
    term.send("C-d")
    assert term.exit_status() == 0

    again = terminal_run("-e", str(ext), "-c")
    screen = again.wait_for("Stamped it.")
    assert "render_call of stamp failed" in screen and "Traceback" not in screen
    again.send("C-d")
    assert again.exit_status() == 0
    log = (wolli_home / "agents" / "default" / "logs" / "extensions.log").read_text()
    assert "RuntimeError: header broke" in log
