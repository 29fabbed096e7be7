"""What the terminal's key bytes mean, beyond what Textual's parser makes of them.

Two gaps in Textual 8's reading of a terminal's input, filled by a parser subclass the app
installs before it starts (:func:`install`):

- **Alt with a control key.** Without the kitty keyboard protocol a terminal sends
  Ctrl+Alt+P as ESC followed by Ctrl+P's byte, and Alt+Enter as ESC and CR. Textual keeps the
  Alt only for printable characters, so Ctrl+Alt+P reached the app as Ctrl+P (the model
  switched instead of the shortcut firing) and Alt+Enter as Enter. Here the Alt is kept:
  ``alt+ctrl+p``, ``alt+enter``.
- **Does the terminal speak the kitty keyboard protocol?** Textual asks for the protocol at
  start but never learns whether it got it, and only with it can a terminal send keys such
  as Ctrl+Shift+K apart from Ctrl+K. The app asks the terminal (``CSI ? u``, answered only by
  terminals with the protocol, then ``CSI c``, answered by every terminal) and this parser
  reads the two answers, which Textual would otherwise type into the editor as text.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable

from textual import events
from textual._xterm_parser import XTermParser
from textual.keys import Keys

# The questions: the kitty protocol's flags, then Primary Device Attributes (every terminal
# answers it, so its answer says "no kitty answer is coming").
QUERY = "\x1b[?u\x1b[c"
_KITTY_FLAGS = re.compile(r"\x1b\[\?(\d+)u")
_DEVICE_ATTRIBUTES = re.compile(r"\x1b\[\?[\d;]*c")
DISAMBIGUATE = 0b1  # the protocol's first flag: modified keys are sent as CSI u sequences


class KeyboardProtocol:
    """What the terminal said about the kitty keyboard protocol (one per app)."""

    def __init__(self) -> None:
        self.kitty: bool | None = None  # None until the terminal answered (or never will)
        self._answered: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._answered = asyncio.Event()

    async def known(self, timeout: float) -> bool:
        """Whether the protocol is on, once the terminal answered (False after ``timeout``)."""
        if self._answered is not None and self.kitty is None:
            try:
                await asyncio.wait_for(self._answered.wait(), timeout)
            except TimeoutError:
                pass
        return bool(self.kitty)

    # Called on the input thread by the parser.
    def flags(self, value: int) -> None:
        self.kitty = bool(value & DISAMBIGUATE)

    def attributes(self) -> None:
        if self.kitty is None:
            self.kitty = False
        if self._loop is not None and self._answered is not None:
            self._loop.call_soon_threadsafe(self._answered.set)


class WolliKeyParser(XTermParser):
    """Textual's parser, keeping Alt on control keys and reading the protocol answers."""

    protocol: KeyboardProtocol | None = None  # set by :func:`install`

    def _sequence_to_key_events(self, sequence: str, alt: bool = False) -> Iterable[events.Key]:
        if sequence.startswith("\x1b[?"):
            if (match := _KITTY_FLAGS.fullmatch(sequence)) is not None:
                if self.protocol is not None:
                    self.protocol.flags(int(match.group(1)))
                yield events.Key(Keys.Ignore, sequence)  # an answer, not a key: dropped
                return
            if _DEVICE_ATTRIBUTES.fullmatch(sequence) is not None:
                if self.protocol is not None:
                    self.protocol.attributes()
                yield events.Key(Keys.Ignore, sequence)
                return
        for event in super()._sequence_to_key_events(sequence, alt):
            if alt and event.key != Keys.Ignore and not event.key.startswith("alt+"):
                event = events.Key(f"alt+{event.key}", event.character)
            yield event


def install(protocol: KeyboardProtocol) -> None:
    """Make the terminal driver read keys with :class:`WolliKeyParser` (before the app runs)."""
    try:
        from textual.drivers import linux_driver
    except ImportError:  # not on a POSIX system: Textual's own parser stays
        return
    WolliKeyParser.protocol = protocol
    linux_driver.XTermParser = WolliKeyParser  # type: ignore[misc]


def ask(app: object) -> bool:
    """Send the two questions to the terminal (once the driver runs); False when there is no
    terminal to ask (a test's headless driver)."""
    driver = getattr(app, "_driver", None)
    try:
        from textual.drivers.linux_driver import LinuxDriver
    except ImportError:
        return False
    if not isinstance(driver, LinuxDriver):
        return False
    driver.write(QUERY)
    driver.flush()
    return True
