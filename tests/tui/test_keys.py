"""Extension shortcuts in the full-screen app: any spelling fires, before the editor takes the
key; what cannot fire is said at load; /hotkeys lists every key with its owner."""

from __future__ import annotations

import sys
import textwrap

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from textual import events

from tests.support.waiting import wait_until
from tests.tui.helpers import running
from wolli.modes.tui.terminal_keys import KeyboardProtocol, WolliKeyParser
from wolli.modes.tui.widgets.simple_messages import InfoView, NoticeView

RECORDER = """
fired = []

def extension(wolli):
    for spec in SPECS:
        wolli.register_shortcut(spec, description="records " + spec,
                                handler=lambda ctx, spec=spec: fired.append((spec, ctx.mode)))
"""


def _keys_extension(specs: list[str]) -> str:
    return f"SPECS = {specs!r}\n" + RECORDER


def _fired(app) -> list:
    """What the ``keys`` extension's shortcuts recorded: (spec, ctx.mode) per press."""
    registry = app.controller.host.extensions.registry
    record = next(r for r in registry.records if r.name == "keys")
    return sys.modules[record.module_name].fired


def _notices(app) -> list[str]:
    return [str(n.render()) for n in app.query(NoticeView)]


def _press_as_terminal(app, key: str, character: str | None) -> None:
    """A key event as the terminal driver delivers it (Pilot's press gives no character)."""
    app._driver.send_message(events.Key(key, character))


MODIFIER_WORDS = {"ctrl": ["ctrl", "Control", "C"], "alt": ["alt", "Option", "M", "meta"], "shift": ["shift", "S"]}


@st.composite
def shortcut_sets(draw):
    """Several distinct keys, each spelled its own way: [(spec, Textual's event name)]."""
    letters = draw(st.lists(st.sampled_from("abdefgjkqruvwxyz"), min_size=3, max_size=6, unique=True))
    out = []
    for letter in letters:
        modifiers = draw(st.sampled_from([["ctrl", "alt"], ["alt"], ["alt", "shift"], ["ctrl", "alt", "shift"]]))
        emacs = draw(st.booleans())
        words = [draw(st.sampled_from([w for w in MODIFIER_WORDS[m] if (len(w) == 1) == emacs]))
                 for m in draw(st.permutations(modifiers))]
        spec = ("-" if emacs else "+").join([*words, draw(st.sampled_from([letter, letter.upper()]))])
        out.append((spec, "+".join([*sorted(modifiers), letter])))
    return out


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cases=shortcut_sets())
async def test_shortcuts_fire_whatever_the_spelling_and_modifier_order(make_app, cases):
    app = make_app(code={"keys": _keys_extension([spec for spec, _ in cases])})
    async with running(app) as pilot:
        for _, event_name in cases:
            await pilot.press(event_name)
        await wait_until(lambda: len(_fired(app)) == len(cases), 5, "every shortcut")
        assert [spec for spec, _ in _fired(app)] == [spec for spec, _ in cases]
        assert all(mode == "tui" for _, mode in _fired(app))
        assert app.editor.text == ""


async def test_alt_letter_and_f6_are_taken_before_the_editor(make_app):
    app = make_app(code={"keys": _keys_extension(["alt+p", "f6", "ctrl+alt+p"])})
    async with running(app) as pilot:
        await pilot.press(*"draft")
        _press_as_terminal(app, "alt+p", "p")  # a terminal's Alt+P carries the letter
        await wait_until(lambda: len(_fired(app)) == 1, 5, "alt+p")
        await pilot.press("f6")  # the editor binds F6 (select line) itself
        await pilot.press("alt+ctrl+p")
        await wait_until(lambda: len(_fired(app)) == 3, 5, "f6 and ctrl+alt+p")
        assert [spec for spec, _ in _fired(app)] == ["alt+p", "f6", "ctrl+alt+p"]
        assert app.editor.text == "draft"  # no "p" typed, the line not selected and replaced
        assert app.controller.session.model is not None


async def test_what_cannot_fire_is_reported_at_load_and_hotkeys_lists_everything(make_app, wolli_home):
    (wolli_home / "keybindings.json").write_text('{"app.tools.expand": "ctrl+e"}')
    app = make_app(code={"keys": _keys_extension(["ctrl+shift+k", "ctrl+l", "alt+q", "x", "ctrl+bogus"])})
    async with running(app) as pilot:
        await wait_until(lambda: any("Ctrl+Shift+K will not work" in n for n in _notices(app)), 5, "the report")
        notices = "\n".join(_notices(app))
        assert "use Ctrl+Alt+K" in notices
        assert "shortcut Ctrl+L is already app.model.select; the built-in key wins" in notices
        assert "register_shortcut('x'): X types text in the editor" in notices
        assert "register_shortcut('ctrl+bogus'): 'bogus' is not a key name" in notices
        await pilot.press(*"/hotkeys")
        await pilot.press("enter")
        await wait_until(lambda: app.query(InfoView), 5, "the keys")
        report = str(app.query(InfoView).last().render())
        assert "Ctrl+E" in report and "(keybindings.json)" in report  # the user's own key, marked
        assert "Alt+Q" in report and "records alt+q  [keys]" in report
        assert "Ctrl+L" in report and "(taken by a built-in key)" in report
        assert "PageUp" in report and "Ctrl+End" in report


async def test_a_terminal_with_the_kitty_protocol_gets_no_report(make_app):
    app = make_app(code={"keys": _keys_extension(["ctrl+shift+k"])})
    async with running(app) as pilot:
        app.keyboard.kitty = True
        app._reported_keys.clear()
        for notice in app.query(NoticeView):
            if "will not work" in str(notice.render()):
                await notice.remove()
        await app.check_shortcuts()
        await pilot.pause()
        assert not any("will not work" in n for n in _notices(app))
        await pilot.press("ctrl+shift+k")
        await wait_until(lambda: len(_fired(app)) == 1, 5, "the shortcut")


def _parse(data: str, protocol: KeyboardProtocol | None = None) -> list[str]:
    WolliKeyParser.protocol = protocol
    try:
        parser = WolliKeyParser()
        tokens = [*parser.feed(data), *parser.feed("")]
    finally:
        WolliKeyParser.protocol = None
    return [t.key for t in tokens if isinstance(t, events.Key)]


def test_the_terminal_parser_keeps_alt_on_control_keys():
    assert _parse("\x1b\x10") == ["alt+ctrl+p"]  # Ctrl+Alt+P without the kitty protocol
    assert _parse("\x1b\r") == ["alt+enter"]
    assert _parse("\x1bp") == ["alt+p"] and _parse("\x10") == ["ctrl+p"]
    assert _parse("\x1b[17~") == ["f6"] and _parse("\x1b[112;7u") == ["alt+ctrl+p"]


def test_the_terminal_parser_reads_the_protocol_answers_instead_of_typing_them():
    kitty = KeyboardProtocol()
    assert _parse("\x1b[?25u\x1b[?62;22c", kitty) == []
    assert kitty.kitty is True
    legacy = KeyboardProtocol()
    assert _parse("\x1b[?1;2c", legacy) == []
    assert legacy.kitty is False


SHORTCUT_FAILS = textwrap.dedent("""
    def extension(wolli):
        def boom(ctx):
            raise ValueError("no plan yet")
        wolli.register_shortcut("alt+b", handler=boom, description="fails")
""")


async def test_a_shortcut_that_raises_is_one_line_and_a_logged_traceback(make_app, wolli_home):
    app = make_app(code={"failing": SHORTCUT_FAILS})
    async with running(app) as pilot:
        await pilot.press("alt+b")
        await wait_until(lambda: any("shortcut Alt+B failed" in n for n in _notices(app)), 5, "the failure")
        line = next(n for n in _notices(app) if "shortcut Alt+B failed" in n)
        assert line == "failing: shortcut Alt+B failed: ValueError: no plan yet"
        log = (wolli_home / "agents" / "default" / "logs" / "extensions.log").read_text()
        assert "Traceback" in log and 'raise ValueError("no plan yet")' in log
