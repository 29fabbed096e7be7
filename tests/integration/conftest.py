from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import make_project


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path)
