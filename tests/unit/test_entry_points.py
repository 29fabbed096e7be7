"""Which entry-point groups the installed distributions declare, read without
``importlib.metadata`` (wolli/base/entry_points.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from wolli.base import entry_points


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder on ``sys.path`` (the only one), no answer kept from an earlier look."""
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.setattr(sys, "path", [str(folder), str(tmp_path / "missing")])
    monkeypatch.setattr(entry_points, "_groups_seen", None)
    return folder


def dist(site: Path, name: str, text: str | bytes | None) -> Path:
    info = site / name
    info.mkdir()
    if text is not None:
        target = info / "entry_points.txt"
        target.write_bytes(text if isinstance(text, bytes) else text.encode())
    return info


def test_the_groups_of_every_entry_points_file_are_found(site):
    dist(site, "a-1.0.dist-info", "[console_scripts]\na = a:main\n\n[wolli.extensions]\nx = a.x\n")
    dist(site, "b-2.0.dist-info", None)  # declares none: no file
    dist(site, "c.egg-info", "[ wolli.tools ]\r\nt = c:t\r\n")
    dist(site, "d-1.0.data", "[not.metadata]\n")  # not a metadata folder
    assert entry_points._declared_groups() == {"console_scripts", "wolli.extensions", "wolli.tools"}
    assert entry_points.entry_points_of("wolli.hooks") == []  # nobody declares it: no metadata parse


@pytest.mark.parametrize("content", [b"[wolli.tools]\n\xff\xfe\n", None])
def test_an_unreadable_file_leaves_the_answer_to_importlib_metadata(site, content):
    info = dist(site, "a-1.0.dist-info", content)
    if content is None:
        (info / "entry_points.txt").mkdir()  # there, but not a file that can be read
    assert entry_points._declared_groups() is None


def test_the_answer_is_kept_until_a_folder_on_the_path_changes(site):
    dist(site, "a-1.0.dist-info", "[wolli.tools]\n")
    assert entry_points._declared_groups() == {"wolli.tools"}
    dist(site, "b-1.0.dist-info", "[wolli.hooks]\n")
    assert entry_points._declared_groups() == {"wolli.tools", "wolli.hooks"}
