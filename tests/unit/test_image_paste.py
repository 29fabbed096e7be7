"""How a pasted text is recognised as an image file, and image bytes by their magic."""

from __future__ import annotations

from wolli.modes.tui.image_paste import image_path_in
from wolli.tools.images import image_mime_type


def test_dropped_file_spellings(tmp_path):
    shot = tmp_path / "my shot.PNG"
    shot.write_bytes(b"\x89PNG\r\n\x1a\n")
    for pasted in (str(shot), f"'{shot}'", f'"{shot}"', str(shot).replace(" ", "\\ "),
                   "file://" + str(shot).replace(" ", "%20"), "  my shot.PNG \n"):
        assert image_path_in(pasted, str(tmp_path)) == shot, pasted
    (tmp_path / "notes.txt").write_text("x")
    for pasted in ("notes.txt", "missing.png", f"{shot}\n{shot}", "", "x" * 5000):
        assert image_path_in(pasted, str(tmp_path)) is None, pasted[:40]


def test_magic_numbers():
    assert image_mime_type(b"\x89PNG\r\n\x1a\nrest") == "image/png"
    assert image_mime_type(b"\xff\xd8\xff\xe0") == "image/jpeg"
    assert image_mime_type(b"GIF89a") == "image/gif"
    assert image_mime_type(b"RIFF\x00\x00\x00\x00WEBPVP8 ") == "image/webp"
    assert image_mime_type(b"plain text") is None
