"""RPC commands of the safety net: permission modes and rules, permission requests, rewind.

``set_permission_requests {enabled}`` is the client's opt-in to ``permission`` requests; a
session still in the mode RPC starts in by itself (``yolo``) moves to ``default`` then, so
the questions come. The others read and change the same policy the TUI's ``/permissions``
does (docs/rpc.md, docs/permissions.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...permissions.modes import MODES, ModeError, next_mode
from ...permissions.rules import RULE_KINDS, RuleError, RuleKind
from ...permissions.store import SCOPES, Scope
from .commands import CommandError, Reply, RpcServer, _choice, _field, _flag, _text, command

if TYPE_CHECKING:
    from ...runtime.live.live_session import LiveSession
    from ...runtime.safety.rewind import RewindPoint


def permissions_state(session: LiveSession) -> dict[str, Any]:
    loaded = session.permissions.host.loaded(session.cwd)
    return {
        "mode": session.permissions.mode,
        "beforePlan": session.permissions.before_plan,  # where /plan goes back to from plan mode
        "modes": list(MODES),
        "rules": [{"rule": str(r.rule), "kind": r.kind, "source": r.source, "origin": r.origin}
                  for r in loaded.rules.all],
        "problems": list(loaded.problems),
        "pendingSharedAllow": list(loaded.pending_shared),
    }


@command("get_permissions", "query")
def get_permissions(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    return permissions_state(server.session)


@command("set_permission_requests")
async def set_permission_requests(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    enabled = _flag(cmd, "enabled")
    server.ui.permission_requests = enabled
    session = server.session
    if enabled and session.permissions.implicit and session.permissions.mode == "yolo":
        await session.permissions.set_mode("default", "rpc")
    return {"enabled": enabled, "mode": session.permissions.mode}


@command("set_permission_mode")
async def set_permission_mode(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    mode = _text(cmd, "mode")
    try:
        return {"mode": await server.session.permissions.set_mode(mode, "rpc")}
    except ModeError as exc:
        raise CommandError(f"set_permission_mode: {exc}") from None


@command("cycle_permission_mode")
async def cycle_permission_mode(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    permissions = server.session.permissions
    return {"mode": await permissions.set_mode(next_mode(permissions.mode), "rpc")}


def _rule_fields(cmd: dict[str, Any]) -> tuple[RuleKind, str, Scope]:
    kind = _choice(cmd, "kind", RULE_KINDS)
    rule = _text(cmd, "rule")
    scope = _field(cmd, "scope", str, "one of " + ", ".join(SCOPES), required=False) or "project"
    for known in SCOPES:
        if scope == known:
            return kind, rule, known
    raise CommandError(f"{cmd['type']}: 'scope' must be one of {', '.join(SCOPES)}, not {scope!r}")


@command("add_permission_rule")
async def add_permission_rule(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    kind, rule, scope = _rule_fields(cmd)
    session = server.session
    try:
        saved = session.permissions.host.add_rule(session.cwd, kind, rule, scope)
    except (RuleError, OSError) as exc:
        raise CommandError(f"add_permission_rule: {exc}") from None
    return {"rule": saved, **permissions_state(session)}


@command("remove_permission_rule")
async def remove_permission_rule(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    kind, rule, scope = _rule_fields(cmd)
    session = server.session
    try:
        removed = session.permissions.host.remove_rule(session.cwd, kind, rule, scope)
    except (RuleError, OSError) as exc:
        raise CommandError(f"remove_permission_rule: {exc}") from None
    if not removed:
        raise CommandError(f"remove_permission_rule: no {kind} rule {rule!r} in the {scope} rules")
    return permissions_state(session)


# ---------------------------------------------------------------------------- rewind

CONFLICTS = ("cancel", "skip", "overwrite", "ask")


def _point_record(point: RewindPoint) -> dict[str, Any]:
    return {"entryId": point.entry_id, "kind": point.kind, "text": point.text, "timestamp": point.timestamp,
            "files": list(point.files)}


@command("get_rewind_points", "query")
def get_rewind_points(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    from ...runtime.safety.rewind import points

    return {"points": [_point_record(p) for p in points(server.session)]}


@command("rewind")
async def rewind(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    from ...runtime.safety.rewind import RewindError

    entry_id = _text(cmd, "entryId", required=False)
    scope = _field(cmd, "scope", str, "code, conversation or both", required=False) or "both"
    on_conflict = _field(cmd, "onConflict", str, "cancel, skip, overwrite or ask", required=False) or "cancel"
    if on_conflict not in CONFLICTS:
        raise CommandError(f"rewind: 'onConflict' must be one of {', '.join(CONFLICTS)}, not {on_conflict!r}")
    session = server.session
    if not session.is_idle():
        raise CommandError("rewind: the agent is working; send abort first (a rewind never runs under a turn)")

    async def ask(paths: list[str]) -> str | None:
        labels = {"Keep them, restore the other files": "skip", "Overwrite them": "overwrite", "Cancel": "cancel"}
        answer = await server.ui.select(f"Changed outside Wolli since the checkpoint: {', '.join(paths)}", list(labels))
        return labels.get(answer, "cancel") if isinstance(answer, str) else "cancel"

    try:
        result = await session.rewind(entry_id, scope=scope, on_conflict=on_conflict, ask=ask)
    except RewindError as exc:
        raise CommandError(f"rewind: {exc}") from None
    return {"targetId": result.point.entry_id, "scope": result.scope, "restored": result.restored,
            "removed": result.removed, "skipped": result.skipped, "lost": result.lost, "failed": result.failed,
            "editorText": result.editor_text, "cancelled": result.cancelled}
