"""Built-in commands about the safety net: /permissions (modes and rules), /plan.

``/permissions`` alone shows the mode and every rule with where it comes from, then offers
what can be done (change the mode, add or remove a rule, approve the project's shared allow
rules). With arguments it acts at once:

    /permissions plan                      the mode (default, accept-edits, plan, yolo)
    /permissions allow Bash(git diff:*)    a rule for this project (allow, ask or deny)
    /permissions deny Read(~/.ssh/**) user a rule for every project (user or global)
    /permissions remove allow Bash(git diff:*)

``/plan`` enters plan mode; in plan mode it goes back to the mode before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ....permissions.modes import DESCRIPTIONS, MODES, ModeError, next_mode, parse_mode
from ....permissions.rules import RULE_KINDS
from ....permissions.store import SCOPES, Scope
from .definition import BuiltinCommand, CommandContext

if TYPE_CHECKING:
    from ....runtime.live.live_session import LiveSession

_SAVED_SCOPES: tuple[Scope, ...] = ("project", "user", "global")
_SCOPE_HELP = {
    "project": "this project only (kept in your agent home)",
    "user": "every project (the agent's settings.json)",
    "global": "every agent (WOLLI_HOME/settings.json)",
}


def permissions_report(session: LiveSession) -> str:
    permissions = session.permissions
    loaded = permissions.host.loaded(session.cwd)
    lines = [f"Mode      {permissions.mode}: {DESCRIPTIONS[permissions.mode]}", ""]
    for kind in RULE_KINDS:
        rules = [r for r in loaded.rules.all if r.kind == kind]
        lines.append(f"{kind.capitalize()} rules ({len(rules)})")
        lines += [f"  {r.rule}    [{r.source}] {r.origin}" for r in rules] or ["  (none)"]
    if loaded.pending_shared:
        lines += ["", f"Waiting for your approval ({loaded.shared_file}):"]
        lines += [f"  allow {rule}" for rule in loaded.pending_shared]
        lines.append("  /permissions approve lets them count")
    if loaded.problems:
        lines += ["", "Problems:"] + [f"  {p}" for p in loaded.problems]
    lines += ["", "Deny rules win, then ask rules, then allow rules, then the mode (docs/permissions.md)."]
    return "\n".join(lines)


async def permissions(ctx: CommandContext, args: str) -> None:
    words = args.split(None, 1)
    if not words:
        await _menu(ctx)
        return
    head, rest = words[0].lower(), (words[1] if len(words) > 1 else "").strip()
    if head in ("allow", "ask", "deny"):
        await _add(ctx, head, rest)
    elif head in ("remove", "rm", "delete"):
        kind, _, rule = rest.partition(" ")
        await _remove(ctx, kind.lower(), rule.strip())
    elif head == "approve":
        approved = ctx.session.permissions.host.store(ctx.session.cwd).approve_shared()
        ctx.session.permissions.host.forget()
        ctx.front.notify(f"Approved {len(approved)} allow rule{'s' if len(approved) != 1 else ''} of the project file.")
    elif head in ("mode", "set"):
        await _set_mode(ctx, rest)
    else:
        await _set_mode(ctx, args.strip())


async def _set_mode(ctx: CommandContext, name: str) -> None:
    try:
        mode = parse_mode(name)
    except ModeError as exc:
        raise RuntimeError(f"{exc} (or allow/ask/deny RULE, remove KIND RULE, approve)") from None
    await ctx.session.permissions.set_mode(mode, "user")
    if not ctx.front.shows_mode_changes:
        ctx.front.notify(f"Permission mode: {mode} ({DESCRIPTIONS[mode]})")


async def _add(ctx: CommandContext, kind: str, text: str) -> None:
    *rule_words, last = text.split(" ") if text else [""]
    scope: Scope = "project"
    saved_scope = next((s for s in _SAVED_SCOPES if s == last), None)
    if saved_scope is not None and rule_words:
        scope, text = saved_scope, " ".join(rule_words)
    if not text.strip():
        text = await ctx.front.input(f"The {kind} rule (e.g. Bash(git diff:*), Edit(src/**), Read(~/.ssh/**))") or ""
        if not text.strip():
            return
    session = ctx.session
    saved = session.permissions.host.add_rule(session.cwd, kind, text.strip(), scope)
    ctx.front.notify(f"Saved {kind} rule {saved} for {_SCOPE_HELP[scope]}.")


async def _remove(ctx: CommandContext, kind: str, text: str) -> None:
    session = ctx.session
    loaded = session.permissions.host.loaded(session.cwd)
    candidates = [r for r in loaded.rules.all if r.source in SCOPES and (not kind or r.kind == kind)
                  and (not text or str(r.rule) == text)]
    if not candidates:
        ctx.front.notify(f"No saved {kind or ''} rule {text!r} to remove (rules from flags and the project file stay)."
                         .replace("  ", " "), "warning")
        return
    chosen = candidates[0]
    if len(candidates) > 1:
        labels = [f"{r.kind} {r.rule}  [{r.source}]" for r in candidates]
        picked = await ctx.front.select("Remove which rule?", labels)
        if picked is None:
            return
        chosen = candidates[labels.index(picked)]
    session.permissions.host.remove_rule(session.cwd, chosen.kind, str(chosen.rule), chosen.source)  # type: ignore[arg-type]
    ctx.front.notify(f"Removed {chosen.kind} rule {chosen.rule} ({chosen.source}).")


async def _menu(ctx: CommandContext) -> None:
    session = ctx.session
    ctx.front.show_text("Permissions", permissions_report(session))
    actions = ["Change the mode", "Add an allow rule", "Add an ask rule", "Add a deny rule", "Remove a rule"]
    if session.permissions.host.loaded(session.cwd).pending_shared:
        actions.append("Approve the project file's allow rules")
    picked = await ctx.front.select("Permissions: what now?", actions)
    if picked is None:
        return
    if picked == actions[0]:
        labels = [f"{m}: {DESCRIPTIONS[m]}" for m in MODES]
        mode = await ctx.front.select("Permission mode", labels)
        if mode is not None:
            await _set_mode(ctx, mode.split(":", 1)[0])
    elif picked.startswith("Add"):
        kind = picked.split()[2]
        text = await ctx.front.input(f"The {kind} rule (e.g. Bash(git diff:*), Edit(src/**), Read(~/.ssh/**))")
        if not text or not text.strip():
            return
        scopes = [f"{s}: {_SCOPE_HELP[s]}" for s in _SAVED_SCOPES]
        where = await ctx.front.select("Save it for", scopes)
        if where is not None:
            await _add(ctx, kind, f"{text.strip()} {where.split(':', 1)[0]}")
    elif picked == "Remove a rule":
        await _remove(ctx, "", "")
    else:
        await permissions(ctx, "approve")


async def cycle_mode(session: LiveSession) -> str:
    """The key's next mode: default -> accept-edits -> plan (-> yolo when the session was
    started in yolo by a flag or a setting) -> default."""
    permissions = session.permissions
    host = permissions.host
    with_yolo = permissions.mode == "yolo" or host.cli_mode == "yolo" or \
        host.loaded(session.cwd).default_mode == "yolo"
    return str(await permissions.set_mode(next_mode(permissions.mode, with_yolo=with_yolo), "user"))


async def plan(ctx: CommandContext, args: str) -> None:
    """Plan mode on; in plan mode, back to the mode the session had before."""
    session = ctx.session
    current = session.permissions.mode
    await _set_mode(ctx, (session.permissions.before_plan or "default") if current == "plan" else "plan")


def complete_permissions(ctx: CommandContext, prefix: str) -> list[dict[str, Any]]:
    described: dict[str, str] = {**DESCRIPTIONS, "allow": "add an allow rule", "ask": "add an ask rule",
                                 "deny": "add a deny rule", "remove": "remove a saved rule",
                                 "approve": "let the project file's allow rules count"}
    return [{"value": w, "label": w, "description": d} for w, d in described.items()
            if w.startswith(prefix.strip().lower())]


COMMANDS = [
    BuiltinCommand("permissions", "permission mode and rules (allow, ask, deny)", permissions, category="Safety",
                   usage="[mode | allow|ask|deny RULE [scope] | remove KIND RULE | approve]",
                   complete=complete_permissions),
    BuiltinCommand("plan", "plan mode: read and plan, change nothing (again: leave it)", plan, category="Safety"),
]
