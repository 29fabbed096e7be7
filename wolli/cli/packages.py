"""``wolli install|list|remove|update|import``: packages from the command line (docs/packages.md).

Installing runs third-party code, so ``install`` and ``update`` say what they will install
and from where and ask first (``--yes`` skips the question; without a terminal it is
required). After a change the agent's extensions are loaded once, as a start would, so a
package that does not import is reported here with its file and line.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from ..base.json_input import parse_json
from ..base.text_safety import terminal_safe

USAGE_TEXT = """\
usage: wolli install [SOURCE] [--yes] [--index-url URL] [--agent NAME]
       wolli list [--json] [--agent NAME]
       wolli remove NAME [--agent NAME]
       wolli update [NAME] [--yes] [--agent NAME]
       wolli import claude-settings [FILE] [--agent NAME]"""


class _Usage(Exception):
    pass


def _parse(argv: list[str]) -> tuple[list[str], dict[str, str | bool]]:
    words: list[str] = []
    options: dict[str, str | bool] = {}
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        name, eq, inline = arg.partition("=")
        if name in ("--agent", "--index-url"):
            if not eq:
                if i >= len(argv):
                    raise _Usage(f"{name} needs a value")
                inline, i = argv[i], i + 1
            options[name[2:]] = inline
        elif arg in ("-y", "--yes"):
            options["yes"] = True
        elif arg == "--json":
            options["json"] = True
        elif arg in ("-h", "--help"):
            options["help"] = True
        elif arg.startswith("-") and arg != "-":
            raise _Usage(f"unknown option {arg}")
        else:
            words.append(arg)
    return words, options


def _say(text: str) -> None:
    print(terminal_safe(text), flush=True)


def _warn(text: str) -> None:
    print(f"wolli: {terminal_safe(text)}", file=sys.stderr, flush=True)


def _confirm(yes: bool):  # type: ignore[no-untyped-def]
    def ask(plan: str) -> bool:
        _say(plan)
        if yes:
            return True
        if not sys.stdin.isatty():
            _warn("not installed: no terminal to confirm on; add --yes to install without a question")
            return False
        try:
            answer = input("Proceed? [y/N] ")
        except EOFError:
            return False
        return answer.strip().lower() in ("y", "yes")

    return ask


def run_package_command(action: str, argv: list[str]) -> int:
    try:
        words, options = _parse(argv)
    except _Usage as exc:
        print(f"wolli: {exc}\n{USAGE_TEXT}", file=sys.stderr)
        return 2
    if options.get("help"):
        print(USAGE_TEXT)
        return 0
    from ..config import paths
    from ..config.settings import Settings
    from ..packages.manager import PackageError, PackageManager

    agent = options.get("agent")
    try:
        name = paths.agent_name(agent if isinstance(agent, str) else None)
    except ValueError as exc:
        _warn(f"--agent: {exc}")
        return 2
    home = paths.agent_home(name)
    settings = Settings(name)
    manager = PackageManager(home, settings)  # the installer speaks only when it fails
    try:
        if action == "install":
            if len(words) > 1:
                raise _Usage("wolli install takes one source")
            if not words:
                installed = manager.install_locked()
                _say(f"Installed {len(installed)} distribution(s) and plugin(s) from the lock: {', '.join(installed)}")
            else:
                index = options.get("index-url")
                result = manager.install(words[0], cwd=os.getcwd(), index_url=index if isinstance(index, str) else None,
                                         confirm=_confirm(bool(options.get("yes"))))
                _report_install(result)
            return _check_load(name)
        if action == "list":
            return _list(manager, bool(options.get("json")))
        if action == "remove":
            if len(words) != 1:
                raise _Usage("wolli remove takes one package name")
            record = manager.remove(words[0])
            _say(f"Removed {record.name}.")
            return 0
        if action == "update":
            if len(words) > 1:
                raise _Usage("wolli update takes at most one package name")
            targets = [manager.find(words[0])] if words else manager.records()
            if not targets:
                _say("No packages are installed.")
                return 0
            plan = "Update " + ", ".join(f"{r.name} (from {r.source})" for r in targets)
            if not _confirm(bool(options.get("yes")))(plan + "\nThis runs third-party code with your permissions."):
                return 1
            for result in manager.update(words[0] if words else None):
                _report_install(result)
            return _check_load(name)
        if action == "import":
            return _import(words, settings, home)
    except _Usage as exc:
        print(f"wolli: {exc}\n{USAGE_TEXT}", file=sys.stderr)
        return 2
    except (PackageError, ValueError, OSError) as exc:  # ValueError: a settings file that cannot be written
        _warn(str(exc))
        return 1
    except KeyboardInterrupt:
        return 130
    return 2


def _report_install(result) -> None:  # type: ignore[no-untyped-def]
    record = result.record
    what = "plugin" if record.kind == "claude-plugin" else "package"
    change = (f" (was {result.previous_version})" if result.previous_version and result.previous_version != record.version
              else "")
    _say(f"Installed {what} {record.name} {record.version or ''}{change}".rstrip())
    for group, names in result.declares.items():
        _say(f"  {group}: {', '.join(names)}")
    for warning in result.warnings:
        _warn(warning)


def _list(manager, as_json: bool) -> int:  # type: ignore[no-untyped-def]
    records = manager.records()
    if as_json:
        print(json.dumps({"packages": [r.to_json() for r in records]}, indent=2))
        return 0
    if not records:
        _say("No packages are installed (wolli install SOURCE adds one).")
        return 0
    for record in records:
        state = "" if record.enabled else " (disabled)"
        kind = "Claude Code plugin" if record.kind == "claude-plugin" else "package"
        _say(f"{record.name} {record.version or ''}  {kind} from {record.source}{state}")
    return 0


def _import(words: list[str], settings, home: Path) -> int:  # type: ignore[no-untyped-def]
    if not words or words[0] != "claude-settings" or len(words) > 2:
        raise _Usage("wolli import claude-settings [FILE] (default ~/.claude/settings.json)")
    from ..packages.claude_hooks import read_hooks_file

    path = Path(words[1]).expanduser() if len(words) == 2 else Path.home() / ".claude" / "settings.json"
    hooks, problems = read_hooks_file(path)
    for problem in problems:
        _warn(problem)
    if not hooks:
        if not problems:  # else they said why (no such file, bad JSON): one line is enough
            _warn(f"{path}: no command hooks to import")
        return 1
    data = parse_json(path.read_text("utf-8"))
    settings.update({"claudeHooks": data["hooks"]})
    events = sorted({h.event for h in hooks})
    _say(f"Imported {len(hooks)} hook(s) ({', '.join(events)}) from {path} into {home / 'settings.json'} (claudeHooks).")
    return 0


def _check_load(agent: str) -> int:
    """Load the agent's extensions once, as a start does; report what failed (the agent
    starts without it)."""
    from ..runtime.startup.request import StartupRequest
    from ..runtime.startup.start import make_host, settings_paths

    async def load() -> list[str]:
        host, _ = make_host(StartupRequest(mode="print", agent=agent))
        host.extensions.configure(settings_paths=settings_paths(host.settings.get("extensions")),
                                  tool_settings_paths=settings_paths(host.settings.get("customTools")))
        try:
            return await host.extensions.load(os.getcwd())
        finally:
            await host.shutdown()

    problems = asyncio.run(load())
    for problem in problems:
        _warn(problem)
    if problems:
        _warn("the agent starts without what failed above")
    return 0
