"""One-shot CLI commands that need no session: ``--list-models`` and ``--export``."""

from __future__ import annotations

import os
import sys
from typing import Any, Protocol


class OneShotArgs(Protocol):
    """The parsed command line (``cli.main``'s arguments) as these commands read it."""

    @property
    def agent(self) -> str | None: ...
    @property
    def list_models(self) -> str | bool | None: ...
    @property
    def export(self) -> list[str] | None: ...
    @property
    def extensions(self) -> list[str]: ...


def _fmt_tokens(n: int) -> str:
    for size, unit in ((1_000_000, "M"), (1000, "K")):
        if n >= size:
            return f"{n / size:.1f}".removesuffix(".0") + unit
    return str(n)


def list_models(args: OneShotArgs) -> int:
    from ...ai.models import ModelRegistry

    registry = ModelRegistry()
    for error in getattr(registry, "load_errors", []):
        print(f"wolli: {error}", file=sys.stderr)
    models = registry.available()
    search = args.list_models if isinstance(args.list_models, str) else None
    if search:
        needle = search.lower()
        models = [m for m in models if needle in f"{m.provider}/{m.id} {m.name}".lower()]
    if not models:
        if search:
            print(f"No available model matches {search!r}.", file=sys.stderr)
        else:
            from ...runtime.host.agent_host import AgentHost

            print(AgentHost(args.agent).no_model_help(), file=sys.stderr)
        return 1
    rows = [("provider", "model", "context", "max out", "thinking", "images")]
    for m in sorted(models, key=lambda m: (m.provider, m.id)):
        rows.append(
            (m.provider, m.id, _fmt_tokens(m.context_window), _fmt_tokens(m.max_tokens),
             "yes" if m.reasoning else "no", "yes" if "image" in m.input else "no")
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
    return 0


def export_session(args: OneShotArgs) -> int:
    from pathlib import Path

    from ...session.export_html import export_session_html

    export = args.export
    if not export:  # the CLI calls this for --export only, which takes a session
        raise ValueError("--export needs a session file")
    source = export[0]
    target = export[1] if len(export) > 1 else None
    path = Path(source).expanduser()
    if not path.exists() and (source.endswith(".jsonl") or os.sep in source):
        print(f"wolli: no such session file: {source}", file=sys.stderr)
        return 1
    if not path.exists():
        try:
            from ...runtime.host.agent_host import AgentHost
            from ...session.manager import SessionManager

            host = AgentHost(args.agent)
            manager = SessionManager.open_by_id(source, session_dir=host.sessions_dir)
            path = Path(manager.get_session_file() or source)
        except Exception as exc:
            print(f"wolli: no session file or id {source!r}: {exc}", file=sys.stderr)
            return 1
    try:
        out = export_session_html(path, target)
    except Exception as exc:
        print(f"wolli: export failed: {exc}", file=sys.stderr)
        return 1
    print(str(out))
    return 0


def explain_resume(args: OneShotArgs) -> int:
    """``-r`` opens a session picker in the TUI; anywhere else say how to pick one."""
    from ...runtime.host.agent_host import AgentHost

    try:
        host = AgentHost(args.agent)
    except ValueError as exc:
        print(f"wolli: --agent: {exc}", file=sys.stderr)
        return 2
    print(
        "wolli: -r/--resume picks a session in the full-screen app, which is not available here.\n"
        "Resume one with --session ID (an id prefix is enough), or the newest with --continue (-c).",
        file=sys.stderr,
    )
    sessions = host.list_sessions(os.getcwd())
    if not sessions:
        print("There are no sessions in this directory yet.", file=sys.stderr)
        return 2
    print("Sessions in this directory (newest first):", file=sys.stderr)
    for info in sessions[:20]:
        label = info.name or (info.first_message or "").replace("\n", " ")[:60]
        print(f"  {info.id[:8]}  {info.modified:%Y-%m-%d %H:%M}  {label}", file=sys.stderr)
    return 2


def extension_options_help(args: OneShotArgs) -> str:
    """``wolli --help``'s part about the options extensions registered, by extension (the
    extensions are loaded for it, as a run would load them); "" when there are none."""
    from ...config.paths import agent_home
    from ...config.settings import Settings
    from ...extensions.loader import discover

    try:
        home = agent_home(args.agent)
    except ValueError:  # an invalid --agent: the run itself will say so
        return ""
    cwd = os.getcwd()
    configured = Settings(args.agent).get("extensions")
    configured = [str(p) for p in configured] if isinstance(configured, list) else []
    sources, _ = discover(home, configured, args.extensions, cwd=cwd)
    if not sources:  # nothing to load: --help stays as quick as without extensions
        return ""
    import asyncio

    from ...runtime.host.agent_host import AgentHost

    host = AgentHost(args.agent, mode="print")
    host.apply_handler_timeout()  # an async extension() that never returns must not hold --help
    host.extensions.configure(settings_paths=configured, cli_paths=args.extensions)
    for problem in asyncio.run(host.extensions.load(cwd)):
        print(f"wolli: {problem}", file=sys.stderr)
    by_owner: dict[str, list[Any]] = {}
    for flag in host.extensions.flags.values():
        by_owner.setdefault(flag.owner, []).append(flag)
    if not by_owner:
        return ""
    paths = {record.name: getattr(record.source, "label", "") for record in host.extensions.registry.records}
    lines = ["Extension options:"]
    for owner, flags in by_owner.items():
        lines.append(f"  {owner} ({paths.get(owner, '')})" if paths.get(owner) else f"  {owner}")
        for flag in sorted(flags, key=lambda f: f.name):
            usage = f"--{flag.name} VALUE" if flag.type == "string" else f"--{flag.name}, --no-{flag.name}"
            default = f" (default: {flag.default})" if flag.default not in (None, "", False) else ""
            text = f"{flag.description or ''}{default}".strip()
            lines.append(f"    {usage:<26} {text}".rstrip() if len(usage) < 26 else f"    {usage}\n    {'':<26} {text}")
    return "\n".join(lines) + "\n"
