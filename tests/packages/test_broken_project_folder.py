"""``wolli install ./folder`` with a pyproject.toml that cannot be built: one line, nothing made.

Found by hand: broken TOML ended in pip's own 15-line traceback (``TOMLDecodeError``) after
the managed venv had been made; a ``[project]`` table without ``name`` was built by
setuptools as ``UNKNOWN 0.0.0``, installed and recorded under that name.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.packages import wolli_cli


@pytest.mark.parametrize(("pyproject", "problem"), [
    ("[project\nname = 'x'\n", "not valid TOML (Expected ']' at the end of a table declaration (at line 1, column 9)); "
                                     "nothing was installed"),
    ("[project]\nversion = '1'\n", 'the [project] table needs a name (name = "..."); nothing was installed'),
])
def test_a_broken_pyproject_is_one_line_and_installs_nothing(tmp_path, wolli_home: Path, pyproject, problem):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "pyproject.toml").write_text(pyproject)
    done = wolli_cli(["install", str(folder), "--yes"], tmp_path, timeout=120)
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == [f"wolli: {folder / 'pyproject.toml'}: {problem}"]
    assert not (wolli_home / "agents" / "default" / "packages").exists()
    assert not (wolli_home / "agents" / "default" / "settings.json").exists()
