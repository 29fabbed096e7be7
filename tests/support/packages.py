"""Building real packages for the package tests: projects, wheels, a git remote, an index.

Wheels are built with ``pip wheel --no-build-isolation`` and hatchling (a test extra), so
nothing is downloaded. The index is a PEP 503 "simple" index served by ``http.server`` on
127.0.0.1; ``pip --index-url`` reads it as it reads PyPI.
"""

from __future__ import annotations

import hashlib
import http.server
import os
import re
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def installer_env(**extra: str) -> dict[str, str]:
    """The environment for ``wolli install`` in tests: pip only, no user config, no network
    index (a test that serves one passes ``--index-url``), builds without isolation."""
    env = dict(os.environ)
    for key in [k for k in env if k.startswith(("PIP_", "UV_"))]:
        del env[key]
    env.update({"PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1", "PIP_NO_BUILD_ISOLATION": "0",
                "PIP_DISABLE_PIP_VERSION_CHECK": "1", "WOLLI_INSTALLER": "pip"})
    env.update(extra)
    return env


def wolli_cli(args: list[str], cwd: Path, *, env: dict[str, str] | None = None, stdin: str = "",
              timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wolli", *args], cwd=cwd, input=stdin, capture_output=True,
                          text=True, timeout=timeout, env=env or installer_env())


def make_project(root: Path, name: str, version: str, module: str, source: str,
                 entry_points: dict[str, dict[str, str]], *, files: dict[str, str] | None = None) -> Path:
    """A hatchling project ``root`` with package ``module`` (its ``__init__.py`` is ``source``)."""
    root.mkdir(parents=True, exist_ok=True)
    groups = "\n".join(
        f'[project.entry-points."{group}"]\n' + "\n".join(f'{k} = "{v}"' for k, v in points.items())
        for group, points in entry_points.items())
    (root / "pyproject.toml").write_text(textwrap.dedent(f"""\
        [build-system]
        requires = ["hatchling"]
        build-backend = "hatchling.build"

        [project]
        name = "{name}"
        version = "{version}"
        dependencies = ["wolli"]

        [tool.hatch.build.targets.wheel]
        packages = ["{module}"]

        """) + groups + "\n")
    package = root / module
    shutil.rmtree(package, ignore_errors=True)
    package.mkdir()
    (package / "__init__.py").write_text(textwrap.dedent(source).lstrip())
    for rel, text in (files or {}).items():
        path = package / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return root


def tool_extension(tool: str, answer: str) -> str:
    """Extension source registering a tool ``tool`` that answers ``answer``."""
    return f'''
    def extension(wolli):
        wolli.register_tool({{
            "name": "{tool}",
            "description": "answers",
            "parameters": {{"type": "object", "properties": {{}}}},
            "execute": lambda call_id, params, signal, on_update, ctx: "{answer}",
        }})
    '''


def build_wheel(project: Path, out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    before = set(out.glob("*.whl"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                    "-q", "-w", str(out), str(project)], check=True, env=installer_env(), capture_output=True)
    made = sorted(set(out.glob("*.whl")) - before) or sorted(out.glob("*.whl"))
    return made[-1]


def git(*args: str, cwd: Path) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout


def publish_to_bare(work: Path, bare: Path, message: str, tag: str | None = None) -> str:
    """Commit ``work`` and push it to the bare repository ``bare`` (made on first use)."""
    if not bare.exists():
        git("init", "--quiet", "--bare", "-b", "main", str(bare), cwd=work.parent)
    if not (work / ".git").exists():
        git("init", "--quiet", "-b", "main", cwd=work)
        git("remote", "add", "origin", str(bare), cwd=work)
    git("add", "-A", cwd=work)
    git("commit", "--quiet", "-m", message, cwd=work)
    if tag:
        git("tag", tag, cwd=work)
    git("push", "--quiet", "origin", "main", "--tags", cwd=work)
    return git("rev-parse", "HEAD", cwd=work).strip()


class SimpleIndex:
    """A PEP 503 index of the wheels in ``folder``, served on 127.0.0.1 (pages made per request)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        index = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                parts = [p for p in self.path.split("?")[0].split("/") if p]
                body: bytes | None = None
                kind = "text/html"
                if parts == ["simple"]:
                    names = sorted({_normal(w.name.split("-")[0]) for w in index.folder.glob("*.whl")})
                    body = "".join(f'<a href="/simple/{n}/">{n}</a>\n' for n in names).encode()
                elif len(parts) == 2 and parts[0] == "simple":
                    wheels = [w for w in index.folder.glob("*.whl") if _normal(w.name.split("-")[0]) == parts[1]]
                    if wheels:
                        body = "".join(
                            f'<a href="/files/{w.name}#sha256={hashlib.sha256(w.read_bytes()).hexdigest()}">{w.name}</a>\n'
                            for w in sorted(wheels)).encode()
                elif len(parts) == 2 and parts[0] == "files" and (index.folder / parts[1]).is_file():
                    body, kind = (index.folder / parts[1]).read_bytes(), "application/octet-stream"
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/simple/"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def tree(root: Path) -> dict[str, bytes | None]:
    """Every file and folder under ``root`` (None for folders), to compare before and after."""
    if not root.exists():
        return {}
    out: dict[str, bytes | None] = {}
    for path in sorted(root.rglob("*")):
        out[str(path.relative_to(root))] = None if path.is_dir() else path.read_bytes()
    return out
