"""Is bubblewrap usable here, and the command line that confines one shell command.

:func:`probe` runs ``bwrap`` once with the namespaces the sandbox uses and says why not
when it fails (no such program, not Linux, user namespaces forbidden by the kernel or a
container). :func:`confine` builds the argv:

- ``--ro-bind / /``: everything readable, nothing writable, then a private ``/tmp`` and
  ``/dev``, ``/proc``; then the project (and ``writable`` folders) bound writable again;
- ``--unshare-user --unshare-pid --unshare-ipc --unshare-uts --unshare-cgroup-try``, and
  ``--unshare-net`` unless the network is left open; ``--cap-drop ALL`` and
  ``--disable-userns`` so nothing inside can remount or nest its way out;
- ``--new-session`` (no writing into the terminal's input), ``--die-with-parent``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

BRIDGE = Path(__file__).with_name("bridge.py")
PROXY_PORT = 3128  # inside the sandbox's own network namespace, so never taken


@dataclass(frozen=True)
class Availability:
    usable: bool
    reason: str  # why not (or what it is when usable)
    program: str | None = None


def _base_flags(network: bool) -> list[str]:
    flags = ["--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
             "--cap-drop", "ALL", "--disable-userns", "--new-session", "--die-with-parent"]
    if not network:
        flags.append("--unshare-net")
    return flags


@lru_cache(maxsize=1)
def probe() -> Availability:
    """Whether the sandbox can run here (checked once per process)."""
    if not sys.platform.startswith("linux"):
        return Availability(False, f"bubblewrap runs on Linux only (this is {sys.platform})")
    program = shutil.which("bwrap")
    if program is None:
        return Availability(False, "bwrap (bubblewrap) is not installed; e.g. apt-get install bubblewrap")
    argv = [program, *_base_flags(False), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        return Availability(False, f"bwrap could not start ({exc})", program)
    if done.returncode != 0:
        detail = (done.stderr or "").strip().splitlines()[-1:] or ["unknown error"]
        return Availability(False, f"bwrap cannot create its namespaces here ({detail[0]}); user namespaces "
                                   "may be forbidden by the kernel or the container", program)
    return Availability(True, f"bubblewrap ({program})", program)


def confine(program: str, command: list[str], *, cwd: str, writable: list[str], network: str,
            proxy_socket: str | None) -> list[str]:
    """The argv that runs ``command`` confined. ``network``: ``none``, ``proxy`` (only
    through ``proxy_socket``) or ``open``."""
    argv = [program, *_base_flags(network == "open"), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--tmpfs", "/tmp", "--tmpfs", "/var/tmp"]
    for folder in _own_install_under_tmp():  # Wolli's Python, still readable under the private /tmp
        argv += ["--ro-bind", folder, folder]
    for folder in dict.fromkeys(os.path.realpath(p) for p in writable):
        if os.path.isdir(folder):
            argv += ["--bind", folder, folder]
    if network == "proxy" and proxy_socket is not None:
        folder = os.path.dirname(proxy_socket)
        argv += ["--ro-bind", folder, folder]
        command = [sys.executable, "-I", "-S", str(BRIDGE), proxy_socket, str(PROXY_PORT), "--", *command]
    argv += ["--chdir", cwd, "--", *command]
    return argv


@lru_cache(maxsize=1)
def _own_install_under_tmp() -> tuple[str, ...]:
    """The folders of the running Python and of Wolli itself that lie under ``/tmp`` or
    ``/var/tmp`` (a virtual environment made there): the private ``/tmp`` would hide them,
    and the network bridge (and the user's own ``python``) run from them."""
    candidates = [sys.prefix, sys.base_prefix, os.path.dirname(os.path.realpath(sys.executable)),
                  str(BRIDGE.resolve().parents[2])]  # the ``wolli`` package's folder
    out: list[str] = []
    for path in dict.fromkeys(os.path.realpath(p) for p in candidates):
        if any(path == top or path.startswith(top + "/") for top in ("/tmp", "/var/tmp")) and os.path.isdir(path):
            if not any(path.startswith(kept + "/") for kept in out):
                out.append(path)
    return tuple(out)
