"""The attach sent ahead: the full-screen client writes its ``attach`` before it imports the
app, so the server opens the session (reads the file, builds the context, starts its
extensions) on another core while this process loads Textual and draws the first frame. The
app then adopts the connection and takes the response waiting on it (docs/server.md).

Nothing here imports Textual or asyncio: it runs first, on the command line's thread.
"""

from __future__ import annotations

import socket
from pathlib import Path

from ..common.framing import encode_record

# Messages sent with the attach response to the full-screen app: a few screens. The rest of a
# long history is paged in once the screen is drawn (it crossed the socket whole before:
# ~5 MB for 2,000 pairs).
HISTORY_TAIL = 60
AHEAD_ID = "attach-ahead"  # the id the response to the early attach carries


def attach_command(session_id: str | None, cwd: str) -> dict[str, object]:
    """The full-screen app's ``attach``: to ``session_id``, or a new session in ``cwd``."""
    command: dict[str, object] = {"type": "attach", "historyLimit": HISTORY_TAIL}
    command.update({"sessionId": session_id} if session_id else {"new": True, "cwd": cwd})
    return command


def send_ahead(socket_path: Path, command: dict[str, object]) -> socket.socket | None:
    """Connect and write ``command`` (as :data:`AHEAD_ID`) without waiting for any answer.
    None when no server takes it; the app then connects as usual and reports why not."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(2.0)
        sock.connect(str(socket_path))
        sock.sendall(encode_record({**command, "id": AHEAD_ID}))
    except OSError:
        sock.close()
        return None
    sock.setblocking(False)
    return sock
