"""What extensions hold of the permissions: ``ctx.permissions`` and ``wolli.permissions``.

``ctx.permissions`` is bound to the session the handler runs for; ``wolli.permissions``
follows the active session. Both read and change the same policy:

- ``mode`` and ``set_mode(mode)`` (an awaitable; ``permission_mode_change`` follows);
- ``rules()``: every rule that counts, with its kind and where it comes from;
- ``add_rule(kind, rule, scope="session")`` / ``remove_rule(...)``: ``session`` rules last
  for this process, ``project``/``user``/``global`` ones are saved (docs/permissions.md);
- ``check(tool_name, input)``: what the policy would say about a call, without asking.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...permissions.store import Scope


class PermissionsHandle:
    def __init__(self, host_permissions: Any, session: Any = None) -> None:
        self._host = host_permissions
        self._bound = session

    def _session(self) -> Any:
        session = self._bound if self._bound is not None else self._host.host.active
        if session is None:
            raise RuntimeError("there is no session yet; permissions belong to a session")
        return session

    @property
    def mode(self) -> str:
        return str(self._session().permissions.mode)

    def set_mode(self, mode: str) -> Awaitable[Any]:
        """Switch the session's permission mode (``default``, ``accept-edits``, ``plan``, ``yolo``)."""
        from ...permissions.modes import parse_mode

        parse_mode(mode)  # a wrong name fails here, in the caller's frame
        session = self._session()
        return self._host.host.handle(session)._schedule(lambda: session.permissions.set_mode(mode, "extension"))

    def rules(self) -> list[dict[str, str]]:
        session = self._session()
        return [{"rule": str(r.rule), "kind": r.kind, "source": r.source, "origin": r.origin}
                for r in self._host.loaded(session.cwd).rules.all]

    def add_rule(self, kind: str, rule: str, *, scope: Scope = "session") -> str:
        """Add an ``allow``, ``ask`` or ``deny`` rule; returns it as stored."""
        return str(self._host.add_rule(self._session().cwd, kind, rule, scope))

    def remove_rule(self, kind: str, rule: str, *, scope: Scope = "session") -> bool:
        return bool(self._host.remove_rule(self._session().cwd, kind, rule, scope))

    def check(self, tool_name: str, input: dict[str, Any] | None = None, *, read_only: bool = False) -> dict[str, Any]:
        """``{"outcome": "allow"|"ask"|"deny", "reason": ..., "rule": ...}`` for a call."""
        decision = self._session().permissions.check(tool_name, dict(input or {}), read_only=read_only)
        return {"outcome": decision.outcome, "reason": decision.reason,
                "rule": str(decision.rule.rule) if decision.rule is not None else None}

    @property
    def problems(self) -> list[str]:
        return list(self._host.loaded(self._session().cwd).problems)
