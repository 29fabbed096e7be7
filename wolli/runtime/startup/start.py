"""The one start-up path every mode takes: a request in, a host and a started session out.

A front end (print, json, rpc, tui) describes what the user asked for in a
:class:`StartupRequest`; :func:`start` validates it, builds the :class:`~.host.AgentHost`,
resolves the model and the API key, checks ``--tools`` and unknown options, opens or creates
the session, reads ``@`` attachments and emits ``session_start`` with the front end's
observers already attached. Problems come back as a :class:`StartupError` carrying the
exit code (2 for a usage mistake, 1 for anything else) and one clear message; warnings
(a broken config file, skipped session lines, a session folder that cannot be written)
come back in :attr:`Startup.warnings` for the mode to show.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable
from dataclasses import field
from typing import Any

from ...ai.types import ImageContent, Model, ThinkingLevel
from ...base import code_cache, module_bundle, startup_gc
from ...base.records import record
from ...config import paths
from ...extensions.context import ExtensionUI
from ..host.agent_host import AgentHost
from ..live.context_load import TAIL_MESSAGES
from ..live.live_session import LiveSession
from ..live.options import SessionOptions
from .attachments import AttachmentError, read_attachments
from .request import USAGE, StartupError, StartupRequest


@record
class PromptInput:
    text: str
    images: list[ImageContent] = field(default_factory=list)


@record
class Startup:
    host: AgentHost
    session: LiveSession
    prompts: list[PromptInput]
    warnings: list[str]
    flags: dict[str, str | bool]


def make_host(request: StartupRequest, *, ui: ExtensionUI | None = None) -> tuple[AgentHost, list[str]]:
    """The host for the requested agent, and the configuration problems found loading it."""
    try:
        host = AgentHost(request.agent, mode=request.mode, ui=ui)
    except ValueError as exc:  # an invalid --agent name
        raise StartupError(f"--agent: {exc}", USAGE) from None
    from ...config.keybindings import load_keybindings

    warnings = [str(e) for e in host.settings.errors]
    registry = host.model_registry
    warnings += [str(e) for e in registry.load_errors]
    warnings += [str(e) for e in registry.auth.errors]
    warnings += load_keybindings(paths.keybindings_path())[1]
    return host, warnings


_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


def check_options(request: StartupRequest, registered_flags: dict[str, Any]) -> dict[str, str | bool]:
    """Unknown ``--options`` are extension flags when an extension registered them, else an
    error naming the nearest valid option. Returns the extension flag values.

    A string flag takes ``--name value`` or ``--name=value`` (the value word is then no
    longer a message); a boolean flag takes ``--name``, ``--no-name`` or ``--name=yes|no``."""
    flags: dict[str, str | bool] = {}
    consumed: set[tuple[str, int]] = set()
    for name, value in request.unknown_options.items():
        flag = registered_flags.get(name)
        negated = name.startswith("no-") and flag is None and _flag_type(registered_flags.get(name[3:])) == "boolean"
        if negated:
            if value is not True:
                raise StartupError(f"--{name} takes no value (it turns --{name[3:]} off)", USAGE)
            flags[name[3:]] = False
            continue
        if flag is None:
            candidates = [*request.known_options, *(f"--{f}" for f in registered_flags)]
            near = difflib.get_close_matches(f"--{name}", candidates, n=1, cutoff=0.6)
            hint = f"; did you mean {near[0]}?" if near else " (see wolli --help)"
            raise StartupError(f"unknown option --{name}{hint}", USAGE)
        if _flag_type(flag) == "string":
            if value is True:
                follower = request.option_followers.get(name)
                if follower is None:
                    raise StartupError(f"--{name} needs a value: --{name} VALUE or --{name}=VALUE", USAGE)
                kind, index = follower
                value = getattr(request, kind)[index]
                value = "@" + value if kind == "files" else value  # "@x" was taken for a file: it was the value
                consumed.add(follower)
            flags[name] = value
        elif isinstance(value, str):
            if value.strip().lower() not in (*_TRUE, *_FALSE):
                raise StartupError(f"--{name} is on or off: --{name}, --no-{name} or --{name}=yes|no, "
                                   f"not {value!r}", USAGE)
            flags[name] = value.strip().lower() in _TRUE
        else:
            flags[name] = True
    if consumed:  # the words that were flag values are not messages or files
        request.messages = [m for i, m in enumerate(request.messages) if ("messages", i) not in consumed]
        request.files = [f for i, f in enumerate(request.files) if ("files", i) not in consumed]
    return flags


def _flag_type(flag: object) -> str | None:
    return getattr(flag, "type", None) if flag is not None else None


def resolve_model(host: AgentHost, request: StartupRequest) -> tuple[Model | None, ThinkingLevel | None]:
    registry = host.model_registry
    if not request.model:
        if request.provider:
            for model in registry.available():
                if model.provider == request.provider:
                    return model, None
            raise StartupError(f"--provider {request.provider}: no available model (is its API key set?)")
        return None, None
    pattern = request.model
    if request.provider and "/" not in pattern:
        pattern = f"{request.provider}/{pattern}"
    try:
        return registry.resolve(pattern)
    except ValueError as exc:
        raise StartupError(str(exc)) from None


def _check_tools(host: AgentHost, names: list[str] | None) -> None:
    if not names:
        return
    from ..host.builtin_tools import BUILTIN_TOOL_NAMES

    known = [*BUILTIN_TOOL_NAMES, *(t.name for t in host.extra_tools)]
    unknown = [n for n in names if n not in known]
    if unknown:
        hints = []
        for name in unknown:
            near = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
            hints.append(f"{name} (did you mean {near[0]}?)" if near else name)
        raise StartupError(f"--tools: unknown tool {', '.join(hints)}; known tools: {', '.join(known)}", USAGE)


def _session_folder_problem(host: AgentHost, cwd: str) -> str | None:
    """Why sessions of ``cwd`` cannot be saved, or None. Checked before the first write so
    the user learns it at once, and the answer still comes (as with ``--no-session``)."""
    from ...config.paths import cwd_slug

    folder = host.sessions_dir / cwd_slug(cwd)
    try:
        paths.ensure_private_dir(folder)
    except OSError as exc:
        return f"cannot create the session folder {folder}: {exc.strerror or exc}"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"the session folder {folder} is not writable"
    return None


def build_prompts(request: StartupRequest, attached_text: str, images: list[ImageContent]) -> list[PromptInput]:
    """Attachments and piped stdin join the first message; blank messages are dropped."""
    messages = list(request.messages)
    first = "\n\n".join(p for p in (attached_text, request.stdin_text.strip(), messages[0] if messages else "") if p)
    # A blank message would reach the provider as an empty conversation (Anthropic drops
    # whitespace-only text, then rejects the request): treat it as no message at all.
    texts = [p for p in (first, *messages[1:]) if p.strip()]
    return [PromptInput(text, images if index == 0 else []) for index, text in enumerate(texts)]


async def start(
    request: StartupRequest,
    *,
    ui: ExtensionUI | None = None,
    observers: list[Callable[[Any], Any]] | None = None,
    registered_flags: dict[str, Any] | None = None,
    before_start: Callable[[LiveSession], Any] | None = None,
) -> Startup:
    """Validate ``request``, open the session, attach ``observers``, emit ``session_start``.

    ``before_start(session)`` runs just before ``session_start`` (json mode writes the
    session header there)."""
    try:
        host, warnings = make_host(request, ui=ui)
        try:
            return await _start(host, warnings, request, observers, registered_flags, before_start)
        except StartupError as exc:
            exc.warnings = warnings
            raise
    finally:
        startup_gc.resume()  # paused by the command line while the modules were imported
        code_cache.stop_recording_patterns()  # later patterns may come from the session's data
        module_bundle.stop()  # what imports from here on (extensions, tools) is found as usual


async def _start(
    host: AgentHost,
    warnings: list[str],
    request: StartupRequest,
    observers: list[Callable[[Any], Any]] | None,
    registered_flags: dict[str, Any] | None,
    before_start: Callable[[LiveSession], Any] | None,
) -> Startup:
    flags, model, model_level = await _prepare(host, warnings, request, registered_flags)
    persist = not request.no_session
    if persist and not request.session:
        problem = _session_folder_problem(host, request.cwd)
        if problem:
            warnings.append(f"{problem}; this session will not be saved")
            persist = False
    options = SessionOptions(
        cwd=request.cwd,
        session=request.session,
        continue_recent=request.continue_recent,
        persist=persist,
        model=model,
        thinking_level=request.thinking or model_level,
        active_tools=request.tools,
        custom_system_prompt=request.system_prompt,
        append_system_prompt=request.append_system_prompt or "",
        # The TUI draws a resumed session's last messages first and builds the rest after.
        context_tail=TAIL_MESSAGES if request.mode == "tui" else 0,
    )
    from ...session.manager import SessionLookupError
    from ...session.store import SessionFileError

    _check_session_reference(request.session)
    try:
        # Interactive: read the file in a worker thread, so the first frame stays live. Print
        # and json modes have no frame to keep, and a thread costs ~3 MiB of peak RSS there.
        if request.mode in ("tui", "plain"):
            session, _ = await host.load_session(options)
        else:
            session, _ = host.session_from_options(options)
    except SessionLookupError as exc:  # no session with that id: a mistake on the command line
        raise StartupError(f"--session: {exc}", USAGE) from None
    except (OSError, ValueError, SessionFileError) as exc:
        raise StartupError(str(exc)) from None
    warnings += _session_load_warnings(session)
    warnings += host.resources(session.cwd).errors  # an unreadable AGENTS.md, a skill cut short...

    if request.require_model:
        if session.model is None:
            raise StartupError(_no_model_message(host, warnings))
        if session.model.provider not in host.api_key_overrides and not host.model_registry.is_available(session.model):
            raise StartupError(
                f"no API key for provider '{session.model.provider}' (model {session.model.key}).\n"
                + host.no_model_help()
            )
    try:
        attached = read_attachments(request.files, request.cwd, session.model)
    except AttachmentError as exc:
        raise StartupError(str(exc)) from None
    warnings += attached.notes
    prompts = build_prompts(request, attached.text, attached.images)
    if request.require_prompt and not prompts:
        raise StartupError('nothing to do: give a message, e.g. wolli -p "explain this repo"')

    for observer in observers or []:
        session.observe(observer)
    if before_start is not None:
        before_start(session)
    host.set_active(session)
    await session.start("startup")
    return Startup(host, session, prompts, warnings, flags)


@record
class HostStartup:
    """A host ready to open sessions, what ``--model``/``--thinking`` asked for them, and
    the configuration problems found on the way."""

    host: AgentHost
    model: Model | None
    thinking_level: ThinkingLevel | None
    warnings: list[str]


async def start_host(request: StartupRequest, *, ui: ExtensionUI | None = None) -> HostStartup:
    """The host without a session: for a client whose sessions come later and are named by
    it (ACP's ``session/new`` and ``session/load``)."""
    host, warnings = make_host(request, ui=ui)
    try:
        _, model, model_level = await _prepare(host, warnings, request, None)
    except StartupError as exc:
        exc.warnings = warnings
        raise
    return HostStartup(host, model, request.thinking or model_level, warnings)


async def _prepare(
    host: AgentHost, warnings: list[str], request: StartupRequest, registered_flags: dict[str, Any] | None,
) -> tuple[dict[str, str | bool], Model | None, ThinkingLevel | None]:
    """Everything before a session: permissions, extensions, MCP, flags, the model, the tools."""
    extensions = host.extensions
    host.cwd = os.path.abspath(request.cwd)
    host.apply_handler_timeout()
    _configure_permissions(host, request, warnings)
    extensions.configure(
        settings_paths=settings_paths(host.settings.get("extensions")),
        cli_paths=request.extension_paths,
        tool_settings_paths=settings_paths(host.settings.get("customTools")),
        tool_cli_paths=request.tool_paths,
        enabled=not request.no_extensions,
        claude_settings_files=request.claude_settings,
    )
    warnings += await extensions.load(request.cwd)
    warnings += _configure_mcp(host, request)
    flags = check_options(request, {**extensions.flags, **(registered_flags or {})})
    extensions.set_flag_values(flags)
    model, model_level = resolve_model(host, request)
    if request.api_key:
        if model is None:
            raise StartupError("--api-key needs --model (or --provider) to know which provider it is for", USAGE)
        host.api_key_overrides[model.provider] = request.api_key
    _check_tools(host, request.tools)
    return flags, model, model_level


def _configure_mcp(host: AgentHost, request: StartupRequest) -> list[str]:
    """Read this run's MCP configuration (small JSON files only); the MCP link and its
    modules are loaded only when a server is configured."""
    from ...mcp.files import may_have_servers

    package_files = host.extensions.installed.mcp_files()  # installed packages' and plugins' servers
    if not package_files and not may_have_servers(host.home, request.cwd, request.mcp_configs,
                                                  strict=request.strict_mcp_config):
        return []
    from ...mcp.sources import collect

    sources = collect(host.home, request.cwd, request.mcp_configs, strict=request.strict_mcp_config,
                      approve_project=request.approve_project_mcp, package_files=package_files)
    if sources.servers or sources.project is not None:
        host.mcp_link().apply(sources)
    return sources.warnings


def _configure_permissions(host: AgentHost, request: StartupRequest, warnings: list[str]) -> None:
    """``--permission-mode`` and the rule flags; rules that cannot be read become warnings
    (a rule flag that does not parse is a usage error: the user just typed it)."""
    from ...permissions.modes import ModeError

    for flag, values in (("--allowed-tools", request.allowed_tools), ("--disallowed-tools", request.disallowed_tools)):
        if not values:
            continue
        from ...permissions.rules import RuleError, parse_rule, split_rule_list

        for text in (rule for value in values for rule in split_rule_list(value)):
            try:
                parse_rule(text)
            except RuleError as exc:
                raise StartupError(f"{flag}: {exc}", USAGE) from None
    try:
        host.permissions.configure(mode=request.permission_mode, allow=request.allowed_tools,
                                   deny=request.disallowed_tools)
    except ModeError as exc:
        raise StartupError(f"--permission-mode: {exc}", USAGE) from None
    warnings += host.permissions.problems(request.cwd)


def _check_session_reference(ref: str | None) -> None:
    """``--session`` naming a file that is not there is a mistake (a typo, the wrong
    folder), not a request for a new session: say so, and create nothing. An empty value
    (``--session "$ID"`` with ``ID`` unset) names nothing either."""
    if ref is not None and not ref.strip():
        raise StartupError("--session needs a session file or id, not an empty value "
                           "(wolli -r lists them)", USAGE)
    if not ref or os.path.exists(os.path.expanduser(ref)):
        return
    if ref.endswith(".jsonl") or os.sep in ref or (os.altsep and os.altsep in ref):
        raise StartupError(
            f"--session {ref}: no such session file. Give an existing session file or id "
            "(wolli -r lists them), or leave --session out to start a new session",
            USAGE,
        )


def settings_paths(value: object) -> list[str]:
    """settings.json ``extensions``: a list of paths (anything else was reported on load)."""
    return [str(v) for v in value] if isinstance(value, list) else []


def _session_load_warnings(session: LiveSession) -> list[str]:
    """``line N: what`` from the loader as ``<file>:N: what``, one line each."""
    where = session.session_file or "session file"
    out = []
    for error in session.session_manager.load_errors:
        number, sep, what = str(error).partition(": ")
        if sep and number.startswith("line ") and number[5:].isdigit():
            out.append(f"{where}:{number[5:]}: {what}; the rest of the session loaded")
        else:
            out.append(f"{where}: {error}")
    return out


def _no_model_message(host: AgentHost, warnings: list[str]) -> str:
    text = host.no_model_help()
    if any("models.json" in w for w in warnings):
        text = "models.json has errors (shown above); fix them to use its providers.\n" + text
    return text
