"""The sandbox at run time: settings, availability, the network proxy and its questions.

``sandbox: true`` (or an object, docs/permissions.md) confines every shell command of the
agent (the ``bash`` tool) and of the user (``!cmd``) with bubblewrap when it can run here.
When it cannot, that is said once (a notice) and ``sandbox.fallback`` decides: ``ask``
(every shell command asks first, in every mode) or ``refuse`` (none runs).

The proxy that carries allowed network traffic starts with the first confined command that
may use it and stops with the host. A host not in ``sandbox.network.allowedDomains`` is put
to the user as a permission question (allow for this session, allow always: saved to the
list, deny); where nobody can answer it is refused.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..events import NoticeEvent

if TYPE_CHECKING:
    from ...config.settings import Settings
    from ...extensions.context import ExtensionUI
    from ...extensions.host import ExtensionHost
    from ...permissions.policy import Decision
    from ...tools.environment import Environment
    from ...tools.sandbox.bwrap import Availability
    from ...tools.sandbox.proxy import NetworkProxy

NETWORK_MODES = ("proxy", "none", "open")
FALLBACKS = ("ask", "refuse")


@dataclass
class SandboxSettings:
    enabled: bool = False
    network: str = "proxy"  # proxy: allowed domains (and the user's answers); none; open
    allowed_domains: list[str] = field(default_factory=list)
    ask_network: bool = True
    writable: list[str] = field(default_factory=list)
    fallback: str = "ask"
    auto_allow_bash: bool = True
    problems: list[str] = field(default_factory=list)


def read_settings(settings: Settings) -> SandboxSettings:
    """``sandbox`` from settings.json: ``true``/``false`` or an object; bad values reported."""
    value = settings.get("sandbox")
    out = SandboxSettings()
    if value is None or value is False:
        return out
    if value is True:
        out.enabled = True
        return out
    if not isinstance(value, dict):
        out.problems.append(f"settings sandbox: expected true, false or an object, got {value!r}; the sandbox is off")
        return out
    out.enabled = value.get("enabled", True) is not False
    network = value.get("network")
    if isinstance(network, dict):
        mode = network.get("mode", "proxy")
        if mode in NETWORK_MODES:
            out.network = mode
        else:
            out.problems.append(f"settings sandbox.network.mode: {mode!r} is not one of {', '.join(NETWORK_MODES)}")
        domains = network.get("allowedDomains", [])
        out.allowed_domains = [d for d in domains if isinstance(d, str)] if isinstance(domains, list) else []
        out.ask_network = network.get("ask", True) is not False
    elif network is not None:
        out.problems.append("settings sandbox.network: expected an object {mode, allowedDomains, ask}")
    writable = value.get("writablePaths", [])
    out.writable = [os.path.expanduser(p) for p in writable if isinstance(p, str)] if isinstance(writable, list) else []
    fallback = value.get("fallback", "ask")
    if fallback in FALLBACKS:
        out.fallback = fallback
    else:
        out.problems.append(f"settings sandbox.fallback: {fallback!r} is not ask or refuse; asking")
    out.auto_allow_bash = value.get("autoAllowBash", True) is not False
    return out


class SandboxService:
    def __init__(self, host: ExtensionHost) -> None:
        self.host = host
        self._availability: Availability | None = None
        self._reported = False
        self._proxy: NetworkProxy | None = None
        self._policy: tuple[Any, tuple[bool, Decision | None]] | None = None

    @property
    def settings(self) -> SandboxSettings:
        return read_settings(self.host.settings)

    def availability(self) -> Availability:
        if self._availability is None:
            from ...tools.sandbox.bwrap import probe

            self._availability = probe()
        return self._availability

    def active(self) -> bool:
        return self.settings.enabled and self.availability().usable

    def report(self, deliver: Callable[[NoticeEvent], object]) -> None:
        """Say once (per process) what the sandbox does or why it cannot."""
        config = self.settings
        if self._reported or not config.enabled:
            return
        self._reported = True
        for problem in config.problems:
            deliver(NoticeEvent("warning", problem))
        found = self.availability()
        if not found.usable:
            then = "shell commands ask before they run" if config.fallback == "ask" else "shell commands are refused"
            deliver(NoticeEvent("warning", f"sandbox: {found.reason}; {then} (sandbox.fallback: {config.fallback})"))

    def bash_policy(self, version: object = None) -> tuple[bool, Decision | None]:
        """(shell commands may run without asking, what they get instead of the sandbox);
        ``version`` (of the settings) lets a caller that checks often skip re-reading them."""
        if version is not None and self._policy is not None and self._policy[0] == version:
            return self._policy[1]
        policy = self._bash_policy()
        if version is not None:
            self._policy = (version, policy)
        return policy

    def _bash_policy(self) -> tuple[bool, Decision | None]:
        config = self.settings
        if not config.enabled:
            return False, None
        found = self.availability()
        if found.usable:
            return config.auto_allow_bash, None
        from ...permissions.policy import Decision

        if config.fallback == "refuse":
            return False, Decision("deny", f"Not run: the sandbox shell commands must run in is unavailable "
                                           f"({found.reason}) and sandbox.fallback is refuse.")
        return False, Decision("ask", "the sandbox is unavailable, so the command would run unconfined")

    def wrap(self, env: Environment, cwd: str) -> Environment:
        """``env`` confined when the sandbox is on and can run; else ``env`` itself."""
        if not self.active():
            return env
        from ...permissions.project import find_project_root
        from ...tools.sandbox.environment import SandboxConfig, sandboxed

        config = self.settings
        writable = [find_project_root(cwd), cwd, *config.writable]
        program = self.availability().program
        assert program is not None  # active() means bwrap was found
        return sandboxed(env, SandboxConfig(program, writable, config.network, self._proxy_socket))

    async def refuse_user_command(self, ui: ExtensionUI) -> str | None:
        """``!cmd`` with the sandbox unavailable: why it does not run, or None to run it."""
        config = self.settings
        if not config.enabled or self.availability().usable:
            return None
        reason = self.availability().reason
        if config.fallback == "refuse":
            return f"not run: the sandbox is unavailable ({reason}) and sandbox.fallback is refuse"
        if getattr(ui, "has_ui", False) and await ui.confirm(
                "The sandbox is unavailable", f"{reason}.\nRun the command without it?"):
            return None
        return f"not run: the sandbox is unavailable ({reason})"

    # ------------------------------------------------------------------ the network

    async def _proxy_socket(self) -> str:
        if self._proxy is None:
            from ...tools.sandbox.proxy import DomainPolicy, NetworkProxy

            config = self.settings
            self._proxy = NetworkProxy(DomainPolicy(list(config.allowed_domains)),
                                       self._ask if config.ask_network else None)
        self._proxy.policy.allowed = list(self.settings.allowed_domains)
        await self._proxy.start()
        return str(self._proxy.path)

    async def _ask(self, host: str, port: int) -> bool:
        from ...permissions.prompt import PermissionOption, PermissionRequest, PermissionToolCall

        ui = self.host.ui
        if not getattr(ui, "has_ui", False):
            return False
        call = PermissionToolCall("network", "network", f"network: {host}:{port}", "fetch", {"host": host, "port": port},
                                  f"A sandboxed command wants to connect to {host} (port {port}).")
        options = (PermissionOption("allow_once", "Allow for this session", "allow_once"),
                   PermissionOption("allow_always", f"Allow always: {host}", "allow_always"),
                   PermissionOption("reject_once", "Deny", "reject_once"))
        request = PermissionRequest(call, "the domain is not in sandbox.network.allowedDomains", (host,), options)
        answer = await ui.ask_permission(request)
        if answer.kind == "allow_always":
            for domain in answer.rules or (host,):
                self._save_domain(domain)
        return bool(answer.allowed)

    def _save_domain(self, domain: str) -> None:
        def change(data: dict[str, Any]) -> None:
            block = data.get("sandbox")
            if not isinstance(block, dict):
                block = data["sandbox"] = {"enabled": bool(block)} if isinstance(block, bool) else {}
            network = block.setdefault("network", {})
            domains = network.setdefault("allowedDomains", [])
            if domain not in domains:
                domains.append(domain)

        self.host.settings.modify(change, "agent")

    async def close(self) -> None:
        if self._proxy is not None:
            await self._proxy.close()
            self._proxy = None
