"""Textual's parsed CSS kept between runs (wolli/modes/tui/stylesheet_cache.py): a second start
reads every stylesheet from the file and gets the rules a parse would have made; what the
rules depend on (text, variables, Textual's installation) changes the answer; a damaged,
foreign or hostile file is ignored."""

from __future__ import annotations

import marshal
import os
import pickle
from pathlib import Path

import pytest
from textual.css.stylesheet import Stylesheet, StylesheetParseError

from wolli.modes.tui import stylesheet_cache

from .helpers import running

CSS = """
Screen { background: $panel; }
.note { color: $accent; margin: 1 2; height: auto; }
#main > Static:hover { border: round $accent; }
"""


@pytest.fixture
def cache_folder(tmp_path, monkeypatch):
    monkeypatch.setattr("sys.dont_write_bytecode", False)  # this sandbox sets it; users do not
    folder = tmp_path / "cache"
    yield folder
    stylesheet_cache.disable()


def fresh(folder: Path) -> None:
    """As a new process: the file read again, nothing in memory."""
    stylesheet_cache.save()
    stylesheet_cache.disable()
    stylesheet_cache.enable(folder)


def parse(css: str, variables: dict[str, str]) -> list:
    sheet = Stylesheet(variables=variables)
    sheet.add_source(css, read_from=("test.tcss", ""))
    sheet.parse()
    return sheet.rules


def described(rules: list) -> list:
    """What the rule sets are (a rule holds a layout object, equal only to itself: its name)."""
    return [(rule.selector_set, rule.selector_names, rule.pseudo_classes, rule.is_default_rules, rule.tie_breaker,
             {name: getattr(value, "name", value) if name == "layout" else value
              for name, value in rule.styles.get_rules().items()}, rule.styles.important) for rule in rules]


def counts() -> tuple[int, int]:
    figures = stylesheet_cache.stats()
    return figures["hits"], figures["parsed"]


def since(before: tuple[int, int]) -> tuple[int, int]:
    hits, parsed = counts()
    return hits - before[0], parsed - before[1]


async def test_a_second_start_reads_every_stylesheet_from_the_file(faux, project, cache_folder):
    from wolli.modes.tui.app import WolliApp
    from wolli.runtime.startup.request import StartupRequest

    def app() -> WolliApp:
        return WolliApp(StartupRequest(mode="tui", cwd=str(project), model="faux/faux-1", require_model=False))

    stylesheet_cache.enable(cache_folder)
    first = app()
    hits, parsed = counts()
    async with running(first, (100, 30)) as pilot:
        await pilot.pause()
        rules = described(first.stylesheet.rules)
        styles = [(type(w).__name__, w.styles.background, w.styles.color, w.region) for w in first.screen.walk_children()]
    assert counts()[1] > parsed  # the first start parsed its stylesheets
    fresh(cache_folder)
    hits, parsed = counts()
    second = app()
    async with running(second, (100, 30)) as pilot:
        await pilot.pause()
        assert counts()[1] == parsed  # nothing parsed
        assert counts()[0] - hits >= 5  # the app's own and the default CSS of its widgets
        assert described(second.stylesheet.rules) == rules
        assert [(type(w).__name__, w.styles.background, w.styles.color, w.region)
                for w in second.screen.walk_children()] == styles


def test_the_rules_read_back_are_the_rules_parsed(cache_folder):
    variables = {"panel": "#102030", "accent": "#ff8800"}
    stylesheet_cache.enable(cache_folder)
    made = parse(CSS, variables)
    fresh(cache_folder)
    before = counts()
    read = parse(CSS, variables)
    assert since(before) == (1, 0)
    assert read == made
    assert described(read) == described(made)
    assert read[1].styles.color.hex == "#FF8800"


def test_other_variables_are_parsed_afresh(cache_folder):
    stylesheet_cache.enable(cache_folder)
    parse(CSS, {"panel": "#102030", "accent": "#ff8800"})
    fresh(cache_folder)
    before = counts()
    rules = parse(CSS, {"panel": "#102030", "accent": "#00ff00"})
    assert rules[1].styles.color.hex == "#00FF00"
    assert since(before) == (0, 1)  # the other theme's rules did not match


def test_css_with_errors_is_reported_every_time_and_never_kept(cache_folder):
    stylesheet_cache.enable(cache_folder)
    for _ in range(2):
        with pytest.raises(StylesheetParseError):
            parse("Screen { colour: red; }", {})
        fresh(cache_folder)
    assert not Path(stylesheet_cache.cache_path(cache_folder)).exists()


@pytest.mark.parametrize("content", [b"", b"junk", b"wolli-css-cache 1\n" + b"\x00garbage",
                                     b"wolli-css-cache 1\n" + marshal.dumps(((("textual", 1, 2),), {}))])
def test_a_damaged_or_foreign_file_is_ignored_and_replaced(cache_folder, content):
    cache_folder.mkdir()
    path = Path(stylesheet_cache.cache_path(cache_folder))
    path.write_bytes(content)
    stylesheet_cache.enable(cache_folder)
    variables = {"panel": "#102030", "accent": "#ff8800"}
    assert parse(CSS, variables)[1].styles.color.hex == "#FF8800"
    fresh(cache_folder)
    before = counts()
    parse(CSS, variables)
    assert since(before) == (1, 0)  # the file was replaced with a good one
    assert path.stat().st_mode & 0o777 == 0o600


class Hostile:
    def __reduce__(self):
        return (os.system, ("touch pwned",))


def test_an_entry_that_would_run_anything_else_is_parsed_afresh(cache_folder, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    variables = {"panel": "#102030", "accent": "#ff8800"}
    stylesheet_cache.enable(cache_folder)
    parse(CSS, variables)
    stylesheet_cache.save()
    path = Path(stylesheet_cache.cache_path(cache_folder))
    header = b"wolli-css-cache 1\n"
    installation, entries = marshal.loads(path.read_bytes()[len(header):])
    for key in entries:
        entries[key] = pickle.dumps([Hostile()])
    path.write_bytes(header + marshal.dumps((installation, entries)))
    stylesheet_cache.disable()
    stylesheet_cache.enable(cache_folder)
    before = counts()
    rules = parse(CSS, variables)
    assert not (tmp_path / "pwned").exists()
    assert since(before) == (0, 1)
    assert rules[1].styles.color.hex == "#FF8800"
    fresh(cache_folder)  # the entry parsed afresh replaced the hostile one in the file
    before = counts()
    parse(CSS, variables)
    assert since(before) == (1, 0)


def test_another_textual_parse_method_is_left_alone(cache_folder, monkeypatch):
    def _parse_rules(self, css, read_from, is_default_rules=False, tie_breaker=0, scope="", extra=None):
        return []

    monkeypatch.setattr(Stylesheet, "_parse_rules", _parse_rules)
    stylesheet_cache.enable(cache_folder)
    assert Stylesheet._parse_rules is _parse_rules
    stylesheet_cache.save()
    assert not cache_folder.exists()


def test_nothing_is_written_under_dont_write_bytecode(cache_folder, monkeypatch):
    monkeypatch.setattr("sys.dont_write_bytecode", True)
    stylesheet_cache.enable(cache_folder)
    parse(CSS, {"panel": "#102030", "accent": "#ff8800"})
    stylesheet_cache.save()
    assert not cache_folder.exists()
