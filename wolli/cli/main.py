"""Command line: ``wolli [options] [@files...] [messages...]`` -> picks a mode.

Parsing is hand-written (not argparse) because unknown ``--flags`` must survive for
extensions, which register their flags only after they load: ``--name=value`` keeps the
value, a bare ``--name`` is ``True`` and remembers the word after it, which becomes the
flag's value once an extension says the flag takes a string (``--level high``); until then
that word is also a message. Nothing heavy is imported before a mode runs, so
``wolli --version`` stays instant.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not ``typing``'s: imported after the module bundle (main) is in place
if TYPE_CHECKING:  # the runtime is imported only when a session starts (a light --help)
    from ..extensions.context import ExtensionMode
    from ..runtime.startup.request import StartupRequest

HELP = """\
usage: wolli [options] [@files...] [messages...]

Modes:
  (default)                 the full-screen TUI
  -p, --print               answer once and print the final text
  --plain                   line mode: an inline prompt, answers in the terminal's scrollback
                            (also when the full-screen app cannot run, e.g. TERM=dumb)
  --mode tui|plain|print|json|rpc|acp  json: every event as one JSON line; rpc: JSON commands
                            on stdin, responses and events on stdout (docs/rpc.md); acp: the
                            Agent Client Protocol for editors (Zed, Toad: docs/acp.md)
  --full-updates            json/rpc: each message_update also carries the whole partial
                            message (pi's shape; costs O(n^2) output, see docs/events.md)

Model:
  --model PROVIDER/ID[:THINKING]  model (fuzzy match on id), e.g. anthropic/claude-sonnet-4-5:high
  --provider NAME           provider for --model ID
  --api-key KEY             API key for this run (overrides auth.json and env vars)
  --thinking LEVEL          off, minimal, low, medium, high, xhigh
  --list-models [SEARCH]    list models you can use (those with a key) and exit

Session:
  -c, --continue            continue the most recent session in this directory
  -r, --resume              pick a session to resume (in a terminal)
  --session PATH|ID         open a session file or id prefix
  --no-session              do not save this session
  --export SESSION [OUT]    write a session as a self-contained HTML file and exit

Agent:
  --agent NAME              agent home ~/.wolli/agents/NAME (default: $WOLLI_AGENT or "default")
  --tools LIST              active tools, comma-separated (read,bash,edit,write,grep,find,ls)
  --no-tools                no tools at all
  --system-prompt TEXT      replace the built-in system prompt opening
  --append-system-prompt TEXT  add text at the end of the system prompt
  --permission-mode MODE    default, accept-edits, plan or yolo (docs/permissions.md);
                            the TUI, --plain and acp start in default, -p/json/rpc in yolo
  --allowed-tools RULES     allow rules for this run, e.g. "Bash(git diff:*),Edit(src/**)"
  --disallowed-tools RULES  deny rules for this run, e.g. "Bash(rm:*) Read(~/.ssh/**)"
  -e, --extension PATH      load an extension file or folder (repeatable)
  --no-extensions           load no extensions (not even the agent's own)
  --tool PATH               load a tool factory (tools/<name>/__init__.py or a .py file; repeatable)

MCP servers (docs/mcp.md):
  --mcp-config FILE|JSON    add the servers of a .mcp.json-shaped file (repeatable)
  --strict-mcp-config       use only the --mcp-config servers (not the agent's or the project's)
  --approve-project-mcp     start the project's .mcp.json servers without asking (needed with -p)
  wolli mcp list [--json]   each server's state and tools
  wolli mcp login NAME      log in to a remote server (OAuth): opens the browser or prints the URL

Packages (docs/packages.md):
  wolli install SOURCE      a package (name[==version], git URL[@ref], path) or a Claude Code plugin
  wolli install             everything the lock records (a fresh or copied agent home)
  wolli list | remove NAME | update [NAME]
  wolli import claude-settings [FILE]   run the hooks of a Claude Code settings.json from now on
  --claude-settings FILE    run the hooks of a Claude Code settings.json in this run (repeatable)

One server, several clients (docs/server.md):
  wolli serve [--listen HOST:PORT]   host sessions for clients on a Unix socket (and TCP, with a token)
  wolli serve --list, wolli sessions  the server's live sessions and their clients
  wolli attach [SESSION] [--plain]   join a session of the running server (started on demand)
  wolli web [--listen HOST:PORT]     the full-screen app in a browser, with the server's token

  -v, --version             print the version
  -h, --help                this help

@file attaches a file to the first message (images as images, a folder as a listing).
Piped stdin joins the prompt in print mode. Options registered by extensions (listed below
when there are any) take --name value or --name=value, and --name / --no-name when they
are on/off switches; any other unknown option is an error.
"""


class UsageError(Exception):
    pass


class CliArgs:
    """Parsed options (a plain class: importing dataclasses would cost ~10 ms at start-up)."""

    def __init__(self) -> None:
        self.mode: ExtensionMode | None = None  # checked against MODES once parsed
        self.print_ = False
        self.plain = False
        self.agent: str | None = None
        self.provider: str | None = None
        self.model: str | None = None
        self.api_key: str | None = None
        self.thinking: str | None = None
        self.continue_ = False
        self.resume = False
        self.session: str | None = None
        self.no_session = False
        self.tools: str | None = None
        self.no_tools = False
        self.system_prompt: str | None = None
        self.append_system_prompt: str | None = None
        self.list_models: str | bool | None = None
        self.export: list[str] | None = None
        self.version = False
        self.help = False
        self.files: list[str] = []
        self.messages: list[str] = []
        self.full_updates = False
        self.extensions: list[str] = []
        self.tool_paths: list[str] = []
        self.no_extensions = False
        self.mcp_configs: list[str] = []
        self.claude_settings: list[str] = []
        self.strict_mcp_config = False
        self.approve_project_mcp = False
        self.permission_mode: str | None = None
        self.allowed_tools: list[str] = []
        self.disallowed_tools: list[str] = []
        # ``--name[=value]`` options not known here: extension flags (or typos, reported later).
        self.unknown_options: dict[str, str | bool] = {}
        # A bare ``--name`` followed by a word: where that word went ("messages" or "files",
        # its index), so it becomes the value if the extension's flag takes a string.
        self.option_followers: dict[str, tuple[str, int]] = {}


PACKAGE_COMMANDS = ("install", "list", "remove", "update", "import")
_VALUE_FLAGS = {
    "--mode": "mode",
    "--agent": "agent",
    "--provider": "provider",
    "--model": "model",
    "--api-key": "api_key",
    "--thinking": "thinking",
    "--session": "session",
    "--tools": "tools",
    "--system-prompt": "system_prompt",
    "--append-system-prompt": "append_system_prompt",
    "--permission-mode": "permission_mode",
}
_BOOL_FLAGS = {
    "-p": "print_",
    "--print": "print_",
    "--plain": "plain",
    "-c": "continue_",
    "--continue": "continue_",
    "-r": "resume",
    "--resume": "resume",
    "--no-session": "no_session",
    "--no-tools": "no_tools",
    "--full-updates": "full_updates",
    "--no-extensions": "no_extensions",
    "--strict-mcp-config": "strict_mcp_config",
    "--approve-project-mcp": "approve_project_mcp",
    "-v": "version",
    "--version": "version",
    "-h": "help",
    "--help": "help",
}
_LIST_FLAGS = {  # repeatable, each takes a value
    "-e": "extensions", "--extension": "extensions", "--tool": "tool_paths",
    "--allowed-tools": "allowed_tools", "--allowedTools": "allowed_tools",
    "--disallowed-tools": "disallowed_tools", "--disallowedTools": "disallowed_tools",
    "--mcp-config": "mcp_configs",
    "--claude-settings": "claude_settings",
}
KNOWN_OPTIONS = [*_VALUE_FLAGS, *_BOOL_FLAGS, *_LIST_FLAGS, "--list-models", "--export"]
MODES = ("tui", "plain", "print", "json", "rpc", "acp")
THINKING = ("off", "minimal", "low", "medium", "high", "xhigh")


def parse_args(argv: list[str]) -> CliArgs:
    args = CliArgs()
    i = 0
    only_positional = False
    while i < len(argv):
        arg = argv[i]
        i += 1
        if only_positional or not arg.startswith("-") or arg == "-":
            if arg.startswith("@") and len(arg) > 1:
                args.files.append(arg[1:])
            else:
                args.messages.append(arg)
            continue
        if arg == "--":
            only_positional = True
            continue
        name, eq, inline = arg.partition("=")
        if name in _BOOL_FLAGS:
            setattr(args, _BOOL_FLAGS[name], True)
        elif name in _VALUE_FLAGS or name in _LIST_FLAGS:
            if eq:
                value = inline
            elif i < len(argv):
                value = argv[i]
                i += 1
            else:
                raise UsageError(f"{name} needs a value")
            if name in _LIST_FLAGS:
                getattr(args, _LIST_FLAGS[name]).append(value)
            else:
                setattr(args, _VALUE_FLAGS[name], value)
        elif name == "--list-models":
            if eq:
                args.list_models = inline
            elif i < len(argv) and not argv[i].startswith("-"):
                args.list_models = argv[i]
                i += 1
            else:
                args.list_models = True
        elif name == "--export":
            values: list[str] = []
            while i < len(argv) and len(values) < 2 and not argv[i].startswith("-"):
                values.append(argv[i])
                i += 1
            if not values:
                raise UsageError("--export needs a session file (and optionally an output .html path)")
            args.export = values
        elif name.startswith("--") and len(name) > 2:
            args.unknown_options[name[2:]] = inline if eq else True
            args.option_followers.pop(name[2:], None)
            if not eq and i < len(argv) and not only_positional and (not argv[i].startswith("-") or argv[i] == "-"):
                follower = argv[i]
                kind = "files" if follower.startswith("@") and len(follower) > 1 else "messages"
                args.option_followers[name[2:]] = (kind, len(getattr(args, kind)))
        else:
            import difflib

            near = difflib.get_close_matches(name, KNOWN_OPTIONS, n=1, cutoff=0.5)
            shown = arg if arg.isprintable() else repr(arg)
            raise UsageError(f"unknown option {shown}" + (f"; did you mean {near[0]}?" if near else " (see wolli --help)"))
    _check_values(args)
    if args.mode is not None and args.mode not in MODES:
        raise UsageError(f"--mode must be one of {', '.join(MODES)}, not {args.mode!r}")
    if args.thinking is not None and args.thinking not in THINKING:
        raise UsageError(f"--thinking must be one of {', '.join(THINKING)}, not {args.thinking!r}")
    if args.permission_mode is not None:
        from ..permissions.modes import ModeError, parse_mode

        try:
            args.permission_mode = parse_mode(args.permission_mode)
        except ModeError as exc:
            raise UsageError(f"--permission-mode: {exc}") from None
    return args


# Options that name something: an empty value (``--model "$MODEL"`` with MODEL unset) would
# quietly mean "not given" and pick another model, provider, key or agent, or every tool.
_NAMING_FLAGS = {"--agent": "agent", "--provider": "provider", "--model": "model", "--api-key": "api_key",
                 "--tools": "tools"}


def _check_values(args: CliArgs) -> None:
    for option, attribute in _NAMING_FLAGS.items():
        value = getattr(args, attribute)
        if value is not None and not value.strip():
            hint = " (--no-tools for none)" if option == "--tools" else ""
            raise UsageError(f"{option} needs a value, not an empty string{hint}")
    if args.no_tools and args.tools is not None:
        raise UsageError("--tools and --no-tools contradict each other: give one of them")
    if args.continue_ and args.session is not None:
        raise UsageError("--continue and --session contradict each other: give one of them")
    if args.no_session and (args.session is not None or args.continue_):
        # Opening a session file would write to it: --no-session promises nothing on disk.
        raise UsageError(f"{'--session' if args.session is not None else '--continue'} and --no-session "
                         "contradict each other: give one of them")


def startup_request(args: CliArgs, mode: ExtensionMode) -> StartupRequest:
    """What the command line asks the runtime for (the one start-up path of every mode)."""
    import os

    from ..runtime.startup.request import StartupRequest

    tools: list[str] | None = None
    if args.no_tools:
        tools = []
    elif args.tools:
        from ..runtime.host.builtin_tools import parse_tool_list

        tools = parse_tool_list(args.tools)
    stdin_text = ""
    if mode == "print":  # the TUI must not import the headless runtime before its first frame
        from ..modes.headless.run import read_piped_stdin

        stdin_text = read_piped_stdin()
    return StartupRequest(
        mode=mode,
        cwd=os.getcwd(),
        agent=args.agent,
        model=args.model,
        provider=args.provider,
        api_key=args.api_key,
        thinking=args.thinking,  # type: ignore[arg-type]
        tools=tools,
        session=args.session,
        continue_recent=args.continue_,
        no_session=args.no_session,
        system_prompt=None if args.system_prompt is None else _text_argument(args.system_prompt),
        append_system_prompt=None if args.append_system_prompt is None else _text_argument(args.append_system_prompt),
        files=list(args.files),
        messages=[_text_argument(m) for m in args.messages],
        stdin_text=stdin_text,
        unknown_options=dict(args.unknown_options),
        option_followers=dict(args.option_followers),
        known_options=list(KNOWN_OPTIONS),
        extension_paths=list(args.extensions),
        no_extensions=args.no_extensions,
        tool_paths=list(args.tool_paths),
        mcp_configs=list(args.mcp_configs),
        claude_settings=list(args.claude_settings),
        strict_mcp_config=args.strict_mcp_config,
        approve_project_mcp=args.approve_project_mcp,
        permission_mode=args.permission_mode,
        allowed_tools=list(args.allowed_tools),
        disallowed_tools=list(args.disallowed_tools),
        require_model=mode in ("print", "json"),
        require_prompt=mode in ("print", "json"),
    )


def _text_argument(value: str) -> str:
    """Prompt text from argv as UTF-8: undecodable bytes become U+FFFD, said on stderr
    (file names keep their bytes: they name files)."""
    from ..base.text_safety import repair_argument

    fixed = repair_argument(value)
    if fixed is not value:
        print("wolli: an argument is not valid UTF-8: undecodable bytes were replaced with U+FFFD",
              file=sys.stderr)
    return fixed


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    import os

    try:
        os.getcwd()  # sessions, project files and relative paths all start here
    except FileNotFoundError:
        print("wolli: the current folder no longer exists (deleted or moved away); "
              "cd into a folder and run it again", file=sys.stderr)
        return 1
    if argv[:1] == ["mcp"]:  # ``wolli mcp list|login NAME``
        from .mcp import run_mcp_command

        return run_mcp_command(argv[1:])
    if argv[:1] and argv[0] in PACKAGE_COMMANDS:  # ``wolli install|list|remove|update|import``
        from .packages import run_package_command

        return run_package_command(argv[0], argv[1:])
    if argv[:1] in (["serve"], ["attach"]):  # the resident server and its clients (docs/server.md)
        from .serve import run_attach_command, run_serve_command

        return (run_serve_command if argv[0] == "serve" else run_attach_command)(argv[1:])
    if argv[:1] == ["web"]:  # the full-screen app in a browser (docs/server.md)
        from .serve import run_web_command

        return run_web_command(argv[1:])
    if argv[:1] == ["sessions"]:  # ``wolli sessions`` = ``wolli serve --list``
        from .serve import run_serve_command

        return run_serve_command(["--list", *argv[1:]])
    try:
        args = parse_args(argv)
    except UsageError as exc:
        print(f"wolli: {exc}", file=sys.stderr)
        return 2
    if args.version:
        from ..__about__ import __version__

        print(f"wolli {__version__}")
        return 0
    if args.help:
        print(HELP, end="")
        if not args.no_extensions:
            from ..modes.headless.one_shot import extension_options_help

            extra = extension_options_help(args)  # loads the extensions (only when there are any)
            if extra:
                print("\n" + extra, end="")
        return 0
    if args.list_models is not None:
        from ..modes.headless.one_shot import list_models

        return list_models(args)
    if args.export is not None:
        from ..modes.headless.one_shot import export_session

        return export_session(args)
    from ..base import module_bundle

    module_bundle.enable(cache_folder())  # first: the modules imported from here on come from it
    from ..base import code_cache, startup_gc
    from ..config.paths import wolli_home

    code_cache.enable(wolli_home() / "cache")  # the methods dataclasses write, compiled by an earlier run
    startup_gc.pause()  # turned back on once the session is up (runtime/startup/start.py)
    try:
        return _run_mode(args)
    finally:
        startup_gc.resume()  # every other way out (a usage error, a failed start) too
        code_cache.save()
        code_cache.disable()  # main() may run inside another program (tests, embedders)
        module_bundle.save()
        module_bundle.disable()


def cache_folder() -> str:
    """``WOLLI_HOME/cache`` as ``config.paths.wolli_home`` names it, without importing
    ``pathlib`` (and ``urllib.parse``) before the module bundle is in place."""
    import os

    return os.path.join(os.path.expanduser(os.environ.get("WOLLI_HOME") or "~/.wolli"), "cache")


def _run_mode(args: CliArgs) -> int:
    """Run the mode the options ask for; its exit status."""
    mode: ExtensionMode = args.mode or ("print" if args.print_ else "plain" if args.plain else "tui")
    if mode == "tui" and args.mode is None and _terminal_is_dumb():
        mode = "plain"  # the full-screen app cannot draw here (Emacs' shell, TERM=dumb)
    if sys.stdout is None:  # started with descriptor 1 closed (``wolli -p ... >&-``)
        # Refused before anything is sent: the answer would be lost, and the first file
        # opened would take descriptor 1 and receive what was meant for stdout.
        print("wolli: stdout is closed: there is nowhere to write the answer "
              "(redirect it to a file or to /dev/null instead)", file=sys.stderr)
        return 1
    if args.resume and not args.session and mode != "plain" and (
            mode != "tui" or not (sys.stdin.isatty() and sys.stdout.isatty())):  # the line mode lists sessions itself
        from ..modes.headless.one_shot import explain_resume

        return explain_resume(args)
    if mode == "print":
        from ..modes.headless.print_mode import run_print

        return run_print(startup_request(args, mode))
    if mode == "json":
        from ..modes.headless.print_mode import run_json

        return run_json(startup_request(args, mode), full_updates=args.full_updates)
    if mode == "rpc":
        if args.messages or args.files:
            print("wolli: --mode rpc takes its prompts as JSON commands on stdin (see docs/rpc.md), "
                  "not as arguments", file=sys.stderr)
            return 2
        from ..modes.rpc.server import run_rpc

        request = startup_request(args, mode)
        request.require_model = False  # a client may pick one with set_model
        return run_rpc(request, full_updates=args.full_updates)
    if mode == "acp":
        if args.messages or args.files:
            print("wolli: --mode acp takes its prompts from the editor over stdin (see docs/acp.md), "
                  "not as arguments", file=sys.stderr)
            return 2
        from ..modes.acp.agent import run_acp

        request = startup_request(args, mode)
        request.require_model = False  # the editor may pick one per session
        return run_acp(request)
    if mode == "plain":
        from ..modes.line import run_line

        request = startup_request(args, mode)
        request.require_model = False  # the line mode starts anyway and says how to add a model
        return run_line(request, resume=args.resume and not args.session)
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print(
            "wolli: the full-screen app needs a terminal (stdin and stdout are not one here).\n"
            'Run headless instead: wolli -p "your request"   (or --mode json for an event stream)',
            file=sys.stderr,
        )
        return 2
    if args.mode is None and _only_prompt_words(args):  # the setting server.attach (docs/server.md)
        from .serve import join_server

        joined = join_server(args.agent, args.messages)
        if joined is not None:
            return joined
    from ..modes.tui import run_tui

    request = startup_request(args, mode)
    request.require_model = False  # the TUI opens anyway and shows how to add a model
    request.pick_session = bool(args.resume and not args.session)  # -r: the /resume picker first
    return run_tui(request)


def _only_prompt_words(args: CliArgs) -> bool:
    """Nothing on the command line but prompt words (and ``--agent``): what may run on the
    server; any other option configures an in-process runtime."""
    fresh = vars(CliArgs())
    return all(value == fresh.get(name) for name, value in vars(args).items() if name not in ("messages", "agent"))


def _terminal_is_dumb() -> bool:
    import os

    return os.environ.get("TERM", "") in ("", "dumb") and sys.stdin.isatty()


if __name__ == "__main__":
    raise SystemExit(main())


def acp_main() -> int:
    """``wolli-acp [options]``: ``wolli --mode acp`` under one name, for editors' settings."""
    return main(["--mode", "acp", *sys.argv[1:]])
