"""The extensions docs/extensions.md writes out, all loaded together in the full-screen app:
their commands, shortcut, tool renderers, message renderer, widgets, footer, custom component
and autocomplete provider work, and nothing they do is reported as failing."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.waiting import wait_until
from wolli.ai.providers.faux import faux_tool_call
from wolli.modes.tui.widgets.simple_messages import CustomMessageView, NoticeView
from wolli.modes.tui.widgets.tool_row import ToolRow

from .helpers import idle_after, running, type_and_send

DOC = Path(__file__).resolve().parents[2] / "docs" / "extensions.md"


def doc_extensions(folder: Path) -> list[str]:
    paths = []
    for index, block in enumerate(re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)):
        if "def extension(wolli" in block:
            path = folder / f"doc_example_{index}.py"
            path.write_text(block)
            paths.append(str(path))
    return paths


def _notices(app) -> str:
    return "\n".join(str(n.render()) for n in app.query(NoticeView))


async def test_the_documented_extensions_work_in_the_tui(make_app, faux, tmp_path):
    app = make_app(extensions=doc_extensions(tmp_path))
    async with running(app, (120, 40), notifications=True) as pilot:
        await type_and_send(pilot, "/paint blue")
        await wait_until(lambda: any(n.message == "painting it blue" for n in app._notifications), 5, "paint")
        await type_and_send(pilot, "/deploy")
        await wait_until(lambda: any("deploy: staging is green" in str(v.render())
                                     for v in app.query(CustomMessageView)), 5, "the rendered message")
        await type_and_send(pilot, "/ship")
        await wait_until(lambda: app.custom_widget is not None, 5, "the custom component")
        await pilot.press("y")
        await wait_until(lambda: "ship" in app.slot_below.widgets, 5, "the widget")
        assert str(app.slot_below.widgets["ship"].render()) == "ship: yes"
        await wait_until(lambda: any("shipping mode" in str(w.render()) for w in app.footer_area.children
                                     if w is not app.footer), 5, "the custom footer")
        await pilot.press("alt+e")  # the documented shortcut
        await wait_until(lambda: app.tools_expanded, 5, "tool rows expanded")
        faux.push([faux_tool_call("count", {"n": "3"})], "counted")
        await type_and_send(pilot, "count to three")
        await idle_after(app, pilot, 4)
        row = app.query(ToolRow).first()
        assert "count 3" in str(row.header.render()) and "✓ 3" in str(row.body.render())
        menu = app.completion.menu
        await pilot.press("#")
        await wait_until(lambda: menu.open and menu.current()["value"] == "#2983", 5, "the provider's item")
        assert "failed" not in _notices(app), _notices(app)
