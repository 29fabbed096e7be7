"""Built-in slash commands of the attached app that change the session on the server:
``/fork``, ``/clone``, ``/rewind``, ``/export``, ``/plan``, ``/permissions``, ``/reload``,
``/packages`` and the others in :data:`SESSION_COMMANDS`, and ``/hotkeys`` with the server's
extension shortcuts.

Each asks the same questions as its standalone twin (``interactive/commands/``, whose labels
and summaries it reuses) and does the work with the server's RPC commands
(docs/server.md), so the user sees one behaviour wherever the session lives.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ...ai.types import Model
from ...extensions.registry import Shortcut
from ...permissions.modes import MODES
from ...permissions.rules import RULE_KINDS
from ...permissions.store import SCOPES
from ..interactive.commands.app import report_reload
from ..interactive.commands.front import Front
from ..interactive.commands.rewind import SCOPE_CHOICES, point_label
from .link import Record

# The built-ins this module runs, with what they do.
SESSION_COMMANDS = ("fork", "clone", "rewind", "export", "plan", "permissions", "reload", "hotkeys", "mcp", "extensions",
                    "agents", "tree", "settings", "login", "logout", "packages")
# Installing a package can take minutes (a build, a download).
PACKAGES_TIMEOUT = 1800.0


class RemoteSessionHost(Protocol):
    """What the commands need of the attached runtime."""

    @property
    def cwd(self) -> str: ...

    async def call(self, command: Record, timeout: float | None = 60.0) -> object: ...

    def send(self, command: Record) -> None:
        """A command whose answer nobody waits for (a failure shows as a notice)."""

    async def moved(self) -> None:
        """The server moved this client to another session: show that one."""

    async def refresh(self) -> None:
        """Ask again for what the footer, the command list and the shortcuts show."""

    @property
    def shortcuts(self) -> dict[str, Shortcut]: ...

    @property
    def theme_names(self) -> list[str]:
        """The themes this app can draw (the theme setting's choices)."""

    @property
    def model(self) -> Model | None:
        """The session's model as this client last heard."""


async def run(name: str, args: str, host: RemoteSessionHost, front: Front) -> None:
    if name == "fork":
        await fork(host, front)
    elif name == "clone":
        await host.call({"type": "clone"})
        await host.moved()
        front.notify("Cloned into a new session (the same conversation, on its own from here).")
    elif name == "rewind":
        await rewind(host, front)
    elif name == "export":
        data = await host.call({"type": "export_html", **({"outputPath": args.strip()} if args.strip() else {})})
        front.notify(f"Exported to {_field(data, 'path')} (on the server's machine)")
    elif name == "plan":
        await plan(host, front)
    elif name == "permissions":
        await permissions(args, host, front)
    elif name == "hotkeys":  # this app's keys, and the shortcuts of the server's extensions
        from ..interactive.hotkeys import hotkeys_report

        front.show_text("Keys", hotkeys_report(dict(host.shortcuts)))
    elif name == "mcp":  # the server's MCP servers, through the same menu as standalone
        from ..interactive.commands.mcp import mcp_command

        servers = await host.call({"type": "get_mcp_servers"})
        known = servers if isinstance(servers, dict) else {}
        configured = bool(_records(known, "servers")) or bool(known.get("projectPending"))
        await mcp_command(front, RemoteMcp(host, known) if configured else None, args)
    elif name == "login":
        await login(args, host, front)
    elif name == "logout":
        await logout(args, host, front)
    elif name == "settings":
        await settings(host, front)
    elif name == "tree":
        await tree(host, front)
    elif name == "agents":
        await agents(args, host, front)
    elif name == "extensions":
        await extensions(args, host, front)
    elif name == "packages":  # run by the server (its machine loads them); notices and dialogs come here
        await host.call({"type": "packages", "args": args}, timeout=PACKAGES_TIMEOUT)
        await host.refresh()
    elif name == "reload":  # the server's extensions, settings and models: every session of it
        data = await host.call({"type": "reload"})
        report_reload(front, _records(data, "extensions"))
        await host.refresh()


async def extensions(args: str, host: RemoteSessionHost, front: Front) -> None:
    """The server's extensions; ``enable|disable NAME`` switches one there (and reloads)."""
    from ..interactive.commands.app import extensions_report

    words = args.split()
    if len(words) == 2 and words[0] in ("enable", "disable"):
        data = await host.call({"type": "set_extension_enabled", "name": words[1], "enabled": words[0] == "enable"})
        problems = [f"{i['name']}: {e}" for i in _records(data, "extensions") for e in _list(i.get("errors"))]
        for problem in problems:
            front.notify(problem, "error")
        front.notify(f"{words[1]} is {words[0]}d." + (" (problems above)" if problems else ""))
        await host.refresh()
        return
    front.show_text("Extensions", extensions_report(_records(await host.call({"type": "get_extensions"}), "extensions")))


async def login(args: str, host: RemoteSessionHost, front: Front) -> None:
    """An API key for the server's auth.json; with no model yet (or that provider's), one of
    the provider's models is chosen, as standalone."""
    from ...ai.env_keys import env_var_names

    data = await host.call({"type": "get_login_providers"})
    providers = _list(data.get("providers") if isinstance(data, dict) else None)
    provider = args.strip() or await front.select("Log in to which provider?", providers)
    if not provider:
        return
    if provider not in providers:
        raise ValueError(f"unknown provider {provider!r} (see /login)")
    env = " or ".join(env_var_names(provider))
    key = await front.input(f"API key for {provider} (saved in the server's auth.json; {env} works too)", "sk-…",
                            secret=True)
    if not key or not key.strip():
        return
    saved = await host.call({"type": "set_api_key", "provider": provider, "key": key.strip()})
    front.notify(f"Saved the key for {provider} in {_field(saved, 'path')}.")
    current = host.model
    if current is None or current.provider == provider:
        found = await host.call({"type": "get_available_models"})
        models = [Model.model_validate(m) for m in _records(found, "models")]
        model = current if current is not None else next((m for m in models if m.provider == provider), None)
        if model is not None:
            await host.call({"type": "set_model", "provider": model.provider, "modelId": model.id})
            front.notify(f"Model: {model.provider}/{model.id}. Type a message to start.")


async def logout(args: str, host: RemoteSessionHost, front: Front) -> None:
    data = await host.call({"type": "get_login_providers"})
    stored = _list(data.get("stored") if isinstance(data, dict) else None)
    if not stored:
        front.notify(f"No keys are stored in {_field(data, 'path')} (keys from environment variables stay).")
        return
    provider = args.strip() or await front.select("Remove the stored key of which provider?", stored)
    if not provider:
        return
    removed = await host.call({"type": "remove_api_key", "provider": provider})
    front.notify(f"Removed the key for {provider} from {_field(removed, 'path')}.")


async def settings(host: RemoteSessionHost, front: Front) -> None:
    """The same form, on the server's agent settings; what applies to this app applies here."""
    from ..interactive.settings_form import setting_fields

    data = await host.call({"type": "get_settings"})
    values = data.get("values") if isinstance(data, dict) else None
    changes = await front.edit_settings(setting_fields(host.theme_names), values if isinstance(values, dict) else {})
    if not changes:
        return
    saved = await host.call({"type": "set_settings", "values": changes})
    front.settings_changed(changes)
    front.notify(f"Saved {', '.join(sorted(changes))} in {_field(saved, 'path')}.")


async def tree(host: RemoteSessionHost, front: Front) -> None:
    """The server's session tree in the same picker, the same questions, the move there."""
    from ..interactive.commands.session import tree_flow
    from ..interactive.tree_source import RecordTree

    data = await host.call({"type": "get_tree"})

    def label(entry_id: str, text: str | None) -> None:
        host.send({"type": "set_entry_label", "entryId": entry_id, "label": text})

    async def navigate(target: str | None, *, summarize: bool = False, custom_instructions: str | None = None) -> bool:
        command: Record = {"type": "navigate_tree", "targetId": target, "summarize": summarize}
        if custom_instructions is not None:
            command["customInstructions"] = custom_instructions
        answer = await host.call(command, timeout=None)  # a summary is a model call
        return bool(answer.get("moved")) if isinstance(answer, dict) else False

    await tree_flow(front, RecordTree(data if isinstance(data, dict) else {}, on_label=label), navigate)


async def agents(args: str, host: RemoteSessionHost, front: Front) -> None:
    """The server's subagents for this session's folder; ``approve|deny`` its project files."""
    from ..interactive.commands.agents import ACTIONS, approval_said, report

    action = args.strip() or "list"
    if action not in ACTIONS:
        front.notify(f"/agents {action}: unknown; use one of {', '.join(ACTIONS)}", "warning")
    elif action == "list":
        data = await host.call({"type": "get_subagents"})
        front.show_text("Subagents", report(data if isinstance(data, dict) else {"subagents": [], "errors": []}))
    else:
        data = await host.call({"type": "approve_subagents", "approve": action == "approve"})
        front.notify(approval_said(_list(data.get("names") if isinstance(data, dict) else None), action == "approve"))


async def fork(host: RemoteSessionHost, front: Front) -> None:
    data = await host.call({"type": "get_fork_messages"})
    found = _records(data, "messages")
    if not found:
        front.notify("Nothing to fork yet: this session has no messages of yours.", "warning")
        return
    labels = [f"{i}. {' '.join(str(m.get('text', '')).split())[:100] or '(image)'}" for i, m in enumerate(found, 1)]
    chosen = await front.select("Fork from which message? (it goes back into the editor)", labels[::-1])
    if chosen is None:
        return
    answer = await host.call({"type": "fork", "entryId": found[labels.index(chosen)]["entryId"]})
    await host.moved()
    front.set_editor_text(_field(answer, "text"))
    front.notify("Forked into a new session.")


async def rewind(host: RemoteSessionHost, front: Front) -> None:
    from ...runtime.safety.rewind import RewindResult
    from ...session.checkpoints.plan import RewindPoint

    data = await host.call({"type": "get_rewind_points"})
    available = [RewindPoint(entry_id=str(p["entryId"]), kind="rewind" if p.get("kind") == "rewind" else "message",
                             text=str(p.get("text", "")), timestamp=str(p.get("timestamp", "")),
                             files=tuple(str(f) for f in _list(p.get("files"))), leaf_after=None)
                 for p in _records(data, "points")]
    if not available:
        front.notify("Nothing to rewind to yet: this session has no messages of yours.", "warning")
        return
    labels = [point_label(p, host.cwd) for p in available]
    chosen = await front.select("Rewind to before which message? (the newest first)", labels)
    if chosen is None:
        return
    point = available[labels.index(chosen)]
    scopes = dict(SCOPE_CHOICES) if point.files else {"Conversation (no file was changed since)": "conversation"}
    picked = await front.select("Restore what?", list(scopes))
    if picked is None:
        return
    # files changed outside Wolli since: the server asks with a dialog, which opens here too
    done = await host.call({"type": "rewind", "entryId": point.entry_id, "scope": scopes[picked], "onConflict": "ask"})
    record = done if isinstance(done, dict) else {}
    result = RewindResult(point=point, scope=str(record.get("scope", scopes[picked])),
                          restored=_list(record.get("restored")), removed=_list(record.get("removed")),
                          skipped=_list(record.get("skipped")), lost=_dict(record.get("lost")),
                          failed=_dict(record.get("failed")), cancelled=bool(record.get("cancelled")))
    front.notify(result.summary(), "warning" if result.lost or result.failed else "info")
    text = record.get("editorText")
    if isinstance(text, str) and text:
        front.set_editor_text(text)


async def plan(host: RemoteSessionHost, front: Front) -> None:
    """Plan mode on; in plan mode, back to the mode the session had before (the server keeps it)."""
    state = await host.call({"type": "get_permissions"})
    current = _field(state, "mode")
    before = _field(state, "beforePlan") or "default"
    mode = await host.call({"type": "set_permission_mode", "mode": before if current == "plan" else "plan"})
    front.notify(f"Permission mode: {_field(mode, 'mode')}")


async def permissions(args: str, host: RemoteSessionHost, front: Front) -> None:
    """No words: the mode and the rules. ``MODE``; ``allow|ask|deny RULE [scope]``;
    ``remove KIND RULE [scope]`` (as the standalone command takes them)."""
    words = args.split()
    if not words:
        state = await host.call({"type": "get_permissions"})
        front.show_text("Permissions", permissions_text(state))
        return
    first = words[0].lower()
    if first in MODES and len(words) == 1:
        mode = await host.call({"type": "set_permission_mode", "mode": first})
        front.notify(f"Permission mode: {_field(mode, 'mode')}")
        return
    remove = first == "remove"
    kind = (words[1] if remove and len(words) > 1 else first).lower()
    rule_words = words[2:] if remove else words[1:]
    if kind not in RULE_KINDS or not rule_words:
        front.notify(f"Usage: /permissions [MODE | allow|ask|deny RULE [{'|'.join(SCOPES)}] | "
                     "remove KIND RULE [scope]]", "warning")
        return
    scope = rule_words.pop() if len(rule_words) > 1 and rule_words[-1] in SCOPES else "project"
    rule = " ".join(rule_words)
    if remove:
        await host.call({"type": "remove_permission_rule", "kind": kind, "rule": rule, "scope": scope})
        front.notify(f"Removed the {kind} rule {rule} ({scope}).")
    else:
        saved = await host.call({"type": "add_permission_rule", "kind": kind, "rule": rule, "scope": scope})
        front.notify(f"Added the {kind} rule {_field(saved, 'rule') or rule} ({scope}).")


def permissions_text(state: object) -> str:
    record = state if isinstance(state, dict) else {}
    lines = [f"Mode: {record.get('mode')}", ""]
    rules = [r for r in record.get("rules") or [] if isinstance(r, dict)]
    for kind in RULE_KINDS:
        mine = [r for r in rules if r.get("kind") == kind]
        lines.append(f"{kind}: " + (", ".join(f"{r.get('rule')} ({r.get('source')})" for r in mine) or "none"))
    for problem in record.get("problems") or []:
        lines.append(f"problem: {problem}")
    lines += ["", "/permissions MODE, /permissions allow|ask|deny RULE [scope], /permissions remove KIND RULE [scope]"]
    return "\n".join(lines)


class RemoteMcp:
    """``/mcp``'s control over the server's MCP servers (``get_mcp_servers`` and friends)."""

    def __init__(self, host: RemoteSessionHost, servers: dict[str, object]) -> None:
        self.host = host
        self._known = servers  # get_mcp_servers as the command found it: one menu, one query

    async def _servers(self) -> dict[str, object]:
        return self._known

    async def statuses(self) -> list[dict[str, Any]]:
        return _records(await self._servers(), "servers")

    async def report(self) -> str:
        from ...mcp.manager import report

        data = await self._servers()
        search = data.get("toolSearch")
        if isinstance(search, dict):
            search = {**search, "state": "on" if search.get("active") else "off"}
        text = report(_records(data, "servers"), search=search if isinstance(search, dict) else None)
        if data.get("projectPending"):
            text += "\n\nThe project's .mcp.json is not approved: /mcp approve starts its servers."
        return text

    async def project_pending(self) -> bool:
        return bool((await self._servers()).get("projectPending"))

    async def approve(self) -> str:
        return _field(await self.host.call({"type": "mcp_approve_project"}), "message")

    async def set_enabled(self, server: str, tool: str | None, enabled: bool) -> None:
        await self.host.call({"type": "mcp_set_enabled", "server": server, "enabled": enabled,
                              **({"tool": tool} if tool else {})})

    async def reconnect(self, server: str) -> None:
        await self.host.call({"type": "mcp_reconnect", "server": server})

    async def log(self, server: str) -> str:
        return _field(await self.host.call({"type": "mcp_log", "server": server}), "text")

    async def login(self, server: str, show: Callable[[str], None]) -> tuple[str, bool]:
        return ("log in from a standalone wolli on the server's machine (the login's browser page "
                "answers to that process)", False)


def remote_shortcuts(data: object) -> dict[str, Shortcut]:
    """``get_shortcuts`` as shortcuts whose handlers run on the server (``run_shortcut``):
    calling one here is a mistake the attached runtime never makes."""
    def on_the_server(ctx: object) -> None:
        raise RuntimeError("this shortcut runs on the server (run_shortcut)")

    return {str(r["key"]): Shortcut(key=str(r["key"]), handler=on_the_server, description=str(r.get("description") or ""),
                                    owner=str(r.get("extension") or "extension"))
            for r in _records(data, "shortcuts") if r.get("key")}


def _records(data: object, key: str) -> list[dict[str, object]]:
    found = data.get(key) if isinstance(data, dict) else None
    return [r for r in found or [] if isinstance(r, dict)]


def _list(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def _dict(value: object) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


def _field(data: object, key: str) -> str:
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, str) else ""
