"""Fuzzing what a model sends the edit tool: arguments of every shape, on a real file.

Property: the tool either applies the edits correctly (every ``new_text`` in the file, the
file changed only where an ``old_text`` stood) or raises one clear error (a ``ValueError`` or
``OSError`` with a message, never a ``KeyError``/``TypeError``/...) and leaves the file
untouched; nothing outside the working directory is ever written.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from wolli.tools.edit import create_edit_tool
from wolli.tools.environment import create_host_environment

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

ORIGINAL = "alpha = 1\nbeta = 2\r\ngamma  = 3\n\talpha = 1\n“quoted”\n"
piece = st.one_of(
    st.sampled_from(["alpha = 1", "beta = 2", "gamma  = 3", "gamma = 3", "\talpha", "“quoted”", '"quoted"',
                     "beta = 2\ngamma", "", "\n", "zeta", "= 1\n"]),
    st.text(alphabet="abgz =123\n\t\r“”\"", max_size=15),
)
edit = st.one_of(
    st.fixed_dictionaries({"old_text": piece, "new_text": piece}),
    st.fixed_dictionaries({"oldText": piece, "newText": piece}),
    st.dictionaries(st.sampled_from(["old_text", "new_text", "oldText", "x"]),
                    st.one_of(piece, st.integers(), st.none(), st.lists(piece, max_size=1)), max_size=3),
)
arguments = st.one_of(
    st.fixed_dictionaries({"path": st.sampled_from(["f.txt", "./f.txt", "sub/../f.txt"]),
                           "edits": st.lists(edit, max_size=3)}),
    st.fixed_dictionaries({"path": st.sampled_from(["f.txt", "missing.txt", "sub", "", "f.txt\x00", 7]),
                           "edits": st.one_of(st.lists(edit, max_size=2), edit, st.text(max_size=30), st.none())}),
    st.fixed_dictionaries({"path": st.just("f.txt"), "old_text": piece, "new_text": piece}),
    st.dictionaries(st.text(max_size=8), st.one_of(piece, st.integers(), st.none()), max_size=3),
)


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@FUZZ
@given(arguments)
@example({"path": "f.txt", "edits": [{"old_text": "alpha = 1", "new_text": "x"}]})  # two places
@example({"path": "f.txt", "edits": [{"old_text": "beta = 2", "new_text": "b"}, {"old_text": "gamma", "new_text": "g"}]})
@example({"path": "f.txt", "edits": '[{"oldText": "beta = 2", "newText": "B"}]'})
@example({"path": "f.txt", "old_text": "gamma  = 3", "new_text": "\r"})  # a bare CR before the file's LF
def test_edit_is_correct_or_one_clear_error_and_writes_nothing_else(tmp_path_factory, args) -> None:
    root = tmp_path_factory.mktemp("fuzz")
    work, outside = root / "work", root / "outside"
    (work / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "keep.txt").write_text("untouched")
    target = work / "f.txt"
    target.write_bytes(ORIGINAL.encode())
    before = snapshot(root)
    tool = create_edit_tool(create_host_environment(str(work)))

    async def call():
        return await tool.execute("call", tool.validate(args), None, None, None)

    try:
        asyncio.run(call())
    except (ValueError, OSError) as exc:
        assert str(exc).strip(), f"{type(exc).__name__} without a message"
        assert snapshot(root) == before
        return
    after = snapshot(root)
    changed = {name for name in after if after[name] != before.get(name)}
    assert changed == {"work/f.txt"}, changed
    assert set(after) == set(before)  # no stray files (temporaries cleaned up)
    new = target.read_bytes().decode()
    validated = tool.validate(args)
    for block in validated.edits:
        # The new text is there with its line breaks in the file's style (CRLF or LF); a bare
        # CR is a character like any other, even where a LF follows it in the file.
        pattern = r"\r?\n".join(re.escape(part) for part in re.split(r"\r?\n", block.new_text))
        assert re.search(pattern, new), (block.new_text, new)
