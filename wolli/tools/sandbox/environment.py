"""The sandboxed :class:`~wolli.tools.environment.Environment`: ``exec`` confined, the rest as is.

Only commands are confined (file tools already go through the permission rules, and their
writes are what checkpoints keep). Each command runs as ``bwrap ... <shell> -c COMMAND``
through the usual process machinery, so timeouts, aborts, output streaming and killing the
whole tree work as before; the shell is the one ``shellPath`` names (or bash).
"""

from __future__ import annotations

import shlex
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from ..environment import Environment, ExecOptions, ExecResult
from ..process import run_shell_command
from ..shell import resolve_shell
from .bwrap import confine


@dataclass
class SandboxConfig:
    program: str  # the bwrap binary
    writable: list[str]  # the project, and the extra folders of sandbox.writablePaths
    network: str = "proxy"  # none | proxy | open
    # Starts the proxy (on first use) and returns its socket path; None when network != proxy.
    proxy: Callable[[], Awaitable[str]] | None = None


def sandboxed(env: Environment, config: SandboxConfig) -> Environment:
    """``env`` with ``exec`` confined by ``config``."""

    async def exec_confined(command: str, cwd: str | None = None, options: ExecOptions | None = None) -> ExecResult:
        where = cwd or env.cwd
        socket = await config.proxy() if config.network == "proxy" and config.proxy is not None else None
        shell = resolve_shell(env.shell_path)
        argv = confine(config.program, [shell, "-c", command], cwd=where, writable=config.writable,
                       network=config.network, proxy_socket=socket)
        line = "exec " + " ".join(shlex.quote(part) for part in argv)
        return await run_shell_command(line, where, options or ExecOptions(), "/bin/sh")

    return env.derive(id=f"{env.id}+sandbox", exec=exec_confined)
