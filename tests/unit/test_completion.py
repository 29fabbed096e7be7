"""Editor completion logic without the app: fuzzy ranking, the built-in provider, stacking."""

from __future__ import annotations

import pytest

from wolli.modes.interactive.completion import BuiltinCompletion, ProjectFiles, stack, suggestions
from wolli.modes.interactive.fuzzy import fuzzy_score, rank


def test_fuzzy_prefers_prefixes_word_starts_and_consecutive_letters():
    assert fuzzy_score("xyz", "abc") is None
    names = ["src/models/user.py", "tests/test_user_model.py", "README.md", "src/mu.py"]
    ranked = [i["value"] for i in rank("usmo", [{"value": n} for n in names])]
    assert ranked[0] == "tests/test_user_model.py" and "README.md" not in ranked
    assert rank("read", [{"value": n} for n in names])[0]["value"] == "README.md"


def _builtin(tmp_path, commands=None, args=None):
    files = ProjectFiles(str(tmp_path))
    return BuiltinCompletion(lambda: commands or [], files, args or (lambda name, prefix: None), str(tmp_path))


async def test_commands_then_arguments_then_files_then_paths(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("x")
    (tmp_path / "notes.md").write_text("x")
    commands = [{"value": "/review", "label": "/review", "description": "review"},
                {"value": "/deploy", "label": "/deploy"}]
    envs = {"deploy": ["dev", "staging", "prod"]}
    provider = _builtin(tmp_path, commands, lambda name, prefix: [e for e in envs.get(name, []) if e.startswith(prefix)])
    found = await suggestions(provider, ["/dep"], 0, 4)
    assert found["prefix"] == "/dep" and found["items"][0]["value"] == "/deploy"
    found = await suggestions(provider, ["/deploy st"], 0, 10)
    assert found == {"prefix": "st", "items": [{"value": "staging", "label": "staging", "description": None}]}
    found = await suggestions(provider, ["look at @sapp"], 0, 13)
    assert found["prefix"] == "@sapp" and found["items"][0]["value"] == "@src/app.py"
    applied = provider.apply_completion(["look at @sapp now"], 0, 13, found["items"][0], "@sapp")
    assert applied == {"lines": ["look at @src/app.py  now"], "cursor_line": 0, "cursor_col": 20}
    assert await suggestions(provider, ["plain words"], 0, 11) is None
    found = await suggestions(provider, ["cat sr"], 0, 6, {"force": True})
    assert found["items"] == [{"value": "src/", "label": "src/", "description": None}]


async def test_an_extension_provider_wraps_the_builtin_one(tmp_path):
    def factory(current):
        async def get_suggestions(lines, row, col, options):
            before = lines[row][:col]
            if before.endswith("#2"):
                return {"prefix": "#2", "items": [{"value": "#2983", "label": "#2983", "description": "an issue"}]}
            return await current.get_suggestions(lines, row, col, options)

        return {"trigger_characters": ["#"], "get_suggestions": get_suggestions}

    def broken(current):
        raise RuntimeError("no gh")

    errors: list[tuple[object, str]] = []
    provider, triggers = stack(_builtin(tmp_path, [{"value": "/x", "label": "/x"}]), [factory, broken],
                               lambda failed, exc: errors.append((failed, str(exc))))
    assert "#" in triggers and "@" in triggers and errors == [(broken, "no gh")]  # the factory, to name its owner
    assert (await suggestions(provider, ["see #2"], 0, 6))["items"][0]["value"] == "#2983"
    assert (await suggestions(provider, ["/"], 0, 1))["items"][0]["value"] == "/x"  # delegated
    applied = provider.apply_completion(["see #2"], 0, 6, {"value": "#2983"}, "#2")
    assert applied["lines"] == ["see #2983 "]


def test_file_matching_prefers_names_containing_the_query_and_needs_no_full_scoring():
    files = ProjectFiles("/nowhere")
    files.names = [f"deep/dir{i}/server_{i}.py" for i in range(5000)] + ["server.py", "docs/s_e_r_v.md"]
    files.lowered = [n.lower() for n in files.names]
    best = files.best("server")
    assert best[0] == "server.py" and len(best) == 50
    assert "docs/s_e_r_v.md" not in best  # fifty names contain "server" whole: no letter-by-letter search
    assert files.best("sv.md") == ["docs/s_e_r_v.md"]


@pytest.mark.parametrize("engine", ["rg", "fdfind", "fd", "walk"])
def test_every_lister_gives_a_name_with_a_newline_or_odd_bytes_as_one_entry(tmp_path, monkeypatch, engine):
    # rg and fd print one name a line: a name holding a newline came back as two names of no file.
    import os
    import shutil

    from wolli.modes.interactive import completion

    if engine != "walk" and shutil.which(engine) is None:
        pytest.skip(f"{engine} is not installed")
    found = shutil.which
    monkeypatch.setattr(completion.shutil, "which", lambda name: found(name) if name == engine else None)
    (tmp_path / "new\nline.txt").write_text("x")
    (tmp_path / os.fsdecode(b"odd\xff.bin")).write_text("x")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "plain.txt").write_text("x")
    assert ProjectFiles(str(tmp_path))._list() == sorted(["new\nline.txt", os.fsdecode(b"odd\xff.bin"), "sub/plain.txt"])
