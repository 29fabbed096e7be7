"""Fuzzing what a user types on the command line: arguments and ``@`` attachments.

Property: a clear error (``UsageError`` / ``AttachmentError``, one line) or a correct
result, never another exception, and nothing written anywhere.
"""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from wolli.cli.main import KNOWN_OPTIONS, UsageError, parse_args
from wolli.runtime.startup.attachments import AttachmentError, read_attachments

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# Known options, near misses, values and plain words, mixed the way people mistype them.
option = st.sampled_from(KNOWN_OPTIONS)
near_miss = option.map(lambda o: o[:-1] if len(o) > 3 else o + "x")
token = st.one_of(
    option,
    near_miss,
    option.map(lambda o: o + "="),
    st.text(max_size=12).map(lambda t: "-" + t),
    st.text(max_size=12).map(lambda t: "--" + t),
    st.text(max_size=12).map(lambda t: "@" + t),
    st.text(max_size=20),
    st.sampled_from(["--", "-", "=", "--=", "-p", "--mode", "json", "rpc", "--thinking", "high", "bogus"]),
)


@FUZZ
@given(st.lists(token, max_size=8))
@example(["--mode"])
@example(["--thinking", "extreme"])
@example(["--no-sesion"])
@example(["-", "--", "--model"])
def test_any_command_line_parses_or_is_one_clear_usage_error(argv: list[str]) -> None:
    try:
        args = parse_args(argv)
    except UsageError as exc:
        message = str(exc)
        assert message and "\n" not in message and "Traceback" not in message
        return
    # A successful parse accounts for every word: nothing silently dropped.
    assert len(args.messages) + len(args.files) <= len(argv)
    for name in args.unknown_options:  # long options left for extensions' register_flag
        assert f"--{name}" not in KNOWN_OPTIONS


def _tree(root: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(root)), p.stat().st_size if p.is_file() else -1) for p in root.rglob("*"))


name = st.one_of(
    st.sampled_from(["notes.txt", "big.log", "blob.bin", "pic.png", "folder", "folder/inner.txt", "missing.txt",
                     "../outside", "", ".", "~", "folder/../notes.txt", "fifo"]),
    st.text(min_size=0, max_size=30),
    st.text(max_size=10).map(lambda t: "folder/" + t),
)


@FUZZ
@given(names=st.lists(name, min_size=1, max_size=4), images=st.booleans())
@example(names=["bad\0name"], images=True)
@example(names=["x" * 300], images=True)
@example(names=["fifo"], images=False)
def test_any_attachment_is_attached_or_one_clear_error(tmp_path_factory, names: list[str], images: bool) -> None:
    root = tmp_path_factory.getbasetemp() / "attach-fuzz"
    cwd = root / "project"
    if not cwd.exists():
        (cwd / "folder").mkdir(parents=True)
        (cwd / "notes.txt").write_text("hello\n")
        (cwd / "big.log").write_text("line\n" * 5000)
        (cwd / "blob.bin").write_bytes(b"\0\1\2" * 100)
        (cwd / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n not really an image")
        (cwd / "folder" / "inner.txt").write_text("inner\n")
        os.mkfifo(cwd / "fifo")
    before = _tree(root)

    class Model:
        provider, id = "p", "m"
        input = ["text", "image"] if images else ["text"]

    try:
        attached = read_attachments(names, str(cwd), Model())
    except AttachmentError as exc:
        assert str(exc).startswith("@") and "\n" not in str(exc)
    else:
        assert attached.text.count("<file name=") + attached.text.count("<directory name=") == len(names)
    assert _tree(root) == before  # attaching reads; it never writes
