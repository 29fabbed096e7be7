"""``wolli install`` of real wheels from a path, a local git remote and a loopback index;
update, remove, a package that fails to import, and the lock in a fresh agent home."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.support.packages import (
    REPO,
    SimpleIndex,
    build_wheel,
    installer_env,
    make_project,
    publish_to_bare,
    tool_extension,
    tree,
    wolli_cli,
)
from tests.support.runtime import make_host, start_session
from wolli.ai.providers.faux import FauxProvider, faux_tool_call
from wolli.config import paths


@pytest.fixture
def faux():
    provider = FauxProvider()
    yield provider
    provider.unregister()


@pytest.fixture(scope="session")
def examples_wheel(tmp_path_factory) -> Path:
    """The repository's extensions/ built as the wolli-examples wheel."""
    return build_wheel(REPO / "extensions", tmp_path_factory.mktemp("examples-wheel"))


async def loaded_host(faux, cwd: Path):
    host = make_host(faux)
    errors = await host.extensions.load(str(cwd))
    session = await start_session(host, cwd, model=faux.model)
    return host, session, errors


def records() -> list[dict]:
    return json.loads((paths.agent_home() / "settings.json").read_text())["packages"]


def lock() -> dict:
    return json.loads((paths.agent_home() / "packages.lock.json").read_text())


async def test_a_wheel_from_a_path_installs_loads_and_remove_leaves_the_home_as_it_was(
        examples_wheel, faux, tmp_path, wolli_home):
    (wolli_home / "agents" / "default").mkdir(parents=True)
    (wolli_home / "agents" / "default" / "AGENTS.md").write_text("be brief\n")
    before = tree(wolli_home)
    done = wolli_cli(["install", str(examples_wheel), "--yes"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Installed package wolli-examples 0.1.0" in done.stdout
    assert "todo" in done.stdout and "plan-mode" in done.stdout
    assert (paths.agent_home() / "packages" / "venv").is_dir()
    assert [r["name"] for r in records()] == ["wolli-examples"]
    assert lock()["distributions"][0]["contentHash"].startswith("sha256:")

    host, session, errors = await loaded_host(faux, tmp_path)
    assert errors == []
    todo = next(i for i in host.extensions.infos() if i["name"] == "todo")
    assert todo["status"] == "loaded" and todo["package"] == "wolli-examples"
    faux.push([faux_tool_call("todo", {"action": "add", "text": "ship packages"})], "noted")
    await session.prompt("remember this")
    result = faux.contexts[-1].messages[-1]
    assert result.role == "toolResult" and not result.is_error and "ship packages" in result.content[0].text
    await host.shutdown()

    listed = wolli_cli(["list"], tmp_path)
    assert "wolli-examples 0.1.0" in listed.stdout
    gone = wolli_cli(["remove", "wolli-examples"], tmp_path)
    assert gone.returncode == 0, gone.stderr
    # What the session wrote (its file, the extensions' log) is the user's; the rest is as before.
    after = {k: v for k, v in tree(wolli_home).items() if not k.startswith(("agents/default/sessions",
                                                                              "agents/default/logs"))}
    assert after == before


def test_install_asks_first_and_without_a_terminal_needs_yes(examples_wheel, tmp_path, wolli_home):
    before = tree(wolli_home)
    done = wolli_cli(["install", str(examples_wheel)], tmp_path)
    assert done.returncode == 1
    assert "third-party code" in done.stdout and str(examples_wheel) in done.stdout
    assert "--yes" in done.stderr
    assert tree(wolli_home) == before


async def test_a_git_repository_installs_at_a_ref_and_update_follows_the_branch(faux, tmp_path):
    work, bare = tmp_path / "work", tmp_path / "remote.git"
    make_project(work, "git-tool", "1.0", "git_tool", tool_extension("greet", "hello from v1"),
                 {"wolli.extensions": {"greet": "git_tool"}})
    first = publish_to_bare(work, bare, "v1", tag="v1")
    done = wolli_cli(["install", f"git+file://{bare}@v1", "--yes"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert records()[0]["version"] == "1.0" and records()[0]["ref"] == "v1"
    entry = next(d for d in lock()["distributions"] if d["name"] == "git-tool")
    assert entry["directUrl"]["vcs_info"]["commit_id"] == first

    make_project(work, "git-tool", "2.0", "git_tool", tool_extension("greet", "hello from v2"),
                 {"wolli.extensions": {"greet": "git_tool"}})
    publish_to_bare(work, bare, "v2")
    # Pinned to the tag v1, an update stays at v1; the branch moves on.
    assert wolli_cli(["update", "git-tool", "--yes"], tmp_path).returncode == 0
    assert records()[0]["version"] == "1.0"
    assert wolli_cli(["remove", "git-tool"], tmp_path).returncode == 0
    done = wolli_cli(["install", f"git+file://{bare}", "--yes"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert records()[0]["version"] == "2.0"

    host, session, errors = await loaded_host(faux, tmp_path)
    assert errors == []
    faux.push([faux_tool_call("greet", {})], "done")
    await session.prompt("greet")
    assert faux.contexts[-1].messages[-1].content[0].text == "hello from v2"
    await host.shutdown()


def test_an_index_on_loopback_installs_upgrades_and_the_lock_reproduces_it(tmp_path, wolli_home, monkeypatch):
    wheels = tmp_path / "wheels"
    index = SimpleIndex(wheels)
    try:
        v1 = make_project(tmp_path / "p1", "indexed-tool", "1.0", "indexed_tool", tool_extension("idx", "one"),
                          {"wolli.extensions": {"idx": "indexed_tool"}})
        build_wheel(v1, wheels)
        env = installer_env()
        del env["PIP_NO_INDEX"]
        done = wolli_cli(["install", "indexed-tool", "--index-url", index.url, "--yes"], tmp_path, env=env)
        assert done.returncode == 0, done.stderr
        assert records()[0] == {"name": "indexed-tool", "kind": "python", "source": "indexed-tool",
                                "sourceKind": "index", "version": "1.0", "indexUrl": index.url, "enabled": True}
        v2 = make_project(tmp_path / "p2", "indexed-tool", "2.0", "indexed_tool", tool_extension("idx", "two"),
                          {"wolli.extensions": {"idx": "indexed_tool"}})
        build_wheel(v2, wheels)
        done = wolli_cli(["update", "--yes"], tmp_path, env=env)
        assert done.returncode == 0, done.stderr
        assert "(was 1.0)" in done.stdout and records()[0]["version"] == "2.0"
        locked = lock()

        # The agent home's records copied to a fresh WOLLI_HOME: `wolli install` installs the lock.
        fresh = tmp_path / "fresh-home"
        agent = fresh / "agents" / "default"
        agent.mkdir(parents=True)
        for name in ("settings.json", "packages.lock.json"):
            shutil.copy(paths.agent_home() / name, agent / name)
        env_fresh = {**env, "WOLLI_HOME": str(fresh)}
        done = wolli_cli(["install"], tmp_path, env=env_fresh)
        assert done.returncode == 0, done.stderr
        monkeypatch.setenv("WOLLI_HOME", str(fresh))
        from wolli.packages.environment import site_packages
        from wolli.packages.records import installed_distributions, lock_entry

        found = [lock_entry(d) for d in installed_distributions(site_packages(agent / "packages" / "venv"))]
        assert [(d["name"], d["version"], d["contentHash"]) for d in found] == \
            [(d["name"], d["version"], d["contentHash"]) for d in locked["distributions"]]

        # A lock whose hash does not match what the index serves is refused.
        tampered = dict(locked)
        tampered["distributions"] = [{**locked["distributions"][0], "contentHash": "sha256:" + "0" * 64}]
        shutil.rmtree(agent / "packages")
        (agent / "packages.lock.json").write_text(json.dumps(tampered))
        done = wolli_cli(["install"], tmp_path, env=env_fresh)
        assert done.returncode == 1 and "do not match the lock" in done.stderr
    finally:
        index.close()


async def test_a_package_that_fails_to_import_is_named_with_file_and_line_and_the_rest_loads(
        examples_wheel, faux, tmp_path):
    broken = make_project(tmp_path / "broken", "broken-ext", "0.1", "broken_ext",
                          "import os\n\nraise RuntimeError('cannot start: no config')\n",
                          {"wolli.extensions": {"broken": "broken_ext"}})
    assert wolli_cli(["install", str(examples_wheel), "--yes"], tmp_path).returncode == 0
    done = wolli_cli(["install", str(broken), "--yes"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "broken-ext" in done.stderr and "broken_ext/__init__.py:3: RuntimeError: cannot start" in done.stderr
    assert "starts without" in done.stderr

    host, session, errors = await loaded_host(faux, tmp_path)
    assert any("broken_ext/__init__.py:3" in e and "package broken-ext" in e for e in errors)
    assert next(i for i in host.extensions.infos() if i["name"] == "todo")["status"] == "loaded"
    await host.shutdown()


async def test_packages_and_single_extensions_switch_off(examples_wheel, faux, tmp_path):
    from wolli.config.settings import Settings
    from wolli.packages.manager import PackageManager

    assert wolli_cli(["install", str(examples_wheel), "--yes"], tmp_path).returncode == 0
    settings = Settings()
    settings.update({"disabledExtensions": ["todo"]})
    host, _, errors = await loaded_host(faux, tmp_path)
    states = {i["name"]: i["status"] for i in host.extensions.infos()}
    assert states["todo"] == "disabled" and states["plan-mode"] == "loaded"
    assert "todo" not in [t.name for t in host.extra_tools]
    await host.shutdown()

    PackageManager(paths.agent_home(), Settings()).set_enabled("wolli-examples", False)
    host, _, errors = await loaded_host(faux, tmp_path)
    assert not [i for i in host.extensions.infos() if i.get("package") == "wolli-examples"]
    await host.shutdown()


def test_uv_installs_when_it_is_on_path_and_its_lock_installs_with_pip(examples_wheel, tmp_path, wolli_home):
    uv_dir = Path(sys.executable).parent
    if not (uv_dir / "uv").exists() and shutil.which("uv") is None:
        pytest.skip("uv is not installed (it is a test extra)")
    env = installer_env(UV_NO_INDEX="1")
    del env["WOLLI_INSTALLER"]
    env["PATH"] = f"{uv_dir}{os.pathsep}{env.get('PATH', '')}"
    done = wolli_cli(["install", str(examples_wheel), "--yes"], tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    venv = paths.agent_home() / "packages" / "venv"
    installer = next(venv.glob("lib/python*/site-packages/wolli_examples-0.1.0.dist-info/INSTALLER"))
    assert installer.read_text().strip() == "uv"
    locked = lock()["distributions"]

    # The same lock installed by pip in a fresh agent home gives the same content hashes.
    fresh = tmp_path / "fresh"
    agent = fresh / "agents" / "default"
    agent.mkdir(parents=True)
    for name in ("settings.json", "packages.lock.json"):
        shutil.copy(paths.agent_home() / name, agent / name)
    done = wolli_cli(["install"], tmp_path, env=installer_env(WOLLI_HOME=str(fresh)))
    assert done.returncode == 0, done.stderr
    from wolli.packages.environment import site_packages
    from wolli.packages.records import installed_distributions, lock_entry

    again = [lock_entry(d) for d in installed_distributions(site_packages(agent / "packages" / "venv"))]
    assert [(d["name"], d["contentHash"]) for d in again] == [(d["name"], d["contentHash"]) for d in locked]
    pip_installer = next((agent / "packages" / "venv").glob("lib/python*/site-packages/wolli_examples-0.1.0.dist-info/INSTALLER"))
    assert pip_installer.read_text().strip() == "pip"


async def test_a_package_brings_skills_prompts_themes_mcp_servers_and_a_tool_factory(faux, tmp_path):
    theme = json.loads((REPO / "wolli" / "themes" / "dark.json").read_text())
    theme["name"] = "ocean"
    project = make_project(
        tmp_path / "res", "res-pack", "1.0", "res_pack",
        "def factory(api):\n    return {'name': 'shout', 'description': 'shouts', "
        "'parameters': {'type': 'object', 'properties': {}}, "
        "'execute': lambda call_id, params, signal, on_update, ctx: 'HEY'}\n",
        {"wolli.resources": {"res": "res_pack"}, "wolli.tools": {"shout": "res_pack"}},
        files={"skills/deploy/SKILL.md": "---\ndescription: Deploys the app\n---\nRun make deploy.\n",
               "prompts/review.md": "---\ndescription: Review a file\n---\nReview $1 carefully.\n",
               "themes/ocean.json": json.dumps(theme),
               "mcp.json": json.dumps({"mcpServers": {"clock": {
                   "command": str(Path(sys.executable).parent / "mcp-server-time")}}})})
    done = wolli_cli(["install", str(project), "--yes"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "wolli.resources: res" in done.stdout and "wolli.tools: shout" in done.stdout

    host, session, errors = await loaded_host(faux, tmp_path)
    assert errors == []
    resources = host.resources(str(tmp_path))
    assert "deploy" in [s.name for s in resources.skills]
    assert "review" in [t.name for t in resources.prompts]
    from wolli.config.themes import discover_themes
    from wolli.mcp.sources import collect

    themes, problems = discover_themes(host.extensions.installed.theme_dirs())
    assert "ocean" in themes and problems == []
    servers = collect(host.home, str(tmp_path), [], package_files=host.extensions.installed.mcp_files()).servers
    assert [(s.name, s.scope) for s in servers] == [("clock", "package")]
    faux.push([faux_tool_call("shout", {})], "done")
    await session.prompt("shout")
    assert faux.contexts[-1].messages[-1].content[0].text == "HEY"
    await host.shutdown()
