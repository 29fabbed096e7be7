"""HTML export of a real session file written in tmp_path, checked by parsing the page."""

from __future__ import annotations

import base64
import json
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from wolli.session.export_html import export_session_html
from wolli.session.export_markdown import markdown_to_html, render_inline
from wolli.session.export_reader import current_branch
from wolli.session.store import load

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nfake-image-bytes").decode()
DIFF = "--- a/app.py\n+++ b/app.py\n@@ -1,3 +1,3 @@\n def main():\n-    return 1\n+    return 2\n"


class Page(HTMLParser):
    """Collects elements (tag, attrs, open-stack of classes), text and attributes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.text_parts: list[str] = []
        self.stack: list[str] = []
        self.script_text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {k: v or "" for k, v in attrs}))
        if tag not in ("img", "meta", "br", "hr", "input", "link"):
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.stack:
            while self.stack and self.stack.pop() != tag:
                pass

    def handle_data(self, data: str) -> None:
        if self.stack and self.stack[-1] == "script":
            self.script_text.append(data)
        else:
            self.text_parts.append(data)

    @property
    def text(self) -> str:
        return "".join(self.text_parts)

    def with_class(self, cls: str) -> list[tuple[str, dict[str, str]]]:
        return [(t, a) for t, a in self.elements if cls in a.get("class", "").split()]


def line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False)


def write_session(path: Path) -> None:
    ts = "2025-03-01T10:00:0{}.000Z"
    lines = [
        line({"type": "session", "version": 3, "id": "sess-1234", "timestamp": "2025-03-01T10:00:00.000Z",
              "cwd": "/home/dev/project"}),
        line({"type": "model_change", "id": "a0000001", "parentId": None, "timestamp": ts.format(1),
              "provider": "anthropic", "modelId": "claude-sonnet-4"}),
        line({"type": "message", "id": "a0000002", "parentId": "a0000001", "timestamp": ts.format(2),
              "message": {"role": "user", "timestamp": 1, "content": [
                  {"type": "text", "text": "Please fix <script>alert('x')</script> in app.py"},
                  {"type": "image", "data": PNG, "mimeType": "image/png"}]}}),
        line({"type": "message", "id": "a0000003", "parentId": "a0000002", "timestamp": ts.format(3),
              "message": {"role": "assistant", "api": "anthropic-messages", "provider": "anthropic",
                          "model": "claude-sonnet-4", "stopReason": "toolUse", "timestamp": 2,
                          "usage": {"input": 100, "output": 50, "cacheRead": 10, "cacheWrite": 0,
                                    "totalTokens": 160, "cost": {"total": 0.0125}},
                          "content": [
                              {"type": "thinking", "thinking": "The user wants return 2 instead."},
                              {"type": "text", "text": "I will **edit** `app.py` now:\n\n- first item\n- second item\n\n```python\nx = 1 < 2\n```"},
                              {"type": "toolCall", "id": "call_1", "name": "edit", "arguments": {
                                  "path": "app.py", "edits": [{"oldText": "return 1", "newText": "return 2"}]}},
                              {"type": "toolCall", "id": "call_2", "name": "bash", "arguments": {
                                  "command": "pytest -q && echo '<done>'"}},
                              {"type": "toolCall", "id": "call_3", "name": "write", "arguments": {
                                  "path": "notes.txt", "content": "line one\nline two\n"}},
                          ]}}),
        line({"type": "message", "id": "a0000004", "parentId": "a0000003", "timestamp": ts.format(4),
              "message": {"role": "toolResult", "toolCallId": "call_1", "toolName": "edit", "isError": False,
                          "timestamp": 3, "content": [{"type": "text", "text": "Successfully replaced 1 block(s) in app.py."}],
                          "details": {"diff": DIFF, "first_changed_line": 2, "path": "/home/dev/project/app.py"}}}),
        "{this line is torn",
        line({"type": "message", "id": "a0000005", "parentId": "a0000004", "timestamp": ts.format(5),
              "message": {"role": "toolResult", "toolCallId": "call_2", "toolName": "bash", "isError": True,
                          "timestamp": 4, "content": [{"type": "text", "text": "FAILED test_app.py::test_main"}]}}),
        line({"type": "message", "id": "a0000006", "parentId": "a0000005", "timestamp": ts.format(6),
              "message": {"role": "toolResult", "toolCallId": "call_3", "toolName": "write", "isError": False,
                          "timestamp": 5, "content": [{"type": "text", "text": "Successfully wrote 18 bytes to notes.txt"}]}}),
        line({"type": "message", "id": "a0000007", "parentId": "a0000006", "timestamp": ts.format(7),
              "message": {"role": "bashExecution", "command": "git status", "output": "On branch main\nnothing to commit",
                          "exitCode": 0, "cancelled": False, "truncated": False, "timestamp": 6}}),
        line({"type": "compaction", "id": "a0000008", "parentId": "a0000007", "timestamp": ts.format(8),
              "summary": "Goal: make main() return 2. Done so far: edited app.py.", "firstKeptEntryId": "a0000007",
              "tokensBefore": 12345}),
        line({"type": "custom_message", "id": "a0000009", "parentId": "a0000008", "timestamp": ts.format(9),
              "customType": "reminder", "content": "Remember to run the linter", "display": True}),
        line({"type": "custom_message", "id": "a000000a", "parentId": "a0000009", "timestamp": ts.format(9),
              "customType": "hidden-state", "content": "secret steering text", "display": False}),
        line({"type": "session_info", "id": "a000000b", "parentId": "a000000a", "timestamp": ts.format(9),
              "name": "Fix main return"}),
        line({"type": "message", "id": "a000000c", "parentId": "a000000b", "timestamp": ts.format(9),
              "message": {"role": "assistant", "api": "anthropic-messages", "provider": "anthropic",
                          "model": "claude-sonnet-4", "stopReason": "stop", "timestamp": 7,
                          "usage": {"input": 200, "output": 20, "cacheRead": 0, "cacheWrite": 5,
                                    "totalTokens": 225, "cost": {"total": 0.0025}},
                          "content": [{"type": "text", "text": "All done & tests pass."}]}}),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def session_file(tmp_path: Path) -> Path:
    path = tmp_path / "2025-03-01T10-00-00_sess.jsonl"
    write_session(path)
    return path


def export_and_parse(session: Path, out: Path) -> tuple[str, Page]:
    result = export_session_html(session, out)
    assert result == out.resolve()
    html = out.read_text(encoding="utf-8")
    page = Page()
    page.feed(html)
    page.close()
    return html, page


def test_page_structure_and_every_message_text(session_file: Path, tmp_path: Path) -> None:
    html, page = export_and_parse(session_file, tmp_path / "out.html")
    text = page.text
    assert html.startswith("<!DOCTYPE html>")
    assert "prefers-color-scheme: dark" in html

    # Header: id, cwd, date, name, model.
    for expected in ("sess-1234", "/home/dev/project", "2025-03-01 10:00:00 UTC", "Fix main return",
                     "anthropic/claude-sonnet-4"):
        assert expected in text, expected

    # Every shown message's text is on the page.
    for expected in (
        "Please fix <script>alert('x')</script> in app.py",
        "The user wants return 2 instead.",
        "first item", "second item", "x = 1 < 2",
        "$ pytest -q && echo '<done>'",
        "Successfully replaced 1 block(s) in app.py.",
        "FAILED test_app.py::test_main",
        "Successfully wrote 18 bytes to notes.txt",
        "line one\nline two",
        "$ git status", "On branch main\nnothing to commit",
        "Goal: make main() return 2. Done so far: edited app.py.",
        "Remember to run the linter",
        "All done & tests pass.",
    ):
        assert expected in text, expected
    assert "secret steering text" not in text  # display: false

    # Roles in order: user, assistant, shell, compaction note, custom, assistant.
    articles = [a["class"] for t, a in page.elements if t in ("article", "aside")]
    assert articles == ["msg user", "msg assistant", "msg bash-execution", "note compaction",
                        "msg custom", "msg assistant"]
    # The tool results are shown inside their calls, not as separate messages.
    assert len(page.with_class("tool-result")) == 3
    assert len(page.with_class("error")) >= 1 and page.with_class("tool-bash")[0][1]["class"].endswith("error")

    # Thinking is collapsed; markdown became real elements.
    thinking = page.with_class("thinking")
    assert thinking and thinking[0][0] == "details" and "open" not in thinking[0][1]
    tags = [t for t, _ in page.elements]
    for tag in ("strong", "code", "ul", "li", "pre", "img", "time"):
        assert tag in tags, tag
    assert ("code", {"class": "language-python"}) in page.elements

    # Image is inline as a data: URL.
    images = [a for t, a in page.elements if t == "img"]
    assert images == [{"class": "inline-image", "alt": "image/png image", "src": f"data:image/png;base64,{PNG}"}]

    # Write content collapsed, model change marker, totals summed over both responses.
    assert page.with_class("write-content")[0][0] == "details"
    assert "model → anthropic/claude-sonnet-4" in text
    assert "$0.0150" in text and "385" in text  # 160 + 225 tokens


def test_user_text_is_escaped_and_no_external_resources(session_file: Path, tmp_path: Path) -> None:
    html, page = export_and_parse(session_file, tmp_path / "out.html")
    assert "&lt;script&gt;alert(" in html
    assert "<script>alert" not in html
    # The only script element is the page's own.
    assert [t for t, _ in page.elements].count("script") == 1
    for tag, attrs in page.elements:
        for name in ("src", "href", "action", "srcset"):
            value = attrs.get(name, "")
            assert not value.startswith(("http://", "https://", "//")), (tag, attrs)
        assert tag not in ("link", "iframe", "object", "embed")
    assert "http://" not in html and "https://" not in html


def test_diff_lines_carry_add_and_remove_classes(session_file: Path, tmp_path: Path) -> None:
    _, page = export_and_parse(session_file, tmp_path / "out.html")
    assert len(page.with_class("diff")) == 1
    added = page.with_class("diff-add")
    removed = page.with_class("diff-remove")
    assert len(added) == 1 and len(removed) == 1
    assert len(page.with_class("diff-hunk")) == 1 and len(page.with_class("diff-file")) == 2
    # Edit arguments are shown as old/new pairs.
    assert len(page.with_class("old")) == 1 and len(page.with_class("new")) == 1


def test_malformed_line_is_skipped_and_reported(session_file: Path, tmp_path: Path) -> None:
    loaded = load(session_file, require_header=False)
    assert loaded.bad_lines == [6]
    _, page = export_and_parse(session_file, tmp_path / "out.html")
    notice = page.with_class("malformed")
    assert notice and "Skipped 1 malformed line" in page.text and "line 6" in page.text


def test_branch_follows_parent_ids_from_last_entry(tmp_path: Path) -> None:
    path = tmp_path / "branchy.jsonl"
    def msg(eid: str, parent: str | None, text: str) -> str:
        return line({"type": "message", "id": eid, "parentId": parent, "timestamp": "2025-01-01T00:00:00Z",
                     "message": {"role": "user", "content": text, "timestamp": 1}})
    path.write_text("\n".join([
        line({"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00Z", "cwd": "/"}),
        msg("00000001", None, "root question"),
        msg("00000002", "00000001", "the road not taken"),
        line({"type": "branch_summary", "id": "00000003", "parentId": "00000001",
              "timestamp": "2025-01-01T00:00:00Z", "fromId": "00000002", "summary": "Tried X, it failed."}),
        msg("00000004", "00000003", "current branch"),
    ]) + "\n")
    _, page = export_and_parse(path, tmp_path / "b.html")
    assert "root question" in page.text and "current branch" in page.text
    assert "Tried X, it failed." in page.text and page.with_class("branch-summary")
    assert "the road not taken" not in page.text


def test_missing_parent_does_not_hide_earlier_history(tmp_path: Path) -> None:
    path = tmp_path / "torn.jsonl"
    def msg(eid: str, parent: str | None, text: str) -> str:
        return line({"type": "message", "id": eid, "parentId": parent, "timestamp": "2025-01-01T00:00:00Z",
                     "message": {"role": "user", "content": text, "timestamp": 1}})
    path.write_text("\n".join([
        line({"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00Z", "cwd": "/"}),
        msg("00000001", None, "before the tear"),
        '{"type":"message","id":"00000002","parentId":"00000001","mess',
        msg("00000003", "00000002", "after the tear"),
    ]) + "\n")
    loaded = load(path, require_header=False)
    assert loaded.dangling == {"00000003"}  # hung on the entry before the torn line, and said
    branch, gaps = current_branch(loaded.entries, loaded.dangling)
    assert gaps == 1
    _, page = export_and_parse(path, tmp_path / "t.html")
    assert "before the tear" in page.text and "after the tear" in page.text
    assert page.with_class("gap")


def test_default_out_path_is_stem_in_cwd(session_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    out = export_session_html(session_file)
    assert out == (work / f"{session_file.stem}.html").resolve() and out.is_file()
    # An existing folder as target receives the same file name.
    folder = tmp_path / "exports"
    folder.mkdir()
    assert export_session_html(str(session_file), str(folder)) == (folder / f"{session_file.stem}.html").resolve()


def test_bad_inputs_give_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="not found"):
        export_session_html(tmp_path / "nope.jsonl")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(ValueError, match="empty"):
        export_session_html(empty, tmp_path / "e.html")
    junk = tmp_path / "junk.jsonl"
    junk.write_text("hello\nworld\n")
    with pytest.raises(ValueError, match="not a session file"):
        export_session_html(junk, tmp_path / "j.html")
    assert not (tmp_path / "j.html").exists()


def test_markdown_is_light_and_safe() -> None:
    html = markdown_to_html(
        "# Title\n\nSome *it* and __bold__ and snake_case_name and `<b>`.\n\n"
        "1. one\n2. two\n   - nested\n\n> quoted\n\n| a | b |\n|---|---|\n| 1 | <i> |\n\n"
        "[link](https://example.com) <img src=x onerror=alert(1)>\n\n```\nunterminated <tag>"
    )
    assert "<h3>Title</h3>" in html
    assert "<em>it</em>" in html and "<strong>bold</strong>" in html and "snake_case_name" in html
    assert "<code>&lt;b&gt;</code>" in html
    assert "<ol><li>one</li><li><p>two</p><ul><li>nested</li></ul></li></ol>" in html
    assert "<blockquote><p>quoted</p></blockquote>" in html
    assert "<th>a</th>" in html and "<td>&lt;i&gt;</td>" in html
    assert "<img" not in html and "href" not in html and "&lt;img src=x" in html
    assert html.endswith("<pre><code>unterminated &lt;tag&gt;</code></pre>")
    assert render_inline("a * b * c") == "a * b * c"


def test_large_session_exports_quickly(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    rows = [line({"type": "session", "version": 3, "id": "big", "timestamp": "2025-01-01T00:00:00Z", "cwd": "/"})]
    parent = None
    for i in range(1000):
        for eid, message in (
            (f"{2 * i:08x}", {"role": "user", "content": f"question {i} with **markdown**", "timestamp": i}),
            (f"{2 * i + 1:08x}", {"role": "assistant", "stopReason": "stop", "timestamp": i,
                                  "usage": {"input": 10, "output": 5, "totalTokens": 15, "cost": {"total": 0.001}},
                                  "content": [{"type": "text", "text": f"answer {i}\n\n```\ncode {i}\n```"}]}),
        ):
            rows.append(line({"type": "message", "id": eid, "parentId": parent,
                              "timestamp": "2025-01-01T00:00:00Z", "message": message}))
            parent = eid
    path.write_text("\n".join(rows) + "\n")
    started = time.perf_counter()
    out = export_session_html(path, tmp_path / "big.html")
    elapsed = time.perf_counter() - started
    print(f"\nexported 2,000 messages in {elapsed * 1000:.0f} ms ({out.stat().st_size // 1024} KiB)")
    html = out.read_text()
    assert "question 0 with **markdown**" in html and "answer 999" in html
    assert "15,000" in html  # 1000 responses * 15 tokens


def test_a_file_whose_header_is_damaged_still_exports(tmp_path: Path) -> None:
    path = tmp_path / "headless.jsonl"
    path.write_text(
        '{"type":"session","version":3,"id":\n'  # torn header
        + line({"type": "message", "id": "aaaa0001", "parentId": None, "timestamp": "2025-01-01T00:00:00Z",
                "message": {"role": "user", "content": "still here", "timestamp": 1}})
    )
    loaded = load(path, require_header=False)
    assert loaded.header is None and loaded.bad_lines == [1] and len(loaded.entries) == 1
    assert load(path).header_rebuilt  # opened as a session, its entries get a new header
    page = export_session_html(path, tmp_path / "out.html").read_text()
    assert "still here" in page and "header could not be read" in page
