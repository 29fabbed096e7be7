"""The fixed parts of an exported session page: CSS, a little JS, the document frame.

Kept as Python strings (not a data file) so the page ships with the package however it
is installed, and so the exporter never has to locate resources at run time. Everything
is inline and a Content-Security-Policy forbids any network fetch: the page must open
the same way offline, years later, from a mail attachment.
"""

from __future__ import annotations

CSP = (
    "default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
    "script-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
)

CSS = """
:root {
  color-scheme: light dark;
  --bg: #ffffff; --fg: #1f2328; --muted: #656d76; --border: #d0d7de;
  --panel: #f6f8fa; --user: #eef4ff; --user-border: #9cc0f5; --accent: #0969da;
  --code: #eff1f3; --add-bg: #dafbe1; --add-fg: #116329; --del-bg: #ffebe9; --del-fg: #a40e26;
  --hunk: #0550ae; --error: #cf222e; --error-bg: #fff1f0; --note: #fff8c5; --note-border: #d4a72c;
  --thinking: #6e7781;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0d1117; --fg: #e6edf3; --muted: #8d96a0; --border: #30363d;
    --panel: #161b22; --user: #132339; --user-border: #1f6feb; --accent: #4493f8;
    --code: #1c2129; --add-bg: #12361f; --add-fg: #7ee787; --del-bg: #4a1619; --del-fg: #ffa198;
    --hunk: #79c0ff; --error: #f85149; --error-bg: #2d1416; --note: #2b2410; --note-border: #9e6a03;
    --thinking: #8d96a0;
  }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.55 -apple-system, BlinkMacSystemFont, "Segoe UI", Helvetica, Arial, sans-serif; }
main { max-width: 960px; margin: 0 auto; padding: 24px 16px 64px; }
pre, code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
  font-size: 13px; }
pre { background: var(--code); border-radius: 6px; padding: 8px 10px; overflow-x: auto;
  white-space: pre-wrap; word-break: break-word; margin: 6px 0; }
code { background: var(--code); border-radius: 4px; padding: 0 3px; }
pre code { background: none; padding: 0; }
details > summary { cursor: pointer; color: var(--muted); user-select: none; }
.session-header { border-bottom: 1px solid var(--border); margin-bottom: 20px; padding-bottom: 12px; }
.session-header h1 { font-size: 22px; margin: 0 0 8px; }
.session-header dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 0; }
.session-header dt { color: var(--muted); }
.session-header dd { margin: 0; word-break: break-all; }
.controls { margin-top: 10px; display: flex; gap: 8px; }
.controls button { background: var(--panel); color: var(--fg); border: 1px solid var(--border);
  border-radius: 6px; padding: 3px 10px; cursor: pointer; font: inherit; font-size: 13px; }
.notice { background: var(--error-bg); border: 1px solid var(--error); border-radius: 6px;
  padding: 8px 12px; margin: 12px 0; }
.msg { margin: 14px 0; }
.meta { color: var(--muted); font-size: 12px; display: flex; gap: 10px; align-items: baseline;
  flex-wrap: wrap; margin-bottom: 2px; }
.role { font-weight: 600; color: var(--fg); }
.label-tag { background: var(--panel); border: 1px solid var(--border); border-radius: 10px;
  padding: 0 7px; }
.user .body { background: var(--user); border-left: 3px solid var(--user-border); border-radius: 6px;
  padding: 8px 12px; }
.plain { white-space: pre-wrap; word-break: break-word; }
.markdown > :first-child { margin-top: 0; }
.markdown > :last-child { margin-bottom: 0; }
.markdown p { margin: 6px 0; }
.markdown li > p { margin: 0; }
.markdown blockquote { margin: 6px 0; padding-left: 12px; border-left: 3px solid var(--border);
  color: var(--muted); }
.markdown table { border-collapse: collapse; margin: 6px 0; }
.markdown th, .markdown td { border: 1px solid var(--border); padding: 3px 8px; }
.thinking { color: var(--thinking); margin: 6px 0; }
.thinking .plain { border-left: 3px solid var(--border); padding-left: 10px; font-style: italic; }
.tool { border: 1px solid var(--border); border-radius: 8px; background: var(--panel);
  padding: 8px 12px; margin: 8px 0; }
.tool.error { border-color: var(--error); }
.tool-head { font-size: 13px; }
.tool-name { font-weight: 600; font-family: ui-monospace, Menlo, Consolas, monospace; }
.tool-sub { color: var(--muted); word-break: break-all; }
.tool-result { margin-top: 6px; border-top: 1px dashed var(--border); padding-top: 6px; }
.tool-result.error pre { background: var(--error-bg); }
.status { font-size: 12px; color: var(--muted); }
.status.error, .error-text { color: var(--error); }
.edit-label { font-size: 12px; color: var(--muted); margin-top: 4px; }
pre.old { background: var(--del-bg); }
pre.new { background: var(--add-bg); }
pre.diff { padding: 6px 0; }
pre.diff > span { display: block; padding: 0 10px; }
.diff-add { background: var(--add-bg); color: var(--add-fg); }
.diff-remove { background: var(--del-bg); color: var(--del-fg); }
.diff-hunk { color: var(--hunk); }
.diff-file { color: var(--muted); font-weight: 600; }
img.inline-image { max-width: 100%; max-height: 480px; border-radius: 6px; border: 1px solid var(--border);
  display: block; margin: 6px 0; }
.note { background: var(--note); border: 1px solid var(--note-border); border-radius: 8px;
  padding: 8px 12px; margin: 14px 0; }
.note-title { font-weight: 600; font-size: 13px; }
.marker { text-align: center; color: var(--muted); font-size: 12px; margin: 10px 0; }
.marker::before, .marker::after { content: " \\2014 "; }
.totals { border-top: 1px solid var(--border); margin-top: 28px; padding-top: 12px; font-size: 13px; }
.totals table { border-collapse: collapse; }
.totals th, .totals td { text-align: right; padding: 2px 10px; }
.totals th:first-child, .totals td:first-child { text-align: left; }
"""

# Expand/collapse every <details>, and show times in the reader's local zone.
JS = """
(function () {
  document.addEventListener('click', function (event) {
    var button = event.target.closest('[data-toggle]');
    if (!button) return;
    var open = button.getAttribute('data-toggle') === 'open';
    document.querySelectorAll('details').forEach(function (d) { d.open = open; });
  });
  document.querySelectorAll('time[datetime]').forEach(function (t) {
    var d = new Date(t.getAttribute('datetime'));
    if (!isNaN(d.getTime())) t.textContent = t.classList.contains('long') ? d.toLocaleString() : d.toLocaleTimeString();
  });
})();
"""


def page_start(title: str) -> str:
    """Everything up to and including ``<main>``; ``title`` must already be escaped."""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<meta name=\"color-scheme\" content=\"light dark\">\n"
        "<meta name=\"generator\" content=\"wolli\">\n"
        f"<title>{title}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n"
    )


def page_end() -> str:
    return f"</main>\n<script>{JS}</script>\n</body>\n</html>\n"
