"""Importing wolli must stay light: extensions import it in every mode, and the CLI starts fast."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("textual", "httpx", "pygments", "rich", "prompt_toolkit", "watchfiles")


def imported_roots(code: str) -> set[str]:
    probe = f"{code}\nimport sys, json\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_import_wolli_and_wolli_ai_loads_no_ui_or_http_library():
    assert imported_roots("import wolli, wolli.ai").isdisjoint(HEAVY)


def test_cli_version_path_loads_neither_pydantic_nor_heavy_libraries():
    roots = imported_roots("import wolli.cli.main")
    assert roots.isdisjoint({*HEAVY, "pydantic"})


def test_lazy_public_names_resolve():
    import wolli

    assert wolli.DEFAULT_MAX_LINES == 2000 and callable(wolli.create_read_tool)
    assert callable(wolli.with_file_mutation_queue)


def test_providers_load_no_http_library():
    # the model requests go through wolli.ai.http1 (asyncio streams); httpx only with a proxy
    roots = imported_roots("import wolli.ai.http, wolli.ai.providers.openai_completions")
    assert roots.isdisjoint({"httpx", "httpcore", "h11", "anyio", "rich", "pygments", "click", "trio", "textual"})


def test_httpx_loads_without_its_cli_dependencies():
    code = "import asyncio, wolli.ai.http as h\nasync def make():\n    h.get_client()\nasyncio.run(make())"
    roots = imported_roots(code)
    assert "httpx" in roots
    assert roots.isdisjoint({"rich", "pygments", "click", "trio", "textual"})


def test_the_tui_app_draws_its_first_frame_without_pygments():
    # code blocks' colours load with the first answer's markdown, not before the first frame
    roots = imported_roots("import wolli.modes.tui.app")
    assert "textual" in roots and "pygments" not in roots
