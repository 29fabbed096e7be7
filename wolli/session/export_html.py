"""Export a session file as one self-contained HTML page (``wolli --export``).

The page shows the current branch (root to the last entry, following ``parentId``) the way
the transcript reads: user and assistant messages, collapsed thinking, tool calls with
their results and diffs, shell runs, extension messages, compaction and branch notes, and
usage totals. It reads the JSONL itself, line by line, so that a torn or malformed line
costs only that line (the page says how many were skipped). The page is built as a list
of strings joined once, and every piece of session text goes through ``html.escape``.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import stat
import tempfile
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..agent.messages import BashExecutionMessage, CustomMessage
from ..ai.cost import UsageTotals
from ..ai.types import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from .entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionInfoEntry,
    TagsEntry,
    ThinkingLevelChangeEntry,
)
from .export_markdown import render_markdown
from .export_reader import Gap, current_branch
from .export_template import page_end, page_start
from .store import LoadedSession
from .store import load as load_session
from .tags import fold_tags

if TYPE_CHECKING:
    from ..agent.messages import AgentMessage
    from .entries import SessionEntry

# Outputs longer than this are folded into a <details> so the page stays scannable.
COLLAPSE_LINES = 12
COLLAPSE_CHARS = 1500

_MIME_OK = re.compile(r"image/[A-Za-z0-9.+-]+")
_BASE64_OK = re.compile(r"[A-Za-z0-9+/=\s]*")


def _default_out_path(session_path: Path, out_path: str | os.PathLike[str] | None) -> Path:
    name = f"{session_path.stem}.html"
    if out_path is None:
        return Path.cwd() / name
    target = Path(out_path).expanduser()
    if target.is_dir():
        return target / name
    return target


def export_session_html(
    session_path: str | os.PathLike[str], out_path: str | os.PathLike[str] | None = None
) -> Path:
    """Write the HTML page for ``session_path`` and return where it went.

    ``out_path`` defaults to ``<session file stem>.html`` in the current directory; an
    existing directory receives that file name. Raises ``FileNotFoundError`` or
    ``ValueError`` with a message meant for the user.
    """
    source = Path(session_path).expanduser()
    if not source.exists():
        raise FileNotFoundError(f"Session file not found: {source}")
    if source.is_dir():
        raise IsADirectoryError(f"{source} is a folder; pass a session .jsonl file.")
    loaded = load_session(source, require_header=False)
    if loaded.header is None and not loaded.entries:
        if loaded.bad_lines:
            raise ValueError(
                f"{source} is not a session file: none of its {len(loaded.bad_lines)} "
                "lines is a session header or entry."
            )
        raise ValueError(f"{source} is empty; there is nothing to export.")
    target = _default_out_path(source, out_path)
    if target.resolve() == source.resolve():
        raise ValueError(f"Refusing to overwrite the session file itself ({source}); pick another output path.")
    html = render_session_html(loaded, source)
    try:
        mode: int | None = os.stat(target).st_mode  # through symlinks: /dev/stdout is one
    except OSError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        # A device, FIFO or socket (``/dev/stdout``): written into, never replaced. The
        # rename below would swap the node itself for a regular file (as root: /dev/full).
        with open(target, "w", encoding="utf-8", errors="replace", newline="\n") as stream:
            stream.write(html)
        return target
    if target.is_symlink():
        target = target.resolve()  # write where the link points, keeping the link
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace", newline="\n") as handle:
            handle.write(html)
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    return target.resolve()


# ---------------------------------------------------------------------------- rendering


def _fmt_int(value: int) -> str:
    return f"{value:,}"


def _fmt_date(timestamp: str) -> str:
    try:
        moment = _dt.datetime.fromisoformat(timestamp)
    except ValueError:
        return timestamp
    if moment.tzinfo is not None:
        moment = moment.astimezone(_dt.UTC)
        return moment.strftime("%Y-%m-%d %H:%M:%S UTC")
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def _time(timestamp: str | None, long: bool = False) -> str:
    if not timestamp:
        return ""
    shown = escape(_fmt_date(timestamp) if long else timestamp[11:19] or timestamp)
    cls = ' class="long"' if long else ""
    return f'<time{cls} datetime="{escape(timestamp)}">{shown}</time>'


def _image(block: object) -> str:
    mime = str(getattr(block, "mime_type", "") or "")
    data = str(getattr(block, "data", "") or "")
    if not _MIME_OK.fullmatch(mime) or not _BASE64_OK.fullmatch(data):
        return '<p class="status error">[image that cannot be shown]</p>'
    data = "".join(data.split())
    return f'<img class="inline-image" alt="{escape(mime)} image" src="data:{mime};base64,{data}">'


def _plain(text: str, cls: str = "plain") -> str:
    return f'<div class="{cls}">{escape(text)}</div>'


def _folded_pre(text: str, label: str, cls: str = "") -> str:
    """A <pre>, folded into <details> when long."""
    attr = f' class="{cls}"' if cls else ""
    pre = f"<pre{attr}>{escape(text)}</pre>"
    lines = text.count("\n") + 1
    if lines <= COLLAPSE_LINES and len(text) <= COLLAPSE_CHARS:
        return pre
    return f"<details><summary>{escape(label)} · {_fmt_int(lines)} lines</summary>{pre}</details>"


def render_diff(diff: str) -> str:
    """A unified diff as one <pre>, each line a span classed by its first character."""
    parts = ['<pre class="diff">']
    for line in diff.rstrip("\n").split("\n"):
        if line.startswith(("+++ ", "--- ")):
            cls = "diff-file"
        elif line.startswith("+"):
            cls = "diff-add"
        elif line.startswith("-"):
            cls = "diff-remove"
        elif line.startswith("@@"):
            cls = "diff-hunk"
        else:
            cls = "diff-context"
        parts.append(f'<span class="{cls}">{escape(line) or " "}</span>')
    parts.append("</pre>")
    return "".join(parts)


def _json(value: object) -> str:
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


def _edit_pairs(arguments: dict[str, Any]) -> list[tuple[str, str]]:
    """The (old, new) pairs of an edit call in any of the shapes models send."""
    edits = arguments.get("edits")
    if isinstance(edits, str):
        try:
            edits = json.loads(edits)
        except ValueError:
            edits = None
    if isinstance(edits, dict):
        edits = [edits]
    pairs: list[tuple[str, str]] = []
    for edit in edits if isinstance(edits, list) else []:
        if isinstance(edit, dict):
            old = edit.get("old_text", edit.get("oldText", ""))
            new = edit.get("new_text", edit.get("newText", ""))
            pairs.append((str(old), str(new)))
    old = arguments.get("old_text", arguments.get("oldText"))
    if old is not None:
        pairs.append((str(old), str(arguments.get("new_text", arguments.get("newText", "")))))
    return pairs


class _PageBuilder:
    """Renders one loaded session into ``self.out`` (joined once by the caller)."""

    def __init__(self, loaded: LoadedSession, source: Path) -> None:
        self.loaded = loaded
        self.source = source
        self.out: list[str] = []
        self.branch, self.gaps = current_branch(loaded.entries, loaded.dangling)
        self.results: dict[str, ToolResultMessage] = {}
        self.called: set[str] = set()
        self.labels: dict[str, str] = {}
        for entry in loaded.entries:
            if isinstance(entry, LabelEntry):
                if entry.label:
                    self.labels[entry.target_id] = entry.label
                else:
                    self.labels.pop(entry.target_id, None)
        for entry in self.branch:
            message = getattr(entry, "message", None)
            if isinstance(message, ToolResultMessage):
                self.results.setdefault(message.tool_call_id, message)
            elif isinstance(message, AssistantMessage):
                self.called.update(call.id for call in message.tool_calls())

    # -- page frame

    def build(self) -> str:
        out = self.out
        name, model, models, tags = self._summary()
        header = self.loaded.header
        title = name or (f"Session {header.id}" if header else self.source.stem)
        out.append(page_start(escape(f"{title} · Wolli")))
        out.append(f'<header class="session-header"><h1>{escape(title)}</h1><dl>')
        rows: list[tuple[str, str]] = []
        if header is not None:
            rows.append(("Session", escape(header.id)))
            rows.append(("Directory", escape(header.cwd)))
            rows.append(("Date", _time(header.timestamp, long=True)))
            if header.parent_session:
                rows.append(("Forked from", escape(header.parent_session)))
        if name:
            rows.append(("Name", escape(name)))
        if model:
            rows.append(("Model", escape(model)))
        if len(models) > 1:
            rows.append(("Models used", escape(", ".join(models))))
        if tags:
            rows.append(("Tags", escape(", ".join(f"{k}={v}" for k, v in sorted(tags.items())))))
        rows.append(("File", escape(self.source.name)))
        out.extend(f"<dt>{key}</dt><dd>{value}</dd>" for key, value in rows)
        out.append("</dl>")
        out.append(
            '<nav class="controls"><button type="button" data-toggle="open">Expand all</button>'
            '<button type="button" data-toggle="close">Collapse all</button></nav></header>\n'
        )
        self._notices()
        out.append('<section class="conversation">\n')
        for entry in self.branch:
            self._entry(entry)
        out.append("</section>\n")
        self._totals()
        out.append(page_end())
        return "".join(out)

    def _summary(self) -> tuple[str | None, str | None, list[str], dict[str, str]]:
        name: str | None = None
        tags: dict[str, str] = {}
        for entry in self.loaded.entries:
            if isinstance(entry, SessionInfoEntry) and entry.name is not None:
                name = entry.name.strip() or None
            elif isinstance(entry, TagsEntry):
                fold_tags(tags, entry.tags)
        model: str | None = None
        models: list[str] = []
        for entry in self.branch:
            if isinstance(entry, ModelChangeEntry):
                model = f"{entry.provider}/{entry.model_id}"
            elif isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage):
                if entry.message.model:
                    model = f"{entry.message.provider}/{entry.message.model}".lstrip("/")
            else:
                continue
            if model and model not in models:
                models.append(model)
        return name, model, models, tags

    def _notices(self) -> None:
        bad = self.loaded.bad_lines
        if bad:
            shown = ", ".join(str(n) for n in bad[:20]) + (", …" if len(bad) > 20 else "")
            noun = "line" if len(bad) == 1 else "lines"
            self.out.append(
                f'<div class="notice malformed">Skipped {len(bad)} malformed {noun} '
                f"of the session file (line {shown}); everything else is shown.</div>\n"
            )
        if self.loaded.header is None:
            self.out.append('<div class="notice">The session header could not be read.</div>\n')

    def _meta(self, entry: SessionEntry, role: str, extra: str = "") -> str:
        label = self.labels.get(entry.id)
        label_html = f'<span class="label-tag">{escape(label)}</span>' if label else ""
        return (
            f'<div class="meta"><span class="role">{escape(role)}</span>{extra}'
            f"{_time(entry.timestamp)}{label_html}</div>"
        )

    # -- entries

    def _entry(self, entry: SessionEntry) -> None:
        out = self.out
        if isinstance(entry, Gap):
            out.append('<div class="marker gap">an entry that could not be read was here</div>\n')
        elif isinstance(entry, MessageEntry):
            self._message(entry, entry.message)
        elif isinstance(entry, CustomMessageEntry):
            if entry.display:
                self._custom(entry, entry.custom_type, entry.content)
        elif isinstance(entry, CompactionEntry):
            title = f"Context compacted · {_fmt_int(entry.tokens_before)} tokens before"
            self._note(entry, "compaction", title, entry.summary)
        elif isinstance(entry, BranchSummaryEntry):
            self._note(entry, "branch-summary", "Summary of an abandoned branch", entry.summary)
        elif isinstance(entry, ModelChangeEntry):
            text = f"model → {entry.provider}/{entry.model_id}"
            out.append(f'<div class="marker model-change" id="e-{escape(entry.id)}">{escape(text)}</div>\n')
        elif isinstance(entry, ThinkingLevelChangeEntry):
            text = f"thinking level → {entry.thinking_level}"
            out.append(f'<div class="marker thinking-change" id="e-{escape(entry.id)}">{escape(text)}</div>\n')
        # custom (extension state), label, session_info and tags entries are not shown inline.

    def _message(self, entry: SessionEntry, message: AgentMessage) -> None:
        if isinstance(message, UserMessage):
            self._user(entry, message)
        elif isinstance(message, AssistantMessage):
            self._assistant(entry, message)
        elif isinstance(message, ToolResultMessage):
            if message.tool_call_id not in self.called:
                self.out.append(f'<article class="msg orphan-result" id="e-{escape(entry.id)}">')
                self.out.append(self._meta(entry, f"Result of {message.tool_name}"))
                self._tool_result(message)
                self.out.append("</article>\n")
        elif isinstance(message, BashExecutionMessage):
            self._bash_execution(entry, message)
        elif isinstance(message, CustomMessage):
            if message.display:
                self._custom(entry, message.custom_type, message.content)
        else:
            role = getattr(message, "role", "")
            summary = getattr(message, "summary", "")
            if role == "compactionSummary":
                title = f"Context compacted · {_fmt_int(getattr(message, 'tokens_before', 0))} tokens before"
                self._note(entry, "compaction", title, summary)
            elif role == "branchSummary":
                self._note(entry, "branch-summary", "Summary of an abandoned branch", summary)

    def _user(self, entry: SessionEntry, message: UserMessage) -> None:
        out = self.out
        out.append(f'<article class="msg user" id="e-{escape(entry.id)}">{self._meta(entry, "User")}')
        out.append('<div class="body">')
        self._content(message.content)
        out.append("</div></article>\n")

    def _content(self, content: Any, markdown: bool = False) -> None:
        blocks = [content] if isinstance(content, str) else content
        for block in blocks:
            text = block if isinstance(block, str) else getattr(block, "text", None)
            if text is not None:
                if markdown:
                    self.out.append('<div class="markdown">')
                    render_markdown(text, self.out)
                    self.out.append("</div>")
                else:
                    self.out.append(_plain(text))
            elif getattr(block, "type", None) == "image":
                self.out.append(_image(block))

    def _assistant(self, entry: SessionEntry, message: AssistantMessage) -> None:
        out = self.out
        model = f"{message.provider}/{message.model}".strip("/")
        usage = message.usage
        extra = f'<span class="model">{escape(model)}</span>' if model else ""
        if usage.input or usage.output or usage.cost.total:
            figures = f"in {_fmt_int(usage.input)} · out {_fmt_int(usage.output)}"
            if usage.cache_read:
                figures += f" · cache {_fmt_int(usage.cache_read)}"
            if usage.cost.total:
                figures += f" · ${usage.cost.total:.4f}"
            extra += f'<span class="usage">{escape(figures)}</span>'
        out.append(f'<article class="msg assistant" id="e-{escape(entry.id)}">{self._meta(entry, "Assistant", extra)}')
        out.append('<div class="body">')
        for block in message.content:
            if isinstance(block, TextContent):
                out.append('<div class="markdown">')
                render_markdown(block.text, out)
                out.append("</div>")
            elif isinstance(block, ThinkingContent):
                if block.redacted:
                    out.append('<div class="thinking status">[thinking redacted by the provider]</div>')
                elif block.thinking.strip():
                    out.append('<details class="thinking"><summary>Thinking</summary>')
                    out.append(_plain(block.thinking))
                    out.append("</details>")
            elif isinstance(block, ToolCall):
                self._tool_call(block)
        if message.stop_reason in ("error", "aborted"):
            what = "Aborted" if message.stop_reason == "aborted" else "Error"
            detail = f": {message.error_message}" if message.error_message else ""
            out.append(f'<p class="status error">{escape(what + detail)}</p>')
        elif message.stop_reason == "length":
            out.append('<p class="status">[stopped: output token limit reached]</p>')
        out.append("</div></article>\n")

    # -- tools

    def _tool_call(self, call: ToolCall) -> None:
        out = self.out
        args = call.arguments if isinstance(call.arguments, dict) else {}
        result = self.results.get(call.id)
        error = " error" if result is not None and result.is_error else ""
        name = call.name
        cls = re.sub(r"[^\w-]", "", name) or "tool"
        path = args.get("path") or args.get("file_path")
        sub = ""
        if name in ("read", "write", "edit", "ls") and path:
            sub = str(path)
            if name == "read" and (args.get("offset") or args.get("limit")):
                sub += f" (offset {args.get('offset') or 1}, limit {args.get('limit') or '-'})"
        elif name in ("grep", "find") and args.get("pattern") is not None:
            sub = f"{args.get('pattern')}" + (f" in {path}" if path else "")
        out.append(f'<div class="tool tool-{cls}{error}"><div class="tool-head">')
        out.append(f'<span class="tool-name">{escape(name)}</span> <span class="tool-sub">{escape(sub)}</span></div>')
        if name == "bash" and isinstance(args.get("command"), str):
            out.append(f'<pre class="cmd"><code>$ {escape(args["command"])}</code></pre>')
            if args.get("timeout"):
                out.append(f'<div class="status">timeout {escape(str(args["timeout"]))} s</div>')
        elif name == "edit" and _edit_pairs(args):
            pairs = _edit_pairs(args)
            has_diff = result is not None and isinstance(result.details, dict) and result.details.get("diff")
            noun = "edit" if len(pairs) == 1 else "edits"
            out.append(f'<details class="edits"{"" if has_diff else " open"}><summary>{len(pairs)} {noun}</summary>')
            for old, new in pairs:
                out.append(f'<div class="edit-label">old</div><pre class="old">{escape(old)}</pre>')
                out.append(f'<div class="edit-label">new</div><pre class="new">{escape(new)}</pre>')
            out.append("</details>")
        elif name == "write" and isinstance(args.get("content"), str):
            content = args["content"]
            lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
            out.append(f'<details class="write-content"><summary>content · {_fmt_int(lines)} lines</summary>')
            out.append(f"<pre>{escape(content)}</pre></details>")
        elif not sub or set(args) - {"path", "pattern", "offset", "limit"}:
            out.append(_folded_pre(_json(args), "arguments", "args"))
        if result is not None:
            self._tool_result(result)
        else:
            out.append('<div class="status">no result recorded</div>')
        out.append("</div>\n")

    def _tool_result(self, result: ToolResultMessage) -> None:
        out = self.out
        out.append(f'<div class="tool-result{" error" if result.is_error else ""}">')
        if result.is_error:
            out.append('<div class="status error">error</div>')
        details = result.details if isinstance(result.details, dict) else {}
        diff = details.get("diff")
        for block in result.content:
            text = getattr(block, "text", None)
            if text is not None:
                out.append(_folded_pre(text, "output"))
            elif getattr(block, "type", None) == "image":
                out.append(_image(block))
        if isinstance(diff, str) and diff.strip():
            out.append(render_diff(diff))
        out.append("</div>")

    def _bash_execution(self, entry: SessionEntry, message: BashExecutionMessage) -> None:
        out = self.out
        out.append(f'<article class="msg bash-execution" id="e-{escape(entry.id)}">{self._meta(entry, "Shell")}')
        out.append(f'<div class="tool tool-bash"><pre class="cmd"><code>$ {escape(message.command)}</code></pre>')
        if message.output:
            out.append(_folded_pre(message.output, "output"))
        notes: list[str] = []
        error = False
        if message.cancelled:
            notes.append("cancelled")
            error = True
        elif message.exit_code not in (0, None):
            notes.append(f"exit code {message.exit_code}")
            error = True
        if message.truncated:
            notes.append("output truncated" + (f"; full output in {message.full_output_path}" if message.full_output_path else ""))
        if message.exclude_from_context:
            notes.append("not sent to the model")
        if notes:
            out.append(f'<div class="status{" error" if error else ""}">{escape(" · ".join(notes))}</div>')
        out.append("</div></article>\n")

    # -- notes and extension messages

    def _custom(self, entry: SessionEntry, custom_type: str, content: object) -> None:
        out = self.out
        out.append(f'<article class="msg custom" id="e-{escape(entry.id)}">{self._meta(entry, custom_type)}')
        out.append('<div class="body">')
        self._content(content, markdown=True)
        out.append("</div></article>\n")

    def _note(self, entry: SessionEntry, cls: str, title: str, summary: str) -> None:
        out = self.out
        out.append(f'<aside class="note {cls}" id="e-{escape(entry.id)}"><div class="note-title">{escape(title)}')
        out.append(f" {_time(entry.timestamp)}</div>")
        out.append('<details><summary>Summary</summary><div class="markdown">')
        render_markdown(summary, out)
        out.append("</div></details></aside>\n")

    def _totals(self) -> None:
        branch = UsageTotals()
        for entry in self.branch:
            if isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage):
                branch.add(entry.message.usage)
        whole = UsageTotals()
        for entry in self.loaded.entries:
            if isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage):
                whole.add(entry.message.usage)
        rows = [("This branch", branch)]
        if whole.responses != branch.responses:
            rows.append(("Whole session (all branches)", whole))
        out = self.out
        out.append('<footer class="totals"><table><thead><tr><th>Usage</th><th>Responses</th><th>Input</th>'
                   "<th>Output</th><th>Cache read</th><th>Cache write</th><th>Total tokens</th><th>Cost</th>"
                   "</tr></thead><tbody>")
        for label, t in rows:
            cells = [str(t.responses), _fmt_int(t.input), _fmt_int(t.output), _fmt_int(t.cache_read),
                     _fmt_int(t.cache_write), _fmt_int(t.reported_total), f"${t.cost:.4f}"]
            out.append(f"<tr><td>{escape(label)}</td>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        out.append("</tbody></table></footer>\n")


def render_session_html(loaded: LoadedSession, source: Path) -> str:
    """The whole page as one string."""
    return _PageBuilder(loaded, source).build()
