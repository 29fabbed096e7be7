"""The virtual environment Wolli installs packages into: one per agent, made on first use.

It lives at ``<agent home>/packages/venv`` and is never the user's project or the system
Python. ``uv`` does the work when it is on PATH, ``pip`` otherwise (the pip Wolli runs
with, pointed at the environment with ``--python``, so the environment needs no pip of its
own). A file ``_wolli_host.pth`` in the environment makes Wolli's own installation visible
to it: a package that depends on ``wolli`` (or on pydantic, httpx...) is satisfied by what
Wolli already runs with instead of a second copy, and a package built from source may use
the build backends present there.

At start-up :func:`activate` appends the environment's site-packages to ``sys.path`` and
runs its other ``.pth`` files: nothing is imported, so start-up pays only for the
packages whose extensions are loaded.
"""

from __future__ import annotations

import os
import site
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

HOST_PTH = "_wolli_host.pth"
# An install that takes longer than this is stopped (a hung build, an index that does not answer).
INSTALL_TIMEOUT_S = 900.0
_OUTPUT_LIMIT = 64 * 1024

Output = Callable[[str], None]


class InstallerError(RuntimeError):
    """The installer failed; the message carries the end of its output."""


def packages_dir(agent_home: Path) -> Path:
    return agent_home / "packages"


def site_packages(venv: Path) -> Path:
    """Where a venv made by this Python keeps its packages (no globbing: start-up calls it)."""
    if os.name == "nt":
        return venv / "Lib" / "site-packages"
    return venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"


@dataclass
class ManagedEnvironment:
    agent_home: Path

    @property
    def root(self) -> Path:
        return packages_dir(self.agent_home)

    @property
    def venv(self) -> Path:
        return self.root / "venv"

    @property
    def site_packages(self) -> Path:
        return site_packages(self.venv)

    @property
    def python(self) -> Path:
        return self.venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")

    def exists(self) -> bool:
        return self.python.exists() and self.site_packages.is_dir()

    @staticmethod
    def installer() -> str:
        """``uv`` when it is on PATH (and ``WOLLI_INSTALLER`` does not say ``pip``), else ``pip``."""
        import shutil

        wanted = os.environ.get("WOLLI_INSTALLER", "").strip().lower()
        if wanted == "pip":
            return "pip"
        return "uv" if shutil.which("uv") else "pip"

    def create(self, output: Output | None = None) -> None:
        """Make the environment (with this Python) unless it is there."""
        if self.exists():
            self._write_host_pth()
            return
        import shutil

        self.root.mkdir(parents=True, exist_ok=True)
        uv = shutil.which("uv") if self.installer() == "uv" else None
        if uv:
            command = [uv, "venv", "--quiet", "--python", sys.executable, str(self.venv)]
        else:
            command = [sys.executable, "-m", "venv", "--without-pip", str(self.venv)]
        _run(command, output, what="creating the package environment")
        self._write_host_pth()

    def _write_host_pth(self) -> None:
        lines = [f"import site; site.addsitedir({d!r})" for d in host_site_dirs()]
        self.site_packages.mkdir(parents=True, exist_ok=True)
        (self.site_packages / HOST_PTH).write_text("\n".join(lines) + "\n", "utf-8")

    def _base(self, action: str) -> list[str]:
        if self.installer() == "uv":
            import shutil

            uv = shutil.which("uv") or "uv"
            return [uv, "pip", action, "--python", str(self.python)]
        if _host_has_pip():
            return [sys.executable, "-m", "pip", "--python", str(self.python), action]
        # No pip beside Wolli (a pipx or uv tool install): give the environment its own.
        if not (self.venv / "bin" / "pip").exists():
            _run([str(self.python), "-m", "ensurepip", "--default-pip"], None, what="adding pip")
        return [str(self.python), "-m", "pip", action]

    def install(self, requirements: Sequence[str], *, index_url: str | None = None, upgrade: bool = False,
                no_deps: bool = False, reinstall: str | None = None, output: Output | None = None) -> str:
        """``reinstall``: a distribution to install again even at the same version (a folder
        or repository that changed); pip does that for such sources by itself."""
        command = self._base("install")
        if self.installer() == "pip":
            command += ["--disable-pip-version-check", "--no-input"]
        else:
            command += ["--excludes", str(self._host_excludes())]
            if reinstall:
                command += ["--reinstall-package", reinstall]
        if index_url:
            command += ["--index-url", index_url]
        if upgrade:
            command.append("--upgrade")
        if no_deps:
            command.append("--no-deps")
        return _run([*command, *requirements], output, what="installing")

    def _host_excludes(self) -> Path:
        """uv does not read ``.pth`` files when it resolves, so it cannot see Wolli's own
        installation the way pip does: the distributions Wolli runs with are excluded from its
        resolution instead (a package's requirement on ``wolli`` or ``httpx`` is then met by them)."""
        from importlib.metadata import distributions

        names = sorted({d.metadata["Name"] for d in distributions(path=host_site_dirs()) if d.metadata["Name"]})
        path = self.root / "wolli-host-excludes.txt"
        path.write_text("\n".join(names) + "\n", "utf-8")
        return path

    def uninstall(self, names: Sequence[str], output: Output | None = None) -> str:
        if not names:
            return ""
        command = self._base("uninstall")
        if self.installer() == "pip":
            command += ["--yes", "--disable-pip-version-check"]
        return _run([*command, *names], output, what="removing")


def host_site_dirs() -> list[str]:
    """The site-packages folders Wolli itself runs from."""
    found = [p for p in site.getsitepackages() if os.path.isdir(p)]
    if site.ENABLE_USER_SITE:
        user = site.getusersitepackages()
        if os.path.isdir(user):
            found.append(user)
    return found


def _host_has_pip() -> bool:
    import importlib.util

    return importlib.util.find_spec("pip") is not None


def _run(command: list[str], output: Output | None, *, what: str) -> str:
    """Run an installer command; its output goes to ``output`` line by line and is kept (the
    last 64 KiB) for the error message."""
    import subprocess

    env = dict(os.environ)
    env.setdefault("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    kept: list[str] = []
    size = 0
    try:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, env=env, text=True, errors="replace",
                                   start_new_session=True)
    except OSError as exc:
        raise InstallerError(f"{what}: could not run {command[0]}: {exc.strerror or exc}") from None
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if output is not None:
                output(line.rstrip("\n"))
            kept.append(line)
            size += len(line)
            while size > _OUTPUT_LIMIT and len(kept) > 1:
                size -= len(kept.pop(0))
        code = process.wait(timeout=INSTALL_TIMEOUT_S)
    except BaseException:
        process.kill()
        process.wait()
        raise
    text = "".join(kept)
    if code != 0:
        tail = "\n".join(text.strip().splitlines()[-15:])
        raise InstallerError(f"{what} failed ({Path(command[0]).name} exited with {code}):\n{tail}")
    return text


def activate(agent_home: Path) -> Path | None:
    """Put the agent's package environment on ``sys.path`` (after Wolli's own folders) and
    run its ``.pth`` files except the one pointing back at Wolli. Imports nothing else."""
    folder = site_packages(packages_dir(agent_home) / "venv")
    text = str(folder)
    if text in sys.path:
        return folder
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return None
    sys.path.append(text)
    known = {os.path.normcase(p) for p in sys.path}
    for name in names:
        if name.endswith(".pth") and name != HOST_PTH:
            site.addpackage(text, name, known)  # type: ignore[attr-defined]
    return folder
