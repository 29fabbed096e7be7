"""Package tests load what they install into this process: put ``sys.path`` and the module
cache back afterwards, so one test's packages never reach another."""

from __future__ import annotations

import importlib
import sys

import pytest


@pytest.fixture(autouse=True)
def isolated_imports():
    path = list(sys.path)
    modules = set(sys.modules)
    yield
    sys.path[:] = path
    for name in set(sys.modules) - modules:
        del sys.modules[name]
    importlib.invalidate_caches()
