"""Loading, running and reloading the extensions of one host.

:class:`ExtensionManager` imports every extension :mod:`.loader` finds, gives each its own
:class:`~.api.ExtensionAPI`, and awaits its ``extension(wolli)`` factory (sync or async)
before the first ``session_start``. A module that does not import, has no ``extension``
function, or whose factory raises is reported as ``file:line: ...`` and rolled back (its
handlers and registrations removed); the others load.

``reload()`` forgets every imported module (helpers of folder extensions too), clears the
registrations and loads everything again from disk. When the new version of an extension
fails (it does not import, or its ``extension()`` raises) but the previous one had loaded,
what the new one registered is taken back and the previous module is set up again, so a
typo saved mid-edit does not switch a working extension off; the error says so.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

from ..packages.active import InstalledPackages, load_installed
from .api import ExtensionAPI, as_tool
from .api_services import EventBus
from .hooks import HookDefinition, discover_hooks
from .host import ContextView, ExtensionHost
from .loader import (
    ExtensionLoadError,
    ExtensionSource,
    describe_failure,
    discover,
    forget,
    import_source,
    package_entry_points,
)
from .registry import ExtensionRecord, ExtensionRegistry
from .tool_factories import (
    RESERVED_NAMES,
    START_REASONS,
    TOOL_ENTRY_POINT_GROUP,
    ToolContext,
    ToolFactoryAPI,
    ToolSessionEvent,
    discover_factories,
    split_on_session,
    tools_from_factory_result,
    with_tool_context,
)


class _SessionEnded(Protocol):
    """A ``session_shutdown`` event, as tool factories' ``on_session`` reads it."""

    @property
    def reason(self) -> str: ...


class _SessionStarted(_SessionEnded, Protocol):
    """A ``session_start`` event (its reason and the file of the session it replaced)."""

    @property
    def previous_session_file(self) -> str | None: ...

class ExtensionManager:
    def __init__(self, host: ExtensionHost) -> None:
        self.host = host
        self.bus = EventBus(on_error=self._bus_error)
        self.registry = ExtensionRegistry(self.bus)
        self.registry.on_warning = lambda record, text: self._report(f"extension {record.name}: {text}")
        # Where extensions come from (kept for reload).
        self.settings_paths: list[str] = []
        self.cli_paths: list[str] = []
        # Tool factories: settings.json ``customTools`` and ``--tool PATH``.
        self.tool_settings_paths: list[str] = []
        self.tool_cli_paths: list[str] = []
        self.packages = True
        self.enabled = True
        # Claude Code settings files whose ``hooks`` run (``--claude-settings``).
        self.claude_settings_files: list[str] = []
        # What installed packages bring (read at every load; docs/packages.md).
        self.installed = InstalledPackages()
        # Problems in load order, as one line each ("<file>:<line>: ..."); the modes print them.
        self.errors: list[str] = []
        # Called with each new problem line (a TUI notice, a json event); set by the front end.
        self.on_error: Callable[[str], None] | None = None
        self._modules: dict[Path | str, ModuleType] = {}  # source key -> last module that loaded

    # ------------------------------------------------------------------ views the host reads

    @property
    def tools(self) -> list[Any]:
        return self.registry.tools

    @property
    def commands(self) -> dict[str, Any]:
        return self.registry.commands

    @property
    def flags(self) -> dict[str, Any]:
        return self.registry.flags

    def set_flag_values(self, values: dict[str, Any]) -> None:
        self.registry.flag_values.update(values)

    def name_of(self, owner: str) -> str:
        """The extension's name for an owner label (a file path, as handler errors name it)."""
        for record in self.registry.records:
            if record.owner == owner or record.name == owner:
                return record.name
        return owner

    def owner_of(self, code: object) -> str:
        """The name of the extension whose module defined ``code`` (a function, lambda, class,
        bound method or callable object, or a ``functools.partial`` of one): what a UI
        factory's failure is reported under. ``"extension"`` when no loaded extension's
        module (or a submodule of it) defined it."""
        target = getattr(code, "func", code)
        module = getattr(target, "__module__", None)
        if isinstance(module, str):
            for record in self.registry.records:
                name = record.module_name
                if name and (module == name or module.startswith(name + ".")):
                    return record.name
        return "extension"

    def infos(self) -> list[dict[str, Any]]:
        """One row per extension for ``/extensions``: what it registered and what went wrong."""
        handlers = self.host.handlers
        return [{**record.info(), "switched_off": handlers.switched_off(record.owner)}
                for record in self.registry.records]

    # ------------------------------------------------------------------ loading

    def configure(
        self, *, settings_paths: list[str] | None = None, cli_paths: list[str] | None = None,
        tool_settings_paths: list[str] | None = None, tool_cli_paths: list[str] | None = None,
        packages: bool = True, enabled: bool = True, claude_settings_files: list[str] | None = None,
    ) -> None:
        self.settings_paths = list(settings_paths or [])
        self.cli_paths = list(cli_paths or [])
        self.tool_settings_paths = list(tool_settings_paths or [])
        self.tool_cli_paths = list(tool_cli_paths or [])
        self.packages = packages
        self.enabled = enabled
        self.claude_settings_files = list(claude_settings_files or [])

    async def load(self, cwd: str = ".") -> list[str]:
        """Load every extension; returns the problems found (also kept in ``errors``)."""
        return await self._load_all(cwd, reloading=False)

    async def reload(self, cwd: str = ".") -> list[str]:
        """Forget every registration and module, then load everything again from disk."""
        for record in self.registry.records:
            self.host.handlers.remove_owner(record.owner)
            if record.module_name:
                forget(record.module_name)
        for name in [p for r in self.registry.records for p in r.providers]:
            self.host.model_registry.unregister_provider(name)
        self.registry.clear()
        self.bus.clear()
        return await self._load_all(cwd, reloading=True)

    async def _load_all(self, cwd: str, *, reloading: bool) -> list[str]:
        """Extensions in load order, then hooks, then tool factories (docs/extensions.md)."""
        self.errors = []
        if not self.enabled:
            self.installed = InstalledPackages()
            return []
        self.installed = load_installed(self.host.home, self.host.settings.get("packages")) if self.packages \
            else InstalledPackages()
        for problem in self.installed.problems:
            self._report(problem)
        skip = self.installed.skips
        sources, problems = discover(
            self.host.home, self.settings_paths, self.cli_paths, cwd=cwd, packages=self.packages, skip=skip
        )
        for problem in problems:
            self._report(problem)
        for rank, source in enumerate(sources):
            await self._load_one(source, rank, reloading=reloading)
        self._load_hooks(len(sources))
        await self._load_tool_factories(cwd, len(self.registry.records))
        self._load_claude_hooks(len(self.registry.records))
        return list(self.errors)

    def _disabled_names(self) -> set[str]:
        value = self.host.settings.get("disabledExtensions")
        return {str(v) for v in value} if isinstance(value, list) else set()

    def _load_claude_hooks(self, first_rank: int) -> None:
        """Claude Code command hooks: each plugin's, settings ``claudeHooks``, ``--claude-settings``."""
        groups: list[tuple[str, Path, str | None, list[Any]]] = []
        for plugin in self.installed.plugins:
            if plugin.hooks:
                groups.append((f"claude:{plugin.name}", plugin.root, plugin.name, plugin.hooks))
        settings_file = self.host.home / "settings.json"
        configured = self.host.settings.get("claudeHooks")
        if not groups and configured in (None, {}) and not self.claude_settings_files:
            return  # no hooks anywhere: their parser and runner stay unloaded
        from ..packages.claude_hooks import parse_hooks, read_hooks_file
        from .claude_hooks import ClaudeHookRunner

        imported, problems = parse_hooks(configured, f"{settings_file} (claudeHooks)")
        if imported:
            groups.append(("claude:settings", settings_file, None, imported))
        for raw in self.claude_settings_files:
            path = Path(raw).expanduser()
            hooks, found = read_hooks_file(path)
            problems += found
            if hooks:
                groups.append((f"claude:{path.name}", path, None, hooks))
        for problem in problems:
            self._report(problem)
        disabled = self._disabled_names()
        for offset, (name, where, package, hooks) in enumerate(groups):
            source = ExtensionSource(name=name, origin="claude", path=where, package_name=package)
            record = ExtensionRecord(name=self._unique_name(name), source=source, rank=first_rank + offset,
                                     kind="claude-hooks")
            self.registry.records.append(record)
            if record.name in disabled:
                record.status = "disabled"
                continue
            runner = ClaudeHookRunner(hooks, lambda text: self._report(text))
            for event, handler in runner.handlers().items():
                self.host.handlers.add(event, handler, owner=record.owner, rank=record.rank, fail_open=True)
                record.handlers.append(event)
            record.status = "loaded"

    def _record_and_import(self, source: ExtensionSource, name: str, rank: int, kind: str, disabled: set[str],
                           also: str | None = None) -> tuple[ExtensionRecord, ModuleType | None]:
        """A hook's or tool factory's record, and its module (None: switched off, or it failed
        to import, which the record says)."""
        record = ExtensionRecord(name=self._unique_name(name), source=source, rank=rank, kind=kind)
        self.registry.records.append(record)
        if record.name in disabled or (also is not None and also in disabled):
            record.status = "disabled"
            return record, None
        try:
            module = import_source(source)
        except ExtensionLoadError as exc:
            self._fail(record, str(exc))
            return record, None
        record.module_name = module.__name__
        return record, module

    def _load_hooks(self, first_rank: int) -> None:
        """``hooks/*.py`` by file name, then package hooks: each binds one handler event."""
        disabled = self._disabled_names()
        for offset, (name, where) in enumerate(discover_hooks(self.host.home, packages=self.packages,
                                                              skip=self.installed.skips)):
            if isinstance(where, Path):
                source = ExtensionSource(name=name, origin="hook", path=where)
            else:
                source = ExtensionSource(name=name, origin="package", entry_point=where)
            record, module = self._record_and_import(source, f"hook:{name}", first_rank + offset, "hook",
                                                     disabled, also=name)
            if module is None:
                continue
            hook = getattr(module, "hook", None)
            if hook is None and isinstance(getattr(module, "extension", None), HookDefinition):
                hook = module.extension
            if not isinstance(hook, HookDefinition):
                forget(module.__name__)
                self._fail(record, f"{source.label}: no hook = define_hook(before=..., run=...) at module level")
                continue
            self.host.handlers.add(hook.event, hook.run, owner=record.owner, rank=record.rank, fail_open=True)
            record.handlers.append(hook.event)
            record.status = "loaded"

    async def _load_one(self, source: ExtensionSource, rank: int, *, reloading: bool) -> None:
        record = ExtensionRecord(name=self._unique_name(source.name), source=source, rank=rank)
        self.registry.records.append(record)
        if record.name in self._disabled_names():
            record.status = "disabled"
            return
        key: Path | str = source.path if source.path is not None else f"package:{source.name}"
        previous = self._modules.get(key) if reloading else None
        try:
            module = import_source(source)
        except ExtensionLoadError as exc:
            if previous is None:
                self._fail(record, str(exc))
                return
            self._keep_previous(record, str(exc))
            module = previous
        error = await self._set_up(record, module, source)
        if error is not None and previous is not None and module is not previous:
            # The new version imported but its extension() raised: take back what it
            # registered and set the previous module up again.
            self._roll_back(record)
            self._keep_previous(record, error)
            module = previous
            error = await self._set_up(record, module, source)
        if error is not None:
            self._fail(record, error)
            return
        record.status = "loaded"
        self._modules[key] = module

    def _keep_previous(self, record: ExtensionRecord, error: str) -> None:
        record.warnings.append(f"the new version failed to load ({error}); the previous version keeps running")
        self._report(f"{error}; the previous version of {record.name} keeps running")

    async def _set_up(self, record: ExtensionRecord, module: ModuleType, source: ExtensionSource) -> str | None:
        """Run the module's ``extension(wolli)``; the failure as one line, or None."""
        record.module_name = module.__name__
        factory = getattr(module, "extension", None)
        if not callable(factory):
            where = source.path if source.path is not None else source.label
            forget(module.__name__)
            return f"{where}: no extension(wolli) function (define `def extension(wolli): ...`)"
        api = ExtensionAPI(self.registry, record, self.host)
        try:
            result = factory(api)
            if inspect.isawaitable(result) and not (await self._within_budget(result))[0]:
                return self._too_slow(source, "extension(wolli)")
        except Exception as exc:
            return describe_failure(exc, source)
        return None

    async def _within_budget(self, work: Awaitable[object]) -> tuple[bool, object]:
        """Await an async factory with the handlers' time budget: one that never returns
        would otherwise hold every start (and ``wolli --help``) forever. (False, None): it
        ran out; else (True, what it returned)."""
        budget = self.host.handlers.timeout_s
        if budget is None:
            return True, await work
        limit = asyncio.timeout(budget)
        try:
            async with limit:
                return True, await work
        except TimeoutError:
            if limit.expired():
                return False, None
            raise  # the factory's own TimeoutError: reported as its failure

    def _too_slow(self, source: ExtensionSource, what: str) -> str:
        where = source.path if source.path is not None else source.label
        return (f"{where}: {what} did not finish within {self.host.handlers.timeout_s:g} s and was cancelled "
                "(extensionTimeoutMs)")

    async def _load_tool_factories(self, cwd: str, first_rank: int) -> None:
        """``tools/*/__init__.py``, ``customTools``, ``--tool``: each ``factory(api)``'s tools."""
        found, problems = discover_factories(self.host.home, self.tool_settings_paths, self.tool_cli_paths, cwd)
        for problem in problems:
            self._report(problem)
        api = ToolFactoryAPI(self.host, self.bus)
        sources = [ExtensionSource(name=path.parent.name if path.name == "__init__.py" else path.stem, origin=origin,
                                   path=path) for origin, path in found]
        if self.packages:
            sources += [ExtensionSource(name=ep.name, origin="package", entry_point=ep)
                        for ep in package_entry_points(TOOL_ENTRY_POINT_GROUP, self.installed.skips)]
        disabled = self._disabled_names()
        for offset, source in enumerate(sources):
            path = source.path
            record, module = self._record_and_import(source, f"tool:{source.name}", first_rank + offset, "tool",
                                                     disabled)
            if module is None:
                continue
            factory = getattr(module, "factory", None)
            if factory is None and source.entry_point is not None:
                factory = getattr(module, "extension", None)  # the entry point names the factory itself
            if not callable(factory):
                forget(module.__name__)
                self._fail(record, f"{source.label}: no factory(api) function (define `def factory(api): return {{...}}`)")
                continue
            try:
                result = factory(api)
                if inspect.isawaitable(result):
                    done, result = await self._within_budget(result)
                    if not done:
                        self._fail(record, self._too_slow(source, "factory(api)"))
                        continue
                definitions = [split_on_session(d) for d in tools_from_factory_result(result)]
                tools = [(as_tool(d, record.name), on_session) for d, on_session in definitions]
            except Exception as exc:
                self._fail(record, describe_failure(exc, source))
                continue
            reserved = [tool.name for tool, _ in tools if tool.name in RESERVED_NAMES]
            if reserved:
                self._fail(record, f"{path}: the tool name {reserved[0]!r} is reserved for the built-in tool; "
                                   "choose another name (an extension's register_tool may replace a built-in)")
                continue
            for tool, on_session in tools:
                self.registry.add_tool(record, with_tool_context(tool, self.host))
                if on_session is not None:
                    self._bind_on_session(record, on_session)
            record.status = "loaded"

    def _bind_on_session(self, record: ExtensionRecord, on_session: Callable[..., Any]) -> None:
        host = self.host

        async def call(reason: str, previous: str | None, ctx: ContextView) -> None:
            result = on_session(ToolSessionEvent(reason, previous), ToolContext(ctx, host))
            if inspect.isawaitable(result):
                await result

        async def started(event: _SessionStarted, ctx: ContextView) -> None:
            await call(START_REASONS.get(event.reason, "start"), event.previous_session_file, ctx)

        async def stopped(event: _SessionEnded, ctx: ContextView) -> None:
            if event.reason in ("quit", "reload"):  # a replacement gets its own start (switch/branch)
                await call("shutdown", None, ctx)

        async def navigated(event: object, ctx: ContextView) -> None:
            await call("tree", None, ctx)

        for event, handler in (("session_start", started), ("session_shutdown", stopped), ("session_tree", navigated)):
            self.host.handlers.add(event, handler, owner=record.owner, rank=record.rank)
            record.handlers.append(event)

    def _fail(self, record: ExtensionRecord, message: str) -> None:
        """Report a failed extension and take back everything it registered."""
        record.status = "failed"
        record.errors.append(message)
        self._report(message)
        self._roll_back(record)

    def _roll_back(self, record: ExtensionRecord) -> None:
        """Take back everything ``record`` registered (handlers, tools, commands, ...)."""
        self.host.handlers.remove_owner(record.owner)
        registry = self.registry
        registry.tools[:] = [t for t in registry.tools if t.source != f"extension:{record.name}"]
        for command in [c for c in registry.commands.values() if c.owner == record.name]:
            registry.remove_command(command)
        for key in [k for k, s in registry.shortcuts.items() if s.owner == record.name]:
            del registry.shortcuts[key]
        for name in [n for n, f in registry.flags.items() if f.owner == record.name]:
            del registry.flags[name]
        registry.prompt_sections[:] = [s for s in registry.prompt_sections if s.owner != record.name]
        for name in record.providers:
            self.host.model_registry.unregister_provider(name)
        for name in record.renderers:
            registry.renderers.pop(name, None)
            registry.renderer_owners.pop(name, None)
        for attribute in ("tools", "commands", "shortcuts", "flags", "renderers", "providers", "handlers"):
            getattr(record, attribute).clear()

    def _unique_name(self, name: str) -> str:
        taken = {r.name for r in self.registry.records}
        if name not in taken:
            return name
        number = 2
        while f"{name}#{number}" in taken:
            number += 1
        return f"{name}#{number}"

    def _report(self, line: str) -> None:
        self.errors.append(line)
        if self.on_error is not None:
            self.on_error(line)

    def _bus_error(self, name: str, exc: BaseException) -> None:
        self._report(f"a listener of the extension event {name!r} failed: {type(exc).__name__}: {exc}")
