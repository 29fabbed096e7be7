"""wolli serve's WebSocket frames against frames built by the ``websockets`` package: every
length form, fragments with a ping between them, byte-by-byte arrival, and what RFC 6455
forbids."""

from __future__ import annotations

import pytest
from websockets.frames import Frame, Opcode

from wolli.modes.server import websocket


def client_frame(opcode: Opcode, data: bytes, fin: bool = True) -> bytes:
    return Frame(opcode, data, fin=fin).serialize(mask=True)


@pytest.mark.parametrize("size", [0, 5, 125, 126, 65535, 65536, 70000])
def test_every_length_form_is_read(size):
    payload = bytes(i % 251 for i in range(size))
    assert websocket.FrameReader().feed(client_frame(Opcode.TEXT, payload)) == [(websocket.TEXT, payload)]


def test_fragments_join_and_a_ping_between_them_comes_first():
    data = (client_frame(Opcode.TEXT, b'{"type":', fin=False) + client_frame(Opcode.PING, b"p")
            + client_frame(Opcode.CONT, b'"get_state"}'))
    reader = websocket.FrameReader()
    out = []
    for byte in data:  # one byte at a time: nothing is read before it is whole
        out += reader.feed(bytes([byte]))
    assert out == [(websocket.PING, b"p"), (websocket.TEXT, b'{"type":"get_state"}')]


def test_what_the_rfc_forbids_is_refused():
    with pytest.raises(websocket.ProtocolError, match="masked"):
        websocket.FrameReader().feed(Frame(Opcode.TEXT, b"x").serialize(mask=False))
    with pytest.raises(websocket.ProtocolError, match="continuation"):
        websocket.FrameReader().feed(client_frame(Opcode.CONT, b"x"))
    with pytest.raises(websocket.ProtocolError) as too_long:
        websocket.FrameReader(limit=10).feed(client_frame(Opcode.TEXT, b"x" * 11))
    assert too_long.value.code == 1009


def test_server_frames_read_back_with_the_package():
    from websockets.frames import Frame as Parsed
    from websockets.streams import StreamReader

    for size in (3, 300, 70000):
        reader = StreamReader()
        reader.feed_data(websocket.frame(b"y" * size))
        parser = Parsed.parse(reader.read_exact, mask=False)
        try:
            next(parser)
        except StopIteration as done:
            assert done.value.data == b"y" * size and done.value.fin
        else:
            raise AssertionError("the frame was not complete")


def test_the_handshake_answer_and_refusals():
    head = (b"GET / HTTP/1.1\r\nHost: 127.0.0.1:7433\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13")
    # The RFC's own example key and its accept value.
    assert b"Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" in websocket.accept(head)
    with pytest.raises(websocket.HandshakeError) as cross_site:
        websocket.accept(head + b"\r\nOrigin: https://evil.example")
    assert cross_site.value.status.startswith("403")
    assert b"101" in websocket.accept(head + b"\r\nOrigin: http://127.0.0.1:7433")
